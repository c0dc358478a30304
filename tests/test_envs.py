"""envs/*.yaml pin exactly what pyproject.toml pins."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _pins(reqs):
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;]+)", r.strip())
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_conda_envs_agree_with_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    # the envs hold the library and its extras (plot, workflow): pins of both
    reqs = [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]
    reqs = [r for r in reqs if not r.startswith("entropic-bound")]  # an extra naming others
    pins = _pins(reqs)
    assert all("==" in r for r in reqs), "every dependency is pinned exactly"
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        deps = yaml.safe_load(env.read_text())["dependencies"]
        pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
        env_pins = _pins([p for p in pip if not p.startswith("-e")])
        assert env_pins, env
        for name, version in env_pins.items():
            assert pins.get(name) == version, (
                f"{env.name}: {name}=={version} but pyproject pins {pins.get(name)}"
            )
        assert "python=3.11" in deps
