"""IMDB reviews (Maas et al. 2011) as BiasFinder uses them, cleaned and in the official split.

Raw formats (``fmt``):

* ``aclimdb_tar``: the Stanford ``aclImdb_v1.tar.gz``; reviews are the members
  ``aclImdb/{train,test}/{pos,neg}/<n>_<rating>.txt`` (``unsup/`` and the other files are
  ignored); id ``"{split}/{pos|neg}/{n}_{rating}"``.
* ``hf_parquet``: the Hugging Face ``stanfordnlp/imdb`` Parquet files (columns ``text`` and
  ``label`` ∈ {0, 1}), one per split; the planted-bias world writes this format too.
* ``tsv``: BiasFinder's headerless ``label<TAB>text`` files (1 = positive), one per split.

For the two per-split formats the id is ``"{split}-{row:05d}"`` with ``row`` the 0-based
row of the file. Output, in ``out_dir``:

* ``train.parquet``, ``test.parquet``: ``id`` (str), ``text`` (str, cleaned by
  :func:`biasrepro.data.text.clean_review`: HTML tags become a space, entities decoded),
  ``label`` (int64, 1 = positive), ``rating`` (Int64, the star rating; aclImdb only, else
  null), ``split`` (str). The 25k/25k split is kept as published (BiasFinder §4).
* ``stats.json``: per split, rows per label, how many raw texts had HTML tags or entities,
  and how many rows repeat an earlier row's cleaned text (counted, kept: BiasFinder's
  counts include them).
"""

from __future__ import annotations

import logging
import re
import tarfile
import time
import zlib
from pathlib import Path

import pandas as pd

from biasrepro.data.text import HTML_ENTITY, HTML_TAG, clean_review
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    check_text,
    labels,
    read_table,
    reject_rows,
    require_file,
    write_json,
    write_parquet,
)

log = logging.getLogger(__name__)

SPLITS = ("train", "test")
FORMATS = ("aclimdb_tar", "hf_parquet", "tsv")
_MEMBER = re.compile(r"aclImdb/(train|test)/(pos|neg)/([0-9]+)_([0-9]+)\.txt")


def prepare(inputs: Path | dict[str, Path], *, fmt: str, out_dir: Path) -> None:
    """Read raw IMDB in ``fmt``, clean it, and write the split Parquet files and stats.

    Reading happens inside the atomic block: on bad input nothing is written and an earlier
    run's outputs stay as they were.
    """
    start = time.perf_counter()
    out_dir = Path(out_dir)
    paths = [out_dir / f"{split}.parquet" for split in SPLITS] + [out_dir / "stats.json"]
    with atomic_outputs(*paths) as tmp:
        tables, stats = {}, {"format": fmt, "splits": {}}
        for split, (df, file) in _read(inputs, fmt).items():
            tables[split], stats["splits"][split] = _clean(df, split, file)
        for split, path in zip(SPLITS, tmp[:-1], strict=True):
            write_parquet(tables[split], path)
        write_json(stats, tmp[-1])
    for split in SPLITS:
        log.info("imdb %s: %d reviews -> %s", split, len(tables[split]),
                 out_dir / f"{split}.parquet")
    log.info("imdb prepared in %.1f s", time.perf_counter() - start)


