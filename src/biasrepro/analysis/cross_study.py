"""Cross-study: does metamorphic bias track group-fairness gaps?

Neither paper puts the two kinds of measurement side by side. This step does, for every
model x debiasing method of each task:

* **Sentiment.** BiasFinder's BTC rate (TSE 2022, §3; Table 4), read from the BiasFinder
  table, for each characteristic that is also a fairness attribute of the sentiment task
  (gender), against the sentiment appendix's FPR/TPR/AUC gaps on the SST fairness set
  (original and gender-balanced). The all-pairs rate and the aligned-pairs rate (male name
  *i* against female name *i* only) are both correlated.
* **Toxicity.** BiasFinder-style test cases built from Civil Comments text: every source
  sentence of the balanced fairness set (toxicity paper §5.1) is a *template* whose
  placeholder is its identity term, and its copies in every group of the attribute
  (the original sentence included) are the *mutants*, one per group. The *classes* are the
  attribute's groups, as BiasFinder's classes are the values of a characteristic (male vs
  female, one country vs another). A BTC is a pair of mutants of one template, of
  different groups, whose predicted labels (``prob >= fairness.threshold``) differ; the
  counting is BiasFinder's own (:func:`biasrepro.biasfinder.btc.template_counts`, its BTC
  rate = BTC pairs / possible cross-group pairs). Per model x method x attribute the rate
  is set against the group gaps (Eqs. 1–3) on the balanced and the original set.

Read the toxicity rows on the *balanced* set with care: there every group holds the same
sentences, so a group's FPR (TPR) differs from another's only through templates whose
mutants the model labels differently, and the FPR and TPR gaps are at most the share of
negative (positive) templates with a BTC. Those correlations are largely by construction;
the original set (other sentences per group) and the sentiment rows (IMDB templates against
SST) are the independent comparisons.

Each correlation is Pearson's ρ over model x method points, per attribute and, where a
task has several attributes, pooled over model x method x attribute, with n, p-value, a
Fisher-z interval, the distinct x and y counts and permutation p-values (points, and
clusters of equal x) (:func:`biasrepro.metrics.correlation.pearson`); with n < 3 or a
constant side, ρ is NaN and the row says why.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.biasfinder.btc import (
    MUTANT_COLUMNS,
    check_mutants,
    join_predictions,
    summarize,
    template_counts,
)
from biasrepro.errors import ConfigError, DataError
from biasrepro.fairness import gate
from biasrepro.fairness.correlations import METRICS
from biasrepro.fairness.report import prediction_key
from biasrepro.io import (
    atomic_outputs,
    check_range,
    check_text,
    dumps_json,
    numeric,
    read_parquet,
    read_table,
    reject_rows,
    require_columns,
    write_text,
)
from biasrepro.metrics.correlation import EXACT_LIMIT, PERMUTATIONS, SEED, adjust, pearson

log = logging.getLogger(__name__)

FILES = ("toxicity_btc.csv", "points.csv", "correlations.csv", "correlations.md",
         "summary.json")
TASKS = ("sentiment", "toxicity")
#: the BTC measures correlated per task (every toxicity pair is aligned: one mutant per group)
MEASURES = {"sentiment": ("btc_rate", "aligned_btc_rate"), "toxicity": ("btc_rate",)}
BALANCED_COLUMNS = ("id", "text", "label", "identity", "attribute", "source_id")
TABLE4_COLUMNS = ("model", "method", "characteristic", "btc_rate", "aligned_btc_rate")
GAP_COLUMNS = ("model", "method", "fairness_set", "attribute", "metric", "value")
BTC_COLUMNS = ["model", "method", "attribute", "threshold", "templates", "mutants",
               "possible_pairs", "btc", "btc_rate", "templates_with_btc",
               "templates_with_btc_share"]
POINT_COLUMNS = ["task", "fairness_set", "attribute", "model", "method", "btc_rate",
                 "aligned_btc_rate", *METRICS]
CORRELATION_COLUMNS = ["task", "fairness_set", "attribute", "x", "y", "points", "n", "rho",
                       "p_value", "low", "high", "distinct_x", "distinct_y", "p_permutation",
                       "permutations", "p_cluster", "cluster_permutations", "note"]
POOLED = "all"


# -- inputs ---------------------------------------------------------------------------------

def _check_keys(frame: pd.DataFrame, keys: Sequence[str], *, file: Path) -> None:
    """Refuse a blank key cell or a key given twice (naming the second row)."""
    for column in keys:
        check_text(frame[column], file=file, column=column)
    dup = frame.duplicated(list(keys), keep="first")
    reject_rows(dup, frame[list(keys)].astype(str).agg("/".join, axis=1),
                f"{'/'.join(keys)} given twice", file=file, column=keys[-1])


def read_table4(path: Path, attributes: Sequence[str]) -> pd.DataFrame:
    """BiasFinder's Table 4 CSV (``biasfinder table``) as ``model, method, attribute,
    btc_rate, aligned_btc_rate`` for the characteristics that are fairness ``attributes``."""
    path = Path(path)
    frame = read_table(path, required=TABLE4_COLUMNS, what="BiasFinder table",
                       allow_empty=True)
    _check_keys(frame, ["model", "method", "characteristic"], file=path)
    for column in ("btc_rate", "aligned_btc_rate"):
        frame[column] = numeric(frame[column], file=path, column=column)
        check_range(frame[column], 0, 1, file=path, column=column, allow_missing=True)
    kept = frame[frame["characteristic"].isin(attributes)]
    if kept.empty:
        found = ", ".join(sorted(frame["characteristic"].unique()))
        raise DataError(f"no characteristic is a fairness attribute of the task "
                        f"({', '.join(attributes)}); found: {found}", file=path,
                        column="characteristic")
    out = kept.rename(columns={"characteristic": "attribute"})
    return out[["model", "method", "attribute", "btc_rate", "aligned_btc_rate"]].reset_index(
        drop=True)


def read_gaps(path: Path, attributes: Sequence[str]) -> pd.DataFrame:
    """A fairness report's ``gaps.csv`` as ``model, method, fairness_set, attribute`` rows
    with one column per gap (``FPR_gap``, ``TPR_gap``, ``AUC_gap``; NaN where undefined).
    Models the model-works gate failed are left out (:func:`below_floor` names them)."""
    path = Path(path)
    frame = read_table(path, required=GAP_COLUMNS, what="gaps table", allow_empty=True)
    keys = ["model", "method", "fairness_set", "attribute", "metric"]
    _check_keys(frame, keys, file=path)
    frame["value"] = numeric(frame["value"], file=path, column="value")
    check_range(frame["value"], 0, 1, file=path, column="value", allow_missing=True)
    frame = frame[frame["metric"].isin(METRICS) & frame["attribute"].isin(attributes)]
    if frame.empty:
        raise DataError(f"no {'/'.join(METRICS)} row for the attributes "
                        f"{', '.join(attributes)}", file=path)
    out = gate.failed(frame)
    frame = frame[np.array([(m, me) not in out for m, me in zip(
        frame["model"].astype(str), frame["method"].astype(str), strict=True)], dtype=bool)]
    wide = frame.set_index(keys)["value"].unstack("metric").reset_index()
    for metric in METRICS:
        if metric not in wide.columns:
            wide[metric] = math.nan
    return wide[[*keys[:-1], *METRICS]]


def below_floor(path: Path) -> list[str]:
    """``model/method`` of each model in a fairness report's ``gaps.csv`` that the
    model-works gate failed, sorted."""
    frame = read_table(Path(path), required=GAP_COLUMNS, what="gaps table", allow_empty=True)
    return sorted(f"{m}/{me}" for m, me in gate.failed(frame))


def balanced_mutants(balanced: pd.DataFrame, *, file: Path) -> pd.DataFrame:
    """The balanced fairness set as BiasFinder mutants: ``template_id`` = ``source_id``,
    ``characteristic`` = ``attribute``, ``class`` = ``identity`` (the group) and an empty
    ``align`` (one mutant per group, so every cross-group pair is an aligned one)."""
    require_columns(list(balanced.columns), BALANCED_COLUMNS, file=file)
    mutants = pd.DataFrame({
        "id": balanced["id"], "template_id": balanced["source_id"],
        "characteristic": balanced["attribute"], "class": balanced["identity"],
        "align": "", "text": balanced["text"], "label": balanced["label"]})
    check_mutants(mutants, file=file, columns=(*MUTANT_COLUMNS, "text"))
    return mutants


def toxicity_btc(mutants: pd.DataFrame,
                 predictions: Mapping[tuple[str, str], tuple[Path, pd.DataFrame]], *,
                 attributes: Sequence[str], threshold: float,
                 mutants_file: Path | None = None) -> pd.DataFrame:
    """Per model x method x attribute: templates, mutants, possible cross-group pairs, BTC
    pairs, BTC rate and the templates with a BTC (count and share), BiasFinder's Table 4
    counts (§6, RQ1) over the balanced set's templates."""
    if not mutants["characteristic"].isin(attributes).any():
        raise DataError(f"no template of the attributes {', '.join(attributes)}",
                        file=mutants_file, column="attribute")
    rows = []
    for (model, method), (path, pred) in sorted(predictions.items()):
        scored = join_predictions(mutants, pred, threshold=threshold, predictions_file=path,
                                  mutants_file=mutants_file)
        scored = scored[scored["characteristic"].isin(attributes)]
        counts = template_counts(scored)
        for row in summarize(scored[["template_id", "characteristic"]], counts)[:-1]:
            rows.append({
                "model": model, "method": method, "attribute": row["characteristic"],
                "threshold": float(threshold), **{k: row[k] for k in BTC_COLUMNS[4:-1]},
                "templates_with_btc_share": row["templates_with_btc"] / row["templates"]})
    out = pd.DataFrame(rows, columns=BTC_COLUMNS)
    return out.astype({"btc_rate": np.float64, "templates_with_btc_share": np.float64})


