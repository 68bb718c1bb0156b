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
        if method in BF_METHODS:
            scored.update(biasfinder_scored(task))
        scored = {n: p for n, p in scored.items() if p not in fitted.values()}
        methods.append({"method": method, "models": config["models"]["tasks"][task],
                        "fitted": fitted, "scored": scored})
    return {"task": task, "methods": methods}


def leakage_inputs(wildcards):
    plan = leakage_plan(wildcards.task)
    return sorted({p for m in plan["methods"] for sets in (m["fitted"], m["scored"])
                   for p in sets.values()})


def gate_plan(task, scored):
    """:func:`leakage_plan` narrowed to one scored set: the methods scored on it, each with
    that set alone (a verdict whose content changes only when this set's does)."""
    methods = [{**m, "scored": {scored: m["scored"][scored]}}
               for m in leakage_plan(task)["methods"] if scored in m["scored"]]
    return {"task": task, "methods": methods}


def gate_inputs(wildcards):
    plan = gate_plan(wildcards.task, wildcards.scored)
    scored = {**SCORED_SETS[wildcards.task], **biasfinder_scored(wildcards.task)}
    return sorted({scored[wildcards.scored],
                   *(p for m in plan["methods"] for p in m["fitted"].values())})


def biasfinder_scored(task):
    """BiasFinder's scored sets (name -> file): the corpus its templates come from and each
    characteristic's mutants, scored by the sentiment models of BF_METHODS."""
    if task != "sentiment":
        return {}
    return {"biasfinder-corpus": biasfinder_corpus(None), **{
        f"biasfinder-mutants-{c}": f"results/biasfinder/{BF_CORPUS}/mutants/{c}.parquet"
        for c in BF_CHARACTERISTICS}}


def biasfinder_gates(wildcards=None):
    """The leakage verdicts BiasFinder's scoring waits for (its mutants and their corpus)."""
    return [layout.leakage_gate("sentiment", name) for name in biasfinder_scored("sentiment")]
