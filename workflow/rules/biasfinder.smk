"""BiasFinder: word lists, parse once, templates, mutants, predictions, BTCs."""


include: "helpers/biasfinder.smk"


wildcard_constraints:
    characteristic="gender|occupation|country",
    corpus=re.escape(BF_CORPUS),


#: Scoring the mutants is the workflow's longest job per model, and the last step of its
#: chain but the tables: the steps up to it run as soon as they can (before equally ready
#: jobs of priority 0), so that on few cores they overlap the fine-tuning of other models
#: instead of running alone at the end.
BF_PRIORITY = 2


if BF_LISTS == "project":

    rule biasfinder_wordlists:
        """Name lists from gender-guesser's dictionary: N per gender, one per country and gender."""
        output:
            names="resources/wordlists/names.csv",
            countries="resources/wordlists/country_names.csv",
        params:
            settings=settings("seed", "biasfinder.names", "biasfinder.countries"),
        priority: BF_PRIORITY
        log:
            job_log("biasfinder_wordlists"),
        benchmark:
            job_benchmark("biasfinder_wordlists")
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("biasfinder wordlists --settings {params.settings:q}"
                      " --names-out {output.names:q} --countries-out {output.countries:q}")

else:

    rule biasfinder_wordlists:
        """BiasFinder's own word lists (occupations, gender nouns, names, names per country),
        parsed in their published formats and written in the project's."""
        input:
            original=biasfinder_original_files,
            pronouns=f"{BIASFINDER['wordlists']}/pronouns.csv",
        output:
            names="resources/wordlists/names.csv",
            countries="resources/wordlists/country_names.csv",
            lists=BF_WORDLISTS,
        params:
            lists=BF_LISTS_DIR,
        priority: BF_PRIORITY
        log:
            job_log("biasfinder_wordlists"),
        benchmark:
            job_benchmark("biasfinder_wordlists")
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("biasfinder import-lists"
                      " --input {input.original:q} --pronouns {input.pronouns:q}"
                      " --lists-out {params.lists:q} --names-out {output.names:q}"
                      " --countries-out {output.countries:q}")


rule biasfinder_parse:
    """Parse the corpus once (spaCy nlp.pipe) and resolve coreference; cached for all three."""
    input:
        corpus=biasfinder_corpus,
        lists=BF_WORDLISTS,
        lexicons=BF_LEXICONS,
        resolver=resolver_files,
        weights=coref_weights,
    output:
        "resources/biasfinder/{corpus}/parsed.spacy",
    params:
        settings=settings("biasfinder.spacy_model", "biasfinder.parse", "biasfinder.coref"),
        lists=wordlists_dir,
        weights=coref_weights_arg,
    threads: BIASFINDER["parse"]["n_process"]
    priority: BF_PRIORITY
    log:
        job_log("biasfinder_parse/{corpus}"),
    benchmark:
        job_benchmark("biasfinder_parse/{corpus}")
    resources:
        **compute("parse", gpu=BIASFINDER["coref"]["backend"] == "fastcoref"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} biasfinder parse --input {input.corpus:q}"
                  " --wordlists {params.lists:q} --settings {params.settings:q} {params.weights}"
                  " --out {output:q}")


rule coref_resolver:
    """The learned pronoun resolver: trained on GAP development and LitBank, its threshold
    chosen by cross-validation, scored on GAP validation; model and card (data hashes,
    features, scores)."""
    input:
        gap=lambda w: coref_data_files("gap"),
        litbank=lambda w: coref_data_files("litbank"),
    output:
        [f"{layout.COREF_RESOLVER}/{name}" for name in layout.RESOLVER_FILES],
    params:
        settings=settings("biasfinder.spacy_model", "seed"),
        litbank=lambda w, input: os.path.dirname(input.litbank[0]),
        out=lambda w, output: os.path.dirname(output[0]),
    log:
        job_log("coref_resolver"),
    benchmark:
        job_benchmark("coref_resolver")
    resources:
        **compute("parse"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} coref train --gap {input.gap[0]:q} --validation {input.gap[1]:q}"
                  " --litbank {params.litbank:q} --settings {params.settings:q}"
                  " --out {params.out:q}")


