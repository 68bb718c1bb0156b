"""Analysis: the planted-bias controls, the cross-study, headline metrics for DVC
and the run record. Rules only call `biasrepro analysis ...`; outputs marked report() make
up `snakemake --report` (captions in workflow/report/)."""


include: "helpers/analysis.smk"


rule analysis_controls:
    """Planted truth of the embedded world against what this run measured, pass/fail."""
    input:
        **controls_inputs(),
    output:
        csv=report(
            f"{ANALYSIS}/controls.csv",
            caption="../report/controls.rst",
            category="0. Planted-bias controls",
        ),
        md=f"{ANALYSIS}/controls.md",
        json=f"{ANALYSIS}/controls.json",
    params:
        args=controls_args,
        settings=settings("identities", "preprocess.civil_comments.identity_threshold",
                          "perturbation.restratify.target_ratio"),
    log:
        job_log("analysis/controls"),
    benchmark:
        job_benchmark("analysis/controls")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("analysis controls {params.args}"
                  " --settings {params.settings:q} --out-dir $(dirname {output.csv:q})")


rule paper_tables:
    """Each paper table in its own shape: ours, published (published/), the difference, or
    why a cell cannot be produced."""
    input:
        **paper_table_inputs(),
    output:
        **paper_table_outputs(),
    params:
        args=lambda wildcards, input: cli_options(
            input, ["biasfinder", "toxicity", "sentiment", "representation", "classification"]
        ),
        seeds=seeds_arg(),
        settings=paper_table_settings(),
    log:
        job_log("analysis/paper_tables"),
    benchmark:
        job_benchmark("analysis/paper_tables")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("analysis paper-tables --published published"
                  " {params.args} {params.seeds} --settings {params.settings:q}"
                  " --out-dir $(dirname {output.index:q})")


rule seed_tables:
    """Every table of the training-to-metrics matrix across fine-tuning seeds (mean, sd,
    range) and the papers' claims with the share of seeds in which each holds."""
    input:
        **seed_table_inputs(),
    output:
        **seed_table_outputs(),
    params:
        args=lambda wildcards, input: cli_options(
            input, ["toxicity", "sentiment", "biasfinder", "classification", "cross_study"]
        ),
        seeds=shlex.join(["--seeds", *map(str, SEEDS)]),
    log:
        job_log("analysis/seed_tables"),
    benchmark:
        job_benchmark("analysis/seed_tables")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("analysis seeds {params.seeds} {params.args}"
                  " --out-dir $(dirname {output.claims_csv:q})")


rule figures:
    """PNG and SVG: training groups before/after each data method, fairness gaps with
    intervals, correlation heatmaps, BiasFinder BTC rates."""
    input:
        **figure_inputs(),
    output:
        **figure_outputs(),
    params:
        args=figure_args,
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    log:
        job_log("analysis/figures"),
    benchmark:
        job_benchmark("analysis/figures")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("analysis figures {params.args}"
                  " --out-dir {params.out_dir:q}")


for _root in RUN_ROOTS:

    rule:
        """BiasFinder BTC rates of every model x method against its group-fairness gaps (new)."""
        name:
            f"cross_study{rule_suffix(_root)}"
        input:
            unpack(cross_study_inputs),
        output:
            **cross_study_outputs(_root),
        params:
            args=cross_study_args,
            settings=settings("fairness.threshold", "fairness.bootstrap.confidence",
                              "fairness.attributes"),
        log:
            job_log("analysis/cross_study", _root),
        benchmark:
            job_benchmark("analysis/cross_study", _root)
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("analysis cross-study {params.args}"
                      " --settings {params.settings:q} --out-dir $(dirname {output.btc:q})")


rule analysis_metrics:
    """The run's headline numbers in one JSON, for `dvc metrics show/diff`."""
    input:
        classification="results/metrics/classification.json",
        fairness=[f"results/{task}/fairness/report.json" for task in TASKS_RUN],
        controls=rules.analysis_controls.output.json,
        cross_study=rules.cross_study.output.summary,
        **{k: v for k, v in analysis_inputs().items() if k in ("biasfinder", "representation")},
    output:
        "results/metrics.json",
    params:
        args=lambda wildcards, input: cli_options(input, ["biasfinder", "representation"]),
    log:
        job_log("analysis/metrics"),
    benchmark:
        job_benchmark("analysis/metrics")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("analysis metrics"
                  " --classification {input.classification:q} --fairness {input.fairness:q}"
                  " --controls {input.controls:q} --cross-study {input.cross_study:q}"
                  " {params.args} --out {output:q}")


rule run_record:
    """results/REPRODUCTION.md: versions, device, config and data hashes, comparison tables;
    rewritten whenever results, versions or the device change (they are its params)."""
    input:
        data=[*data_files(), *resolver_files()],
        tables=[
            rules.analysis_controls.output.md,
            rules.paper_tables.output.index,
            *paper_table_markdown(),
            rules.cross_study.output.md,
            *(expand(f"{layout.COREF_GAP}/{{backend}}/gap_scores.md", backend=GAP_BACKENDS)
              if "gap" in config["datasets"] else []),
        ],
    output:
        report(
            "results/REPRODUCTION.md",
            caption="../report/record.rst",
            category="5. Run record",
        ),
    params:
        environment=run_environment(),
        config_sha256=CONFIG_SHA256,
        configfiles=" ".join(shlex.quote(os.path.relpath(f)) for f in workflow.configfiles),
        settings=settings("seed", "biasfinder.coref"),
    log:
        job_log("analysis/run_record"),
    benchmark:
        job_benchmark("analysis/run_record")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("analysis record --config-sha256 {params.config_sha256}"
                  " --configfiles {params.configfiles} --data {input.data:q} --tables {input.tables:q}"
                  " --settings {params.settings:q} --out {output:q}")
