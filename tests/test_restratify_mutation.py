"""Tests written from mutation testing (scripts/mutation) of perturb/restratify.py: each pins a
behaviour a planted bug changed without any test noticing. Expectations are worked out by
hand from small frames; the augmenters are stubs (and a stand-in for nlpaug's masked-LM
augmenter), except where the settings handed to nlpaug are checked."""

from __future__ import annotations

import json
import logging
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.perturb.restratify import Augmenter, make_augmenter, restratify


def _frame(rows: list[tuple[str, str, int]], **extra) -> pd.DataFrame:
    """(text, signature, label) rows with ids r0, r1, ..."""
    text, signature, label = zip(*rows, strict=True)
    return pd.DataFrame({"id": [f"r{i}" for i in range(len(rows))], "text": list(text),
                         "label": list(label), "signature": list(signature), **extra})


def _indeed(texts: list[str]) -> list[str]:
    return [t + " indeed" for t in texts]


SMALL = [("she is mean", "female", 1), ("she is kind", "female", 0),
         ("she sings", "female", 0), ("he runs", "male", 1)]


def _message(err: pytest.ExceptionInfo) -> str:
    return str(err.value)


# --- input checks: exact messages ---------------------------------------------------------

def test_check_messages_are_exact() -> None:
    train = _frame(SMALL)
    with pytest.raises(ConfigError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=1.0, seed=0)
    assert _message(err) == "perturbation.restratify.target_ratio: 1.0 is not in (0, 1)"
    with pytest.raises(ConfigError) as err:
        restratify(train, identities=["female", "female"], augment=_indeed, target_ratio=0.5,
                   seed=0)
    assert _message(err) == "restratify: identities ['female', 'female'] repeat a group"
    with pytest.raises(DataError) as err:
        restratify(train.drop(columns="text"), identities=["female"], augment=_indeed,
                   target_ratio=0.5, seed=0)
    assert _message(err) == ("column 'text': column missing: re-stratification needs id, text, "
                             "label, signature")
    for col in ("source_id", "is_synthetic"):
        with pytest.raises(DataError) as err:
            restratify(train.assign(**{col: 1}), identities=["female"], augment=_indeed,
                       target_ratio=0.5, seed=0)
        assert _message(err) == (f"column '{col}': column already present: the data is already "
                                 "re-stratified")
    with pytest.raises(DataError) as err:
        restratify(train.assign(label=[1, 0, "7", 0]), identities=["female"], augment=_indeed,
                   target_ratio=0.5, seed=0)
    assert _message(err) == "row 3, column 'label': label '7' is not 0 or 1"
    with pytest.raises(DataError) as err:  # a numpy integer reads as a number
        restratify(train.assign(label=[1, 0, 7, 0]), identities=["female"], augment=_indeed,
                   target_ratio=0.5, seed=0)
    assert _message(err) == "row 3, column 'label': label 7 is not 0 or 1"


def test_selection_messages_are_exact() -> None:
    train = _frame(SMALL)
    with pytest.raises(ConfigError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=0.5, seed=0,
                   select="x")
    assert _message(err) == ("perturbation.restratify.select: 'x' is not one of "
                             "single_identity, identity_label")
    with pytest.raises(DataError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=0.5, seed=0,
                   select="identity_label", identity_threshold=0.5)
    assert _message(err) == "column 'female': identity column missing (select identity_label)"


def test_a_source_without_text_is_refused_at_its_row() -> None:
    """The female group's only positive (row 3, blank) would be augmented."""
    train = _frame([("she sings", "female", 0), ("she is kind", "female", 0),
                    ("   ", "female", 1), ("he runs", "male", 1)])
    with pytest.raises(DataError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=0.5, seed=0)
    assert _message(err) == ("row 3, column 'text': empty text: a source of synthetic "
                             "positives needs text")


