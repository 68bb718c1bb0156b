"""BiasFinder: word lists, parse once, templates, mutants, predictions, BTCs (issue #4)."""


wildcard_constraints:
    characteristic="gender|occupation|country",
    corpus=re.escape(BF_CORPUS),


rule biasfinder_wordlists:
    """Name lists from gender-guesser's dictionary: N per gender, one per country and gender."""
    output:
        names="resources/wordlists/names.csv",
        countries="resources/wordlists/country_names.csv",
    params:
        settings=settings("seed", "biasfinder.names", "biasfinder.countries"),
    log:
        "logs/biasfinder_wordlists.log",
    benchmark:
        "logs/benchmarks/biasfinder_wordlists.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder wordlists --settings {params.settings:q}"
        " --names-out {output.names:q} --countries-out {output.countries:q} > {log:q} 2>&1"


rule biasfinder_parse:
    """Parse the corpus once (spaCy nlp.pipe) and resolve coreference; cached for all three."""
    input:
        corpus=biasfinder_corpus,
        lists=BF_WORDLISTS,
    output:
        "resources/biasfinder/{corpus}/parsed.spacy",
    params:
        settings=settings("biasfinder.spacy_model", "biasfinder.parse", "biasfinder.coref"),
        lists=wordlists_dir,
    threads: BIASFINDER["parse"]["n_process"]
    log:
        "logs/biasfinder_parse/{corpus}.log",
    benchmark:
        "logs/benchmarks/biasfinder_parse/{corpus}.tsv"
    resources:
        gpu=GPU * int(BIASFINDER["coref"]["backend"] == "fastcoref"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder parse --input {input.corpus:q}"
        " --wordlists {params.lists:q} --settings {params.settings:q} --out {output:q}"
        " > {log:q} 2>&1"


rule biasfinder_templates:
    """Bias-targeting templates of one characteristic (BiasFinder Algorithms 1–3)."""
    input:
        parsed=rules.biasfinder_parse.output[0],
        lists=BF_WORDLISTS,
    output:
        "results/biasfinder/{corpus}/templates/{characteristic}.parquet",
    params:
        settings=settings("seed", "biasfinder.spacy_model", "biasfinder.max_templates"),
        lists=wordlists_dir,
    log:
        "logs/biasfinder_templates/{corpus}/{characteristic}.log",
    benchmark:
        "logs/benchmarks/biasfinder_templates/{corpus}/{characteristic}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder templates --parsed {input.parsed:q}"
        " --wordlists {params.lists:q}"
        " --characteristic {wildcards.characteristic} --settings {params.settings:q}"
        " --out {output:q} > {log:q} 2>&1"


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
    log:
        "logs/biasfinder_mutants/{corpus}/{characteristic}.log",
    benchmark:
        "logs/benchmarks/biasfinder_mutants/{corpus}/{characteristic}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder mutants --templates {input.templates:q}"
        " --names {input.names:q} --country-names {input.countries:q}"
        " --wordlists {params.lists:q}"
        " --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"


rule biasfinder_predict:
    """Score every characteristic's mutants with a fine-tuned sentiment model (one load)."""
    input:
        model="results/models/sentiment/{model}/{method}",
        mutants=expand(
            "results/biasfinder/{{corpus}}/mutants/{characteristic}.parquet",
            characteristic=BF_CHARACTERISTICS,
        ),
    output:
        expand(
            "results/biasfinder/{{corpus}}/predictions/{{model}}/{{method}}/{characteristic}.parquet",
            characteristic=BF_CHARACTERISTICS,
        ),
    log:
        "logs/biasfinder_predict/{corpus}/{model}/{method}.log",
    benchmark:
        "logs/benchmarks/biasfinder_predict/{corpus}/{model}/{method}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py predict --model {input.model:q}"
        " --input {input.mutants:q} --out {output:q} > {log:q} 2>&1"


rule biasfinder_btc:
    """Bias-uncovering test cases: same template, different classes, different labels."""
    input:
        templates=rules.biasfinder_templates.output[0],
        mutants=rules.biasfinder_mutants.output[0],
        predictions="results/biasfinder/{corpus}/predictions/{model}/{method}/{characteristic}.parquet",
    output:
        pairs="results/biasfinder/{corpus}/btc/{model}/{method}/{characteristic}.parquet",
        counts="results/biasfinder/{corpus}/btc/{model}/{method}/{characteristic}.counts.parquet",
        summary="results/biasfinder/{corpus}/btc/{model}/{method}/{characteristic}.json",
    params:
        settings=settings("biasfinder.threshold"),
    log:
        "logs/biasfinder_btc/{corpus}/{model}/{method}/{characteristic}.log",
    benchmark:
        "logs/benchmarks/biasfinder_btc/{corpus}/{model}/{method}/{characteristic}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder btc --templates {input.templates:q}"
        " --mutants {input.mutants:q} --predictions {input.predictions:q}"
        " --model-name {wildcards.model} --method {wildcards.method}"
        " --settings {params.settings:q} --out-pairs {output.pairs:q}"
        " --out-counts {output.counts:q} --out-summary {output.summary:q} > {log:q} 2>&1"


rule biasfinder_annotation:
    """RQ2: a Cochran-sized random sample of each characteristic's BTCs for annotators."""
    input:
        expand(
            "results/biasfinder/{{corpus}}/btc/{{model}}/{{method}}/{characteristic}.parquet",
            characteristic=BF_CHARACTERISTICS,
        ),
    output:
        sample="results/biasfinder/{corpus}/annotation/{model}/{method}/sample.csv",
        key="results/biasfinder/{corpus}/annotation/{model}/{method}/key.csv",
        guide="results/biasfinder/{corpus}/annotation/{model}/{method}/guide.md",
    params:
        settings=settings("seed", "biasfinder.annotation"),
    log:
        "logs/biasfinder_annotation/{corpus}/{model}/{method}.log",
    benchmark:
        "logs/benchmarks/biasfinder_annotation/{corpus}/{model}/{method}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder annotate sample --pairs {input:q}"
        " --settings {params.settings:q} --out {output.sample:q} --key {output.key:q}"
        " --guide {output.guide:q} > {log:q} 2>&1"


rule biasfinder_table:
    """Table 4 of BiasFinder per model and method: templates, mutants, BTCs, BTC rates."""
    input:
        biasfinder_jobs(
            "results/biasfinder/{corpus}/btc/{model}/{method}/{characteristic}.json"
        ),
    output:
        json="results/biasfinder/{corpus}/table4.json",
        md="results/biasfinder/{corpus}/table4.md",
        csv="results/biasfinder/{corpus}/table4.csv",
    log:
        "logs/biasfinder_table/{corpus}.log",
    benchmark:
        "logs/benchmarks/biasfinder_table/{corpus}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py biasfinder table --inputs {input:q}"
        " --out-json {output.json:q} --out-md {output.md:q} --out-csv {output.csv:q}"
        " > {log:q} 2>&1"
