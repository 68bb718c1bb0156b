"""biasrepro: BiasFinder and the toxicity bias/fairness study as one Snakemake workflow.

    snakemake --cores all                                   # embedded default (offline, CPU)
    snakemake --cores all --configfile config/paper.yaml    # the papers' real data and models
    snakemake --report results/report.html                  # the HTML report of a finished run
    snakemake --workflow-profile workflow/profiles/slurm --configfile config/paper.yaml my-cluster.yaml
                                                            # every job an sbatch job (README)

The config is validated against workflow/schemas/config.schema.yaml at load time; the
steps live in workflow/rules/*.smk and call the biasrepro command line (src/biasrepro).
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
        biasfinder_annotation_jobs("results/biasfinder/{corpus}/annotation/{model}/{method}/sample.csv"),
        fairness_report_jobs(),
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
