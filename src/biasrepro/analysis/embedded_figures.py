"""The embedded default's figures that the documentation quotes, read from a run's results.

The docs (``docs/paper-protocols.md``, the README) state how a choice shows on the embedded
world; the numbers behind those statements live in one generated page,
``docs/embedded-default.md``, written by ``biasrepro analysis embedded-figures`` from a run of
``snakemake --cores all`` and never typed by hand. The page records the resolved
configuration's sha256 (the run record's), so a test notices when the configuration changes
and the page was not regenerated, and an opt-in test reruns the default and compares the
page byte for byte (``docs/testing.md``).

Each figure: a key (the anchor the docs link to), what it is, its value as text, and the
result file it was read from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from biasrepro.analysis.controls import held_classes
from biasrepro.errors import DataError
from biasrepro.io import atomic_outputs, read_csv, read_json, read_parquet, write_text

#: the page's file name under docs/
PAGE = "embedded-default.md"


@dataclass(frozen=True)
class Figure:
    key: str
    what: str
    value: str
    source: str


def _rows(path: Path) -> int:
    if not path.is_file():
        raise DataError("missing result file (run `snakemake --cores all` first)", file=path)
    return pq.ParquetFile(path).metadata.num_rows


def _side_ratios(summary: dict, attributes: dict, path: Path) -> dict[str, tuple[float, float]]:
    """Per attribute with a multi-group side, Eq. 4 with each side the mean of its groups'
    toxic ratios (ours) and with the side's rows pooled into one ratio."""
    train = summary["civil_comments"]["identities"]["train"]
    out = {}
    for attr, sides in attributes.items():
        mean, pooled = [], []
        for side in ("marginalized", "non_marginalized"):
            groups = [train[g] for g in sides[side]]
            mean.append(sum(g["positive_ratio"] for g in groups) / len(groups))
            pooled.append(sum(g["positive"] for g in groups) / sum(g["n"] for g in groups))
        out[attr] = (abs(mean[0] - mean[1]), abs(pooled[0] - pooled[1]))
    if not out:
        raise DataError("no attributes in the data summary", file=path)
    return out


def _data(results: Path) -> list[Figure]:
    path = results / "data" / "summary.json"
    summary = read_json(path)
    sides = _side_ratios(summary, summary["attributes"], path)
    value = "; ".join(f"{a} {m:.4f} (pooled {p:.4f})" for a, (m, p) in sides.items())
    return [Figure("eq4-sides", "Eq. 4 on the training split, each side the mean of its groups' "
                   "toxic ratios (pooling the side's rows in brackets)", value,
                   "results/data/summary.json")]


def _dataset_bias(results: Path) -> list[Figure]:
    rel = "results/toxicity/fairness/dataset_bias.csv"
    df = read_csv(results / rel.removeprefix("results/"),
                  ["method", "attribute", "overamplification_raw", "overamplification"])
    out = []
    for method in ("baseline", "downstream-perturbed-data"):
        d = df[df.method == method]
        if d.empty:
            continue
        out.append(Figure(f"eq5-{method}", f"Eq. 5 of the {method} training data: raw "
                          "(normalised) per attribute",
                          "; ".join(f"{r.attribute} {r.overamplification_raw:g} "
                                    f"({r.overamplification:.2f})" for r in d.itertuples()),
                          rel))
    return out


def _sensescore(results: Path) -> list[Figure]:
    rel = "results/toxicity/fairness/sensescore.csv"
    df = read_csv(results / rel.removeprefix("results/"),
                  ["model", "method", "attribute", "sense_score", "sense_score_factual"])
    by = {m: df[df.method == m].set_index(["model", "attribute"])
          for m in ("baseline", "downstream-perturbed-data")}
    base, pert = by.values()
    cells = sorted(set(base.index) & set(pert.index))
    if not cells:
        return [Figure("sensescore", "SenseScore (Eq. 6)", "not in this run: it needs the "
                       "baseline and downstream-perturbed-data models", rel)]
    parts = []
    for col, name in (("sense_score", "fixed"), ("sense_score_factual", "literal")):
        lower = sum(pert.loc[c, col] < base.loc[c, col] for c in cells)
        parts.append(f"{name}: baseline {base.loc[cells, col].mean():.4f}, perturbed-data "
                     f"{pert.loc[cells, col].mean():.4f}, lower in {lower} of {len(cells)} "
                     "cells")
    return [Figure("sensescore", "SenseScore (Eq. 6), mean over model × attribute cells, by "
                   "the fixed and the literal orientation", "; ".join(parts), rel)]


