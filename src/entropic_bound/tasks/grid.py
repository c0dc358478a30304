"""The task grid: which teacher tasks a config defines (:class:`TaskSpec`, :func:`task_specs`) and
how a rung's tasks are grouped into training jobs (:func:`chunks_of_rung`), and the tasks of one
random stream, which the predict jobs group (:func:`specs_by_stream`).

No torch here: Snakemake reads this module when it builds the DAG (``workflow/rules/common.smk``),
and importing torch there cost every ``snakemake`` call, a dry run included, about 2.5 s.
:mod:`.tasks` makes the tasks themselves.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from entropic_bound.core.rungs import parse_rung, rung_name


@dataclass(frozen=True)
class TaskSpec:
    rung: str
    r_star: int
    seed: int
    n: int = 16
    d: int = 16
    gain: float = 1.0
    kappa: float = 2.0
    beta: float = 1.0
    sigma: float = 0.0
    value_map: str = "unknown"
    n_train: int = 4096
    n_test: int = 2048
    base_seed: int = 0

    @property
    def task_id(self) -> str:
        return f"{self.rung}_r{self.r_star}_s{self.seed}"

    @property
    def lam(self) -> float | None:
        return parse_rung(self.rung)[1]

    def meta(self) -> dict:
        cls, lam = parse_rung(self.rung)
        m = asdict(self)
        m.update({"task_id": self.task_id, "class": self.rung, "family": cls, "lambda": lam})
        return m


def task_specs(cfg: dict) -> list[TaskSpec]:
    """Every task of the config's grid, in a fixed order."""
    t = cfg["task"]
    rungs = list(t["rungs"]) + [rung_name("Lam", lam) for lam in t["lambdas"]]
    common = {
        k: t[k]
        for k in ("n", "d", "gain", "kappa", "beta", "sigma", "value_map", "n_train", "n_test")
    }
    return [
        TaskSpec(rung=r, r_star=rs, seed=s, base_seed=cfg["seed"], **common)
        for r in rungs
        for rs in t["r_star"]
        for s in t["seeds"]
    ]


def specs_of_rung(cfg: dict, rung: str) -> list[TaskSpec]:
    """The tasks of one rung, in :func:`task_specs` order."""
    return [s for s in task_specs(cfg) if s.rung == rung]


def chunks_of_rung(cfg: dict, rung: str) -> list[list[TaskSpec]]:
    """The rung's tasks in groups of train.tasks_per_job (one training job each)."""
    specs = specs_of_rung(cfg, rung)
    size = cfg["train"]["tasks_per_job"]
    return [specs[i : i + size] for i in range(0, len(specs), size)]


def specs_by_stream(cfg: dict) -> dict[str, list[TaskSpec]]:
    """The tasks of each random stream (base seed, r*, seed), named ``r{r*}_s{seed}``, each list in
    :func:`task_specs` order. The rungs of one stream whose kernels have one size share their
    inputs X (tasks/make.py): every rung when n = d, so a predict job of one stream factorises
    one X for all its rungs, where a job per rung would factorise each X once per rung."""
    groups: dict[str, list[TaskSpec]] = {}
    for spec in task_specs(cfg):
        groups.setdefault(f"r{spec.r_star}_s{spec.seed}", []).append(spec)
    return groups
