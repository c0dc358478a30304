"""The documented API imports from its short paths, no other path imports, and the package
layout keeps its rules: no stage imports a later stage, core imports nothing of the project."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "src" / "entropic_bound"

#: what the README and docs tell users to import
DOCUMENTED = [
    ("entropic_bound.tasks", ["TaskSpec", "make_task", "load_task", "task_specs"]),
    ("entropic_bound.config", ["load_config", "validate_config", "ConfigError", "config_hash"]),
    (
        "entropic_bound.predict",
        ["predict_static", "predict_attention_native", "predict_inversion", "recommend_rank"],
    ),
    ("entropic_bound.core.estimators", ["all_estimators", "energy_rank", "round_rank"]),
    ("entropic_bound.train", ["train_students", "Optim"]),
    ("entropic_bound.claims", ["evaluate_claims", "load_tables", "CLAIMS", "claims_markdown"]),
    ("entropic_bound.analysis", ["run_analyses", "intrinsic_ranks", "sort_rungs", "round_rank"]),
    ("entropic_bound.figures", ["make_figure", "save_figure", "FIGURES"]),
    ("entropic_bound.core.io", ["atomic_path", "write_table", "read_table"]),
    ("entropic_bound.verify", ["verify_run", "load_tolerances", "format_report", "agrees"]),
]


@pytest.mark.parametrize("module,names", DOCUMENTED, ids=[m for m, _ in DOCUMENTED])
def test_documented_api_imports(module, names):
    m = importlib.import_module(module)
    for name in names:
        assert getattr(m, name) is not None, f"{module}.{name}"
    assert set(names) <= set(dir(m))


@pytest.mark.parametrize("old", ["engine", "estimators", "predictors", "recommend", "cli.why"])
def test_no_alias_of_a_module_path_imports(old):
    """0.1.0 is the first release: a module has one path, under its stage's package."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"entropic_bound.{old}")


def test_an_unknown_name_is_an_attribute_error():
    import entropic_bound.tasks

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        entropic_bound.tasks.nope  # noqa: B018


#: pipeline order: a package may import only itself, earlier ones, and the foundations
ORDER = ["core", "config", "tasks", "bounds", "predict", "frontier", "train", "analysis", "claims"]
LATER_FREE = {
    "figures": ORDER,
    "exploratory": ORDER + ["figures"],
    "heads": ORDER,
    "cli": ORDER + ["figures", "verify", "pretrained"],
    "verify": ["core", "config"],  # reads finished tables: no stage of the pipeline
    # reads published models, measures their heads as the real-heads study does (heads' tests
    # and knee rule, predict's recommendation, config's strict reading): no stage of the run
    "pretrained": ["core", "config", "predict", "heads"],
}


def _project_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("entropic_bound."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("entropic_bound."):
                    out.add(a.name.split(".")[1])
    return out


@pytest.mark.parametrize("package", ORDER + list(LATER_FREE))
def test_no_package_imports_a_later_stage(package):
    allowed = (
        set(ORDER[: ORDER.index(package) + 1])
        if package in ORDER
        else set(LATER_FREE[package]) | {package}
    )
    if package == "core":
        allowed = {"core"}
    for path in sorted((PKG / package).glob("*.py")):
        bad = _project_imports(path) - allowed
        assert not bad, f"{path.relative_to(PKG)} imports {sorted(bad)}"


def test_the_package_root_holds_only_its_entry_points():
    flat = sorted(p.name for p in PKG.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py"]


def test_no_library_module_is_over_400_lines():
    long = {
        str(p.relative_to(PKG)): n
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 420
    }
    assert not long, long
