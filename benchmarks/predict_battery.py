"""A battery of attention-shaped data with known query-key rank, and how `predict` answers it.

Every case is made here, from its own seed, by a generator whose true answer is known:

* ``own``: a softmax head of our own, logits x_iᵀ A x_j with A of rank r and logit standard
  deviation ``std`` (‖A‖_F = std for unit Gaussian tokens), value map V [d, d_v], optional
  causal mask (saved in the case, or withheld: the "unmasked causal" cases);
* ``mha``: torch's own ``nn.MultiheadAttention`` (H heads of dimension r = d / H: each head's
  query-key rank is r), its query weights scaled to a logit standard deviation ``std``, with
  ``attn_mask`` causal or not; ``head``: one head's output P_h X W_v,h (d_v = r), from the
  module's own attention weights; ``mix``: the module's output, the heads concatenated and
  out-projected (no single query-key rank describes it: the answer is right only as an
  upper bound on every head's rank with lowered confidence);
* ``heads``: Y [B, H, n, d_v], every head of an ``mha`` (the answer per head);
* layouts: ``[n, B, d]`` (torch's ``batch_first=False``) handed over as if it were [B, n, d].

The true answer of a case is the query-key rank of the head(s) that made it. A prediction is
*exact* when the recommended rank equals it, an *undercount* when it is smaller, and a
*confident undercount* when it is smaller and the confidence is one of the confident words
(``exact``, ``first-order``, ``exact at zero noise``). Target: no confident undercount.

Beside the rank, an ``own`` case has its **functional knee** (``knee_plain``,
``knee_inputs_metric``): the least rank of its kernel, truncated plainly or in the inputs'
metric, whose output error is ≤ 1 % of uniform attention's, read as a pretrained head's knee is
(docs/method.md §9e). A direction of A too weak in the data's scale to move the output counts
in the rank but not in the knee. ``word_holds_at_knee``: whether the word keeps its promise
about the inputs' metric knee (registration H3's rule for ``predict``'s words; None where the
word promises nothing).

    python benchmarks/predict_battery.py                 # the full battery -> results/predict_battery.csv
    python benchmarks/predict_battery.py --small         # a few cases (the test runs this)
    python benchmarks/predict_battery.py --table         # the table of docs/cli.md, from the CSV
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "predict_battery.csv"
#: the confidences that claim the answer holds (an undercount under one of them is the failure)
CONFIDENT = ("exact", "first-order", "exact at zero noise")
#: the seeds the confidence rule was designed on; the battery adds HELD_OUT seeds never used then
DESIGN_SEEDS = (0, 1)
HELD_OUT_SEEDS = (101, 202, 303)


@dataclass(frozen=True)
class Case:
    """One case: its generator (``kind``), sizes, true rank, sharpness, mask and layout."""

    kind: str  # own, mha_head, mha_mix, mha_heads
    B: int
    n: int
    d: int
    r: int  # the true query-key rank (of every head)
    std: float  # logit standard deviation
    causal: bool = False
    mask_given: bool = True  # a causal case: the mask handed to predict (else withheld)
    dv: int | None = None  # own: the value dimension (None: d)
    heads: int = 1
    layout: str = "BnD"  # or nBD: handed over transposed
    sigma: float = 0.0  # noise, relative to Y's rms
    seed: int = 0
    inputs: str = "gauss"  # own: gauss | aniso (condition 100) | layernorm (gain γ, bias b)
    qk_bias: bool = False  # own: query and key biases, logits (x_i + c_q)ᵀ A (x_j + c_k)
    positions: bool = False  # own: a position embedding added before the LayerNorm

    @property
    def name(self) -> str:
        parts = [self.kind, f"B{self.B}", f"n{self.n}", f"d{self.d}", f"r{self.r}"]
        parts += [f"std{self.std:g}"]
        if self.causal:
            parts.append("causal" if self.mask_given else "causal-nomask")
        if self.dv is not None and self.dv != self.d:
            parts.append(f"dv{self.dv}")
        if self.heads > 1:
            parts.append(f"H{self.heads}")
        if self.layout != "BnD":
            parts.append(self.layout)
        if self.sigma:
            parts.append(f"sigma{self.sigma:g}")
        if self.inputs != "gauss":
            parts.append(self.inputs)
        if self.qk_bias:
            parts.append("qkbias")
        if self.positions:
            parts.append("pos")
        return "_".join(parts) + f"_s{self.seed}"


def _kernel(rng: np.random.Generator, d: int, r: int, std: float) -> np.ndarray:
    """A rank-r kernel, singular values linspace(1, 0.5, r), scaled to ‖A‖_F = std."""
    U, _ = np.linalg.qr(rng.standard_normal((d, r)))
    W, _ = np.linalg.qr(rng.standard_normal((d, r)))
    A = U @ np.diag(np.linspace(1.0, 0.5, r)) @ W.T
    return A * std / np.linalg.norm(A)


def _softmax(logits: np.ndarray, causal: bool) -> np.ndarray:
    if causal:
        n = logits.shape[-1]
        logits = np.where(np.tril(np.ones((n, n), bool)), logits, -np.inf)
    P = np.exp(logits - logits.max(-1, keepdims=True))
    return P / P.sum(-1, keepdims=True)


def tokens(case: Case, rng: np.random.Generator) -> np.ndarray:
    """The head's input X: [B, n, d]: unit Gaussian tokens (``gauss``), Gaussian tokens mixed to
    a covariance of condition 100 (``aniso``), or such tokens (plus a position embedding shared
    by every sequence when ``positions``) through a LayerNorm with gain γ and bias b
    (``layernorm``: xᵀ(1/γ) is the same for every token, as in every transformer block)."""
    B, n, d = case.B, case.n, case.d
    if case.inputs == "gauss":
        return rng.standard_normal((B, n, d))
    G = rng.standard_normal((d, d)) @ np.diag(np.geomspace(1.0, 0.1, d)) / math.sqrt(d)
    z = rng.standard_normal((B, n, d)) @ G.T
    if case.positions:
        z = z + 0.7 * float(z.std()) * rng.standard_normal((n, d))
    if case.inputs == "aniso":
        return z / z.std()
    zc = z - z.mean(-1, keepdims=True)
    gamma, bias = np.exp(0.5 * rng.standard_normal(d)), 0.3 * rng.standard_normal(d)
    return gamma * zc / zc.std(-1, keepdims=True) + bias


def own_parts(case: Case) -> dict:
    """An ``own`` case's head in full: X, Y, the kernel A, the biases cq, ck, the value map V
    and the logits' factor, so that its functional knee can be read (:func:`functional_knees`)."""
    rng = np.random.default_rng(case.seed)
    A = _kernel(rng, case.d, case.r, case.std)
    dv = case.dv or case.d
    V = rng.standard_normal((case.d, dv)) / math.sqrt(case.d)
    X = tokens(case, rng)
    cq = ck = np.zeros(case.d)
    if case.qk_bias:
        cq, ck = rng.standard_normal(case.d), rng.standard_normal(case.d)
    logits = (X + cq) @ A @ (X + ck).transpose(0, 2, 1)
    factor = 1.0
    if case.inputs != "gauss" or case.qk_bias:
        # the logits' standard deviation over the pairs is `std` (for unit Gaussian tokens and
        # no bias ‖A‖_F = std already is)
        factor = case.std / float(np.std(logits[:256]))
        logits *= factor
    Y = _softmax(logits, case.causal) @ X @ V
    return {"X": X, "Y": Y, "A": A, "cq": cq, "ck": ck, "V": V, "factor": factor}


