"""Stage ``heads`` (workflow/rules/heads.smk; docs/method.md §9), exploratory: no verdict.

Three jobs: train the model (:func:`train_heads`, here), measure every head
(:func:`.measure.measure_heads`: its three spectra's ranks and its truncation knee), then the
figures and the summary (:mod:`.report`). This module is all the training job reads, so an
edit of the measurement never retrains the model.
"""

from __future__ import annotations

import platform
import time
from dataclasses import asdict

import pandas as pd
import torch

from entropic_bound.core.io import atomic_path, write_table
from entropic_bound.heads.corpus import load_corpus
from entropic_bound.heads.model import ModelShape, TinyGPT
from entropic_bound.heads.train import train_model


def resolve_device(name: str) -> str:
    """``auto``: cuda when present, else cpu; ``cuda`` where there is none is a ValueError
    (one line from the job, not a traceback from deep inside torch)."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: this machine has no CUDA GPU; use device auto or cpu")
    return name


def corpus_of(cfg: dict):
    """The corpus of the config's ``corpus`` section (:func:`.corpus.load_corpus`)."""
    c = cfg["corpus"]
    return load_corpus(
        c["root"] or None,
        c["max_bytes"],
        c["valid_share"],
        source=c["source"],
        max_group_bytes=c["max_group_bytes"],
        exclude_groups=c["exclude_groups"],
        shingle_words=c["shingle_words"],
        max_containment=c["max_containment"],
    )


def train_heads(cfg: dict, model_path, curve_path, log=print, prov: dict | None = None) -> dict:
    """Train the model of ``cfg``; write its weights and facts (``model_path``, torch) and the
    training curve (``curve_path``, CSV). Returns the facts."""
    torch.set_num_threads(cfg["threads"])
    device = resolve_device(cfg["device"])
    corpus = corpus_of(cfg)
    log(f"corpus: {corpus.describe()}")
    wall, cpu = time.perf_counter(), time.process_time()
    model, curve = train_model(cfg, corpus, device, log)
    facts = {
        "shape": asdict(model.shape),
        "parameters": sum(p.numel() for p in model.parameters()),
        "corpus": corpus.describe(),
        "device": device,
        "threads": cfg["threads"],
        "train_wall_s": time.perf_counter() - wall,
        "train_cpu_s": time.process_time() - cpu,
        "valid_loss": curve[-1]["valid_loss"],
        "steps_run": curve[-1]["step"],
        "stopped": "plateau" if curve[-1]["step"] < cfg["train"]["steps"] else "steps",
        "python": platform.python_version(),
        "torch": str(torch.__version__),
    }
    with atomic_path(model_path, ".pt") as tmp:
        torch.save({"state_dict": model.cpu().state_dict(), "facts": facts}, tmp)
    write_table(pd.DataFrame(curve), curve_path, prov)
    log(f"trained: {facts}")
    return facts


def load_model(model_path) -> tuple[TinyGPT, dict]:
    saved = torch.load(model_path, map_location="cpu", weights_only=True)
    model = TinyGPT(ModelShape(**saved["facts"]["shape"]))
    model.load_state_dict(saved["state_dict"])
    return model.eval(), saved["facts"]


def model_facts(model_path) -> dict:
    """What :func:`train_heads` recorded beside the weights (corpus, shape, time, loss)."""
    return torch.load(model_path, map_location="cpu", weights_only=True)["facts"]
