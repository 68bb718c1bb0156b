"""Data stage: the planted-bias world, verified downloads, cleaning and splitting, summary."""


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
        "logs/world_reviews.log",
    benchmark:
        "logs/benchmarks/world_reviews.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py world reviews --settings {params.settings:q}"
        " --out-dir $(dirname {output.train:q}) > {log:q} 2>&1"


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
        "logs/world_comments.log",
    benchmark:
        "logs/benchmarks/world_comments.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py world comments --settings {params.settings:q}"
        " --out-dir $(dirname {output.csv:q}) > {log:q} 2>&1"


rule world_sst:
    """An SST-fairness-shaped set (with the real file's defects) for the sentiment appendix."""
    output:
        csv=WORLD_FILES["sst"]["file"],
    params:
        settings=settings("seed", "world.sst"),
    log:
        "logs/world_sst.log",
    benchmark:
        "logs/benchmarks/world_sst.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py world sst --settings {params.settings:q}"
        " --out-dir $(dirname {output.csv:q}) > {log:q} 2>&1"


rule download:
    """Fetch one pinned file; refused unless it matches its sha256, git blob id or lock entry
    (a file nothing pins: only with downloads.allow_unpinned, recorded in the lock)."""
    output:
        f"{layout.DOWNLOADS}/{{dataset}}/{{name}}",
    params:
        settings=download_settings,
        args=download_command,
    log:
        "logs/download/{dataset}/{name}.log",
    benchmark:
        "logs/benchmarks/download/{dataset}/{name}.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py download {params.args}"
        " --out {output:q} > {log:q} 2>&1"


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
        "logs/prepare_imdb.log",
    benchmark:
        "logs/benchmarks/prepare_imdb.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py prepare imdb --format {params.fmt} --input {params.inputs}"
        " --out-dir $(dirname {output.train:q}) > {log:q} 2>&1"


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
        "logs/prepare_civil_comments.log",
    benchmark:
        "logs/benchmarks/prepare_civil_comments.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py prepare civil-comments --format {params.fmt} --input {params.inputs}"
        " {params.member} --settings {params.settings:q}"
        " --out-dir $(dirname {output.train:q}) > {log:q} 2>&1"


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
        "logs/prepare_sst.log",
    benchmark:
        "logs/benchmarks/prepare_sst.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py prepare sst --input {params.inputs}"
        " --out-dir $(dirname {output.data:q}) > {log:q} 2>&1"


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
        "logs/data_summary.log",
    benchmark:
        "logs/benchmarks/data_summary.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py summary --data-dir results/data --settings {params.settings:q}"
        " --out-json {output.json:q} --out-md {output.md:q} > {log:q} 2>&1"
