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

The file is read a block at a time (:data:`BLOCK_BYTES`), every cell as text, and only the
study's rows (kept source splits, human identity labels: about a quarter of Kaggle's two
million) are held and checked value by value. A fault in a row the study drops (a blank
comment, a toxicity that is not a number) is counted in ``identity_stats.json``'s
``dropped_rows_with``, not fatal; the same fault in a kept row is refused with its row and
column. Faults of the file itself (encoding, quoting, a row with the wrong number of
fields, an unknown split value) are refused wherever they are.
"""

from __future__ import annotations

import logging
import time
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
        study, read = _load(path, fmt, member, identities, settings.get("splits"))
        tables, fairness, stats = _build(study, read, identities, settings, seed)
        for s, p in zip(SPLITS, tmp[:3], strict=True):
            write_parquet(tables[s], p)
        write_parquet(fairness, tmp[3])
        write_json({"format": fmt, "member": member or FORMATS[fmt].default_member, **stats},
                   tmp[4])
    dropped = {**stats["dropped"], **{f"with {k}": v
                                       for k, v in stats["dropped_rows_with"].items()}}
    log.info("civil comments: kept %d of %d rows read (dropped: %s); %s; fairness subset %d "
             "rows; %.1f s", stats["rows_kept"], stats["rows_read"],
             ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in dropped.items() if n) or "none",
             ", ".join(f"{s} {len(t)}" for s, t in tables.items()), len(fairness),
             time.perf_counter() - start)


@dataclass
class _Read:
    """What the streaming read found besides the study's rows."""

    file: str
    counted: bool  # the file has identity_annotator_count
    rule: str  # how human identity labels are recognised
    rows_read: int = 0  # rows of the kept source splits
    not_annotated: int = 0  # of those, rows without human identity labels
    source: dict | None = None  # rows per source split, kept splits, rows of the others
    #: problems found in rows outside the study (counted, not refused)
    outside: dict = field(default_factory=dict)


def _load(path: Path, fmt: str, member: str | None, identities: Sequence[str],
          keep: Sequence[str] | str | None) -> tuple[pd.DataFrame, _Read]:
    """The study's rows (kept source splits, human identity labels), validated strictly,
    and the counts of every other row by reason."""
    start = time.perf_counter()
    spec = FORMATS.get(fmt)
    if spec is None:
        raise ConfigError(f"civil-comments --format must be one of {', '.join(FORMATS)}, "
                          f"got {fmt!r}")
    kept_splits = _kept_splits(spec, fmt, keep)
    require_file(path)
    split_column = SPLIT_COLUMN if spec.splits is not None else None
    member = (member or spec.default_member) if spec.archive else member
    if spec.archive and not member:
        raise ConfigError(f"civil-comments format {fmt} needs --member (the CSV inside)")
    file = member_name(path, member)
    study, read = _read(lambda: open_input(path, member=member), file, identities,
                        split_column, spec, kept_splits)
    log.info("read %d rows of %s in %.1f s: %d in the study", read.rows_read, file,
             time.perf_counter() - start, len(study))
    return study, read


def _kept_splits(spec: Format, fmt: str, keep: Sequence[str] | str | None) -> list[str]:
    """The source splits ``preprocess.civil_comments.splits`` keeps (all when ``keep`` is
    ``None`` or ``all``); a selection the format cannot make is refused."""
    if keep is None or keep == "all":
        return list(SOURCE_SPLITS)
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
    return [s for s in SOURCE_SPLITS if s in keep]


#: bytes per block of the streaming CSV read (a block holds whole records; long comments fit)
BLOCK_BYTES = 1 << 26