rule coref_gap:
    """One coreference backend scored on GAP validation as GAP's scorer does (M, F, B, O)."""
    input:
        gap=lambda w: coref_data_files("gap")[1],
        lists=BF_WORDLISTS,
        resolver=lambda w: gap_resolver_files() if w.backend in ("learned",
                                                                  "rules-resolver") else [],
        weights=lambda w: coref_weights() if w.backend == "neuralcoref" else [],
    output:
        f"{layout.COREF_GAP}/{{backend}}/gap_scores.json",
        f"{layout.COREF_GAP}/{{backend}}/gap_scores.md",
    wildcard_constraints:
        backend="|".join(GAP_BACKENDS),
    params:
        settings=settings("biasfinder.spacy_model", "biasfinder.coref"),
        lists=wordlists_dir,
        backend=lambda w: "rules" if w.backend == "rules-resolver" else w.backend,
        resolver=lambda w, input: (f"--resolver {shlex.quote(os.path.dirname(input.resolver[0]))}"
                                   if input.resolver else ""),
        model=lambda w, input: (
            f"--model {shlex.quote(input.weights[0] if input.weights else BIASFINDER['coref']['model'])}"
            if w.backend == "neuralcoref" else ""),
        out=lambda w, output: os.path.dirname(output[0]),
    log:
        job_log("coref_gap/{backend}"),
    benchmark:
        job_benchmark("coref_gap/{backend}")
    resources:
        **compute("parse", gpu=BIASFINDER["coref"]["backend"] == "fastcoref"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} coref evaluate --gap {input.gap:q} --backend {params.backend}"
                  " {params.resolver} {params.model} --wordlists {params.lists:q}"
                  " --settings {params.settings:q}"
                  " --out {params.out:q}")


rule biasfinder_templates:
    """Bias-targeting templates of one characteristic (BiasFinder Algorithms 1–3)."""
    input:
        parsed=rules.biasfinder_parse.output[0],
        lists=BF_WORDLISTS,
        lexicons=BF_LEXICONS,
    output:
        "results/biasfinder/{corpus}/templates/{characteristic}.parquet",
    params:
        settings=settings("seed", "biasfinder.spacy_model", "biasfinder.max_templates",
                          "biasfinder.occupation"),
        lists=wordlists_dir,
    priority: BF_PRIORITY
    log:
        job_log("biasfinder_templates/{corpus}/{characteristic}"),
    benchmark:
        job_benchmark("biasfinder_templates/{corpus}/{characteristic}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("biasfinder templates --parsed {input.parsed:q}"
                  " --wordlists {params.lists:q}"
                  " --characteristic {wildcards.characteristic} --settings {params.settings:q}"
                  " --out {output:q}")


rule biasfinder_mutants:
    """Every mutant of every template, one class per mutant (BiasFinder §4–5)."""
    input:
        templates=rules.biasfinder_templates.output[0],
        names=rules.biasfinder_wordlists.output.names,
        countries=rules.biasfinder_wordlists.output.countries,
        lists=BF_WORDLISTS,
    output:
        "results/biasfinder/{corpus}/mutants/{characteristic}.parquet",
    params:
        settings=settings("biasfinder.max_names"),
        lists=wordlists_dir,
    priority: BF_PRIORITY
    log:
        job_log("biasfinder_mutants/{corpus}/{characteristic}"),
    benchmark:
        job_benchmark("biasfinder_mutants/{corpus}/{characteristic}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("biasfinder mutants --templates {input.templates:q}"
                  " --names {input.names:q} --country-names {input.countries:q}"
                  " --wordlists {params.lists:q}"
                  " --settings {params.settings:q} --out {output:q}")


