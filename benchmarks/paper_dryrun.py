"""A paper-scale dry run of the data path: the paper profile's own Snakemake workflow, on
generated inputs of the papers' sizes, with every rule's time and peak memory.

What runs: ``snakemake --configfile config/paper.yaml <override>`` in a copy of the checkout
(its tracked and untracked-but-not-ignored files, as the tests make one), outside the
checkout, on the data-path targets only: the prepared datasets and their summary, the
toxicity study's perturbed, re-stratified and perturbed re-stratified training sets, the
appendix's IMDB-gendered sets and their perturbations, BiasFinder's parse and templates
of the IMDB test reviews, and both tasks' fairness sets (original and balanced). No model is
fine-tuned or scored.

The override config changes only the inputs and the two pretrained models the data path
loads; every other setting is the paper profile's:

* ``datasets.civil_comments``: ``source: local``, ``format: kaggle``, a generated
  ``all_data.csv`` of ``--rows`` rows (default 2,000,000, as Kaggle's) with Kaggle's real
  header (``benchmarks/scale_civil_comments.py``'s generator);
* ``datasets.imdb``: ``source: local``, ``format: aclimdb_tar`` (the paper profile's
  format), a generated ``aclImdb_v1.tar.gz`` of ``--reviews`` reviews per split (default
  25,000, as IMDB's): the embedded world's review generator with longer reviews
  (:data:`REVIEW_SENTENCES`, about IMDB's mean of 230 words), so they name people,
  occupations and countries as BiasFinder needs;
* ``datasets.sst``: ``source: local``, the world's SST-fairness-shaped CSV with the real
  set's 462 rows;
* ``datasets.biasfinder_lists``: ``source: local``, BiasFinder's own six files
  (``--lists``: a folder holding them, e.g. the repository's ``asset/``; else small
  stand-ins in their formats);
* ``perturbation.restratify.model``: a random tiny BERT masked LM (hidden 16, one layer)
  registered as ``models.registry.dryrun-tiny-mlm`` (``source: local``) instead of
  bert-base-uncased, which cannot be downloaded here;
* ``biasfinder.coref.model``: a tiny hand-set F-coref model in a local directory
  (tests/fixtures/tiny_coref.py: it clusters each gender's pronouns and a few first names)
  instead of biu-nlp/f-coref.

Then it reads Snakemake's own benchmark files (``logs/benchmarks/**.tsv``, one per job:
wall seconds ``s`` and ``max_rss`` in MB) and prints a Markdown table, rule by rule: jobs,
wall time (the jobs' sum), peak RSS (the largest job's), and the totals, and writes it to
``--out``; ``--workdir DIR`` keeps the copy, inputs and results there (``DIR/run.json``,
``DIR/snakemake.log``), and ``--table-only --workdir DIR`` prints a finished run's table
again. Run (over an hour on 2 cores at the default sizes; docs/paper-scale.md)::

    nice .venv/bin/python benchmarks/paper_dryrun.py --out paper_dryrun.md
    .venv/bin/python benchmarks/paper_dryrun.py --rows 50000 --reviews 100   # two minutes

Below about 50,000 rows some identity group of the training split has no toxic comment,
and the re-stratification (rightly) refuses to run: it has none to augment.
"""

from __future__ import annotations

import argparse
import copy
import csv
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: sentences per generated review: 8-30 of the world's sentences (about 12 words each) give
#: IMDB's mean of about 230 words
REVIEW_SENTENCES = {"min": 8, "max": 30}
#: first names the tiny F-coref puts in their gender's pronoun cluster (country templates
#: need a name in a person's cluster)
COREF_NAMES = {"male": ("john", "david", "michael", "robert", "james", "william", "mark",
                        "charles", "jack", "peter", "paul", "george", "tom"),
               "female": ("mary", "jane", "jennifer", "anna", "sarah", "elizabeth", "susan",
                          "kate", "julia", "emma")}
#: the registry name of the tiny masked LM the re-stratification uses
TINY_MLM = "dryrun-tiny-mlm"
#: the real SST fairness set's rows
SST_ROWS = 462


def data_path_targets(paper: dict) -> list[str]:
    """The files the dry run asks Snakemake for (the data path of the paper profile)."""
    bf = paper["biasfinder"]
    corpus = f"{bf['dataset']}-{bf['split']}"
    targets = ["results/data/summary.json"]
    targets += [f"results/toxicity/training/{k}.parquet"
                for k in ("perturbed", "stratified", "perturbed_stratified")]
    targets += ["results/sentiment/imdb_gendered/train.parquet",
                "results/sentiment/imdb_gendered/test_perturbed.parquet",
                "results/sentiment/training/perturbed.parquet"]
    targets += [f"results/biasfinder/{corpus}/templates/{c}.parquet"
                for c in bf["characteristics"]]
    targets += [f"results/{task}/fairness/{name}.parquet"
                for task in ("toxicity", "sentiment") for name in ("original", "balanced")]
    return targets