def _read(opener: Opener, file: str, identities: Sequence[str], split_column: str | None,
          spec: Format, kept_splits: Sequence[str]) -> tuple[pd.DataFrame, _Read]:
    """The study's rows of the CSV, read a block at a time, and what the rest held.

    Every cell is read as text. A row belongs to the study when it is in a kept source
    split and has human identity labels; only those rows are checked value by value
    (:func:`_validate`), so a blank comment or a stray value in one of the ~1.5 M rows the
    study drops is counted in ``outside``, not fatal. File-level faults (encoding, quoting,
    field counts) and unknown split values are refused wherever they are. The index holds
    the 1-based data row numbers.
    """
    with opener() as stream:
        header = next(iter_records(stream, file=file, delimiter=","), (0, []))[1]
    if not header:
        raise DataError("file is empty", file=file)
    check_delimiter(header, file=file, delimiter=",", row=None)
    text_col = next((c for c in TEXT_ALIASES if c in header), TEXT_ALIASES[0])
    tox_col = next((c for c in TOXICITY_ALIASES if c in header), TOXICITY_ALIASES[0])
    split = split_column if split_column and (split_column in header
                                              or not spec.split_optional) else None
    require_columns(header, ["id", text_col, tox_col, *identities, *([split] if split else [])],
                    file=file)
    counted = ANNOTATORS in header
    columns = ["id", text_col, tox_col, *identities, *([ANNOTATORS] if counted else []),
               *([split] if split else [])]
    read = _Read(file=file, counted=counted, rule=(
        f"{ANNOTATORS} > 0" if counted else
        "every configured identity column filled (no identity_annotator_count column)"))
    source_counts = dict.fromkeys(SOURCE_SPLITS, 0)
    parts, row = [], 0
    try:
        with opener() as stream:
            reader = pacsv.open_csv(
                stream,
                read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES),
                parse_options=pacsv.ParseOptions(newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(
                    include_columns=columns, column_types=dict.fromkeys(columns, pa.string()),
                    strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
            for batch in reader:
                df = batch.to_pandas().set_axis(pd.RangeIndex(row + 1, row + 1 + batch.num_rows))
                row += batch.num_rows
                in_split = pd.Series(True, index=df.index)
                if spec.splits is not None:
                    source = _source_split(df, split, spec, file)
                    for s in SOURCE_SPLITS:
                        source_counts[s] += int((source == s).sum())
                    in_split = source.isin(kept_splits)
                annotated = _annotated(df, identities, counted, file) & in_split
                read.rows_read += int(in_split.sum())
                read.not_annotated += int((in_split & ~annotated).sum())
                _count_outside(df[~annotated], text_col, tox_col, read.outside)
                parts.append(df[annotated])
    except pa.ArrowInvalid as e:
        _locate_parse_error(opener, file, header)
        raise DataError(f"cannot parse the CSV ({e})", file=file) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise DataError(f"truncated or corrupt compressed file ({e})", file=file) from None
    if row == 0:
        raise DataError("the file holds a header but no data rows", file=file)
    if spec.splits is not None:
        others = sum(source_counts.values()) - read.rows_read
        read.source = {"rows": source_counts, "kept": list(kept_splits), "dropped": others}
        log.info("source splits %s: keeping %s (%d of %d rows)", source_counts,
                 ", ".join(kept_splits), read.rows_read, row)
        if read.rows_read == 0:
            raise DataError(f"no row of the source split(s) {', '.join(kept_splits)}",
                            file=file, column=SPLIT_COLUMN)
    study = pd.concat(parts) if parts else pd.DataFrame(columns=columns)
    study = study.rename(columns={text_col: "text_raw", tox_col: "toxicity"})
    if split:
        study = study.drop(columns=split)
    if study.empty:
        raise DataError(f"no row has human identity labels (rule: {read.rule})", file=file)
    return _validate(study, file, text_col, tox_col, identities, counted), read


def _source_split(df: pd.DataFrame, split: str | None, spec: Format,
                  file: str) -> pd.Series:
    """Each row's source split (:data:`SOURCE_SPLITS`); an unknown value is refused."""
    if split is None:  # Kaggle train.csv: every row is train
        return pd.Series("train", index=df.index)
    values = df[split].str.strip()
    known = values.isin(list(spec.splits))
    reject_rows(~known, df[split], "unknown split value (expected one of "
                f"{', '.join(spec.splits)})", file=file, column=split)
    return values.map(spec.splits)


def _annotated(df: pd.DataFrame, identities: Sequence[str], counted: bool,
               file: str) -> pd.Series:
    """Rows whose identity labels come from human annotators: ``identity_annotator_count
    > 0`` (a count that is not a whole number >= 0 is refused, as it decides this), else
    every configured identity cell filled."""
    if counted:
        text = df[ANNOTATORS].str.strip()
        count = pd.to_numeric(text.replace("", np.nan), errors="coerce")
        bad = (text != "") & (count.isna() | (count < 0) | (count % 1 != 0))
        reject_rows(bad, df[ANNOTATORS], "must be a whole number >= 0", file=file,
                    column=ANNOTATORS)
        return (count > 0).fillna(False)
    return (df[list(identities)].apply(lambda c: c.str.strip() != "")).all(axis=1)


def _count_outside(df: pd.DataFrame, text_col: str, tox_col: str, out: dict) -> None:
    """Tally problems in rows outside the study: the study would refuse them, a row it
    drops is only counted (``identity_stats.json``, ``dropped_rows_with``)."""
    if df.empty:
        return
    checks = {"empty_id": df["id"].str.strip() == "",
              "empty_text": df[text_col].str.strip() == "",
              "toxicity_not_a_number": pd.to_numeric(
                  df[tox_col].str.strip().replace("", np.nan), errors="coerce").isna()}
    for name, mask in checks.items():
        if n := int(mask.sum()):
            out[name] = out.get(name, 0) + n


def _build(
    annotated: pd.DataFrame, read: _Read, identities: list[str],
    settings: dict[str, Any], seed: int,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, dict]:
    """The split tables, the fairness subset and the statistics (steps 2-4 above) from the
    study's rows (step 1, :func:`_read`)."""
    file, rule = read.file, read.rule
    log.info("keeping rows with human identity labels (%s): %d of %d", rule, len(annotated),
             read.rows_read)
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
        "rows_read": read.rows_read,
        "rows_kept": len(kept),
        "dropped": {
            "no_human_identity_labels": read.not_annotated,
            "empty_after_cleaning": int(empty.sum()),
        },
        "dropped_rows_with": dict(sorted(read.outside.items())),
        "splits": {s: _group_stats(t, identities, identity_threshold)
                   for s, t in tables.items()},
        "fairness_original": _group_stats(fairness, identities, identity_threshold),
    }
    if read.source is not None:
        stats = {"source_splits": read.source, **stats}
    return tables, fairness, stats


def _locate_parse_error(opener: Opener, file: str, header: list[str]) -> None:
    """Rescan a CSV that Arrow refused, to name the row and column (Arrow's errors do not):
    bytes that are not UTF-8, NULs, and rows with the wrong number of fields."""
    with opener() as stream:
        for row, fields in iter_records(stream, file=file, delimiter=","):
            if len(fields) != len(header):
                raise DataError(f"expected {len(header)} comma-separated fields, found "
                                f"{len(fields)}", file=file, row=row)


def _validate(df: pd.DataFrame, file: str, text_col: str, tox_col: str,
              identities: Sequence[str], counted: bool) -> pd.DataFrame:
    """The study's rows, checked strictly (naming the source's column), with their types:
    a non-empty unique id, text, a toxicity in [0, 1], every configured identity in [0, 1]
    (missing only where no annotator count says the row was annotated)."""
    ids = df["id"].str.strip()
    reject_rows(ids == "", df["id"], "id is empty", file=file, column="id")
    df["id"] = ids
    check_unique(df["id"], file=file, column="id")
    check_text(df["text_raw"], file=file, column=text_col)
    df["toxicity"] = numeric(df["toxicity"].str.strip(), file=file, column=tox_col)
    check_range(df["toxicity"], 0, 1, file=file, column=tox_col, allow_missing=False)
    for name in identities:
        df[name] = numeric(df[name].str.strip(), file=file, column=name)
        check_range(df[name], 0, 1, file=file, column=name, allow_missing=True)
        if counted:
            reject_rows(df[name].isna(), df[name], "identity value missing in a row with "
                        f"{ANNOTATORS} > 0", file=file, column=name)
    if counted:
        df[ANNOTATORS] = pd.to_numeric(df[ANNOTATORS].str.strip()).astype("Int64")
    else:
        df[ANNOTATORS] = pd.array([pd.NA] * len(df), dtype="Int64")
    return df


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
