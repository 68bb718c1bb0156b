"""Civil Comments with identity labels, prepared as the toxicity paper §4.1 describes.

Input: one of three public routes to the data, each a ``fmt`` (:data:`FORMATS`), or a
generic CSV with the same columns (``csv``, or ``zip`` with a ``member``):

* ``tfds``: the TFDS archive ``civil_comments_v1.2.zip``, member ``civil_comments.csv``;
  its ``split`` column holds Kaggle's ``train``, ``test_public`` and ``test_private`` (TFDS
  names them train, validation and test);
* ``kaggle``: Kaggle's ``all_data.csv`` (``split``: ``train``/``test``) or ``train.csv``
  (no ``split`` column: every row is ``train``; toxicity in ``target``);
* ``wilds``: WILDS' ``all_data_with_identities.csv``, Kaggle's identity-annotated rows with
  a pandas index as first column and WILDS' own ``split`` (``train``/``val``/``test``; its
  validation and most of its test split are articles taken from Kaggle's train split).

The text is read from ``comment_text`` (or ``text``), the toxicity from ``toxicity`` (or
``target``); every configured identity column and ``id`` must be present; other columns are
ignored. ``settings["splits"]`` (``preprocess.civil_comments.splits``) keeps only the rows of
the listed source splits (``train``, ``validation``, ``test``); absent, ``null`` or ``all``
keeps every row. The toxicity paper's 400K identity-annotated rows (§4.1) are the size of
Kaggle's train split alone (TFDS ``CivilCommentsIdentities`` train: 405,130 rows; all three
splits: 448,000).

Steps, as in §4.1:

1. keep the rows whose identity labels come from human annotators:
   ``identity_annotator_count > 0`` when the column exists, otherwise rows where every
   configured identity column is filled (the TFDS ``CivilCommentsIdentities`` rule);
2. clean the text (:func:`biasrepro.data.text.clean_comments`) and drop rows left empty;
3. ``label = toxicity >= toxicity_threshold``; a row belongs to identity *g* when
   ``g >= identity_threshold``, and its ``signature`` joins those identities ("none" if none);
4. split 40/30/30 (``settings["split"]``), stratified by ``"{label}|{signature}"`` and seeded
   (:func:`biasrepro.data.split.stratified_split`; the planted-bias world states its ground
   truth with the same key).

Outputs in ``out_dir``: ``train.parquet``, ``validation.parquet``, ``test.parquet`` with
columns ``id`` (str), ``text`` (cleaned), ``text_raw``, ``toxicity`` (float64), ``label``
(int64), one float64 column per configured identity (NaN kept), ``identity_annotator_count``
(Int64, null when the source lacks it), ``signature`` (str), ``split`` (str);
``fairness_original.parquet``, the test rows that belong to exactly one configured identity,
with that identity in an extra column ``identity``; and ``identity_stats.json`` (rows read,
kept and dropped per reason; n, n_toxic and toxic ratio per split and identity, and for the
fairness subset; for the formats with a split column, ``source_splits``: the file's rows per
source split, the splits kept and the rows of the others, which ``rows_read`` leaves out).
"""

from __future__ import annotations

import logging
import time
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from biasrepro.data.split import stratified_split
from biasrepro.data.text import clean_comments
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    check_delimiter,
    check_range,
    check_text,
    check_unique,
    iter_records,
    member_name,
    numeric,
    open_input,
    reject_rows,
    require_columns,
    require_file,
    write_json,
    write_parquet,
)

log = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
TEXT_ALIASES = ("comment_text", "text")
TOXICITY_ALIASES = ("toxicity", "target")
ANNOTATORS = "identity_annotator_count"
SPLIT_COLUMN = "split"
#: source split names kept by ``preprocess.civil_comments.splits``
SOURCE_SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Format:
    """How one route to Civil Comments is read.

    ``archive``: read a ``member`` out of a zip (``default_member`` when none is given);
    ``splits``: the source's ``split`` values mapped to :data:`SOURCE_SPLITS` (``None``: the
    format has no known split column); ``split_optional``: a file without a ``split``
    column is all ``train`` (Kaggle ``train.csv``).
    """

    archive: bool
    splits: Mapping[str, str] | None = None
    split_optional: bool = False
    default_member: str | None = None


