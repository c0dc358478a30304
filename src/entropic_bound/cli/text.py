"""Plain-text rendering of ``entropic-bound predict`` and ``inspect`` results (their JSON
reports, as :func:`.recommend.recommend_source` and :func:`.npyio.inspect_file` return them)."""

from __future__ import annotations

import json
import textwrap

PROG = "entropic-bound"
#: width of the text report
WIDTH = 100


def _fmt(value: float | None, name: str = "") -> str:
    if value is None:
        return "-"
    if name in ("numerical", "floor") or name.startswith("energy_"):
        return f"{value:.0f}"
    return f"{value:.2f}"


def _wrap(head: str, text: str, indent: int = 4) -> str:
    return textwrap.fill(
        text,
        width=WIDTH,
        initial_indent=head,
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
    )


def format_predict(res: dict) -> str:
    """The text report of one prediction (one head)."""
    lines = _input_lines(res["input"])
    lines += _estimate_lines(res["predictors"])
    share = res["static_fit_share"]
    lines += [
        "",
        "Static-fit share: "
        + (
            f"{share:.4f} (1 = one static kernel explains the data)"
            if share is not None
            else "not computed (P_static skipped)"
        ),
    ]
    lines += _frontier_lines(res["frontier"])
    lines += _recommendation_lines(res["recommendation"])
    if res["notes"]:
        lines += ["", "Notes:"] + [_wrap("  - ", note) for note in res["notes"]]
    if res.get("loss_knee"):
        lines += ["", loss_knee_line(res["loss_knee"])]
    if res.get("plot"):
        lines += ["", f"spectrum plot written to {res['plot']}"]
    return "\n".join(lines)


def loss_knee_line(lk: dict) -> str:
    """The loss knee in one line: the rank, the errors that decide it, its cost."""
    knee = (
        "none (uniform attention fits as well)" if lk["knee"] != lk["knee"] else f"{lk['knee']:g}"
    )
    return (
        f"Loss knee: {knee}: the least rank whose held-out error is within "
        f"{lk['fraction']:.0%} of the gap between uniform attention ({lk['ablated']:.4g}) and the "
        f"full-rank fit ({lk['full']:.4g}); {lk['fits']} fits, {lk['cpu_s']:.1f} CPU-s"
    )


def _input_lines(inp: dict) -> list[str]:
    dv = inp.get("d_v", inp["d"])
    shape = f"d = {inp['d']} dimensions" + (
        f", d_v = {dv} value dimensions" if dv != inp["d"] else ""
    )
    head = f", head {inp['head']} of {inp['heads']}" if inp.get("heads") is not None else ""
    lines = [
        f"{PROG} predict: {inp['source']}{head}",
        f"  B = {inp['B']} sequences, n = {inp['n']} tokens, {shape}"
        + (", causal (lower-triangular) attention" if inp.get("causal") else ""),
    ]
    if inp["task_meta"]:
        m = inp["task_meta"]
        lines.append(
            "  file meta: "
            + ", ".join(
                f"{k} = {m[k]}"
                for k in ("task_id", "rung", "r_star", "beta", "sigma", "value_map")
                if k in m
            )
            + "  (for comparison)"
        )
    return lines


def _estimate_lines(preds: dict) -> list[str]:
    names = list(preds["P_attn"]["estimates"])
    lines = ["", "Rank estimates (predictor × estimator):"]
    lines.append(
        f"  {'predictor':<9} {'sequences':>9}  "
        + "  ".join(f"{n:>{max(len(n), 5)}}" for n in names)
    )
    for pname, p in preds.items():
        if p.get("status") == "ok":
            cells = "  ".join(f"{_fmt(p['estimates'][n], n):>{max(len(n), 5)}}" for n in names)
            lines.append(f"  {pname:<9} {p['sequences_used']:>9}  {cells}")
        else:
            lines.append(_wrap(f"  {pname:<9} ", p["status"], 12))
    return lines


def _frontier_lines(fr: dict) -> list[str]:
    noise, mix, cond = fr["noise"], fr["mixing"], fr["conditioning"]
    lines = [
        "",
        "Where the data sit on the predictability frontier:",
        _wrap("  n vs d: ", fr["regime"]),
    ]
    if noise["sigma_hat"] is None:
        lines.append(_wrap("  noise:  ", noise["method"]))
    else:
        rel = f"{noise['relative']:.3g}" if noise["relative"] is not None else "n/a"
        lines.append(
            _wrap(
                "  noise:  ",
                f"sigma_hat = {noise['sigma_hat']:.3g} per entry ({rel} of "
                f"the signal rms), by the {noise['method']}",
            )
        )
    idx = mix["mean_token_index"]
    if mix["basis"] != "mean-token index":
        lines.append(_wrap("  mixing: ", f"{mix['label']}, from {mix['basis']}"))
    elif idx is None:
        lines.append(_wrap("  mixing: ", f"{mix['label']} ({mix['explanation']})"))
    else:
        lines.append(
            _wrap(
                "  mixing: ",
                f"{mix['label']} (mean-token index {idx:.2f}: ≈ 1 for linear "
                "attention or token-wise maps, ≫ 1 when outputs average the same tokens as "
                f"softmax does; softmax-like from {mix['threshold']})",
            )
        )
    if cond.get("applies", True):
        lines.append(_wrap("  conditioning: ", _conditioning_words(cond)))
    return lines


