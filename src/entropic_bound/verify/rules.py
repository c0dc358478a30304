"""How ``entropic-bound verify`` judges decisions made by a threshold (a rank, a rounded
estimate, a ``best_route``) and the rates and means built from them (docs/reproducibility.md,
"Decisions made by a threshold").

A value beyond its column's tolerance that is such a decision is accepted as a flip *within
rounding* when every run that records the deciding quantity has it within the quantity's
measured cross-CPU spread of the threshold (:mod:`.decisions` defines the margins). An aggregate
(T3's data-only rows, T4, X3's ladder rows) is judged through its decisions: it must be what its
decisions give on each side that records them, and the cases whose decision differs must be
accepted flips; where one side records only the aggregate, the difference must be one that the
other side's cases within rounding can make (each flip moves a count by one and |r̂ − r*| by one).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from entropic_bound.core.estimators import estimate, round_rank
from entropic_bound.verify.decisions import (
    is_spectral,
    rounding_margin,
    route_margin,
    spectral_margin,
)

SPECTRA_FILE = "predict_spectra.parquet"  # a reference's or a recorded run's copy
DATA_ONLY, FRONTIER, BOUNDS = "data_only_predictions.csv", "frontier.csv", "bounds.csv"
T3, T4, X3 = "T3_estimators.csv", "T4_frontier.csv", "X3_floor_aware.csv"
T4_KEYS = ["class", "value_map", "predictor", "estimator", "n", "d", "sigma", "beta"]
AGGREGATE_COLUMNS = ("exact_rate", "mean_abs_error")
#: relative slack of "the aggregate is what its decisions give" (a mean recomputed in float64)
REPRODUCED = 1e-9


def read_spectra(folder: Path) -> dict | None:
    """(task_id, σ, predictor) -> spectrum of a run folder (``predict/spectra.parquet``), a
    tables folder's run, or a reference / recorded run (``predict_spectra.parquet``)."""
    for path in (
        folder / "predict" / "spectra.parquet",
        folder.parent / "predict" / "spectra.parquet",
        folder / SPECTRA_FILE,
    ):
        if path.is_file():
            sp = pd.read_parquet(path)
            return {
                (t, float(s), p): np.asarray(x, dtype=np.float64)
                for t, s, p, x in zip(sp["task_id"], sp["sigma"], sp["predictor"], sp["spectrum"])
            }
    return None


def _same(a, b) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    try:
        return (a == b) | (pd.isna(a) & pd.isna(b))
    except TypeError:
        return a == b


