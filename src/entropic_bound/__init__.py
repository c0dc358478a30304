"""entropic-bound: the reproducibility pipeline of arXiv 2607.23050 as a plain Python library.

Subpackages follow the pipeline's stages (each has a rule file of the same name under
workflow/rules/): ``tasks`` → ``predict`` → ``frontier`` → ``train`` → ``analysis`` →
``claims`` → ``figures``, with ``exploratory`` beside them, ``cli`` (the ``entropic-bound``
command) in front and ``core`` / ``config`` underneath. Importing this package imports nothing
heavy; each subpackage re-exports its public names lazily.
"""
