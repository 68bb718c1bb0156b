"""The study's tables for one task, from fairness sets, predictions and training sets.

Reads the original and balanced fairness sets, every ``.../{model}/{method}/fairness-{set}
.parquet`` predictions file and each method's training data; writes to ``out_dir``:

* ``gaps.csv`` / ``gaps.md``: FPR/TPR/AUC gaps with bootstrap intervals (Tables 3, 5–8),
  paired on the balanced set and stratified on the original one (``resampling``);
* ``group_metrics.csv``: n, FPR, TPR, AUC per group; ``borkan.csv``: subgroup/BPSN/BNSP AUCs;
* ``sensescore.csv``: SenseScore per attribute pair on the balanced set (Table 12);
* ``dataset_bias.csv`` / ``training_groups.csv``: selection and overamplification bias of
  each method's training data, and the group sizes and positive ratios (Figures 3–5);
* ``correlations.csv`` / ``correlations.md``: the Pearson tables (§5.2, Table 9) with
  distinct counts and permutation p-values (:mod:`biasrepro.fairness.correlations`);
* ``models.csv``: the model-works gate: each model x method's ROC-AUC on its held-out
  test split against the task's floor (``fairness.model_floor``). A model below it (one
  that predicts a constant, or learned nothing) has every gap and BTC near 0 for the wrong
  reason: every table marks its rows (``model_works``) and the correlations leave its
  points out, saying so;
* ``report.json``: the settings, sizes and the gap, SenseScore, dataset-bias and model
  tables.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

import pandas as pd

from biasrepro import layout
from biasrepro.errors import DataError, in_file
from biasrepro.fairness.correlations import correlation_table
from biasrepro.fairness.evaluation import dataset_bias, evaluate, join_predictions, sense_scores
from biasrepro.fairness.gate import MODEL_WORKS
from biasrepro.io import (
    atomic_outputs,
    check_text,
    dumps_json,
    ids,
    labels,
    markdown_table,
    numeric,
    read_parquet,
    read_table,
    require_columns,
    write_text,
)
from biasrepro.metrics.classification import classification_metrics

log = logging.getLogger(__name__)

FILES = layout.FAIRNESS_REPORT_FILES
CORRELATIONS_NOTE = (
    "p_value (scipy) and the interval (Fisher-z) treat the n points as independent; "
    "distinct_x and distinct_y count the different values of each side; p_permutation "
    "shuffles y over the points, p_cluster shuffles the distinct x values over the points "
    "that share them (`permutations`, `cluster_permutations`: exact or random); "
    "p_value_bh and p_cluster_bh adjust them by Benjamini–Hochberg over every row of this "
    "table (the false discovery rate when many correlations are read at once). "
    "Overamplification (Eq. 5) is max-normalised within the training set in "
    "`bias_vs_fairness` (x `overamplification`, as §6.5) and unnormalised across methods "
    "(x `overamplification_raw`).")


def prediction_key(path: Path) -> tuple[str, str, str]:
    """``(model, method, fairness set)`` of ``.../{model}/{method}/fairness-{set}.parquet``
    (:func:`biasrepro.layout.prediction_key`), a DataError naming the file otherwise."""
    try:
        return layout.prediction_key(path)
    except ValueError as e:
        raise DataError(str(e), file=path) from None


def test_key(path: Path) -> tuple[str, str]:
    """``(model, method)`` of ``.../{model}/{method}/test.parquet``, a DataError otherwise."""
    p = PurePath(path)
    if p.name != f"{layout.TEST_SET}.parquet" or len(p.parts) < 3:
        raise DataError(f"expected a path .../MODEL/METHOD/{layout.TEST_SET}.parquet", file=path)
    return p.parts[-3], p.parts[-2]


#: the model table's columns (models.csv)
MODEL_COLUMNS = ["model", "method", "n", "test_auc", "floor", "predicted_positive",
                 MODEL_WORKS, "note"]


def model_checks(pairs: Sequence[tuple[str, str]],
                 tests: Mapping[tuple[str, str], tuple[Path, pd.DataFrame]],
                 floor: float | None, threshold: float) -> pd.DataFrame:
    """The model-works gate: each ``(model, method)`` of ``pairs`` with its ROC-AUC on the
    held-out test split (``tests``: predictions with ``label`` and ``prob``); it works when
    the AUC reaches ``floor`` and it predicts both classes at ``threshold`` (the gaps'
    threshold: a model that predicts one class has FPR and TPR gaps of 0 whatever it
    ranks). No test predictions at all: nothing is checked, every model passes with a note
    saying so; some but not this pair's: a DataError."""
    rows = []
    for model, method in sorted(set(pairs)):
        row = {"model": model, "method": method, "n": 0, "test_auc": math.nan,
               "floor": math.nan if floor is None else float(floor),
               "predicted_positive": math.nan, MODEL_WORKS: True, "note": ""}
        if not tests or floor is None:
            row["note"] = ("not checked: no test predictions given" if not tests
                           else "not checked: fairness.model_floor has no value for the task")
        elif (model, method) not in tests:
            raise DataError(f"no {layout.TEST_SET}-split predictions of {model}/{method} "
                            "among --test-predictions (the model-works gate needs each)")
        else:
            path, pred = tests[model, method]
            require_columns(list(pred.columns), ["label", "prob"], file=path)
            y = labels(pred["label"], file=path, column="label")
            prob = numeric(pred["prob"], file=path, column="prob")
            metrics = classification_metrics(y.tolist(), prob.tolist(), threshold)
            auc = metrics["roc_auc"]
            row["n"] = metrics["n"]
            row["predicted_positive"] = share = float((prob >= threshold).mean())
            if auc is not None:
                row["test_auc"] = auc
            if auc is None:
                why = "ROC-AUC undefined: the test split has one class"
            elif auc < floor:
                why = f"test ROC-AUC {auc:.3f} below the floor {floor:g}"
            elif not 0 < share < 1:
                why = (f"predicts {'no' if share == 0 else 'every'} test text positive at "
                       f"the threshold {threshold:g}: its FPR and TPR gaps are 0 by "
                       "construction")
            else:
                why = ""
            row[MODEL_WORKS] = not why
            row["note"] = why
        rows.append(row)
    return pd.DataFrame(rows, columns=MODEL_COLUMNS)


