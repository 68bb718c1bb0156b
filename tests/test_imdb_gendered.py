"""IMDB-gendered (sentiment appendix): Table 13 keywords, stratified split, dataset biases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasrepro.data.imdb_gendered import KEYWORDS, build, gender_bias, gender_of
from biasrepro.errors import ConfigError, DataError

SPLIT = {"train": 0.4, "validation": 0.3, "test": 0.3}


@pytest.mark.parametrize(("text", "gender"), [
    ("She was brilliant as the weary detective.", "female"),
    ("The director and his crew built a gorgeous set.", "male"),
    ("Her brother steals every scene he is in.", "neutral"),  # both
    ("A dull plot with nothing to say.", "neutral"),  # none
    ("The cast were wonderful; they carried the film.", "neutral"),  # a neutral keyword only
    ("Each child in the audience laughed, and her too.", "neutral"),  # a mixture
    # word boundaries: no "her"/"she" in Hershey, "man" in manage, "he"/"she" in shell
    ("I ate a Hershey bar; the shell of a story did not manage to hold the theme.", "neutral"),
    ("Mystery and Manhattan, Sonic hisses: the boyish charm of the mothership.", "neutral"),
    ("He's the best thing in it.", "male"),
    ("MOTHER knows best, and the script knows it.", "female"),
    ("Ms. Clarke plays the lead with grace.", "female"),
    ("mrs.Dalloway would have walked out.", "female"),
    ("MR. Grant is hilarious as the clumsy baker.", "male"),
    ("Thank you, ma'am, for this gem.", "female"),
    ("Thank you, ma’am, for this gem.", "female"),
    ("Yes sir, a classic of the genre.", "male"),
    ("I will miss this show when it ends.", "female"),  # Table 13's "miss", as printed
])
def test_keywords_classify_whole_words_case_insensitively(text: str, gender: str) -> None:
    assert gender_of([text]).tolist() == [gender]


def test_a_neutral_keyword_beside_one_gender_is_a_mixture_unless_ignored() -> None:
    """The appendix: "none of the identity words or a mixture is Neutral" (the paper
    profile's reading); ``ignore`` keeps the project's earlier one, where a neutral keyword
    changes no label."""
    texts = ["Each child in the audience laughed, and her too.", "They said he was great.",
             "His only child stole the show.", "Her brother and they argue.", "His best film."]
    assert gender_of(texts).tolist() == ["neutral"] * 4 + ["male"]
    assert gender_of(texts, "ignore").tolist() == ["female", "male", "male", "neutral", "male"]
    with pytest.raises(ConfigError, match="neutral_keywords: expected one of mixture, ignore"):
        gender_of(texts, "both")


def test_table_13_lists() -> None:
    assert len(KEYWORDS["female"]) == 22 and len(KEYWORDS["male"]) == 18
    assert len(KEYWORDS["neutral"]) == 8
    assert "sir" in KEYWORDS["male"] and not set(KEYWORDS["female"]) & set(KEYWORDS["male"])


def test_gender_of_is_vectorised_over_a_series() -> None:
    texts = pd.Series(["his film", "her film", "their film", "his and her film"])
    out = gender_of(texts)
    assert isinstance(out, np.ndarray)
    assert out.tolist() == ["male", "female", "neutral", "neutral"]


def _imdb() -> list[pd.DataFrame]:
    """20 male reviews (12 positive), 10 female (5 positive), 6 neutral, in two inputs."""
    male = [(f"His turn as the captain in part {i} was {'moving' if i < 12 else 'wooden'}.",
             int(i < 12)) for i in range(20)]
    female = [(f"She gives scene {i} a {'warm' if i < 5 else 'flat'} reading.", int(i < 5))
              for i in range(10)]
    neutral = [(f"Scene {i} looked cheap.", i % 2) for i in range(4)] + [
        ("He and she bicker for two hours.", 1), ("They all overact.", 0)]
    rows = male + female + neutral
    df = pd.DataFrame({"id": [f"r{i:03d}" for i in range(len(rows))],
                       "text": [t for t, _ in rows],
                       "label": np.array([y for _, y in rows], dtype="int64"),
                       "rating": pd.array([None] * len(rows), dtype="Int64")})
    return [df.iloc[::2].reset_index(drop=True), df.iloc[1::2].reset_index(drop=True)]


def test_build_counts_and_biases_by_hand() -> None:
    out, stats = build(*_imdb(), split=SPLIT, seed=0)
    assert stats["read"] == {"inputs": [18, 18], "rows": 36}
    assert stats["classes"] == {"female": 10, "male": 20, "neutral": 6}
    assert stats["neutral"] == {"no_gendered_keyword": 5, "both_genders": 1,
                                "one_gender_and_neutral": 0, "neutral_keyword": 1}
    assert stats["gendered"] == {"n": 30, "share": {"female": pytest.approx(1 / 3),
                                                    "male": pytest.approx(2 / 3)}}
    # all gendered reviews of both halves: r_male = 12/20, r_female = 5/10; |20 - 10| / 30
    everything = stats["bias"]["all"]
    assert everything["selection_bias"] == pytest.approx(0.1)
    assert everything["overamplification"] == pytest.approx(1 / 3)
    # 15 gendered reviews in each half: all 15 of IMDB train become train + validation
    # (4 : 3), and 15 * 0.3 / 0.7 = 6.4 -> 6 of IMDB test become the test part
    assert stats["pools"]["train"] | {"parts": None} == {
        "source": "IMDB train", "gendered": 15, "used": 15, "parts": None}
    assert stats["pools"]["test"]["gendered"] == 15 and stats["pools"]["test"]["used"] == 6
    # 4 : 3 within each label × gender stratum (largest remainder): 8 and 7 of 15
    assert {k: len(v) for k, v in out.items()} == {"train": 8, "validation": 7, "test": 6}
    assert sum(stats["splits"]["test"][g]["n"] for g in ("male", "female")) == 6


def test_no_review_is_both_fitted_and_scored() -> None:
    """Train and validation come from IMDB train only, test from IMDB test only."""
    train, test = _imdb()
    out, _ = build(train, test, split=SPLIT, seed=0)
    assert set(out["train"]["id"]) | set(out["validation"]["id"]) <= set(train["id"])
    assert set(out["test"]["id"]) <= set(test["id"])
    for frame in out.values():
        assert frame.columns.tolist() == ["id", "text", "label", "gender"]
        assert frame["id"].is_monotonic_increasing
        assert set(frame["gender"]) <= {"female", "male"}
        assert frame["label"].dtype == "int64"
    ids = pd.concat([f["id"] for f in out.values()])
    assert ids.is_unique
    assert not ids.isin(["r030", "r031", "r032", "r033", "r034", "r035"]).any()


def test_proportions_follow_the_scarcer_half() -> None:
    """Fewer gendered test reviews: all of them are the test part, train + validation
    shrink to keep 40/30/30."""
    train, test = _imdb()
    out, stats = build(train, test.iloc[:5].reset_index(drop=True), split=SPLIT, seed=0)
    n_test = stats["pools"]["test"]["gendered"]
    assert len(out["test"]) == n_test == stats["pools"]["test"]["used"]
    assert len(out["train"]) + len(out["validation"]) == round(n_test * 0.7 / 0.3)


def test_seeded_and_independent_of_input_order() -> None:
    train, test = _imdb()
    a, stats_a = build(train, test, split=SPLIT, seed=4)
    b, stats_b = build(train[::-1], test[::-1], split=SPLIT, seed=4)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name])
    assert stats_a["splits"] == stats_b["splits"] and stats_a["bias"] == stats_b["bias"]
    c, _ = build(train, test, split=SPLIT, seed=5)
    assert a["train"]["id"].tolist() != c["train"]["id"].tolist()


def test_empty_groups_give_no_bias() -> None:
    assert gender_bias(pd.DataFrame({"label": [1, 0], "gender": ["male", "male"]})) == {
        "selection_bias": None, "overamplification": 1.0,
        "groups": {"female": {"n": 0, "n_positive": 0, "positive_ratio": None},
                   "male": {"n": 2, "n_positive": 1, "positive_ratio": 0.5}}}


def test_bad_inputs_are_refused() -> None:
    train, test = _imdb()
    with pytest.raises(DataError, match="column 'label': IMDB test: column missing"):
        build(train, test.drop(columns="label"), split=SPLIT, seed=0)
    bad = train.copy()
    bad.loc[2, "label"] = 3
    with pytest.raises(DataError, match="row 3, column 'label'"):
        build(bad, test, split=SPLIT, seed=0)
    bad = train.copy()
    bad["text"] = bad["text"].astype(object)
    bad.loc[1, "text"] = None
    with pytest.raises(DataError, match="row 2, column 'text'"):
        build(bad, test, split=SPLIT, seed=0)
    with pytest.raises(DataError, match="'r000' occurs twice"):
        build(train, train, split=SPLIT, seed=0)
    with pytest.raises(DataError, match="both IMDB halves"):
        build(train, test.iloc[-3:], split=SPLIT, seed=0)  # neutral reviews only
    for split in ({"train": 0.5, "test": 0.5}, {"train": 0.5, "validation": 0.3, "test": 0.3},
                  {"train": 0.7, "validation": 0.0, "test": 0.3}):
        with pytest.raises(ConfigError, match="preprocess.imdb_gendered.split"):
            build(train, test, split=split, seed=0)
