"""Data stage: the planted-bias world, verified downloads, cleaning and splitting, summary."""


include: "helpers/data.smk"


rule world_reviews:
    """IMDB-shaped reviews with a planted identity–label association (train split only)."""
    output:
        train=WORLD_FILES["imdb"]["train"],
        test=WORLD_FILES["imdb"]["test"],
        annotations="resources/world/imdb/annotations.parquet",
        truth="resources/world/imdb/ground_truth.json",
    params:
        settings=settings("seed", "world.reviews"),
    log:
        job_log("world_reviews"),
    benchmark:
        job_benchmark("world_reviews")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("world reviews --settings {params.settings:q}"
                  " --out-dir $(dirname {output.train:q})")


rule world_comments:
    """Civil-Comments-shaped comments with per-identity counts and toxic ratios from config."""
    output:
        csv=WORLD_FILES["civil_comments"]["file"],
        truth="resources/world/civil_comments/ground_truth.json",
    params:
        settings=settings(
            "seed", "identities", "attributes", "preprocess.civil_comments", "world.comments"
        ),
    log:
        job_log("world_comments"),
    benchmark:
        job_benchmark("world_comments")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("world comments --settings {params.settings:q}"
                  " --out-dir $(dirname {output.csv:q})")


rule world_sst:
    """An SST-fairness-shaped set (with the real file's defects) for the sentiment appendix."""
    output:
        csv=WORLD_FILES["sst"]["file"],
    params:
        settings=settings("seed", "world.sst"),
    log:
        job_log("world_sst"),
    benchmark:
        job_benchmark("world_sst")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("world sst --settings {params.settings:q}"
                  " --out-dir $(dirname {output.csv:q})")


rule download:
    """Fetch one pinned file; refused unless it matches its sha256, git blob id or lock entry
    (a file nothing pins: only with downloads.allow_unpinned, recorded in the lock)."""
    output:
        f"{layout.DOWNLOADS}/{{dataset}}/{{name}}",
    params:
        settings=download_settings,
        args=download_command,
    log:
        job_log("download/{dataset}/{name}"),
    benchmark:
        job_benchmark("download/{dataset}/{name}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("download {params.args}"
                  " --out {output:q}")


rule prepare_imdb:
    """IMDB: HTML tags become spaces, entities unescaped; the official 25k/25k split kept."""
    input:
        **raw_files("imdb"),
    output:
        train=TASK_DATA["sentiment"]["train"],
        test=TASK_DATA["sentiment"]["test"],
        stats="results/data/imdb/stats.json",
    params:
        settings=settings("datasets.imdb"),
        fmt=raw_format("imdb"),
        inputs=cli_inputs,
    log:
        job_log("prepare_imdb"),
    benchmark:
        job_benchmark("prepare_imdb")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("prepare imdb --format {params.fmt} --input {params.inputs}"
                  " --out-dir $(dirname {output.train:q})")


rule prepare_civil_comments:
    """Civil Comments (§4.1): human identity labels, cleaned text, stratified 40/30/30 split."""
    input:
        **raw_files("civil_comments"),
    output:
        train=TASK_DATA["toxicity"]["train"],
        validation=TASK_DATA["toxicity"]["validation"],
        test=TASK_DATA["toxicity"]["test"],
        fairness=FAIRNESS_SOURCE["toxicity"],
        stats="results/data/civil_comments/identity_stats.json",
    params:
        settings=settings("seed", "identities", "preprocess.civil_comments", "datasets.civil_comments"),
        fmt=raw_format("civil_comments"),
        member=member_arg("civil_comments"),
        inputs=cli_inputs,
    log:
        job_log("prepare_civil_comments"),
    benchmark:
        job_benchmark("prepare_civil_comments")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("prepare civil-comments --format {params.fmt} --input {params.inputs}"
                  " {params.member} --settings {params.settings:q}"
                  " --out-dir $(dirname {output.train:q})")


rule prepare_sst:
    """SST sentiment-fairness set: malformed rows repaired, mojibake fixed, labels binarised."""
    input:
        **raw_files("sst"),
    output:
        data=FAIRNESS_SOURCE["sentiment"],
        stats="results/data/sst/stats.json",
    params:
        settings=settings("datasets.sst"),
        inputs=cli_inputs,
    log:
        job_log("prepare_sst"),
    benchmark:
        job_benchmark("prepare_sst")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("prepare sst --input {params.inputs}"
                  " --out-dir $(dirname {output.data:q})")


rule data_summary:
    """Rows, labels and per-identity counts of every prepared dataset (JSON + Markdown)."""
    input:
        rules.prepare_imdb.output,
        rules.prepare_civil_comments.output,
        rules.prepare_sst.output,
    output:
        json="results/data/summary.json",
        md="results/data/summary.md",
    params:
        settings=settings("attributes", "identities", "preprocess.civil_comments"),
    log:
        job_log("data_summary"),
    benchmark:
        job_benchmark("data_summary")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("summary --data-dir results/data --settings {params.settings:q}"
                  " --out-json {output.json:q} --out-md {output.md:q}")
