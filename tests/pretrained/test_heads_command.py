"""`entropic-bound heads` on tiny random models: the members and shapes written, the windows
exactly the tokenizer's ids, every SHA-256 of the manifest, the same bytes on a rerun, the
captures readable by `entropic-bound predict`, and every bad input one line, exit 2, nothing
written."""

import hashlib
import json
import zipfile

import numpy as np
import pytest
import torch
from tiny import BERT, LLAMA, MPNET, llama_tensors, write_gguf, write_model

from entropic_bound.cli.main import main
from entropic_bound.pretrained import load_model
from entropic_bound.pretrained.corpus import join_texts

tokenizers = pytest.importorskip("tokenizers")

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "f", "g"]


def word_tokenizer(path):
    """One id per word (a → 4 … g → 10), [CLS] … [SEP] around a sequence."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.save(str(path))
    return path


def encoder(tmp_path, cfg=BERT, name="m"):
    folder = write_model(tmp_path / name, cfg | {"vocab_size": len(WORDS)})
    word_tokenizer(folder / "tokenizer.json")
    return folder


def texts(tmp_path, words=400, files=2, seed=0):
    """Text files of random words a … g, hard-wrapped and indented as licence texts are."""
    rng = np.random.default_rng(seed)
    paths = []
    for f in range(files):
        w = rng.choice(list("abcdefg"), size=words)
        lines = ["   " + " ".join(w[i : i + 9]) for i in range(0, words, 9)]
        paths.append(tmp_path / f"text{f}.txt")
        paths[-1].write_text("\n".join(lines[:10]) + "\n\n\f\n" + "\n".join(lines[10:]) + "\n")
    return paths


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def capture(capsys, model, text, out, *more):
    rc, _, err = run(capsys, "heads", model, "--text", *text, "--out", out, *more)
    assert rc == 0, err
    return json.loads((out / "manifest.json").read_text())


def members(path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_encoders_capture_holds_its_forward_and_maps(tmp_path, capsys):
    folder, text = encoder(tmp_path), texts(tmp_path)
    m = capture(capsys, folder, text, tmp_path / "out", "--window", 6, "--windows", 20)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "layer_0.npz",
        "layer_1.npz",
        "manifest.json",
        "windows.npz",
    ]
    model = load_model(folder)
    ids = torch.from_numpy(members(out / "windows.npz")["ids"])
    assert ids.shape == (20, 6)
    fwd = model.forward(ids, capture="all", batch=8, hidden=False)
    for layer in (0, 1):
        z = members(out / f"layer_{layer}.npz")
        assert list(z) == ["X", "Y", "w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "scale"]
        assert z["X"].shape == (20, 6, 8) and z["Y"].shape == (20, 2, 6, 4)
        assert z["X"].dtype == z["Y"].dtype == np.float32
        assert np.array_equal(z["X"], fwd.layers[layer].x.numpy())
        assert np.array_equal(z["Y"], fwd.layers[layer].y.numpy())
        for h in range(2):
            hw = model.head_weights(layer, h)
            for name in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v"):
                assert np.array_equal(z[name][h], getattr(hw, name).numpy())
        assert z["scale"] == 0.5
    assert m["model"]["family"] == "bert" and m["model"]["causal"] is False
    assert m["layers"] == [0, 1] and m["windows"]["count"] == 20


def test_windows_are_exactly_the_tokenizers_ids_evenly_spaced(tmp_path, capsys):
    folder, text = encoder(tmp_path), texts(tmp_path)
    capture(capsys, folder, text, tmp_path / "out", "--window", 7, "--windows", 9)
    tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    joined = join_texts([p.read_text() for p in text])
    assert "\n" not in joined.split("\n\n")[0] and "  " not in joined
    body = tok.encode(joined, add_special_tokens=False).ids
    assert len(body) == 800  # every word a token: nothing of the layout is left
    available = len(body) // 5
    chunks = [i * available // 9 for i in range(9)]
    want = [[2, *body[5 * c : 5 * c + 5], 3] for c in chunks]
    w = members(tmp_path / "out" / "windows.npz")
    assert w["ids"].tolist() == want and w["chunk"].tolist() == chunks


def test_the_manifest_names_every_file_by_its_sha256(tmp_path, capsys):
    folder, text = encoder(tmp_path), texts(tmp_path)
    out = tmp_path / "out"
    joined = hashlib.sha256(join_texts([p.read_text() for p in text]).encode()).hexdigest()
    weights = sha(folder / "model.safetensors")
    more = ("--window", 6, "--layers", "1", "--sha256", weights, "--text-sha256", joined)
    m = capture(capsys, folder, text, out, *more)
    assert m["model"]["sha256"] == {
        name: sha(folder / name) for name in ("model.safetensors", "config.json", "tokenizer.json")
    }
    assert m["model"]["expected_sha256"] == weights and m["text"]["sha256"] == joined
    assert [f["sha256"] for f in m["text"]["files"]] == [sha(p) for p in text]
    assert [f["path"] for f in m["text"]["files"]] == [str(p) for p in text]
    assert set(m["files"]) == {"layer_1.npz", "windows.npz"}
    for name, f in m["files"].items():
        assert f["sha256"] == sha(out / name) and f["bytes"] == (out / name).stat().st_size
    assert m["files"]["layer_1.npz"]["members"]["Y"] == {
        "shape": [200, 2, 6, 4],
        "dtype": "float32",
    }
    assert m["windows"]["count"] == m["windows"]["available"] == 200  # every window by default
    for key in ("entropic_bound", "git_commit", "torch", "numpy", "tokenizers", "threads"):
        assert key in m["software"]


def test_a_rerun_writes_the_same_bytes_and_replaces_an_earlier_capture(tmp_path, capsys):
    folder, text = encoder(tmp_path), texts(tmp_path)
    args = ("--window", 6, "--windows", 30, "--batch", 4)
    capture(capsys, folder, text, tmp_path / "one", *args)
    first = {p.name: p.read_bytes() for p in (tmp_path / "one").iterdir()}
    capture(capsys, folder, text, tmp_path / "two", *args)
    capture(capsys, folder, text, tmp_path / "one", *args)  # onto the earlier capture
    for run_dir in ("one", "two"):
        assert {p.name: p.read_bytes() for p in (tmp_path / run_dir).iterdir()} == first
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def tiny_decoder(tmp_path):
    """A tiny GGUF decoder whose byte-level tokenizer knows a, b, spaces and line breaks."""
    vocab = ["<unk>", "<|end|>", "a", "b", "Ġ", "ab", "Ġa", "Ġb", "Ċ", "ĊĊ"]
    merges = ["a b", "Ġ a", "Ġ b", "Ċ Ċ"]
    tokens = (vocab, merges, [2, 3] + [1] * 8, "smollm")
    return write_gguf(tmp_path / "m.gguf", LLAMA, llama_tensors(LLAMA), tokens=tokens)


def ab_text(tmp_path, words=300):
    path = tmp_path / "ab.txt"
    path.write_text(" ".join(np.random.default_rng(1).choice(["a", "b", "ab"], words)))
    return path


def test_mpnet_and_a_decoder_carry_their_position_terms(tmp_path, capsys):
    pytest.importorskip("gguf")
    folder, text = encoder(tmp_path, MPNET, "mpnet"), texts(tmp_path)
    capture(capsys, folder, text, tmp_path / "mp", "--window", 8, "--windows", 4)
    z = members(tmp_path / "mp" / "layer_1.npz")
    model = load_model(folder)
    assert z["position_bias"].shape == (2, 8, 8)
    assert np.array_equal(z["position_bias"], model.position_bias(8).numpy())
    assert "mask" not in z
    path = tiny_decoder(tmp_path)
    m = capture(capsys, path, [ab_text(tmp_path)], tmp_path / "ll", "--window", 12, "--windows", 10)
    z = members(tmp_path / "ll" / "layer_0.npz")
    assert list(z) == ["X", "Y", "w_q", "w_k", "w_v", "scale", "mask", "rope_cos", "rope_sin"]
    assert z["X"].shape == (10, 12, 16) and z["Y"].shape == (10, 4, 12, 4)
    assert np.array_equal(z["mask"], np.tril(np.ones((12, 12), np.uint8)))
    model = load_model(path)
    assert np.array_equal(z["rope_cos"], model.rope(12)[0].numpy())
    assert np.array_equal(z["w_k"][3], model.head_weights(0, 3).w_k.numpy())  # key/value head 1
    assert np.array_equal(z["w_v"][3], model.head_weights(0, 2).w_v.numpy())  # the same head
    assert m["model"]["causal"] is True and m["model"]["kv_heads"] == 2
    assert m["model"]["sha256"] == {"m.gguf": sha(path)}


def test_predict_reads_a_capture_one_row_per_head(tmp_path, capsys):
    folder, text = encoder(tmp_path), texts(tmp_path, words=2000)
    capture(capsys, folder, text, tmp_path / "out", "--window", 6, "--layers", "0")
    # seven words make few distinct tokens: X's vec is dependent, P_static left out
    layer = tmp_path / "out" / "layer_0.npz"
    rc, out, err = run(capsys, "predict", layer, "--json", "--no-static")
    assert rc == 0, err
    report = json.loads(out)
    assert [h["head"] for h in report["heads"]] == [0, 1]
    assert report["input"] | {"source": None} == {
        "source": None,
        "B": 1000,
        "n": 6,
        "d": 8,
        "d_v": 4,
        "head": None,
        "heads": 2,
        "causal": False,
        "dtype": ["float32", "float32"],
        "task_meta": None,
    }


def test_predict_reads_a_decoders_capture_as_causal(tmp_path, capsys):
    """The mask member is what predict reads as --causal (its own reader, cli.datafiles)."""
    pytest.importorskip("gguf")
    from entropic_bound.cli.datafiles import causal_mask, xy_members

    capture(capsys, tiny_decoder(tmp_path), [ab_text(tmp_path)], tmp_path / "ll", "--window", 8)
    layer = str(tmp_path / "ll" / "layer_1.npz")
    X, Y, _, _ = xy_members(layer)
    assert X.shape[1:] == (8, 16) and Y.shape[1:] == (4, 8, 4)
    assert causal_mask(layer, 8) is True


def one_line_error(capsys, argv, says, parent):
    before = sorted(p.name for p in parent.iterdir())
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("entropic-bound: error: ") and says in err, err
    assert "Traceback" not in err
    assert sorted(p.name for p in parent.iterdir()) == before  # nothing written, no temp folder


@pytest.mark.parametrize(
    "case, says",
    [
        ("no folder", "does not exist; give the folder of an unpacked model"),
        ("empty folder", "holds no model.safetensors and no .gguf file"),
        ("wrong sha", "has SHA-256 "),
        ("bad sha", "not a SHA-256"),
        ("wrong text sha", "the joined text has SHA-256 "),
        ("missing text", "does not exist; check the path"),
        ("not utf-8", "is not UTF-8 text"),
        ("long window", "--window 17: m takes at most 16 tokens"),
        ("few windows", "the text gives 200 windows, fewer than the 201 asked for"),
        ("bad layers", "--layers 'one': not a list"),
        ("no layer", "capture layer 5 does not exist"),
        ("busy out", "holds files but no manifest.json"),
        ("no parent", "does not exist; create it first"),
        ("zero window", "--window 0: need at least one token"),
    ],
)
def test_every_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, case, says):
    folder, text = encoder(tmp_path), texts(tmp_path)
    out = tmp_path / "out"
    argv = ["heads", folder, "--text", *text, "--window", 6, "--out", out]
    if case == "no folder":
        argv[1] = tmp_path / "nothing"
    elif case == "empty folder":
        (tmp_path / "empty").mkdir()
        argv[1] = tmp_path / "empty"
    elif case == "wrong sha":
        argv += ["--sha256", "0" * 64]
    elif case == "bad sha":
        argv += ["--sha256", "abc"]
    elif case == "wrong text sha":
        argv += ["--text-sha256", "f" * 64]
    elif case == "missing text":
        argv[3] = tmp_path / "missing.txt"
    elif case == "not utf-8":
        (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
        argv[3] = tmp_path / "latin.txt"
    elif case == "long window":
        argv[argv.index("--window") + 1] = 17
    elif case == "few windows":
        argv += ["--windows", 201]
    elif case == "bad layers":
        argv += ["--layers", "one"]
    elif case == "no layer":
        argv += ["--layers", "0,5"]
    elif case == "busy out":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    elif case == "no parent":
        argv[-1] = tmp_path / "a" / "b"
    elif case == "zero window":
        argv[argv.index("--window") + 1] = 0
    one_line_error(capsys, argv, says, tmp_path)
    if case == "busy out":
        assert (out / "notes.txt").read_text() == "mine"


def test_a_failure_during_the_forward_leaves_nothing(tmp_path, capsys, monkeypatch):
    from entropic_bound.pretrained.bert import Encoder

    folder, text = encoder(tmp_path), texts(tmp_path)
    calls = []

    def fail_later(self, ids, *a, **k):
        calls.append(1)
        if len(calls) > 2:
            raise MemoryError
        return original(self, ids, *a, **k)

    original = Encoder.forward
    monkeypatch.setattr(Encoder, "forward", fail_later)
    argv = ["heads", folder, "--text", *text, "--window", 6, "--out", tmp_path / "out"]
    one_line_error(capsys, argv, "out of memory", tmp_path)
    assert len(calls) == 3


def test_an_interruption_leaves_nothing(tmp_path, capsys, monkeypatch):
    from entropic_bound.pretrained.bert import Encoder

    folder, text = encoder(tmp_path), texts(tmp_path)
    capture(capsys, folder, text, tmp_path / "out", "--window", 6)
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}

    def interrupt(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(Encoder, "forward", interrupt)
    rc, out, err = run(
        capsys, "heads", folder, "--text", *text, "--window", 7, "--out", tmp_path / "out"
    )
    assert rc == 130 and err.strip() == "entropic-bound: error: interrupted; nothing was written"
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == before  # kept whole
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_capture_files_are_plain_uncompressed_npz(tmp_path, capsys):
    folder, text = encoder(tmp_path), texts(tmp_path)
    capture(capsys, folder, text, tmp_path / "out", "--window", 6, "--windows", 3)
    with zipfile.ZipFile(tmp_path / "out" / "layer_0.npz") as zf:
        infos = zf.infolist()
    assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}


def published(name: str):
    """The folder and settings of a model of config/pretrained_heads.yaml, or a skip."""
    import os
    from pathlib import Path

    import yaml

    root = os.environ.get("ENTROPIC_BOUND_PRETRAINED_DIR")
    if not root:
        pytest.skip("ENTROPIC_BOUND_PRETRAINED_DIR is not set")
    config = Path(__file__).resolve().parents[2] / "config" / "pretrained_heads.yaml"
    settings = yaml.safe_load(config.read_text())["models"][name]
    folder = Path(root) / name
    if not (folder / settings["file"]).is_file():
        pytest.skip(f"{folder / settings['file']} is absent")
    return folder, settings


@pytest.mark.parametrize(
    "name, members, shape",
    [
        ("all-minilm-l6-v2", {"b_q", "b_k", "b_v"}, (6, 12, 384, 32)),
        ("all-mpnet-base-v2", {"b_q", "b_k", "b_v", "position_bias"}, (12, 12, 768, 64)),
        ("smollm2-135m-instruct", {"mask", "rope_cos", "rope_sin"}, (30, 9, 576, 64)),
    ],
)
def test_a_published_models_capture_has_its_layout(tmp_path, capsys, name, members, shape):
    """Two windows of the corpus, the first and last layers: the files, the shapes and the
    digests (nothing of the captured values is read)."""
    folder, s = published(name)
    if name.startswith("smollm2"):
        pytest.importorskip("gguf")
    layers, heads, d, dh = shape
    out = tmp_path / "out"
    argv = ["heads", folder, "--corpus", "common-licenses", "--window", s["window"]]
    argv += ["--windows", 2, "--layers", f"0,{layers - 1}", "--sha256", s["sha256"], "--out", out]
    rc, _, err = run(capsys, *argv)
    assert rc == 0, err
    m = json.loads((out / "manifest.json").read_text())
    assert m["model"]["sha256"][s["file"]] == s["sha256"] and m["layers"] == [0, layers - 1]
    n = s["window"]
    last = m["files"][f"layer_{layers - 1}.npz"]["members"]
    assert set(last) == {"X", "Y", "w_q", "w_k", "w_v", "scale"} | members
    assert last["X"]["shape"] == [2, n, d] and last["Y"]["shape"] == [2, heads, n, dh]
    assert last["w_q"]["shape"] == last["w_k"]["shape"] == last["w_v"]["shape"] == [heads, dh, d]


def test_measure_adds_every_heads_knees_and_the_compression_line(tmp_path, capsys):
    import pandas as pd

    folder, text = encoder(tmp_path), texts(tmp_path)
    out = tmp_path / "out"
    argv = ("heads", folder, "--text", *text, "--window", 6, "--windows", 8, "--out", out)
    rc, printed, err = run(capsys, *argv, "--measure")
    assert rc == 0, err
    heads = pd.read_csv(out / "heads.csv")
    assert heads[["layer", "head"]].values.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert (heads["y_recompute_rel"] < 1e-5).all()
    assert heads["knee_plain"].between(0, 4).all() and heads["model"].eq("m").all()
    curves = pd.read_csv(out / "curves.csv")
    assert len(curves) == 4 * 2 * 5  # heads × truncations × ranks 0 … 4
    assert "query-key parameters" in printed and "heads.csv" in printed
