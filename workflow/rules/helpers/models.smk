"""Helpers of the model rules (rules/models.smk): fine-tuning inputs, options and settings, the
sets each model scores."""


def seed_arg(wildcards, task):
    """``--seed N`` for a further seed's replicate (config `seeds`) whose seed is not the one
    the model's training setting resolves to anyway, else nothing: the first replicate trains
    with what its setting resolves to (`seed`, or a named setting's own, as bert4doc's 42)."""
    if "seed" not in wildcards.keys():
        return ""
    seed = int(wildcards.seed)
    training = config["models"]["training"]
    own = MODELS[wildcards.model].get("training", {}).get(task)
    named = {n: training["named"][n] for n in brtraining.used_names(training[task], own)}
    resolved = brtraining.resolve(training[task], own, named, seed=config["seed"], task=task,
                                  model=wildcards.model)["seed"]
    return "" if seed == resolved else f"--seed {seed}"


def checkpoint_root(wildcards):
    return (layout.CHECKPOINTS if "seed" not in wildcards.keys()
            else f"{layout.CHECKPOINTS}/seeds/{wildcards.seed}")


def finetune_methods(task):
    """The task's fine-tuned methods and those its downstream-SentDebias methods start from."""
    return layout.finetune_methods(METHOD_REGISTRY, TASK_METHODS[task])


def upstream_subspace(model, method):
    """The pretrained model's subspace an upstream-SentDebias method trains with, or None."""
    sd = METHOD_REGISTRY[method].get("sentdebias")
    return subspace_file(model, sd["attribute"]) if sd and sd["stage"] == "upstream" else None


def finetune_inputs(wildcards, task):
    """Each method's training data, the task's validation split, the embedded base model and
    the subspaces the upstream-SentDebias methods train with."""
    methods = finetune_methods(task)
    inputs = {"train": sorted({training_data_of(task, m) for m in methods})}
    validation = sorted({v for m in methods if (v := validation_data_of(task, m))})
    if validation:
        inputs["validation"] = validation
    inputs.update(base_model_input(wildcards.model))
    subspaces = sorted({s for m in methods if (s := upstream_subspace(wildcards.model, m))})
    if subspaces:
        inputs["subspaces"] = subspaces
    return inputs


def finetune_args(wildcards, task):
    """`biasrepro finetune`'s per-run options: one value per method, in finetune_methods'
    order (the rule's outputs'), and the shared validation split."""
    methods = finetune_methods(task)
    args = ["--train", *(training_data_of(task, m) for m in methods), "--checkpoint-dir",
            *(f"{checkpoint_root(wildcards)}/{task}/{wildcards.model}/{m}" for m in methods)]
    subspaces = [upstream_subspace(wildcards.model, m) or "none" for m in methods]
    if set(subspaces) != {"none"}:
        args += ["--sentdebias", *subspaces]
    validation = [validation_data_of(task, m) or "none" for m in methods]
    if set(validation) != {"none"}:
        args += ["--validation", *validation]
    if any(brtraining.method_choice(METHOD_REGISTRY, m, task) for m in methods):
        args += ["--methods", *methods]
    return shlex.join(args)


def finetune_settings(wildcards, task):
    """The seed, the model's registry entry, the task's settings and the named settings the
    model trains with, its own and those its methods name (biasrepro.models.training)."""
    own = MODELS[wildcards.model].get("training", {}).get(task)
    named = brtraining.used_names(config["models"]["training"][task], own)
    chosen = {m: c for m in finetune_methods(task)
              if (c := brtraining.method_choice(METHOD_REGISTRY, m, task))}
    named = sorted({*named, *chosen.values()})
    return settings("seed", f"models.registry.{wildcards.model}", f"models.training.{task}",
                    *(f"models.training.named.{name}" for name in named),
                    *(f"methods.registry.{m}" for m in sorted(chosen)))


def pretrain_settings(wildcards):
    return settings("seed", "models.embedded", f"models.registry.{wildcards.model}")


# The sets every model of a task scores (file stem -> data): the test split, the validation
# split where the task's data has one, and both fairness sets. The toxicity paper's two sets
# of baseline AUCs (§4.2; Tables 5-8) come from different sets, so each is measured.
SCORED_SETS = {
    task: {
        layout.TEST_SET: data["test"],
        **({"validation": data["validation"]} if "validation" in data else {}),
        "fairness-original": f"results/{task}/fairness/original.parquet",
        "fairness-balanced": f"results/{task}/fairness/balanced.parquet",
        **(IMDB_GENDERED_SETS if task == "sentiment" else {}),
    }
    for task, data in TASK_DATA.items()
}


def scored_file(task):
    """The input function of a scoring job of ``task``: the file of its ``scored`` set."""
    return lambda wildcards: SCORED_SETS[task][wildcards.scored]
