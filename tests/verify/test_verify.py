"""`entropic-bound verify`: a run against a reference within per-column tolerances.

Exit 0 when every reference table agrees, 1 when one does not (a value beyond its tolerance, a
table or column missing, a row count changed), 2 and one line when an input cannot be read.
"""

from __future__ import annotations

import gzip
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.cli.main import main
from entropic_bound.verify import (
    Tolerance,
    compare_frames,
    default_reference,
    load_tolerances,
    parse_tolerances,
)
from entropic_bound.verify.compare import OUT, float_ratios

TOLERANCES = """\
safety_factor: 10
float_default: {rtol: 1.0e-6, atol: 0.0}
tables:
  t.csv:
    risk: {rtol: 1.0e-3, atol: 1.0e-9}
"""

T = pd.DataFrame(
    {
        "rung": ["L0", "L1", "L2"],
        "r_hat": [1, 2, 4],
        "risk": [0.5, 2.0e-3, 0.0],
        "sigma": [0.1, 0.2, float("nan")],
    }
)


def _reference(folder: Path, tables: dict[str, pd.DataFrame]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        with gzip.open(folder / f"{name}.gz", "wt") as fh:
            df.to_csv(fh, index=False)
    return folder


def _run(folder: Path, tables: dict[str, pd.DataFrame]) -> Path:
    (folder / "tables").mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_csv(folder / "tables" / name, index=False)
    return folder


@pytest.fixture
def setup(tmp_path):
    ref = _reference(tmp_path / "ref", {"t.csv": T})
    tol = tmp_path / "tol.yaml"
    tol.write_text(TOLERANCES)
    return tmp_path, ref, tol


def verify(capsys, run, ref, tol, *extra):
    rc = main(["verify", str(run), "--reference", str(ref), "--tolerances", str(tol), *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line(rc, out, err, says):
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("entropic-bound: error: ") and "; " in err
    assert says in err and "Traceback" not in err


# ------------------------------------------------------------------------------- by hand


def test_ratios_by_hand():
    """|v - r| / (atol + rtol·|r|): 0.1 of 1.0 at rtol 0.1 is exactly the tolerance (1); NaN
    equals NaN; NaN against a number and any change where nothing is allowed are infinite."""
    tol = Tolerance(rtol=0.1, atol=0.0)
    ref = np.array([1.0, 0.0, np.nan, 2.0, np.inf, 0.0])
    run = np.array([1.05, 0.0, np.nan, np.nan, np.inf, 1e-300])
    np.testing.assert_allclose(float_ratios(ref, run, tol), [0.5, 0, 0, np.inf, 0, np.inf])
    assert float_ratios(np.array([0.0]), np.array([2e-9]), Tolerance(0, 1e-9))[0] == 2.0


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20),
    st.floats(0, 0.99),
)
def test_a_perturbation_within_the_tolerance_is_within_it(values, share):
    tol = Tolerance(rtol=1e-3, atol=1e-9)
    ref = np.array(values)
    run = ref + share * (tol.atol + tol.rtol * np.abs(ref))
    assert (float_ratios(ref, ref, tol) == 0).all()
    assert (float_ratios(ref, run, tol) <= share * (1 + 1e-6) + 1e-12).all()


def test_compare_frames_names_the_worst_column():
    tols = parse_tolerances({"float_default": {"rtol": 1e-6}, "tables": {}})
    run = T.copy()
    run.loc[0, "sigma"] = 0.1 * (1 + 5e-7)  # half the tolerance
    res = compare_frames("t.csv", T, run, tols)
    assert res.status == "ok" and res.worst.column == "sigma" and res.worst.row == 0
    assert math.isclose(res.worst.ratio, 0.5, rel_tol=1e-6)
    assert math.isclose(res.worst.rel_dev, 5e-7, rel_tol=1e-6)


# ------------------------------------------------------------------------------- verdicts


def test_the_reference_itself_agrees(capsys, setup):
    tmp, ref, tol = setup
    rc, out, err = verify(capsys, _run(tmp / "run", {"t.csv": T}), ref, tol)
    assert rc == 0 and err == ""
    assert "none: every value equal" in out and "1 of 1 reference tables agree" in out


def test_within_tolerance_agrees_and_shows_the_deviation(capsys, setup):
    tmp, ref, tol = setup
    run = T.copy()
    run.loc[1, "risk"] = 2.0e-3 * (1 + 5e-4)  # half of rtol 1e-3 (+ atol 1e-9)
    rc, out, _ = verify(capsys, _run(tmp / "run", {"t.csv": run}), ref, tol)
    assert rc == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("t.csv"))
    assert "risk row 1" in line and "rel 5.0e-04" in line and " ok " in line


