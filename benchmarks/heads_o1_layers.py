"""O1's permutation test with the knees permuted within each model × layer cell (exploratory,
beside registrations H1 and H2, whose verdicts stay as run).

Registration H1/H2's O1 permutes the knees within each model. Knees and P_attn's rank are both
U-shaped across layers and the heads of one layer share their inputs X, so a column can "order
the heads of a model" through the layers alone. Permuting within each layer of each model keeps
that shared part in the null: what survives orders heads beyond their layer. Read from the
committed study tables (benchmarks/registered/heads_H*_study/tables/heads.csv), with the
registered eligibility and per-model floor.

    python benchmarks/heads_o1_layers.py          # prints the markdown table
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from entropic_bound.heads.stats import stratified_spearman  # noqa: E402

STUDIES = {
    "H1": ("heads_H1_study", "config/heads_claims.yaml"),
    "H2": ("heads_H2_study", "config/heads_claims_h2.yaml"),
}
COLUMNS = ("pattn_energy_0.9", "qk_energy_0.99", "logit_energy_0.9")


def rows():
    for name, (folder, registration) in STUDIES.items():
        heads = pd.read_csv(REPO / "benchmarks/registered" / folder / "tables/heads.csv")
        spec = yaml.safe_load((REPO / registration).read_text())["orders_the_heads"]["O1"]
        sub = heads[heads["eligible"].astype(bool)]
        sub = sub[sub.groupby("model")["knee"].transform("size") >= spec["min_heads_per_model"]]
        cell = sub["model"] + "/" + sub["layer"].astype(str)
        for column in COLUMNS:
            args = (sub[column].fillna(-float("inf")), sub["knee"], sub["model"])
            kw = dict(permutations=spec["permutations"], min_size=spec["min_heads_per_model"])
            rho, p_model, used = stratified_spearman(*args, **kw)
            _, p_layer, _ = stratified_spearman(*args, **kw, within=cell)
            yield name, column, len(sub), used, rho, p_model, p_layer


def main() -> int:
    print(
        "| study | column | heads | models | mean within-model ρ | p (within model) | p (within model × layer) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, column, heads, used, rho, p_model, p_layer in rows():
        print(
            f"| {name} | {column} | {heads} | {used} | {rho:.3f} | {p_model:.4f} | {p_layer:.4f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