#: the routes to the data; headers: Kaggle's data page, TFDS ``civil_comments.py``
#: (which filters ``split`` on train/test_public/test_private), WILDS
#: ``augment_identities_and_split.py`` (Kaggle ``all_data.csv`` rows with
#: ``identity_annotator_count > 0``, aggregate columns added, written with its index)
FORMATS: dict[str, Format] = {
    "csv": Format(archive=False),
    "zip": Format(archive=True),
    "tfds": Format(archive=True, default_member="civil_comments.csv",
                   splits={"train": "train", "test_public": "validation",
                           "test_private": "test"}),
    "kaggle": Format(archive=False, splits={"train": "train", "test": "test"},
                     split_optional=True),
    "wilds": Format(archive=False, splits={"train": "train", "val": "validation",
                                           "test": "test"}),
}

Opener = Callable[[], IO[bytes]]


def prepare(
    path: Path,
    *,
    fmt: str,
    member: str | None,
    identities: list[str],
    settings: dict[str, Any],
    seed: int,
    out_dir: Path,
) -> None:
    """Read, filter, clean and split Civil Comments; write the Parquet files and stats.

    Reading happens inside the atomic block: on bad input nothing is written and an earlier
    run's outputs stay as they were.
    """
    start = time.perf_counter()
    path, out_dir = Path(path), Path(out_dir)
    names = [f"{s}.parquet" for s in SPLITS] + ["fairness_original.parquet",
                                                 "identity_stats.json"]
    with atomic_outputs(*(out_dir / n for n in names)) as tmp:
        raw, counted, file = _load(path, fmt, member, identities)
        raw, source = _select_splits(raw, file, fmt, settings.get("splits"))
        tables, fairness, stats = _build(raw, counted, file, identities, settings, seed)
        if source is not None:
            stats = {"source_splits": source, **stats}
        for s, p in zip(SPLITS, tmp[:3], strict=True):
            write_parquet(tables[s], p)
        write_parquet(fairness, tmp[3])
        write_json({"format": fmt, "member": member or FORMATS[fmt].default_member, **stats},
                   tmp[4])
    log.info("civil comments: %s; fairness subset %d rows; %.1f s",
             ", ".join(f"{s} {len(t)}" for s, t in tables.items()), len(fairness),
             time.perf_counter() - start)


def _load(path: Path, fmt: str, member: str | None,
          identities: Sequence[str]) -> tuple[pd.DataFrame, bool, str]:
    """The validated table, whether it counts identity annotators, and its name for messages."""
    start = time.perf_counter()
    spec = FORMATS.get(fmt)
    if spec is None:
        raise ConfigError(f"civil-comments --format must be one of {', '.join(FORMATS)}, "
                          f"got {fmt!r}")
    require_file(path)
    split_column = SPLIT_COLUMN if spec.splits is not None else None
    member = (member or spec.default_member) if spec.archive else member
    if spec.archive and not member:
        raise ConfigError(f"civil-comments format {fmt} needs --member (the CSV inside)")
    file = member_name(path, member)
    raw, counted = _read(lambda: open_input(path, member=member), file, identities,
                         split_column, spec.split_optional)
    log.info("read %d rows from %s in %.1f s", len(raw), file, time.perf_counter() - start)
    return raw, counted, file


def _select_splits(raw: pd.DataFrame, file: str, fmt: str,
                   keep: Sequence[str] | str | None) -> tuple[pd.DataFrame, dict | None]:
    """The rows of the source splits in ``keep``, and their counts (``None`` for a format
    without a split column and ``keep`` all).

    The source's split values are mapped to :data:`SOURCE_SPLITS`; an unknown value is refused
    with its row, as is a selection the format cannot make.
    """
    spec = FORMATS[fmt]
    every = keep is None or keep == "all"
    if not every:
        if isinstance(keep, str) or not keep:
            raise ConfigError("preprocess.civil_comments.splits: 'all' or a non-empty list "
                              f"of {', '.join(SOURCE_SPLITS)}, got {keep!r}")
        unknown = [s for s in keep if s not in SOURCE_SPLITS]
        if unknown:
            raise ConfigError(f"preprocess.civil_comments.splits: {unknown[0]!r} is not one "
                              f"of {', '.join(SOURCE_SPLITS)}")
        if spec.splits is None:
            raise ConfigError(f"preprocess.civil_comments.splits: format {fmt!r} has no known "
                              "split column; use tfds, kaggle or wilds, or keep 'all'")
    if spec.splits is None:
        return raw, None
    if SPLIT_COLUMN in raw:
        values = raw[SPLIT_COLUMN].fillna("").str.strip()
        known = values.isin(list(spec.splits))
        reject_rows(~known, raw[SPLIT_COLUMN], f"unknown {fmt} split value (expected one of "
                    f"{', '.join(spec.splits)})", file=file, column=SPLIT_COLUMN)
        source = values.map(spec.splits)
        raw = raw.drop(columns=SPLIT_COLUMN)
    else:
        source = pd.Series("train", index=raw.index)
    counts = {s: int((source == s).sum()) for s in SOURCE_SPLITS}
    kept = list(SOURCE_SPLITS) if every else [s for s in SOURCE_SPLITS if s in keep]
    mask = source.isin(kept)
    log.info("source splits %s: keeping %s (%d of %d rows)", counts, ", ".join(kept),
             int(mask.sum()), len(raw))
    if not mask.any():
        raise DataError(f"no row of the source split(s) {', '.join(kept)}", file=file,
                        column=SPLIT_COLUMN)
    stats = {"rows": counts, "kept": kept, "dropped": len(raw) - int(mask.sum())}
    return raw[mask].copy(), stats