@pytest.mark.parametrize(
    "column, row, value, says",
    [
        ("risk", 1, 2.0e-3 * (1 + 2e-3), "risk row 1"),  # 2x its tolerance
        ("risk", 2, 1e-8, "risk row 2"),  # 0 against 1e-8: beyond atol 1e-9
        ("sigma", 0, 0.1 * (1 + 1e-5), "sigma row 0"),  # float_default rtol 1e-6
        ("sigma", 2, 0.3, "sigma row 2"),  # NaN in the reference
        ("r_hat", 2, 5, "r_hat row 2: 5 against 4 (must be exact)"),  # integers: exact
        ("rung", 0, "L4", "rung row 0: L4 against L0"),  # text: exact
    ],
)
def test_a_value_beyond_its_tolerance_fails(capsys, setup, column, row, value, says):
    tmp, ref, tol = setup
    run = T.copy()
    run[column] = run[column].astype(object)
    run.loc[row, column] = value
    rc, out, err = verify(capsys, _run(tmp / "run", {"t.csv": run}), ref, tol)
    assert rc == 1 and err == "", out
    line = next(ln for ln in out.splitlines() if ln.startswith("t.csv"))
    assert OUT in line and says in line, line
    assert "0 of 1 reference tables agree" in out and "DISAGREE" in out


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda df: df.drop(columns="risk"), "columns missing from the run: risk"),
        (lambda df: df.iloc[:2], "2 rows, the reference has 3"),
        (lambda df: df.iloc[[1, 0, 2]], "rung row 0"),  # reordered rows
    ],
)
def test_a_changed_shape_fails(capsys, setup, change, says):
    tmp, ref, tol = setup
    rc, out, _ = verify(capsys, _run(tmp / "run", {"t.csv": change(T)}), ref, tol)
    assert rc == 1 and says in out, out


def test_tables_and_columns_beyond_the_reference_are_reported_not_failed(capsys, setup):
    """A run made after the reference (claims v2 adds a column and tables): not a failure."""
    tmp, ref, tol = setup
    run = _run(tmp / "run", {"t.csv": T.assign(registration="v2"), "new.csv": T})
    (run / "tables" / "train.parquet").write_bytes(b"not read")
    rc, out, _ = verify(capsys, run, ref, tol)
    assert rc == 0, out
    assert "note: columns not in reference: registration" in out
    assert [ln.split()[-1] for ln in out.splitlines() if ln.startswith(("new", "train"))] == [
        "-",
        "-",
    ]
    assert out.count("not in reference") == 3


def test_a_pattern_rule_covers_columns_added_later(capsys, setup):
    """``R_*`` in the tolerance file: a reference column R_new that no entry names gets the
    pattern's tolerance (within it: agrees; beyond it: fails), and is not reported as unruled;
    a column's own entry wins over a pattern."""
    tmp, ref, tol = setup
    table = T.assign(R_new=[0.5, 0.25, 0.125], R_own=[1.0, 1.0, 1.0])
    _reference(ref, {"t.csv": table})
    tol.write_text(
        TOLERANCES.replace("risk:", "R_own: exact\n    R_*: {rtol: 1.0e-2, atol: 0.0}\n    risk:")
    )
    inside, beyond, own = table.copy(), table.copy(), table.copy()
    inside.loc[0, "R_new"] = 0.5 * (1 + 5e-3)  # half of rtol 1e-2
    beyond.loc[1, "R_new"] = 0.25 * (1 + 2e-2)  # twice it
    own.loc[2, "R_own"] = 1.0 + 1e-6  # within R_*, but R_own is exact
    rc, out, _ = verify(capsys, _run(tmp / "in", {"t.csv": inside}), ref, tol)
    assert rc == 0 and "R_new row 0" in out and "no tolerance rule" in out  # sigma, r_hat
    assert "R_new (" not in out
    rc, out, _ = verify(capsys, _run(tmp / "out", {"t.csv": beyond}), ref, tol)
    assert rc == 1 and "R_new row 1: |d| 5.0e-03, rel 2.0e-02 (rtol 1.0e-02" in out, out
    rc, out, _ = verify(capsys, _run(tmp / "own", {"t.csv": own}), ref, tol)
    assert rc == 1 and "R_own row 2: 1.000001 against 1.0 (must be exact)" in out, out