def own(case: Case) -> tuple[np.ndarray, np.ndarray]:
    parts = own_parts(case)
    return parts["X"], parts["Y"]


def functional_knees(case: Case, tolerance: float = 0.01) -> dict:
    """The knee of an ``own`` case's head as a pretrained head's is read (docs/method.md §9e):
    the least rank of its kernel, truncated plainly or in the inputs' metric, whose output error
    is ≤ ``tolerance`` of uniform attention's. A direction of A too weak in the data's scale to
    move the output counts in the rank but not in the knee. NaN for the other kinds."""
    if case.kind != "own":
        return {"knee_plain": math.nan, "knee_inputs_metric": math.nan}
    import torch

    from entropic_bound.pretrained.knee import METRICS, Head, error_curve, knee_of, relative_error

    p = own_parts(case)
    U, S, Wt = np.linalg.svd(p["A"])
    r = case.r
    wq, wk = (U[:, :r] * np.sqrt(S[:r])).T, (Wt[:r].T * np.sqrt(S[:r])).T
    t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float64)  # noqa: E731
    head = Head(
        t(p["X"]),
        t(p["Y"]),
        t(wq),
        t(wk),
        t(p["V"].T),
        t(wq @ p["cq"]),
        t(wk @ p["ck"]),
        None,
        p["factor"],
        causal=case.causal,
    )
    out = {}
    for metric in METRICS:
        ranks, err = error_curve(head, metric)
        out[f"knee_{metric}"] = knee_of(ranks, relative_error(err), tolerance)
    return out


