"""Collect per-run metric files into one table (JSON + Markdown) for results/."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from biasrepro.errors import DataError
from biasrepro.io import atomic_outputs, dumps_json, markdown_table, write_text

COLUMNS = ["task", "model", "method", "n", "accuracy", "roc_auc", "f1", "positive_rate"]


def collect(paths: Sequence[Path]) -> list[dict]:
    """One row per ``results/metrics/TASK/MODEL/METHOD/test.json``, sorted by those keys."""
    rows = []
    for path in map(Path, paths):
        if len(path.parts) < 4:
            raise DataError("expected a path .../TASK/MODEL/METHOD/test.json", file=path)
        task, model, method = path.parts[-4:-1]
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise DataError(f"cannot read metrics ({e})", file=path) from None
        rows.append({"task": task, "model": model, "method": method, **metrics})
    return sorted(rows, key=lambda r: (r["task"], r["model"], r["method"]))


def write_metrics_table(paths: Sequence[Path], *, out_json: Path, out_md: Path) -> None:
    rows = collect(paths)
    with atomic_outputs(out_json, out_md) as (tmp_json, tmp_md):
        write_text(dumps_json(rows), tmp_json)
        write_text("# Test-set classification metrics\n\n" + markdown_table(rows, COLUMNS),
                   tmp_md)
