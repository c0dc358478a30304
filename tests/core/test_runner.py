"""runner.run: a job's exit status, its log, and the hard exit that skips interpreter teardown."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import atexit, sys
    from types import SimpleNamespace
    from entropic_bound.core.runner import run

    atexit.register(lambda: print("teardown ran", flush=True))  # must not: no teardown
    sm = SimpleNamespace(log=[sys.argv[1]], rule="demo", threads=1)

    def main(sm):
        what = sys.argv[2]
        print("working", file=sys.stderr)
        if what == "value":
            raise ValueError("the input is bad")
        if what == "bug":
            raise KeyError("oops")
        if what == "exit3":
            sys.exit(3)

    run(main, sm)
    print("not reached", flush=True)
    """
)


@pytest.mark.parametrize(
    "what, code, stderr_line",
    [
        ("ok", 0, None),
        ("value", 1, "entropic-bound: error in rule demo: the input is bad"),
        ("bug", 1, "entropic-bound: bug in rule demo; traceback in"),
        ("exit3", 3, None),
    ],
)
def test_run_exit_status_and_log(tmp_path, what, code, stderr_line):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    log = tmp_path / "job.log"
    proc = subprocess.run(
        [sys.executable, str(script), str(log), what], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == code
    assert "teardown ran" not in proc.stdout and "not reached" not in proc.stdout
    text = log.read_text()
    assert text.startswith("working\n")  # what the job wrote reached its log
    if stderr_line is None:
        assert proc.stderr == ""
    else:
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(stderr_line)
    if what == "value":
        assert stderr_line in text
    if what == "bug":  # the log has the traceback, stderr the one line pointing to it
        assert "KeyError: 'oops'" in text


def test_run_without_hard_exit_returns(tmp_path):
    from types import SimpleNamespace

    from entropic_bound.core.runner import run

    seen = []
    sm = SimpleNamespace(log=[str(tmp_path / "l.log")], rule="demo", threads=1)
    stderr = sys.stderr
    try:
        run(seen.append, sm, hard_exit=False)
        with pytest.raises(SystemExit):
            run(lambda sm: (_ for _ in ()).throw(ValueError("bad")), sm, hard_exit=False)
    finally:
        sys.stderr = stderr
    assert seen == [sm]


# --- OMP_WAIT_POLICY: jobs of more than one thread get passive OpenMP workers -------------------


def test_quiet_openmp_sets_passive_only_for_more_than_one_thread():
    from entropic_bound.core.runner import quiet_openmp

    env = {}
    assert quiet_openmp(1, env) is False and env == {}
    assert quiet_openmp(2, env) is True and env == {"OMP_WAIT_POLICY": "PASSIVE"}
    mine = {"OMP_WAIT_POLICY": "ACTIVE"}  # a user's own choice is kept
    assert quiet_openmp(4, mine) is False and mine == {"OMP_WAIT_POLICY": "ACTIVE"}


@pytest.mark.parametrize(
    "threads, preset, expected", [(2, None, "PASSIVE"), (1, None, None), (2, "ACTIVE", "ACTIVE")]
)
def test_eb_entry_sets_the_wait_policy_before_torch_loads(tmp_path, threads, preset, expected):
    """A workflow script as Snakemake runs it: the policy is in the environment when the script's
    own imports start, and torch has not been imported by then (libgomp reads it on load)."""
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[2] / "workflow" / "scripts"
    script = tmp_path / "job.py"
    script.write_text(
        "import os, sys, types\n"
        f"snakemake = types.SimpleNamespace(log=[], rule='demo', threads={threads})\n"
        f"sys.path.append({str(scripts)!r})\n"
        "import eb_entry\n"
        "print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(expected), "False"]


def test_retain_freed_memory_sets_both_thresholds_or_nothing():
    """mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD) to the same size in bytes; 0
    leaves the allocator alone; a libc that refuses is reported as not set."""
    from entropic_bound.core.runner import retain_freed_memory

    class Libc:
        def __init__(self, ok=1):
            self.calls, self.ok = [], ok

        def mallopt(self, param, value):
            self.calls.append((param, value))
            return self.ok

    libc = Libc()
    assert retain_freed_memory(0, libc) is False and libc.calls == []
    assert retain_freed_memory(256, libc) is True
    assert libc.calls == [(-3, 256 * 2**20), (-1, 256 * 2**20)]
    assert retain_freed_memory(8, Libc(ok=0)) is False


def test_retain_freed_memory_on_this_c_library_keeps_results_bitwise(tmp_path):
    """In a fresh process (the setting is process-wide): on glibc the call succeeds, and a
    computation that allocates and frees large tensors gives the same bits either way."""
    import subprocess

    code = (
        "import sys, hashlib, torch\n"
        "from entropic_bound.core.runner import retain_freed_memory\n"
        "ok = retain_freed_memory(int(sys.argv[1]))\n"
        "g = torch.Generator().manual_seed(0)\n"
        "acc = torch.zeros(64, 64, dtype=torch.float64)\n"
        "for _ in range(3):\n"
        "    X = torch.randn(600, 64, 64, generator=g, dtype=torch.float64)  # 19.7 MB\n"
        "    acc += torch.softmax(X @ X.transpose(1, 2), -1).sum(0)\n"
        "print(ok, hashlib.sha256(acc.numpy().tobytes()).hexdigest())\n"
    )
    out = [
        subprocess.run(
            [sys.executable, "-c", code, mb], capture_output=True, text=True, check=True
        ).stdout.split()
        for mb in ("0", "64")
    ]
    assert out[0][0] == "False" and out[0][1] == out[1][1]
    if sys.platform.startswith("linux") and "glibc" in " ".join(__import__("platform").libc_ver()):
        assert out[1][0] == "True"
