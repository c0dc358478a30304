"""``entropic-bound``: the minimum attention rank of a user's own data, before any training.

A thin front end: it parses options, calls the library and formats the answer. The science lives
in :mod:`entropic_bound.predict` (``recommend_rank``, the Python API), the reading of files
in :mod:`.npyio` and :mod:`.datafiles`, the text in :mod:`.text`, the plot in :mod:`.plot`; ``verify`` (a run's
tables against the shipped reference) in :mod:`entropic_bound.verify`; ``heads`` (a pretrained
model's heads captured on text) in :mod:`.capture`.

Nothing heavy is imported before it is needed, so ``--help`` and ``--version`` answer at once.
Every user error is one line on stderr, ``entropic-bound: error: <what is wrong>; <what to do>``,
exit 2; warnings never reach the terminal.
"""

from __future__ import annotations

import argparse
import sys

PROG = "entropic-bound"
#: the rank estimators of docs/method.md §2 as --estimator takes them (tests/cli/test_cli_battery.py
#: checks this against estimators.estimator_names(opt_in=True), which needs numpy: --help stays
#: fast)
ESTIMATORS = (
    "numerical, stable, entropy, participation, energy_0.9, energy_0.95, energy_0.99, floor"
)
EXAMPLES = """\
examples:
  entropic-bound predict data.npz                 X and Y [B, n, d] in one .npz
  entropic-bound predict --x X.npy --y Y.npy      or one .npy each
  entropic-bound predict task.npz --split test    a task file's X_test/Y_test
  entropic-bound predict data.npz --json          one JSON object (for scripts)
  entropic-bound predict data.npz --plot s.pdf    draw the spectra and the cut
  entropic-bound predict heads.npz --causal       Y [B, H, n, d_v]: one row per head, causal
  entropic-bound inspect data.npz                 shapes, statistics, a task's meta
  entropic-bound verify results/paper             a run against the shipped reference
  entropic-bound heads MODEL_DIR --text a.txt --window 128 --out caps/
                                                  a pretrained model's X, Y and maps per layer

from Python: entropic_bound.predict.recommend_rank(X, Y).rank
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: one line and exit 2, as ours
        self.exit(2, f"{PROG}: error: {message}; see `{self.prog} --help`\n")


class _Version(argparse.Action):
    """--version, looked up only when asked (importlib.metadata costs ~0.2 s)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("entropic-bound")
        except PackageNotFoundError:
            found = "unknown"
        print(f"{PROG} {found}")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Data-only query-key rank prediction "
        "(The Entropic Bound for Transformers, arXiv 2607.23050).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser(
        "predict",
        help="the minimum attention rank of X, Y before any training",
        description="Report every data-only predictor × estimator, the static-fit share, the "
        "data's place on the predictability frontier and one recommended minimum query-key rank.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _input_options(p)
    _model_options(p)
    _budget_options(p)
    p.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    q = sub.add_parser("inspect", help="shapes, task meta and summary statistics of a file")
    q.add_argument("file", help=".npz or .npy file")
    q.add_argument("--json", action="store_true", help="print one machine-readable JSON object")
    q.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    v = sub.add_parser(
        "verify",
        help="check a run's tables against the shipped reference, within measured tolerances",
        description="Compare every table of the shipped reference (benchmarks/reference/paper) "
        "with the run's table of the same name, column by column, within the measured "
        "tolerances of benchmarks/reference/tolerances.yaml. Prints each table's largest "
        "deviation; exit 0 when all agree, 1 when one does not, 2 when an input is unreadable.",
    )
    v.add_argument("results", metavar="RESULTS_DIR", help="a run's folder, e.g. results/paper")
    v.add_argument("--reference", help="reference folder of <table>.csv.gz (default: the clone's)")
    v.add_argument("--tolerances", help="tolerance file (default: the clone's)")
    v.add_argument("--json", action="store_true", help="print one machine-readable JSON object")
    v.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    from entropic_bound.cli.capture import add_heads_parser

    add_heads_parser(sub)
    return parser


