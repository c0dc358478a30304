"""``entropic-bound heads``: a pretrained model's heads on windows of text, written to a folder
(:mod:`entropic_bound.pretrained.write`) with a manifest of what was read.

Nothing heavy is imported before the options are checked; every problem with a model, a text
or an option is one line (a :class:`~entropic_bound.pretrained.errors.PretrainedError`).
"""

from __future__ import annotations

import argparse

EXAMPLES = """\
examples:
  entropic-bound heads models/all-minilm-l6-v2 --text a.txt b.txt --window 128 --out caps/minilm
  entropic-bound heads model.gguf --corpus common-licenses --window 256 --windows 64 \\
      --layers 0,3 --out caps/smollm2
"""
#: the corpora --corpus takes (pretrained/corpus.py's CORPORA, listed here so --help imports
#: nothing; tests/cli/test_cli_heads.py checks the two agree)
CORPUS_NAMES = ("common-licenses",)


def add_heads_parser(sub) -> None:
    """The ``heads`` subcommand's options."""
    p = sub.add_parser(
        "heads",
        help="capture a pretrained model's heads on text: X, Y and each head's query/key maps",
        description="Tokenise text with the model's own tokenizer, cut windows of N tokens, run "
        "the forward pass and write, per layer, layer_<l>.npz (X [K, n, d_model], Y [K, H, n, "
        "d_head], each head's w_q, w_k, w_v and biases, a causal model's mask, MPNet's position bias, "
        "a decoder's rotation), windows.npz (the token ids) and manifest.json (SHA-256 of every "
        "file read and written, the window rule, the versions). The folder appears complete "
        "or not at all.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "model",
        metavar="MODEL_DIR",
        help="a model folder (config.json, model.safetensors, tokenizer.json) or a .gguf file",
    )
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument(
        "--text", nargs="+", metavar="FILE", help="UTF-8 text files, joined in the order given"
    )
    text.add_argument(
        "--corpus",
        choices=CORPUS_NAMES,
        help="a pinned corpus of text the system ships (each file checked by its SHA-256)",
    )
    p.add_argument("--window", type=int, required=True, metavar="N", help="tokens per window")
    p.add_argument(
        "--windows",
        type=int,
        metavar="K",
        help="take K windows evenly spaced over the text (default: every window)",
    )
    p.add_argument(
        "--layers", default="all", help="layers to capture: all (default) or a list such as 0,3"
    )
    p.add_argument("--batch", type=int, default=8, metavar="B", help="windows per forward pass")
    p.add_argument(
        "--sha256", metavar="HEX", help="refuse the model unless its weight file has this SHA-256"
    )
    p.add_argument(
        "--text-sha256",
        metavar="HEX",
        help="refuse the text unless the joined text (UTF-8) has this SHA-256",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the folder to write")
    p.add_argument(
        "--measure",
        action="store_true",
        help="then measure every head: its knee under both truncations (plain and in the "
        "inputs' metric), the spectra's estimators and predict's answer, written to "
        "heads.csv and curves.csv in --out (docs/method.md §9e); seconds per head",
    )
    p.add_argument("--json", action="store_true", help="print the manifest as JSON")
    p.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)


def parse_layers(spec: str):
    """``all`` or a comma-separated list of layer numbers (checked against the model later)."""
    from entropic_bound.pretrained.errors import PretrainedError

    if spec.strip() == "all":
        return "all"
    try:
        return [int(part) for part in spec.split(",")]
    except ValueError:
        raise PretrainedError(
            f"--layers {spec!r}: not a list of layer numbers", "give all, or numbers such as 0,3"
        ) from None


def check_options(args) -> None:
    from entropic_bound.pretrained.errors import PretrainedError

    if args.window < 1:
        raise PretrainedError(f"--window {args.window}: need at least one token per window")
    if args.windows is not None and args.windows < 1:
        raise PretrainedError(f"--windows {args.windows}: need at least one window")
    if args.batch < 1:
        raise PretrainedError(f"--batch {args.batch}: need at least one window per pass")
    for option, digest in (("--sha256", args.sha256), ("--text-sha256", args.text_sha256)):
        if digest is not None and (
            len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest.lower())
        ):
            raise PretrainedError(f"{option} {digest!r}: not a SHA-256", "give 64 hex digits")


def software() -> dict:
    """The versions that made a capture: the package, its git commit where it is a clone's."""
    import platform
    from importlib import metadata

    import numpy
    import torch

    from entropic_bound.config.provenance import git_commit

    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "absent"

    return {
        "entropic_bound": version("entropic-bound"),
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "numpy": numpy.__version__,
        "tokenizers": version("tokenizers"),
        "gguf": version("gguf"),
        "threads": torch.get_num_threads(),
    }


def model_digests(path, expected: str | None) -> tuple[object, dict]:
    """The model's files and the SHA-256 of each; a weight file other than ``expected`` is
    refused before the model is read."""
    from entropic_bound.pretrained.corpus import sha256_file
    from entropic_bound.pretrained.errors import PretrainedError
    from entropic_bound.pretrained.layout import find_model

    files = find_model(path)
    named = [p for p in (files.weights, files.config, files.tokenizer) if p is not None]
    digests = {p.name: sha256_file(p) for p in named}
    found = digests[files.weights.name]
    if expected is not None and found != expected.lower():
        raise PretrainedError(
            f"{files.weights} has SHA-256 {found}, not the expected {expected.lower()}",
            "the folder holds other weights than the ones named; unpack the model again",
        )
    return files, digests


