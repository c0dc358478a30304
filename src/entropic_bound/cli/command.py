"""``entropic-bound predict`` from parsed options: the sources, the settings, one head or every
head of Y [B, H, n, d_v], the progress bar and the plot (:mod:`.main` parses, this runs)."""

from __future__ import annotations

import sys


class _Progress:
    """A tqdm bar on stderr, shown only on a terminal and after 2 s (``delay``)."""

    def __init__(self, total: int, enabled: bool):
        self.bar = None
        if enabled and total > 0 and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="seq", file=sys.stderr, delay=2, leave=False)

    def __call__(self, k: int) -> None:
        if self.bar is not None:
            self.bar.update(k)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def predict(args) -> dict:
    from dataclasses import replace

    from entropic_bound.predict.recommend import Settings, check_estimator, validate_shapes

    settings = Settings(
        **{k: getattr(args, k) for k in Settings.__dataclass_fields__}  # each --option once
    )
    settings.check()
    check_estimator(settings.estimator)
    if args.plot:
        _check_plot_path(args.plot)
    X, Y, source, meta, causal = _sources(args)
    settings = replace(settings, causal=bool(args.causal or causal))
    shape = validate_shapes(X, Y)  # before any head is read: one message for the whole file
    heads = shape.heads if args.head is None else None
    if heads is not None and args.plot:
        from entropic_bound.cli.datafiles import InputError

        raise InputError("--plot draws one head's spectra", "pass --head h with --plot")
    if heads is not None and args.loss_knee:
        from entropic_bound.cli.datafiles import InputError

        raise InputError("--loss-knee fits one head", "pass --head h with --loss-knee")
    if heads is None:
        report = _predict_one(X, Y, settings, source, meta, args)
    else:
        report = _predict_heads(X, Y, settings, source, meta, args, heads)
    if args.loss_knee:
        report["loss_knee"] = _loss_knee(X, Y, settings)
    if args.plot:
        from entropic_bound.cli.plot import save_spectrum_plot

        save_spectrum_plot(args.plot, report["predictors"], report["recommendation"])
        report["plot"] = args.plot
    return report


def _loss_knee(X, Y, settings) -> dict:
    """The loss knee (predict.lossknee) of the head the report read: its rank and every
    held-out error it fitted."""
    import time

    import numpy as np

    from entropic_bound.predict.lossknee import LOSS_KNEE_FRACTION, loss_knee

    x, y = (
        np.concatenate([np.asarray(b, dtype=np.float64) for _, b in src.rows(src.shape[0])])
        for src in (X, Y)
    )
    if y.ndim == 4:
        y = y[:, settings.head or 0]
    start = time.process_time()
    lk = loss_knee(x, y, causal=settings.causal)
    return {
        "knee": lk.knee,
        "fraction": LOSS_KNEE_FRACTION,
        "ablated": lk.ablated,
        "full": lk.full,
        "losses": {str(r): v for r, v in sorted(lk.losses.items())},
        "fits": lk.fits,
        "cpu_s": time.process_time() - start,
    }


def _sources(args):
    """X, Y, the source's name, a task file's meta and its mask's word (causal or not, or None)."""
    from entropic_bound.cli.datafiles import InputError, causal_mask, xy_members, xy_pair

    if args.file and (args.x or args.y):
        raise InputError("give either FILE or --x/--y, not both", "drop one of them")
    if args.x or args.y:
        if not (args.x and args.y):
            missing = "--y" if args.x else "--x"
            raise InputError(f"{missing} is missing", "give both --x X.npy and --y Y.npy")
        X, Y = xy_pair(args.x, args.y)
        return X, Y, f"{args.x} + {args.y}", None, None
    if args.file:
        X, Y, source, meta = xy_members(args.file, args.x_key, args.y_key, args.split)
        n = X.shape[1] if len(X.shape) == 3 else 0
        return X, Y, source, meta, causal_mask(args.file, n) if n else None
    raise InputError(
        "no input given",
        "run `entropic-bound predict FILE.npz` (with X and Y) "
        "or `entropic-bound predict --x X.npy --y Y.npy`",
    )


def _predict_one(X, Y, settings, source, meta, args) -> dict:
    from entropic_bound.predict.recommend import recommend_source

    bar = _Progress(X.shape[0] if X.shape else 0, enabled=not args.json)
    try:
        return recommend_source(X, Y, settings, source=source, meta=meta, progress=bar).report
    finally:
        bar.close()


def _predict_heads(X, Y, settings, source, meta, args, heads: int) -> dict:
    """Every head of Y [B, H, n, d_v], one report each, and the table of one row per head."""
    from dataclasses import replace

    from entropic_bound.predict.recommend import heads_summary

    reports = [
        {"head": h, **_predict_one(X, Y, replace(settings, head=h), source, meta, args)}
        for h in range(heads)
    ]
    return {
        "input": {**reports[0]["input"], "head": None},
        "recommendation": heads_summary(reports),
        "heads": reports,
    }


def _check_plot_path(path: str) -> None:
    import importlib.util
    import os

    from entropic_bound.cli.datafiles import InputError
    from entropic_bound.cli.plot import SPECTRUM_SUFFIXES

    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix not in SPECTRUM_SUFFIXES:
        raise InputError(
            f"--plot {path}: unknown image type {suffix or '(none)'!r}",
            f"end the name with one of .{', .'.join(SPECTRUM_SUFFIXES)}",
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"--plot {path}: folder {folder} does not exist", "create it first")
    if os.path.isdir(path):
        raise InputError(f"--plot {path} is a directory", "give a file name")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"--plot {path}: folder {folder} is not writable", "choose another")
    if importlib.util.find_spec("matplotlib") is None:  # the library installed without [plot]
        raise InputError(
            f"--plot {path}: drawing needs matplotlib, which is not installed",
            "pip install 'entropic-bound[plot]', or leave out --plot",
        )
