# Verdict by scale (workflow/rules/scale.smk): config/scale/scales.yaml maps d to a config.
# Included by common.smk; no rules here.
from entropic_bound.config.load import load_scale_list, scale_study_asked  # noqa: E402
from entropic_bound.config.relations import SCALE_RUN_NAME  # noqa: E402

SCALE_LIST = in_clone(config.get("scale_list", "config/scale/scales.yaml"))
SCALE_DIR = f"results/{SCALE_RUN_NAME}"


# `snakemake scale` checks the list and every config it names here, before any job (a bad one
# would otherwise fail inside the study after the scales before it had run). Any other run
# leaves the list alone: a user who edits config/config.yaml (the list's d = 16 entry) to
# another d must still be able to run it. A run of the study (a module, IS_SCALE_RUN) has none.
SCALES = {}
if not IS_SCALE_RUN and scale_study_asked(sys.argv, config):
    SCALES = {
        s["d"]: s
        for s in config_or_exit(
            load_scale_list,
            SCALE_LIST,
            resolve=in_clone,
            base=EB_ROOT / "config" / "config.yaml",
            claims=CLAIMS,
            own=config,
        )
    }

#: the scale study's own rules (workflow/rules/scale.smk): neither builds RUN
SCALE_RULES = ("scale", "scale_table")


def scale_module(d: int) -> str:
    """The module of one scale's run (scale.smk), and the prefix of its rules' names."""
    return f"scale_d{d}"


#: the directories of the runs the study's modules build (a scale that is RUN is not one)
SCALE_RUN_DIRS = tuple(
    f"results/{s['run_name']}/" for s in SCALES.values() if not s["own"]
)


def is_scale_target(target: str) -> bool:
    """Whether a target is the scale study's: its rules, a rule of one of its modules
    (scale_d<d>_<rule>), its files or those of a run of its modules."""
    return (
        target in SCALE_RULES
        or re.match(r"scale_d\d+_", target) is not None
        or target.startswith((f"{SCALE_DIR}/", *SCALE_RUN_DIRS))
    )


def scale_reproduce_all(d: int) -> str:
    """One scale's reproduce-all: its module's, or this workflow's own when the scale's config
    is this invocation's (the study then builds RUN with the workflow's rules)."""
    return "reproduce-all" if SCALES[d]["own"] else f"{scale_module(d)}_reproduce-all"


def scale_run_files(wildcards) -> list[str]:
    """Every file of every scale's run: the inputs of its reproduce-all (an input function, as
    the workflow's own reproduce-all is defined after scale.smk)."""
    return [
        f for d in sorted(SCALES) for f in getattr(rules, scale_reproduce_all(d)).input
    ]
