"""Failure detection: bias-uncovering test cases (BTCs) from scored mutants.

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

A near-random model gives about P_t·N_t ≈ n_t²/4 BTCs per template (some 10⁷ on the
paper's ~1.1 M occupation mutants), so BTC pairs are kept by mutant id only (no texts: two
reviews per pair would be tens of GB), built and written a chunk of templates at a time
(:func:`iter_btc_pairs`, :func:`write_pairs`); :func:`pair_texts` joins the texts of the
few pairs shown to people (the annotation sample) from the mutants file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from biasrepro.errors import ConfigError, DataError, shown
from biasrepro.io import (
    PARQUET_COMPRESSION,
    PARQUET_ROW_GROUP,
    atomic_outputs,
    markdown_table,
    read_json,
    read_parquet_rows,
    require_columns,
    write_json,
    write_parquet,
    write_text,
)

if TYPE_CHECKING:
    from biasrepro.models.predict import ModelLike

#: the mutant columns failure detection reads (the mutants contract has ``values``, ``text``
#: and ``label`` too; only scoring a model here needs ``text``)
MUTANT_COLUMNS = ("id", "template_id", "characteristic", "class", "align")
PREDICTION_COLUMNS = ("id", "prob", "pred")
#: the paper's order of the characteristics in Table 4; others follow alphabetically
CHARACTERISTICS = ("gender", "occupation", "country")

COUNT_COLUMNS = ["template_id", "characteristic", "n_mutants", "n_classes", "btc",
                 "possible_pairs", "btc_rate", "aligned_pairs", "aligned_btc", "n_positive",
                 "n_negative"]
#: a BTC pair names its two mutants by id; their texts stay in the mutants file, joined
#: only where pairs are shown to people (:func:`pair_texts`)
PAIR_COLUMNS = ["template_id", "characteristic", "id_1", "id_2", "class_1", "class_2",
                "aligned", "pred_1", "pred_2", "prob_1", "prob_2"]
PAIR_SCHEMA = pa.schema([("template_id", pa.string()), ("characteristic", pa.string()),
                         ("id_1", pa.string()), ("id_2", pa.string()),
                         ("class_1", pa.string()), ("class_2", pa.string()),
                         ("aligned", pa.bool_()), ("pred_1", pa.int64()), ("pred_2", pa.int64()),
                         ("prob_1", pa.float64()), ("prob_2", pa.float64())])
#: rows per row group of a pair file (as :func:`biasrepro.io.write_parquet`)
PAIR_ROW_GROUP = PARQUET_ROW_GROUP
#: candidate (positive, negative) pairs of one chunk of templates: bounds the memory of
#: :func:`iter_btc_pairs` (about 200 bytes each, index arrays and the pairs' Arrow columns)
#: whatever the number of templates and BTCs
CHUNK_CANDIDATES = 1 << 19
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
            value = values.iloc[row]
            raise DataError("missing" if pd.api.types.is_scalar(value) and pd.isna(value)
                            else f"not a string ({shown(value)})", file=file, row=row + 1,
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


def _check_summary_row(row: Any, *, file: Path, key: str) -> None:
    """Refuse a row of a ``btc`` summary JSON that Table 4 cannot use: a missing column, no
    model or method name, counts that are not non-negative integers, rates or a threshold
    that are not numbers, settings that are not text (the error names ``key``'s row)."""
    missing = [c for c in TABLE_COLUMNS if not isinstance(row, dict) or c not in row]
    if missing:
        raise DataError(f"summary row lacks {missing[0]!r}", file=file, column=key)
    if not isinstance(row["model"], str) or not isinstance(row["method"], str):
        raise DataError("summary row without a model or method name (run `btc` with "
                        "--model-name and --method)", file=file, column=key)

    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)

    for column in TABLE_COLUMNS:
        v = row[column]
        if column in SUMMED or column == "classes":
            ok = (isinstance(v, int) and not isinstance(v, bool) and v >= 0
                  or v is None and column == "classes")
            what = "a count (a non-negative integer)"
        elif column in ("threshold", "btc_rate", "aligned_btc_rate"):
            ok = v is None and column != "threshold" or number(v) and 0 <= v <= 1
            what = "a number in [0, 1]"
        else:
            ok = isinstance(v, str) and bool(v.strip()) or v is None and column in SETTING_COLUMNS
            what = "a name"
        if not ok:
            raise DataError(f"summary row's {column!r} is not {what} (got {v!r})", file=file,
                            column=key)


