"""The registered heads study end to end at a tiny size (config/heads_study_tiny.yaml):
`snakemake heads_study` in a working directory outside the clone; and its config's checks."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from entropic_bound.config.heads_study import load_heads_study, study_asked
from entropic_bound.config.load import ConfigError

REPO = Path(__file__).resolve().parents[2]
SMK = str(Path(sys.executable).with_name("snakemake"))
WORK = Path(tempfile.gettempdir()) / f"entropic-bound-test-heads-study-{os.getuid()}"
TINY = REPO / "config" / "heads_study_tiny.yaml"
MAN = Path("/usr/share/man/man1")


def test_the_shipped_study_is_six_models_in_three_cells_at_unused_seeds():
    s = load_heads_study(REPO / "config" / "heads_study.yaml", REPO)
    assert len(s["models"]) == 6 and set(s["cell_of"].values()) == {
        "stdlib_d16",
        "stdlib_d32",
        "man_d16",
    }
    assert 0 not in s["seeds"] and len(s["seeds"]) >= 2
    d32 = s["models"]["stdlib_d32_s61206"]["model"]
    d16 = s["models"]["stdlib_d16_s61206"]["model"]
    assert d32["heads"] * d32["d_head"] == d16["heads"] * d16["d_head"]  # the same d_model
    assert s["models"]["man_d16_s61207"]["corpus"]["source"] == "man"
    assert s["registration"]["registered"] == "2026-12-06"


def edited(tmp_path, **edits) -> Path:
    doc = yaml.safe_load(TINY.read_text())
    for dotted, value in edits.items():
        *path, key = dotted.split(".")
        node = doc
        for p in path:
            node = node[p]
        node[key] = value
    out = tmp_path / "s.yaml"
    out.write_text(yaml.safe_dump(doc))
    return out


@pytest.mark.parametrize(
    "edits, words",
    [
        ({"common.measure.knee_sequences": 256}, ["measure.knee_sequences", "registration fixed"]),
        ({"common.measure.taus": [0.95]}, ["qk_energy_0.99", "measure.taus"]),
        ({"cells.stdlib": {"model": {"d_head": 0}}}, ["cell 'stdlib'", "model.d_head"]),
        ({"seeds": []}, ["seeds"]),
        ({"run_name": "paper"}, ["run_name"]),
    ],
)
def test_a_bad_study_is_one_line_naming_the_key(tmp_path, edits, words):
    with pytest.raises(ConfigError) as err:
        load_heads_study(edited(tmp_path, **edits), REPO)
    assert "\n" not in str(err.value) and all(w in str(err.value) for w in words), err.value


@pytest.mark.parametrize(
    "argv, asked",
    [
        (["snakemake", "heads_study"], True),
        (["snakemake", "heads_study_predict"], True),
        (["snakemake", "results/heads_study/verdicts.csv"], True),
        (["snakemake", "heads"], False),
        (["snakemake", "reproduce-all"], False),
    ],
)
def test_which_command_lines_ask_for_the_study(argv, asked):
    assert study_asked(argv, {}) is asked


PREDICT_REGISTRATION = """name: H9
registered: "2026-12-08"
study: config/heads_study_tiny.yaml
truth: knee_inputs_metric
min_eligible_heads: 64
alpha: 0.05
tests:
  W1: {max_broken: 0}
  W2: {constant: model_median}
  W3: {min_promised_share: 0.5}
