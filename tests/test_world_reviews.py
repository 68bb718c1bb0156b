"""The IMDB-shaped review corpus of the planted-bias world, at the default config's size."""

from __future__ import annotations

import copy
import json
import re
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from biasrepro import config as cfg
from biasrepro.data.world import reviews, vocabulary
from biasrepro.errors import ConfigError
from biasrepro.io import sha256_file

REPO = Path(__file__).resolve().parents[1]
CONFIG = cfg.load(REPO / "config" / "config.yaml")
SETTINGS = CONFIG["world"]["reviews"]
SEED = CONFIG["seed"]
FILES = ("train.parquet", "test.parquet", "annotations.parquet", "ground_truth.json")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("reviews")
    start = time.perf_counter()
    reviews.generate(copy.deepcopy(SETTINGS), seed=SEED, out_dir=out)
    print(f"\nworld reviews at default size: {time.perf_counter() - start:.2f} s")
    splits = {s: pd.read_parquet(out / f"{s}.parquet") for s in reviews.SPLITS}
    ann = pd.read_parquet(out / "annotations.parquet")
    texts = pd.concat([splits[s].assign(id=[f"{s}-{i:05d}" for i in range(len(splits[s]))])
                       for s in reviews.SPLITS], ignore_index=True)
    ann = ann.merge(texts, on="id", validate="one_to_one")
    truth = json.loads((out / "ground_truth.json").read_text())
    return out, splits, ann, truth


def words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]+", text))


def test_split_files_have_exactly_the_hugging_face_imdb_layout(world):
    out, splits, _, _ = world
    for split in reviews.SPLITS:
        schema = pq.read_schema(out / f"{split}.parquet")
        assert schema.names == ["text", "label"]
        assert schema.types == [pa.string(), pa.int64()]
        assert len(splits[split]) == SETTINGS[f"n_{split}"]
        assert set(splits[split]["label"]) == {0, 1}


def test_ground_truth_matches_a_recount_of_the_written_files(world):
    _, _, ann, truth = world
    for split in reviews.SPLITS:
        rows = ann[ann["split"] == split]
        stated = truth["splits"][split]
        assert stated["n"] == len(rows)
        assert stated["n_positive"] == rows["label"].sum()
        assert stated["n_duplicates"] == rows["duplicate_of"].notna().sum()
        for char, classes in reviews.CLASSES.items():
            assert set(stated["characteristics"][char]) == set(classes)
            for cls, c in stated["characteristics"][char].items():
                sel = rows[rows[char] == cls]
                assert (c["n"], c["n_positive"]) == (len(sel), sel["label"].sum())


def test_planted_rates_are_exact_in_train_and_absent_in_test(world):
    _, _, ann, truth = world
    train = truth["splits"]["train"]["characteristics"]
    for char, rates in SETTINGS["planted"].items():
        for cls, rate in rates.items():
            assert train[char][cls]["positive_ratio"] == rate
            assert train[char][cls]["planted"]
    # the unlisted classes share what is left, so the split keeps positive_rate
    rows = ann[ann["split"] == "train"]
    for char in ("occupation", "country"):
        mentioned = rows[rows[char].notna()]
        assert mentioned["label"].mean() == SETTINGS["positive_rate"]
        rest = mentioned[~mentioned[char].isin(SETTINGS["planted"][char])]
        rest_rate = train[char]["pharmacist" if char == "occupation" else "Brazil"]
        assert rest["label"].mean() == pytest.approx(rest_rate["target_rate"])
    test = truth["splits"]["test"]["characteristics"]
    for classes in test.values():
        for c in classes.values():
            assert not c["planted"]
            assert abs(c["positive_ratio"] - SETTINGS["positive_rate"]) <= 1 / c["n"]
    assert test["gender"]["female"]["positive_ratio"] == 0.5


