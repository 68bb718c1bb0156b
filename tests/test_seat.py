"""SEAT: file format, hand-derived effect size, p-values, encoder."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import realdata
from fixtures.tiny_models import CORPUS, tiny_masked_lm

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.representation import seat
from biasrepro.representation.seat import (
    TESTS,
    Concept,
    SeatTest,
    average_absolute_effect,
    encode,
    load_encoder,
    load_tests,
    permutation_p_value,
    read_seat,
    run_seat,
)

# ---------------------------------------------------------------- hand-derived effect size

#: 2-d embeddings; non-unit lengths on purpose (cosines normalise them)
HAND = {
    "x1": (2.0, 0.0), "x2": (0.6, 0.8),        # X
    "y1": (0.0, 3.0), "y2": (0.8, 0.6),        # Y
    "a1": (1.0, 0.0), "a2": (3.0, 4.0),        # A: unit vectors (1, 0) and (0.6, 0.8)
    "b1": (0.0, 0.5),                          # B: unit vector (0, 1)
}


def concept(name: str, *examples: str) -> Concept:
    return Concept(name, tuple(examples))


def hand_test() -> SeatTest:
    return SeatTest("hand", concept("X", "x1", "x2"), concept("Y", "y1", "y2"),
                    concept("A", "a1", "a2"), concept("B", "b1"))


def lookup(texts):
    return np.array([HAND[t] for t in texts])


def test_effect_size_and_p_value_by_hand():
    # For a unit w = (w1, w2): mean_a cos(w, a) = (w1 + 0.6 w1 + 0.8 w2) / 2 = 0.8 w1 + 0.4 w2,
    # cos(w, b) = w2, so s(w) = 0.8 w1 - 0.6 w2:
    #   s(x1) = 0.8, s(x2) = 0.48 - 0.48 = 0, s(y1) = -0.6, s(y2) = 0.64 - 0.36 = 0.28.
    # mean_X s = 0.4, mean_Y s = -0.16, numerator 0.56.
    # X u Y: mean 0.48 / 4 = 0.12, deviations 0.68, -0.12, -0.72, 0.16,
    # squares 0.4624 + 0.0144 + 0.5184 + 0.0256 = 1.0208; sample variance (ddof=1) 1.0208 / 3.
    # d = 0.56 / sqrt(1.0208 / 3) = 0.960015...
    # p: the C(4, 2) = 6 partitions have sum_{X'} s = 0.8 (observed), 0.2, 1.08, -0.6, 0.28,
    # -0.32; two are >= 0.8, so the exact one-sided p-value is 2 / 6.
    table = run_seat({"gender": [hand_test()]}, lookup, samples=100, seed=0)
    row = table.iloc[0]
    assert row["effect_size"] == pytest.approx(0.56 / math.sqrt(1.0208 / 3), rel=1e-12)
    assert row["effect_size"] == pytest.approx(0.960015, abs=1e-6)
    assert row["p_value"] == pytest.approx(2 / 6, rel=1e-12)
    assert (row["test"], row["attribute"], row["n_targets"], row["n_attributes"]) == (
        "hand", "gender", 4, 3)


def test_swapping_the_targets_negates_the_effect_and_averages_absolute_values():
    t = hand_test()
    swapped = SeatTest("swapped", t.targ2, t.targ1, t.attr1, t.attr2)
    table = run_seat({"race": [t, swapped], "religion": [swapped]}, lookup, samples=100)
    d = table["effect_size"].to_numpy()
    assert d[1] == pytest.approx(-d[0]) and d[2] == pytest.approx(-d[0])
    assert table["p_value"].tolist() == pytest.approx([2 / 6, 5 / 6, 5 / 6])
    assert average_absolute_effect(table) == pytest.approx({"race": d[0], "religion": d[0]})


# ---------------------------------------------------------------- permutation p-values

def naive_exact(s_x, s_y) -> float:
    """sent-bias's loop: every equal-size partition, ties count as exceeding."""
    s = list(s_x) + list(s_y)
    observed = sum(s[: len(s_x)])
    hits = total = 0
    for xi in itertools.combinations(range(len(s)), len(s_x)):
        hits += sum(s[i] for i in xi) >= observed
        total += 1
    return hits / total


@pytest.mark.parametrize("chunk", [seat.CHUNK_ELEMENTS, 7])
def test_exact_p_value_equals_naive_loop(monkeypatch, chunk):
    monkeypatch.setattr(seat, "CHUNK_ELEMENTS", chunk)   # 7: many chunks, one not full
    rng = np.random.default_rng(3)
    # multiples of 1/4 are summed exactly, so the many ties are exact in both computations
    ties = rng.integers(-4, 5, size=12) / 4
    floats = rng.normal(size=10) + np.r_[np.full(5, 0.5), np.zeros(5)]
    for s_x, s_y in [(ties[:6], ties[6:]), (floats[:5], floats[5:])]:
        p = permutation_p_value(s_x, s_y, samples=math.comb(len(s_x) * 2, len(s_x)))
        assert p == naive_exact(s_x, s_y)
    # the observed partition is counted: a perfect separation gives 1 / C(2n, n)
    assert permutation_p_value([3.0, 2.0], [1.0, 0.0], samples=6) == 1 / 6


