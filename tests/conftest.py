import os
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# tests/ mirrors the package (tests/claims/, tests/train/, ...); helpers shared across folders
# (fabricate.py here, workflow/test_profiles.py's load_workflow) import by module name.
_TESTS = Path(__file__).resolve().parent
for _p in (_TESTS, _TESTS / "workflow"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

# Tests are single-threaded so that timings and bitwise comparisons do not depend on load.
torch.set_num_threads(1)
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Hypothesis: no per-example deadline. The machine is shared, so an example's wall time says
# nothing about correctness; every property still runs its full number of examples.
settings.register_profile("entropic-bound", deadline=None)
settings.load_profile("entropic-bound")


# `make test-install` runs the unit tests in a fresh venv with the library alone (no Snakemake, no
# plotting, no dev tools): `pytest -m "not extras"`. The tests of these folders need the extras;
# a test elsewhere that does is marked `@pytest.mark.extras` (that run fails when one is not).
EXTRAS_FOLDERS = {"workflow", "figures", "cluster", "packaging"}


def pytest_ignore_collect(collection_path, config):
    """Under `-m "not extras"` those folders are not even imported: their modules import Snakemake
    or matplotlib at the top, which a venv with the library alone lacks."""
    if (
        config.getoption("markexpr") == "not extras"
        and collection_path.name in EXTRAS_FOLDERS
        and collection_path.parent == _TESTS
    ):
        return True
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).parent.name in EXTRAS_FOLDERS:
            item.add_marker(pytest.mark.extras)


# Arrow's native thread pools (behind the parquet reads in test_workflow) can abort the process
# while Python tears down, after every test has passed and the summary is printed
# (apache/arrow#34314). The pytest session's exit status is kept and the process ends with it through
# runner.finish, without that teardown.
_EXIT_STATUS = []


def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _EXIT_STATUS and not hasattr(config, "workerinput"):
        from entropic_bound.core.runner import finish

        finish(_EXIT_STATUS[-1])
