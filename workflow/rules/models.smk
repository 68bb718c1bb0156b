"""Models: embedded tiny BERT/ALBERT/RoBERTa, fine-tuning per task, test-set scoring."""


include: "helpers/models.smk"


wildcard_constraints:
    task="sentiment|toxicity",
    model=alternation(MODELS),
    method=alternation(METHODS),
    seed="[0-9]+",


rule world_stereotypes:
    """Pre-training sentences that pair identity words with attribute words (planted)."""
    output:
        sentences="resources/world/stereotypes/sentences.parquet",
        truth="resources/world/stereotypes/ground_truth.json",
    params:
        settings=settings("seed", "models.embedded.stereotypes"),
    log:
        job_log("world_stereotypes"),
    benchmark:
        job_benchmark("world_stereotypes")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("world stereotypes --settings {params.settings:q}"
                  " --out-dir $(dirname {output.sentences:q})")


rule pretrain_embedded:
    """Tokenizer of the architecture's kind + short masked-LM pre-training."""
    input:
        reviews=TASK_DATA["sentiment"]["train"],
        comments=TASK_DATA["toxicity"]["train"],
        stereotypes=rules.world_stereotypes.output.sentences,
    output:
        directory(layout.embedded_model_dir("{model}")),
    params:
        settings=pretrain_settings,
    log:
        job_log("pretrain_embedded/{model}"),
    benchmark:
        job_benchmark("pretrain_embedded/{model}")
    resources:
        **compute("train"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("--gpus {resources.gpu} pretrain --model {wildcards.model}"
                  " --corpus {input.reviews:q} {input.comments:q} {input.stereotypes:q}"
                  " --settings {params.settings:q} --out-dir {output:q}")


# One fine-tuning job per task and model: its methods' fine-tunings run in turn in one process
# (`biasrepro finetune` with several training sets), each writing what it would alone; one
# start-up (torch, transformers) instead of one per method. The profile runs the toxicity
# jobs first (profiles/default); of the rest, the sentiment models come first:
# BiasFinder's long scoring jobs wait for them (BF_PRIORITY). Each rule here and below that
# reads a fine-tuned model exists once per RUN_ROOTS entry: the first seed's, and (with
# several `seeds`) the other seeds' under SEED_ROOT.
for _root, _task in [(r, t) for r in RUN_ROOTS for t in TASK_METHODS]:

    rule:
        name:
            f"finetune_{_task}{rule_suffix(_root)}"
        input:
            unpack(partial(finetune_inputs, task=_task)),
        output:
            [directory(f"{_root}/models/{_task}/{{model}}/{m}") for m in finetune_methods(_task)],
        params:
            settings=partial(finetune_settings, task=_task),
            runs=partial(finetune_args, task=_task),
            seed=partial(seed_arg, task=_task),
            task=_task,
        priority: int(_task == "sentiment")
        log:
            job_log(f"finetune/{_task}/{{model}}", _root),
        benchmark:
            job_benchmark(f"finetune/{_task}/{{model}}", _root)
        resources:
            **compute("train"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("--gpus {resources.gpu} finetune --model {wildcards.model}"
                      " --task {params.task} {params.runs} {params.seed} --settings {params.settings:q}"
                      " --out-dir {output:q}")


# One scoring job per task, model and scored set: each method's fine-tuned model is loaded in
# turn and scores the set, as it would alone; one process spares the start-up of one per
# method. A job per set (with that set's leakage verdict) re-scores only the set that changed.
for _root, (_task, _methods) in [(r, tm) for r in RUN_ROOTS for tm in TASK_METHODS.items()]:

    rule:
        name:
            f"predict_{_task}{rule_suffix(_root)}"
        input:
            models=[f"{_root}/models/{_task}/{{model}}/{m}" for m in _methods],
            scored=scored_file(_task),
            leakage=layout.leakage_gate(_task, "{scored}"),  # not scored on its training texts
        output:
            [f"{_root}/predictions/{_task}/{{model}}/{m}/{{scored}}.parquet" for m in _methods],
        wildcard_constraints:
            scored=alternation(SCORED_SETS[_task]),
        log:
            job_log(f"predict_{_task}/{{model}}/{{scored}}", _root),
        benchmark:
            job_benchmark(f"predict_{_task}/{{model}}/{{scored}}", _root)
        resources:
            **compute("score"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("--gpus {resources.gpu} predict --model {input.models:q}"
                      " --input {input.scored:q}"
                      " --out {output:q}")


for _root in RUN_ROOTS:

    rule:
        """Accuracy, ROC-AUC and F1 of every task × model × method on each of its scored sets."""
        name:
            f"model_metrics{rule_suffix(_root)}"
        input:
            [
                path
                for task, sets in SCORED_SETS.items()
                for name in sets
                for path in task_jobs(
                    f"{braced(_root)}/predictions/{{task}}/{{model}}/{{method}}/{name}.parquet",
                    [task],
                )
            ],
        output:
            json=f"{_root}/metrics/classification.json",
            md=f"{_root}/metrics/classification.md",
        log:
            job_log("model_metrics", _root),
        benchmark:
            job_benchmark("model_metrics", _root)
        resources:
            **compute("light"),
        conda:
            CONDA_ENV
        shell:
            biasrepro("metrics-table --inputs {input:q}"
                      " --out-json {output.json:q} --out-md {output.md:q}")
