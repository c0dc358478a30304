rule provenance:
    """One file that traces every table and figure to its config hash, commit, versions, seeds."""
    input:
        get_artifacts(),
    output:
        f"{RUN}/provenance.json",
    log:
        f"{RUN}/logs/provenance.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/provenance.py"