def _works(frame: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the gate's ``model_works`` column, by (model, method)."""
    if frame.empty and "model" not in frame.columns:
        return frame
    gate = models[["model", "method", MODEL_WORKS]]
    return frame.merge(gate, on=["model", "method"], how="left", validate="many_to_one")


def read_fairness_set(path: Path, name: str) -> pd.DataFrame:
    """The ``name`` (original or balanced) fairness set at ``path``: unique ids, 0/1 labels
    and text groups (``identity``; the balanced set's ``source_id`` and ``source_identity``,
    which pair its counterfactual versions), each problem a DataError naming file, row and
    column."""
    frame = read_parquet(path, what=f"{name} fairness set")
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    required = ["id", "label", "identity"]
    if name == "balanced":
        required += ["source_id", "source_identity"]
    require_columns([str(c) for c in frame.columns], required, file=path)
    checked = ids(frame["id"], file=path, column="id")
    if not pd.api.types.is_string_dtype(frame["id"]):
        frame["id"] = checked  # as text, as the predictions are matched to them
    frame["label"] = labels(frame["label"], file=path, column="label")
    for column in ("identity", "source_id", "source_identity"):
        if column in frame.columns:
            check_text(frame[column], file=path, column=column)
    return frame.reset_index(drop=True)


def _tagged(frame: pd.DataFrame, **tags: str) -> pd.DataFrame:
    return frame.assign(**tags)[[*tags, *frame.columns]]


def _interval(row: Mapping[str, Any]) -> str:
    if pd.isna(row["value"]):
        return f"NaN ({row['note']})" if row.get("note") else "NaN"
    return f"{row['value']:.4f} [{row['low']:.4f}, {row['high']:.4f}]"


def _gaps_markdown(gaps: pd.DataFrame, task: str) -> str:
    gaps = gaps.assign(model=[m if ok else f"{m} (below the floor)"
                              for m, ok in zip(gaps["model"], gaps[MODEL_WORKS],
                                               strict=True)])
    table = gaps.assign(cell=gaps.apply(_interval, axis=1)).pivot_table(
        index=["fairness_set", "model", "method", "attribute", "resampling"],
        columns="metric", values="cell", aggfunc="first").reset_index()
    columns = ["fairness_set", "model", "method", "attribute", "FPR_gap", "TPR_gap", "AUC_gap",
               "resampling"]
    return (f"# Group fairness gaps ({task})\n\n|marginalized mean - non-marginalized| "
            "(Eqs. 1-3) with percentile bootstrap intervals of the signed difference mapped "
            "through |.|: paired (whole source sentences resampled with all their "
            "counterfactual versions) on the balanced set, stratified by group on the "
            "original set (column resampling). A model marked *below the floor* failed the "
            "model-works gate (models.csv): its gaps are near 0 because it learned "
            "nothing, not because it is fair.\n\n"
            + markdown_table(table.to_dict("records"), columns))


def representation_by_method(table: pd.DataFrame, methods: Sequence[str],
                             registry: Mapping[str, Any]) -> pd.DataFrame:
    """Table 4's long rows (model, variant, attribute, source, value) as the representation
    bias of each method's model: the pretrained model's for methods without SentenceDebias,
    the ``sentdebias-A`` variant's for upstream-SentDebias-A methods (downstream ones have
    no pretrained counterpart and get none). Sources are prefixed ``representation_``."""
    variant = {m: v for m in methods if (v := layout.method_variant(registry, m))}
    rows = [table[table["variant"] == v].assign(method=m) for m, v in variant.items()]
    out = pd.concat(rows, ignore_index=True) if rows else table.iloc[:0].assign(method="")
    out["source"] = "representation_" + out["source"].astype(str)
    return out[["model", "method", "attribute", "source", "value"]]


def build_tables(*, task: str, original: pd.DataFrame, balanced: pd.DataFrame,
                 predictions: Mapping[tuple[str, str, str], tuple[Path, pd.DataFrame]],
                 training: Mapping[str, tuple[Path, pd.DataFrame]],
                 settings: Mapping[str, Any], representation: pd.DataFrame | None = None,
                 tests: Mapping[tuple[str, str], tuple[Path, pd.DataFrame]] | None = None
                 ) -> dict[str, pd.DataFrame]:
    """Every table of the module docstring, from frames already read."""
    names = settings["fairness"]["attributes"][task]
    attributes = {a: settings["attributes"][a] for a in names}
    boot = settings["fairness"]["bootstrap"]
    sets = {"original": original, "balanced": balanced}
    gaps, groups, borkan, sense = [], [], [], []
    for (model, method, fset), (path, pred) in sorted(predictions.items()):
        joined = join_predictions(sets[fset], pred, file=str(path))
        with in_file(path):
            result = evaluate(joined, attributes, threshold=settings["fairness"]["threshold"],
                              resamples=boot["resamples"], confidence=boot["confidence"],
                              seed=settings["seed"])
        tags = {"model": model, "method": method, "fairness_set": fset}
        gaps.append(_tagged(result["gaps"], **tags))
        groups.append(_tagged(result["groups"], **tags))
        borkan.append(_tagged(result["borkan"], **tags))
        if fset == "balanced":
            scores = sense_scores(joined, settings["fairness"]["sense_pairs"], names)
            sense.append(_tagged(scores, model=model, method=method))
    bias, data_groups = [], []
    for method, (path, train) in training.items():
        with in_file(path):
            b, g = dataset_bias(train, attributes, identity_threshold=settings["preprocess"][
                "civil_comments"]["identity_threshold"])
        bias.append(_tagged(b, method=method))
        data_groups.append(_tagged(g, method=method))
    models = model_checks([(m, me) for m, me, _ in predictions], tests or {},
                          (settings["fairness"].get("model_floor") or {}).get(task),
                          settings["fairness"]["threshold"])
    tables = {
        "gaps": _works(pd.concat(gaps, ignore_index=True), models),
        "groups": _works(pd.concat(groups, ignore_index=True), models),
        "borkan": _works(pd.concat(borkan, ignore_index=True), models),
        "sense": _works(pd.concat(sense, ignore_index=True), models) if sense
        else pd.DataFrame(),
        "dataset_bias": pd.concat(bias, ignore_index=True),
        "training_groups": pd.concat(data_groups, ignore_index=True),
        "models": models,
    }
    rep = None
    if representation is not None:
        methods = sorted({method for _, method, _ in predictions})
        rep = representation_by_method(representation, methods,
                                       settings.get("methods", {}).get("registry", {}))
    working = tables["gaps"][tables["gaps"][MODEL_WORKS]].drop(columns=MODEL_WORKS)
    tables["correlations"] = correlation_table(working, tables["dataset_bias"],
                                               representation=rep)
    return tables


def excluded_note(models: pd.DataFrame) -> str:
    """One sentence naming the models the gate left out of the correlations, or none."""
    out = models[~models[MODEL_WORKS]]
    if out.empty:
        return "Every model reaches the floor of the model-works gate (models.csv)."
    names = "; ".join(f"{r.model}/{r.method} ({r.note})" for r in out.itertuples())
    return f"Left out of these correlations by the model-works gate (models.csv): {names}."


def write_report(*, task: str, original: Path, balanced: Path, predictions: Sequence[Path],
                 training: Mapping[str, Path], settings: Mapping[str, Any],
                 out_dir: Path, representation: Path | None = None,
                 test_predictions: Sequence[Path] = ()) -> None:
    """Read the inputs, build the tables and write them (all files or none)."""
    start = time.perf_counter()
    preds: dict[tuple[str, str, str], tuple[Path, pd.DataFrame]] = {}
    for path in map(Path, predictions):
        key = prediction_key(path)
        if key in preds:
            raise DataError(f"a second predictions file for {key}", file=path)
        preds[key] = (path, read_parquet(path, what="predictions"))
    tests: dict[tuple[str, str], tuple[Path, pd.DataFrame]] = {}
    for path in map(Path, test_predictions):
        key = test_key(path)
        if key in tests:
            raise DataError(f"a second {layout.TEST_SET}-split predictions file for {key}",
                            file=path)
        tests[key] = (path, read_parquet(path, what="test-split predictions"))
    frames = {name: read_fairness_set(Path(p), name)
              for name, p in (("original", original), ("balanced", balanced))}
    train = {method: (Path(p), read_parquet(p, what=f"training data of {method}"))
             for method, p in training.items()}
    rep = None
    if representation is not None:
        rep = read_table(representation, what="representation table", required=[
            "model", "variant", "attribute", "source", "value"])
        for column in ("model", "variant", "attribute", "source"):
            check_text(rep[column], file=representation, column=column)
        rep["value"] = numeric(rep["value"], file=representation, column="value")
    tables = build_tables(task=task, original=frames["original"],
                          balanced=frames["balanced"], predictions=preds, training=train,
                          settings=settings, representation=rep, tests=tests)
    out_dir = Path(out_dir)
    with atomic_outputs(*(out_dir / f for f in FILES)) as tmp:
        paths = dict(zip(FILES, tmp, strict=True))
        report = {
            "task": task,
            "settings": dict(settings),
            "fairness_sets": {name: {"rows": len(f)} for name, f in frames.items()},
            "training": {m: {"path": str(p), "rows": len(f)} for m, (p, f) in train.items()},
            "gaps": tables["gaps"].to_dict("records"),
            "sensescore": tables["sense"].to_dict("records"),
            "dataset_bias": tables["dataset_bias"].to_dict("records"),
            "models": tables["models"].to_dict("records"),
        }
        write_text(dumps_json(report), paths["report.json"])
        for name, key in (("gaps.csv", "gaps"), ("group_metrics.csv", "groups"),
                          ("borkan.csv", "borkan"), ("sensescore.csv", "sense"),
                          ("dataset_bias.csv", "dataset_bias"),
                          ("training_groups.csv", "training_groups"),
                          ("correlations.csv", "correlations"), ("models.csv", "models")):
            tables[key].to_csv(paths[name], index=False, lineterminator="\n")
        write_text(_gaps_markdown(tables["gaps"], task), paths["gaps.md"])
        corr = tables["correlations"]
        write_text(f"# Pearson correlations ({task})\n\n{CORRELATIONS_NOTE}\n\n"
                   f"{excluded_note(tables['models'])}\n\n"
                   + markdown_table(corr.to_dict("records"), list(corr.columns)),
                   paths["correlations.md"])
    log.info("fairness report (%s): %d prediction files, %d training sets -> %s in %.1f s",
             task, len(preds), len(train), out_dir, time.perf_counter() - start)
