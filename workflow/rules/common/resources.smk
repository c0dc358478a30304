# Cluster resources (included by common.smk; no rules here).
# What a job asks a cluster for (profiles/slurm/config.yaml turns it into sbatch options),
# derived from the config so that the large configs get what they need and the paper config
# what it always had. Estimates are upper bounds: float64 data for the data-only stages, every
# student running to max_steps, 5 GFLOP/s per CPU thread and 2 TFLOP/s on a GPU (both well
# below what the kernels reach). mem_mb and runtime (minutes) grow with the attempt: `retries: 1`
# in the profile resubmits a job that SLURM killed for memory or time, and the same request
# would fail again. Runtime never exceeds MAX_RUNTIME: a request over the partition's time
# limit would be rejected at submission.
from math import ceil  # noqa: E402


def max_runtime() -> int:
    """The most minutes any job asks for, retries included: env EB_MAX_RUNTIME_MIN (set it to
    your partition's time limit), default 1440 (24 h)."""
    raw = os.environ.get("EB_MAX_RUNTIME_MIN", "1440")
    if not raw.strip().isdigit() or int(raw) < 1:  # bad input: one line, exit 2
        print(
            f"entropic-bound: error: EB_MAX_RUNTIME_MIN={raw!r}: give the partition's "
            "time limit in whole minutes",
            file=sys.stderr,
        )
        sys.exit(2)
    return int(raw)


MAX_RUNTIME = max_runtime()

_T = config["task"]
#: one float64 [n_train, n, d] array in MB, the unit the data-only stages' memory grows with
DATA_MB = _T["n_train"] * _T["n"] * _T["d"] * 8 / 2**20


def by_attempt(base, cap=None):
    """A resource that is ``base`` on the first attempt and ``k * base`` on the k-th, at most
    ``cap``."""

    def resource(wildcards, attempt):
        value = ceil(base) * attempt
        return value if cap is None else min(value, cap)

    return resource


#: malloc_retain_mb keeps freed blocks in the process (core/runner.retain_freed_memory): at
#: d = 48 the peaks of predict and bounds were 2.3x and 1.6x those at the C library's default
#: (docs/performance.md), so the estimates that grow with the data double with it
RETAIN_FACTOR = 2 if config.get("malloc_retain_mb", 0) > 0 else 1


def runtime_by_attempt(base):
    """Minutes: ``base``, doubled on a retry, at most MAX_RUNTIME."""
    return by_attempt(base, cap=MAX_RUNTIME)


def tasks_mem_mb():
    """A task's data made in chunks (tasks/data.py): its float32 X/Y when the file holds them
    (counted twice, for the write), the float64 clean test targets, and ~10 float64 arrays of a
    chunk (16 MB each, a few of them [chunk, n, n])."""
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    test_mb = _T["n_test"] * _T["n"] * _T["d"] * 8 / 2**20
    chunk_mb = 10 * 16 * max(1, _T["n"] / _T["d"])
    return max(2000, 1000 + 2 * task_mb + test_mb + chunk_mb)


def predict_mem_mb():
    """P_static: X, Y and a noisy copy in float64, and the normal equations of vec(X), [nd, nd]
    (times RETAIN_FACTOR, the floor aside)."""
    normal_mb = (_T["n"] * _T["d"]) ** 2 * 8 / 2**20
    return max(4000, RETAIN_FACTOR * (1000 + 12 * DATA_MB + 5 * normal_mb))


def predict_runtime(jobs=1):
    """Minutes of one of ``jobs`` predict jobs, which share the tasks: P_static dominates,
    4 B (nd)^2 + 2 n^2 d^4 + 10 d^6 flops per task and noise level."""
    n, d, B = _T["n"], _T["d"], _T["n_train"]
    flops = 4 * B * (n * d) ** 2 + 2 * n**2 * d**4 + 10 * d**6
    fits = ceil(len(TASKS) / jobs) * (1 + len(config["predict"]["noisy_sigmas"]))
    return 20 + flops * fits / (5e9 * config["threads"]) / 60


def train_mem_mb():
    """A training job holds its tasks' float32 arrays twice (loaded, stacked), plus torch/CUDA."""
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    return max(4000, 3000 + 2 * config["train"]["tasks_per_job"] * task_mb)


def best_bounds_mem_mb():
    """A best-bounds job makes one task's data at a time (float32 X/Y, both splits). A static
    rung keeps of each task its test split and its two training moments [nd, nd] in float64, not
    its sample (bounds/moments.py: the moments are read from the sample in chunks of rows above
    n·d = 256, and the small configs' one float64 copy is within the floor). An input-dependent
    rung whose L-BFGS runs on the sample (bounds.best.max_iter > 0) holds its tasks whole and
    autograd's ~30 float64 arrays of one chunk of problems on every training sequence.
    """
    b = config["bounds"]["best"]
    n, d, B = _T["n"], _T["d"], _T["n_train"]
    task_mb = (B + _T["n_test"]) * n * d * 4 * 2 / 2**20
    test_mb = _T["n_test"] * n * d * 4 * 2 / 2**20
    per_rung = len(_T["r_star"]) * len(_T["seeds"])
    moments_mb = 2 * (n * d) ** 2 * 8 / 2**20
    static = task_mb + per_rung * (test_mb + moments_mb)
    chunk_mb = b["chunk"] * B * n * max(n, d) * 8 / 2**20
    sample = per_rung * task_mb + 30 * chunk_mb if b["max_iter"] else task_mb
    return max(2000, RETAIN_FACTOR * (1000 + max(static, sample)))


def bounds_mem_mb():
    """A bounds job holds one rung's tasks at a time (float32 X/Y, both splits), and L-BFGS's
    autograd keeps ~30 float64 arrays of one chunk of problems: [chunk, n_seqs, n, max(n, d)].
    """
    b = config["bounds"]
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    per_rung = len(_T["r_star"]) * len(_T["seeds"])
    chunk_mb = b["chunk"] * b["n_seqs"] * _T["n"] * max(_T["n"], _T["d"]) * 8 / 2**20
    return max(2000, RETAIN_FACTOR * (1000 + per_rung * task_mb + 30 * chunk_mb))


def train_runtime():
    """Minutes for one training job if every student ran max_steps (most stop far earlier): per
    task and seed, at most max(n, d) ranks of the sweep and the 2 static students."""
    n, d, train = _T["n"], _T["d"], config["train"]
    optims = [{**train["classes"]["default"], **c} for c in train["classes"].values()]
    samples = max(o["batch"] * o["max_steps"] for o in optims)  # per student
    students = train["tasks_per_job"] * (max(n, d) + 2) * len(train["student_seeds"])
    flops = 6 * (2 * n * d * d + 2 * n * n * d) * samples * students
    rate = 2e12 if config["device"] == "cuda" else 5e9 * config["threads"]
    return 30 + flops / rate / 60


def train_gpus():
    """GPUs per training job: one when the config says `device: cuda` (sbatch --gpus), else 0."""
    return 1 if config["device"] == "cuda" else 0
