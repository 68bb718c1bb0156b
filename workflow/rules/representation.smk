"""Representation bias (CrowS-Pairs, StereoSet, SEAT; Table 4) and SentenceDebias (§6.2, §6.6)."""


wildcard_constraints:
    variant="pretrained|sentdebias-(gender|race|religion)",
    attribute="gender|race|religion",


rule world_benchmarks:
    """CrowS-Pairs-, StereoSet- and SEAT-format sets and attribute words from the world's
    planted stereotypes (deterministic)."""
    output:
        crows=f"{WORLD_BENCHMARKS}/crows_pairs.csv",
        stereoset=f"{WORLD_BENCHMARKS}/stereoset.json",
        words=f"{WORLD_BENCHMARKS}/attribute_words.json",
        seat=expand(f"{WORLD_BENCHMARKS}/seat/{{test}}.jsonl", test=_world_seat_tests()),
    params:
        settings=settings("attributes", "models.embedded.stereotypes.associations"),
    log:
        "logs/world_benchmarks.log",
    benchmark:
        "logs/benchmarks/world_benchmarks.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py world benchmarks --settings {params.settings:q}"
        " --out-dir $(dirname {output.crows:q}) > {log:q} 2>&1"


rule sentdebias_subspace:
    """One attribute's SentenceDebias subspace of a pretrained model (upstream, §6.2)."""
    input:
        unpack(subspace_inputs),
    output:
        "results/representation/subspaces/{model}/{attribute}.safetensors",
    params:
        settings=settings("seed", "models.registry", "representation"),
    log:
        "logs/sentdebias_subspace/{model}/{attribute}.log",
    benchmark:
        "logs/benchmarks/sentdebias_subspace/{model}/{attribute}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py representation subspace --model {wildcards.model}"
        " --attribute {wildcards.attribute} --stage upstream --words {input.words:q}"
        " --corpus {input.corpus:q} --settings {params.settings:q} --out {output:q}"
        " > {log:q} 2>&1"


rule representation_score:
    """CrowS-Pairs, StereoSet intrasentence and SEAT of one pretrained model, as it is or
    with one attribute's subspace attached (one row of Table 4)."""
    input:
        unpack(representation_score_inputs),
    output:
        scores="results/representation/scores/{model}/{variant}/scores.json",
        crows="results/representation/scores/{model}/{variant}/crows.csv",
        stereoset="results/representation/scores/{model}/{variant}/stereoset.csv",
        seat="results/representation/scores/{model}/{variant}/seat.csv",
    params:
        settings=settings("models.registry", "representation"),
        subspace=subspace_arg,
    log:
        "logs/representation_score/{model}/{variant}.log",
    benchmark:
        "logs/benchmarks/representation_score/{model}/{variant}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py representation score --model {wildcards.model}"
        " --variant {wildcards.variant} {params.subspace} --crows {input.crows:q}"
        " --stereoset {input.stereoset:q} --seat {input.seat:q}"
        " --settings {params.settings:q} --out-dir $(dirname {output.scores:q}) > {log:q} 2>&1"


rule representation_table:
    """Table 4: every model x variant x benchmark x attribute, and its long form."""
    input:
        representation_jobs(),
    output:
        csv="results/representation/table4.csv",
        md="results/representation/table4.md",
    log:
        "logs/representation_table.log",
    benchmark:
        "logs/benchmarks/representation_table.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py representation table --inputs {input:q}"
        " --out-csv {output.csv:q} --out-md {output.md:q} > {log:q} 2>&1"


rule sentdebias_downstream:
    """downstream-SentDebias (§6.6): a fine-tuned model with its own subspace removed."""
    input:
        unpack(downstream_inputs),
    output:
        directory("results/models/{task}/{model}/{method}"),
    wildcard_constraints:
        method=alternation(DOWNSTREAM_METHODS),
    params:
        settings=settings("seed", "models.registry", "representation"),
        attribute=lambda wildcards: sentdebias_of(wildcards.method)["attribute"],
    log:
        "logs/sentdebias_downstream/{task}/{model}/{method}.log",
    benchmark:
        "logs/benchmarks/sentdebias_downstream/{task}/{model}/{method}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py representation subspace --model {input.model:q}"
        " --attribute {params.attribute} --stage downstream --words {input.words:q}"
        " --corpus {input.corpus:q} --settings {params.settings:q} --out-dir {output:q}"
        " > {log:q} 2>&1"
