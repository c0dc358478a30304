"""The ``entropic-bound`` command (``predict``, ``inspect``, ``verify``): it reads files, calls
the library and prints. The recommendation itself is library code: :mod:`entropic_bound.predict`
(``recommend_rank``)."""
