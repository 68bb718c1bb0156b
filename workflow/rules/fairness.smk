"""The toxicity-fairness study and its sentiment appendix: fairness sets,
debiased training sets and the study's tables (rules predict_{task} score the fairness sets)."""


include: "helpers/fairness.smk"


wildcard_constraints:
    kind="perturbed|perturbed_stratified",


rule imdb_gendered:
    """IMDB-gendered (appendix, Table 13 keywords): male/female reviews, split 40/30/30;
    train and validation from IMDB train, test from IMDB test (no review both fitted and
    scored)."""
    input:
        train=TASK_DATA["sentiment"]["train"],
        test=TASK_DATA["sentiment"]["test"],
    output:
        train=TRAINING_DATA["sentiment"]["gendered"],
        validation=VALIDATION_DATA["sentiment"]["gendered"],
        test=layout.IMDB_GENDERED_SETS["imdb-gendered-test"],
        stats="results/sentiment/imdb_gendered/stats.json",
    params:
        settings=settings("seed", "preprocess.imdb_gendered"),
    log:
        job_log("imdb_gendered"),
    benchmark:
        job_benchmark("imdb_gendered")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("perturb imdb-gendered"
                  " --train {input.train:q} --test {input.test:q} --settings {params.settings:q}"
                  " --out-dir $(dirname {output.train:q})")


rule imdb_gendered_perturbed_test:
    """Perturbed-IMDB-gendered's test split (appendix): the test reviews and each one's
    counterfactual into the other gender, by the code that perturbs the training set."""
    input:
        test=layout.IMDB_GENDERED_SETS["imdb-gendered-test"],
        lexicon=PERTURBATION["lexicon"],
    output:
        data=layout.IMDB_GENDERED_SETS["imdb-gendered-perturbed-test"],
        stats="results/sentiment/imdb_gendered/test_perturbed.json",
    params:
        settings=settings("identities", "attributes",
                          "preprocess.civil_comments.identity_threshold",
                          "perturbation.spacy_model", "fairness.attributes.sentiment"),
    log:
        job_log("imdb_gendered_perturbed_test"),
    benchmark:
        job_benchmark("imdb_gendered_perturbed_test")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("perturb training --task sentiment"
                  " --input {input.test:q} --lexicon {input.lexicon:q} --identity-column gender"
                  " --settings {params.settings:q} --out {output.data:q} --stats {output.stats:q}")


rule fairness_sets:
    """The original fairness set and its balanced version: every sentence in every group of
    its attribute (§5.1; the appendix's perturbed SST set)."""
    input:
        data=lambda w: FAIRNESS_SOURCE[w.task],
        lexicon=PERTURBATION["lexicon"],
    output:
        original="results/{task}/fairness/original.parquet",
        balanced="results/{task}/fairness/balanced.parquet",
        stats="results/{task}/fairness/stats.json",
    params:
        settings=fairness_set_settings,
        column=lambda w: FAIRNESS_IDENTITY[w.task],
    log:
        job_log("fairness_sets/{task}"),
    benchmark:
        job_benchmark("fairness_sets/{task}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("perturb fairness-sets --task {wildcards.task}"
                  " --input {input.data:q} --identity-column {params.column} --lexicon {input.lexicon:q}"
                  " --settings {params.settings:q} --out-original {output.original:q}"
                  " --out-balanced {output.balanced:q} --stats {output.stats:q}")


rule restratify_training:
    """Synthetic positives (nlpaug word substitution) until every identity group's positive
    ratio reaches the target (§6.4)."""
    input:
        unpack(restratify_inputs),
    output:
        data=TRAINING_DATA["toxicity"]["stratified"],
        stats="results/toxicity/training/stratified.json",
    params:
        settings=restratify_settings,
        model=restratify_model_arg,
    log:
        job_log("restratify_training"),
    benchmark:
        job_benchmark("restratify_training")
    resources:
        **compute("score"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} perturb restratify --input {input.train:q}"
                  " --lexicon {input.lexicon:q} {params.model} --settings {params.settings:q}"
                  " --out {output.data:q} --stats {output.stats:q}")


rule perturb_training:
    """Counterfactuals of every single-identity training row into each other group of its
    attribute (§6.6): the perturbed and the perturbed re-stratified training sets."""
    input:
        unpack(perturb_inputs),
    output:
        data="results/{task}/training/{kind}.parquet",
        stats="results/{task}/training/{kind}.json",
    params:
        settings=perturb_settings,
        column=lambda w: "--identity-column gender" if w.task == "sentiment" else "",
    log:
        job_log("perturb_training/{task}/{kind}"),
    benchmark:
        job_benchmark("perturb_training/{task}/{kind}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("perturb training --task {wildcards.task}"
                  " --input {input.train:q} --lexicon {input.lexicon:q} {params.column}"
                  " --settings {params.settings:q} --out {output.data:q} --stats {output.stats:q}")


for _root in RUN_ROOTS:

    rule:
        """Group fairness with bootstrap intervals, Borkan AUCs, SenseScore, dataset bias of
        every training set, and the Pearson tables (§5-7, Table 9) for one task."""
        name:
            f"fairness_report{rule_suffix(_root)}"
        input:
            unpack(fairness_report_inputs),
        output:
            report=f"{_root}/{{task}}/fairness/report.json",
            gaps=f"{_root}/{{task}}/fairness/gaps.csv",
            gaps_md=f"{_root}/{{task}}/fairness/gaps.md",
            groups=f"{_root}/{{task}}/fairness/group_metrics.csv",
            borkan=f"{_root}/{{task}}/fairness/borkan.csv",
            sense=f"{_root}/{{task}}/fairness/sensescore.csv",
            data_bias=f"{_root}/{{task}}/fairness/dataset_bias.csv",
            data_groups=f"{_root}/{{task}}/fairness/training_groups.csv",
            correlations=f"{_root}/{{task}}/fairness/correlations.csv",
            correlations_md=f"{_root}/{{task}}/fairness/correlations.md",
            models=f"{_root}/{{task}}/fairness/models.csv",
        params:
            settings=fairness_report_settings,
            training=fairness_training_args,
            representation=representation_arg,
        log:
            job_log("fairness_report/{task}", _root),
        benchmark:
            job_benchmark("fairness_report/{task}", _root)
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("fairness report --task {wildcards.task}"
                      " --original {input.set_original:q} --balanced {input.set_balanced:q}"
                      " --predictions {input.predictions:q} --test-predictions {input.tests:q}"
                      " --training {params.training}"
                      " {params.representation} --settings {params.settings:q} --out-dir $(dirname {output.report:q})")
