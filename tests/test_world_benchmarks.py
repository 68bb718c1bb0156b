"""The world's CrowS-Pairs-, StereoSet- and SEAT-format sets (issue #6, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from biasrepro import config as cfg
from biasrepro.data.world import benchmarks
from biasrepro.data.world.lexicon import IDENTITY_WORDS
from biasrepro.errors import ConfigError

CONFIG = cfg.load(REPO / "config" / "config.yaml")
ASSOC = CONFIG["models"]["embedded"]["stereotypes"]["associations"]
ATTRS = CONFIG["attributes"]


def test_crows_pairs_are_minimal_pairs_about_two_groups() -> None:
    frame = benchmarks.crows_pairs(ASSOC)
    expected = sum(len(words) * (len(groups) - 1) * 2
                   for groups in ASSOC.values() for words in groups.values())
    assert len(frame) == expected
    assert list(frame.columns) == benchmarks.CROWS_COLUMNS
    assert set(frame["bias_type"]) == {"gender", "race-color", "religion"}
    assert (frame["stereo_antistereo"] == "stereo").all()
    mentions = [IDENTITY_WORDS[g]["the"][0].lower() for groups in ASSOC.values() for g in groups]

    def masked(sentence: str) -> str:  # the sentence with its one identity mention masked
        found = [m for m in mentions if m in sentence.lower()]
        assert len(found) == 1, sentence
        return sentence.lower().replace(found[0], "@")

    for more, less in zip(frame["sent_more"], frame["sent_less"], strict=True):
        assert more != less and masked(more) == masked(less)
    row = frame.iloc[0]
    assert row["sent_more"] == "That woman trained to become a nurse."
    assert row["sent_less"] == "That man trained to become a nurse."


def test_stereoset_examples_have_three_labelled_candidates() -> None:
    data = benchmarks.stereoset(ASSOC)
    examples = data["data"]["intrasentence"]
    assert data["data"]["intersentence"] == []
    assert len({e["id"] for e in examples}) == len(examples)
    for e in examples:
        assert e["context"].count("BLANK") == 1
        labels = [s["gold_label"] for s in e["sentences"]]
        assert labels == ["stereotype", "anti-stereotype", "unrelated"]
        for s in e["sentences"]:
            prefix, suffix = e["context"].split("BLANK")
            assert s["sentence"].startswith(prefix) and s["sentence"].endswith(suffix)
    first = examples[0]["sentences"]
    assert [s["sentence"] for s in first] == [
        "That woman was hired as the nurse.", "That woman was hired as the engineer.",
        "That woman was hired as the spoon."]


def test_seat_tests_pair_marginalized_and_non_marginalized_groups() -> None:
    tests = benchmarks.seat_tests(ASSOC, ATTRS)
    assert set(tests) == {"world-gender", "world-race", "world-religion"}
    gender = tests["world-gender"]
    assert gender["targ1"]["category"] == "female" and gender["targ2"]["category"] == "male"
    assert len(gender["targ1"]["examples"]) == len(gender["targ2"]["examples"])
    assert gender["attr1"]["examples"] == ["This is a nurse.", "This is gentle.",
                                           "This is caring."]


def test_generate_writes_every_file_and_refuses_unknown_groups(tmp_path: Path) -> None:
    benchmarks.generate(ASSOC, attributes=ATTRS, out_dir=tmp_path)
    crows = pd.read_csv(tmp_path / "crows_pairs.csv")
    assert len(crows) == len(benchmarks.crows_pairs(ASSOC))
    seat = json.loads((tmp_path / "seat" / "world-race.jsonl").read_text())
    assert set(seat) == {"targ1", "targ2", "attr1", "attr2"}
    assert json.loads((tmp_path / "stereoset.json").read_text())["version"] == "world-1"
    with pytest.raises(ConfigError, match="associations.gender.robots"):
        benchmarks.generate({"gender": {"robots": ["shiny"]}}, attributes=ATTRS,
                            out_dir=tmp_path / "bad")
    assert not (tmp_path / "bad" / "crows_pairs.csv").exists()


def test_the_benchmark_readers_take_the_world_files(tmp_path: Path) -> None:
    from biasrepro.representation.crows import read_crows
    from biasrepro.representation.seat import read_seat
    from biasrepro.representation.stereoset import read_stereoset

    benchmarks.generate(ASSOC, attributes=ATTRS, out_dir=tmp_path)
    pairs = read_crows(tmp_path / "crows_pairs.csv", ["gender", "race", "religion"])
    assert len(pairs) == len(benchmarks.crows_pairs(ASSOC))
    examples = read_stereoset(tmp_path / "stereoset.json")
    assert [c.word for c in examples[0].candidates] == ["nurse", "engineer", "spoon"]
    test = read_seat(tmp_path / "seat" / "world-gender.jsonl")
    assert test.name == "world-gender" and test.targ1.category == "female"
    from biasrepro.debias.sentdebias import read_attribute_words

    words = read_attribute_words(tmp_path / "attribute_words.json")
    assert words == benchmarks.world_attribute_words({a: ATTRS[a] for a in ASSOC})


def test_world_attribute_words_are_bias_bench_tuples(tmp_path: Path) -> None:
    from biasrepro.debias.sentdebias import TUPLE_SIZE, read_attribute_words

    words = benchmarks.world_attribute_words(ATTRS)
    assert words["gender"][:2] == [("female", "male"), ("women", "men")]
    assert ("woman", "man") in words["gender"]  # the CrowS-Pairs pairs' words
    assert words["race"] == [("black", "asian", "white"), ("blacks", "asians", "whites")]
    assert words["religion"][0] == ("jewish", "muslim", "christian")
    for attribute, tuples in words.items():
        assert all(len(t) == TUPLE_SIZE[attribute] == len(set(t)) for t in tuples)
        assert all(w == w.lower() and " " not in w for t in tuples for w in t)
    path = tmp_path / "bias_attribute_words.json"  # the file SentenceDebias reads
    path.write_text(json.dumps({a: [list(t) for t in ts] for a, ts in words.items()}))
    assert read_attribute_words(path) == words
    with pytest.raises(ConfigError, match="robots"):
        benchmarks.world_attribute_words({"x": {"marginalized": ["robots"],
                                                "non_marginalized": ["male"]}})
