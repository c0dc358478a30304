"""envs/*.yaml pin exactly what requirements/lock.txt pins, and the lock lies within the
ranges of pyproject.toml."""

import re
import shutil
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements" / "lock.txt"


def _pins(reqs):
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;#]+)", r.strip())
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def lock_entries() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, sha256 hashes) of every requirement of the lock (pip-compile's form:
    ``name==version \\`` then ``    --hash=sha256:…`` lines, comments between entries)."""
    out: dict[str, tuple[str, list[str]]] = {}
    name = None
    for ln in LOCK.read_text().splitlines():
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+?)(?: \\)?", ln)
        if m:
            name = m.group(1).lower().replace("_", "-")
            out[name] = (m.group(2), [])
            continue
        h = re.fullmatch(r" +--hash=sha256:([0-9a-f]{64})(?: \\)?", ln)
        assert h and name, f"requirements/lock.txt: not name==version nor a hash: {ln!r}"
        out[name][1].append(h.group(1))
    return out


#: extra -> {package: the version its tests ran with}: extras the lock leaves out (make venv
#: installs none of them; the tests that need them skip without them)
UNLOCKED = {"pretrained": {"tokenizers": "0.23.3", "gguf": "0.19.0"}}


def lock_pins() -> dict[str, str]:
    """name -> version (its public part: torch's +cpu label dropped, as in envs/ and ranges)."""
    return {k: str(Version(v).public) for k, (v, _) in lock_entries().items()}


def test_every_lock_entry_has_hashes_and_torch_is_the_cpu_build():
    entries = lock_entries()
    assert len(entries) > 50 and "entropic-bound" not in entries
    for name, (version, hashes) in entries.items():
        assert hashes, f"requirements/lock.txt: {name}=={version} has no hash"
    assert entries["torch"][0].endswith("+cpu"), entries["torch"]
    assert not any(k.startswith("nvidia-") for k in entries), "a CUDA wheel in the lock"


def _project_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = [v for k, v in project["optional-dependencies"].items() if k not in UNLOCKED]
    reqs = [*project["dependencies"], *sum(extras, [])]
    return [Requirement(r) for r in reqs if not r.startswith("entropic-bound")]


def test_unlocked_extras_are_tested_ranges_outside_the_lock():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = lock_pins()
    for extra, tested in UNLOCKED.items():
        reqs = [Requirement(r) for r in project["optional-dependencies"][extra]]
        assert {r.name.lower() for r in reqs} == set(tested), extra
        for r in reqs:
            assert r.name.lower() not in pins, f"{r.name} is locked: drop it from UNLOCKED"
            assert {sp.operator: sp.version for sp in r.specifier}.get(">=") == tested[r.name]
            assert Version(tested[r.name]) in r.specifier


def test_the_lock_pins_every_dependency_within_its_range():
    pins = lock_pins()
    for req in _project_requirements():
        name = req.name.lower()
        assert name in pins, f"{name} is not in requirements/lock.txt"
        assert Version(pins[name]) in req.specifier, f"lock {name}=={pins[name]} outside {req}"


def test_conda_envs_agree_with_the_lock():
    pins = lock_pins()
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        deps = yaml.safe_load(env.read_text())["dependencies"]
        pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
        env_pins = _pins(pip)
        assert env_pins and len(env_pins) == len(pip), f"{env.name}: every pip entry pinned"
        tested = {k: v for extra in UNLOCKED.values() for k, v in extra.items()}
        for name, version in env_pins.items():
            want = pins.get(name, tested.get(name))  # an unlocked extra: its tested version
            assert want == version, (
                f"{env.name}: {name}=={version} but requirements/lock.txt pins {pins.get(name)}"
            )
        assert "python=3.11" in deps


def test_make_venv_installs_the_lock_with_hashes():
    make = (REPO / "Makefile").read_text()
    assert "LOCK    := requirements/lock.txt" in make
    assert "--require-hashes --no-deps -r $(LOCK)" in make
    assert "--require-hashes --no-deps --index-url $(TORCH_INDEX)" in make


# --- `snakemake --sdm conda`: how Snakemake resolves an env file ---
# Snakemake copies each env file to <workdir>/.snakemake/conda/<hash>.yaml and runs
# `conda env create --file` on the copy; conda's pip then resolves local paths relative to the
# copy, not to envs/. A relative entry such as `-e ../` thus points into .snakemake/.


def _local_pip_entries(env_file: Path) -> list[tuple[str, Path]]:
    """Every pip entry of ``env_file`` that names a local path, resolved as conda would."""
    from packaging.requirements import InvalidRequirement, Requirement

    deps = yaml.safe_load(env_file.read_text())["dependencies"]
    pip = next((d["pip"] for d in deps if isinstance(d, dict) and "pip" in d), [])
    out = []
    for entry in pip:
        target = re.sub(r"^(-e|--editable)\s+", "", entry.strip())
        try:
            req = Requirement(target)
            if req.url is None:
                continue  # a name from the index
            target = req.url.removeprefix("file://")
        except InvalidRequirement:
            pass
        out.append((entry, (env_file.parent / target).resolve()))
    return out


def _as_snakemake_deploys(env_file: Path, workdir: Path) -> Path:
    """Copy ``env_file`` where `--sdm conda` puts it before conda reads it."""
    import hashlib

    digest = hashlib.sha256(env_file.read_bytes()).hexdigest()
    copy = workdir / ".snakemake" / "conda" / f"{digest}.yaml"
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(env_file, copy)
    return copy


def _unresolvable(env_file: Path, workdir: Path) -> list[str]:
    """Local pip entries that do not reach this project once the file is deployed."""
    copy = _as_snakemake_deploys(env_file, workdir)
    return [
        entry
        for entry, path in _local_pip_entries(copy)
        if not (path / "pyproject.toml").exists() or path.resolve() != REPO
    ]


def test_conda_envs_resolve_from_where_snakemake_copies_them(tmp_path):
    for env in sorted((REPO / "envs").glob("*.yaml")):
        assert _unresolvable(env, tmp_path) == [], env.name
        assert _local_pip_entries(env) == [], f"{env.name}: installs a local path"


def test_a_relative_editable_install_is_caught(tmp_path):
    """The failure fixed in 7d3def8 (2026-12-03): `-e ../` in envs/ reaches the clone, its deployed copy does not."""
    env = tmp_path / "clone" / "envs" / "broken.yaml"
    env.parent.mkdir(parents=True)
    (env.parent.parent / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    env.write_text(
        yaml.safe_dump(
            {"dependencies": ["python=3.11", "pip", {"pip": ["numpy==2.4.6", "-e ../"]}]}
        )
    )
    assert [e for e, p in _local_pip_entries(env)] == ["-e ../"]
    assert (_local_pip_entries(env)[0][1] / "pyproject.toml").exists()  # fine where it lies ...
    assert _unresolvable(env, tmp_path / "run") == ["-e ../"]  # ... lost once deployed


def test_every_rule_script_imports_eb_entry_first():
    """Without an install of the package the scripts find it through eb_entry.py (tested in
    test_progress.py), so each imports it before anything of entropic_bound."""
    for script in sorted((REPO / "workflow" / "scripts").glob("*.py")):
        if script.name == "eb_entry.py":
            continue
        lines = [
            ln for ln in script.read_text().splitlines() if ln.startswith(("import ", "from "))
        ]
        first_lib = next(i for i, ln in enumerate(lines) if "entropic_bound" in ln)
        assert any(ln.startswith("import eb_entry") for ln in lines[:first_lib]), script.name