# -- inputs ---------------------------------------------------------------------------------


def copy_checkout(dest: Path) -> Path:
    """The checkout's tracked and untracked-but-not-ignored files (a fresh clone's view), as
    the tests copy it."""
    sys.path.insert(0, str(REPO / "tests"))
    from conftest import copy_checkout as copy

    return copy(dest)


def world_reviews(n: int, seed: int) -> dict:
    """``n`` reviews per split from the embedded world's generator (no planted bias)."""
    from biasrepro import config as cfg
    from biasrepro.data.world import reviews

    settings = copy.deepcopy(cfg.load(REPO / "config" / "config.yaml")["world"]["reviews"])
    settings |= {"n_train": n, "n_test": n, "sentences": REVIEW_SENTENCES, "planted": {}}
    splits, _, _ = reviews.build(settings, seed=seed)
    return splits


def write_aclimdb(path: Path, n: int, seed: int) -> dict[str, int]:
    """``aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt`` in a gzip tarball, as Stanford's."""
    splits = world_reviews(n, seed)
    words = 0
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        add("aclImdb/README", b"Large Movie Review Dataset v1.0 (generated stand-in)\n")
        add("aclImdb/imdb.vocab", b"the\nand\n")
        for split, df in splits.items():
            for i, (text, label) in enumerate(zip(df["text"], df["label"], strict=True)):
                rating = 7 + i % 4 if label else 1 + i % 4
                polarity = "pos" if label else "neg"
                add(f"aclImdb/{split}/{polarity}/{i}_{rating}.txt", text.encode("utf-8"))
                words += len(text.split())
    return {"reviews": sum(len(df) for df in splits.values()),
            "mean_words": round(words / max(1, sum(len(df) for df in splits.values())))}


def write_sst(out_dir: Path, seed: int) -> Path:
    """The world's SST-fairness-shaped CSV (the real file's columns and defects), 462 rows."""
    from biasrepro import config as cfg

    sst = copy.deepcopy(cfg.load(REPO / "config" / "config.yaml")["world"]["sst"])
    settings = {"seed": seed, "world.sst": sst | {"n": SST_ROWS}}
    subprocess.run([sys.executable, "-m", "biasrepro", "world", "sst", "--settings",
                    json.dumps(settings), "--out-dir", str(out_dir)], check=True,
                   capture_output=True)
    return out_dir / "SST_fairness_dataset.csv"


def biasfinder_lists(out_dir: Path, given: Path | None) -> Path:
    """BiasFinder's six word-list files: the folder ``given``, else stand-ins."""
    if given is not None:
        return given
    sys.path.insert(0, str(REPO / "tests"))
    from test_original_lists import write_fixture

    return write_fixture(out_dir)


def tiny_models(out_dir: Path, corpus: list[str]) -> dict[str, Path]:
    """The random tiny masked LM and the hand-set tiny F-coref (tests/fixtures)."""
    sys.path.insert(0, str(REPO / "tests"))
    from fixtures.tiny_coref import pronoun_fcoref
    from fixtures.tiny_models import tiny_masked_lm

    mlm = tiny_masked_lm(out_dir / "tiny-mlm", "bert", corpus, vocab_size=2000,
                         max_length=126)
    coref = pronoun_fcoref(out_dir / "tiny-fcoref", corpus, COREF_NAMES)
    return {"mlm": mlm, "coref": coref}


