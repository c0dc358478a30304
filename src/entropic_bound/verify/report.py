"""The text and the JSON of ``entropic-bound verify``: one line per table, then the verdict."""

from __future__ import annotations

import math

from entropic_bound.verify.compare import (
    MISSING,
    NOT_IN_REFERENCE,
    OK,
    TableResult,
    agrees,
    verify_run,
)
from entropic_bound.verify.locate import default_reference
from entropic_bound.verify.tolerance import VerifyInputError, load_tolerances


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else ("inf" if math.isinf(x) else f"{x:.1e}")


def deviation_text(res: TableResult) -> str:
    """The table's largest deviation in words (or why there is none)."""
    w = res.worst
    if res.status in (MISSING, NOT_IN_REFERENCE):
        return "; ".join(res.problems) or "-"
    if w is None:
        return "; ".join(res.problems) or "no columns"
    if w.ratio == 0:
        return "none: every value equal"
    where = f"{w.column} row {w.row}"
    if math.isinf(w.ratio) and (w.tolerance.exact or math.isnan(w.abs_dev)):
        return f"{where}: {w.value} against {w.reference} (must be {w.tolerance.describe()})"
    return f"{where}: |d| {_num(w.abs_dev)}, rel {_num(w.rel_dev)} ({w.tolerance.describe()})"


def _cpu_of(folder) -> str:
    """The CPU a MANIFEST.json in ``folder`` names (a reference or recorded run), else for a run
    folder the CPU verify runs on (a run is verified where it was made)."""
    import json
    from pathlib import Path

    manifest = Path(folder) / "MANIFEST.json"
    if manifest.is_file():
        try:
            return str(json.loads(manifest.read_text()).get("cpu", "not recorded"))
        except (OSError, ValueError):
            return "not recorded"
    import platform

    model = platform.processor() or platform.machine()
    try:  # /proc/cpuinfo's model name (Linux); torch-free, unlike train.fused.cpu_summary
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
                break
    except OSError:
        pass
    return f"{model or 'unknown'} (this machine)"


def format_report(results: list[TableResult], run_dir, reference_dir) -> str:
    """One line per table: name, rows, largest deviation, its share of the tolerance, verdict."""
    width = max([len(r.name) for r in results] + [5])
    lines = [
        f"verify {run_dir} against {reference_dir}",
        f"reference CPU: {_cpu_of(reference_dir)}; run CPU: {_cpu_of(run_dir)}",
        f"{'table':<{width}}  {'rows':>6}  {'of tol.':>8}  {'verdict':<16}  largest deviation",
    ]
    for r in results:
        share = "-" if r.worst is None else _num(r.worst.ratio) if r.worst.ratio else "0"
        rows = "-" if r.status in (MISSING, NOT_IN_REFERENCE) else str(r.rows)
        text = deviation_text(r)
        lines.append(f"{r.name:<{width}}  {rows:>6}  {share:>8}  {r.status:<16}  {text}")
        lines += [f"{'':<{width}}  {'':>6}  {'':>8}  {'':<16}  note: {n}" for n in r.notes]
        lines += [
            f"{'':<{width}}  {'':>6}  {'':>8}  {'':<16}  decision within rounding: {d}"
            for d in r.within_rounding
        ]
    compared = [r for r in results if r.status != NOT_IN_REFERENCE]
    good = sum(r.status == OK for r in compared)
    verdict = "agree" if good == len(compared) else "DISAGREE"
    lines.append(
        f"{good} of {len(compared)} reference tables agree within tolerance: the run and the "
        f"reference {verdict}"
    )
    flips = sum(len(r.within_rounding) for r in results)
    if flips:
        lines.append(
            f"{flips} decision(s) within rounding (a rank, a rounding or a best_route flipped "
            "where the deciding quantity lies within its measured cross-CPU spread of the "
            "threshold; aggregates judged through them)"
        )
    unruled = sum(len(r.unruled) for r in results)
    if unruled:
        lines.append(
            f"{unruled} reference column(s) have no tolerance rule (notes above): compared "
            "exactly or at float_default; give them a rule"
        )
    return "\n".join(lines)


def report_json(results: list[TableResult]) -> list[dict]:
    """The results as plain data (``--json``); NaN and infinities as strings."""
    out = []
    for r in results:
        w = r.worst
        out.append(
            {
                "table": r.name,
                "status": r.status,
                "rows": r.rows,
                "problems": r.problems,
                "notes": r.notes,
                "unruled_columns": r.unruled,
                "decisions_within_rounding": r.within_rounding,
                "worst": None
                if w is None
                else {
                    "column": w.column,
                    "row": w.row,
                    "share_of_tolerance": _jsonable(w.ratio),
                    "abs_deviation": _jsonable(w.abs_dev),
                    "rel_deviation": _jsonable(w.rel_dev),
                    "tolerance": w.tolerance.describe(),
                },
            }
        )
    return out


def _jsonable(x: float):
    return x if math.isfinite(x) else str(x)


def run_verify(results, reference=None, tolerance_file=None, as_json=False) -> tuple[str, int]:
    """What ``entropic-bound verify`` prints and its exit status: 0 when every reference table
    agrees, 1 when one does not. ``reference``/``tolerance_file`` default to the clone's; an
    unreadable input raises VerifyInputError (the command's exit 2)."""
    import json

    default_folder, default_tolerances = default_reference()
    if not (reference and tolerance_file) and not default_tolerances.parent.is_dir():
        raise VerifyInputError(
            f"no shipped reference at {default_tolerances.parent} (the package is not running "
            "from a clone); pass --reference <clone>/benchmarks/reference/paper and "
            "--tolerances <clone>/benchmarks/reference/tolerances.yaml"
        )
    reference = reference or default_folder
    tolerances = load_tolerances(tolerance_file or default_tolerances)
    results_ = verify_run(results, reference, tolerances)
    code = 0 if agrees(results_) else 1
    if as_json:
        return json.dumps({"agree": code == 0, "tables": report_json(results_)}, indent=2), code
    return format_report(results_, results, reference), code
