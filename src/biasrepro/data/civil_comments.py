"""Civil Comments with identity labels, prepared as the toxicity paper §4.1 describes.

Input: a CSV with the Kaggle "Jigsaw Unintended Bias" columns (``all_data.csv``,
``train.csv``), the WILDS CSV or the TFDS ``civil_comments.csv``, given as a file
(``fmt="csv"``) or read straight out of a zip archive (``fmt="zip"``, e.g. the TFDS
``civil_comments_v1.2.zip`` with member ``civil_comments.csv``). The text is read from
``comment_text`` (or ``text``), the toxicity from ``toxicity`` (or ``target``, Kaggle
``train.csv``); every configured identity column and ``id`` must be present.

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
fairness subset).
"""

from __future__ import annotations

import logging
import time
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from biasrepro.data.split import stratified_split
from biasrepro.data.tables import (
    check_delimiter,
    check_range,
    check_text,
    check_unique,
    iter_records,
    numeric,
    reject_rows,
    require_columns,
    require_file,
)
from biasrepro.data.text import clean_comments
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import atomic_outputs, write_json, write_parquet

log = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
TEXT_ALIASES = ("comment_text", "text")
TOXICITY_ALIASES = ("toxicity", "target")
ANNOTATORS = "identity_annotator_count"

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

    Reading happens inside the atomic block, so bad input also removes an earlier run's
    outputs: nothing is left that could pass for this run's.
    """
    start = time.perf_counter()
    path, out_dir = Path(path), Path(out_dir)
    names = [f"{s}.parquet" for s in SPLITS] + ["fairness_original.parquet",
                                                 "identity_stats.json"]
    with atomic_outputs(*(out_dir / n for n in names)) as tmp:
        raw, counted, file = _load(path, fmt, member, identities)
        tables, fairness, stats = _build(raw, counted, file, identities, settings, seed)
        for s, p in zip(SPLITS, tmp[:3], strict=True):
            write_parquet(tables[s], p)
        write_parquet(fairness, tmp[3])
        write_json({"format": fmt, "member": member, **stats}, tmp[4])
    log.info("civil comments: %s; fairness subset %d rows; %.1f s",
             ", ".join(f"{s} {len(t)}" for s, t in tables.items()), len(fairness),
             time.perf_counter() - start)


def _load(path: Path, fmt: str, member: str | None,
          identities: Sequence[str]) -> tuple[pd.DataFrame, bool, str]:
    """The validated table, whether it counts identity annotators, and its name for messages."""
    start = time.perf_counter()
    require_file(path)
    if fmt == "csv":
        file = str(path)
        raw, counted = _read(lambda: open(path, "rb"), file, identities)
    elif fmt == "zip":
        if not member:
            raise ConfigError("civil-comments format zip needs --member (the CSV inside)")
        file = f"{path}:{member}"
        with _open_zip(path, member) as archive:
            raw, counted = _read(lambda: archive.open(member), file, identities)
    else:
        raise ConfigError(f"civil-comments --format must be csv or zip, got {fmt!r}")
    log.info("read %d rows from %s in %.1f s", len(raw), file, time.perf_counter() - start)
    return raw, counted, file


def _build(
    raw: pd.DataFrame, counted: bool, file: str, identities: list[str],
    settings: dict[str, Any], seed: int,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, dict]:
    """The split tables, the fairness subset and the statistics (steps 1-4 above)."""
    annotated, rule = _human_annotated(raw, identities, counted)
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


def _open_zip(path: Path, member: str) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise DataError(f"truncated or corrupt zip archive ({e})", file=path) from None
    if member not in archive.namelist():
        listed = ", ".join(archive.namelist()[:10])
        archive.close()
        raise DataError(f"the archive has no member {member!r}; members: {listed}", file=path)
    return archive


def _read(opener: Opener, file: str, identities: Sequence[str]) -> tuple[pd.DataFrame, bool]:
    """The needed columns of the CSV, validated, and whether it has identity_annotator_count.

    The table's index holds the 1-based data row numbers.
    """
    try:
        with opener() as stream:
            header = next(iter_records(stream, file=file, delimiter=","), (0, []))[1]
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        raise DataError(f"truncated or corrupt zip archive ({e})", file=file) from None
    if not header:
        raise DataError("file is empty", file=file)
    check_delimiter(header, file=file, delimiter=",", row=None)
    text_col = next((c for c in TEXT_ALIASES if c in header), TEXT_ALIASES[0])
    tox_col = next((c for c in TOXICITY_ALIASES if c in header), TOXICITY_ALIASES[0])
    require_columns(header, ["id", text_col, tox_col, *identities], file=file)
    numbers = [tox_col, *identities, *([ANNOTATORS] if ANNOTATORS in header else [])]
    types = {"id": pa.string(), text_col: pa.string(), **{c: pa.float64() for c in numbers}}
    try:
        with opener() as stream:
            table = pacsv.read_csv(
                stream,
                parse_options=pacsv.ParseOptions(newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(include_columns=list(types),
                                                     column_types=types),
            )
    except pa.ArrowInvalid as e:
        _locate_parse_error(opener, file, header, numbers)
        raise DataError(f"cannot parse the CSV ({e})", file=file) from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        raise DataError(f"truncated or corrupt zip archive ({e})", file=file) from None
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


def _human_annotated(df: pd.DataFrame, identities: Sequence[str],
                     counted: bool) -> tuple[pd.DataFrame, str]:
    """Rows whose identity labels come from human annotators, and the rule that chose them."""
    if counted:
        return df[(df[ANNOTATORS] > 0).fillna(False)].copy(), f"{ANNOTATORS} > 0"
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
