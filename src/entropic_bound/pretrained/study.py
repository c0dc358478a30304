"""The pretrained heads' study: each measured model named by registration H3 (by the SHA-256 of
its weights), the tables pooled, and what a reader sees per model: the knees' distribution, the
estimators beside them, and the query-key parameters the knees would remove.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from entropic_bound.config.load import ConfigError, read_config

#: what registration H3 must hold for the evaluator to read it
H3_KEYS = ("name", "registered", "models", "protocol", "eligibility", "tests", "alpha")
H3_KEYS += ("min_eligible_heads",)


def load_h3(path) -> dict:
    """Registration H3 (config/heads_claims_h3.yaml), read strictly, its parts checked."""
    reg = read_config(path)
    missing = [k for k in H3_KEYS if k not in reg]
    if missing:
        raise ConfigError(f"registration {path} lacks {', '.join(missing)}")
    for key in ("A64", "A32", "K1", "C1", "M1", "P1", "O1"):
        if key not in reg["tests"]:
            raise ConfigError(f"registration {path} has no test {key}")
    return reg


def registered_names(models: dict, reg: dict) -> dict[str, str]:
    """Config model name -> the registration's name of the same weights (by SHA-256); a model
    the registration does not name is left out (measured, exploratory)."""
    by_sha = {m["sha256"]: name for name, m in reg["models"].items()}
    return {name: by_sha[m["sha256"]] for name, m in models.items() if m["sha256"] in by_sha}


def pooled(tables: dict[str, Path], names: dict[str, str]) -> pd.DataFrame:
    """Every model's head table: ``model`` the registration's name of it (the config's where
    the registration does not name it), ``config_model`` the config's, ``registered`` whether
    the registration names it (the others are measured, exploratory, and carry no verdict)."""
    parts = []
    for config_name, path in tables.items():
        t = pd.read_csv(path, keep_default_na=False, na_values=[""])
        t.insert(0, "config_model", config_name)
        t["model"] = names.get(config_name, config_name)
        t["registered"] = config_name in names
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def check_tolerance(heads: pd.DataFrame, reg: dict) -> None:
    """The knees must have been read at the registration's tolerance."""
    want = float(reg["protocol"]["knee_tolerance"])
    if not np.allclose(heads["tolerance"], want, rtol=0, atol=0):
        raise ValueError(f"knees measured at {sorted(set(heads['tolerance']))}, registered {want}")


def qk_removed(heads: pd.DataFrame, knee: str = "knee_plain") -> pd.DataFrame:
    """Per model, the query-key parameters the knees would remove: a bilinear head of rank r
    keeps 2·r·d_model of its 2·d_head·d_model (W_Q and W_K as rank-r factors); a rotary head
    keeps r/2 of its query's planes, r·d_model of the query's d_head·d_model (the key is shared
    within its group and stays whole). Heads without a knee keep everything."""
    rows = []
    for model, g in heads.groupby("model", sort=False):
        r = g[knee].fillna(g["d_head"])
        rotary = g["rotary"].astype(bool)
        total = np.where(rotary, 1, 2) * g["d_head"] * g["d_model"]
        kept = np.where(rotary, 1, 2) * r * g["d_model"]
        rows.append(
            {
                "model": model,
                "heads": len(g),
                "qk_params": int(total.sum()),
                "removed": int((total - kept).sum()),
                "removed_share": float((total - kept).sum() / total.sum()),
            }
        )
    return pd.DataFrame(rows)


def knee_summary(heads: pd.DataFrame, keep: pd.Series) -> pd.DataFrame:
    """Per model and knee: the quartiles and range over every head, and over the eligible."""
    rows = []
    for model, g in heads.groupby("model", sort=False):
        for knee in ("knee_plain", "knee_inputs_metric"):
            for label, part in (("all", g), ("eligible", g[keep[g.index]])):
                k = part[knee].dropna()
                q = np.percentile(k, [0, 25, 50, 75, 100]) if len(k) else [np.nan] * 5
                rows.append(
                    {"model": model, "knee": knee, "heads": label, "count": len(k)}
                    | dict(zip(("min", "q25", "median", "q75", "max"), map(float, q), strict=True))
                    | {"d_head": int(g["d_head"].iloc[0])}
                )
    return pd.DataFrame(rows)


def words_table(heads: pd.DataFrame) -> pd.DataFrame:
    """Per model, how many heads got each of ``predict``'s words."""
    return heads.groupby(["model", "predict_word"]).size().rename("heads").reset_index()
