"""Training-engine benchmark (`make bench`): one JSON line.

By default on the paper-scale L4 workload (d = n = 16, r* ∈ {1, 2, 4, 8} × 2 task seeds, ranks
1..16 × 2 student seeds = 256 students); ``--config``, ``--ranks``, ``--max-tasks`` and
``--max-steps`` pick another (e.g. d = 64: ``--config config/large.yaml``). Each repeat runs,
in turn, the three measurements, so that machine load drifts over all three alike (the GEMM
peak measured once swung 100–200 GFLOP/s between runs on the same machine):
  gemm_peak_gflops   fp32 GEMM (1024³) at the same thread count: the machine's yardstick
  engine             the batched engine on the workload (wall seconds, matmul GFLOP/s)
  naive              a naive loop (one torch module and Adam optimizer per student, same data,
                     batch and learning rate, the same final train/test evaluation) on the
                     engine's workload (each student's own number of steps), timed on a subset
                     of students and scaled
Reported: the median of each over the repeats (and every repeat), the thread count of each,
  peak_fraction      median over repeats of (engine GFLOP/s / GEMM peak of the same repeat).
                     Counted: the nine products per sequence of a training step (4 forward, 5
                     backward; the data needs no gradient) and the four forward products per
                     sequence of the final train/test evaluation; not counted: the per-student
                     Q Kᵀ and Adam (small)
  speedup_vs_naive   median over repeats of naive seconds / engine seconds
  cpu                the CPU model and the fused kernel's vector width on it (AVX2: 8 floats)
  omp_wait_policy    $OMP_WAIT_POLICY as the process saw it (set it before the run: libgomp
                     reads it when torch loads)
The fused kernel is built (or loaded from its cache) before the first timing.
  peak_rss_mb        peak resident memory of this process
  students_per_second trained students (to convergence or retirement) per wall second
``--products dense,factored`` (train.products) runs the engine once per form in each repeat,
interleaved, and adds ``products_seconds`` (median per form) and ``products_speedup`` (median
over repeats of the first form's seconds / each form's); the other figures are the first form's.
Machines are noisy: compare ratios measured in the same run, not absolute times.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import time

import torch

from entropic_bound.config.load import class_optim, load_run_config
from entropic_bound.core.rungs import kernel_dim
from entropic_bound.tasks.grid import specs_of_rung
from entropic_bound.tasks.make import make_task
from entropic_bound.tasks.mixing import apply_operator
from entropic_bound.train import fused
from entropic_bound.train.backends import factored_ranks
from entropic_bound.train.engine import Optim, train_students


def gemm_peak_gflops(size: int = 1024, reps: int = 20) -> float:
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(3):
        a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - t) / 1e9


def engine_matmul_flops(n: int, d: int, batch: int, steps, factored, eval_seqs: int) -> float:
    """Matmul FLOPs the engine runs for attention students (``steps``, ``factored``: per
    student, its steps and its factored rank or 0; both backends run the dense products).

    Per training sequence: forward U = XA, Z = U Xᵀ, H = M X, Ŷ = H V; backward dV = Hᵀ G,
    dH = G Vᵀ, dM = dH Xᵀ, dU = dZ X, dA = Xᵀ dU: 5 products of n·d² and 4 of n²·d
    multiply-adds; a factored student of rank r does 4ndr + 3n²r for the four with A.
    Evaluation: the 4 forward products per student per sequence.
    """
    train = 0
    for s, r in zip(steps, factored):
        bilinear = 4 * n * d * r + 3 * n * n * r if r else 2 * n * d * d + 2 * n * n * d
        train += 2 * batch * (3 * n * d * d + 2 * n * n * d + bilinear) * int(s)
    evaluation = 2 * (2 * n * d * d + 2 * n * n * d) * len(steps) * eval_seqs
    return float(train + evaluation)


class NaiveStudent(torch.nn.Module):
    def __init__(self, k: int, d: int, rank: int, scale: float, gen: torch.Generator):
        super().__init__()
        self.Q = torch.nn.Parameter(scale * torch.randn(k, rank, generator=gen))
        self.K = torch.nn.Parameter(scale * torch.randn(k, rank, generator=gen))
        self.V = torch.nn.Parameter(scale * torch.randn(d, d, generator=gen))

    def forward(self, X, rung, beta, P):
        return apply_operator(rung, X, self.Q @ self.K.T, self.V, beta=beta, P=P)


def naive_seconds(tasks, rung, optim: Optim, students: int, steps: int, eval_chunk: int = 256):
    """The naive loop: (seconds per student-step, seconds of one student's final evaluation).

    One module and one torch.optim.Adam per student, trained for ``steps`` steps on its own
    minibatches, then evaluated on the whole train and test split like the engine's students.
    One untimed warm-up student first: the first autograd and optimizer calls of a process are
    several times slower and would flatter the engine.
    """
    gen = torch.Generator().manual_seed(0)

    def one(i, n_steps):
        arrays, meta = tasks[i % len(tasks)]
        X, Y = torch.as_tensor(arrays["X_train"]), torch.as_tensor(arrays["Y_train"])
        P = torch.as_tensor(arrays["P"])
        k = kernel_dim(rung, meta["n"], meta["d"])
        model = NaiveStudent(k, meta["d"], 1 + i % k, 1e-2, gen)
        opt = torch.optim.Adam(model.parameters(), lr=optim.lr)
        t0 = time.perf_counter()
        for _ in range(n_steps):
            idx = torch.randint(len(X), (optim.batch,), generator=gen)
            loss = (model(X[idx], rung, meta["beta"], P) - Y[idx]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        t1 = time.perf_counter()
        with torch.no_grad():
            for split in ("train", "test"):
                Xs, Ys = (
                    torch.as_tensor(arrays[f"X_{split}"]),
                    torch.as_tensor(arrays[f"Y_{split}"]),
                )
                total = torch.zeros((), dtype=torch.float64)
                for lo in range(0, len(Xs), eval_chunk):
                    pred = model(Xs[lo : lo + eval_chunk], rung, meta["beta"], P)
                    total += (pred - Ys[lo : lo + eval_chunk]).double().pow(2).sum()
        return t1 - t0, time.perf_counter() - t1

    one(0, 10)  # warm-up, not timed
    train_s = eval_s = 0.0
    for i in range(students):
        a, b = one(i, steps)
        train_s, eval_s = train_s + a, eval_s + b
    return train_s / (students * steps), eval_s / students


def _median(xs):
    return statistics.median(xs)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--rung", default="L4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--naive-students", type=int, default=8)
    ap.add_argument("--naive-steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--backend", default=None, help="auto | fused | torch (default: the config's)")
    ap.add_argument("--ranks", default=None, help="comma-separated ranks (default: 1..k)")
    ap.add_argument("--max-tasks", type=int, default=None, help="the rung's first N tasks")
    ap.add_argument("--max-steps", type=int, default=None, help="override optim.max_steps")
    ap.add_argument(
        "--products", default=None, help="auto | dense | factored, or a comma list to compare"
    )
    args = ap.parse_args(argv)
    cfg = load_run_config(args.config)  # an overlay (config/scale/d32.yaml) over config.yaml
    torch.set_num_threads(args.threads or cfg["threads"])
    tasks = []
    for spec in specs_of_rung(cfg, args.rung)[: args.max_tasks]:
        a = make_task(spec)
        tasks.append((a, json.loads(str(a["meta"]))))
    optim = Optim.from_config(
        class_optim(cfg, args.rung[:3] if args.rung.startswith("Lam") else args.rung)
    )
    if args.max_steps:
        optim = dataclasses.replace(optim, max_steps=args.max_steps)
    backend = args.backend or cfg["train"].get("backend", "auto")
    eval_seqs = cfg["task"]["n_train"] + cfg["task"]["n_test"]
    n, d = cfg["task"]["n"], cfg["task"]["d"]
    t = cfg["train"]
    k = kernel_dim(args.rung, n, d)
    ranks = [int(r) for r in args.ranks.split(",")] if args.ranks else list(range(1, k + 1))
    seeds = t["student_seeds"]
    runs = {"peak": [], "engine_s": [], "engine_gflops": [], "naive_s": [], "fraction": []}
    runs |= {"speedup": [], "rate": []}
    forms = (args.products or t.get("products", "auto")).split(",")
    form_s: dict[str, list[float]] = {f: [] for f in forms}
    threads = {"peak": [], "engine": [], "naive": []}
    if backend in ("auto", "fused"):
        # build (or load) the C kernel before any timing: a cold cache otherwise times the
        # compiler in the first repeat (14.0 s against 5.5-5.8 s warm; a41134c, 2026-12-04)
        fused.available()
    for _ in range(args.repeats):
        threads["peak"].append(torch.get_num_threads())
        peak = gemm_peak_gflops()
        threads["engine"].append(torch.get_num_threads())
        for form in reversed(forms):  # the first form last: its `m` is the one reported
            t0 = time.perf_counter()
            m = train_students(
                tasks,
                args.rung,
                ranks,
                seeds,
                optim,
                init_scale=t["init_scale"],
                epsilon=t["epsilon"],
                checkpoints=t["checkpoints"],
                base_seed=cfg["seed"],
                device="cpu",
                backend=backend,
                products=form,
            )["metrics"]
            form_s[form].append(time.perf_counter() - t0)
        engine_s = form_s[forms[0]][-1]
        student_steps = int(m.steps.sum())
        threads["naive"].append(torch.get_num_threads())
        per_step, per_eval = naive_seconds(
            tasks, args.rung, optim, args.naive_students, args.naive_steps
        )
        # the naive loop's time for the engine's workload: every student's own number of
        # steps, and the same final evaluation
        naive_s = per_step * student_steps + per_eval * len(m)
        fr = factored_ranks(m["rank"], args.rung, n, d, forms[0])
        if str(m.backend.iloc[0]) != "fused":
            fr = 0 * fr
        flops = engine_matmul_flops(n, d, optim.batch, m.steps, fr, eval_seqs)
        achieved = flops / engine_s / 1e9
        for key, v in (
            ("peak", peak),
            ("engine_s", engine_s),
            ("engine_gflops", achieved),
            ("naive_s", naive_s),
            ("fraction", achieved / peak),
            ("speedup", naive_s / engine_s),
            ("rate", len(m) / engine_s),
        ):
            runs[key].append(v)
    print(
        json.dumps(
            {
                "workload": f"{args.rung} d={d} n={n}, {len(tasks)} tasks x {len(ranks)} ranks "
                f"x {len(seeds)} seeds = {len(m)} students, max_steps {optim.max_steps}",
                "speedup_vs_naive": round(_median(runs["speedup"]), 2),
                "peak_fraction": round(_median(runs["fraction"]), 3),
                "cpu": fused.cpu_summary(),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "students_per_second": round(_median(runs["rate"]), 2),
                "student_steps": student_steps,
                "gemm_peak_gflops": round(_median(runs["peak"]), 1),
                "engine_gflops": round(_median(runs["engine_gflops"]), 1),
                "engine_seconds": round(_median(runs["engine_s"]), 2),
                "naive_seconds_estimated": round(_median(runs["naive_s"]), 1),
                "repeats_gemm_peak_gflops": [round(v, 1) for v in runs["peak"]],
                "repeats_engine_seconds": [round(v, 2) for v in runs["engine_s"]],
                "repeats_naive_seconds": [round(v, 1) for v in runs["naive_s"]],
                "repeats_peak_fraction": [round(v, 3) for v in runs["fraction"]],
                "threads": {key: sorted(set(v)) for key, v in threads.items()},
                "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
                "backend": str(m.backend.iloc[0]),
                "products": forms[0],
                **(
                    {
                        "products_seconds": {f: round(_median(v), 2) for f, v in form_s.items()},
                        "products_speedup": {
                            f: round(_median([a / b for a, b in zip(form_s[forms[0]], v)]), 3)
                            for f, v in form_s.items()
                        },
                    }
                    if len(forms) > 1
                    else {}
                ),
                "repeats": args.repeats,
            }
        )
    )


if __name__ == "__main__":
    main()