def mha(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """torch's nn.MultiheadAttention with head dimension r = d / heads; Y: one head (mha_head,
    the head 0), every head [B, H, n, r] (mha_heads), or the module's output (mha_mix)."""
    torch.manual_seed(case.seed)
    d, H, n = case.d, case.heads, case.n
    m = torch.nn.MultiheadAttention(d, H, batch_first=True, dtype=torch.float64)
    X = torch.randn(case.B, n, d, dtype=torch.float64)
    Wq, Wk, Wv = m.in_proj_weight.detach().chunk(3)
    hd = d // H
    with torch.no_grad():  # each head's logits (x Wq_h)(x Wk_h)ᵀ/√hd to the wanted std
        q = (X[:256] @ Wq.T).unflatten(-1, (H, hd)).transpose(1, 2)
        k = (X[:256] @ Wk.T).unflatten(-1, (H, hd)).transpose(1, 2)
        std = (q @ k.transpose(-1, -2) / math.sqrt(hd)).std(dim=(0, 2, 3))
        scale = (case.std / std).repeat_interleave(hd)
        m.in_proj_weight[:d] *= scale[:, None]
        m.in_proj_bias[:d] *= scale
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64)
        out, P = m(
            X,
            X,
            X,
            attn_mask=mask if case.causal else None,
            need_weights=True,
            average_attn_weights=False,
        )
        v = (X @ Wv.T + m.in_proj_bias[2 * d :]).unflatten(-1, (H, hd)).transpose(1, 2)
        per_head = P @ v  # [B, H, n, hd]
    if case.kind == "mha_mix":
        Y = out
    elif case.kind == "mha_heads":
        Y = per_head
    else:
        Y = per_head[:, 0]
    return X.numpy(), Y.numpy()


def make(case: Case) -> tuple[np.ndarray, np.ndarray]:
    X, Y = own(case) if case.kind == "own" else mha(case)
    if case.sigma:
        rng = np.random.default_rng(case.seed + 7)
        Y = Y + case.sigma * float(np.sqrt(np.mean(Y**2))) * rng.standard_normal(Y.shape)
    if case.layout == "nBD":  # torch's batch_first=False, handed over as if it were [B, n, d]
        X = np.ascontiguousarray(X.swapaxes(0, 1))
        Y = np.ascontiguousarray(np.moveaxis(Y, 0, -2) if Y.ndim == 4 else Y.swapaxes(0, 1))
    return X, Y


def battery(seeds=DESIGN_SEEDS + HELD_OUT_SEEDS, small: bool = False) -> list[Case]:
    """Every case at every seed (``small``: a handful, for the test)."""
    out = []
    stds = (1, 2, 4, 8, 12, 16)
    for seed in seeds:
        base = []
        for std in stds:
            base.append(Case("own", 2048, 32, 16, 5, std))
            base.append(Case("own", 2048, 32, 16, 5, std, causal=True))
            base.append(Case("own", 2048, 32, 16, 5, std, causal=True, mask_given=False))
            base.append(Case("mha_head", 2048, 32, 20, 5, std, heads=4))
            base.append(Case("mha_head", 1024, 48, 24, 4, std, heads=6, causal=True))
        base += [
            Case("own", 2048, 32, 16, 3, 2, dv=8),
            Case("own", 2048, 32, 16, 3, 8, dv=8),
            Case("own", 256, 40, 16, 4, 8),  # B = 256 < n·d = 640: P_static cannot be fitted
            Case("own", 2048, 32, 16, 3, 1, sigma=0.05),
            Case("mha_mix", 2048, 32, 16, 4, 2, heads=4),
            Case("mha_mix", 2048, 32, 16, 4, 8, heads=4),
            Case("mha_mix", 2048, 32, 16, 4, 2, heads=4, causal=True),
            Case("mha_heads", 1024, 32, 16, 4, 2, heads=4),
            Case("mha_heads", 1024, 32, 16, 4, 8, heads=4),
            Case("own", 32, 256, 16, 5, 2, layout="nBD"),
            Case("mha_head", 32, 256, 20, 5, 4, heads=4, layout="nBD"),
        ]
        out += [replace(c, seed=seed) for c in base + real_head_shapes()]
    if small:
        # one case of each undercount that 98833ef (2026-12-06) lowers the confidence of, B <= 512
        out = [
            Case("own", 512, 32, 16, 5, 1),
            Case("own", 512, 32, 16, 5, 16),
            Case("own", 512, 32, 16, 5, 4, causal=True, mask_given=False),
            Case("mha_head", 512, 32, 20, 5, 12, heads=4),
            Case("mha_head", 512, 48, 24, 4, 2, heads=6, causal=True),
            Case("mha_mix", 512, 32, 16, 4, 2, heads=4),
            Case("own", 256, 40, 16, 4, 8),
            Case("own", 32, 256, 16, 5, 2, layout="nBD"),
        ]
        return [replace(c, seed=seed) for seed in seeds for c in out]
    return out


