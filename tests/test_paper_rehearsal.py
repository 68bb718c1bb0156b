"""A rehearsal of the paper profile: config/paper.yaml's own DAG, end to end, on a CPU.

The paper profile is what a reviewer runs on a GPU machine; every rule of it must have run
here first. The test loads config/paper.yaml, transforms it into an overlay and runs
``snakemake --cores 2 --configfile <overlay>`` in a copy of the checkout. The overlay is
built from paper.yaml at test time (never a hand-kept copy), so whatever paper.yaml gains
is rehearsed too. The transformations, and nothing else:

1. Downloads: every ``datasets.*.files[*].url`` becomes the URL of a local file in the
   real format, served over HTTP from 127.0.0.1 (the download rule's real path: HTTP,
   Content-Length, size, content sniffing, sha256 / git-blob checks, the lock file). Where
   the local file is the real file (the ../shared/realdata copies of SEAT, the attribute
   words, the SST set and BiasFinder's word lists), paper.yaml's own ``sha256``/``git_blob``
   and ``size`` are kept and verify it. Where it is a stand-in (an aclImdb_v1.tar.gz of
   real IMDB reviews, the Civil Comments route's file with its real header, member and
   source splits, StereoSet ``test.json``, a Wikipedia-style text, the first
   :data:`CROWS_PER_TYPE` CrowS-Pairs of each bias type), its pins become the stand-in's own
   (the real CrowS-Pairs file is checked against paper.yaml's pin first); ``min_size`` is
   lowered to the stand-in's size. An unpinned file stays unpinned and is fetched with the
   documented one-run opt-in (``BIASREPRO_ALLOW_UNPINNED=1``), which records it in the
   checkout copy's ``config/downloads.lock``. ``source: local`` paths become local stand-ins.
2. Models: paper.yaml's registry and ``biasfinder.coref`` are kept as they are; the Hub ids
   at their revisions resolve offline (``HF_HUB_OFFLINE=1``) from a private Hugging Face
   cache holding tiny random models of the same architecture (1 layer, hidden 16, a
   tokenizer of the architecture's kind; tests/fixtures/tiny_models.py) and a tiny F-coref
   model whose hand-set weights cluster each gender's pronouns and a few common first names
   (:data:`COREF_NAMES`; tests/fixtures/tiny_coref.py), so gender and country templates
   come out of the fastcoref backend.
   nlpaug's masked LM is the registry's, so tiny too.
3. Size-only knobs (:data:`SIZE_KNOBS`), wherever they occur in paper.yaml (named training
   settings included): ``epochs`` 1, ``max_length`` at most 64 (the tiny models'
   positions), ``eval_steps`` at most 5, SEAT ``permutation_samples`` 100, bootstrap
   ``resamples`` 20, spaCy ``n_process`` 1, BiasFinder ``max_templates`` 8 and
   ``max_names`` 3.

No switch that chooses a code path changes (formats, members, scorings, backends, methods,
word lists, truncation sides, early stopping, splits). The test checks that the run
completes, that every job of the paper profile's DAG (:mod:`biasrepro.snakedag`) ran, that
the only rules of the workflow it lacks are the embedded world's, and a few paper-profile
outputs. It needs ../shared/realdata (present here and in CI, absent in a user's clone):
without the real CrowS-Pairs, SEAT, attribute-word, SST and IMDB files it skips.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from conftest import REALDATA, REPO, copy_checkout, snakemake
from fixtures import raw_data

#: size-only keys, wherever they occur in paper.yaml: key -> the rehearsal's value (a
#: function of the paper's value)
SIZE_KNOBS = {
    "epochs": lambda v: 1,
    "max_length": lambda v: min(v, 64),
    "permutation_samples": lambda v: 100,
    "resamples": lambda v: 20,
    "n_process": lambda v: 1,
    "max_templates": lambda v: 8,
    "max_names": lambda v: 3,
    "eval_steps": lambda v: min(v, 5),
}
#: reviews per split and polarity packed into the rehearsal's aclImdb_v1.tar.gz
IMDB_PER_POLARITY = {"train": 100, "test": 40}
#: reviews written for the rehearsal, added to its test split: one person named by a lone
#: first name the hand-set F-coref clusters (:data:`COREF_NAMES`). Its clusters hold single
#: tokens, so in a real review it marks "John" of "John Smith", which the template engine
#: refuses (a name left half); these give the gender path templates to carry
WRITTEN_TEST = {
    "pos": ["Mary is the heart of this small film. She is funny, and her timing never "
            "slips. I would watch her in anything.",
            "I loved every minute of it. Tom carries the story; he is warm, and his jokes "
            "land every time."],
    "neg": ["A dull film. Sarah tries hard, but she is given nothing to do, and her scenes "
            "drag on.",
            "Peter is wasted here. He mumbles, his lines go nowhere, and the plot forgets him "
            "halfway."]}
#: common first names the hand-set F-coref puts in their gender's cluster (a person's
#: cluster needs a name for country templates)
COREF_NAMES = {"male": ("john", "david", "michael", "robert", "james", "william", "mark",
                        "charles", "jack", "peter", "paul", "george", "tom"),
               "female": ("mary", "jane", "jennifer", "anna", "sarah", "elizabeth", "susan",
                          "kate", "julia", "emma")}
#: CrowS-Pairs pairs per bias type served (of 1,508 in nine types)
CROWS_PER_TYPE = 12
#: the tiny models' longest input (tokens)
TINY_MAX_LENGTH = 128
#: rules of the workflow that only the embedded world runs
WORLD_RULES = {"world_reviews", "world_comments", "world_sst", "world_stereotypes",
               "world_benchmarks", "pretrain_embedded"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git_blob(path: Path) -> str:
    """The git object id of the file's bytes (``git hash-object``)."""
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# -- local inputs in the real formats ----------------------------------------------------


