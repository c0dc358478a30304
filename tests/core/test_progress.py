"""Heartbeat lines (progress.py) and the scripts' entry (workflow/scripts/eb_entry.py)."""

import io
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from entropic_bound.core.progress import Heartbeat, heartbeat, heartbeat_line

REPO = Path(__file__).resolve().parents[2]


def test_heartbeat_line_by_hand():
    assert heartbeat_line("predict", 3, 12, 30.0) == (
        "[progress] predict: 3/12 (25%), elapsed 0:30, ETA 1:30"
    )
    assert heartbeat_line("train L0", 1, 2, 3725.0) == (
        "[progress] train L0: 1/2 (50%), elapsed 1:02:05, ETA 1:02:05"
    )
    assert heartbeat_line("frontier", 0, 0, 4.4) == "[progress] frontier: 0/?, elapsed 0:04, ETA ?"
    assert heartbeat_line("frontier", 0, 9, 4.4).endswith("ETA ?")


@given(st.integers(1, 10_000), st.integers(0, 10_000), st.floats(0, 1e6, allow_subnormal=False))
def test_eta_is_zero_when_done_and_never_negative(total, done, elapsed):
    done = min(done, total)
    line = heartbeat_line("s", done, total, elapsed)
    assert f": {done}/{total} (" in line
    if done == total:
        assert line.endswith("ETA 0:00")
    assert "-" not in line.split("ETA")[1]


def test_update_prints_only_when_the_last_line_is_old():
    now = [0.0]
    out = io.StringIO()
    hb = Heartbeat("predict", every=10, stream=out, clock=lambda: now[0])
    hb.emit()  # t = 0
    for t, done in [(3, 1), (9, 2), (10, 3), (15, 4), (21, 5)]:
        now[0] = t
        hb.update(done, 5)
    lines = out.getvalue().splitlines()
    assert lines == [
        "[progress] predict: 0/?, elapsed 0:00, ETA ?",
        "[progress] predict: 3/5 (60%), elapsed 0:10, ETA 0:07",
        "[progress] predict: 5/5 (100%), elapsed 0:21, ETA 0:00",
    ]


def test_the_thread_beats_while_a_single_unit_runs():
    out = io.StringIO()
    with heartbeat("slow", total=1, every=0.05, stream=out) as hb:
        time.sleep(0.5)  # one long unit: no update() at all
        hb.update(1)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 4, lines  # first line, ≥ 2 beats, last line
    assert lines[0].startswith("[progress] slow: 0/1 (0%)")
    assert lines[-1].startswith("[progress] slow: 1/1 (100%)")


def test_engine_steps_and_a_stage_without_counts():
    out = io.StringIO()
    with heartbeat("train L4 sweep c0", every=60, stream=out) as hb:
        hb.last = -1e9  # as if the last line were old: the next callback prints
        hb.steps(500, 2000, 3, 12)
    first, mid, last = out.getvalue().splitlines()
    assert first.startswith("[progress] train L4 sweep c0: 0/?, elapsed 0:00, ETA ?")
    assert mid.startswith("[progress] train L4 sweep c0: 500/2000 (25%), elapsed 0:00, ETA")
    assert mid.endswith(", 3/12 students stopped at step 500")
    assert last.startswith("[progress] train L4 sweep c0: 2000/2000 (100%)") or "500/2000" in last
    out = io.StringIO()
    with heartbeat("train L0 static c0", every=60, stream=out) as hb:
        hb.last = -1e9
        hb.steps(150, 300, 3, 3)  # every student stopped early: the job's training is done
    assert "150/300" not in out.getvalue()
    assert (
        out.getvalue().splitlines()[-1].startswith("[progress] train L0 static c0: 300/300 (100%)")
    )
    out = io.StringIO()
    with heartbeat("collect", every=60, stream=out):
        pass  # no callback at all: the end still says done
    assert out.getvalue().splitlines()[-1].startswith("[progress] collect: 1/1 (100%)")


def test_no_final_line_when_the_stage_fails():
    out = io.StringIO()
    try:
        with heartbeat("bad", total=2, every=60, stream=out):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert out.getvalue().splitlines() == ["[progress] bad: 0/2 (0%), elapsed 0:00, ETA ?"]


def _script_under_no_site(tmp_path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` as a workflow script would run in an environment that does not install the
    package: ``python -S`` (no site-packages, so no editable install), the script in a copied
    location, the scripts directory appended to sys.path as Snakemake does."""
    log = tmp_path / "rule.log"
    script = tmp_path / ".snakemake" / "scripts" / "tmpabc.job.py"
    script.parent.mkdir(parents=True)
    script.write_text(
        "import sys, types\n"
        f"snakemake = types.SimpleNamespace(log=[{str(log)!r}], rule='demo')\n"
        f"sys.path.append({str(REPO / 'workflow' / 'scripts')!r})\n" + body
    )
    return subprocess.run(
        [sys.executable, "-S", str(script)], capture_output=True, text=True, timeout=60
    )


def test_without_eb_entry_the_package_is_not_found(tmp_path):
    r = _script_under_no_site(tmp_path, "import entropic_bound\n")
    assert r.returncode != 0 and "No module named 'entropic_bound'" in r.stderr


def test_eb_entry_finds_the_clones_package_and_logs_import_errors(tmp_path):
    r = _script_under_no_site(
        tmp_path,
        "import eb_entry\n"
        "import entropic_bound, entropic_bound.core.progress\n"
        "print(entropic_bound.__file__)\n"
        "print('a line before the failure', file=sys.stderr)\n"
        "import entropic_bound.no_such_module\n",
    )
    assert r.returncode == 1
    assert r.stdout.strip() == str(REPO / "src" / "entropic_bound" / "__init__.py")
    log = (tmp_path / "rule.log").read_text()
    assert "a line before the failure" in log
    assert "No module named 'entropic_bound.no_such_module'" in log  # the traceback: in the log
    assert "no_such_module" not in r.stderr
