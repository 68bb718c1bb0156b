"""IMDB in its three raw formats, built in the real layouts; and BiasFinder's real sample."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import realdata
from fixtures.raw_data import (
    REVIEWS,
    SPLIT_REVIEWS,
    write_aclimdb_tar,
    write_biasfinder_tsv,
    write_hf_parquet,
)

from biasrepro.cli import main
from biasrepro.data import imdb
from biasrepro.errors import ConfigError

COLUMNS = ["id", "text", "label", "rating", "split"]


def _load(out: Path) -> tuple[dict[str, pd.DataFrame], dict]:
    tables = {s: pd.read_parquet(out / f"{s}.parquet") for s in ("train", "test")}
    return tables, json.loads((out / "stats.json").read_text())


def test_aclimdb_tarball(tmp_path):
    tar = write_aclimdb_tar(tmp_path / "aclImdb_v1.tar.gz")
    imdb.prepare(tar, fmt="aclimdb_tar", out_dir=tmp_path / "out")
    tables, stats = _load(tmp_path / "out")
    train, test = tables["train"], tables["test"]
    assert list(train.columns) == COLUMNS
    assert str(train["label"].dtype) == "int64" and str(train["rating"].dtype) == "Int64"
    # labelled reviews only: unsup/, README, vocab and feature files are ignored
    assert len(train) == 6 and len(test) == 4
    assert not train["text"].str.contains("unlabelled").any()
    # sorted by polarity then review number; id keeps split, polarity, number and rating
    assert train["id"].tolist() == ["train/neg/2_4", "train/neg/7_2", "train/neg/15_1",
                                    "train/pos/3_8", "train/pos/12_9", "train/pos/40_10"]
    assert train["label"].tolist() == [0, 0, 0, 1, 1, 1]
    assert train["rating"].tolist() == [4, 2, 1, 8, 9, 10]
    assert set(train["split"]) == {"train"} and set(test["split"]) == {"test"}
    row = train.set_index("id").loc["train/pos/12_9"]
    assert row["text"] == "A warm, funny film. The cast shines & the score soars."
    assert train.set_index("id").loc["train/neg/15_1", "text"] == (
        "He shouts, she sulks, nobody cares. Avoid."
    )
    assert test.set_index("id").loc["test/pos/5_7", "text"] == (
        'A modest charmer "with heart" and a clever ending.'
    )
    assert stats["format"] == "aclimdb_tar"
    assert stats["splits"]["train"] == {
        "rows": 6, "labels": {"0": 3, "1": 3}, "html_tags": 5, "html_entities": 1,
        "duplicate_texts": 1,
    }
    assert stats["splits"]["test"]["html_tags"] == 1
    assert stats["splits"]["test"]["html_entities"] == 1
    n_reviews = {s: sum(len(v) for (split, _), v in REVIEWS.items() if split == s)
                 for s in ("train", "test")}
    assert {s: len(t) for s, t in tables.items()} == n_reviews


def test_hf_parquet_pair(tmp_path):
    paths = write_hf_parquet(tmp_path)
    imdb.prepare(paths, fmt="hf_parquet", out_dir=tmp_path / "out")
    tables, stats = _load(tmp_path / "out")
    train = tables["train"]
    assert list(train.columns) == COLUMNS
    assert train["id"].tolist() == ["train-00000", "train-00001", "train-00002", "train-00003"]
    assert train["label"].tolist() == [lab for lab, _ in SPLIT_REVIEWS["train"]]
    assert train["rating"].isna().all()
    assert train["text"][0] == "Lovely acting. A story with heart."
    assert train["text"][1] == "Tedious & overlong. The ending drags."
    assert tables["test"]["id"].tolist() == ["test-00000", "test-00001"]
    assert stats["splits"]["train"]["html_tags"] == 1
    assert stats["splits"]["train"]["html_entities"] == 1


def test_biasfinder_tsv_pair_matches_the_parquet_route(tmp_path):
    (tmp_path / "tsv_in").mkdir()
    (tmp_path / "pq_in").mkdir()
    imdb.prepare(write_biasfinder_tsv(tmp_path / "tsv_in"), fmt="tsv",
                 out_dir=tmp_path / "from_tsv")
    imdb.prepare(write_hf_parquet(tmp_path / "pq_in"), fmt="hf_parquet",
                 out_dir=tmp_path / "from_parquet")
    a, stats_a = _load(tmp_path / "from_tsv")
    b, stats_b = _load(tmp_path / "from_parquet")
    for split in ("train", "test"):
        pd.testing.assert_frame_equal(a[split], b[split])
    assert stats_a["splits"] == stats_b["splits"]


def test_reruns_are_byte_identical(tmp_path):
    tar = write_aclimdb_tar(tmp_path / "a.tar.gz")
    imdb.prepare(tar, fmt="aclimdb_tar", out_dir=tmp_path / "one")
    imdb.prepare(tar, fmt="aclimdb_tar", out_dir=tmp_path / "two")
    for name in ("train.parquet", "test.parquet", "stats.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_cli_prepare_imdb(tmp_path):
    paths = write_biasfinder_tsv(tmp_path)
    code = main(["prepare", "imdb", "--format", "tsv", "--input", f"train={paths['train']}",
                 f"test={paths['test']}", "--out-dir", str(tmp_path / "out")])
    assert code == 0
    tables, _ = _load(tmp_path / "out")
    assert len(tables["train"]) == 4 and len(tables["test"]) == 2


def test_wrong_input_shape_for_the_format_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="train=PATH test=PATH"):
        imdb.prepare(tmp_path / "x.tsv", fmt="tsv", out_dir=tmp_path / "out")
    with pytest.raises(ConfigError, match="aclimdb_tar, hf_parquet, tsv"):
        imdb.prepare(tmp_path / "x", fmt="csv", out_dir=tmp_path / "out")


def test_real_biasfinder_sample(tmp_path):
    inputs = {"train": realdata("imdb", "imdb_train_sample.tsv"),
              "test": realdata("imdb", "imdb_test_sample.tsv")}
    imdb.prepare(inputs, fmt="tsv", out_dir=tmp_path)
    tables, stats = _load(tmp_path)
    assert len(tables["train"]) == 1000 and len(tables["test"]) == 500
    assert stats["splits"]["test"]["labels"] == {"0": 250, "1": 250}
    assert sum(stats["splits"]["train"]["labels"].values()) == 1000
    # BiasFinder's copy is already free of tags; cleaning only normalizes whitespace
    assert stats["splits"]["train"]["html_tags"] == 0
    raw = pd.read_csv(inputs["train"], sep="\t", header=None, names=["label", "text"])
    assert tables["train"]["label"].tolist() == raw["label"].tolist()
    assert tables["train"]["text"].tolist() == [" ".join(t.split()) for t in raw["text"]]
