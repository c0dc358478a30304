"""Rule `pretrained_heads`: one pretrained model's heads captured on the corpus, by the command
`entropic-bound heads` (docs/cli.md) with the model's settings of config/pretrained_heads.yaml.
Its one-line errors and its summary go to the rule's log."""

import contextlib
import sys
from pathlib import Path

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.core.runner import run


def main(sm):
    import torch

    from entropic_bound.cli.main import main as command

    torch.set_num_threads(max(1, int(sm.threads)))
    cfg, model = sm.params.cfg, sm.params.model
    weights = Path(sm.input.model)  # a GGUF file is the model; a safetensors file's folder is
    argv = [
        "heads",
        str(weights if weights.suffix == ".gguf" else weights.parent),
        "--corpus",
        cfg["corpus"],
        "--text-sha256",
        cfg["corpus_sha256"],
        "--window",
        str(model["window"]),
        "--windows",
        str(model["windows"]),
        "--layers",
        model["layers"],
        "--batch",
        str(cfg["batch"]),
        "--sha256",
        model["sha256"],
        "--out",
        sm.output.capture,
    ]
    print("entropic-bound " + " ".join(argv), file=sys.stderr, flush=True)
    with contextlib.redirect_stdout(sys.stderr):
        code = command(argv)
    if code:
        raise SystemExit(code)


run(main, snakemake)  # noqa: F821
