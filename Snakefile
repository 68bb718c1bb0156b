"""biasrepro: BiasFinder and the toxicity bias/fairness study as one Snakemake workflow.

    snakemake --cores all                                   # embedded default (offline, CPU)
    snakemake --cores all --configfile config/paper.yaml    # the papers' real data and models
    snakemake --report results/report.html                  # the HTML report of a finished run
    snakemake --workflow-profile profiles/slurm --configfile config/paper.yaml my-cluster.yaml
                                                            # every job an sbatch job (README)

The config is validated against workflow/schemas/config.schema.yaml at load time; the
steps live in workflow/rules/*.smk and call the biasrepro command line (src/biasrepro).
Snakemake finds this file and profiles/default (the local profile) from the repository root.
"""

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


containerized: "docker://ghcr.io/biasrepro/biasrepro:0.1.0"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/biasfinder.smk"
include: "workflow/rules/fairness.smk"
include: "workflow/rules/leakage.smk"
include: "workflow/rules/representation.smk"
include: "workflow/rules/analysis.smk"


from biasrepro.dvc import interrupted_record  # noqa: E402  (src/ is on the path: common.smk)

UNFINISHED_RECORD = interrupted_record(Path(workflow.basedir))
if UNFINISHED_RECORD is not None:
    print(f"WARNING: {UNFINISHED_RECORD}", file=sys.stderr)


# Jobs that only gather finished tables into others and take seconds: on a cluster they run
# where Snakemake runs rather than waiting in the queue (a local run is unaffected).
localrules:
    all,
    data_summary,
    model_metrics,
    representation_table,
    biasfinder_table,
    analysis_controls,
    paper_tables,
    seed_tables,
    figures,
    cross_study,
    analysis_metrics,
    run_record,


rule all:
    default_target: True
    input:
        "results/data/summary.json",
        "results/data/summary.md",
        "results/metrics/classification.json",
        "results/metrics/classification.md",
        expand("results/biasfinder/{corpus}/table4.{ext}", corpus=BF_CORPUS, ext=["json", "md", "csv"]),
        expand(f"{layout.COREF_GAP}/{{backend}}/gap_scores.md", backend=GAP_BACKENDS)
        if "gap" in config["datasets"]
        else [],
        biasfinder_annotation_jobs("results/biasfinder/{corpus}/annotation/{model}/{method}/sample.csv"),
        fairness_report_jobs(),
        expand("results/{task}/leakage.{ext}", task=TASK_METHODS, ext=["json", "md"]),
        expand("results/representation/table4.{ext}", ext=["csv", "md"])
        if REPRESENTATION["models"]
        else [],
        rules.analysis_controls.output,
        rules.paper_tables.output,
        rules.seed_tables.output,
        rules.figures.output,
        rules.cross_study.output,
        rules.analysis_metrics.output,
        rules.run_record.output,


# A run killed while recording itself in DVC (the onsuccess hook below) left dvc.lock
# incomplete, and a resumed run with nothing to do would end before its onsuccess hook: this
# target, a job without outputs, always runs, so the resumed run records itself.
if UNFINISHED_RECORD is not None:

    rule finish_dvc_record:
        """The whole run's targets, then the DVC record the last run did not finish."""
        default_target: True
        localrule: True
        input:
            rules.all.input,
        log:
            job_log("finish_dvc_record"),
        # CONDA_ENV, as seen from this file
        conda:
            "envs/biasrepro.yaml"
        shell:
            "echo 'all results are complete; the run records itself in DVC when it ends' > {log:q}"


# A successful run records itself in DVC: dvc.lock and the DVC cache then hold every stage's
# deps and outputs, so `dvc status` is clean and `dvc push` has the results (docs/dvc.md).
# Outside a DVC project in a git work tree, or for another configuration than dvc.yaml's,
# it says why it records nothing; a failure to record fails the run with its message.
onsuccess:
    import subprocess
    import sys
    from pathlib import Path

    from snakemake.exceptions import WorkflowError

    script = Path(workflow.basedir) / "workflow" / "scripts" / "biasrepro.py"
    record = [sys.executable, script, "dvc-record",
              "--run-configfiles", *map(str, workflow.config_settings.configfiles)]
    if workflow.config_settings.config:
        record.append("--run-overrides")
    if subprocess.run(record).returncode != 0:
        raise WorkflowError("recording the run in DVC failed (the error is above); the "
                            "results are complete: retry with `biasrepro dvc-record`")