def generate(inputs: Path, rows: int, reviews: int, seed: int,
             lists: Path | None = None) -> dict:
    """Every input and the two tiny models under ``inputs``; what was made."""
    inputs.mkdir(parents=True, exist_ok=True)
    made: dict = {}
    civil = inputs / "all_data.csv"
    started = time.perf_counter()
    out = subprocess.run([sys.executable, str(HERE / "scale_civil_comments.py"), "--generate",
                          str(civil), "--rows", str(rows), "--seed", str(seed)],
                         check=True, capture_output=True, text=True).stdout
    made["civil_comments"] = json.loads(out) | {"mb": round(civil.stat().st_size / 2**20)}
    imdb = inputs / "aclImdb_v1.tar.gz"
    out = subprocess.run([sys.executable, __file__, "--generate-imdb", str(imdb),
                          "--reviews", str(reviews), "--seed", str(seed)],
                         check=True, capture_output=True, text=True).stdout
    made["imdb"] = json.loads(out) | {"mb": round(imdb.stat().st_size / 2**20)}
    made["sst"] = str(write_sst(inputs / "sst", seed))
    made["biasfinder_lists"] = str(biasfinder_lists(inputs / "biasfinder_lists", lists))
    with tarfile.open(imdb) as tar:  # the models' vocabulary: a few hundred reviews
        texts = [tar.extractfile(m).read().decode() for m in tar.getmembers()[2:402]]
    with open(civil, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        texts += [row["comment_text"] for _, row in zip(range(2000), reader, strict=False)]
    models = tiny_models(inputs / "models", texts)
    made["models"] = {k: str(v) for k, v in models.items()}
    made["generate_s"] = round(time.perf_counter() - started, 1)
    return made


def override(paper: dict, inputs: Path, made: dict) -> dict:
    """The override config: the inputs and the two models, nothing else."""
    return {
        "datasets": {
            "imdb": {"source": "local", "format": "aclimdb_tar",
                     "path": str(inputs / "aclImdb_v1.tar.gz")},
            "civil_comments": {"source": "local", "format": "kaggle",
                               "path": str(inputs / "all_data.csv")},
            "sst": {"source": "local", "format": "csv", "path": made["sst"]},
            "biasfinder_lists": {"source": "local", "format": "biasfinder_asset",
                                 "path": made["biasfinder_lists"]},
        },
        "models": {"registry": {TINY_MLM: {"source": "local", "architecture": "bert",
                                           "path": made["models"]["mlm"]}}},
        "perturbation": {"restratify": {"model": TINY_MLM}},
        "biasfinder": {"coref": {"model": made["models"]["coref"]}},
    }


def merged(paper: dict, over: dict) -> dict:
    """paper.yaml with the override applied; a dataset entry is replaced whole (a local
    file has no ``files`` or ``member`` of the download it stands in for)."""
    out = copy.deepcopy(paper)

    def merge(base: dict, new: dict, where: str) -> None:
        for key, value in new.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict) and where != "datasets":
                merge(base[key], value, key)
            else:
                base[key] = copy.deepcopy(value)

    merge(out, over, "")
    return out


# -- the run and its table ------------------------------------------------------------------


def rule_of(tsv: Path, root: Path) -> tuple[str, str]:
    """(rule, job) of a benchmark file: ``logs/benchmarks/RULE.tsv`` or ``RULE/JOB....tsv``."""
    parts = tsv.relative_to(root).with_suffix("").parts
    return parts[0], "/".join(parts[1:]) or parts[0]


def _number(value: str | None) -> float:
    """A benchmark cell; Snakemake writes ``NA`` where it measured nothing."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def read_benchmarks(root: Path) -> list[dict]:
    """One row per job from Snakemake's benchmark files under ``root``."""
    rows = []
    for tsv in sorted(root.rglob("*.tsv")):
        with open(tsv, newline="") as f:
            records = list(csv.DictReader(f, delimiter="\t"))
        if not records:
            continue
        rule, job = rule_of(tsv, root)
        rows.append({"rule": rule, "job": job, "s": float(records[-1]["s"]),
                     "max_rss": _number(records[-1].get("max_rss")),
                     "cpu_time": _number(records[-1].get("cpu_time"))})
    return rows


def table(jobs: list[dict], snakemake_s: float, header: str) -> str:
    """The Markdown table: each rule's jobs, wall and CPU time (sums) and peak RSS (max)."""
    rules: dict[str, dict] = {}
    for j in jobs:
        r = rules.setdefault(j["rule"], {"jobs": 0, "s": 0.0, "cpu": 0.0, "rss": 0.0,
                                         "names": []})
        r["jobs"] += 1
        r["s"] += j["s"]
        r["cpu"] += j["cpu_time"]
        r["rss"] = max(r["rss"], j["max_rss"])
        r["names"].append(j["job"])
    lines = [header, "", "| rule | jobs | wall time (s) | CPU time (s) | peak RSS (MB) |",
             "|---|--:|--:|--:|--:|"]
    for name, r in sorted(rules.items(), key=lambda kv: -kv[1]["s"]):
        jobs_txt = str(r["jobs"]) if r["jobs"] == 1 and r["names"] == [name] else (
            f"{r['jobs']} ({', '.join(r['names'])})")
        lines.append(f"| `{name}` | {jobs_txt} | {r['s']:,.1f} | {r['cpu']:,.1f} | "
                     f"{r['rss']:,.0f} |")
    total_s = sum(r["s"] for r in rules.values())
    peak = max((r["rss"] for r in rules.values()), default=0.0)
    total_cpu = sum(r["cpu"] for r in rules.values())
    lines.append(f"| **total** | {sum(r['jobs'] for r in rules.values())} | "
                 f"{total_s:,.1f} (sum of jobs) | {total_cpu:,.1f} | {peak:,.0f} (largest job) |")
    lines += ["", f"End to end (`snakemake`, jobs side by side on the cores given): "
              f"{snakemake_s:,.1f} s."]
    return "\n".join(lines) + "\n"