for _root in RUN_ROOTS:

    rule:
        """Score every characteristic's mutants with each tested method's fine-tuned sentiment
        model (one job per model: one process, each method's model loaded in turn)."""
        name:
            f"biasfinder_predict{rule_suffix(_root)}"
        input:
            models=[f"{_root}/models/sentiment/{{model}}/{m}" for m in BF_METHODS],
            mutants=expand(
                "results/biasfinder/{{corpus}}/mutants/{characteristic}.parquet",
                characteristic=BF_CHARACTERISTICS,
            ),
            leakage=lambda w: biasfinder_gates(),  # no model is scored on its training texts
        output:
            expand(
                under(_root, "biasfinder/{{corpus}}/predictions/{{model}}/{method}/{characteristic}.parquet"),
                method=BF_METHODS,
                characteristic=BF_CHARACTERISTICS,
            ),
        priority: BF_PRIORITY
        log:
            job_log("biasfinder_predict/{corpus}/{model}", _root),
        benchmark:
            job_benchmark("biasfinder_predict/{corpus}/{model}", _root)
        resources:
            **compute("score"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("--gpus {resources.gpu} predict --model {input.models:q}"
                      " --input {input.mutants:q} --out {output:q}")


for _root in RUN_ROOTS:

    rule:
        """Bias-uncovering test cases of every characteristic: same template, different classes,
        different labels (one job per model and method)."""
        name:
            f"biasfinder_btc{rule_suffix(_root)}"
        input:
            templates=expand(
                "results/biasfinder/{{corpus}}/templates/{characteristic}.parquet",
                characteristic=BF_CHARACTERISTICS,
            ),
            mutants=expand(
                "results/biasfinder/{{corpus}}/mutants/{characteristic}.parquet",
                characteristic=BF_CHARACTERISTICS,
            ),
            predictions=expand(
                under(_root, "biasfinder/{{corpus}}/predictions/{{model}}/{{method}}/{characteristic}.parquet"),
                characteristic=BF_CHARACTERISTICS,
            ),
        output:
            pairs=expand(
                under(_root, "biasfinder/{{corpus}}/btc/{{model}}/{{method}}/{characteristic}.parquet"),
                characteristic=BF_CHARACTERISTICS,
            ),
            counts=expand(
                under(_root, "biasfinder/{{corpus}}/btc/{{model}}/{{method}}/{characteristic}.counts.parquet"),
                characteristic=BF_CHARACTERISTICS,
            ),
            summary=expand(
                under(_root, "biasfinder/{{corpus}}/btc/{{model}}/{{method}}/{characteristic}.json"),
                characteristic=BF_CHARACTERISTICS,
            ),
        params:
            settings=settings("biasfinder.threshold", "biasfinder.lists", "biasfinder.occupation"),
            characteristics=" ".join(BF_CHARACTERISTICS),
        log:
            job_log("biasfinder_btc/{corpus}/{model}/{method}", _root),
        benchmark:
            job_benchmark("biasfinder_btc/{corpus}/{model}/{method}", _root)
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("biasfinder btc --templates {input.templates:q}"
                      " --mutants {input.mutants:q} --predictions {input.predictions:q}"
                      " --characteristic {params.characteristics}"
                      " --model-name {wildcards.model} --method {wildcards.method}"
                      " --settings {params.settings:q} --out-pairs {output.pairs:q}"
                      " --out-counts {output.counts:q} --out-summary {output.summary:q}")


rule biasfinder_annotation:
    """RQ2: a Cochran-sized random sample of each characteristic's BTCs for annotators."""
    input:
        pairs=rules.biasfinder_btc.output.pairs,
        mutants=expand(
            "results/biasfinder/{{corpus}}/mutants/{characteristic}.parquet",
            characteristic=BF_CHARACTERISTICS,
        ),
    output:
        sample="results/biasfinder/{corpus}/annotation/{model}/{method}/sample.csv",
        key="results/biasfinder/{corpus}/annotation/{model}/{method}/key.csv",
        guide="results/biasfinder/{corpus}/annotation/{model}/{method}/guide.md",
    params:
        settings=settings("seed", "biasfinder.annotation"),
    log:
        job_log("biasfinder_annotation/{corpus}/{model}/{method}"),
    benchmark:
        job_benchmark("biasfinder_annotation/{corpus}/{model}/{method}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("biasfinder annotate sample --pairs {input.pairs:q}"
                  " --mutants {input.mutants:q}"
                  " --settings {params.settings:q} --out {output.sample:q} --key {output.key:q}"
                  " --guide {output.guide:q}")


for _root in RUN_ROOTS:

    rule:
        """Table 4 of BiasFinder per model and method: templates, mutants, BTCs, BTC rates."""
        name:
            f"biasfinder_table{rule_suffix(_root)}"
        input:
            biasfinder_jobs(
                under(_root, "biasfinder/{corpus}/btc/{model}/{method}/{characteristic}.json")
            ),
        output:
            json=f"{_root}/biasfinder/{{corpus}}/table4.json",
            md=f"{_root}/biasfinder/{{corpus}}/table4.md",
            csv=f"{_root}/biasfinder/{{corpus}}/table4.csv",
        log:
            job_log("biasfinder_table/{corpus}", _root),
        benchmark:
            job_benchmark("biasfinder_table/{corpus}", _root)
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("biasfinder table --inputs {input:q}"
                      " --out-json {output.json:q} --out-md {output.md:q} --out-csv {output.csv:q}")