def test_a_synthetic_id_clash_is_refused_with_its_column() -> None:
    """Target 0.6: female (3 rows, 1 positive) gets r0~1 and r0~2; the second clashes."""
    train = _frame(SMALL)
    train.loc[3, "id"] = "r0~2"
    with pytest.raises(DataError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=0.6, seed=0)
    assert _message(err) == ("column 'id': synthetic id 'r0~2' is already an id of the "
                             "training data")


def test_the_first_blank_source_in_source_order_is_named() -> None:
    """Target 0.75: 2 copies from r0 and the blank r1; seed 0 draws r0 first, so the error
    names row 2, not the first source's row."""
    train = _frame([("she is mean", "female", 1), ("  ", "female", 1),
                    ("she sings", "female", 0), ("she is kind", "female", 0)])
    with pytest.raises(DataError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=0.75, seed=0)
    assert _message(err) == ("row 2, column 'text': empty text: a source of synthetic "
                             "positives needs text")


def test_a_group_without_positives_is_refused_by_name() -> None:
    train = _frame([("she sings", "female", 0), ("he runs", "male", 1)])
    with pytest.raises(DataError) as err:
        restratify(train, identities=["female"], augment=_indeed, target_ratio=0.5, seed=0)
    assert _message(err) == ("column 'label': identity group 'female' needs 1 synthetic "
                             "positives but has no positive rows to augment")


# --- counts and stats ---------------------------------------------------------------------

def test_stats_and_log_of_a_small_run(caplog: pytest.LogCaptureFixture) -> None:
    """female: 3 rows, 1 positive -> 1 synthetic (2/4); male: 1/1 -> 0; a group without rows
    has no ratio. The output has a fresh 0..n-1 index."""
    with caplog.at_level(logging.INFO, logger="biasrepro.perturb.restratify"):
        out, stats = restratify(_frame(SMALL), identities=["female", "male", "jewish"],
                                augment=_indeed, target_ratio=0.5, seed=0,
                                protected_words=["She", "he"])
    assert list(out.index) == [0, 1, 2, 3, 4]
    assert out["id"].tolist()[-1] == "r0~1" and out["text"].tolist()[-1] == "she is mean indeed"
    assert stats == {
        "target_ratio": 0.5,
        "augmenter": {},
        "protected_words": ["he", "she"],
        "rows": {"original": 4, "synthetic": 1, "total": 5},
        "retries": {"max": 3, "redone": 0},
        "groups": {
            "female": {"before": {"n": 3, "n_positive": 1, "positive_ratio": 1 / 3},
                       "after": {"n": 4, "n_positive": 2, "positive_ratio": 0.5},
                       "synthetic": 1, "unchanged": 0},
            "male": {"before": {"n": 1, "n_positive": 1, "positive_ratio": 1.0},
                     "after": {"n": 1, "n_positive": 1, "positive_ratio": 1.0},
                     "synthetic": 0, "unchanged": 0},
            "jewish": {"before": {"n": 0, "n_positive": 0, "positive_ratio": None},
                       "after": {"n": 0, "n_positive": 0, "positive_ratio": None},
                       "synthetic": 0, "unchanged": 0},
        },
    }
    assert [r.getMessage() for r in caplog.records] == [
        "restratify female: 1 synthetic positives (0 unchanged), ratio 0.3333333333333333 -> 0.5",
        "restratify male: 0 synthetic positives (0 unchanged), ratio 1.0 -> 1.0",
        "restratify jewish: 0 synthetic positives (0 unchanged), ratio None -> None",
    ]


def test_no_synthetic_rows_at_all() -> None:
    """Every group already at the target: nothing is added and nothing is unchanged."""
    out, stats = restratify(_frame(SMALL), identities=["male"], augment=_indeed,
                            target_ratio=0.5, seed=0)
    assert len(out) == 4 and stats["rows"]["synthetic"] == 0
    assert stats["groups"]["male"]["unchanged"] == 0


