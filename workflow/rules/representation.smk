"""Representation bias (CrowS-Pairs, StereoSet, SEAT; Table 4) and SentenceDebias (§6.2, §6.6)."""


include: "helpers/representation.smk"


rule world_benchmarks:
    """CrowS-Pairs-, StereoSet- and SEAT-format sets and attribute words from the world's
    planted stereotypes (a seeded sample of their sentence variants)."""
    output:
        crows=f"{WORLD_BENCHMARKS}/crows_pairs.csv",
        stereoset=f"{WORLD_BENCHMARKS}/stereoset.json",
        words=f"{WORLD_BENCHMARKS}/attribute_words.json",
        seat=expand(f"{WORLD_BENCHMARKS}/seat/{{test}}.jsonl", test=_world_seat_tests()),
    params:
        settings=settings("seed", "attributes", "models.embedded.stereotypes.associations"),
    log:
        job_log("world_benchmarks"),
    benchmark:
        job_benchmark("world_benchmarks")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("world benchmarks --settings {params.settings:q}"
                  " --out-dir $(dirname {output.crows:q})")


rule sentdebias_subspace:
    """Each attribute's SentenceDebias subspace of a pretrained model (upstream, §6.2)."""
    input:
        unpack(subspace_inputs),
    output:
        expand(subspace_file("{{model}}", "{attribute}"), attribute=SUBSPACE_ATTRIBUTES),
    params:
        settings=settings("seed", "models.registry", "representation"),
        attributes=" ".join(SUBSPACE_ATTRIBUTES),
    log:
        job_log("sentdebias_subspace/{model}"),
    benchmark:
        job_benchmark("sentdebias_subspace/{model}")
    resources:
        **compute("score"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} representation subspace --model {wildcards.model}"
                  " --attribute {params.attributes} --stage upstream --words {input.words:q}"
                  " --corpus {input.corpus:q} --settings {params.settings:q} --out {output:q}")


rule representation_score:
    """CrowS-Pairs, StereoSet intrasentence and SEAT of one pretrained model, as it is and
    with each attribute's subspace attached (its rows of Table 4)."""
    input:
        unpack(representation_score_inputs),
    output:
        scores=representation_score_files("scores.json"),
        crows=representation_score_files("crows.csv"),
        stereoset=representation_score_files("stereoset.csv"),
        seat=representation_score_files("seat.csv"),
    params:
        settings=settings("models.registry", "representation"),
        variants=variant_args,
        out_dir=lambda wildcards: f"results/representation/scores/{wildcards.model}",
    log:
        job_log("representation_score/{model}"),
    benchmark:
        job_benchmark("representation_score/{model}")
    resources:
        **compute("score"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} representation score --model {wildcards.model}"
                  " --variant {params.variants} --crows {input.crows:q}"
                  " --stereoset {input.stereoset:q} --seat {input.seat:q}"
                  " --settings {params.settings:q} --out-dir {params.out_dir:q}")


rule representation_table:
    """Table 4: every model x variant x benchmark x attribute, and its long form."""
    input:
        representation_jobs(),
    output:
        csv="results/representation/table4.csv",
        md="results/representation/table4.md",
    log:
        job_log("representation_table"),
    benchmark:
        job_benchmark("representation_table")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("representation table --inputs {input:q}"
                  " --out-csv {output.csv:q} --out-md {output.md:q}")


for _root in RUN_ROOTS:

    rule:
        """downstream-SentDebias (§6.6): a fine-tuned model with its own subspace removed."""
        name:
            f"sentdebias_downstream{rule_suffix(_root)}"
        input:
            unpack(downstream_inputs),
        output:
            directory(f"{_root}/models/{{task}}/{{model}}/{{method}}"),
        wildcard_constraints:
            method=alternation(DOWNSTREAM_METHODS),
        params:
            settings=settings("seed", "models.registry", "representation"),
            attribute=lambda wildcards: sentdebias_of(wildcards.method)["attribute"],
        # as finetune: the sentiment models first, for BiasFinder
        priority: lambda wildcards: int(wildcards.task == "sentiment")
        log:
            job_log("sentdebias_downstream/{task}/{model}/{method}", _root),
        benchmark:
            job_benchmark("sentdebias_downstream/{task}/{model}/{method}", _root)
        resources:
            **compute("score"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("--gpus {resources.gpu} representation subspace --model {input.model:q}"
                      " --attribute {params.attribute} --stage downstream --words {input.words:q}"
                      " --corpus {input.corpus:q} --settings {params.settings:q} --out-dir {output:q}")
