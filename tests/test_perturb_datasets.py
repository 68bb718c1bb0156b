"""The balanced fairness set (§5.1) and the perturbed training set (§6.6) on small tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasrepro.errors import ConfigError, DataError
from biasrepro.perturb.datasets import (
    BALANCED_COLUMNS,
    balanced_fairness_set,
    perturbed_training_set,
)
from biasrepro.perturb.identity_lexicon import IDENTITY_TERMS, IdentityLexicon
from biasrepro.perturb.identity_swap import Swapper, load_tagger

ATTRIBUTES = {
    "gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
    "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
    "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]},
}
GENDER_ONLY = {"gender": ATTRIBUTES["gender"]}
IDENTITIES = ["male", "female", "black", "white", "asian", "christian", "muslim", "jewish"]


@pytest.fixture(scope="module")
def swapper() -> Swapper:
    return Swapper(IdentityLexicon.load(IDENTITY_TERMS, ATTRIBUTES), ATTRIBUTES,
                   nlp=load_tagger())


@pytest.fixture(scope="module")
def gender_swapper(swapper: Swapper) -> Swapper:
    return Swapper(IdentityLexicon.load(IDENTITY_TERMS, GENDER_ONLY), GENDER_ONLY,
                   nlp=swapper.nlp)


FAIRNESS = pd.DataFrame({
    "id": ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"],
    "text": [
        "blacks are treated unfairly here .",
        "what a bunch of idiots , she said .",
        "nobody cares what white people think , clown .",
        "the muslim shop owner gave her a discount .",
        "a comment with no identity words at all .",
        "that gay couple next door is lovely .",
        "as a christian , i go to church on sunday .",
        "asian americans vote too , you fools .",
        "my husband read the torah with his father .",
    ],
    "label": [0, 1, 1, 0, 0, 0, 0, 1, 0],
    "identity": ["black", "female", "white", "muslim", "black", "homosexual_gay_or_lesbian",
                 "christian", "asian", "jewish"],
    "toxicity": [0.1, 0.8, 0.7, 0.0, 0.2, 0.0, 0.1, 0.9, 0.0],
})


def test_balanced_set_has_every_row_in_every_group_of_its_attribute(swapper: Swapper) -> None:
    out, stats = balanced_fairness_set(FAIRNESS, swapper, ATTRIBUTES)
    assert list(out.columns) == list(BALANCED_COLUMNS)
    assert out["id"].tolist() == [
        "c1", "c1>asian", "c1>white", "c2", "c2>male", "c3", "c3>black", "c3>asian",
        "c4", "c4>jewish", "c4>christian", "c7", "c7>jewish", "c7>muslim",
        "c8", "c8>black", "c8>white", "c9", "c9>muslim", "c9>christian"]
    by_id = out.set_index("id")
    assert by_id.loc["c1>white", "text"] == "whites are treated unfairly here ."
    assert by_id.loc["c2>male", "text"] == "what a bunch of idiots , he said ."
    assert by_id.loc["c7>jewish", "text"] == "as a jew , i go to synagogue on sunday ."
    assert by_id.loc["c8>white", "text"] == "european americans vote too , you fools ."
    assert by_id.loc["c4>christian", "text"] == (
        "the christian shop owner gave her a discount .")   # gender words stay in religion
    cf = by_id.loc["c9>muslim"]
    assert (cf["source_id"], cf["source_identity"], cf["attribute"], cf["identity"],
            cf["label"], cf["is_counterfactual"]) == ("c9", "jewish", "religion", "muslim",
                                                      0, True)
    assert not by_id.loc["c9", "is_counterfactual"]
    assert out.dtypes["label"] == np.int64
    assert pd.api.types.is_bool_dtype(out.dtypes["is_counterfactual"])

    assert stats["dropped"] == {
        "no_identity_term": {"female": 0, "male": 0, "black": 1, "asian": 0, "white": 0,
                             "jewish": 0, "muslim": 0, "christian": 0},
        "no_attribute": {"homosexual_gay_or_lesbian": 1}}
    assert stats["original"]["n_rows"] == 9 and stats["original"]["n_source_rows"] == 8
    assert stats["original"]["groups"]["black"] == {"n": 2, "n_positive": 0,
                                                    "positive_ratio": 0.0}
    assert stats["original"]["groups"]["male"] == {"n": 0, "n_positive": 0,
                                                   "positive_ratio": None}
    assert stats["balanced"]["n_rows"] == len(out) and stats["balanced"]["n_source_rows"] == 7
    assert set(stats["balanced"]["groups"]) == set(IDENTITIES)


def test_balanced_groups_hold_the_same_sources_and_positive_ratio(swapper: Swapper) -> None:
    out, stats = balanced_fairness_set(FAIRNESS, swapper, ATTRIBUTES)
    for attr, sides in ATTRIBUTES.items():
        groups = [*sides["marginalized"], *sides["non_marginalized"]]
        sources = {g: sorted(out.loc[out["identity"] == g, "source_id"]) for g in groups}
        ratios = {g: stats["balanced"]["groups"][g]["positive_ratio"] for g in groups}
        assert all(s == sources[groups[0]] and s for s in sources.values()), attr
        assert len(set(ratios.values())) == 1, (attr, ratios)
        assert (out.loc[out["attribute"] == attr].groupby("identity")["label"].mean()
                == ratios[groups[0]]).all()
    assert stats["balanced"]["groups"]["white"] == {"n": 3, "n_positive": 2,
                                                    "positive_ratio": 2 / 3}


def test_balanced_set_for_sst_uses_the_gender_column(gender_swapper: Swapper) -> None:
    sst = pd.DataFrame({
        "id": [0, 2, 3, 5],
        "text": ["Director Anton Demir finds something fresh , and his confidence shows .",
                 "Petrov is miscast as the hero , and he seems to know it .",
                 "A career-best turn from Chen , who lets herself be vulnerable .",
                 "Nora Okafor steals every scene she is in ."],
        "sentiment": [0.59, 0.34, 0.69, 0.8], "label": [1, 0, 1, 1],
        "gender": ["male", "male", "female", "female"],
    })
    out, stats = balanced_fairness_set(sst, gender_swapper, GENDER_ONLY,
                                       identity_column="gender")
    assert out["id"].tolist() == ["0", "0>female", "2", "2>female", "3", "3>male",
                                  "5", "5>male"]
    assert out["text"].tolist()[1] == (
        "Director Anton Demir finds something fresh , and her confidence shows .")
    assert out["text"].tolist()[3] == (
        "Petrov is miscast as the heroine , and she seems to know it .")
    assert out["text"].tolist()[5] == (
        "A career-best turn from Chen , who lets himself be vulnerable .")
    assert stats["balanced"]["groups"] == {
        "female": {"n": 4, "n_positive": 3, "positive_ratio": 0.75},
        "male": {"n": 4, "n_positive": 3, "positive_ratio": 0.75}}
    again, stats_again = balanced_fairness_set(sst, gender_swapper, GENDER_ONLY,
                                               identity_column="gender")
    pd.testing.assert_frame_equal(out, again)
    assert stats == stats_again


@pytest.mark.parametrize(("change", "error", "match"), [
    (lambda f: f.drop(columns="identity"), DataError, "column 'identity': missing required"),
    (lambda f: f.drop(columns="text"), DataError, "column 'text': missing required"),
    (lambda f: f.assign(label=[0, 1, 2, 0, 0, 0, 0, 1, 0]), DataError,
     r"row 3, column 'label': label must be 0 or 1 \(got 2, id 'c3'\)"),
    (lambda f: f.assign(label=[0, 1, None, 0, 0, 0, 0, 1, 0]), DataError, "row 3, column 'label'"),
    (lambda f: f.assign(text=["x", None, *f["text"][2:]]), DataError, "row 2, column 'text'"),
    (lambda f: f.assign(id=["c1", "c1", *f["id"][2:]]), DataError,
     "row 2, column 'id': duplicate id 'c1'"),
])
def test_bad_fairness_sets_are_refused(swapper: Swapper, change, error, match) -> None:
    with pytest.raises(error, match=match):
        balanced_fairness_set(change(FAIRNESS.copy()), swapper, ATTRIBUTES)


def test_an_attribute_with_one_group_is_a_config_error(swapper: Swapper) -> None:
    one = {**ATTRIBUTES, "race": {"marginalized": ["black"], "non_marginalized": []}}
    with pytest.raises(ConfigError, match="attributes.race: a counterfactual needs at least"):
        balanced_fairness_set(FAIRNESS, swapper, one)
    with pytest.raises(ConfigError, match="attributes.race"):
        perturbed_training_set(TRAIN, swapper, one, identities=IDENTITIES,
                               identity_threshold=0.5)


def _train() -> pd.DataFrame:
    rows = [
        ("t1", "black people are tired of this , idiots .", 1, {"black": 0.8}, "black"),
        ("t2", "my wife and i agree .", 0, {"female": 0.6, "male": 0.2}, "female"),
        ("t3", "black and white neighbours agree .", 0, {"black": 0.7, "white": 0.7},
         "black+white"),
        ("t4", "nothing about anyone .", 0, {}, "none"),
        ("t5", "the jewish community spoke up .", 1, {"jewish": 1.0}, "jewish"),
        ("t6", "they vote too .", 0, {"asian": 0.5}, "asian"),
    ]
    frame = pd.DataFrame({
        "id": [r[0] for r in rows], "text": [r[1] for r in rows],
        "text_raw": [r[1].upper() for r in rows], "label": [r[2] for r in rows],
        **{g: [r[3].get(g, 0.0) for r in rows] for g in IDENTITIES},
        "signature": [r[4] for r in rows], "split": "train",
    })
    frame.loc[3, "male"] = np.nan
    return frame


TRAIN = _train()


def test_training_set_adds_counterfactuals_of_single_identity_rows(swapper: Swapper) -> None:
    out, stats = perturbed_training_set(TRAIN, swapper, ATTRIBUTES, identities=IDENTITIES,
                                        identity_threshold=0.5)
    assert out["id"].tolist() == ["t1", "t1>asian", "t1>white", "t2", "t2>male", "t3", "t4",
                                  "t5", "t5>muslim", "t5>christian", "t6"]
    assert list(out.columns) == [*TRAIN.columns, "source_id", "is_counterfactual"]
    cf = out.set_index("id").loc["t1>white"]
    assert cf["text"] == "white people are tired of this , idiots ."
    assert (cf["black"], cf["white"], cf["asian"], cf["signature"]) == (0.0, 0.8, 0.0, "white")
    assert (cf["label"], cf["text_raw"], cf["split"], cf["source_id"]) == (
        1, TRAIN.loc[0, "text_raw"], "train", "t1")
    assert cf["is_counterfactual"] and not out.set_index("id").loc["t1", "is_counterfactual"]
    husband = out.set_index("id").loc["t2>male"]
    assert husband["text"] == "my husband and i agree ."
    assert (husband["male"], husband["female"]) == (0.6, 0.0)   # the source's male 0.2 moves
    assert stats["counterfactuals"] == {"gender": 1, "race": 2, "religion": 2}
    assert stats["no_identity_term"]["asian"] == 1 and stats["no_identity_term"]["black"] == 0
    assert stats["before"]["n_rows"] == 6 and stats["after"]["n_rows"] == 11
    assert stats["before"]["groups"]["white"] == {"n": 1, "n_positive": 0,
                                                  "positive_ratio": 0.0}
    assert stats["after"]["groups"]["white"] == {"n": 2, "n_positive": 1,
                                                 "positive_ratio": 0.5}
    assert stats["after"]["groups"]["muslim"] == {"n": 1, "n_positive": 1,
                                                  "positive_ratio": 1.0}
    again, stats_again = perturbed_training_set(TRAIN, swapper, ATTRIBUTES,
                                                identities=IDENTITIES, identity_threshold=0.5)
    pd.testing.assert_frame_equal(out, again)
    assert stats == stats_again
    pd.testing.assert_frame_equal(TRAIN, _train())                  # the input is not changed


def test_training_set_with_a_gender_column(gender_swapper: Swapper) -> None:
    imdb = pd.DataFrame({
        "id": ["r1", "r2", "r3"],
        "text": ["She was wonderful in her first role .", "He directs his cast well .",
                 "The actor and his brother were dull ."],
        "label": [1, 1, 0], "gender": ["female", "male", "male"],
    })
    out, stats = perturbed_training_set(imdb, gender_swapper, GENDER_ONLY,
                                        identities=IDENTITIES, identity_threshold=0.5,
                                        identity_column="gender")
    assert out["id"].tolist() == ["r1", "r1>male", "r2", "r2>female", "r3", "r3>female"]
    assert out["gender"].tolist() == ["female", "male", "male", "female", "male", "female"]
    assert out["text"].tolist()[1] == "He was wonderful in his first role ."
    assert out["text"].tolist()[5] == "The actress and her sister were dull ."
    assert stats["before"]["groups"] == {
        "female": {"n": 1, "n_positive": 1, "positive_ratio": 1.0},
        "male": {"n": 2, "n_positive": 1, "positive_ratio": 0.5}}
    assert stats["after"]["groups"]["female"] == stats["after"]["groups"]["male"] == {
        "n": 3, "n_positive": 2, "positive_ratio": 2 / 3}


def test_bad_training_sets_are_refused(swapper: Swapper) -> None:
    with pytest.raises(DataError, match="column 'signature': missing required column"):
        perturbed_training_set(TRAIN.drop(columns="signature"), swapper, ATTRIBUTES,
                               identities=IDENTITIES, identity_threshold=0.5)
    with pytest.raises(DataError, match="column 'jewish': missing required column"):
        perturbed_training_set(TRAIN.drop(columns="jewish"), swapper, ATTRIBUTES,
                               identities=IDENTITIES, identity_threshold=0.5)
    with pytest.raises(DataError, match="row 2, column 'label': label must be 0 or 1"):
        perturbed_training_set(TRAIN.assign(label=[1, 0.5, 0, 0, 1, 0]), swapper, ATTRIBUTES,
                               identities=IDENTITIES, identity_threshold=0.5)
    with pytest.raises(ConfigError, match="attribute group 'jewish' is not in 'identities'"):
        perturbed_training_set(TRAIN, swapper, ATTRIBUTES, identities=IDENTITIES[:-1],
                               identity_threshold=0.5)
    with pytest.raises(DataError, match="column 'gender': missing required column"):
        perturbed_training_set(TRAIN, swapper, ATTRIBUTES, identities=IDENTITIES,
                               identity_threshold=0.5, identity_column="gender")


# -- which rows are perturbed (perturbation.select) ------------------------------------------

#: (text, label, labels, how many of it): every kind of row the selections tell apart
KINDS = {
    "black_only": ("black people are tired of this .", 1, {"black": 0.8}, 5),
    "black_white": ("black and white neighbours agree .", 0, {"black": 0.7, "white": 0.6}, 3),
    "female_only": ("my wife and i agree .", 0, {"female": 0.9}, 4),
    "muslim_unlabelled": ("the muslim shop opens late .", 0, {}, 6),
    "asian_no_term": ("they vote too .", 1, {"asian": 0.7}, 2),
    "none": ("nothing about anyone .", 0, {}, 7),
}
#: counterfactuals per row of each kind: an attribute of m groups gives m - 1 per row about
#: one group and m per row about several (every group gets one); gender's full swap gives 1
PER_ROW = {
    "single_identity": {"black_only": 2, "female_only": 1},
    "identity_label": {"black_only": 2, "black_white": 3, "female_only": 1},
    "identity_term": {"black_only": 2, "black_white": 3, "female_only": 1,
                      "muslim_unlabelled": 2},
}


def _synthetic() -> pd.DataFrame:
    rows = [(f"{kind}{i}", *spec[:3], kind) for kind, spec in KINDS.items()
            for i in range(spec[3])]
    members = [[g for g in IDENTITIES if labels.get(g, 0.0) >= 0.5] for _, _, _, labels, _ in rows]
    return pd.DataFrame({
        "id": [r[0] for r in rows], "text": [r[1] for r in rows],
        "label": [r[2] for r in rows],
        **{g: [r[3].get(g, 0.0) for r in rows] for g in IDENTITIES},
        "signature": ["+".join(sorted(m)) or "none" for m in members],
    })


@pytest.mark.parametrize("select", ["single_identity", "identity_label", "identity_term"])
def test_perturbed_size_is_the_arithmetic_of_the_selection(swapper: Swapper, select) -> None:
    train = _synthetic()
    out, stats = perturbed_training_set(train, swapper, ATTRIBUTES, identities=IDENTITIES,
                                        identity_threshold=0.5, select=select)
    expected = sum(KINDS[k][3] * n for k, n in PER_ROW[select].items())
    assert len(out) == len(train) + expected
    assert sum(stats["counterfactuals"].values()) == expected
    assert out["is_counterfactual"].sum() == expected
    assert out["source_id"].value_counts().to_dict() == {
        i: 1 + PER_ROW[select].get(i.rstrip("0123456789"), 0) for i in train["id"]}
    if select != "single_identity":
        assert stats["select"] == select
        assert stats["no_identity_term"]["asian"] == (2 if select == "identity_label" else 0)
    else:
        assert "select" not in stats      # the embedded default's statistics are unchanged


def test_single_identity_selection_is_the_default_and_unchanged(swapper: Swapper) -> None:
    default, stats = perturbed_training_set(TRAIN, swapper, ATTRIBUTES, identities=IDENTITIES,
                                            identity_threshold=0.5)
    named, named_stats = perturbed_training_set(TRAIN, swapper, ATTRIBUTES,
                                                identities=IDENTITIES, identity_threshold=0.5,
                                                select="single_identity")
    pd.testing.assert_frame_equal(default, named)
    assert stats == named_stats


def test_a_row_about_two_groups_gets_one_counterfactual_per_group(swapper: Swapper) -> None:
    out, _ = perturbed_training_set(_synthetic(), swapper, ATTRIBUTES, identities=IDENTITIES,
                                    identity_threshold=0.5, select="identity_label")
    cfs = out[out["source_id"] == "black_white0"].set_index("id")
    assert cfs["text"].to_dict() == {
        "black_white0": "black and white neighbours agree .",
        "black_white0>black": "black and black neighbours agree .",
        "black_white0>asian": "asian and asian neighbours agree .",
        "black_white0>white": "white and white neighbours agree .",
    }
    asian = cfs.loc["black_white0>asian"]
    assert (asian["asian"], asian["black"], asian["white"], asian["signature"]) == (
        0.7, 0.0, 0.0, "asian")
    black = cfs.loc["black_white0>black"]
    assert (black["black"], black["white"], black["signature"]) == (0.7, 0.0, "black")


def test_unlabelled_mentions_are_perturbed_only_by_term(swapper: Swapper) -> None:
    out, stats = perturbed_training_set(_synthetic(), swapper, ATTRIBUTES,
                                        identities=IDENTITIES, identity_threshold=0.5,
                                        select="identity_term")
    cfs = out[out["source_id"] == "muslim_unlabelled0"]["text"].tolist()
    assert cfs == ["the muslim shop opens late .", "the jewish shop opens late .",
                   "the christian shop opens late ."]
    assert stats["selected"]["religion"] == KINDS["muslim_unlabelled"][3]


def test_a_gender_column_table_refuses_other_selections(gender_swapper: Swapper) -> None:
    imdb = pd.DataFrame({"id": ["r1"], "text": ["She was fine ."], "label": [1],
                         "gender": ["female"]})
    with pytest.raises(ConfigError, match="perturbation.select"):
        perturbed_training_set(imdb, gender_swapper, GENDER_ONLY, identities=IDENTITIES,
                               identity_threshold=0.5, identity_column="gender",
                               select="identity_term")
    with pytest.raises(ConfigError, match="is not one of"):
        perturbed_training_set(TRAIN, gender_swapper, GENDER_ONLY, identities=IDENTITIES,
                               identity_threshold=0.5, select="everything")


def test_paper_tables_say_which_rows_our_debiased_sets_selected() -> None:
    from biasrepro.analysis.paper_tables import _selection_note

    paper = {"perturbation.select": "identity_term",
             "perturbation.restratify.select": "identity_label"}
    assert _selection_note(paper, "downstream-perturbed-stratified-data") == (
        "ours: perturbed: identity_term rows; re-stratified: identity_label rows")
    assert _selection_note(paper, "downstream-stratified-data") == (
        "ours: re-stratified: identity_label rows")
    embedded = {"perturbation.select": "single_identity"}
    assert _selection_note(embedded, "downstream-perturbed-data") == ""