def test_more_synthetic_rows_than_one_augmenter_batch() -> None:
    """1 positive among 300 rows: 298 synthetic rows, augmented in two batches (256 + 42);
    the stub fails (returns the source) on the 260th text of every call."""
    rows = [("she is mean", "female", 1)] + [(f"she word{i}", "female", 0) for i in range(299)]
    calls: list[int] = []

    def stub(texts: list[str]) -> list[str]:
        calls.append(len(texts))
        return [t if len(calls) == 2 and i == 3 else t + " indeed"
                for i, t in enumerate(texts)]

    out, stats = restratify(_frame(rows), identities=["female"], augment=stub,
                            target_ratio=0.5, seed=0)
    synth = out[out["is_synthetic"]]
    assert len(synth) == 298 and calls[:2] == [256, 42]
    # the second batch's 4th text (the 260th) failed once and was redone
    assert calls == [256, 42, 1] and stats["retries"]["redone"] == 1
    assert (synth["text"] == "she is mean indeed").all()
    assert synth["id"].tolist() == [f"r0~{i}" for i in range(1, 299)]
    assert stats["groups"]["female"]["unchanged"] == 0


def test_failures_in_a_later_batch_are_counted_for_their_group() -> None:
    """The stub fails every text from its second call on: the 42 texts of the second batch
    keep their source text after 3 retries each."""
    rows = [("she is mean", "female", 1)] + [(f"she word{i}", "female", 0) for i in range(299)]
    n = [0]

    def stub(texts: list[str]) -> list[str]:
        n[0] += 1
        return list(texts) if n[0] >= 2 else _indeed(texts)

    out, stats = restratify(_frame(rows), identities=["female"], augment=stub,
                            target_ratio=0.5, seed=0)
    assert stats["groups"]["female"]["unchanged"] == 42
    assert stats["retries"]["redone"] == 42 * 3
    assert out["text"].iloc[300 + 255] == "she is mean indeed"
    assert (out["text"].iloc[300 + 256:] == "she is mean").all()


def test_a_retry_answered_with_the_wrong_number_of_texts_is_an_error() -> None:
    n = [0]

    def stub(texts: list[str]) -> list[str]:
        n[0] += 1
        return list(texts) if n[0] == 1 else []

    with pytest.raises(ValueError, match="zip"):
        restratify(_frame(SMALL), identities=["female"], augment=stub, target_ratio=0.5, seed=0)


def test_without_protected_words_nothing_is_checked_but_change() -> None:
    """No protected words: an augmentation that drops punctuation and words is accepted."""
    train = _frame([("she is mean !", "female", 1), ("she sings", "female", 0),
                    ("she is kind", "female", 0)])
    out, stats = restratify(train, identities=["female"], augment=lambda ts: ["other" for _ in ts],
                            target_ratio=0.5, seed=0)
    assert out["text"].iloc[-1] == "other" and stats["retries"]["redone"] == 0


def test_protected_words_match_case_insensitively() -> None:
    """The source's "She" must come back as "She": "she" counts as lost, and the text is
    redone until the stub keeps it."""
    train = _frame([("She is mean", "female", 1), ("she sings", "female", 0),
                    ("she is kind", "female", 0)])
    n = [0]

    def stub(texts: list[str]) -> list[str]:
        n[0] += 1
        return [t.lower() + " !" if n[0] == 1 else t + " !" for t in texts]

    out, stats = restratify(train, identities=["female"], augment=stub, target_ratio=0.5,
                            seed=0, protected_words=["she"])
    assert stats["retries"]["redone"] == 1 and out["text"].iloc[-1] == "She is mean !"


