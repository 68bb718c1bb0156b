"""Re-stratification (§6.4): exact synthetic counts, seeded output, identity words kept."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.tiny_models import tiny_masked_lm

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.perturb.restratify import RETRIES, make_augmenter, needed, restratify

IDENTITIES = ["female", "male", "muslim"]
PROTECTED = ["women", "woman", "she", "men", "man", "he", "muslim", "muslims"]
RANDOM = {"augmenter": "random", "aug_p": 0.3}
CONTEXTUAL = {"augmenter": "contextual", "aug_p": 0.3, "top_k": 20}

#: (text, signature, label); cleaned like the prepared comments
ROWS = [
    ("she wrote a silly column about parking fees again .", "female", 1),
    ("that woman runs the bakery near the old station .", "female", 0),
    ("the women on the council voted for new bike lanes .", "female", 0),
    ("she is a clueless fool and her fans are worse .", "female", 0),
    ("my neighbour says the woman next door sings well .", "female", 0),
    ("women of the choir raised money for the shelter .", "female", 0),
    ("he never reads past the headline , typical clown .", "male", 1),
    ("the man fixed the fence before the storm came .", "male", 1),
    ("men like him should stay off the road .", "male", 0),
    ("that man parked across two spaces again .", "male", 0),
    ("the muslim family opened a bakery on main street .", "muslim", 0),
    ("muslims in town hosted a dinner for the firefighters .", "muslim", 1),
    ("a muslim doctor treated my father last winter .", "muslim", 0),
    ("the muslim students organised a book fair .", "muslim", 0),
    ("that muslim idiot keeps spamming the forum with rubbish .", "muslim", 1),
    ("she and he both complained about the noisy trucks .", "female+male", 1),
    ("the weather was awful all week , what a joke .", "none", 1),
    ("the bus was late again this morning .", "none", 0),
]


def _train() -> pd.DataFrame:
    text, signature, label = zip(*ROWS, strict=True)
    n = len(ROWS)
    return pd.DataFrame({
        "id": [f"c{i:03d}" for i in range(n)],
        "text": list(text),
        "label": np.array(label, dtype="int64"),
        "female": [1.0 if "female" in s else 0.0 for s in signature],
        "male": [1.0 if "male" in s.replace("female", "") else 0.0 for s in signature],
        "muslim": [1.0 if s == "muslim" else np.nan for s in signature],
        "signature": list(signature),
        "split": "train",
    })


def _run(settings: dict = RANDOM, *, seed: int = 0, target: float = 0.5, model_dir=None,
         protected=PROTECTED, train: pd.DataFrame | None = None):
    aug = make_augmenter(settings, model_dir=model_dir, seed=seed, protected=protected)
    return restratify(_train() if train is None else train, identities=IDENTITIES, augment=aug,
                      target_ratio=target, seed=seed, protected_words=protected)


@pytest.mark.parametrize(("n", "p", "t", "k"), [
    (10, 3, 0.5, 4), (10, 5, 0.5, 0), (10, 8, 0.5, 0), (7, 1, 0.3, 2), (4, 0, 0.2, 1),
    (0, 0, 0.5, 0), (6, 1, 0.5, 4), (5, 2, 0.5, 1), (4, 2, 0.5, 0),
])
def test_needed_is_the_fewest_positives_reaching_the_target(n, p, t, k) -> None:
    assert needed(n, p, t) == k
    assert (p + k) / (n + k) >= t - 1e-12 if n else k == 0
    if k:
        assert (p + k - 1) / (n + k - 1) < t


def test_each_group_reaches_the_target_with_exact_counts() -> None:
    train = _train()
    out, stats = _run()
    # female 6 rows / 1 positive -> 4; male 4 / 2 -> 0; muslim 5 / 2 -> 1
    assert {g: s["synthetic"] for g, s in stats["groups"].items()} == {
        "female": 4, "male": 0, "muslim": 1}
    assert stats["groups"]["female"]["before"] == {"n": 6, "n_positive": 1,
                                                   "positive_ratio": pytest.approx(1 / 6)}
    assert stats["groups"]["female"]["after"] == {"n": 10, "n_positive": 5,
                                                  "positive_ratio": 0.5}
    assert stats["rows"] == {"original": 18, "synthetic": 5, "total": 23}
    for g in IDENTITIES:
        rows = out[out["signature"] == g]
        assert rows["label"].mean() >= 0.5
        assert rows["label"].mean() == stats["groups"][g]["after"]["positive_ratio"]
    # the multi-identity row and the "none" rows get nothing
    assert (out["signature"] == "female+male").sum() == 1
    pd.testing.assert_frame_equal(out.iloc[:18].drop(columns=["source_id", "is_synthetic"]),
                                  train)
    assert (out["source_id"].iloc[:18] == train["id"]).all()
    assert not out["is_synthetic"].iloc[:18].any() and out["is_synthetic"].iloc[18:].all()


def test_synthetic_rows_copy_their_source() -> None:
    train = _train().set_index("id", drop=False)
    out, _ = _run()
    synth = out[out["is_synthetic"]]
    # the female group's only positive is used four times: ids ~1..~4
    assert synth["id"].tolist() == ["c000~1", "c000~2", "c000~3", "c000~4", synth["id"].iloc[4]]
    assert synth["id"].iloc[4] in {"c011~1", "c014~1"}
    for _, row in synth.iterrows():
        src = train.loc[row["source_id"]]
        assert row["id"].startswith(f"{src['id']}~")
        assert row["label"] == 1
        for col in ("signature", "female", "male", "split"):
            assert row[col] == src[col]
        assert row["muslim"] == src["muslim"] or (np.isnan(row["muslim"])
                                                  and np.isnan(src["muslim"]))
        assert row["text"] != src["text"]
        assert sorted(row["text"].split()) == sorted(src["text"].split())  # a swap


def test_same_seed_same_frame_other_seed_other_frame() -> None:
    a, stats_a = _run(seed=5)
    b, stats_b = _run(seed=5)
    pd.testing.assert_frame_equal(a, b)
    assert stats_a == stats_b
    c, _ = _run(seed=6)
    assert a["text"].tolist() != c["text"].tolist()


def test_input_row_order_does_not_matter() -> None:
    a, _ = _run(seed=3)
    b, _ = _run(seed=3, train=_train().iloc[::-1].reset_index(drop=True))
    key = ["id", "text"]
    assert (a[a["is_synthetic"]][key].reset_index(drop=True)
            .equals(b[b["is_synthetic"]][key].reset_index(drop=True)))


def test_the_augmenter_leaves_global_random_state_alone() -> None:
    random.seed(1)
    np.random.seed(1)
    expected = (random.random(), np.random.random())
    random.seed(1)
    np.random.seed(1)
    make_augmenter(RANDOM, model_dir=None, seed=0)(["a b c d e f", "g h i j"])
    assert (random.random(), np.random.random()) == expected


class _Stub:
    """An augmenter that applies ``fix`` to each text from its ``start``-th call on."""

    def __init__(self, fix, start: int = 1) -> None:
        self.fix, self.start, self.calls = fix, start, 0

    def __call__(self, texts: list[str]) -> list[str]:
        self.calls += 1
        if self.calls < self.start:
            return [t.replace("she ", "someone ") + " !" for t in texts]  # loses "she"
        return [self.fix(t) for t in texts]


def test_augmentations_losing_an_identity_word_are_redone() -> None:
    stub = _Stub(lambda t: t + " indeed", start=2)
    out, stats = restratify(_train(), identities=IDENTITIES, augment=stub, target_ratio=0.5,
                            seed=0, protected_words=PROTECTED)
    synth = out[out["is_synthetic"]]
    # the first call loses "she" in the four female rows (redone), not in the muslim one
    female = synth["signature"] == "female"
    assert female.sum() == 4
    assert synth["text"][female].str.match(r"^she .* indeed$").all()
    assert synth["text"][~female].str.endswith(" !").all()
    assert stats["retries"]["redone"] == 4
    assert all(s["unchanged"] == 0 for s in stats["groups"].values())


def test_failed_augmentations_keep_the_source_text_and_are_counted() -> None:
    stub = _Stub(lambda t: t)
    out, stats = restratify(_train(), identities=IDENTITIES, augment=stub, target_ratio=0.5,
                            seed=0)
    synth = out[out["is_synthetic"]]
    src = out.set_index("id").loc[synth["source_id"], "text"]
    assert synth["text"].tolist() == src.tolist()
    assert stats["groups"]["female"]["unchanged"] == 4
    assert stats["groups"]["muslim"]["unchanged"] == 1
    assert stats["retries"]["redone"] == 5 * RETRIES
    assert stub.calls == 1 + RETRIES


@pytest.mark.parametrize("target", [0.0, 1.0, 1.5, -0.2])
def test_target_ratio_outside_0_1_is_refused(target: float) -> None:
    with pytest.raises(ConfigError, match="target_ratio"):
        _run(target=target)


def test_bad_training_data_is_refused() -> None:
    with pytest.raises(DataError, match="'signature'"):
        _run(train=_train().drop(columns="signature"))
    no_pos = _train()
    no_pos.loc[no_pos["signature"] == "muslim", "label"] = 0
    with pytest.raises(DataError, match="'muslim' needs 5 synthetic positives but has no"):
        _run(train=no_pos)
    dup = _train()
    dup.loc[3, "id"] = "c001"
    with pytest.raises(DataError, match="row 4, column 'id': duplicate id"):
        _run(train=dup)
    bad_label = _train()
    bad_label.loc[2, "label"] = 2
    with pytest.raises(DataError, match="row 3, column 'label'"):
        _run(train=bad_label)
    clash = _train()
    clash.loc[17, "id"] = "c000~1"
    with pytest.raises(DataError, match="'c000~1' is already an id"):
        _run(train=clash)
    again, _ = _run()
    with pytest.raises(DataError, match="already re-stratified"):
        _run(train=again)


def test_bad_augmenter_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="augmenter: 'wordnet'"):
        make_augmenter({"augmenter": "wordnet", "aug_p": 0.3}, model_dir=None, seed=0)
    with pytest.raises(ConfigError, match="aug_p"):
        make_augmenter({"augmenter": "random", "aug_p": 0}, model_dir=None, seed=0)
    with pytest.raises(ConfigError, match="top_k"):
        make_augmenter({"augmenter": "contextual", "aug_p": 0.3}, model_dir=None, seed=0)
    with pytest.raises(ConfigError, match="needs a masked language model"):
        make_augmenter(CONTEXTUAL, model_dir=None, seed=0)
    with pytest.raises(ModelError, match="no config.json"):
        make_augmenter(CONTEXTUAL, model_dir=str(tmp_path), seed=0)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "albert"}))
    with pytest.raises(ConfigError, match="'albert' model; nlpaug's contextual augmenter "
                                          "supports bert, roberta"):
        make_augmenter(CONTEXTUAL, model_dir=str(tmp_path), seed=0)


# A tiny random masked LM of each architecture nlpaug supports, with the project's tokenizer.
CORPUS = [text for text, _, _ in ROWS] * 10


@pytest.fixture(scope="module", params=["bert", "roberta"])
def masked_lm(request, tmp_path_factory) -> Path:
    return tiny_masked_lm(tmp_path_factory.mktemp(f"{request.param}-mlm"), request.param,
                          CORPUS)


def _words(text: str) -> set[str]:
    return set(text.split()) & set(PROTECTED)


def test_contextual_augmenter_keeps_identity_words_and_is_seeded(masked_lm: Path) -> None:
    a, stats = _run(CONTEXTUAL, model_dir=str(masked_lm), seed=2)
    b, _ = _run(CONTEXTUAL, model_dir=str(masked_lm), seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert stats["augmenter"]["model_type"] == masked_lm.name.split("-")[0]
    synth = a[a["is_synthetic"]]
    src = a.set_index("id").loc[synth["source_id"], "text"].tolist()
    changed = [s != t for s, t in zip(src, synth["text"], strict=True)]
    assert sum(changed) >= 4
    assert sum(changed) == len(synth) - sum(g["unchanged"] for g in stats["groups"].values())
    for s, t in zip(src, synth["text"], strict=True):
        assert _words(s) <= _words(t), (s, t)
        assert t == t.lower() and "[unk]" not in t and "<unk>" not in t


def test_without_protection_the_masked_lm_replaces_identity_words(masked_lm: Path) -> None:
    texts = [text for text, sig, _ in ROWS if sig in IDENTITIES] * 4
    aug = make_augmenter({**CONTEXTUAL, "aug_p": 0.5}, model_dir=str(masked_lm), seed=0)
    out = aug(texts)
    assert any(not _words(s) <= _words(t) for s, t in zip(texts, out, strict=True))
    guarded = make_augmenter({**CONTEXTUAL, "aug_p": 0.5}, model_dir=str(masked_lm), seed=0,
                             protected=PROTECTED)(texts)
    kept = [_words(s) <= _words(t) for s, t in zip(texts, guarded, strict=True) if t]
    assert sum(kept) > len(kept) // 2


def test_protected_words_outside_the_vocabulary_come_back(masked_lm: Path) -> None:
    # nlpaug decodes a protected word that is no vocabulary token as the unknown token
    texts = ["zyx wrote a silly column about the qwv family again .",
             "the qwv students and zyx organised a book fair ."]
    aug = make_augmenter(CONTEXTUAL, model_dir=str(masked_lm), seed=0, protected=["zyx", "qwv"])
    for text in aug(texts):
        assert "zyx" in text.split() and "qwv" in text.split(), text


def test_more_texts_than_one_model_batch(masked_lm: Path) -> None:
    # nlpaug 1.1.11's RoBERTa keeps only its last model batch's predictions
    texts = [text for text, _, _ in ROWS] * 5
    out = make_augmenter(CONTEXTUAL, model_dir=str(masked_lm), seed=0, protected=PROTECTED)(texts)
    assert len(out) == len(texts) and all(out)
    assert sum(o != t for o, t in zip(out, texts, strict=True)) > len(texts) * 0.9


def test_identity_label_groups_count_rows_about_two_groups_in_both() -> None:
    """select identity_label: the female+male row is in both groups, so each group's size is
    its labelled rows and k = needed(n, p); a synthetic copy of that row raises both."""
    train = _train()
    labelled = {g: (train[g] >= 0.5).to_numpy() for g in IDENTITIES}
    sizes = {g: (int(m.sum()), int(train["label"][m].sum())) for g, m in labelled.items()}
    assert sizes == {"female": (7, 2), "male": (5, 3), "muslim": (5, 2)}
    out, stats = restratify(train, identities=IDENTITIES, augment=lambda ts: [t + " indeed"
                                                                              for t in ts],
                            target_ratio=0.5, seed=0, protected_words=PROTECTED,
                            select="identity_label", identity_threshold=0.5)
    k = {g: needed(n, p, 0.5) for g, (n, p) in sizes.items()}
    assert k == {"female": 3, "male": 0, "muslim": 1}
    assert len(out) == len(train) + sum(k.values())
    assert stats["select"] == "identity_label"
    synth = out[out["is_synthetic"]]
    for g in IDENTITIES:
        assert stats["groups"][g]["synthetic"] == k[g]
        members = out[(out[g] >= 0.5).fillna(False)]
        assert stats["groups"][g]["after"] == {
            "n": len(members), "n_positive": int(members["label"].sum()),
            "positive_ratio": members["label"].mean()}
    # a female synthetic copy of the female+male row, if drawn, is counted for male as well
    both = synth["source_id"] == "c015"
    assert stats["groups"]["male"]["after"]["n"] == 5 + int(both.sum())
    single, single_stats = restratify(train, identities=IDENTITIES,
                                      augment=lambda ts: [t + " indeed" for t in ts],
                                      target_ratio=0.5, seed=0, protected_words=PROTECTED)
    assert "select" not in single_stats
    assert [single_stats["groups"][g]["synthetic"] for g in IDENTITIES] == [
        needed(6, 1, 0.5), needed(4, 2, 0.5), needed(5, 2, 0.5)]


def test_restratify_selection_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="is not one of"):
        restratify(_train(), identities=IDENTITIES, augment=lambda ts: ts, target_ratio=0.5,
                   seed=0, select="identity_term")
    with pytest.raises(ConfigError, match="needs the identity threshold"):
        restratify(_train(), identities=IDENTITIES, augment=lambda ts: ts, target_ratio=0.5,
                   seed=0, select="identity_label")


def test_aug_max_reaches_nlpaug_and_is_recorded_only_when_set() -> None:
    capped = make_augmenter({**RANDOM, "aug_max": 10}, model_dir=None, seed=0)
    assert capped._aug.aug_max == 10 and capped.settings["aug_max"] == 10
    free = make_augmenter(RANDOM, model_dir=None, seed=0)
    assert free._aug.aug_max is None and "aug_max" not in free.settings
    with pytest.raises(ConfigError, match="aug_max"):
        make_augmenter({**RANDOM, "aug_max": 0}, model_dir=None, seed=0)


def test_identity_label_copies_of_a_row_about_two_groups_have_distinct_ids() -> None:
    """The female+male row is a source for both groups: its copies are numbered over all
    groups (``c015~1``, ``c015~2``, ...), so every id stays unique."""
    out, stats = restratify(_train(), identities=IDENTITIES, augment=lambda ts: [t + " indeed"
                                                                                 for t in ts],
                            target_ratio=0.7, seed=0, protected_words=PROTECTED,
                            select="identity_label", identity_threshold=0.5)
    assert stats["groups"]["female"]["synthetic"] and stats["groups"]["male"]["synthetic"]
    copies = out.loc[out["source_id"] == "c015", "id"].tolist()[1:]
    assert len(copies) >= 2
    assert copies == [f"c015~{i}" for i in range(1, len(copies) + 1)]
    assert out["id"].is_unique