def _training_rows(results: Path) -> list[Figure]:
    files = {"original": "data/civil_comments/train.parquet",
             "perturbed": "toxicity/training/perturbed.parquet",
             "stratified": "toxicity/training/stratified.parquet",
             "perturbed_stratified": "toxicity/training/perturbed_stratified.parquet"}
    built = {k: v for k, v in files.items() if k == "original" or (results / v).is_file()}
    value = "; ".join(f"{k} {_rows(results / v):,}" for k, v in built.items())
    return [Figure("training-rows", "toxicity training sets this run built, rows", value,
                   ", ".join(f"results/{v}" for v in built.values()))]


def _imdb_gendered(results: Path) -> list[Figure]:
    folder = results / "sentiment" / "imdb_gendered"
    if not folder.is_dir():
        return []  # no method of this run trains on IMDB-gendered
    splits = ("train", "validation", "test", "test_perturbed")
    value = "; ".join(f"{s} {_rows(folder / f'{s}.parquet'):,}" for s in splits)
    return [Figure("imdb-gendered", "IMDB-gendered's splits, reviews", value,
                   "results/sentiment/imdb_gendered/*.parquet")]


def _leakage(results: Path) -> list[Figure]:
    out = []
    for task in ("sentiment", "toxicity"):
        rel = f"results/{task}/leakage.json"
        report = read_json(results / rel.removeprefix("results/"))
        worst: dict[tuple[str, str], tuple[int, int]] = {}
        for p in report["pairs"]:
            key = (p["fitted"], p["scored"])
            seen = worst.get(key, (0, 0))
            worst[key] = (max(seen[0], p["identical_texts"]), max(seen[1], p["shared_rows"]))
        found = [f"{f} vs {s}: {t} identical texts, {r} shared rows"
                 for (f, s), (t, r) in sorted(worst.items()) if t or r]
        value = (f"{len(worst)} pairs of a training and a scored set; "
                 + ("; ".join(found) if found else "no text or row in common"))
        out.append(Figure(f"leakage-{task}", f"{task}: texts of a training set found in a "
                          f"scored set (policy {report['identical_texts_policy']})",
                          value, rel))
    return out


def _controls(results: Path) -> list[Figure]:
    rel = "results/analysis/controls.csv"
    df = read_csv(results / rel.removeprefix("results/"),
                  ["id", "result", "measured", "negative_control", "evidence"])
    evidence = df[df.evidence.astype(str) == "True"]
    counts = evidence.result.value_counts()
    negative = evidence[evidence.negative_control.astype(str) == "True"]
    out = [Figure("controls", "planted-bias controls counted as evidence: pass / FAIL / not "
                  "run (negative controls among them)",
                  f"{counts.get('pass', 0)} / {counts.get('FAIL', 0)} / "
                  f"{counts.get('not run', 0)} ({len(negative)} negative"
                  + "".join(f"{', ' if i else ': '}{r.id} {r.result}"
                            for i, r in enumerate(negative.itertuples())) + ")", rel)]
    out += [Figure(f"control-{r.id}", f"control {r.id} ({r.result})", r.measured, rel)
            for r in df.itertuples()]
    return out


def _biasfinder(results: Path) -> list[Figure]:
    rel = "results/biasfinder/imdb-test/table4.csv"
    df = read_csv(results / rel.removeprefix("results/"),
                  ["model", "method", "characteristic", "btc_rate"])
    base = df[(df.method == "baseline") & (df.characteristic != "total")]
    value = "; ".join(f"{m}: " + ", ".join(f"{r.characteristic} {r.btc_rate:.3f}"
                                           for r in g.itertuples())
                      for m, g in base.groupby("model"))
    return [Figure("btc-rates", "BiasFinder BTC rate of the baseline sentiment models (Table 4)",
                   value, rel)]


def _effects(mutants: pd.DataFrame, predictions: Path) -> dict[str, float]:
    """Each class's effect: the mean over templates of its mutant's probability minus the
    mean of the template's mutants (0 for every class of a model that ignores the class)."""
    d = mutants.merge(read_parquet(predictions, what="predictions")[["id", "prob"]], on="id")
    d["offset"] = d["prob"] - d.groupby("template_id")["prob"].transform("mean")
    per = d.groupby(["template_id", "class"])["offset"].mean().unstack()
    return {str(k): float(v) for k, v in per.mean().items()}


