# Verdict by scale (workflow/rules/scale.smk): config/scale/scales.yaml maps d to a config.
# Included by common.smk; no rules here.
from entropic_bound.config.load import load_scale_list, scale_study_asked  # noqa: E402
from entropic_bound.config.relations import SCALE_RUN_NAME  # noqa: E402

SCALE_LIST = in_clone(config.get("scale_list", "config/scale/scales.yaml"))
SCALE_DIR = f"results/{SCALE_RUN_NAME}"


# `snakemake scale` checks the list and every config it names here, before any job (a bad one
# would otherwise fail inside the study after the scales before it had run). Any other run
# leaves the list alone: a user who edits config/config.yaml (the list's d = 16 entry) to
# another d must still be able to run it.
SCALES = {}
if scale_study_asked(sys.argv, config):
    SCALES = {
        s["d"]: s
        for s in config_or_exit(
            load_scale_list,
            SCALE_LIST,
            resolve=in_clone,
            base=EB_ROOT / "config" / "config.yaml",
            claims=CLAIMS,
        )
    }


def scale_config(wildcards):
    return SCALES[int(wildcards.d)]["config"]


def scale_run_dir(wildcards):
    return f"results/{SCALES[int(wildcards.d)]['run_name']}"