def verify(args) -> tuple[str, int]:
    """``entropic-bound verify``: the report's text (or JSON) and the exit status (0 or 1)."""
    from entropic_bound.verify.locate import shipped_reference
    from entropic_bound.verify.report import run_verify

    reference, tolerances = args.reference, args.tolerances
    if not (reference and tolerances):  # the clone's; installed from a wheel: one line, exit 2
        folder, tolerance_file = shipped_reference()
        reference, tolerances = reference or folder, tolerances or tolerance_file
    return run_verify(args.results, reference, tolerances, as_json=args.json)


def _input_options(p) -> None:
    """Where X and Y come from, and what is printed."""
    p.add_argument(
        "file",
        nargs="?",
        help=".npz with X [B, n, d] and Y [B, n, d_v] or [B, H, n, d_v] (or a task file's "
        "X_train/Y_train); an optional [n, n] `mask` member marks causal attention",
    )
    p.add_argument("--x", help="X as a .npy file [B, n, d] (with --y)")
    p.add_argument("--y", help="Y as a .npy file [B, n, d_v] or [B, H, n, d_v] (with --x)")
    p.add_argument("--x-key", help="name of X in the .npz (default X, else X_train)")
    p.add_argument("--y-key", help="name of Y in the .npz (default Y, else Y_train)")
    p.add_argument(
        "--split", choices=("train", "test"), help="use a task file's X_<split>/Y_<split>"
    )
    p.add_argument("--json", action="store_true", help="print one machine-readable JSON object")
    p.add_argument(
        "--plot", metavar="IMAGE", help="draw the spectra and the cut to this .png/.pdf/.svg/..."
    )
    p.add_argument(
        "--loss-knee",
        action="store_true",
        help="also fit softmax heads of rank 0 … d to X, Y and report the least rank whose "
        "held-out error is within 1 %% of the full-rank fit's ablation gap (slower: seconds at "
        "d = 8, minutes at d = 64; one head: --head h for a file of several)",
    )


def _model_options(p) -> None:
    """What the user knows about the attention that made Y."""
    p.add_argument(
        "--value-known",
        action="store_true",
        help="the value map is the identity (V = I): enables P_invert when n <= d",
    )
    p.add_argument(
        "--causal",
        action="store_true",
        help="causal (lower-triangular) attention: token i attends to tokens j <= i",
    )
    p.add_argument(
        "--head",
        type=int,
        default=None,
        help="of Y [B, H, n, d_v], predict this head only, with the full report (default: every "
        "head, one row each)",
    )
    p.add_argument(
        "--estimator",
        default="auto",
        help="estimator of the recommendation (default auto: energy_0.99, or floor for "
        f"softmax-like data; one of {ESTIMATORS} or energy_<tau>)",
    )


def _budget_options(p) -> None:
    """How many sequences each predictor may use."""
    p.add_argument(
        "--no-static", action="store_true", help="skip P_static (and the static-fit share)"
    )
    p.add_argument(
        "--static-max-size",
        type=int,
        default=1024,
        help="run P_static only when n*d and d*d are at most this (default 1024)",
    )
    p.add_argument(
        "--static-oversample",
        type=int,
        default=8,
        help="P_static uses this many × n*d sequences at most (default 8)",
    )
    p.add_argument(
        "--attn-max-sequences",
        type=int,
        default=None,
        help="P_attn uses at most this many sequences (0: all; default: all while "
        "B*n*d*max(n,d) <= 2^32, e.g. 16384 at n = d = 64)",
    )
    p.add_argument(
        "--invert-max-sequences",
        type=int,
        default=1024,
        help="P_invert uses at most this many sequences (default 1024)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the subsamples (default 0)")


def _jsonable(obj):
    """NaN/Inf become null so that the output is strict JSON."""
    import math

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # a numpy scalar
        return _jsonable(obj.item())
    return obj


