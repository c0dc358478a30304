"""Rule `tasks`: write every task file of one rung."""

from pathlib import Path

from entropic_bound.pipeline import write_tasks
from entropic_bound.runner import run


def main(sm):
    write_tasks(sm.config, sm.wildcards.rung, Path(sm.output[0]).parent)


run(main, snakemake)  # noqa: F821