def _imdb_reviews() -> dict[str, pd.DataFrame]:
    return {split: pd.read_csv(REALDATA / "imdb" / f"imdb_{split}_sample.tsv", sep="\t",
                               header=None, names=["label", "text"], quoting=3)
            for split in ("train", "test")}


def aclimdb_tar(path: Path) -> Path:
    """The Stanford layout ``aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt`` of real
    reviews (realdata's BiasFinder samples; :data:`WRITTEN_TEST` too), some with IMDB's
    ``<br /><br />`` breaks."""
    members = [("aclImdb/README", b"Large Movie Review Dataset v1.0 (rehearsal subset)\n"),
               ("aclImdb/imdb.vocab", b"the\nand\n"),
               ("aclImdb/train/unsup/0_0.txt", b"An unlabelled review, ignored.")]
    for split, df in _imdb_reviews().items():
        for label, polarity in ((1, "pos"), (0, "neg")):
            texts = [*df.loc[df["label"] == label, "text"].head(IMDB_PER_POLARITY[split])]
            if split == "test":
                texts += WRITTEN_TEST[polarity]
            for i, text in enumerate(texts):
                rating = 8 + i % 3 if label else 1 + i % 4
                if i % 3 == 0:
                    text = text.replace(". ", ".<br /><br />", 1)
                members.append((f"aclImdb/{split}/{polarity}/{i}_{rating}.txt",
                                text.encode("utf-8")))
    raw_data.write_tar_gz(path, members)
    return path


def civil_comments(path: Path, ds: dict[str, Any]) -> Path:
    """Civil Comments in the configured route, with its real header: the TFDS archive
    (``civil_comments.csv`` inside, as ``member`` names it), Kaggle's ``all_data.csv`` or
    ``train.csv``, or WILDS' CSV. One row in five comes from another source split."""
    rows = raw_data.civil_rows(n_per_group=16)
    splits = [("train", "train", "train", "validation", "test")[i % 5] for i in range(len(rows))]
    fmt = ds["format"]
    if fmt in ("tfds", "zip"):
        member = ds.get("member", "civil_comments.csv")
        csv = path.parent / f"{path.name}.member" / member
        csv.parent.mkdir(parents=True)
        raw_data.write_civil_comments_csv(csv, variant="tfds", rows=rows, splits=splits)
        return raw_data.zip_member(csv, path, member)
    variant = {"kaggle": "train" if path.name == "train.csv" else "kaggle",
               "wilds": "wilds"}.get(fmt)
    if variant is None:
        pytest.fail(f"the rehearsal writes no Civil Comments in format {fmt!r}")
    raw_data.write_civil_comments_csv(path, variant=variant, rows=rows,
                                      splits=None if variant == "train" else splits)
    return path