class Decisions:
    """The decision rules of one verify call: the two runs' tables and spectra, the accepted
    flips found so far (source tables are judged before the aggregates built from them)."""

    SOURCES = (DATA_ONLY, FRONTIER, BOUNDS)

    def __init__(self, frames: dict, tols, run_dir: Path, ref_dir: Path):
        self.frames, self.tols = frames, tols
        self.spectra = {"run": read_spectra(run_dir), "ref": read_spectra(ref_dir)}
        self.accepted: dict[str, set[int]] = {}
        self.rejected: dict[str, set[int]] = {}
        self.count = 0

    # ------------------------------------------------------------------ margins
    def spectral_spread(self, predictor: str) -> float | None:
        return self.tols.spectral_spread(predictor)

    def margin(self, side: str, row, estimator: str) -> float | None:
        spectra = self.spectra[side]
        if spectra is None or "task_id" not in row:
            return None
        s = spectra.get((row["task_id"], float(row["sigma"]), row["predictor"]))
        return None if s is None else spectral_margin(s, estimator)

    def rhat_rtol(self, table: str, predictor: str) -> float:
        entries = self.tols.tables.get(table, {})
        tol = entries.get(f"r_hat[predictor={predictor}]") or self.tols.column(table, "r_hat", True)
        return tol.rtol

    def _flip_ok(self, table: str, ref_row, run_row, res) -> bool:
        """A rank of one spectrum that differs by one: within rounding when each side's margin,
        where recorded, is within the predictor's spread (at least one side recorded)."""
        est, pred = ref_row["estimator"], ref_row["predictor"]
        spread = self.spectral_spread(pred)
        if spread is None or abs(float(run_row["r_hat"]) - float(ref_row["r_hat"])) != 1:
            return False
        margins = {
            side: self.margin(side, r, est) for side, r in (("run", run_row), ("ref", ref_row))
        }
        known = {k: v for k, v in margins.items() if v is not None}
        if not known or any(v > spread for v in known.values()):
            return False
        shown = ", ".join(f"{k} {v:.2g}" for k, v in known.items())
        unknown = [k for k, v in margins.items() if v is None]
        res.within_rounding.append(
            f"{ref_row.get('task_id', '')} σ={ref_row['sigma']:g} {pred} {est}: "
            f"{ref_row['r_hat']:g} -> {run_row['r_hat']:g}, margin {shown} "
            f"(spread {spread:.2g}{'; ' + ' and '.join(unknown) + ' records no spectra' if unknown else ''})"
        )
        return True

    def _route_ok(self, ref_row, run_row, res) -> bool:
        tol = self.tols.column(BOUNDS, "R_bound", True)
        routes = [c for c in ref_row.index if c.startswith("R_") and c != "R_best"]
        m = {
            side: route_margin(row[routes].to_numpy(dtype=float))
            for side, row in (("run", run_row), ("ref", ref_row))
        }
        if any(v > tol.rtol for v in m.values()):
            return False
        res.within_rounding.append(
            f"{ref_row['task_id']} best_route: {ref_row['best_route']} -> {run_row['best_route']}, "
            f"margin run {m['run']:.2g}, ref {m['ref']:.2g} (spread {tol.rtol:.2g})"
        )
        return True

    # ------------------------------------------------------------------ the hook
    def accept(self, table, col, ref: pd.DataFrame, run: pd.DataFrame, ratio, res):
        """``ratio`` with the rows that are accepted decisions set to 0."""
        ratio = ratio.copy()
        bad = np.flatnonzero(ratio > 1)
        before = len(res.within_rounding)
        if table in (DATA_ONLY, FRONTIER) and col == "r_hat":
            for i in bad:
                if is_spectral(ref.loc[i, "estimator"]) and self._flip_ok(
                    table, ref.loc[i], run.loc[i], res
                ):
                    ratio[i] = 0.0
                    self.accepted.setdefault(table, set()).add(int(i))
                else:
                    self.rejected.setdefault(table, set()).add(int(i))
        elif table == BOUNDS and col == "best_route":
            for i in bad:
                if self._route_ok(ref.loc[i], run.loc[i], res):
                    ratio[i] = 0.0
        elif col in AGGREGATE_COLUMNS and table in (T3, T4, X3):
            for i in bad:
                if self._aggregate_ok(table, ref.loc[i], run.loc[i], res):
                    ratio[i] = 0.0
        self.count += len(res.within_rounding) - before
        return ratio

    # ------------------------------------------------------------------ aggregates
    def _cells(self, table, ref_row):
        """(run cases, reference cases or None, source table or None) of an aggregate row:
        DataFrames with r_hat, r_star, predictor, estimator (and task_id, sigma)."""
        if table == T4 and FRONTIER in self.frames:
            return self._select(FRONTIER, {k: ref_row[k] for k in T4_KEYS})
        if (
            table == T3
            and DATA_ONLY in self.frames
            and str(ref_row["kernels"]).startswith("data-only P_attn")
        ):
            sigma = float(str(ref_row["kernels"]).split("σ = ")[1].rstrip(")"))
            where = {
                "class": ref_row["rung"],
                "predictor": "P_attn",
                "estimator": ref_row["estimator"],
            }
            run, ref, src = self._select(DATA_ONLY, where)
            keep = lambda df: df[np.isclose(df["sigma"].astype(float), sigma)]  # noqa: E731
            return keep(run), keep(ref), src
        if table == X3 and str(ref_row["spectra"]).startswith("ladder"):
            return (
                self._ladder("run", ref_row),
                self._ladder("ref", ref_row),
                None,
            )
        return None, None, None

    def _select(self, source, where):
        ref, run = self.frames[source]
        mask = np.ones(len(ref), dtype=bool)
        for k, v in where.items():
            mask &= _same(ref[k].to_numpy(), np.full(len(ref), v, dtype=object))
        return run[mask], ref[mask], source

    def _ladder(self, side, row) -> pd.DataFrame | None:
        spectra = self.spectra[side]
        if spectra is None:
            return None
        cases = [
            {
                "task_id": t,
                "sigma": s,
                "predictor": p,
                "estimator": row["estimator"],
                "r_star": int(t.split("_r")[1].split("_")[0]),
                "r_hat": float(estimate(x[None], row["estimator"])[0]),
            }
            for (t, s, p), x in spectra.items()
            if p == row["predictor"]
            and t.split("_r")[0] == row["class"]
            and np.isclose(s, float(row["sigma"]))
        ]
        return pd.DataFrame(cases) if cases else None

    def _aggregate_ok(self, table, ref_row, run_row, res) -> bool:
        run_c, ref_c, source = self._cells(table, ref_row)
        side = "run"
        if run_c is None and ref_c is not None:  # only the reference records the cases
            run_c, ref_c, run_row, ref_row, side = ref_c, None, ref_row, run_row, "ref"
        if run_c is None or len(run_c) == 0:
            return False
        n = int(ref_row.get("n_cases", ref_row.get("cases", ref_row.get("n"))))

        def reproduces(cases, row) -> bool:
            if len(cases) != n:
                return False
            r_hat, r_star = cases["r_hat"].to_numpy(float), cases["r_star"].to_numpy(float)
            rate = np.mean(round_rank(r_hat) == r_star)
            mae = np.mean(np.abs(r_hat - r_star))
            return bool(
                np.isclose(rate, row["exact_rate"], rtol=REPRODUCED, atol=0)
                and np.isclose(mae, row["mean_abs_error"], rtol=REPRODUCED, atol=0)
            )

        if not reproduces(run_c, run_row):
            return False
        if source is not None and self.rejected.get(source, set()) & set(ref_c.index):
            return False
        if ref_c is not None:
            if not reproduces(ref_c, ref_row):
                return False
            changed = round_rank(run_c["r_hat"].to_numpy(float)) != round_rank(
                ref_c["r_hat"].to_numpy(float)
            )
            for (i, a), (_, b) in zip(run_c[changed].iterrows(), ref_c[changed].iterrows()):
                if is_spectral(b["estimator"]):
                    ok = (source is not None and i in self.accepted.get(source, set())) or (
                        source is None and self._flip_ok(table, b, a, res)
                    )
                else:
                    rtol = self.rhat_rtol(source or DATA_ONLY, b["predictor"])
                    ok = max(rounding_margin([a["r_hat"], b["r_hat"]])) <= rtol
                if not ok:
                    return False
            if not changed.any():
                return True  # its floats were judged in the source table; nothing flipped
            what = f"{int(changed.sum())} case(s) decided the other way, each within rounding"
        else:  # the reference records the aggregate only: what the run's near cases can make
            spread = self.spectral_spread(run_c["predictor"].iloc[0])
            if spread is None:
                return False
            near = sum(self.margin(side, r, r["estimator"]) <= spread for _, r in run_c.iterrows())
            d_exact = abs(run_row["exact_rate"] - ref_row["exact_rate"]) * n
            d_err = abs(run_row["mean_abs_error"] - ref_row["mean_abs_error"]) * n
            if max(d_exact, d_err) > near + 1e-6:
                return False
            what = (
                f"Δcount {d_exact:.3g}, Δ|err| sum {d_err:.3g}, within the {side}'s {near} "
                f"case(s) within rounding (the {'reference' if side == 'run' else 'run'} "
                "records no spectra)"
            )
        row = ref_row if side == "run" else run_row
        keys = ", ".join(str(row[k]) for k in row.index[:4])
        res.within_rounding.append(f"row {row.name} ({keys}) through its decisions: {what}")
        return True