def test_identity_label_membership_at_threshold_missing_and_text_values() -> None:
    """Threshold 0.5: 0.5 is a member, <NA>, NaN and "n/a" are not. female members: r0 (pos),
    r1, r2 -> 1 synthetic copy of r0, which is also male (1.0): male counts it too."""
    train = _frame([("she is mean", "x", 1), ("she sings", "x", 0), ("she is kind", "x", 0),
                    ("he runs", "x", 0), ("he sits", "x", 0), ("they run", "x", 0)])
    train["female"] = pd.array([0.5, 0.5, 0.7, None, 0.0, None], dtype="Float64")
    train["male"] = pd.array([1.0, None, None, 1.0, 0.4, None], dtype="Float64")
    train["other"] = ["1", "n/a", "n/a", "n/a", "n/a", "0.2"]
    out, stats = restratify(train, identities=["female", "male", "other"], augment=_indeed,
                            target_ratio=0.5, seed=0, select="identity_label",
                            identity_threshold=0.5)
    g = stats["groups"]
    assert g["female"]["before"] == {"n": 3, "n_positive": 1, "positive_ratio": 1 / 3}
    assert g["female"]["synthetic"] == 1
    assert g["male"]["before"] == {"n": 2, "n_positive": 1, "positive_ratio": 0.5}
    assert g["male"]["synthetic"] == 0
    assert g["male"]["after"] == {"n": 3, "n_positive": 2, "positive_ratio": 2 / 3}
    assert g["other"]["before"] == {"n": 1, "n_positive": 1, "positive_ratio": 1.0}
    # the female copy of r0 has other "1": a member
    assert g["other"]["after"] == {"n": 2, "n_positive": 2, "positive_ratio": 1.0}


def test_identity_label_extra_members_below_threshold_or_missing_do_not_count() -> None:
    """male: 4 rows, 1 positive (r0) -> 2 copies of r0. They count for female when r0's
    female value is at least 0.5 (0.5 counts; <NA>, 0.4 and "n/a" do not). female alone: r4
    (positive) and r0 when a member, so it needs no copies of its own."""
    train = _frame([("he is mean", "x", 1), ("he sings", "x", 0), ("he is kind", "x", 0),
                    ("he sits", "x", 0), ("she runs", "x", 1)])
    train["male"] = pd.array([1.0, 1.0, 1.0, 1.0, None], dtype="Float64")
    train["female"] = pd.array([0.5, None, None, None, 1.0], dtype="Float64")
    out, stats = restratify(train, identities=["male", "female"], augment=_indeed,
                            target_ratio=0.5, seed=0, select="identity_label",
                            identity_threshold=0.5)
    assert stats["groups"]["male"]["synthetic"] == 2
    assert stats["groups"]["female"]["after"] == {"n": 4, "n_positive": 4,
                                                  "positive_ratio": 1.0}
    train["female"] = pd.array([None, None, None, None, 1.0], dtype="Float64")
    _, stats = restratify(train, identities=["male", "female"], augment=_indeed,
                          target_ratio=0.5, seed=0, select="identity_label",
                          identity_threshold=0.5)
    assert stats["groups"]["female"]["after"] == {"n": 1, "n_positive": 1,
                                                  "positive_ratio": 1.0}
    train["female"] = pd.array([0.4, None, None, None, 1.0], dtype="Float64")
    _, stats = restratify(train, identities=["male", "female"], augment=_indeed,
                          target_ratio=0.5, seed=0, select="identity_label",
                          identity_threshold=0.5)
    assert stats["groups"]["female"]["after"]["n"] == 1
    train["female"] = ["n/a", None, None, None, "1"]
    _, stats = restratify(train, identities=["male", "female"], augment=_indeed,
                          target_ratio=0.5, seed=0, select="identity_label",
                          identity_threshold=0.5)
    assert stats["groups"]["female"]["after"]["n"] == 1


# --- make_augmenter settings --------------------------------------------------------------

