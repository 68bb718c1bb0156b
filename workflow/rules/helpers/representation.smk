"""Helpers of the representation rules (rules/representation.smk): benchmark files, subspaces and
scored variants, downstream SentDebias."""


REPRESENTATION_VARIANTS = layout.representation_variants(REPRESENTATION["attributes"])

DOWNSTREAM_METHODS = layout.downstream_methods(METHOD_REGISTRY, METHODS)

#: the upstream subspaces each model's `sentdebias_subspace` job computes
SUBSPACE_ATTRIBUTES = layout.subspace_attributes(METHOD_REGISTRY, METHODS,
                                                 REPRESENTATION["attributes"])


def _world_seat_tests():
    from biasrepro.data.world.benchmarks import seat_tests

    stereotypes = config["models"].get("embedded", {}).get("stereotypes", {})
    return sorted(seat_tests(stereotypes.get("associations", {}), config["attributes"]))


def representation_files(dataset):
    """The files of a representation-bias dataset (datasets.DATASET), by its source."""
    ds = config["datasets"][dataset]
    if ds["source"] == "download":
        return [f"{layout.DOWNLOADS}/{dataset}/{f['name']}" for f in ds["files"]]
    if ds["source"] == "local":
        path = ds["path"]
        if dataset == "seat":  # a directory of bias-bench's 17 tests
            from biasrepro.representation.seat import TESTS

            return [f"{path}/{t}.jsonl" for tests in TESTS.values() for t in tests]
        return [path]
    if dataset == "sentdebias_corpus":  # the world's pre-training text
        return [TASK_DATA["sentiment"]["train"], TASK_DATA["toxicity"]["train"]]
    world = {
        "crows_pairs": ["crows_pairs.csv"],
        "stereoset": ["stereoset.json"],
        "attribute_words": ["attribute_words.json"],
        "seat": [f"seat/{t}.jsonl" for t in _world_seat_tests()],
    }
    return [f"{WORLD_BENCHMARKS}/{name}" for name in world[dataset]]


def subspace_inputs(wildcards):
    return {
        **base_model_input(wildcards.model),
        "words": representation_files("attribute_words"),
        "corpus": representation_files("sentdebias_corpus"),
    }


def representation_score_inputs(wildcards):
    return {
        **base_model_input(wildcards.model),
        "crows": representation_files("crows_pairs"),
        "stereoset": representation_files("stereoset"),
        "seat": representation_files("seat"),
        "subspaces": [subspace_file(wildcards.model, a) for a in REPRESENTATION["attributes"]],
    }


def representation_score_files(name):
    """The file ``name`` of every variant of one model's scores (an output pattern)."""
    return [f"results/representation/scores/{{model}}/{variant}/{name}"
            for variant in REPRESENTATION_VARIANTS]


def variant_args(wildcards, input):
    """``--variant`` values: the pretrained model, then each attribute's subspace attached."""
    subspaces = [f"{layout.subspace_variant(a)}={path}"
                 for a, path in zip(REPRESENTATION["attributes"], input.subspaces, strict=True)]
    return shlex.join([layout.PRETRAINED, *subspaces])


def representation_jobs():
    return [
        f"results/representation/scores/{model}/{variant}/scores.json"
        for model in REPRESENTATION["models"]
        for variant in REPRESENTATION_VARIANTS
    ]


def sentdebias_of(method):
    return METHOD_REGISTRY[method].get("sentdebias")


def downstream_inputs(wildcards):
    """The fine-tuned `base` method's model, the attribute words and the corpus."""
    base = sentdebias_of(wildcards.method)["base"]
    return {
        "model": f"{root_of(wildcards)}/models/{wildcards.task}/{wildcards.model}/{base}",
        "words": representation_files("attribute_words"),
        "corpus": representation_files("sentdebias_corpus"),
    }
