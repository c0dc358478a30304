"""`entropic-bound predict` and `inspect` on task files without their data (task.store_data:
never): the data are made again from the seeds by the tasks package (tasks.files.read_task), so
both commands answer exactly what they answer on the same task stored with its data; a hostile
file of this kind is refused in one line, exit 2, before anything is allocated or made."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from fabricate import task_file_without_data

import entropic_bound.tasks.data as task_data
import entropic_bound.tasks.make as task_make
from entropic_bound.cli.main import main
from entropic_bound.tasks import TaskSpec
from entropic_bound.tasks.files import PART_KEYS, task_file_arrays

SPEC = TaskSpec(rung="L3", r_star=2, seed=0, n=8, d=4, sigma=0.05, n_train=96, n_test=48)


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The same task written twice, as `task.npz` in two folders: with its data, and without."""
    root = tmp_path_factory.mktemp("seed_only")
    for folder, mode in (("stored", "always"), ("seeds", "never")):
        (root / folder).mkdir()
        np.savez(root / folder / "task.npz", **task_file_arrays(SPEC, mode))
    with np.load(root / "seeds" / "task.npz") as z:
        assert "X_train" not in z.files and "seeds" in z.files
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "task.npz"],
        ["predict", "task.npz", "--json"],
        ["predict", "task.npz", "--split", "test", "--no-static"],
        ["predict", "task.npz", "--x-key", "X_test", "--y-key", "Y_test", "--json"],
    ],
    ids=["text", "json", "split-test", "keys"],
)
def test_predict_answers_as_on_the_file_with_data(capsys, monkeypatch, pair, argv):
    answers = []
    for folder in ("stored", "seeds"):
        monkeypatch.chdir(pair / folder)
        rc, out, err = run(capsys, *argv)
        assert rc == 0, err
        answers.append(out)
    assert answers[0] == answers[1]
    assert "Recommended minimum QK rank" in answers[0] or '"recommendation"' in answers[0]


def test_inspect_shows_the_arrays_of_the_file_with_data(capsys, monkeypatch, pair):
    shown = {}
    for folder in ("stored", "seeds"):
        monkeypatch.chdir(pair / folder)
        rc, out, err = run(capsys, "inspect", "task.npz", "--json")
        assert rc == 0, err
        shown[folder] = json.loads(out)
    stored, seeds = shown["stored"], shown["seeds"]
    assert seeds["made_again"] == ["X_train", "Y_train", "X_test", "Y_test"]
    assert stored["made_again"] == []
    extra = {"seeds", "data_sha256", *PART_KEYS}
    assert [a for a in seeds["arrays"] if a["name"] not in extra] == stored["arrays"]
    assert seeds["meta"] == stored["meta"]
    monkeypatch.chdir(pair / "seeds")
    rc, out, _ = run(capsys, "inspect", "task.npz")
    assert rc == 0 and "X_train, Y_train, X_test, Y_test: made again from the file's seeds" in out


# --- hostile files without data: one line, exit 2, nothing made ---


def _meta(**change) -> np.ndarray:
    meta = json.loads(str(task_file_arrays(SPEC, "never")["meta"]))
    meta.update(change)
    return np.array(json.dumps(meta))


def _meta_without(key: str) -> np.ndarray:
    meta = json.loads(str(_meta()))
    del meta[key]
    return np.array(json.dumps(meta))


#: (what is changed, what the one line must say, whether the data may be made before the refusal)
HOSTILE = [
    ({"seeds": None}, r"nor the seeds to make them \(seeds missing\)", False),
    ({"data_sha256": None}, r"nor the seeds to make them \(data_sha256 missing\)", False),
    ({"seeds": None, "data_sha256": None}, "holds neither its data", False),
    ({"meta": None}, "lacks meta", False),
    ({"kernel": None}, "lacks kernel", False),
    ({"seeds": np.array([0.0, 2.0, 0.0])}, r"seeds field \[0.0, 2.0, 0.0\] is not the stream", False),
    ({"seeds": np.array(["0", "2", "0"])}, "is not the stream of its meta", False),
    ({"seeds": np.array(0)}, "is not the stream of its meta", False),
    ({"seeds": np.arange(20000)}, "seeds in .* holds 160000 bytes, more than", False),
    ({"data_sha256": np.arange(4)}, "data_sha256 field is not 4 digests", False),
    ({"meta": np.array("{not json")}, "its meta is not one JSON object", False),
    ({"meta": np.array("[1, 2]")}, "its meta is not one JSON object", False),
    ({"meta": np.arange(3)}, "its meta is not one JSON object", False),
    ({"meta": _meta(n="8")}, r"its meta gives n = '8', which no task has", False),
    ({"meta": _meta(n_train=-5, sigma=float("nan"))}, r"n_train = -5, sigma = nan, which no task", False),
    ({"meta": _meta(n_train=2.5)}, "n_train = 2.5, which no task has", False),
    ({"meta": _meta(seed=0.0)}, "seed = 0.0, which no task has", False),
    ({"meta": _meta(rung="L9")}, "rung = 'L9', which no task has", False),
    ({"meta": _meta(value_map=None)}, "value_map = None, which no task has", False),
    ({"meta": _meta_without("kappa")}, "its meta lacks kappa", False),
    ({"meta": _meta(n_train=10**12)}, r"needs ≈ .* GB, more than the ≈ .* GB available", False),
    ({"meta": _meta(n=10**6, d=10**6)}, r"n = 1000000, d = 1000000\) needs ≈ .* GB", False),
    ({"kernel": np.zeros((4, 5), np.float32)}, r"kernel in .* has shape \(4, 5\) .* of shape \(4, 4\)", False),
    ({"P": np.zeros((8, 4), np.complex64)}, r"P in .* has shape \(8, 4\) and dtype complex64", False),
    ({"V": np.zeros((4, 4), np.float32)}, r"do not make its teacher \(V differs\)", True),
    ({"data_sha256": np.array(["0" * 64] * 4)}, "differ from those the tasks stage made", True),
]  # fmt: skip


@pytest.mark.parametrize("command", ["predict", "inspect"])
@pytest.mark.parametrize("change, says, makes", HOSTILE, ids=[h[1][:40] for h in HOSTILE])
def test_a_hostile_file_without_data_is_one_line(
    capsys, monkeypatch, tmp_path, command, change, says, makes
):
    path = task_file_without_data(tmp_path / "t.npz", SPEC, **change)
    made = []
    if not makes:  # refused before the teacher is drawn or any data are made

        def refuse(*a, **k):
            made.append(1)
            raise AssertionError("made data from a file it should have refused")

        monkeypatch.setattr(task_make, "draw_teacher", refuse)
        monkeypatch.setattr(task_data, "generate_data", refuse)
    rc, out, err = run(capsys, command, path)
    assert (rc, out, made) == (2, "", [])
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("entropic-bound: error: ")
    assert re.search(says, err), err