def stereoset_json(path: Path) -> Path:
    """StereoSet's ``dev.json``/``test.json`` format (a project-written sample)."""
    shutil.copyfile(REPO / "tests/fixtures/stereoset_dev_sample.json", path)
    return path


def wikipedia_text(path: Path) -> Path:
    """Wikipedia-2.5-style text: lines of encyclopaedic sentences, several to a line, naming
    the attribute words of every attribute (so SentenceDebias finds tuples for each)."""
    words = json.loads((REALDATA / "bias_attribute_words.json").read_text())
    lines = []
    for _, tuples in sorted(words.items()):
        for i, group in enumerate(tuples):
            for w in group:
                lines.append(f"The {w} was born in a small town near the river in {1900 + i}. "
                             f"Later the {w} studied music and wrote two books about the "
                             f"region's history.")
                lines.append(f"According to the census, every {w} in the district owned land.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def crows_subset(real: Path, path: Path) -> Path:
    """The first :data:`CROWS_PER_TYPE` pairs of each bias type of the real CrowS-Pairs CSV,
    its columns and quoting kept (scoring all 1,508 pairs takes minutes on a CPU)."""
    df = pd.read_csv(real)
    df.groupby("bias_type", sort=False).head(CROWS_PER_TYPE).to_csv(path, index=False)
    return path


#: real files served as a subset in the same format (the real file is checked against
#: paper.yaml's pin first): file name -> builder(real file, out)
SUBSETS = {"crows_pairs_anonymized.csv": crows_subset}


#: v1's all-country name files (BiasFinder@1317970), stood in for by the d6d5424 USA lists
V1_NAME_FILES = {"male_names_only.csv": "male_names_only_USA.csv",
                 "female_names_only.csv": "female_names_only_USA.csv"}


def v1_names(out: Path, usa: str) -> Path:
    """An all-country name file in v1's format (header ``name``, lower case): the shared
    d6d5424 USA names, from which the v1 draw takes 30."""
    real = _realdata_file(usa)
    if real is None:
        pytest.fail(f"no {usa} under ../shared/realdata to stand in for v1's names")
    shutil.copyfile(real, out)
    return out


def _realdata_file(name: str) -> Path | None:
    hits = sorted(REALDATA.rglob(name))
    return hits[0] if hits else None


def local_input(dataset: str, ds: dict[str, Any], name: str, out_dir: Path) -> tuple[Path, bool]:
    """A local file in ``datasets.<dataset>``'s real format for the file ``name``, and
    whether it is the real file itself (then paper.yaml's pins must verify it)."""
    out = out_dir / dataset / name
    out.parent.mkdir(parents=True, exist_ok=True)
    fmt = ds.get("format")
    if dataset == "imdb" and fmt == "aclimdb_tar":
        return aclimdb_tar(out), False
    if dataset == "civil_comments":
        return civil_comments(out, ds), False
    if dataset == "stereoset":
        return stereoset_json(out), False
    if dataset == "sentdebias_corpus":
        return wikipedia_text(out), False
    if dataset == "biasfinder_lists" and name in V1_NAME_FILES:
        return v1_names(out, V1_NAME_FILES[name]), False
    real = _realdata_file(name)
    if real is None:
        pytest.fail(f"the rehearsal has no local stand-in for datasets.{dataset} file "
                    f"{name!r} ({fmt}): add one to tests/test_paper_rehearsal.py")
    if name in SUBSETS:
        return SUBSETS[name](real, out), False
    shutil.copyfile(real, out)
    pin = next((f.get("sha256") for f in ds.get("files", []) if f["name"] == name), None)
    # another version of the file (BiasFinder's d6d5424 country lists for v1's): a stand-in
    return out, pin in (None, "unpinned") or pin == sha256(out)


# -- the overlay --------------------------------------------------------------------------


def _shrink(node: Any, where: str, changes: list[str]) -> None:
    """Apply :data:`SIZE_KNOBS` everywhere below ``node`` (in place), recording each."""
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{where}.{key}" if where else key
            if key in SIZE_KNOBS and (value is None or isinstance(value, int)):
                new = SIZE_KNOBS[key](value)
                if new != value:
                    node[key] = new
                    changes.append(f"{path}: {value} -> {new}")
            else:
                _shrink(value, path, changes)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _shrink(item, f"{where}[{i}]", changes)


def rehearsal_overlay(paper: dict[str, Any], inputs: Path, serve: Path,
                      base_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """paper.yaml transformed (a deep copy), and what was done: the pins kept and
    replaced, the size knobs changed."""
    overlay = json.loads(json.dumps(paper))
    done: dict[str, Any] = {"pins_kept": [], "pins_replaced": [], "unpinned": [],
                            "local": [], "sizes": []}
    for dataset, ds in overlay["datasets"].items():
        assert ds["source"] != "world", f"paper profile: datasets.{dataset} is the world"
        if ds["source"] == "local":
            path = ds["path"]
            names = path if isinstance(path, dict) else {"file": path}
            made = {k: str(local_input(dataset, ds, Path(p).name, inputs)[0])
                    for k, p in names.items()}
            ds["path"] = made if isinstance(path, dict) else made["file"]
            done["local"].append(dataset)
            continue
        for f in ds["files"]:
            local, real = local_input(dataset, ds, f["name"], inputs)
            served = serve / dataset / f["name"]
            served.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(local, served)
            f["url"] = f"{base_url}/{dataset}/{f['name']}"
            label = f"{dataset}/{f['name']}"
            # the real file behind a stand-in (a copy or a subset) matches paper.yaml's pins
            original = local if real else (
                _realdata_file(f["name"]) if f["name"] in SUBSETS else None)
            if original is not None:
                for key, digest in (("sha256", sha256), ("git_blob", git_blob)):
                    if f.get(key, "unpinned") != "unpinned":
                        assert digest(original) == f[key], f"{label}: paper.yaml's {key}"
                assert f.get("size", original.stat().st_size) == original.stat().st_size, label
            if f.get("min_size", 0) > local.stat().st_size:  # a size knob: the stand-in
                done["sizes"].append(f"{label} min_size: {f['min_size']} -> "
                                     f"{local.stat().st_size}")
                f["min_size"] = local.stat().st_size
            pinned = [k for k in ("sha256", "git_blob") if f.get(k, "unpinned") != "unpinned"]
            if not pinned:
                if not real:
                    f.pop("size", None)
                done["unpinned"].append(label)
            elif real:
                done["pins_kept"].append(label)
            else:
                for key, digest in (("sha256", sha256), ("git_blob", git_blob)):
                    if key in pinned:
                        f[key] = digest(local)
                if "size" in f:
                    f["size"] = local.stat().st_size
                done["pins_replaced"].append(label)
    _shrink(overlay, "", done["sizes"])
    # tiny models trained for seconds learn next to nothing: the model-works gate would
    # leave every model out; the rehearsal checks the paper profile's plumbing
    overlay["fairness"]["model_floor"] = None
    done["sizes"].append("fairness.model_floor: off")
    return overlay, done


# -- tiny models in an offline Hugging Face cache -------------------------------------------


def _snapshot(cache: Path, repo_id: str, revision: str) -> Path:
    """The cache folder of ``repo_id`` at ``revision`` (a commit, or a branch whose ref
    points at a made-up commit), as huggingface_hub lays it out."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    commit = revision
    if not re.fullmatch(r"[0-9a-f]{40}", revision):
        commit = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / revision).write_text(commit)
    return repo / "snapshots" / commit


def tiny_hub_cache(cache: Path, paper: dict[str, Any], corpus: list[str]) -> list[str]:
    """Tiny models under every Hub id (and revision) of paper.yaml's registry and its
    coreference model; returns the ids."""
    from fixtures.tiny_coref import pronoun_fcoref, tiny_fcoref
    from fixtures.tiny_models import tiny_masked_lm

    made = []
    for entry in paper["models"]["registry"].values():
        assert entry["source"] in ("hub", "local"), entry
        if entry["source"] != "hub":
            continue
        tiny_masked_lm(_snapshot(cache, entry["id"], entry["revision"]),
                       entry["architecture"], corpus, vocab_size=1000,
                       max_length=TINY_MAX_LENGTH)
        made.append(entry["id"])
    coref = paper["biasfinder"]["coref"]
    if coref["backend"] == "fastcoref" and not Path(coref["model"]).is_dir():
        where = _snapshot(cache, coref["model"], coref.get("revision", "main"))
        if coref.get("kind", "FCoref") == "FCoref":  # clusters each gender's pronouns
            pronoun_fcoref(where, corpus, COREF_NAMES)
        else:
            tiny_fcoref(where, kind=coref["kind"])
        made.append(coref["model"])
    return made


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over HTTP on 127.0.0.1 while the test runs: (folder, base URL)."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


# -- the rehearsal --------------------------------------------------------------------------


def _job(job: Any, level: int) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return job.rule.name, tuple(sorted(map(str, job.output))), tuple(map(str, job.log))


@pytest.mark.paper
@pytest.mark.skipif(not os.environ.get("BIASREPRO_PAPER"),
                    reason="rehearses the paper profile's whole DAG (~7 min on 2 cores): set "
                    "BIASREPRO_PAPER=1")
def test_paper_profile_rehearsal(tmp_path: Path, served: tuple[Path, str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for part in ("crows", "seat", "sst", "imdb", "bias_attribute_words.json"):
        if not (REALDATA / part).exists():
            pytest.skip(f"the paper-profile rehearsal needs the real-data samples "
                        f"{REALDATA / part} (present in CI, absent in a user's clone)")
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    assert paper["profile"] == "paper"
    repo = copy_checkout(tmp_path / "repo")
    serve_dir, base_url = served
    overlay, done = rehearsal_overlay(paper, tmp_path / "inputs", serve_dir, base_url)
    configfile = tmp_path / "rehearsal.yaml"
    configfile.write_text(yaml.safe_dump(overlay, sort_keys=False))
    print(json.dumps(done, indent=1))

    reviews = _imdb_reviews()
    corpus = [*reviews["train"]["text"].head(300), *reviews["test"]["text"].head(100),
              *(r["comment_text"] for r in raw_data.civil_rows()),
              *pd.read_csv(REALDATA / "crows/crows_pairs_anonymized.csv")["sent_more"],
              *wikipedia_text(tmp_path / "wiki.txt").read_text().splitlines()[:200]]
    started = time.perf_counter()
    hub = tiny_hub_cache(tmp_path / "hf" / "hub", paper, corpus)
    print(f"tiny hub cache ({', '.join(hub)}): {time.perf_counter() - started:.1f} s")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("BIASREPRO_ALLOW_UNPINNED", "1")  # the documented one-run opt-in
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")

    from biasrepro import snakedag

    dag, _ = snakedag.dag_jobs(configfile, repo, _job)
    dag_rules = {rule for rule, _, _ in dag}
    all_rules = set(re.findall(r"^rule (\w+):", "\n".join(
        p.read_text() for p in (REPO / "workflow/rules").glob("*.smk")), flags=re.M))
    all_rules |= {f"{kind}_{task}" for kind in ("finetune", "predict")
                  for task in paper["methods"]["tasks"]}
    assert all_rules - dag_rules == WORLD_RULES, "rules of the workflow the paper DAG lacks"

    started = time.perf_counter()
    proc = snakemake(["--cores", "2", "--configfile", str(configfile)], cwd=repo)
    elapsed = time.perf_counter() - started
    print(f"paper-profile rehearsal: {len(dag)} jobs in {elapsed:.1f} s")
    out = proc.stdout + proc.stderr
    steps = re.findall(r"(\d+) of (\d+) steps \(100%\) done", out)
    assert steps and int(steps[-1][0]) == len(dag), f"ran {steps[-1:]} of {len(dag)} jobs"
    for rule, outputs, logs in dag:  # every job of the DAG ran here, fresh
        for path in (*outputs, *logs):
            assert (repo / path).exists(), f"{rule}: {path} missing"

    # downloads: verified against the pins (the real files against paper.yaml's own)
    for label in done["pins_kept"] + done["pins_replaced"]:
        log = (repo / "logs/download" / f"{label}.log").read_text()
        assert "verified" in log, label
    from biasrepro.data.download import read_lock

    locked = read_lock(repo / "config/downloads.lock")
    for label in done["unpinned"]:
        assert "UNPINNED" in (repo / "logs/download" / f"{label}.log").read_text(), label
        dataset, name = label.split("/")
        url = f"{base_url}/{label}"
        assert locked[url]["sha256"] == sha256(repo / "resources/downloads" / dataset / name)
    assert done["pins_kept"], "no download was verified against paper.yaml's own sha256"

    # the data: the archive's reviews, the Civil Comments member, the SST set
    summary = json.loads((repo / "results/data/summary.json").read_text())
    assert summary["imdb"]["train"]["n"] == 2 * IMDB_PER_POLARITY["train"]
    assert summary["imdb"]["test"]["n"] == 2 * IMDB_PER_POLARITY["test"] + sum(
        len(v) for v in WRITTEN_TEST.values())
    sst = pd.read_parquet(repo / "results/data/sst/fairness.parquet")
    assert len(sst) == 462
    civil = json.loads((repo / "results/data/civil_comments/identity_stats.json").read_text())
    assert civil["format"] == paper["datasets"]["civil_comments"]["format"]
    kept = paper["preprocess"]["civil_comments"].get("splits", "all")
    if kept != "all":  # the stand-in has rows of every source split; the others are dropped
        assert civil["source_splits"]["kept"] == kept and civil["source_splits"]["dropped"] > 0

    # the models: the Hub ids at their revisions; every method of each task
    models = paper["models"]["tasks"]
    for task, methods in paper["methods"]["tasks"].items():
        gaps = pd.read_csv(repo / f"results/{task}/fairness/gaps.csv")
        assert set(gaps["method"]) == set(methods), task
        assert set(gaps["model"]) == set(models[task]), task
    for task, task_models in models.items():
        for model in task_models:
            record = json.loads((repo / f"results/models/{task}/{model}/baseline/training.json"
                                 ).read_text())
            entry = paper["models"]["registry"][model]
            assert (record["base"]["location"], record["base"]["revision"]) == (
                entry.get("id", entry.get("path")), entry.get("revision")), record["base"]
    assert "fastcoref" in (repo / f"logs/biasfinder_parse/{paper['biasfinder']['dataset']}-"
                                  f"{paper['biasfinder']['split']}.log").read_text()

    # BiasFinder's Table 4: every sentiment model x method x characteristic
    corpus_name = f"{paper['biasfinder']['dataset']}-{paper['biasfinder']['split']}"
    table = pd.read_csv(repo / f"results/biasfinder/{corpus_name}/table4.csv")
    bf_methods = paper["biasfinder"]["methods"] or paper["methods"]["tasks"]["sentiment"]
    assert set(table["model"]) == set(models["sentiment"])
    assert set(table["method"]) == set(bf_methods)
    # every characteristic has templates (the hand-set F-coref's clusters for two of them)
    assert set(table["characteristic"]) == {*paper["biasfinder"]["characteristics"], "total"}
    assert (table["templates"] > 0).all(), table[["characteristic", "templates"]]
    if "lists" in table.columns:  # the word lists the profile names (BiasFinder's own)
        assert set(table["lists"]) == {paper["biasfinder"].get("lists", "project")}

    # representation bias: Table 4 of every model with each attribute's subspace
    rep = pd.read_csv(repo / "results/representation/table4.csv")
    assert set(rep["model"]) == set(paper["representation"]["models"])
    assert set(rep["variant"]) == {"pretrained"} | {
        f"sentdebias-{a}" for a in paper["representation"]["attributes"]}
    assert set(rep["source"]) == {"crows", "stereoset", "seat"}

    # the paper tables: the published numbers beside ours, the real checkpoints' names
    cells = pd.concat([pd.read_csv(p) for p in sorted(
        (repo / "results/analysis/paper_tables").glob("*.csv"))], ignore_index=True)
    assert cells["published"].notna().all()
    not_run = cells[cells["reason"].fillna("").str.startswith("not run")]
    assert not_run.empty, f"paper cells the paper profile does not run:\n{not_run}"
    named = cells[cells["our_model"].notna()]
    assert not named.empty and (named["stand_in"] == "no").all()
    assert cells["ours"].notna().sum() > len(cells) / 2
