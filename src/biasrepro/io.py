"""Atomic, deterministic output writing.

Every file the harness produces is written to a temporary sibling and renamed into place
only when the whole step has succeeded (DESIGN.md, "Conventions"), so a killed or failed
step never leaves a file that looks complete. Writers are deterministic: the same data
gives the same bytes (sorted JSON keys, no timestamps, fixed Parquet settings).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from biasrepro.errors import DataError


@contextmanager
def atomic_outputs(*paths: str | Path) -> Iterator[list[Path]]:
    """Yield temporary paths for ``paths``; rename them all into place on success.

    On any exception the temporary files are removed, and so are stale files at the final
    paths (an earlier run's output must not pass for this run's), then the exception
    propagates.
    """
    finals = [Path(p) for p in paths]
    temps = [f.with_name(f".{f.name}.tmp-{os.getpid()}") for f in finals]
    for f in finals:
        f.parent.mkdir(parents=True, exist_ok=True)
        for stale in f.parent.glob(f".{f.name}.tmp-*"):
            stale.unlink(missing_ok=True)
    try:
        yield temps
        missing = [str(f) for f, t in zip(finals, temps, strict=True) if not t.exists()]
        if missing:
            raise RuntimeError(f"step finished without writing: {', '.join(missing)}")
    except BaseException:
        for p in [*temps, *finals]:
            p.unlink(missing_ok=True)
        raise
    for f, t in zip(finals, temps, strict=True):
        os.replace(t, f)


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` (index dropped) as zstd Parquet with fixed, reproducible settings."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table, path, compression="zstd", row_group_size=1 << 20)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):  # numpy scalar
        return _finite(obj.item())
    return obj


def dumps_json(obj: Any) -> str:
    """Canonical JSON text: sorted keys, 2-space indent, NaN/inf as null, newline at end."""
    return json.dumps(_finite(obj), sort_keys=True, indent=2, allow_nan=False) + "\n"


def write_json(obj: Any, path: str | Path) -> None:
    Path(path).write_text(dumps_json(obj), encoding="utf-8")


def write_text(text: str, path: str | Path) -> None:
    Path(path).write_text(text, encoding="utf-8")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` restricted to ``columns``."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4f}"
        return "" if v is None else str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def read_json(path: str | Path) -> Any:
    """Parse the JSON file ``path``; a missing file or bad JSON is a :class:`DataError`."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError("file not found", file=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"not valid JSON ({e})", file=path) from None


def read_csv(path: str | Path, columns: Sequence[str] = ()) -> pd.DataFrame:
    """Read the CSV table ``path``, which must have ``columns``, or raise a DataError."""
    try:
        df = pd.read_csv(path)
    except FileNotFoundError:
        raise DataError("file not found", file=path) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise DataError(f"not a readable CSV table ({e})", file=path) from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataError(f"missing column(s) {', '.join(missing)}", file=path)
    return df
