"""The papers' tables rebuilt from our results, the published value beside ours.

The published values live once, as data, in ``published/biasfinder.csv`` (BiasFinder
Table 4) and ``published/toxicity_fairness.csv`` (toxicity paper Tables 3-10 and 12, and
the numbers its text gives for §4.2, §5.1, §5.2, Figures 3-5 and the sentiment appendix):
one row per published cell, keyed by ``table_id``, ``row`` and ``column`` (published/
README.md lists the keys). For every published cell this module finds our value in a run's
result files, or the reason why there is none, and writes ``OUT/<table_id>.csv`` (one row
per cell: ours, published, ours - published, reason, source), ``OUT/<table_id>.md`` (the
paper's rows and columns, "ours / published (difference)" in each cell) and ``OUT/index.md``.

Paper models map to ours by architecture: BERT / ALBERT / RoBERTa is the first model of
the relevant list (``models.tasks.TASK``; ``representation.models`` for Table 4) whose
``models.registry`` entry has that ``architecture``. It counts as the paper's own model
only when the entry is a Hub model whose id names the paper's checkpoint (bert-base-uncased,
albert-base-v2, roberta-base); anything else is marked a stand-in.

Only the standard library is imported here, so :data:`TABLE_IDS` is cheap to import.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biasrepro import layout
from biasrepro.errors import ConfigError, DataError
from biasrepro.fairness.gate import MODEL_WORKS
from biasrepro.models import training

TABLE_IDS: tuple[str, ...] = (
    "biasfinder-table4",
    "toxicity-table3", "toxicity-table4", "toxicity-table5", "toxicity-table6",
    "toxicity-table7", "toxicity-table8", "toxicity-table9", "toxicity-table10",
    "toxicity-table12",
    "toxicity-text-auc", "toxicity-text-fairness-sets", "toxicity-text-metric-correlations",
    "toxicity-figures-3-5", "toxicity-appendix-sentiment",
)
#: which published file holds which tables
PUBLISHED_FILES: dict[str, tuple[str, ...]] = {
    "biasfinder.csv": TABLE_IDS[:1],
    "toxicity_fairness.csv": TABLE_IDS[1:],
}
PUBLISHED_COLUMNS = ("paper", "table_id", "row", "column", "value", "unit", "source", "note")
OUTPUT_COLUMNS = ("table_id", "row", "column", "paper_model", "our_model", "our_source",
                  "stand_in", "ours", "published", "difference", "reason", "unit", "source",
                  "published_note", "our_note", "seeds", "sd", "min", "max",
                  "published_in_range", "n", "p_permutation")
#: files of a ``biasrepro fairness report`` folder that are read
STUDY_FILES = ("report.json", "correlations.csv", "training_groups.csv", "group_metrics.csv")

PAPER_MODELS = {"bert": ("BERT", "bert-base-uncased"), "albert": ("ALBERT", "albert-base-v2"),
                "roberta": ("RoBERTa", "roberta-base")}
ATTRIBUTES = ("gender", "race", "religion")
GAPS = ("FPR_gap", "TPR_gap", "AUC_gap")
_DATA_METHODS = ("baseline", "downstream-perturbed-data", "downstream-stratified-data",
                 "downstream-perturbed-stratified-data")
PAPER_METHODS = frozenset([
    *_DATA_METHODS, "imdb-gendered",
    *(f"{s}-sentDebias-{a}" for s in ("upstream", "downstream") for a in ATTRIBUTES),
    *(f"upstream-sentDebias-{a}-downstream-all-data-debias" for a in ATTRIBUTES)])
#: Table 10's debias approaches: the method each stands for, for attribute ``{a}``
APPROACHES = {"upstream-sentDebias": "upstream-sentDebias-{a}",
              "downstream-sentDebias": "downstream-sentDebias-{a}",
              **{m: m for m in _DATA_METHODS[1:]},
              "upstream-sentDebias-downstream-all-data-debias":
                  "upstream-sentDebias-{a}-downstream-all-data-debias"}

TITLES = {
    "biasfinder-table4": ("BiasFinder, Table 4", "templates generated and bias-uncovering "
                          "test cases (BTCs) found per characteristic for the BERT sentiment "
                          "model fine-tuned on IMDB (our `baseline` sentiment method)"),
    "toxicity-table3": ("toxicity paper, Table 3", "FPR/TPR/AUC gaps of the baseline models "
                        "on the original and the balanced fairness set"),
    "toxicity-table4": ("toxicity paper, Table 4", "CrowS-Pairs, StereoSet and SEAT scores of "
                        "the pretrained models, plain and with each SentDebias subspace"),
    "toxicity-table5": ("toxicity paper, Table 5", "AUC and gaps before and after upstream "
                        "SentDebias"),
    "toxicity-table6": ("toxicity paper, Table 6", "AUC and gaps before and after "
                        "re-stratified training data (selection bias removed)"),
    "toxicity-table7": ("toxicity paper, Table 7", "AUC and gaps before and after removing "
                        "overamplification bias (downstream SentDebias, perturbed and "
                        "perturbed re-stratified data)"),
    "toxicity-table8": ("toxicity paper, Table 8", "AUC and gaps for every debiasing method, "
                        "including upstream SentDebias with all data debiasing"),
    "toxicity-table9": ("toxicity paper, Table 9", "Pearson rho between each source of bias "
                        "and each fairness gap, per model, over the three attributes"),
    "toxicity-table10": ("toxicity paper, Table 10", "whether a debiasing approach lowered "
                         "all three gaps of the attribute it targets"),
    "toxicity-table12": ("toxicity paper, Table 12", "SenseScore per attribute before and "
                         "after the data debiasing methods"),
    "toxicity-text-auc": ("toxicity paper, §4.2 text", "AUC of the fine-tuned baseline "
                          "models"),
    "toxicity-text-fairness-sets": ("toxicity paper, §5.1 text", "sizes and positive ratios "
                                    "of the original and balanced fairness sets"),
    "toxicity-text-metric-correlations": ("toxicity paper, §5.2 text", "Pearson rho between "
                                          "the fairness metrics"),
    "toxicity-figures-3-5": ("toxicity paper, §6.3-6.6 text on Figures 3-5", "selection and "
                             "overamplification bias, sizes and positive ratios of the "
                             "training sets"),
    "toxicity-appendix-sentiment": ("toxicity paper, sentiment appendix text", "IMDB-gendered "
                                    "and SST fairness set statistics, AUCs and SenseScores"),
}


class _NoCell(Exception):
    """Internal: this cell has no value of ours; the message says why."""


@dataclass(frozen=True)
class PublishedCell:
    """One published value (a row of ``published/*.csv``)."""

    paper: str
    table_id: str
    row: str
    column: str
    text: str
    value: float
    unit: str
    source: str
    note: str
    file: str
    line: int

    def bad(self, message: str, column: str = "row") -> DataError:
        return DataError(f"{self.table_id}: {message}", file=self.file, row=self.line,
                         column=column)


#: between the separate notes of one cell (the Markdown lists each once, as its own line)
NOTE_SEP = " | "


@dataclass
class Ours:
    """Our side of one cell: a value, or the reason there is none."""

    value: float | None = None
    reason: str = ""
    paper_model: str = ""
    our_model: str = ""
    our_source: str = ""
    stand_in: str = ""
    note: str = ""
    #: a correlation's points and permutation p (p_cluster: points sharing an x move together)
    n: int | None = None
    p_permutation: float | None = None


# -- reading ------------------------------------------------------------------------------


def _number(text: str) -> float:
    try:
        return float(text) if text.strip() else math.nan
    except ValueError:
        return math.nan


def _read_csv(path: Path, required: Sequence[str]) -> list[dict[str, str]]:
    """The rows of a CSV table as dicts of strings, in file order (none is fine)."""
    from biasrepro.io import read_table

    frame = read_table(path, required=required, delimiter=",", allow_empty=True)
    return frame.to_dict("records")


def _read_json(path: Path) -> Any:
    """:func:`biasrepro.io.read_json`, imported late to keep this module free of pandas."""
    from biasrepro.io import read_json

    return read_json(path)


def read_published(directory: Path) -> list[PublishedCell]:
    """Every published cell, validated: known table ids, a number and a source in each row,
    no cell twice, and every table of :data:`TABLE_IDS` present."""
    cells: list[PublishedCell] = []
    seen: dict[tuple[str, str, str], str] = {}
    for name, ids in PUBLISHED_FILES.items():
        path = Path(directory) / name
        for i, raw in enumerate(_read_csv(path, PUBLISHED_COLUMNS), start=1):
            rec = {k: (raw.get(k) or "").strip() for k in PUBLISHED_COLUMNS}
            for key in ("paper", "table_id", "row", "column", "value", "source"):
                if not rec[key]:
                    raise DataError("empty value", file=path, row=i, column=key)
            if rec["table_id"] not in ids:
                raise DataError(f"unknown table id {rec['table_id']!r} (this file holds: "
                                f"{', '.join(ids)})", file=path, row=i, column="table_id")
            value = _number(rec["value"])
            if not math.isfinite(value):
                raise DataError(f"{rec['value']!r} is not a number", file=path, row=i,
                                column="value")
            key = (rec["table_id"], rec["row"], rec["column"])
            if key in seen:
                raise DataError(f"cell {'/'.join(key)} is published twice (also {seen[key]})",
                                file=path, row=i)
            seen[key] = f"{path} row {i}"
            cells.append(PublishedCell(rec["paper"], rec["table_id"], rec["row"],
                                       rec["column"], rec["value"], value, rec["unit"],
                                       rec["source"], rec["note"], str(path), i))
        for tid in ids:
            if not any(c.table_id == tid for c in cells):
                raise DataError(f"no published cell for table {tid}", file=path)
    return cells


@dataclass
class Study:
    """The files of one ``biasrepro fairness report`` folder, indexed."""

    directory: Path
    gaps: dict[tuple[str, ...], tuple[float, str]]
    sense: dict[tuple[str, ...], tuple[float, str]]
    dataset_bias: dict[tuple[str, str], dict[str, Any]]
    training_rows: dict[str, int]
    fairness_rows: dict[str, int]
    attributes: dict[str, Any]
    training_groups: dict[tuple[str, str], dict[str, str]]
    fairness_groups: dict[tuple[str, str], dict[str, str]]
    correlations: dict[tuple[str, ...], tuple[float, float | str, ...]]
    #: (model, method) pairs the model-works gate failed (report.json's ``models``)
    failed: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def read(cls, report_json: Path) -> Study:
        """``report.json`` and the CSV files of :data:`STUDY_FILES` beside it."""
        d = Path(report_json).parent
        report = _read_json(Path(report_json))
        try:
            gaps = {(r["model"], r["method"], r["fairness_set"], r["attribute"], r["metric"]):
                    (_value(r["value"]), r.get("note") or "") for r in report["gaps"]}
            sense = {(r["model"], r["method"], r["attribute"]):
                     (_value(r["sense_score"]), r.get("note") or "")
                     for r in report["sensescore"]}
            bias = {(r["method"], r["attribute"]): r for r in report["dataset_bias"]}
            training = {m: int(v["rows"]) for m, v in report["training"].items()}
            fsets = {s: int(v["rows"]) for s, v in report["fairness_sets"].items()}
            attributes = dict(report["settings"]["attributes"])
            failed = frozenset((r["model"], r["method"]) for r in report.get("models", [])
                               if r[MODEL_WORKS] is False)
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"not a fairness report (missing or bad {e})",
                            file=report_json) from None
        groups = _read_csv(d / "group_metrics.csv",
                           ("model", "method", "fairness_set", "group", "n", "positives"))
        fairness_groups: dict[tuple[str, str], dict[str, str]] = {}
        for r in sorted(groups, key=lambda r: (r["method"] != "baseline", r["model"])):
            fairness_groups.setdefault((r["fairness_set"], r["group"]), r)
        return cls(
            directory=d, gaps=gaps, sense=sense, dataset_bias=bias, training_rows=training,
            fairness_rows=fsets, attributes=attributes, failed=failed,
            training_groups={(r["method"], r["group"]): r for r in _read_csv(
                d / "training_groups.csv", ("method", "group", "n", "n_positive",
                                            "positive_ratio"))},
            fairness_groups=fairness_groups,
            correlations={(r["group"], r["model"], r["fairness_set"], r["x"], r["y"]):
                          (_number(r["rho"]), r["note"], _number(r["n"]),
                           _number(r["p_cluster"])) for r in _read_csv(
                d / "correlations.csv",
                ("group", "model", "fairness_set", "x", "y", "rho", "n", "p_cluster",
                 "note"))})


def _value(v: Any) -> float:
    return math.nan if v is None else float(v)


@dataclass
class Results:
    """Our result files (each optional) and the configuration's line-up."""

    settings: Mapping[str, Any]
    biasfinder: dict[tuple[str, str, str], dict[str, str]] | None = None
    toxicity: Study | None = None
    sentiment: Study | None = None
    representation: dict[tuple[str, str, str, str], float] | None = None
    #: ROC-AUC per (task, model, method, scored set)
    classification: dict[tuple[str, str, str, str], float] | None = None
    paths: dict[str, str] = field(default_factory=dict)


def read_results(settings: Mapping[str, Any], *, biasfinder: Path | None = None,
                 toxicity: Path | None = None, sentiment: Path | None = None,
                 representation: Path | None = None,
                 classification: Path | None = None) -> Results:
    """Read whichever result files were given."""
    res = Results(settings=settings)
    if biasfinder is not None:
        rows = _read_csv(biasfinder, ("model", "method", "characteristic", "templates", "btc"))
        res.biasfinder = {(r["model"], r["method"], r["characteristic"]): r for r in rows}
        res.paths["biasfinder"] = str(biasfinder)
    if toxicity is not None:
        res.toxicity = Study.read(toxicity)
        res.paths["toxicity"] = str(toxicity)
    if sentiment is not None:
        res.sentiment = Study.read(sentiment)
        res.paths["sentiment"] = str(sentiment)
    if representation is not None:
        rows = _read_csv(representation, ("model", "variant", "attribute", "source", "value"))
        res.representation = {(r["model"], r["variant"], r["attribute"], r["source"]):
                              _number(r["value"]) for r in rows}
        res.paths["representation"] = str(representation)
    if classification is not None:
        data = _read_json(classification)
        try:
            res.classification = {(r["task"], r["model"], r["method"], r.get("set", "test")):
                                  _value(r["roc_auc"]) for r in data}
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise DataError(f"expected a list of task/model/method/set/roc_auc records ({e})",
                            file=classification) from None
        res.paths["classification"] = str(classification)
    return res


# -- our side of a cell -------------------------------------------------------------------


def _models(settings: Mapping[str, Any], where: str) -> list[str]:
    if where == "representation.models":
        names = settings.get("representation.models")
    else:
        names = (settings.get("models.tasks") or {}).get(where.rsplit(".", 1)[1])
    if not isinstance(names, list):
        raise ConfigError(f"--settings: '{where}' must be a list of model names")
    return names


def _methods(settings: Mapping[str, Any], task: str) -> list[str]:
    if task == "biasfinder" and settings.get("biasfinder.methods"):
        return list(settings["biasfinder.methods"])
    key = "sentiment" if task == "biasfinder" else task
    names = (settings.get("methods.tasks") or {}).get(key)
    if not isinstance(names, list):
        raise ConfigError(f"--settings: 'methods.tasks.{key}' must be a list of methods")
    return names


def _model(res: Results, where: str, arch: str, ours: Ours) -> str:
    """Our model standing for the paper's ``arch`` (recorded in ``ours``), or _NoCell."""
    label, checkpoint = PAPER_MODELS[arch]
    ours.paper_model = label
    registry = res.settings.get("models.registry") or {}
    names = _models(res.settings, where)
    for name in names:
        entry = registry.get(name)
        if not isinstance(entry, Mapping):
            raise ConfigError(f"--settings: '{where}' names {name!r}, which models.registry "
                              "lacks")
        if entry.get("architecture") == arch:
            same = (entry.get("source") == "hub"
                    and str(entry.get("id", "")).rsplit("/", 1)[-1] == checkpoint)
            ours.our_model, ours.our_source = name, str(entry.get("source", ""))
            ours.stand_in = "no" if same else "yes"
            return name
    raise _NoCell(f"not run: no {arch} model among this configuration's {where} "
                  f"({', '.join(names) or 'none'}), so nothing stands for {checkpoint}")


def _method(res: Results, task: str, method: str) -> str:
    if method not in _methods(res.settings, task):
        key = "biasfinder.methods" if task == "biasfinder" else f"methods.tasks.{task}"
        raise _NoCell(f"not run: method {method} is not in this configuration's {key}")
    return method


def _study(res: Results, task: str) -> Study:
    study = res.toxicity if task == "toxicity" else res.sentiment
    if study is None:
        raise _NoCell(f"not produced: no {task} fairness report was given (--{task})")
    return study


def _given(res: Results, what: str) -> None:
    if getattr(res, what) is None:
        raise _NoCell(f"not produced: no {what} result was given (--{what})")


def _lookup(table: Mapping[Any, Any] | None, key: Any, what: str, res: Results) -> Any:
    _given(res, what)
    if table is None or key not in table:
        raise _NoCell(f"no result for {'/'.join(map(str, key[:3]))} in {res.paths[what]}")
    return table[key]


def _defined(value: float, note: str = "") -> float:
    if not math.isfinite(value):
        raise _NoCell("undefined in our results" + (f": {note}" if note else ""))
    return value


def _correlation(study: Study, key: tuple[str, ...], ours: Ours) -> float:
    """ρ of one row of correlations.csv; its n and permutation p go beside it."""
    rho, note, n, p = study.correlations[key]
    ours.n = int(n) if math.isfinite(n) else None
    ours.p_permutation = p if math.isfinite(p) else None
    return _defined(rho, note)


def _gap(study: Study, model: str, method: str, fset: str, attr: str, metric: str) -> float:
    key = (model, method, fset, attr, metric)
    if key not in study.gaps:
        raise _NoCell(f"no {fset}-set gaps of {model}/{method} for {attr} in "
                      f"{study.directory / 'report.json'}")
    return _defined(*study.gaps[key])


#: the scored set each published AUC is compared with, and why (the paper names none)
AUC_SETS = {
    "toxicity-text-auc": ("test", "the test split: §4.2 reports the fine-tuned models' "
                          "classification results before any fairness set is introduced"),
    "toxicity-table5": ("fairness-balanced", "the balanced fairness set: the baseline rows' "
                        "gaps in Tables 5-8 are Table 3's balanced-set gaps, the paper measures "
                        "on the balanced set from §5.2 on, and these AUCs (0.847/0.830/0.851) "
                        "are well below §4.2's test-split AUCs"),
    "toxicity-appendix-sentiment": (
        "imdb-gendered-test", "IMDB-gendered's test split (the appendix scores the models "
        "trained on IMDB-gendered on it)"),
    "toxicity-appendix-sentiment/perturbed": (
        "imdb-gendered-perturbed-test", "perturbed IMDB-gendered's test split (the appendix "
        "gives these models' AUCs 'on the perturbed-IMDB-gendered dataset')"),
    "toxicity-appendix-sentiment/sst-original": (
        "fairness-original", "the SST sentiment-fairness set as published (the appendix "
        "scores the IMDB-gendered models on it)"),
}
for _t in ("toxicity-table6", "toxicity-table7", "toxicity-table8"):
    AUC_SETS[_t] = AUC_SETS["toxicity-table5"]


def _auc(res: Results, task: str, model: str, method: str, ours: Ours, which: str) -> float:
    """Our ROC-AUC on the scored set :data:`AUC_SETS` names for ``which``."""
    fset, why = AUC_SETS[which]
    ours.note = f"ours: ROC-AUC on {why}"
    return _defined(_lookup(res.classification, (task, model, method, fset), "classification",
                            res))


def _parts(cell: PublishedCell, n: int) -> list[str]:
    parts = cell.row.split("/")
    if len(parts) != n:
        raise cell.bad(f"row key {cell.row!r} should have {n} '/'-separated parts")
    return parts


def _check(cell: PublishedCell, value: str, allowed: Sequence[str] | frozenset[str],
           what: str, column: str = "row") -> str:
    if value not in allowed:
        raise cell.bad(f"unknown {what} {value!r} in {column} key", column)
    return value


def _arch(cell: PublishedCell, value: str) -> str:
    return _check(cell, value, tuple(PAPER_MODELS), "model")


# One resolver per table: (published cell, results, ours) -> our value, or raise _NoCell.

def _biasfinder_scale(char: str, row: Mapping[str, str]) -> str:
    """What our Table-4 counts of one characteristic rest on: the BTC rate, the possible
    cross-class pairs and the number of classes (BTCs grow with the square of the class
    count), the word lists and the occupation-template mode."""
    def text(key: str) -> str:
        value = row.get(key, "")
        return value if value not in ("", None) else "?"

    rate = row.get("btc_rate", "")
    rate = f"{float(rate):.4f}" if rate not in ("", None) else "?"
    pairs = row.get("possible_pairs", "")
    pairs = f"{int(float(pairs)):,}" if pairs not in ("", None) else "?"
    classes = row.get("classes", "")
    classes = (f"{int(float(classes))}" if classes not in ("", None) else "?")
    classes = "" if char == "total" else f" between {classes} classes"
    return (f"ours, {_label(char).lower()}: BTC rate {rate} over {pairs} possible "
            f"pairs{classes}; word lists: {text('lists')}, occupation templates: "
            f"{text('occupation_templates')}")


#: how the BERT behind BiasFinder's published counts was fine-tuned: v1's BERT4doc command
#: as its README gave it while the counts were made (soarsmu/BiasFinder 5583e48, 0c784af,
#: 1317970: --train_batch_size 24; max_seq_length left at its default, 128, keeping the
#: tail: trunc_medium -1), its epoch-5 model
PUBLISHED_BIASFINDER_TRAINING = {"learning_rate": 2e-5, "batch_size": 24, "epochs": 5,
                                 "max_length": 128, "truncation_side": "left",
                                 "early_stopping_patience": None}


def _biasfinder_training(res: Results, model: str) -> str:
    """How our compared model was fine-tuned for sentiment, and whether that is how the
    published one was (PUBLISHED_BIASFINDER_TRAINING); nothing when ``--settings`` lacks
    ``models.training.sentiment`` (the workflow always passes it)."""
    prefix = "models.training.named."
    named = {k[len(prefix):]: v for k, v in res.settings.items() if k.startswith(prefix)}
    named |= (res.settings.get("models.training") or {}).get("named", {})
    task = res.settings.get("models.training.sentiment")
    own = ((res.settings.get("models.registry") or {}).get(model, {})
           .get("training", {}).get("sentiment"))
    if task is None:
        return ""
    try:
        s = training.resolve(task, own, named, seed=0, task="sentiment", model=model)
    except ConfigError as e:
        return f"ours: training setting unknown ({e})"
    differs = [k for k, v in PUBLISHED_BIASFINDER_TRAINING.items() if s.get(k) != v]
    published = training.describe(PUBLISHED_BIASFINDER_TRAINING).split(": ", 1)[1]
    verdict = ("as the published model (BiasFinder v1, BERT4doc)" if not differs else
               f"NOT as the published model (BiasFinder v1, BERT4doc: {published}); differs "
               f"in {', '.join(differs)}")
    return f"ours fine-tuned with {training.describe(s)}: {verdict}"


def _biasfinder_table4(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """BiasFinder Table 4: templates and BTCs of the BERT model (our baseline), and the
    number of classes per characteristic (§4-5 text); each cell's note gives our BTC rate,
    possible pairs, classes, word lists and occupation-template mode."""
    char = _check(cell, cell.row, ("gender", "occupation", "country", "total"),
                  "characteristic")
    col = _check(cell, cell.column, ("templates", "btc", "classes"), "column", "column")
    _given(res, "biasfinder")
    model = _model(res, "models.tasks.sentiment", "bert", ours)
    ours.note = NOTE_SEP.join(n for n in (ours.note, _biasfinder_training(res, model)) if n)
    method = _method(res, "biasfinder", "baseline")
    row = _lookup(res.biasfinder, (model, method, char), "biasfinder", res)
    ours.note = NOTE_SEP.join(n for n in (ours.note, _biasfinder_scale(char, row)) if n)
    if col == "classes" and not row.get("classes"):
        if str(row.get("templates", "")).strip() in ("0", "0.0"):
            raise _NoCell("our run generated no template of this characteristic, so no "
                          "mutant shows its classes")
        raise _NoCell("our Table 4 has no class count for this characteristic (rerun "
                      "`biasrepro biasfinder btc`)")
    return _number(row[col])


def _table3(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Table 3 (§5.2): the baseline's gaps (Eqs. 1-3) on either fairness set."""
    attr, arch, fset = _parts(cell, 3)
    _check(cell, attr, ATTRIBUTES, "attribute")
    _check(cell, fset, ("original", "balanced"), "fairness set")
    metric = _check(cell, cell.column, GAPS, "metric", "column")
    study = _study(res, "toxicity")
    model = _model(res, "models.tasks.toxicity", _arch(cell, arch), ours)
    return _gap(study, model, _method(res, "toxicity", "baseline"), fset, attr, metric)


def _table4(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Table 4 (§6.1-6.2): CrowS-Pairs and StereoSet as fractions, SEAT effect sizes."""
    arch, variant = _parts(cell, 2)
    _check(cell, variant, layout.representation_variants(ATTRIBUTES), "variant")
    source, _, attr = cell.column.partition("/")
    _check(cell, source, ("crows", "stereoset", "seat"), "benchmark", "column")
    _check(cell, attr, ATTRIBUTES, "attribute", "column")
    _given(res, "representation")
    model = _model(res, "representation.models", _arch(cell, arch), ours)
    value = _lookup(res.representation, (model, variant, attr, source), "representation", res)
    if source == "seat":
        return _defined(value)
    ours.note = "ours: CrowS-Pairs and StereoSet scores in percent, divided by 100"
    return _defined(value) / 100.0


def _performance(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Tables 5-8: AUC and the gaps on the balanced set (the paper's choice from §5.2 on)."""
    attr, arch, method = _parts(cell, 3)
    _check(cell, attr, ATTRIBUTES, "attribute")
    _check(cell, method, PAPER_METHODS, "method")
    metric = _check(cell, cell.column, ("AUC", *GAPS), "metric", "column")
    model = _model(res, "models.tasks.toxicity", _arch(cell, arch), ours)
    _method(res, "toxicity", method)
    if res.toxicity is not None and (model, method) in res.toxicity.failed:
        ours.note = (f"ours: {model}/{method} failed the model-works gate (models.csv); its "
                     "gaps are those of a model that learned nothing")
    if metric == "AUC":
        return _auc(res, "toxicity", model, method, ours, cell.table_id)
    return _gap(_study(res, "toxicity"), model, method, "balanced", attr, metric)


def _table9(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Table 9 (§7.1): rho of a source of bias with a gap, per model, balanced set."""
    arch, source = _parts(cell, 2)
    _check(cell, source, ("representation_crows", "selection", "overamplification"),
           "source of bias")
    metric = _check(cell, cell.column, GAPS, "metric", "column")
    study = _study(res, "toxicity")
    model = _model(res, "models.tasks.toxicity", _arch(cell, arch), ours)
    key = ("bias_vs_fairness", model, "balanced", source, metric)
    if key not in study.correlations:
        raise _NoCell(f"no correlation of {source} with the gaps of {model} in "
                      f"{study.directory / 'correlations.csv'}")
    return _correlation(study, key, ours)


def _table10(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Table 10 (§7.2): 1 when the approach lowers all three gaps of its attribute."""
    pattern = APPROACHES.get(cell.row)
    if pattern is None:
        raise cell.bad(f"unknown debias approach {cell.row!r}")
    arch, _, attr = cell.column.partition("/")
    _check(cell, attr, ATTRIBUTES, "attribute", "column")
    _check(cell, arch, tuple(PAPER_MODELS), "model", "column")
    study = _study(res, "toxicity")
    model = _model(res, "models.tasks.toxicity", arch, ours)
    method = _method(res, "toxicity", pattern.format(a=attr))
    base = _method(res, "toxicity", "baseline")
    ours.note = ("ours: 1 when all three gaps of the method are below the baseline's "
                 "(balanced set, unrounded)")
    if out := sorted(f"{model}/{m}" for m in (method, base) if (model, m) in study.failed):
        raise _NoCell(f"{', '.join(out)} failed the model-works gate (models.csv): a model "
                      "that learned nothing lowers every gap to 0")
    return float(all(_gap(study, model, method, "balanced", attr, m)
                     < _gap(study, model, base, "balanced", attr, m) for m in GAPS))


def _table12(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Table 12 (§7.3): SenseScore (Eq. 6) on the balanced set."""
    arch, method = _parts(cell, 2)
    _check(cell, method, PAPER_METHODS, "method")
    attr = _check(cell, cell.column, ATTRIBUTES, "attribute", "column")
    study = _study(res, "toxicity")
    model = _model(res, "models.tasks.toxicity", _arch(cell, arch), ours)
    key = (model, _method(res, "toxicity", method), attr)
    if key not in study.sense:
        raise _NoCell(f"no SenseScore of {key[0]}/{key[1]} in "
                      f"{study.directory / 'report.json'}")
    return _defined(*study.sense[key])


def _text_auc(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """§4.2: the fine-tuned baseline models' AUC."""
    arch, method = _parts(cell, 2)
    _check(cell, method, PAPER_METHODS, "method")
    _check(cell, cell.column, ("AUC",), "metric", "column")
    model = _model(res, "models.tasks.toxicity", _arch(cell, arch), ours)
    return _auc(res, "toxicity", model, _method(res, "toxicity", method), ours,
                cell.table_id)


def _set_groups(cell: PublishedCell, study: Study, fset: str, group: str, column: str,
                ours: Ours) -> float:
    """n, share or positive ratio of a fairness set (or one of its groups)."""
    if group == "all":
        _check(cell, column, ("n",), "measure", "column")
        if fset not in study.fairness_rows:
            raise _NoCell(f"no {fset} fairness set in {study.directory / 'report.json'}")
        return float(study.fairness_rows[fset])
    row = study.fairness_groups.get((fset, group))
    if row is None:
        raise _NoCell(f"no group {group} of the {fset} fairness set in "
                      f"{study.directory / 'group_metrics.csv'}")
    n = _number(row["n"])
    if column == "n":
        return n
    if column == "positive_ratio":
        return _defined(_number(row["positives"]) / n if n else math.nan)
    _check(cell, column, ("share",), "measure", "column")
    ours.note = "ours: share among the attribute's groups"
    sides = _sides(study, "gender")
    total = sum(_number(study.fairness_groups[(fset, g)]["n"]) for g in sides[0] + sides[1]
                if (fset, g) in study.fairness_groups)
    return _defined(n / total if total else math.nan)


def _sides(study: Study, attr: str) -> tuple[list[str], list[str]]:
    spec = study.attributes.get(attr)
    if not spec:
        raise _NoCell(f"attribute {attr} is not in the fairness report's settings")
    return list(spec["marginalized"]), list(spec["non_marginalized"])


def _text_fairness_sets(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """§5.1: sizes and positive ratios of the original and balanced fairness sets."""
    fset, group = _parts(cell, 2)
    _check(cell, fset, ("original", "balanced"), "fairness set")
    _check(cell, cell.column, ("n", "positive_ratio"), "measure", "column")
    return _set_groups(cell, _study(res, "toxicity"), fset, group, cell.column, ours)


def _text_metric_correlations(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """§5.2: rho between two gaps over the baseline models and attributes."""
    fset = _check(cell, cell.row, ("original", "balanced"), "fairness set")
    x, _, y = cell.column.partition("~")
    _check(cell, x, GAPS, "metric", "column")
    _check(cell, y, GAPS, "metric", "column")
    study = _study(res, "toxicity")
    for a, b in ((x, y), (y, x)):
        key = ("fairness_metrics", "all", fset, a, b)
        if key in study.correlations:
            return _correlation(study, key, ours)
    raise _NoCell(f"no correlation of {x} and {y} on the {fset} set in "
                  f"{study.directory / 'correlations.csv'}")


def _training(cell: PublishedCell, res: Results, study: Study, task: str, method: str,
              what: str, column: str) -> float:
    """A training set's dataset bias (per attribute), size (``all``) or group ratio."""
    _method(res, task, method)
    if what == "all":
        _check(cell, column, ("n",), "measure", "column")
        if method not in study.training_rows:
            raise _NoCell(f"no training set of {method} in {study.directory / 'report.json'}")
        return float(study.training_rows[method])
    if column in ("selection", "overamplification_raw", "overamplification",
                  "overamplification_share"):
        row = study.dataset_bias.get((method, what))
        if row is None:
            raise _NoCell(f"no dataset bias for {method}/{what} in "
                          f"{study.directory / 'report.json'}")
        return _defined(_value(row.get(column)), row.get("note") or "")
    row = study.training_groups.get((method, what))
    if row is None:
        raise _NoCell(f"no group {what} of {method}'s training set in "
                      f"{study.directory / 'training_groups.csv'}")
    if column == "positive_ratio":
        return _defined(_number(row["positive_ratio"]))
    _check(cell, column, ("share",), "measure", "column")
    sides = _sides(study, "gender")
    total = sum(_number(study.training_groups[(method, g)]["n"]) for g in sides[0] + sides[1]
                if (method, g) in study.training_groups)
    return _defined(_number(row["n"]) / total if total else math.nan)


def _figures_3_5(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """§6.3-6.6 (Figures 3-5): selection (Eq. 4) and overamplification (Eq. 5) bias,
    sizes and positive ratios of the training sets."""
    method, what = _parts(cell, 2)
    _check(cell, method, PAPER_METHODS, "method")
    _check(cell, cell.column, ("selection", "overamplification_raw", "overamplification", "n",
                               "positive_ratio"), "measure", "column")
    if what == "all":
        ours.note = _selection_note(res.settings, method)
    return _training(cell, res, _study(res, "toxicity"), "toxicity", method, what, cell.column)


def _selection_note(settings: Mapping[str, Any], method: str) -> str:
    """Which rows our debiased set perturbed and re-stratified, where that is not the
    single-identity rows (perturbation.select, perturbation.restratify.select)."""
    parts = []
    if "perturbed" in method:
        parts.append(("perturbed", settings.get("perturbation.select")))
    if "stratified" in method:
        parts.append(("re-stratified", settings.get("perturbation.restratify.select")))
    said = [f"{what}: {how} rows" for what, how in parts
            if how not in (None, "single_identity")]
    return "ours: " + "; ".join(said) if said else ""


def _appendix_sentiment(cell: PublishedCell, res: Results, ours: Ours) -> float:
    """Sentiment appendix: IMDB-gendered and SST statistics, AUCs and SenseScores."""
    kind, *rest = cell.row.split("/")
    if kind == "model" and len(rest) == 2:
        arch, method = rest
        _check(cell, method, PAPER_METHODS, "method")
        _check(cell, cell.column, ("AUC", "AUC/sst-original", "SenseScore"), "measure",
               "column")
        model = _model(res, "models.tasks.sentiment", _arch(cell, arch), ours)
        _method(res, "sentiment", method)
        if cell.column.startswith("AUC"):
            which = "/".join([cell.table_id, *cell.column.split("/")[1:]])
            if which == cell.table_id and method == "downstream-perturbed-data":
                which += "/perturbed"
            return _auc(res, "sentiment", model, method, ours, which)
        study = _study(res, "sentiment")
        key = (model, method, "gender")
        if key not in study.sense:
            raise _NoCell(f"no SenseScore of {key[0]}/{key[1]} in "
                          f"{study.directory / 'report.json'}")
        return _defined(*study.sense[key])
    if kind != "dataset" or len(rest) != 2:
        raise cell.bad(f"row key {cell.row!r} should be model/ARCH/METHOD or dataset/SET/PART")
    dataset, what = rest
    study = _study(res, "sentiment")
    if dataset == "imdb-gendered":
        if what == "all":
            rows = study.training_rows.get("imdb-gendered")
            raise _NoCell("not compared: the fairness report records only IMDB-gendered's "
                          f"training split ({rows} rows), the paper the whole set")
        ours.note = "ours: IMDB-gendered's training split"
        return _training(cell, res, study, "sentiment", "imdb-gendered", what, cell.column)
    fset = {"sst-original": "original", "sst-balanced": "balanced"}.get(dataset)
    if fset is None:
        raise cell.bad(f"unknown data set {dataset!r}")
    if what != "gender":
        return _set_groups(cell, study, fset, what, cell.column, ours)
    col = _check(cell, cell.column, ("selection", "overamplification_share"), "measure",
                 "column")
    marg, non = _sides(study, "gender")
    stats = [[study.fairness_groups.get((fset, g)) for g in side] for side in (marg, non)]
    if any(r is None for side in stats for r in side):
        raise _NoCell(f"a gender group is missing from the {fset} set in "
                      f"{study.directory / 'group_metrics.csv'}")
    if col == "selection":
        ratios = [sum(_number(r["positives"]) / n if (n := _number(r["n"])) else math.nan
                      for r in side) / len(side) for side in stats]
        return _defined(abs(ratios[0] - ratios[1]))
    sizes = [sum(_number(r["n"]) for r in side) / len(side) for side in stats]
    ours.note = "ours: |N_m - N_f| / N over the fairness set (footnote 9)"
    return _defined(abs(sizes[0] - sizes[1]) / study.fairness_rows[fset])


RESOLVERS: dict[str, Callable[[PublishedCell, Results, Ours], float]] = {
    "biasfinder-table4": _biasfinder_table4,
    "toxicity-table3": _table3, "toxicity-table4": _table4,
    "toxicity-table5": _performance, "toxicity-table6": _performance,
    "toxicity-table7": _performance, "toxicity-table8": _performance,
    "toxicity-table9": _table9, "toxicity-table10": _table10, "toxicity-table12": _table12,
    "toxicity-text-auc": _text_auc, "toxicity-text-fairness-sets": _text_fairness_sets,
    "toxicity-text-metric-correlations": _text_metric_correlations,
    "toxicity-figures-3-5": _figures_3_5, "toxicity-appendix-sentiment": _appendix_sentiment,
}


def resolve(cell: PublishedCell, res: Results) -> Ours:
    """Our value for one published cell, or the reason we have none."""
    ours = Ours()
    try:
        ours.value = RESOLVERS[cell.table_id](cell, res, ours)
        _defined(ours.value)
    except _NoCell as e:
        ours.value, ours.reason = None, str(e)
    return ours


# -- writing ------------------------------------------------------------------------------


def _csv_number(x: float | None) -> str:
    if x is None:
        return ""
    return str(int(x)) if x == int(x) and abs(x) < 1e15 else f"{x:.6g}"


def _md_number(x: float, *, sign: bool = False, count: bool = False) -> str:
    plus = "+" if sign else ""
    if x == int(x) and (count or abs(x) >= 10 or x == 0):
        return f"{int(x):{plus},}"
    if abs(x) >= 100:
        return f"{x:{plus},.1f}"
    if abs(x) < 0.001:
        return f"{x:{plus}.1e}"
    return f"{x:{plus}.3f}"


def _across(cell: PublishedCell, runs: Sequence[Results]) -> tuple[Ours, list[float]]:
    """Our side of one cell in every seed's results: the first seed's description with the
    mean as value, and each seed's value; no value where any seed has none."""
    each = [resolve(cell, res) for res in runs]
    ours = each[0]
    missing = next((o for o in each if o.value is None), None)
    if missing is not None:
        ours.value, ours.reason = None, missing.reason
        return ours, []
    values = [float(o.value) for o in each]
    ours.value = sum(values) / len(values)
    ps = [o.p_permutation for o in each if o.p_permutation is not None]
    ours.p_permutation = max(ps) if len(ps) == len(each) else None  # the weakest seed's
    return ours, values


def _records(cells: Sequence[PublishedCell], runs: Sequence[Results]) -> list[dict[str, str]]:
    """One record per published cell; with several seeds ``ours`` is their mean, with the
    sample sd (n - 1), the range and whether the published value lies in it."""
    out = []
    for cell in cells:
        ours, values = _across(cell, runs)
        diff = None if ours.value is None else ours.value - cell.value
        spread = {"seeds": str(len(values)) if values else "", "sd": "", "min": "", "max": "",
                  "published_in_range": ""}
        if len(values) > 1:
            mean = ours.value
            sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
            spread.update(sd=_csv_number(sd), min=_csv_number(min(values)),
                          max=_csv_number(max(values)),
                          published_in_range="yes" if min(values) <= cell.value <= max(values)
                          else "no")
        out.append({"table_id": cell.table_id, "row": cell.row, "column": cell.column,
                    "paper_model": ours.paper_model, "our_model": ours.our_model,
                    "our_source": ours.our_source,
                    "stand_in": ours.stand_in, "ours": _csv_number(ours.value),
                    "published": cell.text, "difference": _csv_number(diff),
                    "reason": ours.reason, "unit": cell.unit, "source": cell.source,
                    "published_note": cell.note, "our_note": ours.note, **spread,
                    "n": "" if ours.n is None or ours.value is None else str(ours.n),
                    "p_permutation": "" if ours.value is None
                    else _csv_number(ours.p_permutation)})
    return out


def _csv_text(records: Sequence[Mapping[str, str]]) -> str:
    lines = []

    class _Sink:
        def write(self, s: str) -> None:
            lines.append(s)

    w = csv.DictWriter(_Sink(), fieldnames=OUTPUT_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(records)
    return "".join(lines)


LABELS = {"original": "Original", "balanced": "Balanced", "occupation": "Occupation",
          "country": "Country-of-Origin", "total": "Total", "templates": "#Templates",
          "btc": "#BTCs", "classes": "#Classes", "crows": "CrowS-Pairs",
          "stereoset": "StereoSet", "seat": "SEAT",
          "representation_crows": "Representation (CrowS-Pairs)", "selection": "Selection",
          "overamplification": "Overamplification", "all": "all",
          "overamplification_raw": "Overamplification (raw, Eq. 5)",
          "overamplification_share": "Overamplification (share of N)",
          "positive_ratio": "positive ratio", "imdb-gendered": "IMDB-gendered",
          "sst-original": "SST fairness set", "sst-balanced": "perturbed SST fairness set",
          **{a: a.capitalize() for a in ATTRIBUTES},
          **{layout.subspace_variant(a): f"+ SentDebias-{a}" for a in ATTRIBUTES},
          **{k: v[0] for k, v in PAPER_MODELS.items()}}


def _label(part: str) -> str:
    """The paper's wording for one part of a row or column key."""
    if part in LABELS:
        return LABELS[part]
    return f"+ {part}" if part in PAPER_METHODS and part != "baseline" else part


def _markdown(tid: str, records: Sequence[Mapping[str, str]]) -> str:
    where, what = TITLES[tid]
    rows: dict[str, dict[str, str]] = {}
    columns: list[str] = []
    reasons: list[str] = []
    models: dict[str, str] = {}
    notes: list[str] = []
    for r in records:
        if r["column"] not in columns:
            columns.append(r["column"])
        if r["our_model"]:
            kind = (f"{r['our_source']} stand-in" if r["stand_in"] == "yes"
                    else "the paper's checkpoint")
            models[r["paper_model"]] = f"{r['paper_model']} → {r['our_model']} ({kind})"
        for note in filter(None, r["our_note"].split(NOTE_SEP)):
            if note not in notes:
                notes.append(note)
        flag = tid == "toxicity-table10"
        count = r["unit"].startswith("count")
        pub = r["published"]
        if flag:
            pub = "✓" if pub == "1" else "✗"
        elif count:
            pub = _md_number(float(pub), count=True)
        if r["reason"]:
            if r["reason"] not in reasons:
                reasons.append(r["reason"])
            text = f"n/a [{reasons.index(r['reason']) + 1}] / {pub}"
        elif flag and r["sd"]:  # several seeds: in how many the approach lowers all gaps
            n = int(r["seeds"])
            text = f"✓ in {round(float(r['ours']) * n)}/{n} seeds / {pub}"
        elif flag:
            same = "same" if r["difference"] == "0" else "differs"
            text = f"{'✓' if r['ours'] == '1' else '✗'} / {pub} ({same})"
        elif r["sd"]:  # several seeds: mean ± sd, and whether the published value is
            inside = "in range" if r["published_in_range"] == "yes" else "outside range"
            text = (f"{_md_number(float(r['ours']))} ± {_md_number(float(r['sd']))} / {pub} "
                    f"({_md_number(float(r['difference']), sign=True)}; {inside})")
        else:
            text = (f"{_md_number(float(r['ours']), count=count)} / {pub} "
                    f"({_md_number(float(r['difference']), sign=True, count=count)})")
        if r.get("n") and r.get("p_permutation"):  # a correlation: its points and permutation p
            text = f"{text[:-1]}; n {r['n']}, p {float(r['p_permutation']):.2g})"
        label = " / ".join(_label(p) for p in r["row"].split("/"))
        rows.setdefault(label, {})[r["column"]] = text
    shown = [" ".join(_label(p) for p in c.replace("~", " vs ").split("/")) for c in columns]
    lines = [f"# {where}: ours beside the published values", "",
             f"{where[0].upper()}{where[1:]}: {what}. Each cell is *ours / published (ours − "
             "published)*; *n/a [k]* means this run has no value, for reason k below.", ""]
    if any(r.get("n") for r in records):
        lines += ["A correlation's cell adds its n (points) and two-sided permutation p "
                  "(points sharing an x shuffled together; with several seeds the largest): "
                  "with n = 3 no p can fall below 1/6.", ""]
    seeds = {r["seeds"] for r in records if r["sd"]}
    if seeds:
        lines += [f"Ours is the mean ± sd (n − 1) over {', '.join(sorted(seeds))} fine-tuning "
                  "seeds; *in range* says the published value lies between our lowest and "
                  "highest seed.", ""]
    if models:
        lines += ["Models: " + "; ".join(models[k] for k in sorted(models)) + ". A stand-in "
                  "is our model of the same architecture, not a reproduction of the paper's "
                  "checkpoint.", ""]
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    lines += ["| row | " + " | ".join(shown) + " |", "|---" * (len(columns) + 1) + "|"]
    for label, cells in rows.items():
        lines.append(f"| {label} | " + " | ".join(cells.get(c, "") for c in columns) + " |")
    if reasons:
        lines += ["", "Reasons:", ""] + [f"{i}. {r}" for i, r in enumerate(reasons, 1)]
    return "\n".join(lines) + "\n"


def _index(tables: Mapping[str, Sequence[Mapping[str, str]]]) -> str:
    lines = ["# The papers' tables, ours beside the published values", "",
             "Each table as Markdown (the paper's shape) and CSV (one row per published "
             "cell); published values from `published/` (see its README).", ""]
    for tid, records in tables.items():
        where, what = TITLES[tid]
        have = sum(1 for r in records if not r["reason"])
        lines.append(f"- [{tid}]({tid}.md) ([csv]({tid}.csv)): {where}, {what}; "
                     f"{have} of {len(records)} cells compared")
    return "\n".join(lines) + "\n"


def output_files(out_dir: Path) -> list[Path]:
    """Every file :func:`write_paper_tables` writes, in a fixed order."""
    out = Path(out_dir)
    return [out / f"{t}.{ext}" for t in TABLE_IDS for ext in ("csv", "md")] + [out / "index.md"]


def build_tables(cells: Sequence[PublishedCell],
                 runs: Results | Sequence[Results]) -> dict[str, list[dict]]:
    """Per table id, its output records in the published order (``runs``: one Results per
    fine-tuning seed, or one)."""
    runs = [runs] if isinstance(runs, Results) else list(runs)
    return {tid: _records([c for c in cells if c.table_id == tid], runs) for tid in TABLE_IDS}


#: a result input given once, or once per seed (:func:`biasrepro.analysis.seeds.per_seed`)
PerSeed = Path | Sequence[Path] | None


def write_paper_tables(*, published: Path, settings: Mapping[str, Any], out_dir: Path,
                       biasfinder: PerSeed = None, toxicity: PerSeed = None,
                       sentiment: PerSeed = None, representation: Path | None = None,
                       classification: PerSeed = None,
                       seeds: Sequence[int] | None = None) -> None:
    """Read the published values and our results; write every table (all files or none).

    With ``seeds``, each result input but ``representation`` (pretrained models, shared) is
    one file per seed, in the same order."""
    from biasrepro.analysis.seeds import per_seed
    from biasrepro.io import atomic_outputs, write_text

    n = len(seeds) if seeds else 1
    cells = read_published(published)
    given = {name: per_seed(paths, n, name) for name, paths in (
        ("biasfinder", biasfinder), ("toxicity", toxicity), ("sentiment", sentiment),
        ("classification", classification))}
    runs = [read_results(settings, representation=representation,
                         **{name: files[i] for name, files in given.items()})
            for i in range(n)]
    tables = build_tables(cells, runs)
    paths = output_files(out_dir)
    with atomic_outputs(*paths) as tmps:
        texts = []
        for tid, records in tables.items():
            texts += [_csv_text(records), _markdown(tid, records)]
        texts.append(_index(tables))
        for text, tmp in zip(texts, tmps, strict=True):
            write_text(text, tmp)