WINDOW_RULE = (
    "the text tokenised once without special tokens and cut into consecutive chunks, each "
    "framed by the special tokens the tokenizer puts around one sequence so that a window has "
    "exactly `length` tokens, the tail too short for a window dropped; of the `available` "
    "windows, every one, or `count` evenly spaced: window floor(i * available / count) for "
    "i = 0 … count - 1 (a rule, no seed)"
)


def run_heads(args) -> dict:
    """``entropic-bound heads``: check, read, capture and write; the manifest."""
    import hashlib
    from pathlib import Path

    from entropic_bound.pretrained.capture import capture_set
    from entropic_bound.pretrained.corpus import JOIN_RULE, corpus_files, read_texts
    from entropic_bound.pretrained.errors import PretrainedError
    from entropic_bound.pretrained.load import load_model, tokenizer_of
    from entropic_bound.pretrained.tokens import special_frame, spread, token_windows
    from entropic_bound.pretrained.write import check_out, write_capture

    check_options(args)
    spec = parse_layers(args.layers)
    check_out(args.out)
    paths = [p for p, _ in corpus_files(args.corpus)] if args.corpus else args.text
    text, records = read_texts(paths)
    text_sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if args.text_sha256 is not None and text_sha != args.text_sha256.lower():
        raise PretrainedError(
            f"the joined text has SHA-256 {text_sha}, not the expected {args.text_sha256.lower()}",
            "the text files, or the rule that joins them, differ from the ones named",
        )
    files, digests = model_digests(args.model, args.sha256)
    model = load_model(args.model)
    if args.window > model.max_len:
        raise PretrainedError(
            f"--window {args.window}: {Path(args.model).name} takes at most {model.max_len} tokens",
            "choose a shorter window",
        )
    layers = capture_set(spec, model.cfg.layers)
    tok = tokenizer_of(model)
    every = token_windows(tok, text, args.window)
    chosen = spread(every.shape[0], args.windows)
    before, after = special_frame(tok)
    manifest = {
        "model": {
            "path": str(Path(args.model).absolute()),
            "format": files.format,
            "sha256": digests,
            "expected_sha256": args.sha256.lower() if args.sha256 else None,
        },
        "text": {
            "corpus": args.corpus,
            "files": records,
            "join": JOIN_RULE,
            "characters": len(text),
            "sha256": text_sha,
        },
        "windows": {
            "length": args.window,
            "count": len(chosen),
            "available": int(every.shape[0]),
            "rule": WINDOW_RULE,
            "special_before": before,
            "special_after": after,
        },
        "software": software(),
    }
    return write_capture(model, every[chosen], chosen, args.out, layers, args.batch, manifest)


def measure_heads(out, name: str, log=None):
    """``--measure``: every head of the capture in ``out`` measured (:mod:`.pretrained.measure`),
    heads.csv and curves.csv written beside it; the heads table."""
    from pathlib import Path

    from entropic_bound.core.io import write_table
    from entropic_bound.pretrained.measure import measure_capture

    heads, curves = measure_capture(out, name, log=log or (lambda line: None))
    write_table(heads, Path(out) / "heads.csv")
    write_table(curves, Path(out) / "curves.csv")
    return heads


def format_knees(heads) -> str:
    """Per layer, the knees' median and range under both truncations; the QK parameters the
    plain knees would remove."""
    from entropic_bound.pretrained.study import qk_removed

    lines = ["knees   layer: plain median [min, max] | inputs' metric median [min, max]"]
    for layer, g in heads.groupby("layer"):
        parts = [
            f"{g[k].median():g} [{g[k].min():g}, {g[k].max():g}]"
            for k in ("knee_plain", "knee_inputs_metric")
        ]
        lines.append(f"        {layer}: {parts[0]} | {parts[1]}")
    c = qk_removed(heads).iloc[0]
    lines.append(
        f"        the plain knees would remove {c['removed']:,} of {c['qk_params']:,} query-key "
        f"parameters ({c['removed_share']:.0%}) at 1 % of each head's ablation error"
    )
    return "\n".join(lines)


def format_capture(m: dict, out: str) -> str:
    """The manifest in a few lines."""
    md, w, t = m["model"], m["windows"], m["text"]
    layer_files = [name for name in m["files"] if name.startswith("layer_")]
    first = m["files"][layer_files[0]]["members"]
    total = sum(f["bytes"] for f in m["files"].values())
    return "\n".join(
        [
            f"model   {md['path']} ({md['family']}: {md['layers']} layers × {md['heads']} heads, "
            f"d_model {md['d_model']}, d_head {md['d_head']}{', causal' if md['causal'] else ''})",
            f"text    {len(t['files'])} file(s), {t['characters']:,} characters"
            + (f" (corpus {t['corpus']})" if t["corpus"] else ""),
            f"windows {w['count']} of {w['length']} tokens ({w['available']} in the text)",
            f"wrote   {out}: {len(layer_files)} layer file(s), X {first['X']['shape']}, "
            f"Y {first['Y']['shape']}; windows.npz, manifest.json ({total / 1e6:.1f} MB)",
        ]
    )
