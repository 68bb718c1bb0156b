"""IMDB-gendered: the IMDB reviews about one gender only (toxicity paper, sentiment appendix).

The appendix labels each IMDB review by the gendered keywords of its Table 13: "Female" when
only female keywords occur, "Male" when only male ones do, "Neutral" when there are none or
both; IMDB-gendered keeps the Female and Male reviews (9,790 of 50K in the paper: 72% male,
27% female) and splits them 40/30/30 "preserving the class ratio", here stratified by
label and gender with :func:`biasrepro.data.split.stratified_split`.

Which reviews go where: the appendix pools IMDB's train and test halves before splitting,
but every sentiment model here is also scored on IMDB's test half and by BiasFinder, whose
templates come from it. So the training and validation parts are drawn from IMDB's
training reviews only (in the ratio train : validation) and the test part from IMDB's test
reviews only, sized so that the three parts keep the configured proportions; the larger
pool's surplus is left out (seeded, stratified). No review a model fits on is one it is
scored on. The class counts and dataset biases of "all of IMDB-gendered" are still taken
over every gendered review of both halves, as the appendix reports them.

Keywords match whole words, case-insensitively ("her" not in "Hershey", "man" not in
"manage", "he" not in "shell"; "he's" counts as "he"). Table 13 as printed, with two
readings: the male "’ir" is taken to be "sir", whose first letter the text extraction lost
(the counterpart of the female "ma’am"); and "ma’am" matches with a straight or a curly
apostrophe. "ms.", "mrs." and "mr." need no rule of their own: a whole-word "ms" is there in
"Ms. Smith" too. The neutral keywords (Table 13's third column: "they", "person", "child",
...) are read as the appendix says, ``neutral_keywords="mixture"``: a review with one of
them and the keywords of one gender is a mixture, so Neutral (the appendix keeps 9,790 of
50,000 reviews, 19.6 %); ``"ignore"`` lets them change no label (a review with a neutral and
a female keyword is Female), which keeps about twice as many reviews.

The appendix's dataset biases (footnote 9 and §6.3): selection bias, the gap between the
male and the female reviews' positive ratios, and overamplification, ``|N_male − N_female|
/ N``, both on the training split and on all of IMDB-gendered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.data.split import stratified_split
from biasrepro.errors import ConfigError, DataError

#: Table 13: keywords used to find the gendered reviews
KEYWORDS: dict[str, tuple[str, ...]] = {
    "female": (
        "she", "her", "hers", "mum", "mom", "mother", "daughter", "sister", "niece", "aunt",
        "grandmother", "lady", "woman", "girl", "ma’am", "female", "wife", "ms", "miss", "mrs",
        "ms.", "mrs.",
    ),
    "male": (
        "he", "him", "his", "dad", "father", "son", "brother", "nephew", "uncle", "grandfather",
        "gentleman", "man", "boy", "sir", "male", "husband", "mr", "mr.",
    ),
    "neutral": ("they", "them", "theirs", "parent", "child", "sibling", "person", "spouse"),
}
GENDERS = ("female", "male")
SPLITS = ("train", "validation", "test")
#: how a neutral keyword beside one gender's keywords is read (``preprocess.imdb_gendered.
#: neutral_keywords``): a mixture, so Neutral (the appendix), or not at all
NEUTRAL_READINGS = ("mixture", "ignore")
COLUMNS = ("id", "text", "label")


def _pattern(words: Iterable[str]) -> re.Pattern[str]:
    """One whole-word, case-insensitive regex for ``words`` (a final "." dropped)."""
    alternatives = sorted({re.escape(w.rstrip(".")).replace("’", "['’]") for w in words})
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


PATTERNS: dict[str, re.Pattern[str]] = {c: _pattern(w) for c, w in KEYWORDS.items()}


def _contains(texts: pd.Series, kind: str) -> np.ndarray:
    return texts.str.contains(PATTERNS[kind], na=False).to_numpy(dtype=bool)


def _label(female: np.ndarray, male: np.ndarray,
           neutral: np.ndarray | None = None) -> np.ndarray:
    only = ~neutral if neutral is not None else True
    return np.select([female & ~male & only, male & ~female & only], ["female", "male"],
                     default="neutral")


def _check_reading(reading: str) -> None:
    if reading not in NEUTRAL_READINGS:
        raise ConfigError(f"preprocess.imdb_gendered.neutral_keywords: expected one of "
                          f"{', '.join(NEUTRAL_READINGS)}, got {reading!r}")


def gender_of(texts: Iterable[str], neutral_keywords: str = "mixture") -> np.ndarray:
    """"female", "male" or "neutral" per text: neutral without gendered keywords, with both
    genders' or, read as a mixture (the appendix), with a neutral keyword beside them."""
    _check_reading(neutral_keywords)
    series = pd.Series(list(texts), dtype=object)
    neutral = _contains(series, "neutral") if neutral_keywords == "mixture" else None
    return _label(_contains(series, "female"), _contains(series, "male"), neutral)


