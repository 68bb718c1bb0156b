"""Reading raw delimited files and rejecting bad input, shared by the dataset loaders.

Every problem becomes one :class:`~biasrepro.errors.DataError` that names the file, the
1-based data row (the header is not counted) and the column. Tables handed to the checks
below carry those row numbers as their index, so a row keeps its number after filtering.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import pandas as pd
import pyarrow as pa

from biasrepro.errors import DataError

DELIMITER_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}
# bytes that are not UTF-8 decode (with errors="surrogateescape") to lone surrogates
_UNDECODABLE = re.compile("[\udc80-\udcff]")


def require_file(path: Path) -> None:
    """Refuse a missing or zero-byte input file."""
    if not path.is_file():
        raise DataError("input file not found", file=path)
    if path.stat().st_size == 0:
        raise DataError("file is empty", file=path)


def read_parquet(path: str | Path, *, what: str = "Parquet file") -> pd.DataFrame:
    """A Parquet file as a frame; a missing, empty or unreadable file is a DataError
    naming it (``what`` says what the file should have been)."""
    path = Path(path)
    require_file(path)
    try:
        return pd.read_parquet(path)
    except (pa.ArrowException, OSError, ValueError) as e:  # ArrowInvalid is a ValueError
        raise DataError(f"not a readable {what} ({e})", file=path) from None


def iter_records(
    stream: IO[bytes],
    *,
    file: str | Path,
    delimiter: str,
    columns: Sequence[str] | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(row, fields)`` for each record of a delimited byte stream (csv quoting rules).

    With ``columns=None`` the first record is the header and is yielded as row 0; otherwise
    the file is headerless and ``columns`` names its fields. Bytes that are not UTF-8 raise
    a DataError naming the row and column they are in.
    """
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="surrogateescape", newline="")
    reader = csv.reader(text, delimiter=delimiter, strict=True)
    names = list(columns) if columns is not None else None
    row = 0 if columns is None else 1
    try:
        for fields in reader:
            for i, value in enumerate(fields):
                if not _UNDECODABLE.search(value):
                    continue
                if names is None:
                    raise DataError("the header is not valid UTF-8 text", file=file,
                                    column=f"field {i + 1}")
                column = names[i] if i < len(names) else f"field {i + 1}"
                raise DataError("not valid UTF-8 text", file=file, row=row, column=column)
            if names is None:
                names = fields
            yield row, fields
            row += 1
    except csv.Error as e:
        raise DataError(f"malformed delimited text ({e})", file=file, row=row) from None


def check_delimiter(first: Sequence[str], *, file: str | Path, delimiter: str,
                    row: int | None) -> None:
    """A first record that did not split at all was probably written with another delimiter."""
    if len(first) != 1:
        return
    expected = DELIMITER_NAMES[delimiter]
    for other, name in DELIMITER_NAMES.items():
        if other != delimiter and other in first[0]:
            what = "the header" if row is None else "this row"
            raise DataError(
                f"expected {expected}-separated values, but {what} looks {name}-separated",
                file=file, row=row,
            )


def require_columns(found: Sequence[str], required: Sequence[str], *,
                    file: str | Path) -> None:
    """Refuse a table that lacks a required column, naming it and listing what is there."""
    for name in required:
        if name not in found:
            listed = ", ".join(repr(c) for c in found)
            raise DataError(f"missing required column; columns found: {listed}",
                            file=file, column=name)


def reject_rows(bad: pd.Series, values: pd.Series, message: str, *, file: str | Path,
                column: str) -> None:
    """Raise DataError at the first row where ``bad`` holds (index = 1-based row numbers)."""
    if bad.any():
        row = bad.idxmax()
        value = values.loc[row]
        value = value.item() if hasattr(value, "item") else value  # numpy scalar -> Python
        raise DataError(f"{message} (got {value!r})", file=file, row=row, column=column)


def check_text(values: pd.Series, *, file: str | Path, column: str) -> None:
    """Refuse missing or blank text."""
    blank = values.isna() | (values.astype(str).str.strip() == "")
    reject_rows(blank, values, "text is empty", file=file, column=column)


def check_unique(values: pd.Series, *, file: str | Path, column: str) -> None:
    """Refuse a repeated id, naming the row of its second occurrence and of its first."""
    dup = values.duplicated(keep="first")
    if dup.any():
        row = dup.idxmax()
        first = values.index[values == values.loc[row]][0]
        raise DataError(f"duplicate id {values.loc[row]!r} (first seen at row {first})",
                        file=file, row=row, column=column)


def numeric(values: pd.Series, *, file: str | Path, column: str) -> pd.Series:
    """``values`` as float64; empty cells become NaN, anything else unparsable is refused."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.astype("float64")
    out = pd.to_numeric(values, errors="coerce").astype("float64")
    given = values.notna() & (values.astype(str).str.strip() != "")
    reject_rows(given & out.isna(), values, "not a number", file=file, column=column)
    return out


def check_range(values: pd.Series, low: float, high: float, *, file: str | Path,
                column: str, allow_missing: bool) -> None:
    """Refuse values outside ``[low, high]`` (and missing ones unless ``allow_missing``)."""
    bad = (values < low) | (values > high)
    if not allow_missing:
        bad |= values.isna()
    reject_rows(bad, values, f"value outside [{low:g}, {high:g}]", file=file, column=column)


def check_fractions(frame: pd.DataFrame, columns: Sequence[str], *,
                    file: str | Path | None = None) -> None:
    """Identity columns hold rater fractions: numbers in [0, 1], or missing (positional rows)."""
    for column in columns:
        values = frame[column].reset_index(drop=True)
        values.index += 1
        values = numeric(values, file=file, column=column)
        check_range(values, 0, 1, file=file, column=column, allow_missing=True)
