"""Helpers of the toxicity study's rules (rules/fairness.smk): training-set perturbation and
re-stratification, the fairness sets and reports."""


PERTURBATION = config["perturbation"]


def perturb_inputs(wildcards):
    """The training set a perturbed set is made from, and the identity lexicon."""
    source = PERTURB_SOURCE[wildcards.task][wildcards.kind]
    return {"train": TRAINING_DATA[wildcards.task][source], "lexicon": PERTURBATION["lexicon"]}


def perturb_settings(wildcards):
    return settings("identities", "attributes", "preprocess.civil_comments.identity_threshold",
                    "perturbation.spacy_model", "perturbation.select",
                    f"fairness.attributes.{wildcards.task}")


def restratify_inputs(wildcards):
    """The original training split; the masked LM when it is an embedded model."""
    inputs = {"train": TRAINING_DATA["toxicity"]["original"],
              "lexicon": PERTURBATION["lexicon"]}
    model = PERTURBATION["restratify"].get("model")
    if PERTURBATION["restratify"]["augmenter"] == "contextual":
        if MODELS[model]["source"] == "embedded":
            inputs["model"] = layout.embedded_model_dir(model)
    return inputs


def restratify_settings(wildcards):
    model = PERTURBATION["restratify"].get("model")
    keys = ["seed", "identities", "attributes", "perturbation.restratify",
            "preprocess.civil_comments.identity_threshold"]
    if PERTURBATION["restratify"]["augmenter"] == "contextual":
        keys.append(f"models.registry.{model}")
    return settings(*keys)


def restratify_model_arg(wildcards, input):
    if "model" in input.keys():
        return f"--model-dir {shlex.quote(input.model)}"
    if PERTURBATION["restratify"]["augmenter"] == "contextual":
        return f"--model {shlex.quote(PERTURBATION['restratify']['model'])}"
    return ""


def fairness_set_settings(wildcards):
    return settings("attributes", "perturbation.spacy_model",
                    f"fairness.attributes.{wildcards.task}")


def fairness_report_inputs(wildcards):
    """Both fairness sets, every model x method's predictions on them and on its test split
    (the model-works gate; the job's replicate's), the training data."""
    task, root = wildcards.task, root_of(wildcards)
    inputs = {f"set_{name}": f"results/{task}/fairness/{name}.parquet" for name in FAIRNESS_SETS}
    inputs["predictions"] = [
        p
        for name in FAIRNESS_SETS
        for p in task_jobs(
            f"{root}/predictions/{{task}}/{{model}}/{{method}}/fairness-{name}.parquet", [task]
        )
    ]
    inputs["tests"] = task_jobs(
        layout.predictions_file(root, "{task}", "{model}", "{method}", layout.TEST_SET), [task])
    inputs["training"] = [training_data_of(task, m) for m in TASK_METHODS[task]]
    if task == "toxicity" and REPRESENTATION["models"]:  # Table 9's representation rows
        inputs["representation"] = "results/representation/table4.csv"
    return inputs


def representation_arg(wildcards, input):
    if "representation" not in input.keys():
        return ""
    return f"--representation {shlex.quote(input.representation)}"


def fairness_training_args(wildcards, input):
    """``--training METHOD=PATH`` for every method of the task."""
    task = wildcards.task
    return " ".join(
        shlex.quote(f"{m}={training_data_of(task, m)}") for m in TASK_METHODS[task]
    )


def fairness_report_settings(wildcards):
    return settings("seed", "attributes", "identities", "fairness",
                    "preprocess.civil_comments.identity_threshold", "methods.registry")


def fairness_report_jobs():
    """The study's tables for every task that trains a model."""
    return [
        f"results/{task}/fairness/report.json"
        for task, models in config["models"]["tasks"].items()
        if models
    ]