def test_augmenter_setting_messages_and_bounds() -> None:
    with pytest.raises(ConfigError) as err:
        make_augmenter({"augmenter": "wordnet", "aug_p": 0.3}, model_dir=None, seed=0)
    assert _message(err) == ("perturbation.restratify.augmenter: 'wordnet' is not one of "
                             "contextual, random")
    for bad in (True, 1.5, "0.3"):
        with pytest.raises(ConfigError, match=r"aug_p: .* is not in \(0, 1\]"):
            make_augmenter({"augmenter": "random", "aug_p": bad}, model_dir=None, seed=0)
    assert make_augmenter({"augmenter": "random", "aug_p": 1}, model_dir=None, seed=0)
    for bad in (True, 1.5, 0):
        with pytest.raises(ConfigError) as err:
            make_augmenter({"augmenter": "random", "aug_p": 0.3, "aug_max": bad},
                           model_dir=None, seed=0)
        assert _message(err) == (f"perturbation.restratify.aug_max: {bad!r} is not a positive "
                                 "integer or null")
    assert make_augmenter({"augmenter": "random", "aug_p": 0.3, "aug_max": 1},
                          model_dir=None, seed=0)._aug.aug_max == 1
    # top_k 1 is valid: the next complaint is the missing model
    with pytest.raises(ConfigError, match="needs a masked language model"):
        make_augmenter({"augmenter": "contextual", "aug_p": 0.3, "top_k": 1}, model_dir=None,
                       seed=0)


def test_model_type_messages(tmp_path: Path) -> None:
    settings = {"augmenter": "contextual", "aug_p": 0.3, "top_k": 5}
    (tmp_path / "config.json").write_text(json.dumps(["not", "a", "dict"]))
    with pytest.raises(ConfigError) as err:
        make_augmenter(settings, model_dir=str(tmp_path), seed=0)
    assert _message(err) == (f"perturbation.restratify: the masked LM in {tmp_path} is a None "
                             "model; nlpaug's contextual augmenter supports bert, roberta "
                             "(choose another model or augmenter 'random')")
    with pytest.raises(ModelError):
        make_augmenter(settings, model_dir=str(tmp_path / "none"), seed=0)


def test_random_augmenter_settings_reach_nlpaug() -> None:
    aug = make_augmenter({"augmenter": "random", "aug_p": 1}, model_dir=None, seed=0,
                         protected=["Muslim women"])
    assert aug.settings == {"augmenter": "random", "aug_p": 1}
    nl = aug._aug
    assert nl.action == "swap" and nl.aug_p == 1.0 and isinstance(nl.aug_p, float)
    assert nl.stopwords == ["MUSLIM", "Muslim", "WOMEN", "Women", "muslim", "women"]
    # whitespace only, as the cleaned texts are spaced (nlpaug's own split at punctuation
    # and glue it back)
    assert nl.tokenizer("a,  b") == ["a,", "b"] and nl.reverse_tokenizer(["a", ",", "b"]) == "a , b"
    # aug_p 1 with swaps: every word but the protected ones moves
    assert aug(["one two three"]) != ["one two three"]


# --- Augmenter with a stand-in nlpaug augmenter ---------------------------------------------

class _FakeAug:
    """Appends a draw of Python's global generator to each text; records its batches."""

    def __init__(self, drop: bool = False) -> None:
        self.batches: list[list[str]] = []
        self.drop = drop

    def augment(self, batch: list[str]) -> list[str]:
        self.batches.append(list(batch))
        out = [f"{t} {random.randrange(10**6)}" for t in batch]
        return out[:-1] if self.drop else out


def _draws(seed: int, call: int, n: int) -> list[int]:
    state = int(np.random.SeedSequence([seed, call]).generate_state(1)[0])
    rng = random.Random(state)
    return [rng.randrange(10**6) for _ in range(n)]


def test_each_call_is_seeded_from_seed_and_call_number() -> None:
    fake = _FakeAug()
    aug = Augmenter(fake, {"augmenter": "fake"}, seed=7)
    texts = [f"t{i}" for i in range(40)] + ["", "  "]
    first = aug(texts)
    assert fake.batches == [texts[:40]]          # one batch: no model batch size
    assert first[40:] == ["", ""]
    assert first[:40] == [f"t{i} {d}" for i, d in enumerate(_draws(7, 1, 40))]
    second = aug(["a", "b"])
    assert second == [f"{t} {d}" for t, d in zip("ab", _draws(7, 2, 2), strict=True)]
    assert aug.calls == 2