def test_sampled_p_value_is_seeded_and_estimates_the_exact_one():
    rng = np.random.default_rng(5)
    s_x, s_y = rng.normal(size=9) + 0.4, rng.normal(size=9)   # C(18, 9) = 48620 partitions
    exact = permutation_p_value(s_x, s_y, samples=48620)
    assert exact == naive_exact(s_x, s_y)
    sampled = permutation_p_value(s_x, s_y, samples=20_000, seed=1)
    assert sampled == permutation_p_value(s_x, s_y, samples=20_000, seed=1)
    assert sampled != permutation_p_value(s_x, s_y, samples=20_000, seed=2)
    assert (sampled * 20_000) == pytest.approx(round(sampled * 20_000))   # (1 + k) / samples
    assert abs(sampled - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000)
    # the observed partition is counted once: nothing random reaches a perfect separation
    assert permutation_p_value(np.arange(9.0) + 100, np.arange(9.0), samples=500) == 1 / 500


def test_p_value_rejects_bad_input():
    with pytest.raises(DataError, match="differ in size"):
        permutation_p_value([1.0, 2.0], [1.0], samples=10)
    with pytest.raises(ConfigError, match="at least 1"):
        permutation_p_value([1.0], [0.0], samples=0)


# ---------------------------------------------------------------- the file format

def write_test(path: Path, sets: dict) -> Path:
    """A test file laid out as bias-bench's: one JSON object, indented by 2."""
    path.write_text(json.dumps(sets, indent=2) + "\n", encoding="utf-8")
    return path


def fixture_sets(i: int) -> dict:
    return {
        "targ1": {"category": "MaleNames", "examples": [f"This is John{i}.", "That is Paul."]},
        "targ2": {"category": "FemaleNames", "examples": ["This is Amy.", "That is Joan."]},
        "attr1": {"category": "Career", "examples": ["This is a salary.", "That is work."]},
        "attr2": {"category": "Family", "examples": ["This is a home.", "Here are parents.",
                                                      "That is a child."]},
    }


def test_fixture_files_of_all_17_tests_load(tmp_path):
    names = [n for group in TESTS.values() for n in group]
    assert [len(TESTS[k]) for k in ("gender", "race", "religion")] == [6, 7, 4]
    assert len(set(names)) == 17
    for i, name in enumerate(names):
        write_test(tmp_path / f"{name}.jsonl", fixture_sets(i))
    tests = load_tests(tmp_path)
    assert {k: [t.name for t in v] for k, v in tests.items()} == TESTS
    first = tests["gender"][0]
    assert first.targ1 == Concept("MaleNames", ("This is John0.", "That is Paul."))
    assert first.attr2.category == "Family" and len(first.attr2.examples) == 3
    subset = load_tests(tmp_path, {"religion": ["sent-religion2b"]})
    i = names.index("sent-religion2b")
    assert subset["religion"][0].targ1.examples[0] == f"This is John{i}."


def test_real_seat_files_parse():
    directory = realdata("seat")
    tests = {t.name: t for group in load_tests(directory).values() for t in group}
    assert len(tests) == 17

    def sizes(name):
        return [len(getattr(tests[name], k).examples) for k in seat.KEYS]

    assert sizes("sent-weat6") == [64, 64, 101, 112]
    assert sizes("sent-weat3") == [256, 256, 215, 249]
    assert sizes("sent-weat5") == [128, 128, 40, 47]
    assert sizes("sent-angry_black_woman_stereotype_b") == [52, 52, 54, 54]
    assert sizes("sent-religion1") == [84, 84, 101, 112]
    assert tests["sent-weat6"].targ1.examples[0] == "This is John."
    assert tests["sent-religion1b"].targ2.category == "JewishTerms"


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("attr2"), r"column 'attr2'.*missing: attr2"),
    (lambda d: d.update(extra=1), r"column 'extra'.*unknown: extra"),
    (lambda d: d["targ1"].pop("category"), r"column 'targ1'.*missing 'category'"),
    (lambda d: d["attr1"].update(examples="text"), r"column 'attr1.examples'.*must be a list"),
    (lambda d: d["attr1"]["examples"].append(3), r"column 'attr1.examples'.*example 2"),
    (lambda d: d["attr2"].update(examples=[]), r"column 'attr2.examples'.*no examples"),
    (lambda d: d["targ2"]["examples"].append("This is Amy."),
     r"column 'targ2.examples'.*repeated example 'This is Amy.'"),
    (lambda d: d["targ2"]["examples"].append("This is Kate."),
     r"column 'targ2.examples'.*the targets must be the same size"),
    (lambda d: d.update(targ1=["x"]), r"column 'targ1'.*expected an object"),
])
def test_malformed_files_name_file_and_key(tmp_path, change, message):
    sets = fixture_sets(0)
    change(sets)
    path = write_test(tmp_path / "sent-bad.jsonl", sets)
    with pytest.raises(DataError, match=message) as info:
        read_seat(path)
    assert info.value.file == str(path)


