"""The classification metrics of every task × model × method on every scored set (the test
and validation splits and both fairness sets) as one table (JSON + Markdown) for results/.

The toxicity paper gives two sets of baseline AUCs (§4.2 and Tables 5-8) without naming the
data behind either, so every set a model scores is reported and each comparison picks one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from biasrepro.errors import DataError
from biasrepro.io import (
    atomic_outputs,
    dumps_json,
    markdown_table,
    read_parquet,
    require_columns,
    write_text,
)
from biasrepro.metrics.classification import classification_metrics

COLUMNS = ["task", "model", "method", "set", "n", "accuracy", "roc_auc", "f1",
           "positive_rate"]
#: the scored sets, in table order: file stem of ``results/predictions/...`` -> meaning
SETS = {
    "test": "the task's test split",
    "validation": "the task's validation split",
    "fairness-original": "the original fairness set (toxicity §5.1; sentiment: SST)",
    "fairness-balanced": "the balanced (perturbed) fairness set (toxicity §5.1)",
    "imdb-gendered-test": "IMDB-gendered's test split (toxicity paper, appendix)",
    "imdb-gendered-perturbed-test": "IMDB-gendered's test split with its counterfactuals "
                                    "(the appendix's perturbed-IMDB-gendered)",
}


def collect(paths: Sequence[Path]) -> list[dict]:
    """Accuracy, ROC-AUC and F1 of each ``results/predictions/TASK/MODEL/METHOD/SET.parquet``
    (its ``label`` and ``prob`` columns; SET one of :data:`SETS`), one row each, sorted by
    task, model, method and set."""
    rows = []
    for path in map(Path, paths):
        if len(path.parts) < 4:
            raise DataError("expected a path .../TASK/MODEL/METHOD/SET.parquet", file=path)
        task, model, method = path.parts[-4:-1]
        name = path.name.removesuffix(".parquet")
        if name not in SETS:
            raise DataError(f"unknown scored set {name!r} (known: {', '.join(SETS)})",
                            file=path)
        df = read_parquet(path, what="predictions file")
        require_columns(list(df.columns), ["label", "prob"], file=path)
        rows.append({"task": task, "model": model, "method": method, "set": name,
                     **classification_metrics(df["label"], df["prob"])})
    order = list(SETS)
    return sorted(rows, key=lambda r: (r["task"], r["model"], r["method"],
                                       order.index(r["set"])))


def write_metrics_table(paths: Sequence[Path], *, out_json: Path, out_md: Path) -> None:
    rows = collect(paths)
    sets = "\n".join(f"- `{k}`: {v}" for k, v in SETS.items() if any(r["set"] == k
                                                                       for r in rows))
    with atomic_outputs(out_json, out_md) as (tmp_json, tmp_md):
        write_text(dumps_json(rows), tmp_json)
        write_text("# Classification metrics per scored set\n\n" + sets + "\n\n"
                   + markdown_table(rows, COLUMNS), tmp_md)
