"""Helpers of the BiasFinder rules (rules/biasfinder.smk): its corpus, word lists and jobs."""


BIASFINDER = config["biasfinder"]

BF_CORPUS = f"{BIASFINDER['dataset']}-{BIASFINDER['split']}"

BF_CHARACTERISTICS = BIASFINDER["characteristics"]

#: the sentiment methods whose models BiasFinder tests
BF_METHODS = BIASFINDER.get("methods") or TASK_METHODS["sentiment"]

#: whose word lists fill the placeholders: `project` (the hand-written lists in
#: `biasfinder.wordlists`, names generated from gender-guesser) or `original` (BiasFinder's
#: own files, `datasets.biasfinder_lists`, converted by rule biasfinder_wordlists)
BF_LISTS = BIASFINDER.get("lists", "project")

BF_LISTS_DIR = "resources/wordlists/original" if BF_LISTS == "original" else BIASFINDER["wordlists"]

#: the pronoun, gender-noun and occupation lists the parse, template and mutant steps read
BF_WORDLISTS = [
    f"{BF_LISTS_DIR}/{name}.csv"
    for name in ("pronouns", "gender_nouns", "occupations")
]


def biasfinder_lexicons():
    """The person-noun and job-title lexicons the parse and template steps read: the word-list
    folder's own, else the project's (BiasFinder's original lists have none)."""
    from biasrepro.biasfinder import wordlists  # the file names and the fallback live there

    return [os.path.relpath(wordlists.own_or_project(Path(BF_LISTS_DIR), name))
            for name in (wordlists.PERSON_NOUNS, wordlists.JOB_TITLES)]


BF_LEXICONS = biasfinder_lexicons()


def biasfinder_original_files(wildcards):
    """BiasFinder's six word-list files: downloaded, or under `datasets.biasfinder_lists.path`
    (a folder holding them, flat or laid out as the repository's asset/)."""
    ds = config["datasets"]["biasfinder_lists"]
    if ds["source"] == "download":
        return [f"{layout.DOWNLOADS}/biasfinder_lists/{f['name']}" for f in ds["files"]]
    if ds["source"] != "local" or not isinstance(ds["path"], str):
        raise WorkflowError("config key 'datasets.biasfinder_lists': source must be download, "
                            "or local with a folder as path")
    from biasrepro.biasfinder import original_lists  # stdlib only at import
    from biasrepro.errors import DataError

    try:
        return [str(p) for p in original_lists.locate(ds["path"]).values()]
    except DataError as e:
        raise WorkflowError(f"config key 'datasets.biasfinder_lists.path': {e}") from None


def wordlists_dir(wildcards, input):
    """The directory of the rule's hand-written word lists (its ``lists`` input)."""
    return os.path.dirname(input.lists[0])


def biasfinder_corpus(wildcards):
    dataset, split = BIASFINDER["dataset"], BIASFINDER["split"]
    return f"results/data/{dataset}/{split}.parquet"


def biasfinder_jobs(pattern):
    """``pattern`` over every sentiment model × method × characteristic."""
    return [
        pattern.format(corpus=BF_CORPUS, model=model, method=method, characteristic=char)
        for model in config["models"]["tasks"].get("sentiment", [])
        for method in BF_METHODS
        for char in BF_CHARACTERISTICS
    ]


def biasfinder_annotation_jobs(pattern):
    return [
        pattern.format(corpus=BF_CORPUS, model=model, method=method)
        for model in config["models"]["tasks"].get("sentiment", [])
        for method in BF_METHODS
    ]


#: the rules backend's learned pronoun resolver: none, the one rule coref_resolver trains
#: (`trained`), or a folder given by path
BF_RESOLVER = BIASFINDER["coref"].get("resolver")


def coref_data_files(dataset):
    """GAP's development and validation TSVs (`gap`) or LitBank's coref/tsv files (`litbank`):
    downloaded, or in the folder `datasets.<dataset>.path`."""
    ds = config["datasets"][dataset]
    if ds["source"] == "download":
        return [f"{layout.DOWNLOADS}/{dataset}/{f['name']}" for f in ds["files"]]
    if ds["source"] != "local" or not isinstance(ds["path"], str):
        raise WorkflowError(f"config key 'datasets.{dataset}': source must be download, or "
                            "local with a folder as path")
    folder = Path(ds["path"])
    if dataset == "gap":
        return [str(folder / f"gap-{split}.tsv") for split in ("development", "validation")]
    return sorted(str(p) for p in folder.glob("*.[ta][xn][tn]"))


def resolver_files(wildcards=None):
    """The files of the resolver the templates' parse uses (and the run record hashes); none
    without one."""
    if BF_RESOLVER is None:
        return []
    folder = layout.COREF_RESOLVER if BF_RESOLVER == layout.TRAINED_RESOLVER else BF_RESOLVER
    return [f"{folder}/{name}" for name in layout.RESOLVER_FILES]


def coref_weights(wildcards=None):
    """The neuralcoref backend's weights as `datasets.neuralcoref` gives them (none for the
    other backends, or when `biasfinder.coref.model` names the weights)."""
    coref = BIASFINDER["coref"]
    if not (coref.get("confirm") == "neuralcoref"
            or coref["backend"] == "neuralcoref" and not coref.get("model")):
        return []
    ds = config["datasets"]["neuralcoref"]
    if ds["source"] == "download":
        return [f"{layout.DOWNLOADS}/neuralcoref/{f['name']}" for f in ds["files"]]
    return [ds["path"]]


def coref_weights_arg(wildcards, input):
    return f"--coref-weights {shlex.quote(input.weights[0])}" if input.weights else ""


#: the run trains the resolver where it has GAP and LitBank, whether or not the templates use it
TRAINS_RESOLVER = {"gap", "litbank"} <= set(config["datasets"])


def gap_resolver_files(wildcards=None):
    """The resolver GAP scores: the templates' own, else the one the run trains."""
    if BF_RESOLVER not in (None, layout.TRAINED_RESOLVER):
        return resolver_files()
    return [f"{layout.COREF_RESOLVER}/{name}" for name in layout.RESOLVER_FILES]


#: the backends whose GAP scores the run reports (where `datasets.gap` is configured): the
#: rules; with a resolver, the resolver on GAP's candidate names and the rules choosing named
#: antecedents with it; the configured fastcoref model
GAP_BACKENDS = [
    "rules",
    *(["learned", "rules-resolver"]
      if TRAINS_RESOLVER or BF_RESOLVER not in (None, layout.TRAINED_RESOLVER) else []),
    *([BIASFINDER["coref"]["backend"]]
      if BIASFINDER["coref"]["backend"] in ("fastcoref", "neuralcoref") else []),
    *(["neuralcoref"] if BIASFINDER["coref"].get("confirm") == "neuralcoref" else []),
]