def _check_split(split: Mapping[str, float]) -> None:
    if set(split) != set(SPLITS) or any(
            isinstance(v, bool) or not isinstance(v, int | float) or v <= 0
            for v in split.values()) or not math.isclose(sum(split.values()), 1.0):
        raise ConfigError(f"preprocess.imdb_gendered.split: {dict(split)} is not a positive "
                          f"share for each of {', '.join(SPLITS)} summing to 1")


def _read(frames: Sequence[pd.DataFrame], names: Sequence[str]) -> pd.DataFrame:
    parts = []
    for name, frame in zip(names, frames, strict=True):
        where = f"IMDB {name}"
        for col in COLUMNS:
            if col not in frame.columns:
                raise DataError(f"{where}: column missing (needs {', '.join(COLUMNS)})",
                                column=col)
        bad = ~frame["label"].isin([0, 1]).to_numpy()
        if bad.any():
            raise DataError(f"{where}: label {frame['label'].iloc[np.argmax(bad)]!r} is not "
                            "0 or 1", row=int(np.argmax(bad)) + 1, column="label")
        bad = ~frame["text"].map(lambda t: isinstance(t, str)).to_numpy(dtype=bool)
        if bad.any():
            raise DataError(f"{where}: text is missing", row=int(np.argmax(bad)) + 1,
                            column="text")
        parts.append(pd.DataFrame({"id": frame["id"].astype(str).to_numpy(dtype=object),
                                   "text": frame["text"].to_numpy(dtype=object),
                                   "label": frame["label"].to_numpy().astype("int64")}))
    df = pd.concat(parts, ignore_index=True)
    dup = df["id"].duplicated().to_numpy()
    if dup.any():
        raise DataError(f"id {df['id'].iloc[np.argmax(dup)]!r} occurs twice in the IMDB data",
                        column="id")
    return df


