"""Helpers of the leakage check (rules/leakage.smk): what each model is fitted on and scored on."""


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