def _spread(effects: dict[str, float], classes: set[str], ref: float) -> str:
    vals = [effects[c] - ref for c in sorted(classes & set(effects))]
    if not vals:
        return "none"
    mean = sum(vals) / len(vals)
    sd = (sum((v - mean) ** 2 for v in vals) / max(len(vals) - 1, 1)) ** 0.5
    return (f"{len(vals)} classes, mean {mean:+.3f}, sd {sd:.3f}, largest |effect| "
            f"{max(map(abs, vals)):.3f}")


def _class_effects(results: Path) -> list[Figure]:
    """Occupation classes against the held ones of the btc-held-occupations control (in the
    training reviews with no association, not over-used by the pre-training corpus): the
    planted ones, and those no training review holds."""
    root = results / "biasfinder" / "imdb-test"
    world = results.parent / "resources" / "world"
    truth_path = world / "imdb" / "ground_truth.json"
    truth = read_json(truth_path)
    train = truth["splits"]["train"]["characteristics"]["occupation"]
    planted = {c for c, v in train.items() if v["planted"]}
    pretraining = world / "stereotypes" / "ground_truth.json"
    seen = set(held_classes(truth, truth_path,
                            read_json(pretraining) if pretraining.exists() else None))
    mutants = {c: read_parquet(root / "mutants" / f"{c}.parquet", what="mutants")[
        ["id", "template_id", "class"]] for c in ("occupation", "country")}
    parts = []
    for model in sorted(p.name for p in (root / "predictions").iterdir() if p.is_dir()):
        pred = root / "predictions" / model / "baseline"
        occ = _effects(mutants["occupation"], pred / "occupation.parquet")
        country = _effects(mutants["country"], pred / "country.parquet")
        held = [occ[c] for c in sorted(seen) if c in occ]  # one summation order
        ref = sum(held) / len(held) if held else 0.0
        parts.append(f"{model}: occupation, against the held classes "
                     f"({_spread(occ, seen, ref)}): planted "
                     + ", ".join(f"{c} {occ[c] - ref:+.3f}" for c in sorted(planted & set(occ)))
                     + f"; never in them: {_spread(occ, set(occ) - set(train), ref)}; country "
                     f"(a person name of each country; the world plants nothing on names): "
                     f"{_spread(country, set(country), 0.0)}")
    return [Figure("btc-class-effects", "BiasFinder class effects of the baseline sentiment "
                   "models: a class's mean over templates of its mutant's probability minus "
                   "the template's mean", "; ".join(parts),
                   "results/biasfinder/imdb-test/{mutants,predictions}, "
                   "resources/world/imdb/ground_truth.json")]


#: every figure the page holds, in page order
SECTIONS: Sequence[Callable[[Path], list[Figure]]] = (
    _controls, _data, _dataset_bias, _sensescore, _training_rows, _imdb_gendered, _leakage,
    _biasfinder, _class_effects,
)


def figures(results: Path) -> list[Figure]:
    """Every figure of the page, read from a run's ``results`` folder."""
    return [f for section in SECTIONS for f in section(Path(results))]


def render(figs: Sequence[Figure], *, config_sha256: str, config_files: Sequence[str]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "# The embedded default, measured",
        "",
        "Generated by `biasrepro analysis embedded-figures` from a run of `snakemake --cores "
        "all` on the embedded default; never edited by hand. The other pages quote these "
        "figures by their key. Regenerate after a change that moves them:",
        "",
        "```sh",
        ".venv/bin/snakemake --cores all && .venv/bin/biasrepro analysis embedded-figures \\",
        "    --results results --out docs/embedded-default.md",
        "```",
        "",
        f"- resolved configuration sha256: `{config_sha256}`",
        f"- configuration files: {', '.join(f'`{c}`' for c in config_files)}",
        "",
        "| key | figure | value | read from |",
        "|---|---|---|---|",
    ]
    lines += [f"| <a id=\"{f.key}\"></a>`{f.key}` | {cell(f.what)} | {cell(f.value)} | "
              f"`{f.source}` |" for f in figs]
    return "\n".join(lines) + "\n"


def write_page(results: Path, out: Path, *, config_sha256: str,
               config_files: Sequence[str]) -> list[Figure]:
    """Read every figure, then write the page (nothing is written when one is missing)."""
    figs = figures(results)
    with atomic_outputs(out) as (tmp,):
        write_text(render(figs, config_sha256=config_sha256, config_files=config_files), tmp)
    return figs


def page_sha256(text: str) -> str | None:
    """The configuration sha256 a page was generated with."""
    marker = "- resolved configuration sha256: `"
    for line in text.splitlines():
        if line.startswith(marker):
            return line[len(marker):].rstrip("`")
    return None


