"""No import cycle inside the package: the module import graph of ``src/entropic_bound``, built
with ``ast`` from every ``import`` and ``from … import`` anywhere in a module (top level, inside
functions, under ``TYPE_CHECKING``), has no strongly connected component of more than one module.
A cycle means two modules that cannot be understood, tested or moved one without the other."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "src" / "entropic_bound"
ROOT = "entropic_bound"


def modules(pkg: Path = PKG) -> dict[str, Path]:
    """Dotted module name -> its file (a package is its ``__init__.py``)."""
    out = {}
    for path in pkg.rglob("*.py"):
        parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, mods: dict) -> str | None:
    """The module that ``name`` (a module, or a name inside one) lives in."""
    while name and name not in mods:
        name = name.rsplit(".", 1)[0] if "." in name else ""
    return name or None


def import_graph(pkg: Path = PKG) -> dict[str, set[str]]:
    """Module -> the package modules it imports (relative imports resolved; ``from p import m``
    is an edge to the submodule m when m is one, else to p)."""
    mods = modules(pkg)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        here = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            else:
                continue
            for t in targets:
                if t == ROOT or t.startswith(ROOT + "."):
                    target = _resolve(t, mods)
                    if target and target != mod:
                        graph[mod].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle_and_its_members():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / ROOT
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def f():\n    from entropic_bound.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from .a import f\n")
    graph = import_graph(pkg)
    assert graph["entropic_bound.sub.a"] == {"entropic_bound.sub.b"}
    assert graph["entropic_bound.sub.b"] == {"entropic_bound.sub.a"}
    assert cycles(graph) == [["entropic_bound.sub.a", "entropic_bound.sub.b"]]


def test_no_package_internal_import_cycle():
    found = cycles(import_graph())
    assert not found, f"import cycles: {found}"