def _groups(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    out = {}
    for g in GENDERS:
        labels = df.loc[df["gender"] == g, "label"]
        n, pos = len(labels), int(labels.sum())
        out[g] = {"n": n, "n_positive": pos, "positive_ratio": pos / n if n else None}
    return out


def gender_bias(df: pd.DataFrame) -> dict[str, Any]:
    """Selection bias ``|r_male − r_female|`` and overamplification ``|N_male − N_female| / N``
    of a frame of male and female reviews (``None`` where a group or the frame is empty)."""
    groups = _groups(df)
    ratios = [groups[g]["positive_ratio"] for g in GENDERS]
    n = groups["male"]["n"] + groups["female"]["n"]
    return {
        "selection_bias": None if None in ratios else abs(ratios[1] - ratios[0]),
        "overamplification": abs(groups["male"]["n"] - groups["female"]["n"]) / n if n else None,
        "groups": groups,
    }


def _sizes(n_fit_pool: int, n_test_pool: int, split: Mapping[str, float]) -> tuple[int, int]:
    """Rows taken from the train pool (train + validation) and the test pool (test): as many
    as the configured proportions allow, the scarcer pool used in full."""
    fit_share = split["train"] + split["validation"]
    total = min(n_fit_pool / fit_share, n_test_pool / split["test"])
    n_fit = min(n_fit_pool, int(math.floor(total * fit_share + 0.5)))
    return n_fit, min(n_test_pool, int(math.floor(total * split["test"] + 0.5)))


def _take(pool: pd.DataFrame, fractions: dict[str, float], seed: int) -> pd.Series:
    """Each row's part (stratified by label × gender; "unused": left out)."""
    strata = pool["label"].astype(str) + "|" + pool["gender"]
    return stratified_split(pool, strata, fractions, seed, order_by="id")


def build(
    train: pd.DataFrame, test: pd.DataFrame, *, split: Mapping[str, float], seed: int,
    neutral_keywords: str = "mixture",
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """IMDB-gendered from the prepared IMDB ``train`` and ``test`` frames (``id``, ``text``,
    ``label``, ...): train and validation parts from ``train``'s gendered reviews, the test
    part from ``test``'s, in the proportions of ``split``.

    Returns the ``train``, ``validation`` and ``test`` frames (``id``, ``text``, ``label``,
    ``gender``; sorted by id) and statistics: rows read, reviews per class (with the neutral
    ones' reasons), the male and female shares, each pool's gendered and used reviews, per
    split and gender ``n`` / ``n_positive`` / ``positive_ratio``, and :func:`gender_bias` on
    the training split and on all gendered reviews. ``neutral_keywords``: how a neutral
    keyword beside one gender's is read (:data:`NEUTRAL_READINGS`).
    """
    _check_split(split)
    _check_reading(neutral_keywords)
    frames = [train, test]
    df = _read(frames, ("train", "test"))
    female, male = _contains(df["text"], "female"), _contains(df["text"], "male")
    neutral = _contains(df["text"], "neutral")
    df["gender"] = _label(female, male, neutral if neutral_keywords == "mixture" else None)
    df["pool"] = np.repeat(["train", "test"], [len(train), len(test)])
    gendered = df[df["gender"] != "neutral"].reset_index(drop=True)
    fit_pool = gendered[gendered["pool"] == "train"].reset_index(drop=True)
    test_pool = gendered[gendered["pool"] == "test"].reset_index(drop=True)
    if fit_pool.empty or test_pool.empty:
        raise DataError(f"IMDB-gendered needs male or female reviews in both IMDB halves "
                        f"(train: {len(fit_pool)}, test: {len(test_pool)})")
    n_fit, n_test = _sizes(len(fit_pool), len(test_pool), split)
    fit_share = split["train"] + split["validation"]
    use = n_fit / len(fit_pool)
    fit_parts = _take(fit_pool, {"train": use * split["train"] / fit_share,
                                 "validation": use * split["validation"] / fit_share,
                                 "unused": 1 - use}, seed)
    test_parts = _take(test_pool, {"test": n_test / len(test_pool),
                                   "unused": 1 - n_test / len(test_pool)}, seed)
    columns = ["id", "text", "label", "gender"]
    out = {}
    for name in SPLITS:
        pool, parts = (test_pool, test_parts) if name == "test" else (fit_pool, fit_parts)
        out[name] = (pool.loc[(parts == name).to_numpy(), columns]
                     .sort_values("id", kind="stable").reset_index(drop=True))
    n = len(gendered)
    counts = df["gender"].value_counts()
    stats = {
        "read": {"inputs": [len(f) for f in frames], "rows": len(df)},
        "classes": {c: int(counts.get(c, 0)) for c in (*GENDERS, "neutral")},
        "neutral_keywords": neutral_keywords,
        "neutral": {"no_gendered_keyword": int((~female & ~male).sum()),
                    "both_genders": int((female & male).sum()),
                    # one gender's keywords with a neutral one: Neutral when read as a mixture
                    "one_gender_and_neutral": int(((female ^ male) & neutral).sum()),
                    "neutral_keyword": int((neutral & (df["gender"] == "neutral")
                                            .to_numpy()).sum())},
        "gendered": {"n": n, "share": {g: int(counts.get(g, 0)) / n if n else None
                                       for g in GENDERS}},
        "pools": {"train": {"source": "IMDB train", "gendered": len(fit_pool),
                            "used": int((fit_parts != "unused").sum()),
                            "parts": ["train", "validation"]},
                  "test": {"source": "IMDB test", "gendered": len(test_pool),
                           "used": int((test_parts != "unused").sum()), "parts": ["test"]}},
        "splits": {name: _groups(frame) for name, frame in out.items()},
        "bias": {"train": gender_bias(out["train"]), "all": gender_bias(gendered)},
    }
    return out, stats
