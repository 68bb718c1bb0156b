"""The test-set classification metrics of every task × model × method as one table (JSON +
Markdown) for results/."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from biasrepro.data.tables import read_parquet, require_columns
from biasrepro.errors import DataError
from biasrepro.io import atomic_outputs, dumps_json, markdown_table, write_text
from biasrepro.metrics.classification import classification_metrics

COLUMNS = ["task", "model", "method", "n", "accuracy", "roc_auc", "f1", "positive_rate"]


def collect(paths: Sequence[Path]) -> list[dict]:
    """Accuracy, ROC-AUC and F1 of each ``results/predictions/TASK/MODEL/METHOD/test.parquet``
    (its ``label`` and ``prob`` columns), one row each, sorted by task, model and method."""
    rows = []
    for path in map(Path, paths):
        if len(path.parts) < 4:
            raise DataError("expected a path .../TASK/MODEL/METHOD/test.parquet", file=path)
        task, model, method = path.parts[-4:-1]
        df = read_parquet(path, what="predictions file")
        require_columns(list(df.columns), ["label", "prob"], file=path)
        rows.append({"task": task, "model": model, "method": method,
                     **classification_metrics(df["label"], df["prob"])})
    return sorted(rows, key=lambda r: (r["task"], r["model"], r["method"]))


def write_metrics_table(paths: Sequence[Path], *, out_json: Path, out_md: Path) -> None:
    rows = collect(paths)
    with atomic_outputs(out_json, out_md) as (tmp_json, tmp_md):
        write_text(dumps_json(rows), tmp_json)
        write_text("# Test-set classification metrics\n\n" + markdown_table(rows, COLUMNS),
                   tmp_md)
