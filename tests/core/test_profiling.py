"""core/profiling.py: a job profiled on request (EB_PROFILE), its rows by self time, written even
when the job fails, and nothing changed when unset; the runner's hook in a real job process."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from entropic_bound.core.profiling import call_profiled, profile_request


def _busy(steps: int) -> int:
    """Python arithmetic alone (no call inside the loop): its time is its own."""
    x = 0
    for i in range(steps):
        x += i * i
    return x


def _job(steps):
    _busy(steps)
    return "done"


def test_a_request_needs_the_path_and_names_its_rule_and_profiler():
    assert profile_request("predict", {}) is None
    assert profile_request("predict", {"EB_PROFILE": "p.json"}) == ("p.json", "cprofile")
    env = {"EB_PROFILE": "p.json", "EB_PROFILE_RULE": "bounds", "EB_PROFILER": "torch"}
    assert profile_request("predict", env) is None  # another rule's job
    assert profile_request("bounds", env) == ("p.json", "torch")
    with pytest.raises(ValueError, match="EB_PROFILER='perf'; use one of cprofile, torch"):
        profile_request("bounds", {"EB_PROFILE": "p.json", "EB_PROFILER": "perf"})


def test_cprofile_puts_the_function_that_spends_the_time_first(tmp_path):
    path = tmp_path / "p.json"
    assert call_profiled(_job, 2_000_000, path) == "done"
    out = json.loads(path.read_text())
    assert out["profiler"] == "cprofile" and out["wall_s"] >= out["rows"][0]["self_s"]
    top = out["rows"][0]
    assert top["function"].startswith("_busy (") and top["calls"] == 1
    assert top["self_s"] > 0.5 * out["cpu_s"]
    assert [r["self_s"] for r in out["rows"]] == sorted(
        (r["self_s"] for r in out["rows"]), reverse=True
    )


def test_torch_profiler_names_the_operators(tmp_path):
    path = tmp_path / "p.json"
    a = torch.randn(256, 256, dtype=torch.float64)
    call_profiled(lambda x: x @ x, a, path, "torch")
    names = [r["function"] for r in json.loads(path.read_text())["rows"]]
    assert "aten::mm" in names or "aten::matmul" in names


def test_a_failing_job_still_writes_its_profile(tmp_path):
    path = tmp_path / "p.json"

    def fails(_):
        _busy(1000)
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        call_profiled(fails, None, path)
    assert any(r["function"].startswith("_busy") for r in json.loads(path.read_text())["rows"])


JOB = textwrap.dedent(
    """
    import sys, time
    from types import SimpleNamespace
    from entropic_bound.core.runner import run

    def main(sm):
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass

    run(main, SimpleNamespace(log=[sys.argv[1]], rule="demo", threads=1))
    """
)


@pytest.mark.parametrize("profiler, code", [("cprofile", 0), ("torch", 0), ("perf", 1)])
def test_the_runner_profiles_a_job_on_request(tmp_path, profiler, code):
    script, log, out = tmp_path / "job.py", tmp_path / "job.log", tmp_path / "p.json"
    script.write_text(JOB)
    env = {**os.environ, "EB_PROFILE": str(out), "EB_PROFILER": profiler}
    env.pop("EB_PROFILE_RULE", None)
    proc = subprocess.run(
        [sys.executable, str(script), str(log)], env=env, capture_output=True, text=True
    )
    assert proc.returncode == code
    if code:  # a bad request: one line, no profile
        assert proc.stderr.strip() == (
            "entropic-bound: error in rule demo: EB_PROFILER='perf'; use one of cprofile, torch"
        )
        assert not out.exists()
    else:
        assert json.loads(out.read_text())["cpu_s"] >= 0.2
