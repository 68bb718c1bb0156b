"""The leakage check: every trained model's fitted texts against every set it is scored on.

Scoring (predict_{task}, biasfinder_predict) waits for it, so a configuration in which a
model would be scored on a text it was fitted on produces no tables."""

import json


def leakage_plan(task):
    """Per method: the files its models fit on (training data, validation split) and the
    files they are scored on (SCORED_SETS, BiasFinder's corpus and mutants); a scored file
    that is also fitted on (the validation split, scored for its own metrics) is left out."""
    methods = []
    for method in TASK_METHODS[task]:
        fitted = {"train": training_data_of(task, method)}
        if validation := validation_data_of(task, method):
            fitted["validation"] = validation
        scored = dict(SCORED_SETS[task])
        if task == "sentiment" and method in BF_METHODS:
            scored["biasfinder-corpus"] = biasfinder_corpus(None)
            scored.update({
                f"biasfinder-mutants-{c}": f"results/biasfinder/{BF_CORPUS}/mutants/{c}.parquet"
                for c in BF_CHARACTERISTICS})
        scored = {n: p for n, p in scored.items() if p not in fitted.values()}
        methods.append({"method": method, "models": config["models"]["tasks"][task],
                        "fitted": fitted, "scored": scored})
    return {"task": task, "methods": methods}


def leakage_inputs(wildcards):
    plan = leakage_plan(wildcards.task)
    return sorted({p for m in plan["methods"] for sets in (m["fitted"], m["scored"])
                   for p in sets.values()})


rule leakage_check:
    """Fail when a model's training or validation texts are in a set it is scored on
    (whitespace-folded, case-sensitive exact match, hashed); report every overlap."""
    input:
        leakage_inputs,
    output:
        json="results/{task}/leakage.json",
        md="results/{task}/leakage.md",
    params:
        plan=lambda w: json.dumps(leakage_plan(w.task), sort_keys=True),
        settings=lambda w: settings(f"leakage.identical_texts.{w.task}"),
    log:
        "logs/leakage_check/{task}.log",
    benchmark:
        "logs/benchmarks/leakage_check/{task}.tsv"
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        "python workflow/scripts/biasrepro.py leakage --plan {params.plan:q}"
        " --settings {params.settings:q} --out-json {output.json:q} --out-md {output.md:q}"
        " > {log:q} 2>&1"