def real_head_shapes() -> list[Case]:
    """The inputs of heads inside a transformer: LayerNorm'd (with a position embedding),
    anisotropic, q/k biases; causal and bidirectional; d_v < d; wider heads (d = 64, d_v = 16)."""
    cases = []
    for std in (1, 2, 4, 8):
        for causal in (True, False):
            kw = dict(causal=causal, dv=8)
            cases += [
                Case("own", 1024, 32, 16, 3, std, inputs="layernorm", **kw),
                Case("own", 1024, 32, 16, 3, std, inputs="aniso", **kw),
                Case("own", 1024, 32, 16, 3, std, inputs="layernorm", qk_bias=True, **kw),
                Case("own", 1024, 32, 16, 3, std, inputs="layernorm", positions=True, **kw),
            ]
    for causal in (True, False):
        cases.append(Case("own", 512, 96, 64, 6, 2, causal=causal, dv=16, inputs="layernorm"))
    # a real width, bidirectional (d_model 384, d_head 32, n = 512 as a BERT encoder's window;
    # the causal fit's d² unknowns at d = 384 are left to `predict --causal` on real data)
    cases.append(Case("own", 128, 512, 384, 24, 2, dv=32, inputs="layernorm"))
    return cases


def predict_case(case: Case) -> list[dict]:
    """predict's answer(s) on one case: one row, or one per head."""
    from entropic_bound.predict import recommend_rank
    from entropic_bound.predict.words import word_holds

    X, Y = make(case)
    causal = case.causal and case.mask_given
    knees = functional_knees(case)
    rows = []
    for h in range(case.heads) if case.kind == "mha_heads" else (None,):
        t = time.perf_counter()
        try:
            rec = recommend_rank(X, Y, causal=causal, head=h)
        except ValueError as exc:  # refused (InputError is one): no answer, so never wrong
            msg = str(exc).splitlines()[0]
            rec = type("Refused", (), {"rank": -1, "confidence": f"refused: {msg}"})()
            rec.predictor = rec.estimator = None
        rows.append(
            {
                "case": case.name,
                "kind": case.kind,
                "seed": case.seed,
                "held_out": case.seed not in DESIGN_SEEDS,
                "head": h,
                "std": case.std,
                "causal": case.causal,
                "mask_given": case.mask_given,
                "layout": case.layout,
                "true_rank": case.r,
                "rank": rec.rank,
                "confidence": rec.confidence,
                "predictor": rec.predictor,
                "estimator": rec.estimator,
                "exact": rec.rank == case.r,
                "undercount": 0 <= rec.rank < case.r,
                "confident_undercount": rec.rank < case.r and rec.confidence in CONFIDENT,
                "confident_wrong": rec.rank != case.r and rec.confidence in CONFIDENT,
                **knees,
                "word_holds_at_knee": _holds_at_knee(rec, knees["knee_inputs_metric"], word_holds),
                "seconds": round(time.perf_counter() - t, 3),
            }
        )
    return rows


def _holds_at_knee(rec, knee: float, word_holds) -> object:
    """Whether the word keeps its promise about the functional knee (in the inputs' metric; H3's
    P1 rule, ``predict.words.word_holds``): True, False, or None (no promise, or no knee)."""
    if not np.isfinite(knee) or rec.rank < 0:
        return None
    est = (getattr(rec, "report", {}) or {}).get("predictors", {}).get("P_attn", {})
    floor = (est.get("estimates") or {}).get("floor", math.nan)
    return word_holds(rec.confidence, rec.rank, floor, knee, 1)


