"""Failure detection: bias-uncovering test cases (BTCs) from scored mutants (issue #4, item 6).

BiasFinder's failure detection engine (Asyrofi et al., TSE 2022, §3 and §4–5, "Failure
Detection Engine") groups the mutants of one template and pairs mutants of *different
classes* (male/female, two occupations, two countries) that the sentiment model labels
differently; each such pair is a BTC. Counting follows the original tool
(biasfinder-original.md §2, "BTC counting"): per template and per pair of classes i < j,

    btc = Σ_{i<j} P_i·N_j + N_i·P_j        possible_pairs = Σ_{i<j} n_i·n_j

with P_i / N_i the mutants of class i predicted positive / negative, and the BTC rate is
btc / possible_pairs. Unlike the original, classes are taken per template (its loop over
the *last* template's class list, §7.11, is not repeated), and the counts are also given
for *aligned* pairs only (§7.4): cross-class pairs with equal ``align`` keys (name i ↔ name
i, noun pair j ↔ its counterpart); occupation and country mutants have ``align == ""``, so
all their cross-class pairs are aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    markdown_table,
    read_json,
    require_columns,
    write_json,
    write_parquet,
    write_text,
)

if TYPE_CHECKING:
    from biasrepro.models.predict import ModelLike

#: the mutant columns failure detection reads (the mutants contract has ``values`` too)
MUTANT_COLUMNS = ("id", "template_id", "characteristic", "class", "align", "text")
PREDICTION_COLUMNS = ("id", "prob", "pred")
#: the paper's order of the characteristics in Table 4; others follow alphabetically
CHARACTERISTICS = ("gender", "occupation", "country")

COUNT_COLUMNS = ["template_id", "characteristic", "n_mutants", "n_classes", "btc",
                 "possible_pairs", "btc_rate", "aligned_pairs", "aligned_btc", "n_positive",
                 "n_negative"]
PAIR_COLUMNS = ["template_id", "characteristic", "id_1", "id_2", "class_1", "class_2",
                "aligned", "pred_1", "pred_2", "prob_1", "prob_2", "text_1", "text_2"]
SUMMARY_COLUMNS = ["characteristic", "classes", "templates", "mutants", "btc", "possible_pairs",
                   "btc_rate", "aligned_pairs", "aligned_btc", "aligned_btc_rate",
                   "templates_with_btc"]


# -- inputs ---------------------------------------------------------------------------------

def _first_bad(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


def check_mutants(mutants: pd.DataFrame, *, file: str | Path | None = None,
                  columns: Sequence[str] = MUTANT_COLUMNS) -> None:
    """Refuse a mutants table that failure detection cannot use.

    Checks the ``columns`` exist; ids are unique; ``template_id``, ``characteristic``,
    ``class``, ``align`` and ``text`` are strings (``align`` may be empty, the others not);
    each template has one characteristic and at least two classes (a single-class template
    can have no BTC and means the mutants file is truncated or mislabelled). Errors name
    ``file`` and the 1-based row.
    """
    require_columns(list(mutants.columns), columns, file=file or "mutants")
    for column in [c for c in ("id", "template_id", "characteristic", "class", "align", "text")
                   if c in columns]:
        values = mutants[column]
        if isinstance(values.dtype, pd.StringDtype):
            not_str = values.isna().to_numpy(dtype=bool)
        else:
            not_str = ~np.fromiter((isinstance(v, str) for v in values), bool, len(values))
        row = _first_bad(not_str)
        if row is not None:
            raise DataError(f"not a string ({values.iloc[row]!r})", file=file, row=row + 1,
                            column=column)
        if column != "align":
            row = _first_bad(values.str.strip().eq("").to_numpy(dtype=bool))
            if row is not None:
                raise DataError("empty", file=file, row=row + 1, column=column)
    dup = mutants["id"].duplicated().to_numpy()
    row = _first_bad(dup)
    if row is not None:
        raise DataError(f"duplicate mutant id {mutants['id'].iloc[row]!r}", file=file,
                        row=row + 1, column="id")
    per_template = mutants.groupby("template_id", sort=True).agg(
        characteristics=("characteristic", "nunique"), classes=("class", "nunique"))
    mixed = per_template.index[per_template["characteristics"] > 1]
    if len(mixed):
        raise DataError(f"template {mixed[0]!r} has mutants of several characteristics",
                        file=file, column="characteristic")
    single = per_template.index[per_template["classes"] < 2]
    if len(single):
        cls = mutants.loc[mutants["template_id"] == single[0], "class"].iloc[0]
        raise DataError(f"template {single[0]!r} has mutants of a single class ({cls!r}); "
                        "a BTC needs two classes of one template", file=file, column="class")


def _check_predictions(df: pd.DataFrame, *, file: str | Path | None) -> None:
    """``prob`` finite in [0, 1] and ``pred`` 0/1 (row numbers are 1-based positions)."""
    prob = pd.to_numeric(df["prob"], errors="coerce").to_numpy(dtype=np.float64)
    row = _first_bad(~np.isfinite(prob) | (prob < 0) | (prob > 1))
    if row is not None:
        raise DataError(f"probability outside [0, 1] ({df['prob'].iloc[row]!r})", file=file,
                        row=row + 1, column="prob")
    pred = pd.to_numeric(df["pred"], errors="coerce").to_numpy(dtype=np.float64)
    row = _first_bad(~np.isin(pred, (0.0, 1.0)))
    if row is not None:
        raise DataError(f"predicted label must be 0 or 1 ({df['pred'].iloc[row]!r})", file=file,
                        row=row + 1, column="pred")


def _scored(scored: pd.DataFrame) -> pd.DataFrame:
    """The validated scored mutants with ``pred`` int64 and ``prob`` float64."""
    check_mutants(scored, columns=(*MUTANT_COLUMNS, "prob", "pred"))
    _check_predictions(scored, file=None)
    return scored.assign(prob=scored["prob"].astype(np.float64),
                         pred=scored["pred"].astype(np.int64))


# -- predictions ----------------------------------------------------------------------------

def score_mutants(mutants: pd.DataFrame, model: ModelLike, *, threshold: float = 0.5,
                  mutants_file: str | Path | None = None, **predict_kwargs: Any) -> pd.DataFrame:
    """The mutants with ``prob`` (positive-class probability, float64), ``pred`` (int64,
    ``prob >= threshold``) and ``input`` (int64, the distinct model input, as
    :func:`biasrepro.models.predict.score_with_inputs` gives it) from any model
    ``predict_proba`` accepts: a model directory or Hub id, a ``ModelSpec``, a
    ``(model, tokenizer)`` pair, or a callable texts -> probs (§3, "the engine feeds the
    mutants to the SA system")."""
    from biasrepro.models.predict import score_with_inputs  # torch: only when scoring here

    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold must be in [0, 1], not {threshold}")
    check_mutants(mutants, file=mutants_file)
    probs, inputs = score_with_inputs(model, mutants["text"].tolist(), **predict_kwargs)
    return mutants.assign(prob=probs.astype(np.float64),
                          pred=(probs >= threshold).astype(np.int64),
                          input=inputs.astype(np.int64))


def join_predictions(mutants: pd.DataFrame, predictions: pd.DataFrame, *,
                     threshold: float | None = None,
                     predictions_file: str | Path | None = None,
                     mutants_file: str | Path | None = None) -> pd.DataFrame:
    """The mutants (in their order) with ``prob`` and ``pred`` from a ``biasrepro predict``
    table (``id``, ``label``, ``prob``, ``pred``); with a ``threshold``, ``pred`` is
    recomputed as ``prob >= threshold`` (``predict`` writes it at 0.5).

    Every mutant id needs exactly one prediction: a missing, extra or duplicate id is a
    DataError naming the predictions file and the first offending id; so is a ``label``
    that disagrees with the mutant's (the predictions were made on another mutants file).
    """
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold must be in [0, 1], not {threshold}")
    check_mutants(mutants, file=mutants_file)
    where = predictions_file or "predictions"
    require_columns(list(predictions.columns), PREDICTION_COLUMNS, file=where)
    _check_predictions(predictions, file=predictions_file)
    ids = predictions["id"]
    dup = ids.duplicated().to_numpy()
    row = _first_bad(dup)
    if row is not None:
        raise DataError(f"duplicate prediction for mutant id {ids.iloc[row]!r}",
                        file=predictions_file, row=row + 1, column="id")
    at = pd.Index(ids).get_indexer(mutants["id"])  # prediction row of each mutant, or -1
    missing = at < 0
    row = _first_bad(missing)
    if row is not None:
        raise DataError(f"no prediction for mutant id {mutants['id'].iloc[row]!r} "
                        f"({int(missing.sum())} of {len(mutants)} mutants have none)",
                        file=predictions_file, column="id")
    if len(ids) > len(mutants):
        extra = pd.Index(mutants["id"]).get_indexer(ids) < 0
        row = _first_bad(extra)
        raise DataError(f"prediction for an id that is not a mutant: {ids.iloc[row]!r} "
                        f"({int(extra.sum())} such rows)", file=predictions_file, row=row + 1,
                        column="id")
    prob = pd.to_numeric(predictions["prob"]).to_numpy(dtype=np.float64)[at]
    pred = prob >= threshold if threshold is not None else (
        pd.to_numeric(predictions["pred"]).to_numpy(dtype=np.float64)[at])
    joined = mutants.drop(columns=["prob", "pred"], errors="ignore").assign(
        prob=prob, pred=pred.astype(np.int64))
    if "label" in predictions.columns and "label" in mutants.columns:
        theirs = predictions["label"].to_numpy()[at]
        row = _first_bad(theirs != mutants["label"].to_numpy())
        if row is not None:
            raise DataError(f"label of mutant {mutants['id'].iloc[row]!r} is {theirs[row]!r} "
                            f"here but {mutants['label'].iloc[row]!r} in the mutants "
                            "(predictions of another mutants file?)", file=predictions_file,
                            row=int(at[row]) + 1, column="label")
    return joined


# -- counting -------------------------------------------------------------------------------

def _cross_class(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: cross-class pairs and those with differing predictions.

    With n, P, N summed over the classes of the group, Σ_{i<j} n_i·n_j = (n² − Σ n_i²) / 2
    and Σ_{i<j} P_i·N_j + N_i·P_j = P·N − Σ_i P_i·N_i, so no loop over class pairs is needed.
    """
    per_class = df.groupby([*keys, "class"], sort=True).agg(n=("pos", "size"), p=("pos", "sum"))
    per_class["m"] = per_class["n"] - per_class["p"]
    per_class["pm"] = per_class["p"] * per_class["m"]
    per_class["n2"] = per_class["n"] ** 2
    g = per_class.groupby(level=keys, sort=True).agg(
        n=("n", "sum"), p=("p", "sum"), m=("m", "sum"), pm=("pm", "sum"), n2=("n2", "sum"),
        classes=("n", "size"))
    return pd.DataFrame({"pairs": (g["n"] ** 2 - g["n2"]) // 2,
                         "btc": g["p"] * g["m"] - g["pm"], "n": g["n"], "p": g["p"],
                         "m": g["m"], "classes": g["classes"]})


def template_counts(scored: pd.DataFrame) -> pd.DataFrame:
    """One row per template (sorted by ``template_id``): mutants, classes, BTCs as the
    original counted them, possible cross-class pairs, the BTC rate, the aligned pairs and
    aligned BTCs, and the positive/negative predictions."""
    df = _scored(scored)
    df = df[["template_id", "characteristic", "class", "align"]].assign(
        pos=df["pred"].to_numpy())
    every = _cross_class(df, ["template_id"])
    aligned = _cross_class(df, ["template_id", "align"]).groupby(level="template_id").agg(
        aligned_pairs=("pairs", "sum"), aligned_btc=("btc", "sum"))
    characteristic = df.groupby("template_id", sort=True)["characteristic"].first()
    out = pd.DataFrame({
        "template_id": every.index.astype(str),
        "characteristic": characteristic.reindex(every.index).astype(str).to_numpy(),
        "n_mutants": every["n"].to_numpy(np.int64),
        "n_classes": every["classes"].to_numpy(np.int64),
        "btc": every["btc"].to_numpy(np.int64),
        "possible_pairs": every["pairs"].to_numpy(np.int64),
        "btc_rate": (every["btc"] / every["pairs"]).to_numpy(np.float64),
        "aligned_pairs": aligned["aligned_pairs"].reindex(every.index).to_numpy(np.int64),
        "aligned_btc": aligned["aligned_btc"].reindex(every.index).to_numpy(np.int64),
        "n_positive": every["p"].to_numpy(np.int64),
        "n_negative": every["m"].to_numpy(np.int64),
    })
    return out[COUNT_COLUMNS]


def btc_pairs(scored: pd.DataFrame, *, aligned_only: bool = False) -> pd.DataFrame:
    """The BTCs themselves: each pair of mutants of one template, of different classes, with
    different predicted labels (§3). ``id_1`` precedes ``id_2`` in id order; rows are
    sorted by ``template_id``, ``id_1``, ``id_2``. Without ``aligned_only`` there are
    ``template_counts(scored)["btc"].sum()`` rows, with it ``["aligned_btc"].sum()``.

    Pairs are built without a Python loop: positives and negatives are joined on the
    template (a hash join, Σ_t P_t·N_t rows) and same-class pairs dropped.
    """
    df = _scored(scored)[["id", "template_id", "characteristic", "class", "align", "text",
                          "prob", "pred"]].sort_values(["template_id", "id"], kind="stable")
    df = df.reset_index(drop=True)
    template = pd.factorize(df["template_id"])[0]
    cls = pd.factorize(df["class"])[0]
    pred = df["pred"].to_numpy()
    pos = np.flatnonzero(pred == 1)
    neg = np.flatnonzero(pred == 0)
    joined = pd.DataFrame({"t": template[pos], "a": pos}).merge(
        pd.DataFrame({"t": template[neg], "b": neg}), on="t", how="inner")
    a, b = joined["a"].to_numpy(), joined["b"].to_numpy()
    keep = cls[a] != cls[b]
    first, second = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    align = df["align"].to_numpy(dtype=object)
    aligned = align[first] == align[second]
    if aligned_only:
        first, second, aligned = first[aligned], second[aligned], aligned[aligned]
    order = np.lexsort((second, first))
    first, second, aligned = first[order], second[order], aligned[order]

    def col(name: str, rows: np.ndarray) -> Any:
        return df[name].array.take(rows)  # stays Arrow-backed for string columns

    out = pd.DataFrame({
        "template_id": col("template_id", first),
        "characteristic": col("characteristic", first),
        "id_1": col("id", first), "id_2": col("id", second),
        "class_1": col("class", first), "class_2": col("class", second),
        "aligned": aligned.astype(bool),
        "pred_1": col("pred", first), "pred_2": col("pred", second),
        "prob_1": col("prob", first), "prob_2": col("prob", second),
        "text_1": col("text", first), "text_2": col("text", second),
    })
    for name in ("template_id", "characteristic", "id_1", "id_2", "class_1", "class_2",
                 "text_1", "text_2"):
        out[name] = out[name].astype(str)
    return out[PAIR_COLUMNS]


def truncation_counts(mutants: pd.DataFrame, groups: np.ndarray) -> pd.DataFrame:
    """Per template, ``distinct_inputs``: how many different inputs its mutants become
    after the model's tokenization and truncation (``groups``: the ``input`` column that
    ``biasrepro predict`` and :func:`score_mutants` write, one per mutant row). A template with one
    distinct input had its placeholders cut off: its mutants cannot disagree, yet the
    original counted them (biasfinder-original.md §7, pitfall 10)."""
    if len(groups) != len(mutants):
        raise DataError(f"{len(groups)} model inputs for {len(mutants)} mutants")
    frame = pd.DataFrame({"template_id": mutants["template_id"].astype(str).to_numpy(),
                          "group": np.asarray(groups)})
    out = frame.groupby("template_id", sort=True)["group"].nunique()
    return pd.DataFrame({"template_id": out.index.astype(str),
                         "distinct_inputs": out.to_numpy(np.int64)})


# -- Table 4 --------------------------------------------------------------------------------

#: the integer counts of a Table-4 row; the two rates follow from them
SUMMED = ("templates", "mutants", "btc", "possible_pairs", "aligned_pairs", "aligned_btc",
          "templates_with_btc")
#: what the counts depend on besides the model: whose word lists, how many occupation
#: templates a review gives (config ``biasfinder.lists``, ``biasfinder.occupation.templates``)
SETTING_COLUMNS = ["lists", "occupation_templates"]
TABLE_COLUMNS = ["model", "method", "threshold", *SETTING_COLUMNS, *SUMMARY_COLUMNS]


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _summary_row(characteristic: str, counts: dict[str, int],
                 classes: int | None = None) -> dict[str, Any]:
    """A Table-4 row from its counts, with the BTC rate and the aligned BTC rate."""
    row: dict[str, Any] = {"characteristic": characteristic, "classes": classes,
                           **{k: int(counts[k]) for k in SUMMED}}
    row["btc_rate"] = _rate(row["btc"], row["possible_pairs"])
    row["aligned_btc_rate"] = _rate(row["aligned_btc"], row["aligned_pairs"])
    return {c: row[c] for c in SUMMARY_COLUMNS}


def _total(rows: Sequence[dict]) -> dict[str, Any]:
    return _summary_row("total", {k: sum(r[k] for r in rows) for k in SUMMED})


def characteristic_order(names: Sequence[str]) -> list[str]:
    """The paper's characteristics first, in Table 4's order, then any others sorted."""
    present = set(names)
    return [c for c in CHARACTERISTICS if c in present] + sorted(present - set(CHARACTERISTICS))


def class_counts(mutants: pd.DataFrame) -> dict[str, int]:
    """Per characteristic, the distinct classes its mutants take (2 genders, K occupations,
    K countries): possible pairs, and so BTC counts, grow with the square of K."""
    require_columns(list(mutants.columns), ("characteristic", "class"), file="mutants")
    return {str(c): int(n) for c, n in
            mutants.groupby("characteristic")["class"].nunique().items()}


def summarize(templates: pd.DataFrame, counts: pd.DataFrame,
              classes: dict[str, int] | None = None,
              characteristic: str | None = None) -> list[dict]:
    """Table 4 (§6, RQ1): per characteristic the classes (``classes``, from
    :func:`class_counts`; None when not given), the templates generated, the mutants scored,
    the BTCs and their rate over possible pairs, the aligned pairs, aligned BTCs and their
    rate, and how many templates have a BTC; then a ``total`` row.

    ``templates`` is the templates table (every generated template counts, even one whose
    mutants were not scored); ``counts`` is :func:`template_counts`' output, whose templates
    must all be in ``templates`` with the same characteristic. ``characteristic``: the one
    the templates were generated for, which keeps its row (0 templates) when none were.
    """
    require_columns(list(templates.columns), ("template_id", "characteristic"),
                    file="templates")
    require_columns(list(counts.columns), COUNT_COLUMNS, file="template counts")
    known = templates.drop_duplicates("template_id").set_index("template_id")["characteristic"]
    theirs = known.reindex(counts["template_id"]).to_numpy()
    row = _first_bad(pd.isna(theirs) | (theirs != counts["characteristic"].to_numpy()))
    if row is not None:
        tid = counts["template_id"].iloc[row]
        what = "is not in the templates table" if pd.isna(theirs[row]) else (
            f"is {theirs[row]!r} in the templates table but "
            f"{counts['characteristic'].iloc[row]!r} in the counts")
        raise DataError(f"template {tid!r} {what}", column="template_id")
    n_templates = templates.groupby("characteristic")["template_id"].nunique()
    sums = counts.assign(mutants=counts["n_mutants"],
                         templates_with_btc=(counts["btc"] > 0).astype(np.int64)).groupby(
        "characteristic")[[k for k in SUMMED if k != "templates"]].sum()
    rows = []
    named = [characteristic] if characteristic else []
    for c in characteristic_order([*n_templates.index, *named]):
        found = sums.loc[c].to_dict() if c in sums.index else dict.fromkeys(sums.columns, 0)
        rows.append(_summary_row(c, {**found, "templates": n_templates.get(c, 0)},
                                 (classes or {}).get(c)))
    return [*rows, _total(rows)]


def write_btc(pairs: pd.DataFrame, counts: pd.DataFrame, summary_rows: Sequence[dict], *,
              pairs_path: str | Path, counts_path: str | Path, summary_json: str | Path,
              summary_md: str | Path | None = None) -> None:
    """Write the BTC pairs and per-template counts (Parquet), the summary as JSON keyed by
    characteristic and, optionally, as a Markdown Table 4 — all or none (one atomic block).
    Summary rows may carry extra keys (the model, method and threshold, for
    :func:`write_table`)."""
    paths = [pairs_path, counts_path, summary_json] + ([summary_md] if summary_md else [])
    with atomic_outputs(*paths) as tmp:
        write_parquet(pairs, tmp[0])
        write_parquet(counts, tmp[1])
        write_json({r["characteristic"]: r for r in summary_rows}, tmp[2])
        if summary_md:
            write_text("# BiasFinder: templates, mutants and BTCs (cf. Table 4)\n\n"
                       + markdown_table(summary_rows, SUMMARY_COLUMNS), tmp[3])


def table_rows(summaries: Sequence[str | Path]) -> list[dict]:
    """Table 4 per model and debiasing method from the summary JSONs of several ``btc`` runs
    (each written by :func:`write_btc` with ``model``, ``method``, ``threshold``,
    ``lists`` and ``occupation_templates`` in its
    rows; their ``total`` rows are ignored). Rows are sorted by model and method, the
    characteristics in Table 4's order, each (model, method) closed by a recomputed
    ``total`` row. A (model, method, characteristic) given twice is a DataError."""
    found: dict[tuple[str, str, str], tuple[dict, Path]] = {}
    for path in map(Path, summaries):
        data = read_json(path)
        if not isinstance(data, dict):
            raise DataError("expected a JSON object keyed by characteristic", file=path)
        for key, row in data.items():
            if key == "total":
                continue
            missing = [c for c in TABLE_COLUMNS if not isinstance(row, dict) or c not in row]
            if missing:
                raise DataError(f"summary row lacks {missing[0]!r}", file=path, column=key)
            if not isinstance(row["model"], str) or not isinstance(row["method"], str):
                raise DataError("summary row without a model or method name (run `btc` with "
                                "--model-name and --method)", file=path, column=key)
            at = (row["model"], row["method"], row["characteristic"])
            if at in found:
                raise DataError(f"model {at[0]!r}, method {at[1]!r}, characteristic "
                                f"{at[2]!r} is also in {found[at][1]}", file=path, column=key)
            found[at] = (row, path)
    out = []
    for model, method in sorted({(m, me) for m, me, _ in found}):
        rows = [found[model, method, c][0] for c in characteristic_order(
            [c for m, me, c in found if (m, me) == (model, method)])]
        total = _total(rows)
        for key in ("threshold", *SETTING_COLUMNS):  # one value, or None where they differ
            values = {r[key] for r in rows}
            total[key] = values.pop() if len(values) == 1 else None
        out += [{"model": model, "method": method, **{c: r[c] for c in TABLE_COLUMNS[2:]}}
                for r in rows]
        out.append({"model": model, "method": method, **total})
    return [{c: r[c] for c in TABLE_COLUMNS} for r in out]


def write_table(summaries: Sequence[str | Path], *, out_json: str | Path, out_md: str | Path,
                out_csv: str | Path) -> None:
    """:func:`table_rows` as JSON (model -> method -> characteristic -> row), Markdown and
    CSV — all or none (one atomic block)."""
    rows = table_rows(summaries)
    nested: dict[str, dict[str, dict[str, dict]]] = {}
    for r in rows:
        nested.setdefault(r["model"], {}).setdefault(r["method"], {})[r["characteristic"]] = r
    with atomic_outputs(out_json, out_md, out_csv) as (json_tmp, md_tmp, csv_tmp):
        write_json(nested, json_tmp)
        write_text("# BiasFinder Table 4 per model and method\n\n"
                   "A BTC is a pair of mutants of one template, of different classes, labelled "
                   "differently; `possible_pairs` counts all such cross-class pairs, so BTC "
                   "counts grow with the square of `classes` (occupations, countries) and with "
                   "the mutants per class. Compare `btc_rate` = btc / possible_pairs across "
                   "runs whose class sets differ. `lists`: whose word lists filled the "
                   "placeholders (`project` or BiasFinder's `original`); "
                   "`occupation_templates`: one template per distinct occupation of a review "
                   "(`each_distinct`) or its first only (`first`).\n\n"
                   + markdown_table(rows, TABLE_COLUMNS), md_tmp)
        pd.DataFrame(rows, columns=TABLE_COLUMNS).to_csv(csv_tmp, index=False,
                                                         lineterminator="\n")
