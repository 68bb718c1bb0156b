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