def _run(args) -> tuple[str, int]:
    """The answer's text and the exit status it goes with."""
    import json

    from entropic_bound.cli import text as textreport

    if args.command == "verify":
        return verify(args)
    if args.command == "heads":
        from pathlib import Path

        from entropic_bound.cli.capture import (
            format_capture,
            format_knees,
            measure_heads,
            run_heads,
        )

        res = run_heads(args)
        text = json.dumps(res, indent=2) if args.json else format_capture(res, args.out)
        if args.measure:
            heads = measure_heads(args.out, Path(args.model).name)
            if not args.json:
                text += "\n" + format_knees(heads) + f"\nwrote   {args.out}/heads.csv, curves.csv"
        return text, 0
    if args.command == "predict":
        from entropic_bound.cli.command import predict

        res = predict(args)
        text = textreport.format_heads if "heads" in res else textreport.format_predict
    else:
        from entropic_bound.cli.datafiles import inspect_file

        res, text = inspect_file(args.file), textreport.format_inspect
    answer = json.dumps(_jsonable(res), indent=2, ensure_ascii=False) if args.json else text(res)
    return answer, 0


def error_line(exc: BaseException) -> str:
    """The one line a user sees for an exception (never a traceback)."""
    first = " ".join(str(exc).split()) or type(exc).__name__  # one line, whatever it held
    if isinstance(exc, ValueError):  # InputError and the library's messages: what; what to do
        return f"{PROG}: error: {first}"
    if isinstance(exc, MemoryError):
        return f"{PROG}: error: out of memory; lower --attn-max-sequences or --static-oversample"
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        why = " ".join(str(exc.strerror or exc).split())
        return f"{PROG}: error: cannot read or write{where} ({why}); check the path, space and permissions"
    if type(exc).__name__ == "LinAlgError":
        return (
            f"{PROG}: error: the data are numerically degenerate ({first[:200]}); check for "
            "constant or duplicated tokens and rescale X and Y"
        )
    return (
        f"{PROG}: error: internal error {type(exc).__name__}: {first[:300]}; please report it "
        "with the command (rerun with --traceback for details)"
    )


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised like Ctrl-C's KeyboardInterrupt so that every ``finally`` runs
    (an image being written is removed, never left under its temporary name)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, frame):
    raise _Terminated(signum)


def _catch_termination() -> dict:
    """Turn SIGTERM and SIGHUP into :class:`_Terminated` (main thread only); the old handlers."""
    import signal
    import threading

    old = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) == signal.SIG_DFL:
                old[signum] = signal.signal(signum, _terminate)
    return old


def _write_stdout(text: str) -> int:
    """Print the answer; a failing write (disk full, closed pipe) is one line too, never a
    traceback at exit."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError as exc:
        _drop_stdout()
        if isinstance(exc, BrokenPipeError):  # the reader stopped early (`| head`): not an error
            return 0
        why = " ".join(str(exc.strerror or exc).split())
        print(
            f"{PROG}: error: cannot write the answer to standard output ({why}); "
            "check the disk space or where the output is redirected",
            file=sys.stderr,
        )
        return 2
    return 0


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of what is still
    buffered cannot fail again (and print a traceback) at exit."""
    import os

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2, its line printed)
        return exc.code if isinstance(exc.code, int) else 0
    import signal
    import warnings

    old = _catch_termination()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy/torch warnings: the answer or one error line
            try:
                text, code = _run(args)
            except (KeyboardInterrupt, _Terminated) as exc:
                try:  # after SIGHUP the terminal may be gone: the exit status still says it
                    print(f"{PROG}: error: interrupted; nothing was written", file=sys.stderr)
                except OSError:
                    pass
                return 128 + (exc.signum if isinstance(exc, _Terminated) else signal.SIGINT)
            except Exception as exc:  # noqa: BLE001 - every user error is one line, no traceback
                if args.traceback:
                    raise
                if isinstance(exc, BrokenPipeError):
                    return 0
                print(error_line(exc), file=sys.stderr)
                return 2
    finally:  # the handlers back before the answer is printed: a signal then ends the process
        for signum, handler in old.items():
            signal.signal(signum, handler)
    return _write_stdout(text) or code


if __name__ == "__main__":
    sys.exit(main())