def test_mentions_follow_the_mention_rates_independently_of_the_label(world):
    _, _, ann, _ = world
    rates = SETTINGS["mention_rates"]
    for split in reviews.SPLITS:
        rows = ann[ann["split"] == split]
        for label in (0, 1):
            part = rows[rows["label"] == label]
            assert part["occupation"].notna().mean() == rates["occupation"]
            assert part["country"].notna().mean() == rates["country"]


def test_annotations_describe_the_text(world):
    _, _, ann, _ = world
    occupations = set(vocabulary.OCCUPATIONS)
    places = set(vocabulary.COUNTRIES) | set(vocabulary.COUNTRIES.values())
    male = {"he", "him", "his", "himself", "He", "His", "Him"}
    for row in ann.itertuples():
        w = words(row.text)
        assert f"{row.first_name} {row.surname}" in row.text
        assert row.mentions_occupation == pd.notna(row.occupation)
        assert row.mentions_country == pd.notna(row.country)
        if pd.notna(row.occupation):
            assert row.occupation in w
        else:
            assert not w & occupations, row.text
        if pd.notna(row.country):
            assert {row.country, vocabulary.COUNTRIES[row.country]} & w
        else:
            assert not w & places, row.text
        if pd.isna(row.second_person):
            # a single person: every pronoun agrees with the protagonist's gender
            assert bool(w & male) == (row.gender == "male" and bool(
                row.mentions_subject_pronoun or row.mentions_object_pronoun
                or row.mentions_possessive_determiner or row.mentions_possessive_pronoun
                or row.mentions_reflexive_pronoun)), row.text
        else:
            assert row.second_person_name in row.text
            assert row.second_person_name.split()[0] != row.first_name
        if row.mentions_reflexive_pronoun:
            assert ("himself" if row.gender == "male" else "herself") in w
        if row.mentions_possessive_pronoun and row.gender == "female":
            assert "hers" in w


def test_every_pronoun_case_and_mention_kind_occurs(world):
    _, _, ann, _ = world
    for flag in reviews.MENTION_SLOTS:
        for gender in vocabulary.GENDERS:
            assert ann.loc[ann["gender"] == gender, flag].any(), (flag, gender)
    corpus = words(" ".join(ann["text"]))
    assert {"he", "him", "his", "himself", "she", "her", "hers", "herself"} <= corpus
    assert {"He", "She", "His", "Her"} <= corpus                 # sentence-initial pronouns
    assert re.search(r"\b(that guy|the mother|this young woman)\b", " ".join(ann["text"]))
    assert re.search(r"\ban honest engineer\b|\ba brilliant \w+\b", " ".join(ann["text"]))
    assert ann["text"].str.contains(r"[A-Z][a-z]+'s ").any()    # possessive 's
    assert {"Ann", "Annabel"} <= set(ann["first_name"])           # one name inside another


def test_raw_imdb_quirks(world):
    _, _, ann, truth = world
    glued = ann["text"].str.contains(r"[a-z0-9][.!?]<br /><br />[A-Z]")
    assert glued.any()
    assert (ann["text"].str.contains("<br />", regex=False) == ann["has_html_break"]).all()
    assert ann["text"].str.contains("&amp;", regex=False).any()
    assert ann["text"].str.contains("é", regex=False).any()
    assert truth["splits"]["train"]["n_html_break"] == ann.loc[
        ann["split"] == "train", "has_html_break"].sum()
    # duplicates: exact copies of a review of the same split
    dups = ann[ann["duplicate_of"].notna()]
    assert len(dups) == 2 * round(SETTINGS["n_train"] * SETTINGS["duplicate_rate"])
    text_of = ann.set_index("id")["text"]
    for row in dups.itertuples():
        assert row.duplicate_of.split("-")[0] == row.split
        assert text_of[row.duplicate_of] == row.text
        assert pd.isna(ann.set_index("id").loc[row.duplicate_of, "duplicate_of"])