def _read(inputs: Path | dict[str, Path], fmt: str) -> dict[str, tuple[pd.DataFrame, Path]]:
    """Per split: the raw table (index = row numbers or member names) and its file."""
    if fmt == "aclimdb_tar":
        if not isinstance(inputs, Path):
            raise ConfigError("imdb format aclimdb_tar takes one --input: the .tar.gz file")
        return _read_aclimdb_tar(inputs)
    if fmt in ("hf_parquet", "tsv"):
        if not isinstance(inputs, dict) or set(inputs) != set(SPLITS):
            raise ConfigError(f"imdb format {fmt} takes --input train=PATH test=PATH")
        read = _read_hf_parquet if fmt == "hf_parquet" else _read_tsv
        return {split: read(Path(inputs[split]), split) for split in SPLITS}
    raise ConfigError(f"imdb --format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _clean(df: pd.DataFrame, split: str, file: Path) -> tuple[pd.DataFrame, dict]:
    """Clean the texts of one split; return the output table and the split's statistics."""
    text = df["text"].map(clean_review)
    reject_rows(text == "", df["text"], "text is empty once HTML tags are removed",
                file=file, column="text")
    out = pd.DataFrame({
        "id": df["id"].astype(str),
        "text": text.astype(str),
        "label": df["label"].astype("int64"),
        "rating": df["rating"].astype("Int64"),
        "split": split,
    }).reset_index(drop=True)
    stats = {
        "rows": len(out),
        "labels": {str(k): int(v) for k, v in out["label"].value_counts().sort_index().items()},
        "html_tags": int(df["text"].map(lambda t: bool(HTML_TAG.search(t))).sum()),
        "html_entities": int(df["text"].map(lambda t: bool(HTML_ENTITY.search(t))).sum()),
        "duplicate_texts": int(out["text"].duplicated().sum()),
    }
    return out, stats


def _read_aclimdb_tar(path: Path) -> dict[str, tuple[pd.DataFrame, Path]]:
    """The labelled reviews of the Stanford tarball, streamed (never extracted to disk)."""
    require_file(path)
    rows: dict[str, list[dict]] = {split: [] for split in SPLITS}
    seen: set[str] = set()
    member = None
    try:
        with tarfile.open(path, mode="r|gz") as tar:
            for member in tar:
                match = _MEMBER.fullmatch(member.name)
                if not (match and member.isfile()):
                    continue
                split, polarity, number, rating = match.groups()
                review_id = f"{split}/{polarity}/{number}_{rating}"
                if review_id in seen:
                    raise DataError("duplicate id: the archive holds this member twice",
                                    file=path, row=member.name, column="id")
                seen.add(review_id)
                if not 1 <= int(rating) <= 10:
                    raise DataError(f"rating {rating} is outside 1..10", file=path,
                                    row=member.name, column="rating")
                try:
                    text = tar.extractfile(member).read().decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DataError(f"not valid UTF-8 text (byte {e.start})", file=path,
                                    row=member.name, column="text") from None
                rows[split].append({
                    "key": (polarity, int(number)), "id": review_id, "text": text,
                    "label": int(polarity == "pos"), "rating": int(rating), "row": member.name,
                })
    except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
        where = f"while reading {member.name}" if member is not None else "at its start"
        raise DataError(f"truncated or corrupt tar.gz archive, failed {where}: {e}",
                        file=path) from None
    out = {}
    for split in SPLITS:
        if not rows[split]:
            raise DataError(f"the archive holds no reviews aclImdb/{split}/{{pos,neg}}/"
                            "<n>_<rating>.txt", file=path)
        df = pd.DataFrame(sorted(rows[split], key=lambda r: r["key"])).set_index("row")
        check_text(df["text"], file=path, column="text")
        out[split] = (df, path)
    return out


def _read_hf_parquet(path: Path, split: str) -> tuple[pd.DataFrame, Path]:
    """One Hugging Face split file: columns ``text`` and ``label`` ∈ {0, 1}."""
    df = read_table(path, required=["text", "label"], what="IMDB split")
    return _with_ids(df, split, path), path


def _read_tsv(path: Path, split: str) -> tuple[pd.DataFrame, Path]:
    """One BiasFinder file: headerless ``label<TAB>text``, label 1 = positive (plain, gzip
    or zip; blank lines skipped)."""
    df = read_table(path, delimiter="\t", columns=("label", "text"), what="IMDB split")
    return _with_ids(df, split, path), path


def _with_ids(df: pd.DataFrame, split: str, path: Path) -> pd.DataFrame:
    """Validate a per-split table and give it ids ``{split}-{row:05d}`` (0-based row of the
    table, blank lines not counted)."""
    check_text(df["text"], file=path, column="text")
    label = labels(df["label"], file=path, column="label")
    return pd.DataFrame({
        "id": [f"{split}-{i:05d}" for i in range(len(df))],
        "text": df["text"].to_numpy(),
        "label": label.to_numpy(),
        "rating": pd.array([pd.NA] * len(df), dtype="Int64"),
    }, index=df.index)
