rule provenance:
    """One file that traces every table and figure to its config hash, commit, versions, seeds."""
    input:
        get_artifacts(),
    output:
        json=report(f"{RUN}/provenance.json", **REPORT["provenance"]),
        # the report's metadata (workflow/report/workflow.rst includes it)
        rst=f"{RUN}/report_metadata.rst",
    log:
        f"{RUN}/logs/provenance.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/provenance.py"