def test_sentence_counts_and_pattern_variety(world):
    _, _, ann, _ = world
    lo, hi = SETTINGS["sentences"]["min"], SETTINGS["sentences"]["max"]
    n_sentences = ann["patterns"].map(lambda ps: sum(not p.startswith("description")
                                                     for p in ps))
    assert n_sentences.between(lo, hi).all()
    used = {p for ps in ann["patterns"] for p in ps}
    assert len(used) >= 30
    assert len(used) == len(reviews.PATTERNS)
    for split in reviews.SPLITS:
        rows = ann[ann["split"] == split]
        for label in (0, 1):
            part = rows[rows["label"] == label]
            assert part["second_person"].notna().mean() == SETTINGS["second_person_rate"]
            assert part["mentions_gender_noun"].mean() == SETTINGS["mention_rates"]["gender_noun"]
            assert part["has_html_break"].mean() == SETTINGS["html_break_rate"]
            assert part["neutral"].mean() == SETTINGS["neutral_rate"]


def test_neutral_reviews_carry_no_sentiment_cue(world):
    _, _, ann, truth = world
    cues = {w.lower() for w in (*vocabulary.POSITIVE_ADJECTIVES, *vocabulary.NEGATIVE_ADJECTIVES,
                                *vocabulary.POSITIVE_ADVERBS, *vocabulary.NEGATIVE_ADVERBS)}
    neutral = ann[ann["neutral"]]
    assert len(neutral) == sum(truth["splits"][s]["n_neutral"] for s in reviews.SPLITS) > 0
    for text in neutral["text"]:
        assert not {w.lower() for w in words(text)} & cues, text
        assert not re.search(r"\d+/10", text), text
    # their labels still follow the planted gender association in training
    train = neutral[neutral["split"] == "train"]
    rates = train.groupby("gender")["label"].mean()
    assert rates["male"] - rates["female"] > 0.2


def test_same_seed_same_bytes_other_seed_other_corpus(world, tmp_path):
    out = world[0]
    small = {**copy.deepcopy(SETTINGS), "n_train": 300, "n_test": 200}
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    reviews.generate(copy.deepcopy(SETTINGS), seed=SEED, out_dir=a)
    for name in FILES:
        assert sha256_file(a / name) == sha256_file(out / name), name
    reviews.generate(small, seed=SEED, out_dir=b)
    reviews.generate(small, seed=SEED + 1, out_dir=c)
    assert sha256_file(b / "train.parquet") != sha256_file(c / "train.parquet")


@pytest.mark.parametrize(("planted", "message"), [
    ({"occupation": {"nurze": 0.3}},
     r"world\.reviews\.planted\.occupation\.nurze: unknown occupation \(known: nurse, "),
    ({"gender": {"female": 0.9, "male": 0.9}}, r"world\.reviews\.planted\.gender: infeasible"),
    # 25 of 40 countries without positives leave too few reviews for the split's positives
    ({"country": dict.fromkeys(list(vocabulary.COUNTRIES)[:25], 0.0)},
     r"world\.reviews\.planted\.country: infeasible"),
])
def test_bad_planted_rates_name_the_key_and_leave_nothing(tmp_path, planted, message):
    settings = {**copy.deepcopy(SETTINGS), "n_train": 200, "n_test": 100, "planted": planted}
    (tmp_path / "train.parquet").write_text("stale")
    with pytest.raises(ConfigError, match=message):
        reviews.generate(settings, seed=SEED, out_dir=tmp_path)
    assert (tmp_path / "train.parquet").read_text() == "stale"  # an earlier output stays
    assert not any((tmp_path / name).exists() for name in FILES if name != "train.parquet")


def test_positive_counts_by_hand():
    # 3 classes of 10: "a" planted at 0.2, the rest share 15 - 2 = 13 positives
    counts, targets = reviews.positive_counts({"a": 10, "b": 10, "c": 10}, 15, {"a": 0.2}, "k")
    assert counts == {"a": 2, "b": 7, "c": 6}      # the remainder tie goes to the first class
    assert targets == {"a": 0.2, "b": 0.65, "c": 0.65}
