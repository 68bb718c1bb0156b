"""The SST sentiment-fairness CSV with its real defects (toxicity paper, appendix)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import realdata
from fixtures.raw_data import write_sst_csv

from biasrepro.data import sst


def _prepare(path: Path, out: Path) -> tuple[pd.DataFrame, dict]:
    sst.prepare(path, out_dir=out)
    return pd.read_parquet(out / "fairness.parquet"), json.loads((out / "stats.json").read_text())


def test_fixture_with_the_real_defects(tmp_path):
    expected = write_sst_csv(tmp_path / "SST_fairness_dataset.csv")
    df, stats = _prepare(tmp_path / "SST_fairness_dataset.csv", tmp_path / "out")
    assert list(df.columns) == ["id", "text", "sentiment", "label", "gender", "agreement",
                                "A1", "A2", "A3"]
    assert df["id"].tolist() == expected["ids"]
    texts = df.set_index("id")["text"]
    for i, text in expected["texts"].items():
        assert texts[i] == text
    assert stats["repaired_rows"] == expected["repaired"]
    assert stats["mojibake_fixed_rows"] == expected["mojibake"]
    # repaired rows have their later fields back in place
    row = df.set_index("id").loc["9"]
    assert (row["sentiment"], row["gender"], row["A2"], row["agreement"]) == (0.88, "female", 0, 2)
    assert df.set_index("id").loc["12", "sentiment"] == 0.7
    for g in ("female", "male"):
        assert stats["genders"][g]["n"] == expected["genders"][g]
        assert stats["genders"][g]["positive_ratio"] == expected["positive"][g] / expected[
            "genders"][g]
    # 0.5 is not positive: the binarisation is strictly above 0.5
    assert df.set_index("id").loc["5", "label"] == 0
    assert str(df["label"].dtype) == "int64" and str(df["agreement"].dtype) == "int64"


def test_reruns_are_byte_identical(tmp_path):
    write_sst_csv(tmp_path / "sst.csv")
    sst.prepare(tmp_path / "sst.csv", out_dir=tmp_path / "a")
    sst.prepare(tmp_path / "sst.csv", out_dir=tmp_path / "b")
    for name in ("fairness.parquet", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_real_file_reproduces_the_appendix_numbers(tmp_path):
    df, stats = _prepare(realdata("sst", "SST_fairness_dataset.csv"), tmp_path)
    assert len(df) == 462 and df["id"].is_unique
    assert stats["genders"]["male"]["n"] == 272 and stats["genders"]["female"]["n"] == 190
    assert stats["repaired_rows"] == ["114", "231", "343", "636"]
    # appendix: 42% female with positive ratio 0.61, 58% male with 0.5
    assert stats["genders"]["female"]["share"] == pytest.approx(0.42, abs=0.01)
    assert stats["genders"]["male"]["share"] == pytest.approx(0.58, abs=0.01)
    assert stats["genders"]["female"]["positive_ratio"] == pytest.approx(0.61, abs=0.01)
    assert stats["genders"]["male"]["positive_ratio"] == 0.5
    texts = df.set_index("id")["text"]
    assert texts["114"] == "DeMeo is not without talent , he just needs better material ."
    assert not df["text"].str.contains("Ã").any()
    assert len(stats["mojibake_fixed_rows"]) > 0
    assert set(df["agreement"]) == {2, 3}