def _build(
    raw: pd.DataFrame, counted: bool, file: str, identities: list[str],
    settings: dict[str, Any], seed: int,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, dict]:
    """The split tables, the fairness subset and the statistics (steps 1-4 above)."""
    annotated, rule = _human_annotated(raw, identities, counted, file)
    log.info("keeping rows with human identity labels (%s): %d of %d", rule, len(annotated),
             len(raw))
    if annotated.empty:
        raise DataError(f"no row has human identity labels (rule: {rule})",
                        file=file)
    annotated["text"] = clean_comments(annotated["text_raw"]).to_numpy()
    empty = annotated["text"] == ""
    kept = annotated[~empty].copy()

    toxicity_threshold = settings["toxicity_threshold"]
    identity_threshold = settings["identity_threshold"]
    kept["label"] = (kept["toxicity"] >= toxicity_threshold).astype("int64")
    kept["signature"] = _signatures(kept[identities] >= identity_threshold)
    kept["split"] = stratified_split(
        kept,
        strata=kept["label"].astype(str) + "|" + kept["signature"],
        fractions=settings["split"],
        seed=seed,
        order_by="id",
    )
    columns = ["id", "text", "text_raw", "toxicity", "label", *identities, ANNOTATORS,
               "signature", "split"]
    tables = {s: kept.loc[kept["split"] == s, columns].reset_index(drop=True) for s in SPLITS}
    hollow = [s for s in SPLITS if tables[s].empty]
    if hollow:
        raise DataError(f"{len(kept)} usable rows leave the {' and '.join(hollow)} split(s) "
                        f"empty (fractions {settings['split']}): the input is too small",
                        file=file)

    test = tables["test"]
    single = (test[identities] >= identity_threshold).sum(axis=1) == 1
    fairness = test[single].assign(identity=test.loc[single, "signature"]).reset_index(drop=True)

    stats = {
        "identity_label_rule": rule,
        "thresholds": {"identity": identity_threshold, "toxicity": toxicity_threshold},
        "rows_read": len(raw),
        "rows_kept": len(kept),
        "dropped": {
            "no_human_identity_labels": len(raw) - len(annotated),
            "empty_after_cleaning": int(empty.sum()),
        },
        "splits": {s: _group_stats(t, identities, identity_threshold)
                   for s, t in tables.items()},
        "fairness_original": _group_stats(fairness, identities, identity_threshold),
    }
    return tables, fairness, stats