def test_a_wrong_number_of_augmented_texts_is_an_error() -> None:
    aug = Augmenter(_FakeAug(drop=True), {}, seed=0)
    with pytest.raises(RuntimeError) as err:
        aug(["a", "b", "c"])
    assert str(err.value) == "nlpaug returned 2 texts for 3"


class _Tokenizer:
    all_special_tokens = ["[UNK]", "[SEP]"]
    vocab = {"[UNK]": 0, "[SEP]": 1, "she": 2, "wrote": 3}

    def convert_tokens_to_ids(self, token: str) -> int:
        return self.vocab.get(token, 0)


class _Model:
    UNKNOWN_TOKEN = "[UNK]"

    def get_tokenizer(self) -> _Tokenizer:
        return _Tokenizer()


class _FakeMaskedLM:
    """Stands in for nlpaug's ContextualWordEmbsAug: answers with fixed outputs."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.model = _Model()
        self.outputs = outputs
        self.stopword_reg: re.Pattern[str] | None = None
        self.built: list[list[str]] = []

    def _build_stop_words(self, words: list[str]) -> None:
        self.built.append(list(words))
        self.stopword_reg = re.compile("(" + "|".join(map(re.escape, words)) + ")")

    def augment(self, batch: list[str]) -> list[str]:
        return [self.outputs[t] for t in batch]


def test_masked_lm_outputs_are_restored_and_special_tokens_dropped() -> None:
    """zyx and qwv are protected words outside the vocabulary: nlpaug gives [UNK] for them,
    put back in text order; an output with another special token becomes ""."""
    fake = _FakeMaskedLM({
        "zyx wrote about qwv": "[UNK] penned about [UNK].",
        "she wrote": "she [SEP] wrote",
        "a plain text": "a [UNK] text",
    })
    aug = Augmenter(fake, {}, seed=0, masked_lm=True, stopwords=["qwv", "she", "zyx"])
    out = aug(["zyx wrote about qwv", "she wrote"])
    assert out == ["zyx penned about qwv .", ""]
    assert fake.built == [["qwv", "she", "zyx"]]
    # no protected word in the batch: nlpaug gets none, and an [UNK] stays (then dropped)
    assert aug(["a plain text"]) == [""]
    assert fake.stopword_reg is None and len(fake.built) == 1


def test_contextual_settings_reach_nlpaug(tmp_path: Path) -> None:
    """Two tiny BERT masked LMs in directories of the same base name ("mlm", which names no
    architecture, so nlpaug cannot guess the type from it): the second is loaded afresh, not
    taken from nlpaug's cache of the first."""
    import torch
    from fixtures.tiny_models import tiny_masked_lm

    corpus = ["she wrote a silly column about parking fees again ."] * 20
    first = tiny_masked_lm((tmp_path / "a" / "mlm"), "bert", corpus, vocab_size=120)
    second = tiny_masked_lm((tmp_path / "b" / "mlm"), "bert", corpus + ["zebra quilt"] * 20,
                            vocab_size=140)
    settings = {"augmenter": "contextual", "aug_p": 1, "top_k": 3, "aug_max": 2}
    make_augmenter(settings, model_dir=str(first), seed=0)
    aug = make_augmenter(settings, model_dir=str(second), seed=0, protected=["she"])
    assert aug.settings == {"augmenter": "contextual", "aug_p": 1, "top_k": 3, "aug_max": 2,
                            "model_type": "bert"}
    nl = aug._aug
    assert nl.action == "substitute" and nl.model_type == "bert"
    assert nl.aug_p == 1.0 and isinstance(nl.aug_p, float) and nl.aug_max == 2
    assert nl.model_path == str(second) and nl.model.model_path == str(second)
    assert "zebra" in nl.model.tokenizer.get_vocab()
    assert nl.model.top_k == 3 and nl.model.batch_size == 32
    assert str(nl.device).startswith("cuda" if torch.cuda.is_available() else "cpu")
    assert nl.stopwords == ["SHE", "She", "she"]
