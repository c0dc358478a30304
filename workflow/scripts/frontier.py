"""Rule `frontier`: the predictability frontier grid."""

from entropic_bound.frontier import frontier_grid
from entropic_bound.io import provenance, write_table
from entropic_bound.runner import run


def main(sm):
    p = sm.config["predict"]
    df = frontier_grid(
        sm.config["frontier"], sm.config["seed"], taus=p["taus"], tol=p["tol"], clip=p["clip"]
    )
    write_table(df, sm.output[0], provenance(sm.config, rule="frontier"))


run(main, snakemake)  # noqa: F821