def test_a_column_without_a_rule_is_reported_with_how_it_was_compared(capsys, setup):
    """TOLERANCES names `risk` only: rung and r_hat (exact) and sigma (float_default) have no
    rule; the run still agrees, and the notes, the last line and the JSON say so."""
    import json

    tmp, ref, tol = setup
    run = _run(tmp / "run", {"t.csv": T})
    rc, out, _ = verify(capsys, run, ref, tol)
    assert rc == 0
    assert (
        "note: no tolerance rule for rung (exact), r_hat (exact), sigma (rtol 1.0e-06, "
        "atol 0.0e+00): give each a rule in the tolerance file" in out
    ), out
    assert out.splitlines()[-1].startswith("3 reference column(s) have no tolerance rule")
    rc, out, _ = verify(capsys, run, ref, tol, "--json")
    assert json.loads(out)["tables"][0]["unruled_columns"] == ["rung", "r_hat", "sigma"]
    tol.write_text(TOLERANCES + "    '*': exact\n")  # every other column: a rule
    rc, out, _ = verify(capsys, run, ref, tol)
    assert rc == 0 and "no tolerance rule" not in out, out


def test_the_tables_folder_itself_is_accepted(capsys, setup):
    """`entropic-bound verify results/paper/tables`: the same as the run's folder."""
    tmp, ref, tol = setup
    run = _run(tmp / "run", {"t.csv": T})
    rc, out, err = verify(capsys, run / "tables", ref, tol)
    assert rc == 0 and err == "" and "1 of 1 reference tables agree" in out, out


def test_a_table_missing_from_the_run_fails(capsys, setup):
    tmp, ref, tol = setup
    _reference(ref, {"u.csv": T})
    rc, out, _ = verify(capsys, _run(tmp / "run", {"t.csv": T}), ref, tol)
    assert rc == 1 and "MISSING" in out and "missing from the run" in out


def test_json_output(capsys, setup):
    import json

    tmp, ref, tol = setup
    run = T.copy()
    run.loc[0, "r_hat"] = 9
    rc, out, _ = verify(capsys, _run(tmp / "run", {"t.csv": run}), ref, tol, "--json")
    got = json.loads(out)
    assert rc == 1 and got["agree"] is False
    assert got["tables"][0]["worst"]["column"] == "r_hat"
    assert got["tables"][0]["worst"]["share_of_tolerance"] == "inf"


# ------------------------------------------------------------------------------- bad input


def test_missing_results_folder_is_one_line(capsys, setup):
    tmp, ref, tol = setup
    assert_one_line(*verify(capsys, tmp / "nope", ref, tol), says="does not exist")


def test_a_run_without_tables_is_one_line(capsys, setup):
    tmp, ref, tol = setup
    (tmp / "empty").mkdir()
    assert_one_line(
        *verify(capsys, tmp / "empty", ref, tol), says="no tables/ folder and holds no table"
    )


@pytest.mark.parametrize(
    "content",
    [b"", b'a,b\n1,"unterminated\n', b"\xff\xfe\x00garbage\x00\n"],
    ids=["empty", "unterminated quote", "binary"],
)
def test_a_malformed_csv_is_one_line(capsys, setup, content):
    tmp, ref, tol = setup
    run = _run(tmp / "run", {})
    (run / "tables" / "t.csv").write_bytes(content)
    assert_one_line(*verify(capsys, run, ref, tol), says="is not a readable table")


def test_a_malformed_reference_is_one_line(capsys, setup):
    tmp, ref, tol = setup
    (ref / "t.csv.gz").write_bytes(b"not gzip")
    assert_one_line(*verify(capsys, _run(tmp / "run", {"t.csv": T}), ref, tol), says="t.csv.gz")