"""


@pytest.mark.extras
@pytest.mark.skipif(not MAN.is_dir(), reason="no manual pages installed (/usr/share/man/man1)")
def test_the_tiny_study_end_to_end():
    subprocess.run(["rm", "-rf", str(WORK)], check=True)
    WORK.mkdir()
    cmd = [SMK, "heads_study", "heads_study_predict", "-s", str(REPO / "Snakefile")]
    cmd += ["-d", str(WORK), "--cores", "2"]
    r = subprocess.run(
        [*cmd, "--config", f"heads_study_config={TINY}"],
        cwd=WORK,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    out = WORK / "results" / "heads_study_tiny"
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert list(verdicts.columns[:4]) == ["claim", "kind", "column", "check"]
    assert set(verdicts["claim"]) == {"eligibility", "K1", "K2", "O1"}
    assert (verdicts["verdict"] == "inconclusive").all()  # 8 heads, not 64
    heads = pd.read_csv(out / "tables" / "heads.csv")
    assert len(heads) == 8 and set(heads["source"]) == {"stdlib", "man"}
    assert {"knee_resolved", "eligible", "knee_boot_lo"} <= set(heads.columns)
    assert "predict_rank" not in heads.columns  # predict is its own target (its cost)
    predict = pd.read_csv(out / "tables" / "predict.csv")
    assert len(predict) == 8 and predict["predict_rank"].notna().all()
    assert "predict" in set(pd.read_csv(out / "tables" / "predict_estimators.csv")["spectrum"])
    promised = pd.read_csv(out / "tables" / "promises.csv")
    assert len(promised) == 8 and promised["split_half"].notna().all()
    assert pd.read_csv(out / "predict_verdicts.csv").empty  # no registration named: no verdict
    reg = WORK / "predict_claims.yaml"
    reg.write_text(PREDICT_REGISTRATION)
    r = subprocess.run(
        [
            *cmd,
            "--config",
            f"heads_study_config={TINY}",
            f"predict_registration={reg}",
        ],
        cwd=WORK,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    verdicts = pd.read_csv(out / "predict_verdicts.csv")
    assert list(verdicts["test"]) == ["W1", "W2", "W3"]
    assert (verdicts["verdict"] == "inconclusive").all()  # 8 heads, not 64
    anchor = pd.read_csv(out / "tables" / "anchor.csv")
    assert list(anchor["cell"]) == ["stdlib", "man"]
    cost = pd.read_csv(out / "tables" / "cost.csv")
    assert len(cost) == 2 * 2 and cost["cpu_s"].notna().all()  # train, measure per model
    assert "Real heads, decided" in r.stdout and (out / "verdicts.csv.prov.json").exists()


def test_the_anchor_table_by_hand():
    from entropic_bound.heads.study import anchor_table

    heads = pd.DataFrame(
        {
            "cell": ["a", "a", "b"],
            "d_head": [16, 16, 32],
            "knee": [4.0, 6.0, 9.0],
            "qk_energy_0.9": [3.0, 5.0, 12.0],
            "logit_energy_0.9": [4.0, 4.0, 6.0],
        }
    )
    t = anchor_table(heads).set_index("cell")
    assert t.loc["a", "kernel_above_field"] == 0.5 and t.loc["b", "kernel_above_field"] == 1.0
    assert t.loc["a", "qk_range"] == "3–5" and t.loc["b", "d_head"] == 32


def test_the_cost_table_reads_snakemake_benchmarks(tmp_path):
    from entropic_bound.heads.study import cost_table

    bench = tmp_path / "b.tsv"
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "12.5\t0:00:12\t450.1\t900\t400\t410\t0\t1\t95\t11.75\n")  # fmt: skip
    t = cost_table({"m": {"heads_train": str(bench), "heads_measure": str(tmp_path / "no.tsv")}})
    assert t.loc[0, "cpu_s"] == 11.75 and t.loc[0, "wall_s"] == 12.5
    assert t.loc[0, "max_rss_mb"] == 450.1 and t.loc[1, ["cpu_s"]].isna().all()


def test_predicts_heads_are_all_none_or_named():
    from entropic_bound.heads.predicted import selected_heads

    assert selected_heads({"heads": "all"}, 2, 2) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert selected_heads({"heads": "none"}, 2, 2) == []
    assert selected_heads({"heads": [[1, 0], [0, 1]]}, 2, 2) == [(0, 1), (1, 0)]
    with pytest.raises(ValueError, match="lacks"):
        selected_heads({"heads": [[2, 0]]}, 2, 2)


def test_heads_predict_sets_every_models_predict_heads():
    """`--config heads_predict=all` runs predict on a decided study's heads without editing
    its committed config; anything but all or none is refused in one line."""
    s = load_heads_study(REPO / "config" / "heads_study.yaml", REPO, predict_heads="all")
    assert {cfg["predict"]["heads"] for cfg in s["models"].values()} == {"all"}
    plain = load_heads_study(REPO / "config" / "heads_study.yaml", REPO)
    assert {cfg["predict"]["heads"] for cfg in plain["models"].values()} == {"none"}
    with pytest.raises(ConfigError, match="heads_predict='some': give all or none"):
        load_heads_study(REPO / "config" / "heads_study.yaml", REPO, predict_heads="some")