def _read(opener: Opener, file: str, identities: Sequence[str], split_column: str | None = None,
          split_optional: bool = False) -> tuple[pd.DataFrame, bool]:
    """The needed columns of the CSV, validated, and whether it has identity_annotator_count.

    ``split_column`` is read too (as text) when given; it must be there unless
    ``split_optional``. The table's index holds the 1-based data row numbers.
    """
    with opener() as stream:
        header = next(iter_records(stream, file=file, delimiter=","), (0, []))[1]
    if not header:
        raise DataError("file is empty", file=file)
    check_delimiter(header, file=file, delimiter=",", row=None)
    text_col = next((c for c in TEXT_ALIASES if c in header), TEXT_ALIASES[0])
    tox_col = next((c for c in TOXICITY_ALIASES if c in header), TOXICITY_ALIASES[0])
    split = split_column if split_column and (split_column in header
                                              or not split_optional) else None
    require_columns(header, ["id", text_col, tox_col, *identities, *([split] if split else [])],
                    file=file)
    numbers = [tox_col, *identities, *([ANNOTATORS] if ANNOTATORS in header else [])]
    types = {"id": pa.string(), text_col: pa.string(), **{c: pa.float64() for c in numbers},
             **({split: pa.string()} if split else {})}
    try:
        with opener() as stream:
            table = pacsv.read_csv(
                stream,
                read_options=pacsv.ReadOptions(block_size=1 << 26),  # long comments
                parse_options=pacsv.ParseOptions(newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(include_columns=list(types),
                                                     column_types=types),
            )
    except pa.ArrowInvalid as e:
        _locate_parse_error(opener, file, header, numbers)
        raise DataError(f"cannot parse the CSV ({e})", file=file) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise DataError(f"truncated or corrupt compressed file ({e})", file=file) from None
    df = table.to_pandas()
    if df.empty:
        raise DataError("the file holds a header but no data rows", file=file)
    df = df.set_axis(pd.RangeIndex(1, len(df) + 1))
    df = df.rename(columns={text_col: "text_raw", tox_col: "toxicity"})
    return _validate(df, file, text_col, tox_col, identities), ANNOTATORS in header


def _locate_parse_error(opener: Opener, file: str, header: list[str],
                        numbers: Sequence[str]) -> None:
    """Rescan a CSV that Arrow refused, to name the row and column (Arrow's errors do not).

    Finds bytes that are not UTF-8, rows with the wrong number of fields, and cells of the
    numeric columns that are neither empty nor a number.
    """
    positions = [(header.index(c), c) for c in numbers]
    with opener() as stream:
        for row, fields in iter_records(stream, file=file, delimiter=","):
            if len(fields) != len(header):
                raise DataError(f"expected {len(header)} comma-separated fields, found "
                                f"{len(fields)}", file=file, row=row)
            for i, name in positions:
                if row and not _is_number_or_empty(fields[i]):
                    raise DataError(f"not a number (got {fields[i]!r})", file=file, row=row,
                                    column=name)


def _is_number_or_empty(value: str) -> bool:
    try:
        float(value or "nan")
    except ValueError:
        return value.strip() in pacsv.ConvertOptions().null_values
    return True


def _validate(df: pd.DataFrame, file: str, text_col: str, tox_col: str,
              identities: Sequence[str]) -> pd.DataFrame:
    """Refuse bad values (naming the source's column); give numbers their types."""
    ids = df["id"].str.strip()
    reject_rows(ids.isna() | (ids == ""), df["id"], "id is empty", file=file, column="id")
    df["id"] = ids
    check_unique(df["id"], file=file, column="id")
    check_text(df["text_raw"], file=file, column=text_col)
    df["toxicity"] = numeric(df["toxicity"], file=file, column=tox_col)
    check_range(df["toxicity"], 0, 1, file=file, column=tox_col, allow_missing=False)
    for name in identities:
        df[name] = numeric(df[name], file=file, column=name)
        check_range(df[name], 0, 1, file=file, column=name, allow_missing=True)
    if ANNOTATORS in df:
        count = numeric(df[ANNOTATORS], file=file, column=ANNOTATORS)
        reject_rows(count.notna() & ((count < 0) | (count % 1 != 0)), df[ANNOTATORS],
                    "must be a whole number >= 0", file=file, column=ANNOTATORS)
        df[ANNOTATORS] = count.astype("Int64")
    else:
        df[ANNOTATORS] = pd.array([pd.NA] * len(df), dtype="Int64")
    return df


def _human_annotated(df: pd.DataFrame, identities: Sequence[str], counted: bool,
                     file: str) -> tuple[pd.DataFrame, str]:
    """Rows whose identity labels come from human annotators, and the rule that chose them;
    an annotated row without a value for a configured identity is refused."""
    if counted:
        annotated = df[(df[ANNOTATORS] > 0).fillna(False)].copy()
        for name in identities:
            reject_rows(annotated[name].isna(), annotated[name], "identity value missing in a "
                        f"row with {ANNOTATORS} > 0", file=file, column=name)
        return annotated, f"{ANNOTATORS} > 0"
    rule = "every configured identity column filled (no identity_annotator_count column)"
    return df[df[list(identities)].notna().all(axis=1)].copy(), rule


def _signatures(members: pd.DataFrame) -> pd.Series:
    """``"+".join(sorted identities the row belongs to)``, or ``"none"``."""
    sig = pd.Series("", index=members.index, dtype=object)
    for name in sorted(members.columns):
        sig = sig + np.where(members[name].to_numpy(), "+" + name, "")
    return sig.str.lstrip("+").replace("", "none").astype(str)


def _group_stats(df: pd.DataFrame, identities: Sequence[str], threshold: float) -> dict:
    def counts(rows: pd.DataFrame) -> dict:
        n, toxic = len(rows), int(rows["label"].sum())
        return {"n": n, "n_toxic": toxic, "toxic_ratio": toxic / n if n else None}

    return {**counts(df),
            "identities": {g: counts(df[df[g] >= threshold]) for g in identities}}
