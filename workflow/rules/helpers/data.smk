"""Helpers of the data rules (rules/data.smk): raw inputs by source, the download jobs' options."""


def raw_files(dataset):
    """The raw input files of a dataset: {split or 'file': path}."""
    ds = config["datasets"][dataset]
    if ds["source"] == "world":
        return WORLD_FILES[dataset]
    if ds["source"] == "download":
        return {
            f.get("split", "file"): f"{layout.DOWNLOADS}/{dataset}/{f['name']}"
            for f in ds["files"]
        }
    path = ds["path"]
    return dict(path) if isinstance(path, dict) else {"file": path}


def raw_format(dataset):
    ds = config["datasets"][dataset]
    return WORLD_FORMAT[dataset] if ds["source"] == "world" else ds["format"]


def cli_inputs(wildcards, input):
    """``--input`` values: PATH, or train=PATH test=PATH for split formats."""
    if "file" in input.keys():
        return shlex.quote(input.file)
    return " ".join(shlex.quote(f"{split}={input[split]}") for split in ("train", "test"))


def member_arg(dataset):
    """``--member NAME`` for zip archives, else nothing."""
    member = config["datasets"][dataset].get("member")
    return shlex.join(["--member", member]) if member else ""


def download_spec(wildcards):
    """The pinned URL, sha256 and size of one download, as a config subset."""
    for f in config["datasets"][wildcards.dataset].get("files", []):
        if f["name"] == wildcards.name:
            return f
    raise WorkflowError(
        f"no file named {wildcards.name!r} under datasets.{wildcards.dataset}.files"
    )


def download_settings(wildcards):
    return settings(f"datasets.{wildcards.dataset}")


def download_command(wildcards):
    f = download_spec(wildcards)
    args = ["--url", f["url"]]
    for key in ("sha256", "git_blob", "size", "min_size"):
        if key in f:
            args += [f"--{key.replace('_', '-')}", str(f[key])]
    if "format" in config["datasets"][wildcards.dataset]:
        args += ["--format", config["datasets"][wildcards.dataset]["format"]]
    return shlex.join(args)