def _check_predictions(df: pd.DataFrame, *, file: str | Path | None) -> None:
    """``prob`` finite in [0, 1] and ``pred`` 0/1 (row numbers are 1-based positions)."""
    prob = pd.to_numeric(df["prob"], errors="coerce").to_numpy(dtype=np.float64)
    row = _first_bad(~np.isfinite(prob) | (prob < 0) | (prob > 1))
    if row is not None:
        raise DataError(f"probability outside [0, 1] ({shown(df['prob'].iloc[row])})", file=file,
                        row=row + 1, column="prob")
    pred = pd.to_numeric(df["pred"], errors="coerce").to_numpy(dtype=np.float64)
    row = _first_bad(~np.isin(pred, (0.0, 1.0)))
    if row is not None:
        raise DataError(f"predicted label must be 0 or 1 ({shown(df['pred'].iloc[row])})",
                        file=file,
                        row=row + 1, column="pred")


def _scored(scored: pd.DataFrame) -> pd.DataFrame:
    """The validated scored mutants with ``pred`` int64 and ``prob`` float64."""
    text = ("text",) if "text" in scored.columns else ()  # checked when there, not needed
    check_mutants(scored, columns=(*MUTANT_COLUMNS, *text, "prob", "pred"))
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
    check_mutants(mutants, file=mutants_file, columns=(*MUTANT_COLUMNS, "text"))
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
            raise DataError(f"label of mutant {mutants['id'].iloc[row]!r} is "
                            f"{shown(theirs[row])} here but "
                            f"{shown(mutants['label'].iloc[row])} in the mutants "
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


def _pair_chunks(candidates: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive template ranges [start, stop) of at most ``limit`` candidate pairs each
    (a template with more is a range of its own)."""
    bounds, start, total = [], 0, 0
    for t, c in enumerate(candidates.tolist()):
        if t > start and total + c > limit:
            bounds.append((start, t))
            start, total = t, 0
        total += c
    if start < len(candidates):
        bounds.append((start, len(candidates)))
    return bounds


def iter_btc_pairs(scored: pd.DataFrame, *, aligned_only: bool = False,
                   chunk_candidates: int = CHUNK_CANDIDATES) -> Iterator[pa.Table]:
    """:func:`btc_pairs` as Arrow tables (schema :data:`PAIR_SCHEMA`), a run of whole
    templates at a time with at most ``chunk_candidates`` (positive, negative) candidate
    pairs (more only for a single template that has more), so memory stays bounded however
    many BTCs there are; their concatenation does not depend on ``chunk_candidates``.

    Per template t the P_t positives are crossed with the N_t negatives without a Python
    loop (each positive repeated N_t times against the run of negatives), same-class pairs
    are dropped and the rest sorted by ``id_1``, ``id_2``.
    """
    if chunk_candidates < 1:
        raise ConfigError(f"chunk_candidates must be positive, not {chunk_candidates}")
    df = _scored(scored)[["id", "template_id", "characteristic", "class", "align", "prob",
                          "pred"]].sort_values(["template_id", "id"], kind="stable")
    df = df.reset_index(drop=True)
    template = pd.factorize(df["template_id"])[0]  # ascending: rows are sorted by template
    n_templates = int(template.max()) + 1 if len(template) else 0
    cls = pd.factorize(df["class"])[0]
    align = pd.factorize(df["align"])[0]
    pred = df["pred"].to_numpy()
    pos = np.flatnonzero(pred == 1)
    neg = np.flatnonzero(pred == 0)
    n_pos = np.bincount(template[pos], minlength=n_templates)
    n_neg = np.bincount(template[neg], minlength=n_templates)
    neg_start = np.cumsum(n_neg) - n_neg  # each template's first row in ``neg``
    pos_start = np.concatenate([[0], np.cumsum(n_pos)])
    arrow = {name: pa.array(df[name], from_pandas=True).cast(pa.string())
             for name in ("template_id", "characteristic", "id", "class")}
    arrow["prob"] = pa.array(df["prob"].to_numpy(dtype=np.float64))
    arrow["pred"] = pa.array(df["pred"].to_numpy(dtype=np.int64))
    del df
    for start, stop in _pair_chunks(n_pos * n_neg, chunk_candidates):
        a_rows = pos[pos_start[start]:pos_start[stop]]
        per = n_neg[template[a_rows]]  # negatives each positive meets
        a = np.repeat(a_rows, per)
        offset = np.arange(len(a), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
        b = neg[np.repeat(neg_start[template[a_rows]], per) + offset]
        keep = cls[a] != cls[b]
        first, second = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        aligned = align[first] == align[second]
        if aligned_only:
            first, second, aligned = first[aligned], second[aligned], aligned[aligned]
        order = np.lexsort((second, first))
        first, second, aligned = first[order], second[order], aligned[order]
        if not len(first):
            continue
        one, two = pa.array(first), pa.array(second)
        yield pa.table([pc.take(arrow["template_id"], one), pc.take(arrow["characteristic"], one),
                        pc.take(arrow["id"], one), pc.take(arrow["id"], two),
                        pc.take(arrow["class"], one), pc.take(arrow["class"], two),
                        pa.array(aligned, type=pa.bool_()),
                        pc.take(arrow["pred"], one), pc.take(arrow["pred"], two),
                        pc.take(arrow["prob"], one), pc.take(arrow["prob"], two)],
                       schema=PAIR_SCHEMA)


def btc_pairs(scored: pd.DataFrame, *, aligned_only: bool = False,
              chunk_candidates: int = CHUNK_CANDIDATES) -> pd.DataFrame:
    """The BTCs themselves: each pair of mutants of one template, of different classes, with
    different predicted labels (§3), by mutant id (:data:`PAIR_COLUMNS`, no texts:
    :func:`pair_texts` joins them for the pairs shown to people). ``id_1`` precedes ``id_2``
    in id order; rows are sorted by ``template_id``, ``id_1``, ``id_2``. Without
    ``aligned_only`` there are ``template_counts(scored)["btc"].sum()`` rows, with it
    ``["aligned_btc"].sum()``. For many BTCs write them with :func:`write_pairs` from
    :func:`iter_btc_pairs` instead: this frame holds them all.
    """
    tables = list(iter_btc_pairs(scored, aligned_only=aligned_only,
                                 chunk_candidates=chunk_candidates))
    table = pa.concat_tables(tables) if tables else PAIR_SCHEMA.empty_table()
    return _pairs_frame(table)


def _pairs_frame(table: pa.Table) -> pd.DataFrame:
    out = table.to_pandas()
    for name in ("template_id", "characteristic", "id_1", "id_2", "class_1", "class_2"):
        out[name] = out[name].astype(str)
    return out[PAIR_COLUMNS]


def write_pairs(pairs: pd.DataFrame | Iterable[pa.Table], path: str | Path) -> int:
    """Write BTC pairs, a frame of :data:`PAIR_COLUMNS` or Arrow tables of
    :data:`PAIR_SCHEMA` (:func:`iter_btc_pairs`), as zstd Parquet in row groups of
    :data:`PAIR_ROW_GROUP` rows, holding at most one row group besides the table being
    added (call inside the step's :func:`~biasrepro.io.atomic_outputs`). The bytes depend
    only on the rows, not on how they were chunked. Returns the number of rows written."""
    if isinstance(pairs, pd.DataFrame):
        require_columns(list(pairs.columns), PAIR_COLUMNS, file="BTC pairs")
        pairs = [pa.Table.from_pandas(pairs[PAIR_COLUMNS], schema=PAIR_SCHEMA,
                                      preserve_index=False).replace_schema_metadata(None)]
    written = 0
    pending: list[pa.Table] = []
    held = 0
    with pq.ParquetWriter(path, PAIR_SCHEMA, compression=PARQUET_COMPRESSION) as writer:

        def flush(rows: int) -> None:
            nonlocal pending, held, written
            table = pa.concat_tables(pending)
            writer.write_table(table.slice(0, rows).combine_chunks(),
                               row_group_size=PAIR_ROW_GROUP)
            rest = table.slice(rows)
            pending, held, written = [rest] if len(rest) else [], len(rest), written + rows

        for table in pairs:
            if not table.schema.equals(PAIR_SCHEMA):
                table = table.cast(PAIR_SCHEMA)
            pending.append(table)
            held += len(table)
            while held >= PAIR_ROW_GROUP:
                flush(PAIR_ROW_GROUP)
        if held:
            flush(held)
        elif not written:
            writer.write_table(PAIR_SCHEMA.empty_table())
    return written


def pair_texts(pairs: pd.DataFrame, mutants: Sequence[str | Path] | pd.DataFrame
               ) -> pd.DataFrame:
    """``pairs`` (a few BTCs, e.g. a sample to show) with ``text_1`` and ``text_2``: the
    texts of mutants ``id_1`` and ``id_2`` of the pair's template, from mutants tables
    (files written by ``biasfinder mutants``, of which only the ``id``, ``template_id`` and
    ``text`` of these pairs' mutants are read, or a frame). A mutant not found is a
    DataError: the pairs were found on other mutants."""
    require_columns(list(pairs.columns), ("template_id", "id_1", "id_2"), file="BTC pairs")
    wanted = pd.unique(np.concatenate([pairs["id_1"].to_numpy(dtype=object),
                                       pairs["id_2"].to_numpy(dtype=object)]))
    columns = ["id", "template_id", "text"]
    if isinstance(mutants, pd.DataFrame):
        require_columns(list(mutants.columns), columns, file="mutants")
        found = [mutants.loc[mutants["id"].isin(wanted), columns]]
    else:
        found = [read_parquet_rows(path, key="id", values=wanted.tolist(), columns=columns,
                                   what="Parquet mutants table") for path in mutants]
    table = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=columns)
    text = dict(zip(zip(table["template_id"].astype(str), table["id"].astype(str), strict=True),
                    table["text"], strict=True))
    out = pairs.copy()
    for k in ("1", "2"):
        keys = list(zip(out["template_id"].astype(str), out[f"id_{k}"].astype(str),
                        strict=True))
        missing = next((key for key in keys if key not in text), None)
        if missing is not None:
            raise DataError(f"mutant {missing[1]!r} of template {missing[0]!r} is not in the "
                            "mutants given (BTC pairs of other mutants?)", column=f"id_{k}")
        out[f"text_{k}"] = [text[key] for key in keys]
    return out


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


def write_btc(pairs: pd.DataFrame | Iterable[pa.Table], counts: pd.DataFrame,
              summary_rows: Sequence[dict], *, pairs_path: str | Path,
              counts_path: str | Path, summary_json: str | Path,
              summary_md: str | Path | None = None) -> None:
    """Write the BTC pairs (:func:`write_pairs`: a frame, or :func:`iter_btc_pairs`' tables
    streamed) and per-template counts (Parquet), the summary as JSON keyed by
    characteristic and, optionally, as a Markdown Table 4 — all or none (one atomic block).
    Summary rows may carry extra keys (the model, method and threshold, for
    :func:`write_table`)."""
    paths = [pairs_path, counts_path, summary_json] + ([summary_md] if summary_md else [])
    with atomic_outputs(*paths) as tmp:
        write_pairs(pairs, tmp[0])
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
            _check_summary_row(row, file=path, key=key)
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