# -- points and correlations ----------------------------------------------------------------

def join_points(task: str, btc: pd.DataFrame, gaps: pd.DataFrame,
                attributes: Sequence[str]) -> pd.DataFrame:
    """BTC rates beside the gaps of the same model, method and attribute, one row per
    fairness set; sorted by fairness set, attribute (in ``attributes`` order), model,
    method. Model x method x attribute points on one side only are left out."""
    if "aligned_btc_rate" not in btc:
        btc = btc.assign(aligned_btc_rate=math.nan)
    merged = btc[["model", "method", "attribute", "btc_rate", "aligned_btc_rate"]].merge(
        gaps, on=["model", "method", "attribute"], how="inner")
    merged["task"] = task
    order = {a: i for i, a in enumerate(attributes)}
    merged = merged.assign(_a=merged["attribute"].map(order)).sort_values(
        ["fairness_set", "_a", "model", "method"], kind="stable")
    return merged[POINT_COLUMNS].reset_index(drop=True)


def unmatched(btc: pd.DataFrame, gaps: pd.DataFrame) -> dict[str, list[str]]:
    """``model/method`` with BTC rates but no gaps, and with gaps but no BTC rates."""
    ours = {f"{m}/{me}" for m, me in zip(btc["model"], btc["method"], strict=True)}
    theirs = {f"{m}/{me}" for m, me in zip(gaps["model"], gaps["method"], strict=True)}
    return {"btc_only": sorted(ours - theirs), "gaps_only": sorted(theirs - ours)}


