"""Imported first by every workflow script: the rule's log, then this clone's library.

Snakemake copies a rule's script elsewhere (``.snakemake/scripts/``), runs it as ``__main__``
with a ``snakemake`` object, and appends this directory to ``sys.path``, so ``import eb_entry``
finds this file. On import it

* opens the rule's log, line-buffered, and sends stderr there, before anything of
  ``entropic_bound`` is imported: an import error lands in the log (a job killed by SLURM keeps
  every line written so far);
* puts ``<clone>/src`` first on ``sys.path``: the library is the clone's own, installed or not
  (a ``--sdm conda`` environment does not install it; see envs/);
* for a job of more than one thread, sets ``OMP_WAIT_POLICY=PASSIVE`` before torch loads
  (``entropic_bound.core.runner.quiet_openmp``: idle OpenMP workers sleep instead of spinning);
* keeps freed memory up to the config's ``malloc_retain_mb`` for reuse
  (``entropic_bound.core.runner.retain_freed_memory``: no page faults for every large tensor);
* stores the job's config as ``results/<run>/configs/<hash>.yaml`` (once per config), so that
  the config hash of every artifact it stamps resolves to a config
  (``entropic_bound.config.provenance.store_config``).

``entropic_bound.core.runner.run`` then keeps writing to the same log.
"""

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

_sm = getattr(sys.modules["__main__"], "snakemake", None)
if _sm is not None and len(_sm.log):
    sys.stderr = open(_sm.log[0], "w", buffering=1)
sys.path.insert(0, str(SRC))
if _sm is not None:
    from entropic_bound.core.runner import quiet_openmp

    quiet_openmp(int(getattr(_sm, "threads", 1) or 1))
    cfg = getattr(_sm, "config", None)
    if isinstance(cfg, dict):  # before anything large is allocated (docs/performance.md)
        from entropic_bound.core.runner import retain_freed_memory

        retain_freed_memory(int(cfg.get("malloc_retain_mb", 0) or 0))
    run_dir = f"results/{cfg.get('run_name')}/" if isinstance(cfg, dict) else None
    # only a job of the config's own run stores it there (the heads study and the scale table
    # write elsewhere: they must not create results/<run_name>/)
    if run_dir and any(str(o).replace("\\", "/").find(run_dir) >= 0 for o in _sm.output):
        from entropic_bound.config.provenance import store_config

        store_config(cfg)  # results/<run>/configs/<hash>.yaml: every stamp resolves
