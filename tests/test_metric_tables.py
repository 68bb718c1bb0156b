"""The predictions of every run and scored set are scored into one sorted table; a bad file
is named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.cli import main
from biasrepro.errors import DataError
from biasrepro.metrics.tables import write_metrics_table


def _predictions(root: Path, task: str, model: str, labels: list[int],
                 probs: list[float], name: str = "test") -> Path:
    path = root / task / model / "baseline" / f"{name}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"id": range(len(labels)), "label": labels, "prob": probs}).to_parquet(path)
    return path


def test_table_rows_sorted_and_scored(tmp_path: Path) -> None:
    paths = [_predictions(tmp_path, "toxicity", "b", [0, 1, 1, 0], [0.2, 0.7, 0.4, 0.1]),
             _predictions(tmp_path, "sentiment", "a", [1, 0], [0.9, 0.3])]
    write_metrics_table(paths, out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")
    rows = json.loads((tmp_path / "m.json").read_text())
    assert [(r["task"], r["model"], r["n"], r["accuracy"], r["roc_auc"]) for r in rows] == [
        ("sentiment", "a", 2, 1.0, 1.0), ("toxicity", "b", 4, 0.75, 1.0)]
    assert rows[1]["f1"] == pytest.approx(2 / 3)
    assert "| sentiment | a | baseline | test | 2 | 1.0000 |" in (tmp_path / "m.md").read_text()


def test_every_scored_set_is_a_row_of_its_own(tmp_path: Path) -> None:
    """The paper's two baseline AUCs come from different sets: each set gets its own row,
    in the order test, validation, original and balanced fairness set."""
    names = ["fairness-balanced", "test", "fairness-original", "validation"]
    probs = ([0.6, 0.4, 0.5, 0.1], [0.1, 0.9, 0.8, 0.2], [0.3, 0.6, 0.2, 0.1],
             [0.2, 0.7, 0.4, 0.1])
    paths = [_predictions(tmp_path, "toxicity", "m", [0, 1, 1, 0], p, name)
             for name, p in zip(names, probs, strict=True)]
    write_metrics_table(paths, out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")
    rows = json.loads((tmp_path / "m.json").read_text())
    assert [(r["set"], r["roc_auc"]) for r in rows] == [
        ("test", 1.0), ("validation", 1.0), ("fairness-original", 0.75),
        ("fairness-balanced", 0.5)]
    assert "`fairness-balanced`: the balanced" in (tmp_path / "m.md").read_text()


def test_an_unknown_set_is_refused(tmp_path: Path) -> None:
    path = _predictions(tmp_path, "toxicity", "m", [0, 1], [0.2, 0.8], "dev")
    with pytest.raises(DataError, match="unknown scored set 'dev'"):
        write_metrics_table([path], out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")


def test_table_equals_evaluate_of_each_file(tmp_path: Path) -> None:
    path = _predictions(tmp_path, "toxicity", "m", [0, 1, 0, 1, 1], [0.3, 0.6, 0.55, 0.2, 0.9])
    assert main(["evaluate", "--predictions", str(path), "--out", str(tmp_path / "e.json")]) == 0
    assert main(["metrics-table", "--inputs", str(path), "--out-json", str(tmp_path / "t.json"),
                 "--out-md", str(tmp_path / "t.md")]) == 0
    row = json.loads((tmp_path / "t.json").read_text())[0]
    assert {k: row[k] for k in ("task", "model", "method", "set")} == {
        "task": "toxicity", "model": "m", "method": "baseline", "set": "test"}
    assert {k: v for k, v in row.items() if k not in ("task", "model", "method", "set")} == (
        json.loads((tmp_path / "e.json").read_text()))


@pytest.mark.parametrize("content", [b"not parquet", None])
def test_bad_predictions_file_is_named(tmp_path: Path, content: bytes | None) -> None:
    bad = tmp_path / "toxicity" / "m" / "baseline" / "test.parquet"
    bad.parent.mkdir(parents=True)
    if content is None:
        pd.DataFrame({"id": [1], "prob": [0.5]}).to_parquet(bad)
    else:
        bad.write_bytes(content)
    with pytest.raises(DataError, match="test.parquet") as err:
        write_metrics_table([bad], out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")
    assert ("label" in str(err.value)) == (content is None)
    assert not (tmp_path / "m.json").exists()