def correlations(points: pd.DataFrame, attributes: Mapping[str, Sequence[str]], *,
                 confidence: float) -> pd.DataFrame:
    """Pearson's ρ of each BTC measure against each gap, per task, fairness set and
    attribute (points: model x method), and pooled over the attributes (points: model x
    method x attribute) for a task with more than one."""
    rows: list[dict[str, Any]] = []
    for task in [t for t in TASKS if t in set(points["task"])]:
        on_task = points[points["task"] == task]
        present = [a for a in attributes[task] if a in set(on_task["attribute"])]
        groups = [(a, [a], "model x method") for a in present]
        if len(present) > 1:
            groups.append((POOLED, present, "model x method x attribute"))
        for fset in sorted(on_task["fairness_set"].unique()):
            on_set = on_task[on_task["fairness_set"] == fset]
            for name, members, what in groups:
                sub = on_set[on_set["attribute"].isin(members)]
                for x in MEASURES[task]:
                    for y in METRICS:
                        r = pearson(sub[x].to_numpy(np.float64), sub[y].to_numpy(np.float64),
                                    confidence=confidence)
                        rows.append({"task": task, "fairness_set": fset, "attribute": name,
                                     "x": x, "y": y, "points": what, **r})
    return adjust(pd.DataFrame(rows, columns=CORRELATION_COLUMNS))