def test_unreadable_files(tmp_path):
    bad = tmp_path / "lines.jsonl"
    bad.write_text('{"targ1": {}}\n{"targ2": {}}\n')
    with pytest.raises(DataError, match="not valid JSON") as info:
        read_seat(bad)
    assert info.value.file == str(bad)
    with pytest.raises(DataError, match="expected a JSON object"):
        read_seat(write_test(tmp_path / "list.jsonl", [1]))   # type: ignore[arg-type]
    with pytest.raises(DataError, match="not found"):
        load_tests(tmp_path, {"gender": ["sent-weat6"]})


# ---------------------------------------------------------------- the encoder

TEXTS = ["This is John.", "Amy is here.",
         "The person's name is a rather long one that goes on for a while, indeed.",
         "Here are parents.", "A dull, clumsy script and a terrible ending."]


@pytest.fixture(scope="module", params=["bert", "roberta"])
def tiny_mlm(request, tmp_path_factory) -> Path:
    """A random 1-layer masked LM of the architecture, saved like a real checkpoint."""
    return tiny_masked_lm(tmp_path_factory.mktemp(request.param), request.param, CORPUS,
                          vocab_size=300, max_length=128)


def one_at_a_time(model, tokenizer, texts):
    """bias-bench's ``_encode``: each text alone, last layer averaged, L2-normalised."""
    rows = []
    with torch.no_grad():
        for text in texts:
            enc = model(**tokenizer(text, return_tensors="pt"))["last_hidden_state"].mean(dim=1)
            enc = enc.view(-1).numpy()
            rows.append(enc / np.linalg.norm(enc))
    return np.stack(rows)


def test_encode_matches_bias_bench_one_text_at_a_time(tiny_mlm):
    from transformers import AutoModelForMaskedLM

    model, tokenizer = load_encoder(tiny_mlm)
    model.eval()
    expected = one_at_a_time(model, tokenizer, TEXTS)
    got = encode(TEXTS, tiny_mlm, batch_size=2)          # batches of mixed lengths, padded
    assert got.shape == (len(TEXTS), 16) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # a masked LM given as (model, tokenizer) runs through its base model, training flag kept
    mlm = AutoModelForMaskedLM.from_pretrained(tiny_mlm)
    mlm.train()
    np.testing.assert_allclose(encode(TEXTS, (mlm, tokenizer)), expected, atol=1e-5)
    assert mlm.training and mlm.base_model.training


def test_encode_cls_pooling(tiny_mlm):
    model, tokenizer = load_encoder(tiny_mlm)
    model.eval()
    with torch.no_grad():
        first = model(**tokenizer(TEXTS[0], return_tensors="pt")).last_hidden_state[0, 0].numpy()
    got = encode(TEXTS, (model, tokenizer), pooling="cls")
    np.testing.assert_allclose(got[0], first / np.linalg.norm(first), atol=1e-5)
    assert not np.allclose(got, encode(TEXTS, (model, tokenizer)), atol=1e-3)


def test_run_seat_with_a_tiny_model(tmp_path, tiny_mlm):
    from functools import partial

    write_test(tmp_path / "sent-weat6.jsonl", fixture_sets(0))
    tests = load_tests(tmp_path, {"gender": ["sent-weat6"]})
    encoder = partial(encode, model=load_encoder(tiny_mlm))
    table = run_seat(tests, encoder, samples=1000, seed=0)
    assert table.columns.tolist() == ["test", "attribute", "effect_size", "p_value",
                                      "n_targets", "n_attributes"]
    assert np.isfinite(table["effect_size"]).all()
    # C(4, 2) = 6 <= 1000 partitions: exact, so a multiple of 1/6
    assert table["p_value"].iloc[0] * 6 == pytest.approx(round(table["p_value"].iloc[0] * 6))
    assert table.equals(run_seat(tests, encoder, samples=1000, seed=0))


def test_encode_rejects_bad_arguments(tmp_path, tiny_mlm):
    with pytest.raises(ConfigError, match="unknown seat pooling"):
        encode(TEXTS, tiny_mlm, pooling="max")
    with pytest.raises(ModelError, match="not found"):
        encode(TEXTS, tmp_path / "missing")
    with pytest.raises(ModelError, match="returned shape"):
        run_seat({"gender": [hand_test()]}, lambda texts: np.zeros((1, 2)), samples=10)