def summary(df) -> dict:
    return {
        "cases": len(df),
        "exact": float(df["exact"].mean()),
        "undercount": float(df["undercount"].mean()),
        "confident_undercount": int(df["confident_undercount"].sum()),
        "confident_wrong": int(df["confident_wrong"].sum()),
    }


def group(row) -> str:
    """The family of a case, for the table of docs/cli.md."""
    if row["layout"] != "BnD":
        return "`[n, B, d]` layout (own, torch head)"
    causal = "" if not row["causal"] else (", causal" if row["mask_given"] else ", causal, no mask")
    name = row["case"]
    if row["kind"] == "own" and any(t in name for t in ("_layernorm", "_aniso")):
        shape = "LayerNorm'd" if "_layernorm" in name else "anisotropic"
        shape += " + q/k bias" if "_qkbias" in name else ""
        shape += " + positions" if "_pos" in name else ""
        shape += ", d = 64" if "_d64_" in name else ", d = 384" if "_d384_" in name else ""
        return f"own softmax head, {shape} inputs{causal or ', bidirectional'}"
    if row["kind"] == "own":
        extra = (
            ", d_v = 8"
            if "_dv8" in name
            else ", B = 256 < n·d"
            if "_B256_" in name
            else ", noise 0.05"
            if "_sigma" in name
            else ""
        )
        return f"own softmax head{causal}{extra}"
    return {
        "mha_head": "torch MHA, one head",
        "mha_heads": "torch MHA, every head `[B, H, n, d_v]`",
        "mha_mix": "torch MHA, out-projected mix of 4 heads",
    }[row["kind"]] + causal


def table(df) -> str:
    """The markdown table of docs/cli.md: per family, and in all (design and held-out seeds)."""
    df = df.assign(group=df.apply(group, axis=1))
    lines = [
        "| data | cases | exact | undercount | confident | confident undercount |",
        "|---|---|---|---|---|---|",
    ]

    def row(name, part):
        confident = part["confidence"].isin(CONFIDENT).mean()
        return (
            f"| {name} | {len(part)} | {part['exact'].mean():.0%} | "
            f"{part['undercount'].mean():.0%} | {confident:.0%} | "
            f"{int(part['confident_undercount'].sum())} |"
        )

    for name, part in df.groupby("group", sort=False):
        lines.append(row(name, part))
    lines.append(row("**design seeds 0, 1**", df[~df["held_out"]]))
    lines.append(row("**held-out seeds 101, 202, 303**", df[df["held_out"]]))
    lines.append(row("**all**", df))
    return "\n".join(lines)


def main(argv=None) -> int:
    import pandas as pd

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a handful of cases (the test)")
    ap.add_argument("--out", default=None, help=f"CSV to write (default {OUT}; none with --small)")
    ap.add_argument("--seeds", type=int, nargs="*", default=None)
    ap.add_argument("--table", action="store_true", help="print docs/cli.md's table of the CSV")
    ap.add_argument(
        "--real-shapes", action="store_true", help="only the real-head shapes (inputs, biases)"
    )
    args = ap.parse_args(argv)
    if args.table:
        print(table(pd.read_csv(args.out or OUT)))
        return 0
    torch.set_num_threads(1)
    seeds = tuple(args.seeds) if args.seeds else DESIGN_SEEDS + HELD_OUT_SEEDS
    rows = []
    cases = battery(seeds, small=args.small)
    if args.real_shapes:
        names = {c.name for s in seeds for c in (replace(r, seed=s) for r in real_head_shapes())}
        cases = [c for c in cases if c.name in names]
    for case in cases:
        rows += predict_case(case)
        r = rows[-1]
        print(
            f"{r['case']:<48} true {r['true_rank']:>2} rank {r['rank']:>2} {r['confidence']}",
            flush=True,
        )
    df = pd.DataFrame(rows)
    out = args.out or (None if args.small else OUT)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, index=False)
    print(summary(df))
    for held in (False, True):
        part = df[df["held_out"] == held]
        if len(part):
            print("held-out seeds" if held else "design seeds", summary(part))
    return 1 if df["confident_undercount"].any() else 0


if __name__ == "__main__":
    sys.exit(main())