def headline(table: pd.DataFrame) -> dict[str, Any]:
    """Per task and fairness set, each gap's ρ against the BTC rate with n, p-value and
    interval: the pooled row where a task has several attributes, else its only one."""
    out: dict[str, Any] = {}
    rates = table[table["x"] == "btc_rate"]
    for (task, fset), sub in rates.groupby(["task", "fairness_set"], sort=True):
        pooled = sub[sub["attribute"] == POOLED]
        pick = pooled if len(pooled) else sub
        out.setdefault(task, {})[fset] = {
            r["y"]: {"attribute": r["attribute"], "rho": r["rho"], "n": int(r["n"]),
                     "p_value": r["p_value"], "low": r["low"], "high": r["high"],
                     "distinct_x": int(r["distinct_x"]), "p_permutation": r["p_permutation"],
                     "p_cluster": r["p_cluster"], "note": r["note"]}
            for r in pick.to_dict("records")}
    return out


# -- Markdown -------------------------------------------------------------------------------

def _fmt(value: float) -> str:
    return "NaN" if not math.isfinite(value) else f"{value:.3f}"


def _markdown(table: pd.DataFrame, points: pd.DataFrame, *, threshold: float,
              confidence: float, excluded: Mapping[str, Sequence[str]] | None = None) -> str:
    sizes = points.groupby("task")[["model", "method"]].apply(
        lambda f: len(f.drop_duplicates())).to_dict()
    counted = ", ".join(f"{t}: {sizes[t]} model x method" for t in sorted(sizes)) or "none"
    header = (
        "# Cross-study: metamorphic bias (BTC rate) against group-fairness gaps\n\n"
        "Each row correlates a model's rate of bias-uncovering test cases (BTCs: two "
        "versions of one text that differ only in the identity they mention, and that the "
        "model labels differently) with its group-fairness gap (|mean of the marginalized "
        "groups - non-marginalized group| of FPR, TPR or AUC) over every model x debiasing "
        "method that has both. Sentiment: BiasFinder's rate on IMDB templates (all "
        "cross-class pairs, and aligned pairs only) against the SST fairness set's gaps. "
        "Toxicity: BiasFinder-style templates from the balanced Civil Comments fairness set "
        "(one template per source sentence, one mutant per group of its attribute; labels at "
        f"probability >= {threshold:g}) against the gaps on the balanced and on the original "
        "set. A row per attribute has one point per model x method; `all` pools the "
        "attributes, whose scales differ, so read it together with the per-attribute rows. "
        f"n counts the points with both values; the interval is Fisher-z at {confidence:g} "
        "and p_value scipy's, both for independent points; p_perm shuffles y over the "
        "points and p_cluster shuffles the distinct x values over the points that share "
        f"them (every ordering up to {EXACT_LIMIT:,}, else {PERMUTATIONS:,} random ones, "
        f"seed {SEED}: correlations.csv says which); p_cluster BH is p_cluster adjusted by "
        "Benjamini–Hochberg over every row of this table (correlations.csv also has "
        "p_value_bh), the false discovery rate of reading many correlations at once; "
        "distinct x and y count the different values of each side; "
        "a positive rho means models with more metamorphic failures also have larger gaps. "
        "On the toxicity balanced set the FPR and TPR gaps are bounded by the share of "
        "templates with a BTC (every group holds the same sentences), so those rows agree "
        "largely by construction; the original set and the sentiment rows are independent "
        "of the BTC templates. "
        f"Points: {counted}.\n\n")
    left_out = "; ".join(f"{task}: {', '.join(names)}"
                         for task, names in sorted((excluded or {}).items()) if names)
    if left_out:
        header += ("Left out, below the model-works gate's floor (the fairness reports' "
                   f"models.csv): {left_out}.\n\n")
    lines = ["| task | fairness_set | attribute | x | y | n | distinct x, y | rho | CI | "
             "p_value | p_perm | p_cluster | p_cluster BH | note |", "|" + "---|" * 14]
    for r in table.to_dict("records"):
        ci = (f"[{_fmt(r['low'])}, {_fmt(r['high'])}]" if math.isfinite(r["low"]) else "")
        p, perm, cluster, bh = ("NaN" if not math.isfinite(r[k]) else f"{r[k]:.3g}"
                                for k in ("p_value", "p_permutation", "p_cluster",
                                          "p_cluster_bh"))
        lines.append(f"| {r['task']} | {r['fairness_set']} | {r['attribute']} | {r['x']} | "
                     f"{r['y']} | {r['n']} | {r['distinct_x']}, {r['distinct_y']} | "
                     f"{_fmt(r['rho'])} | {ci} | {p} | {perm} | {cluster} | {bh} | "
                     f"{r['note']} |")
    return header + "\n".join(lines) + "\n"


