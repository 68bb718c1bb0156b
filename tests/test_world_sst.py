"""The SST-sentiment-fairness-shaped CSV of the planted-bias world."""

from __future__ import annotations

import copy
import csv
import io
import re
import time
from pathlib import Path

import ftfy
import pandas as pd
import pytest

from biasrepro import config as cfg
from biasrepro.data.world import sst_like
from biasrepro.errors import ConfigError
from biasrepro.io import sha256_file

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "realdata" / "sst" / "SST_fairness_dataset.csv"
CONFIG = cfg.load(REPO / "config" / "config.yaml")
SETTINGS = CONFIG["world"]["sst"]
HEADER = ",annotation_index,index,sentence,label,gender,A1,A2,A3,keep,agreement,correct,incorrect,"
MALE = {"he", "him", "his", "himself", "actor", "man", "hero", "mr"}
FEMALE = {"she", "her", "herself", "actress", "woman", "heroine", "ms"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("sst")
    start = time.perf_counter()
    sst_like.generate(copy.deepcopy(SETTINGS), seed=CONFIG["seed"], out_dir=out)
    print(f"\nworld sst at default size: {time.perf_counter() - start:.3f} s")
    path = out / "SST_fairness_dataset.csv"
    return path, path.read_text(encoding="utf-8")


def repaired(text: str) -> pd.DataFrame:
    """Parse the file, joining the shifted sentence fields back together."""
    rows = list(csv.reader(io.StringIO(text)))[1:]
    fixed = [r[:3] + [",".join(r[3:len(r) - 9])] + r[len(r) - 9:] if r[-1] != "" else r
             for r in rows]
    return pd.DataFrame([r[:13] for r in fixed], columns=HEADER.split(",")[:13])


def test_layout_and_defects_as_in_the_real_file(world):
    _, text = world
    lines = text.split("\n")
    assert lines[0] == HEADER and lines[-1] == ""
    naive = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert naive.shape == (SETTINGS["n"], 14)
    shifted = [line for line in lines[1:-1] if not line.endswith(",")]
    assert len(shifted) == sst_like.N_SHIFTED_ROWS
    assert all('"' not in line and line.count(",") == 13 for line in shifted)
    assert re.search(r"Ã[©¼º±¨¡]", text)                       # mojibake
    assert " n't " in text and " , " in text and " 's " in text  # PTB tokens
    if REAL.exists():
        real = REAL.read_text(encoding="utf-8").split("\n")
        assert real[0] == lines[0]


def test_counts_are_exact(world):
    _, text = world
    df = repaired(text)
    assert len(df) == SETTINGS["n"]
    assert df["label"].str.fullmatch(r"0\.\d\d?").all()
    n_female = int(SETTINGS["n"] * SETTINGS["female_share"] + 0.5)
    assert (df["gender"] == "femm").sum() == n_female
    assert (df["label"] != "0.5").all()
    positive = df["label"].astype(float) > 0.5
    for gender, code in (("female", "femm"), ("male", "masc")):
        rows = df["gender"] == code
        assert positive[rows].sum() == int(rows.sum() * SETTINGS["positive_rate"][gender] + 0.5)
    assert (df["keep"] == "True").all()
    votes = df[["A1", "A2", "A3"]].astype(int).sum(axis=1)
    assert (votes == df["agreement"].astype(int)).all()
    assert set(df["agreement"]) == {"2", "3"}
    assert df["index"].is_unique and df[""].astype(int).is_monotonic_increasing


def test_sentences_are_gendered_like_their_label(world):
    _, text = world
    df = repaired(text)
    for sentence, gender in zip(df["sentence"], df["gender"], strict=True):
        words = set(re.findall(r"[a-z]+", ftfy.fix_text(sentence).lower()))
        own, other = (FEMALE, MALE) if gender == "femm" else (MALE, FEMALE)
        assert words & own and not words & other, sentence
    assert not any("Ã" in ftfy.fix_text(s) for s in df["sentence"])


def test_pattern_variety_and_determinism(world, tmp_path):
    path, _ = world
    _, pids = sst_like.build(SETTINGS, seed=CONFIG["seed"])
    assert len(set(pids)) >= 30
    sst_like.generate(copy.deepcopy(SETTINGS), seed=CONFIG["seed"], out_dir=tmp_path / "a")
    sst_like.generate(copy.deepcopy(SETTINGS), seed=CONFIG["seed"] + 1, out_dir=tmp_path / "b")
    assert sha256_file(tmp_path / "a" / path.name) == sha256_file(path)
    assert sha256_file(tmp_path / "b" / path.name) != sha256_file(path)


def test_a_share_leaving_one_gender_empty_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"world\.sst\.female_share"):
        sst_like.generate({**SETTINGS, "n": 10, "female_share": 0.01}, seed=1, out_dir=tmp_path)
    assert not list(tmp_path.iterdir())