@pytest.mark.parametrize(
    "text, says",
    [
        ("tables: {t.csv: {risk: {rtol: -1}}}\n", "tables.t.csv.risk.rtol is -1"),
        ("tables: {t.csv: {risk: loose}}\n", "expected `exact` or a mapping"),
        ("tolerance: 1\n", "expected the keys"),
        ("tables: {t.csv: {risk: exact}}\ntables: {}\n", "appears twice"),
        ("tables: [unclosed\n", "not valid YAML"),
    ],
)
def test_a_bad_tolerance_file_is_one_line(capsys, setup, text, says):
    tmp, ref, tol = setup
    tol.write_text(text)
    assert_one_line(*verify(capsys, _run(tmp / "run", {"t.csv": T}), ref, tol), says=says)


def test_a_missing_reference_is_one_line(capsys, setup):
    tmp, _, tol = setup
    run = _run(tmp / "run", {"t.csv": T})
    assert_one_line(*verify(capsys, run, tmp / "noref", tol), says="reference folder")


# ------------------------------------------------------------------- the shipped reference

REFERENCE, TOLERANCE_FILE = default_reference()


@pytest.fixture
def shipped_run(tmp_path):
    """The shipped reference's tables decompressed into a run folder."""
    if not REFERENCE.is_dir():
        pytest.skip("no shipped reference")
    run = tmp_path / "run" / "tables"
    run.mkdir(parents=True)
    for p in REFERENCE.glob("*.csv.gz"):
        (run / p.name[: -len(".gz")]).write_bytes(gzip.decompress(p.read_bytes()))
    return run.parent


def test_the_shipped_reference_agrees_with_itself(capsys, shipped_run):
    rc, out, err = main(["verify", str(shipped_run)]), *capsys.readouterr()
    assert rc == 0 and err == "", out
    assert out.count("none: every value equal") == len(list(REFERENCE.glob("*.csv.gz")))


@pytest.mark.extras
def test_every_shipped_tolerance_names_a_reference_column():
    """Each entry of a table the reference holds names one of its columns (a pattern matches one
    at least), and every column of the reference has a rule. Tables the reference does not hold
    yet (bounds.csv, X3 until make_reference.py is rerun) are tables the run writes."""
    from fnmatch import fnmatchcase

    from entropic_bound.verify.tolerance import is_pattern

    tols = load_tolerances(TOLERANCE_FILE)
    written = run_table_names()
    for table, columns in tols.tables.items():
        if not (REFERENCE / f"{table}.gz").exists():
            assert table in written, f"{table}: no such table of the run"
            continue
        ref = pd.read_csv(REFERENCE / f"{table}.gz")
        for name in columns:
            match = [c for c in ref.columns if fnmatchcase(c, name)] if is_pattern(name) else []
            base = name.split("[", 1)[0]  # r_hat[predictor=P_attn]: r_hat's P_attn rows
            assert name in ref.columns or match or base in ref.columns, (table, name)
        assert [c for c in ref.columns if tols.rule(table, c) is None] == [], table


def run_table_names() -> set[str]:
    """The CSV tables a run writes under tables/, as the workflow names them."""
    import re

    rules = (Path(__file__).resolve().parents[2] / "workflow" / "rules").glob("*.smk")
    text = "\n".join(p.read_text() for p in rules)
    return set(re.findall(r"(?:TABLES}|tables)/([\w.]+\.csv)", text))


def test_one_value_of_the_shipped_reference_perturbed_beyond_tolerance_fails(capsys, shipped_run):
    """The largest float of the first table with a float column, moved by 100 times what its
    tolerance allows: exit 1 and that table named."""
    tols = load_tolerances(TOLERANCE_FILE)
    for path in sorted((shipped_run / "tables").glob("*.csv")):
        df = pd.read_csv(path)
        floats = [
            c for c in df.columns if pd.api.types.is_float_dtype(df[c]) and df[c].notna().any()
        ]
        if floats:
            break
    col = floats[0]
    row = int(df[col].abs().idxmax())
    tol = tols.column(path.name, col, True)
    r = float(df.loc[row, col])
    df.loc[row, col] = r + 100 * (tol.atol + tol.rtol * abs(r)) + (0 if r else 1.0)
    df.to_csv(path, index=False)
    rc, out, _ = main(["verify", str(shipped_run)]), *capsys.readouterr()
    assert rc == 1, out
    line = next(ln for ln in out.splitlines() if ln.startswith(path.name))
    assert OUT in line and f"{col} row {row}" in line, line
    shutil.rmtree(shipped_run)
