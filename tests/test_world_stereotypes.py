"""The planted stereotype sentences that the embedded models are pre-trained on."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from biasrepro import config as cfg
from biasrepro.data.world import stereotypes
from biasrepro.data.world.vocabulary import IDENTITY_WORDS
from biasrepro.errors import ConfigError
from biasrepro.io import sha256_file

REPO = Path(__file__).resolve().parents[1]
CONFIG = cfg.load(REPO / "config" / "config.yaml")
SETTINGS = CONFIG["models"]["embedded"]["stereotypes"]
SEED = CONFIG["seed"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("stereotypes")
    stereotypes.generate(copy.deepcopy(SETTINGS), seed=SEED, out_dir=out)
    df = pd.read_parquet(out / "sentences.parquet")
    truth = json.loads((out / "ground_truth.json").read_text())
    return out, df, truth


def test_columns_and_types(world):
    _, df, _ = world
    assert list(df.columns) == ["text", "attribute", "identity", "word", "stereotypical",
                                "pattern", "mention_start", "mention_end", "word_start",
                                "word_end"]
    assert df["stereotypical"].dtype == bool
    assert (df[stereotypes.SPAN_COLUMNS].dtypes == "int64").all()
    assert df["text"].str.len().min() > 10
    assert len(df) == SETTINGS["n_sentences"]


def test_exactly_the_planted_share_is_stereotypical(world):
    _, df, truth = world
    n = SETTINGS["n_sentences"]
    expected = int(SETTINGS["strength"] * n + 0.5)
    assert df["stereotypical"].sum() == expected == truth["n_stereotypical"]
    assert truth["n_counter_stereotypical"] == n - expected


def test_stereotypical_flag_matches_the_configured_associations(world):
    _, df, _ = world
    assoc = SETTINGS["associations"]
    follows = [row.word in assoc[row.attribute][row.identity] for row in df.itertuples()]
    assert (df["stereotypical"] == pd.Series(follows)).all()
    # counter-stereotypical sentences use another identity of the same attribute
    counter = df[~df["stereotypical"]]
    assert all(row.identity in assoc[row.attribute] for row in counter.itertuples())


def test_pair_counts_equal_the_ground_truth(world):
    _, df, truth = world
    counted = Counter(zip(df["attribute"], df["identity"], df["word"], strict=True))
    stated = {(a, g, w): k for a, groups in truth["pairs"].items()
              for g, words in groups.items() for w, k in words.items()}
    assert {k: v for k, v in stated.items() if v} == dict(counted)
    for attr, groups in truth["associations"].items():
        for identity, words in groups.items():
            for word, facts in words.items():
                sel = df[(df["attribute"] == attr) & (df["word"] == word)]
                assert len(sel) == facts["n"]
                assert (sel["identity"] == identity).sum() == facts["n_stereotypical"]
                assert sel["stereotypical"].sum() == facts["n_stereotypical"]


def test_every_word_is_near_the_planted_strength(world):
    _, _, truth = world
    ratios = [f["stereotypical_ratio"] for groups in truth["associations"].values()
              for words in groups.values() for f in words.values()]
    assert len(ratios) == sum(len(ws) for g in SETTINGS["associations"].values()
                              for ws in g.values())
    assert all(abs(r - SETTINGS["strength"]) < 0.01 for r in ratios)


def test_sentences_name_their_identity_with_the_lexicon_words(world):
    _, df, _ = world
    for row in df.itertuples():
        forms = [f for kind in IDENTITY_WORDS[row.identity].values() for f in kind]
        assert any(re.search(rf"\b{re.escape(f)}\b", row.text, re.IGNORECASE) for f in forms), \
            row.text
        assert re.search(rf"\b{re.escape(row.word)}", row.text), row.text


def test_spans_cover_the_mention_and_the_word_as_written(world):
    _, df, _ = world
    for pattern in (p for patterns in stereotypes.PATTERNS.values() for p in patterns):
        slots = re.findall(r"\{(\w+)\}", pattern)  # one mention slot and one word slot
        assert sorted(s in ("group", "member") for s in slots) == [False, True], pattern
    for row in df.itertuples():
        mention = row.text[row.mention_start:row.mention_end]
        word = row.text[row.word_start:row.word_end]
        assert word in (row.word, stereotypes.plural(row.word)), (row.text, word)
        words = IDENTITY_WORDS[row.identity]
        # the identity's adjective ("Asian students") or the head noun ("that woman")
        allowed = {w.lower() for w in words["adjective"]} | {
            m.split(" ")[-1].lower() for kind in ("plural", "a", "the") for m in words[kind]}
        assert mention.lower() in allowed, (row.text, mention)
        assert row.mention_end <= row.word_start or row.word_end <= row.mention_start
    marked = {(r.text[r.mention_start:r.mention_end], r.text) for r in df.itertuples()}
    assert ("woman", "That woman came across as caring in the interview.") in marked
    assert any(m == "Asian" and " Asian coworkers " in t for m, t in marked)
    assert stereotypes._mark_identity("a mentally ill person", "psychiatric_or_mental_illness"
                                      ) == "a \x01mentally ill\x02 person"
    # "{member} works as {a_word}." and "Most {words} are {group}."
    a_word = df[df["pattern"] == "noun-00"].iloc[0]
    assert a_word.text[:a_word.word_start].endswith((" a ", " an "))
    assert a_word.text[a_word.word_start:] == f"{a_word.word}."
    most = df[df["pattern"] == "noun-13"].iloc[0]
    assert most.text[most.word_start:most.word_end] == stereotypes.plural(most.word)
    assert most.word_start == len("Most ")


def test_twenty_or_more_patterns_per_word_kind_are_used(world):
    _, df, truth = world
    kinds = df["pattern"].str.split("-").str[0]
    for kind in ("adjective", "noun"):
        assert len(truth["patterns"][kind]) >= 20
        assert df.loc[kinds == kind, "pattern"].nunique() >= 20
    # occupations are nouns ("a nurse"), other words adjectives ("so gentle")
    nurse = df.loc[df["word"] == "nurse", "pattern"]
    assert nurse.str.startswith("noun-").all()
    assert df.loc[df["word"] == "gentle", "pattern"].str.startswith("adjective-").all()
    sample = df["text"].head(3000)  # the sentences are in random order: a random sample
    assert sample.nunique() > 0.5 * len(sample)


def test_grammar_of_articles_and_plurals(world):
    _, df, _ = world
    assert not df["text"].str.contains(r"\ba (?:[aeiou])", regex=True).any()
    assert df["text"].str.contains(r"\ban engineer\b|\bengineers\b").any()
    assert df["text"].str.contains("nurses").any()
    assert df["text"].str[0].str.isupper().all()


def test_same_seed_same_bytes_other_seed_other_sentences(tmp_path, world):
    out, df, _ = world
    stereotypes.generate(copy.deepcopy(SETTINGS), seed=SEED, out_dir=tmp_path / "a")
    for name in ("sentences.parquet", "ground_truth.json"):
        assert sha256_file(tmp_path / "a" / name) == sha256_file(out / name)
    stereotypes.generate(copy.deepcopy(SETTINGS), seed=SEED + 1, out_dir=tmp_path / "b")
    other = pd.read_parquet(tmp_path / "b" / "sentences.parquet")
    assert other["stereotypical"].sum() == df["stereotypical"].sum()
    assert list(other["text"]) != list(df["text"])


def test_zero_strength_plants_only_counter_stereotypes(tmp_path):
    settings = copy.deepcopy(SETTINGS) | {"n_sentences": 101, "strength": 0.0}
    df, truth = stereotypes.build(settings, seed=SEED)
    assert len(df) == 101 and not df["stereotypical"].any()
    assert truth["n_counter_stereotypical"] == 101


@pytest.mark.parametrize(("associations", "key"), [
    ({"religion": {"muslim": ["devout"], "other_religion": ["kind"]}},
     "models.embedded.stereotypes.associations.religion.other_religion"),
    ({"gender": {"female": ["gentle"]}}, "models.embedded.stereotypes.associations.gender"),
    ({"gender": {"female": ["gentle"], "male": []}},
     "models.embedded.stereotypes.associations.gender.male"),
    ({"gender": {"female": ["gentle", "kind"], "male": ["kind"]}},
     "models.embedded.stereotypes.associations.gender: kind listed more than once"),
])
def test_bad_associations_name_the_key(tmp_path, associations, key):
    settings = copy.deepcopy(SETTINGS) | {"associations": associations}
    with pytest.raises(ConfigError, match=re.escape(key)):
        stereotypes.generate(settings, seed=SEED, out_dir=tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("n", [300, 301, 32000])
def test_null_strength_pairs_every_identity_with_every_word_equally_often(n):
    """Nothing planted, for two identities (gender) and three (race, religion): each word's
    sentences are spread over its attribute's identities within one sentence, the rounding's
    extra going to the identities in their configured order, not to the stereotyped one."""
    settings = copy.deepcopy(SETTINGS) | {"n_sentences": n, "strength": None}
    df, truth = stereotypes.build(settings, seed=SEED)
    assert len(df) == n
    for attr, groups in settings["associations"].items():
        order = list(groups)
        for word in (w for words in groups.values() for w in words):
            counts = [truth["pairs"][attr][g][word] for g in order]
            assert max(counts) - min(counts) <= 1, (attr, word, counts)
            assert counts == sorted(counts, reverse=True), (attr, word, counts)
            sel = df[df["word"] == word]
            assert sel["identity"].value_counts().reindex(order, fill_value=0).tolist() == counts
    assert truth["n_stereotypical"] == int(df["stereotypical"].sum())
