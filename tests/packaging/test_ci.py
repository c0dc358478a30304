"""`.ci/run` runs the README's commands as written: `make test`, then the quick pipeline with its
report from the clone's root, and checks that the report is where the quick config's run_name
puts it."""

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readmes_commands_and_checks_the_report():
    ci = (REPO / ".ci" / "run").read_text()
    makefile = (REPO / "Makefile").read_text()
    steps = re.findall(r"^make ([\w-]+)(.*)$", ci, re.M)
    assert [s[0] for s in steps][:2] == ["test", "reproduce"], steps
    for target, _ in steps:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target
    assert ("reproduce", " CONFIG=config/quick.yaml") in steps
    run_name = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())["run_name"]
    assert f"results/{run_name}/report.html" in ci
    readme = (REPO / "README.md").read_text()
    for command in ("make reproduce CONFIG=config/quick.yaml", "source .venv/bin/activate"):
        assert command in readme, command