def run(rows: int, reviews: int, seed: int, cores: int, workdir: Path,
        lists: Path | None = None, timeout: float | None = None) -> dict:
    """Generate, run the workflow, read the benchmarks; what happened, as a dict."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    repo = copy_checkout(workdir / "repo")
    inputs = workdir / "inputs"
    made = generate(inputs, rows, reviews, seed, lists)
    over = override(paper, inputs, made)
    (workdir / "override.yaml").write_text(yaml.safe_dump(over, sort_keys=False))
    # paper.yaml with the override, in one file: Snakemake merges config files key by key,
    # which would keep the download's `files` and `member` under a local dataset
    configfile = workdir / "paper-dryrun.yaml"
    configfile.write_text(yaml.safe_dump(merged(paper, over), sort_keys=False))
    targets = data_path_targets(paper)
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                 os.environ.get("PATH", "")]),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    argv = [str(Path(sys.executable).parent / "snakemake"), "--cores", str(cores),
            "--configfile", str(configfile), "--keep-going", *targets]
    started = time.perf_counter()
    with open(workdir / "snakemake.log", "w") as log:
        proc = subprocess.run(argv, cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
                              timeout=timeout)
    elapsed = time.perf_counter() - started
    record = {"made": made, "snakemake_s": elapsed, "returncode": proc.returncode,
              "cores": cores, "targets": targets}
    (workdir / "run.json").write_text(json.dumps(record, indent=1))
    return record


def report(workdir: Path) -> tuple[str, int]:
    """The Markdown table of a finished run in ``workdir``, and snakemake's exit status."""
    r = json.loads((workdir / "run.json").read_text())
    m = r["made"]
    header = (f"Paper-scale dry run of the data path ({r['cores']} cores): Civil Comments "
              f"{m['civil_comments']['rows']:,} rows ({m['civil_comments']['mb']:,} MB, "
              f"{m['civil_comments']['annotated']:,} identity-annotated); IMDB "
              f"{m['imdb']['reviews']:,} reviews (both splits, mean "
              f"{m['imdb']['mean_words']} words); inputs generated in "
              f"{m['generate_s']:,.0f} s.")
    from biasrepro import layout

    jobs = read_benchmarks(workdir / "repo" / layout.JOB_BENCHMARKS)
    text = table(jobs, r["snakemake_s"], header)
    if r["returncode"] != 0:
        log = (workdir / "snakemake.log").read_text(errors="replace")
        text += (f"\n**snakemake failed (exit {r['returncode']})**; the table holds the "
                 f"jobs that finished. Its log's end:\n\n```\n{log[-3000:]}\n```\n")
    return text, r["returncode"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000, help="Civil Comments rows")
    ap.add_argument("--reviews", type=int, default=25_000, help="IMDB reviews per split")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lists", type=Path, default=None,
                    help="a folder holding BiasFinder's six word-list files (default: "
                    "stand-ins in their formats)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the checkout copy, inputs and results go (kept); default a "
                         "temporary folder, removed afterwards")
    ap.add_argument("--out", type=Path, default=None, help="also write the table here")
    ap.add_argument("--table-only", action="store_true",
                    help="only print the table of the finished run in --workdir")
    ap.add_argument("--generate-imdb", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.generate_imdb is not None:  # a child of generate(): its memory is its own
        print(json.dumps(write_aclimdb(args.generate_imdb, args.reviews, args.seed)))
        return 0
    if args.table_only and args.workdir is None:
        ap.error("--table-only needs the --workdir of a finished run")
    with tempfile.TemporaryDirectory(prefix="paper-dryrun-") as tmp:
        workdir = (args.workdir or Path(tmp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        if not args.table_only:
            run(args.rows, args.reviews, args.seed, args.cores, workdir, args.lists)
        text, returncode = report(workdir)
        print(text)
        if args.out:
            args.out.write_text(text)
    return returncode


if __name__ == "__main__":
    raise SystemExit(main())
