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
    ("Each child in the audience laughed, and her too.", "female"),  # neutral + female
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
    out, stats = build(_imdb(), split=SPLIT, seed=0)
    assert stats["read"] == {"inputs": [18, 18], "rows": 36}
    assert stats["classes"] == {"female": 10, "male": 20, "neutral": 6}
    assert stats["neutral"] == {"no_gendered_keyword": 5, "both_genders": 1,
                                "neutral_keyword": 1}
    assert stats["gendered"] == {"n": 30, "share": {"female": pytest.approx(1 / 3),
                                                    "male": pytest.approx(2 / 3)}}
    # all of IMDB-gendered: r_male = 12/20, r_female = 5/10; |20 - 10| / 30
    everything = stats["bias"]["all"]
    assert everything["selection_bias"] == pytest.approx(0.1)
    assert everything["overamplification"] == pytest.approx(1 / 3)
    # per stratum (largest remainder, ties to the split listed first):
    # male+ 12 -> 5/4/3, male- 8 -> 3/3/2, female+ 5 -> 2/2/1, female- 5 -> 2/2/1
    assert stats["splits"]["train"] == {
        "female": {"n": 4, "n_positive": 2, "positive_ratio": 0.5},
        "male": {"n": 8, "n_positive": 5, "positive_ratio": 0.625}}
    assert stats["splits"]["validation"]["male"] == {"n": 7, "n_positive": 4,
                                                     "positive_ratio": pytest.approx(4 / 7)}
    assert stats["splits"]["test"]["female"] == {"n": 2, "n_positive": 1,
                                                 "positive_ratio": 0.5}
    train = stats["bias"]["train"]
    assert train["selection_bias"] == pytest.approx(0.125)
    assert train["overamplification"] == pytest.approx(4 / 12)
    assert {k: len(v) for k, v in out.items()} == {"train": 12, "validation": 11, "test": 7}


def test_split_frames_partition_the_gendered_reviews() -> None:
    out, _ = build(_imdb(), split=SPLIT, seed=0)
    for frame in out.values():
        assert frame.columns.tolist() == ["id", "text", "label", "gender"]
        assert frame["id"].is_monotonic_increasing
        assert set(frame["gender"]) <= {"female", "male"}
        assert frame["label"].dtype == "int64"
    ids = pd.concat([f["id"] for f in out.values()])
    assert ids.is_unique and len(ids) == 30
    assert not ids.isin(["r030", "r031", "r032", "r033", "r034", "r035"]).any()


def test_seeded_and_independent_of_input_order() -> None:
    a, stats_a = build(_imdb(), split=SPLIT, seed=4)
    b, stats_b = build(_imdb()[::-1], split=SPLIT, seed=4)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name])
    assert stats_a["splits"] == stats_b["splits"] and stats_a["bias"] == stats_b["bias"]
    c, _ = build(_imdb(), split=SPLIT, seed=5)
    assert a["train"]["id"].tolist() != c["train"]["id"].tolist()


def test_empty_groups_give_no_bias() -> None:
    assert gender_bias(pd.DataFrame({"label": [1, 0], "gender": ["male", "male"]})) == {
        "selection_bias": None, "overamplification": 1.0,
        "groups": {"female": {"n": 0, "n_positive": 0, "positive_ratio": None},
                   "male": {"n": 2, "n_positive": 1, "positive_ratio": 0.5}}}


def test_bad_inputs_are_refused() -> None:
    frames = _imdb()
    with pytest.raises(DataError, match="column 'label': IMDB input 2 of 2: column missing"):
        build([frames[0], frames[1].drop(columns="label")], split=SPLIT, seed=0)
    bad = frames[0].copy()
    bad.loc[2, "label"] = 3
    with pytest.raises(DataError, match="row 3, column 'label'"):
        build([bad], split=SPLIT, seed=0)
    bad = frames[0].copy()
    bad["text"] = bad["text"].astype(object)
    bad.loc[1, "text"] = None
    with pytest.raises(DataError, match="row 2, column 'text'"):
        build([bad], split=SPLIT, seed=0)
    with pytest.raises(DataError, match="'r000' occurs twice"):
        build([frames[0], frames[0]], split=SPLIT, seed=0)
    with pytest.raises(DataError, match="no IMDB data"):
        build([], split=SPLIT, seed=0)
    for split in ({"train": 0.5, "test": 0.5}, {"train": 0.5, "validation": 0.3, "test": 0.3}):
        with pytest.raises(ConfigError, match="preprocess.imdb_gendered.split"):
            build(frames, split=split, seed=0)
