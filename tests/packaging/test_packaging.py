"""Packaging: SPDX license, citation, bounded build backend, a library that installs and
imports without Snakemake and plotting, and a wheel that validates a config on its own."""

import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
#: what the library must not need: the workflow engine, the plotting stack, and the readers of
#: pretrained models' files (and the reference implementation their tests compare against)
OPTIONAL = (
    "snakemake",
    "matplotlib",
    "seaborn",
    "tokenizers",
    "gguf",
    "safetensors",
    "transformers",
)


def _names(reqs) -> set[str]:
    return {Requirement(r).name.lower() for r in reqs}


def test_license_is_spdx_with_its_file():
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")


def test_build_backend_range_is_bounded_and_contains_the_tested_versions():
    (req,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    assert req.name == "setuptools"
    ops = {s.operator for s in req.specifier}
    assert ops == {">=", "<"}, "a lower and an upper bound"
    for tested in (
        "77.0.3",
        "80.9.0",
        "84.2.1",
    ):  # built warning-free (docs/reproducibility.md, Packaging)
        assert Version(tested) in req.specifier
    assert Version("76.1.0") not in req.specifier  # rejects `license = "MIT"`


def test_core_dependencies_leave_workflow_and_plotting_to_extras():
    core = _names(PROJECT["dependencies"])
    # tqdm: the progress bar of `entropic-bound predict`, part of the library's command line
    assert core == {"torch", "numpy", "pandas", "pyarrow", "pyyaml", "jsonschema", "tqdm"}
    extras = PROJECT["optional-dependencies"]
    assert _names(extras["plot"]) == {"matplotlib", "seaborn"}
    assert _names(extras["pretrained"]) == {"tokenizers", "gguf"}
    assert {"snakemake", "entropic-bound"} <= _names(extras["workflow"])
    assert "entropic-bound[plot]" in extras["workflow"]
    for name in ("cluster", "dev"):
        assert "entropic-bound[workflow]" in extras[name]
    assert PROJECT["requires-python"] == ">=3.11"


#: lower bounds below the lock's version that were tested too
OLDER_TESTED = {"setuptools": "77.0.3"}


def test_dependencies_are_ranges_with_tested_lower_bounds():
    """Ranges, not pins (so the library installs beside a user's stack): each has a lower bound,
    the version of requirements/lock.txt, which make venv installs and the tests ran with."""
    from test_envs import UNLOCKED, lock_pins

    pins = lock_pins()
    extras = {k: v for k, v in PROJECT["optional-dependencies"].items() if k not in UNLOCKED}
    for reqs in (PROJECT["dependencies"], *extras.values()):
        for r in map(Requirement, reqs):
            if r.name == "entropic-bound":
                continue
            ops = {sp.operator: sp.version for sp in r.specifier}
            assert "==" not in ops and "===" not in ops, f"{r}: an exact pin"
            # setuptools: 77.0.3 builds the wheel too (the build-system range above)
            want = OLDER_TESTED.get(r.name.lower(), pins[r.name.lower()])
            assert ops.get(">=") == want, f"{r}: lower bound is not the tested version"


def test_citation_cff_cites_the_paper_and_this_version():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == PROJECT["version"]
    assert cff["license"] == PROJECT["license"]
    paper = cff["preferred-citation"]
    assert paper["url"] == "https://arxiv.org/abs/2607.23050"
    assert {i["value"] for i in paper["identifiers"]} >= {"arXiv:2607.23050"}
    assert paper["authors"][0]["family-names"] == "Yoon"


#: a subprocess prologue: importing any of OPTIONAL raises ImportError, as if not installed
_BLOCK = textwrap.dedent(
    f"""
    import sys
    class _Absent:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {OPTIONAL!r}:
                raise ImportError(f"{{name}} is not installed")
    sys.meta_path.insert(0, _Absent())
    """
)


#: the modules that draw (they need the plot extra: matplotlib, seaborn): every figures module
#: but its spec (which Snakemake reads at parse time), and `predict --plot`
PLOT_MODULES = ("figures.", "cli.plot")
PLOT_FREE = ("figures.spec",)


def test_library_imports_without_snakemake_and_plotting():
    """Every module but the plotting ones imports with Snakemake, matplotlib and seaborn absent."""
    code = _BLOCK + textwrap.dedent(
        f"""
        import importlib, pkgutil
        import entropic_bound
        for m in pkgutil.walk_packages(entropic_bound.__path__, "entropic_bound."):
            name = m.name.removeprefix("entropic_bound.")
            # __main__ runs the command line (`python -m entropic_bound`) when imported
            plots = name.startswith({PLOT_MODULES!r}) and name not in {PLOT_FREE!r}
            if not plots and name != "__main__":
                importlib.import_module(m.name)
        try:
            import entropic_bound.figures.draw
        except ImportError as exc:
            assert "matplotlib" in str(exc), exc
        else:
            raise AssertionError("plotting imported without matplotlib")
        assert not [k for k in sys.modules if k.split(".")[0] in {OPTIONAL!r}]
        print("ok")
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_building_the_dag_imports_no_torch():
    """The library modules the Snakefile and its rules import at parse time (top-level
    ``from entropic_bound.X import``) load without torch: every ``snakemake`` call, a dry run
    or a cluster job's own, parses them, and torch costs ~2.5 s of that each time."""
    sources = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").rglob("*.smk"))]
    modules = sorted(
        {
            line.split()[1]
            for path in sources
            for line in path.read_text().splitlines()
            if line.startswith("from entropic_bound") or line.startswith("import entropic_bound")
        }
    )
    assert "entropic_bound.config.load" in modules and "entropic_bound.tasks.grid" in modules, (
        modules
    )
    code = f"import importlib, sys\nfor m in {modules!r}:\n    importlib.import_module(m)\n"
    code += "print(sorted(k for k in sys.modules if k.split('.')[0] == 'torch')[:3])"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr)


#: the workflow scripts of the jobs that read cached tables and compute nothing with torch
TABLE_SCRIPTS = (
    "analyses",
    "c8_by_beta",
    "claims",
    "collect_bounds",
    "collect_train",
    "frontier_table",
    "plot",
    "provenance",
)


@pytest.mark.parametrize("script", TABLE_SCRIPTS)
def test_table_jobs_import_no_torch(script):
    """The jobs that only read and write tables (analyses, claims, figures, collections) load
    their library modules without torch: it cost each of them ~1.5 CPU s before any work, six
    of them in the run's serial tail (docs/performance.md)."""
    source = (REPO / "workflow" / "scripts" / f"{script}.py").read_text()
    modules = sorted(
        {line.split()[1] for line in source.splitlines() if line.startswith("from entropic_bound")}
    )
    assert modules, script
    code = f"import importlib, sys\nfor m in {modules!r}:\n    importlib.import_module(m)\n"
    code += "print(sorted(k for k in sys.modules if k.split('.')[0] == 'torch')[:3])"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (script, r.stdout, r.stderr)


def test_wheel_builds_without_warnings_and_validates_a_config(tmp_path):
    """Build the wheel (this venv's setuptools, no network), unpack it, and validate the shipped
    configs with it alone: schemas come from the package data, not from the repository."""
    import setuptools

    (req,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    if Version(setuptools.__version__) not in req.specifier:
        pytest.skip(f"setuptools {setuptools.__version__} is outside {req}")
    src = tmp_path / "src"
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for f in files:
        if (REPO / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, src / f)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    build_log = [
        line
        for line in (r.stdout + r.stderr).replace(str(tmp_path), "<tmp>").splitlines()
        if "warn" in line.lower() and "Location 'file:" not in line  # pip's index notes
    ]
    assert not build_log, build_log
    (wheel,) = (tmp_path / "dist").glob("entropic_bound-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(site)
    for member in (
        "config/schemas/config.schema.yaml",
        "config/schemas/claims.schema.yaml",
        "train/_fused_step.c",
    ):
        assert f"entropic_bound/{member}" in names
    meta = (site / "entropic_bound-0.1.0.dist-info" / "METADATA").read_text()
    assert "License-Expression: MIT" in meta
    _check_metadata(meta)

    # -S: no site processing, so this venv's editable install (a .pth hook) is not seen; its
    # site-packages is appended for yaml and jsonschema only
    purelib = sysconfig.get_paths()["purelib"]
    code = _BLOCK + textwrap.dedent(
        f"""
        sys.path[:0] = [{str(site)!r}]
        sys.path.append({purelib!r})
        import entropic_bound
        from entropic_bound.config.load import ConfigError, load_config, validate_config
        assert entropic_bound.__file__.startswith({str(site)!r}), entropic_bound.__file__
        cfg = load_config({str(REPO / "config" / "quick.yaml")!r})
        load_config({str(REPO / "config" / "claims.yaml")!r}, "claims")
        cfg["task"]["beta"] = float("nan")
        try:
            validate_config(cfg)
        except ConfigError as exc:
            print(exc)
        """
    )
    r = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "config key 'task.beta' is nan; every number must be finite"


def _check_metadata(meta: str) -> None:
    """The wheel's METADATA: ranges (no exact pin), Python >= 3.11 without an upper bound, a
    one-line summary (not the README), the paper's URL."""
    from email.parser import Parser

    msg = Parser().parsestr(meta)
    assert msg["Requires-Python"] == ">=3.11"
    requires = [Requirement(r) for r in msg.get_all("Requires-Dist")]
    core = [r for r in requires if r.marker is None]
    assert {r.name for r in core} == {
        "torch",
        "numpy",
        "pandas",
        "pyarrow",
        "pyyaml",
        "jsonschema",
        "tqdm",
    }
    for r in requires:
        if r.name != "entropic-bound":
            ops = {sp.operator for sp in r.specifier}
            assert ">=" in ops and "==" not in ops, r
    assert "\n" not in msg["Summary"] and len(msg["Summary"]) < 160
    assert "Paper, https://arxiv.org/abs/2607.23050" in msg.get_all("Project-URL")


def test_scripts_import_names_the_library_has():
    """Every `from entropic_bound.X import name` of the benchmarks, workflow scripts and rules
    names something module X has (a name moved between modules broke two benchmarks once)."""
    import ast
    import importlib

    files = [
        *sorted((REPO / "benchmarks").glob("*.py")),
        *sorted((REPO / "workflow" / "scripts").glob("*.py")),
    ]
    missing = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("entropic_"):
                module = importlib.import_module(node.module)
                missing += [
                    f"{path.name}: {node.module}.{a.name}"
                    for a in node.names
                    if not hasattr(module, a.name)
                ]
    assert not missing, missing
