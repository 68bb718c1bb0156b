"""Models: embedded tiny BERT/ALBERT/RoBERTa, fine-tuning per task, test-set scoring."""


wildcard_constraints:
    task="sentiment|toxicity",
    model=alternation(MODELS),
    method=alternation(METHODS),


rule world_stereotypes:
    """Pre-training sentences that pair identity words with attribute words (planted)."""
    output:
        sentences="resources/world/stereotypes/sentences.parquet",
        truth="resources/world/stereotypes/ground_truth.json",
    params:
        settings=settings("seed", "models.embedded.stereotypes"),
    log:
        "logs/world_stereotypes.log",
    benchmark:
        "logs/benchmarks/world_stereotypes.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py world stereotypes --settings {params.settings:q}"
        " --out-dir $(dirname {output.sentences:q}) > {log:q} 2>&1"


rule pretrain_embedded:
    """Tokenizer of the architecture's kind + short masked-LM pre-training (issue #3)."""
    input:
        reviews="results/data/imdb/train.parquet",
        comments="results/data/civil_comments/train.parquet",
        stereotypes=rules.world_stereotypes.output.sentences,
    output:
        directory("resources/models/embedded/{model}"),
    params:
        settings=pretrain_settings,
    log:
        "logs/pretrain_embedded/{model}.log",
    benchmark:
        "logs/benchmarks/pretrain_embedded/{model}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py pretrain --model {wildcards.model}"
        " --corpus {input.reviews:q} {input.comments:q} {input.stereotypes:q}"
        " --settings {params.settings:q} --out-dir {output:q} > {log:q} 2>&1"


rule finetune:
    """Fine-tune a registered model for a task; resumes from its checkpoint if interrupted."""
    input:
        unpack(finetune_inputs),
    output:
        directory("results/models/{task}/{model}/{method}"),
    wildcard_constraints:
        method=alternation(TRAINED_METHODS),
    params:
        settings=finetune_settings,
        validation=validation_arg,
        sentdebias=finetune_sentdebias_arg,
        checkpoints="resources/checkpoints/{task}/{model}/{method}",
    log:
        "logs/finetune/{task}/{model}/{method}.log",
    benchmark:
        "logs/benchmarks/finetune/{task}/{model}/{method}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py finetune --model {wildcards.model}"
        " --task {wildcards.task} --train {input.train:q} {params.validation}"
        " --settings {params.settings:q} --out-dir {output:q}"
        " --checkpoint-dir {params.checkpoints:q} {params.sentdebias} > {log:q} 2>&1"


rule predict_test:
    """Score the task's test split and both fairness sets with a fine-tuned model (one
    model load; a text in several of them is scored once)."""
    input:
        model=rules.finetune.output[0],
        data=test_data,
        original="results/{task}/fairness/original.parquet",
        balanced="results/{task}/fairness/balanced.parquet",
    output:
        test="results/predictions/{task}/{model}/{method}/test.parquet",
        original="results/predictions/{task}/{model}/{method}/fairness-original.parquet",
        balanced="results/predictions/{task}/{model}/{method}/fairness-balanced.parquet",
    log:
        "logs/predict_test/{task}/{model}/{method}.log",
    benchmark:
        "logs/benchmarks/predict_test/{task}/{model}/{method}.tsv"
    resources:
        gpu=GPU,
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py predict --model {input.model:q}"
        " --input {input.data:q} {input.original:q} {input.balanced:q}"
        " --out {output.test:q} {output.original:q} {output.balanced:q} > {log:q} 2>&1"


rule evaluate_test:
    """Accuracy, ROC-AUC and F1 of the test predictions."""
    input:
        rules.predict_test.output.test,
    output:
        "results/metrics/{task}/{model}/{method}/test.json",
    log:
        "logs/evaluate_test/{task}/{model}/{method}.log",
    benchmark:
        "logs/benchmarks/evaluate_test/{task}/{model}/{method}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py evaluate --predictions {input:q}"
        " --out {output:q} > {log:q} 2>&1"


rule model_metrics:
    """One table of the test metrics of every task × model × method."""
    input:
        task_jobs("results/metrics/{task}/{model}/{method}/test.json"),
    output:
        json="results/metrics/classification.json",
        md="results/metrics/classification.md",
    log:
        "logs/model_metrics.log",
    benchmark:
        "logs/benchmarks/model_metrics.tsv"
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py metrics-table --inputs {input:q}"
        " --out-json {output.json:q} --out-md {output.md:q} > {log:q} 2>&1"
