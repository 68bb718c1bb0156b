"""Per-run metric files are gathered into one sorted table; unreadable files are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biasrepro.errors import DataError
from biasrepro.metrics.tables import write_metrics_table


def _metrics(root: Path, task: str, model: str, acc: float) -> Path:
    path = root / task / model / "baseline" / "test.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"n": 10, "accuracy": acc, "roc_auc": 0.9, "f1": 0.8,
                                "positive_rate": 0.5, "threshold": 0.5}))
    return path


def test_table_rows_sorted_and_complete(tmp_path: Path) -> None:
    paths = [_metrics(tmp_path, "toxicity", "b", 0.7), _metrics(tmp_path, "sentiment", "a", 0.6)]
    write_metrics_table(paths, out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")
    rows = json.loads((tmp_path / "m.json").read_text())
    assert [(r["task"], r["model"], r["accuracy"]) for r in rows] == [
        ("sentiment", "a", 0.6), ("toxicity", "b", 0.7)]
    assert "| sentiment | a | baseline | 10 | 0.6000 |" in (tmp_path / "m.md").read_text()


def test_unreadable_metrics_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "toxicity" / "m" / "baseline" / "test.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    with pytest.raises(DataError, match="cannot read metrics"):
        write_metrics_table([bad], out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")
    assert not (tmp_path / "m.json").exists()