def _conditioning_words(cond: dict) -> str:
    if cond["sequence"] < 0:  # C = 0: no sequence carries any energy (Y without a mixed part)
        return "n/a (P_attn's energy is zero: no sequence can dominate it)"
    return (
        f"the largest sequence ({cond['sequence']}) holds "
        f"{cond['max_share']:.2%} of P_attn's energy, {cond['max_over_mean']:.1f} × the mean"
        + (
            f", dominated (>= {cond['threshold']:g} ×)"
            if cond["dominated"]
            else f" (flagged from {cond['threshold']:g} ×)"
        )
    )


def _recommendation_lines(rec: dict) -> list[str]:
    lines = [
        "",
        f"Recommended minimum QK rank: {rec['min_qk_rank']}"
        + (
            f"  (gap {rec['gap_rank']}, safe rank {rec['safe_rank']})"
            if rec.get("gap_note")
            else ""
        ),
        _wrap(
            "  trusted: ",
            f"{rec['predictor']} with {rec['estimator']} (confidence: "
            f"{rec['confidence']}); energy beyond the cut: {rec['tail_energy']:.2%}",
        ),
        _wrap("  why: ", rec["why"] + "."),
    ]
    if rec.get("gap_note"):
        lines.append(_wrap("  gap and safe rank: ", rec["gap_note"] + "."))
    if rec.get("fix"):
        lines.append(_wrap("  what to do: ", rec["fix"] + "."))
    lines.append(_wrap("  estimator: ", rec["why_estimator"] + "."))
    return lines


def format_heads(res: dict) -> str:
    """One row per head of Y [B, H, n, d_v] (``--head h`` gives one head's full report)."""
    inp = res["input"]
    heads = res["heads"]
    lines = _input_lines({**inp, "heads": None})
    lines[0] += f" ({len(heads)} heads)"
    lines += [
        "",
        "Recommended minimum QK rank per head (gap: the floor-aware rank; safe: r_E(0.99)):",
        f"  {'head':>4} {'rank':>5} {'gap':>4} {'safe':>5}  {'predictor':<9} {'estimator':<12}"
        f" {'confidence':<20} {'mixing':<13} {'sigma_hat':>9}",
    ]
    for r in heads:
        h, rec, fr = r["head"], r["recommendation"], r["frontier"]
        sig = fr["noise"]["sigma_hat"]
        lines.append(
            f"  {h:>4} {rec['min_qk_rank']:>5} {rec['gap_rank']:>4} {rec['safe_rank']:>5}  "
            f"{rec['predictor']:<9} {rec['estimator']:<12} {rec['confidence']:<20} "
            f"{fr['mixing']['label']:<13} {'-' if sig is None else f'{sig:.3g}':>9}"
        )
    top = res["recommendation"]
    lines += [
        "",
        f"One query-key rank for every head: {top['min_qk_rank']} (head {top['head']}, "
        f"confidence: {top['confidence']}).",
    ]
    lowered = [r["head"] for r in heads if r["recommendation"].get("lowered_by")]
    if lowered:
        lines.append(
            _wrap(
                "",
                f"Heads {', '.join(map(str, lowered))}: confidence lowered; --head h says why "
                "and what to do.",
            )
        )
    lines += ["", "--head h prints one head's full report (every predictor and estimator, why)."]
    return "\n".join(lines)


def format_inspect(res: dict) -> str:
    lines = [
        f"{res['file']}: {res['kind']} file, {res['bytes'] / 1e6:.1f} MB, "
        f"{len(res['arrays'])} array{'s' if len(res['arrays']) != 1 else ''}",
        "",
    ]
    lines.append(
        f"  {'array':<12} {'shape':<18} {'dtype':<9} {'mean':>10} {'std':>10} "
        f"{'min':>10} {'max':>10} {'NaN':>5} {'Inf':>5}"
    )
    for a in res["arrays"]:
        shape = str(tuple(a["shape"]))
        head = f"  {a['name']:<12} {shape:<18} {str(a['dtype']):<9}"
        if "problem" in a:
            lines.append(f"{head} unreadable: {a['problem']}")
        elif "mean" in a:
            nums = " ".join(
                f"{v:>10.4g}" if v is not None else f"{'-':>10}"
                for v in (a["mean"], a["std"], a["min"], a["max"])
            )
            lines.append(f"{head} {nums} {a['nan']:>5} {a['inf']:>5}")
        elif "value" in a:
            lines.append(f"{head} {a['value']!r}")
        else:
            lines.append(f"{head} {a.get('note', '')}")
    if res.get("made_again"):
        lines += [
            "",
            f"{', '.join(res['made_again'])}: made again from the file's seeds",
            "  (a task file written with task.store_data: never holds them, not the data)",
        ]
    if res["meta"] is not None:
        lines += ["", "meta:"] + [
            "  " + ln for ln in json.dumps(res["meta"], indent=2).splitlines()
        ]
    return "\n".join(lines)