# -- the step -------------------------------------------------------------------------------

@contextmanager
def _outputs(out_dir: Path) -> Iterator[dict[str, Path]]:
    with atomic_outputs(*(out_dir / f for f in FILES)) as tmp:
        yield dict(zip(FILES, tmp, strict=True))


def _settings(settings: Mapping[str, Any]) -> tuple[float, float, dict[str, list[str]]]:
    try:
        threshold = float(settings["threshold"])
        confidence = float(settings["confidence"])
        attributes = {t: list(settings["attributes"][t]) for t in settings["attributes"]}
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"cross-study settings need threshold, confidence and attributes "
                          f"per task ({e!r})") from None
    if not 0 <= threshold <= 1 or not 0 < confidence < 1:
        raise ConfigError(f"threshold must be in [0, 1] and confidence in (0, 1), not "
                          f"{threshold} and {confidence}")
    return threshold, confidence, attributes


def write_cross_study(*, settings: Mapping[str, Any], out_dir: Path,
                      biasfinder: Path | None = None, sentiment_gaps: Path | None = None,
                      toxicity_balanced: Path | None = None,
                      toxicity_predictions: Sequence[Path] = (),
                      toxicity_gaps: Path | None = None) -> None:
    """Read the inputs and write :data:`FILES` to ``out_dir`` (all or none).

    ``settings``: ``threshold`` (toxicity labels, ``fairness.threshold``), ``confidence``
    (of the ρ intervals) and ``attributes`` (task -> fairness attributes). The sentiment
    inputs (``biasfinder``, ``sentiment_gaps``) come both or neither, and so do the
    toxicity ones (balanced set, its predictions, gaps); at least one task is needed.
    """
    start = time.perf_counter()
    threshold, confidence, attributes = _settings(settings)
    sentiment = [biasfinder is not None, sentiment_gaps is not None]
    toxicity = [toxicity_balanced is not None, bool(toxicity_predictions),
                toxicity_gaps is not None]
    if any(sentiment) and not all(sentiment):
        raise ConfigError("the sentiment cross-study needs both the BiasFinder table and the "
                          "sentiment gaps")
    if any(toxicity) and not all(toxicity):
        raise ConfigError("the toxicity cross-study needs the balanced fairness set, its "
                          "predictions and the toxicity gaps")
    if biasfinder is None and toxicity_balanced is None:
        raise ConfigError("nothing to correlate: give the sentiment inputs, the toxicity "
                          "inputs, or both")
    for task, needed in (("sentiment", biasfinder), ("toxicity", toxicity_balanced)):
        if needed is not None and task not in attributes:
            raise ConfigError(f"fairness.attributes has no entry for task {task!r}")
    out_dir = Path(out_dir)
    with _outputs(out_dir) as paths:
        points, gaps_of, btc_of = [], {}, {}
        if biasfinder is not None and sentiment_gaps is not None:
            btc_of["sentiment"] = read_table4(Path(biasfinder), attributes["sentiment"])
            gaps_of["sentiment"] = read_gaps(Path(sentiment_gaps), attributes["sentiment"])
        tox = pd.DataFrame(columns=BTC_COLUMNS)
        if toxicity_balanced is not None and toxicity_gaps is not None:
            balanced = Path(toxicity_balanced)
            mutants = balanced_mutants(read_parquet(balanced, what="balanced fairness set"),
                                       file=balanced)
            preds: dict[tuple[str, str], tuple[Path, pd.DataFrame]] = {}
            for path in map(Path, toxicity_predictions):
                model, method, fset = prediction_key(path)
                if fset != "balanced":
                    raise DataError("BTCs need predictions on the balanced fairness set "
                                    "(fairness-balanced.parquet)", file=path)
                if (model, method) in preds:
                    raise DataError(f"a second predictions file for {model}/{method} (also "
                                    f"{preds[model, method][0]})", file=path)
                preds[model, method] = (path, read_parquet(path, what="predictions"))
            tox = toxicity_btc(mutants, preds, attributes=attributes["toxicity"],
                               threshold=threshold, mutants_file=balanced)
            btc_of["toxicity"] = tox
            gaps_of["toxicity"] = read_gaps(Path(toxicity_gaps), attributes["toxicity"])
        missing: dict[str, Any] = {}
        excluded = {task: below_floor(Path(path)) for task, path in
                    (("sentiment", sentiment_gaps), ("toxicity", toxicity_gaps))
                    if path is not None and task in gaps_of}
        for task, btc in btc_of.items():
            joined = join_points(task, btc, gaps_of[task], attributes[task])
            if gaps_of[task].empty and excluded.get(task):
                continue  # every model of the task failed the gate: no point, said below
            if joined.empty:
                raise DataError(f"no {task} model/method/attribute has both a BTC rate and "
                                "gaps (are the two inputs from the same run?)",
                                file=sentiment_gaps if task == "sentiment" else toxicity_gaps)
            points.append(joined)
            missing[task] = unmatched(btc, gaps_of[task])
        table_points = (pd.concat(points, ignore_index=True) if points
                        else pd.DataFrame(columns=POINT_COLUMNS))
        table = correlations(table_points, attributes, confidence=confidence)
        summary = {
            "threshold": threshold, "confidence": confidence,
            "headline": headline(table),
            "points": {t: int(len(p[["model", "method"]].drop_duplicates()))
                       for t, p in table_points.groupby("task")},
            "unmatched": missing,
            "below_floor": excluded,
            "toxicity_btc_rate_pooled": {
                a: float(g["btc"].sum() / g["possible_pairs"].sum())
                for a, g in tox.groupby("attribute")},
        }
        tox.to_csv(paths["toxicity_btc.csv"], index=False, lineterminator="\n")
        table_points.to_csv(paths["points.csv"], index=False, lineterminator="\n")
        table.to_csv(paths["correlations.csv"], index=False, lineterminator="\n")
        write_text(_markdown(table, table_points, threshold=threshold, confidence=confidence,
                             excluded=excluded), paths["correlations.md"])
        write_text(dumps_json(summary), paths["summary.json"])
    log.info("cross-study: %d points, %d correlations -> %s in %.1f s", len(table_points),
             len(table), out_dir, time.perf_counter() - start)
