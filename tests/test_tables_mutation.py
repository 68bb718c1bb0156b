"""The classification-metrics table (``biasrepro.metrics.tables``): what its mutation run
left untested, pinned with expectations written out by hand: the shortest path it reads,
its exact messages and the Markdown page it writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from biasrepro.errors import DataError
from biasrepro.metrics.tables import SETS, collect, write_metrics_table


def _frame(path: Path, labels=(0, 1, 1, 0), probs=(0.2, 0.7, 0.4, 0.1)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"label": list(labels), "prob": list(probs)}).to_parquet(path)
    return path


def test_a_path_of_exactly_four_parts_is_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = _frame(tmp_path / "toxicity/bert/baseline/test.parquet")
    (row,) = collect([Path("toxicity/bert/baseline/test.parquet")])
    assert (row["task"], row["model"], row["method"], row["set"], row["n"]) == (
        "toxicity", "bert", "baseline", "test", 4)
    assert path.exists()


def test_a_shorter_path_is_refused_naming_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _frame(tmp_path / "bert/baseline/test.parquet")
    with pytest.raises(DataError) as err:
        collect([Path("bert/baseline/test.parquet")])
    assert str(err.value) == ("bert/baseline/test.parquet: expected a path "
                              ".../TASK/MODEL/METHOD/SET.parquet")


def test_an_unknown_set_lists_the_known_ones(tmp_path: Path) -> None:
    path = _frame(tmp_path / "toxicity/m/baseline/dev.parquet")
    with pytest.raises(DataError) as err:
        collect([path])
    assert str(err.value) == (f"{path}: unknown scored set 'dev' (known: test, validation, "
                              "fairness-original, fairness-balanced, imdb-gendered-test, "
                              "imdb-gendered-perturbed-test)")


def test_a_file_that_is_not_parquet_is_called_a_predictions_file(tmp_path: Path) -> None:
    path = tmp_path / "toxicity/m/baseline/test.parquet"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not parquet")
    with pytest.raises(DataError) as err:
        collect([path])
    assert str(err.value).startswith(f"{path}: not a readable predictions file (")


def test_the_markdown_page_lists_only_the_sets_present(tmp_path: Path) -> None:
    paths = [_frame(tmp_path / f"toxicity/m/baseline/{name}.parquet")
             for name in ("validation", "test")]
    write_metrics_table(paths, out_json=tmp_path / "m.json", out_md=tmp_path / "m.md")
    text = (tmp_path / "m.md").read_text()
    head = ("# Classification metrics per scored set\n\n"
            f"- `test`: {SETS['test']}\n- `validation`: {SETS['validation']}\n\n| task |")
    assert text.startswith(head), text[:300]
