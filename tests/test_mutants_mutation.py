"""Mutant generation: the gaps mutation testing (scripts/mutation) found in test_mutants.py.

Every expectation here is worked out by hand from the small fill lists
(tests/fixtures/fill_lists.py), not by calling the code under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fixtures.fill_lists import small_wordlists

from biasrepro.biasfinder import mutants as mutants_module
from biasrepro.biasfinder.mutants import generate_mutants, read_mutants, write_mutants
from biasrepro.biasfinder.wordlists import Wordlists
from biasrepro.errors import ConfigError, DataError


@pytest.fixture(scope="module")
def wl() -> Wordlists:
    return small_wordlists()


def table(*rows: tuple[str, str, str, str]) -> pd.DataFrame:
    """A templates table from (characteristic, template, original_class, template_id) rows."""
    return pd.DataFrame({
        "template_id": [t for _, _, _, t in rows],
        "characteristic": [c for c, _, _, _ in rows],
        "label": [1] * len(rows),
        "template": [t for _, t, _, _ in rows],
        "original_class": [k for _, _, k, _ in rows],
    })


NAMES_ONLY = ("gender", "<Name> is great.", "female", "n1")


def hand_mutants() -> pd.DataFrame:
    """A two-row mutants table written out by hand (contract columns)."""
    return pd.DataFrame({
        "id": ["t#0000", "t#0001"], "template_id": ["t", "t"],
        "characteristic": ["gender", "gender"], "class": ["male", "female"],
        "values": ['{"name": "Omar"}', '{"name": "Ingrid"}'], "align": ["n0", "n0"],
        "text": ["Omar is great.", "Ingrid is great."], "label": [1, 1]})


def test_max_names_one_keeps_the_first_name_of_each_gender(wl) -> None:
    """``max_names=1`` is a valid setting (the bound is < 1): Omar and Ingrid only."""
    df = generate_mutants(table(NAMES_ONLY), wl, max_names=1)
    assert list(df["text"]) == ["Omar is great.", "Ingrid is great."]
    assert list(df["align"]) == ["n0", "n0"]
    for bad in (0, -1):
        with pytest.raises(ConfigError, match=rf"\(got {bad}\)"):
            generate_mutants(table(NAMES_ONLY), wl, max_names=bad)


def test_missing_word_list_messages_say_what_to_load(wl) -> None:
    bare = Wordlists(pronouns=wl.pronouns, gender_nouns=wl.gender_nouns, occupations=())
    expected = {
        NAMES_ONLY: "gender templates with a <name> placeholder need the male and female name "
                    "lists (wordlists.load(names=...))",
        ("country", "<Female> left.", "female", "c1"):
            "country templates need the country name list (wordlists.load(country_names=...))",
        ("occupation", "<A> <occupation> left.", "nurse", "o1"):
            "occupation templates need a non-empty occupation list",
    }
    for row, message in expected.items():
        with pytest.raises(ConfigError) as err:
            generate_mutants(table(row), bare)
        assert str(err.value) == message


def test_country_name_already_in_the_text_is_skipped(wl) -> None:
    """Yui (Japan's female name) is a person of the template already: no Japan mutant."""
    df = generate_mutants(table(("country", "<Female> met Yui; <female> smiled.", "female",
                                 "c1")), wl)
    assert list(df["class"]) == ["Chile", "Kenya"]
    assert list(df["text"]) == ["Valentina met Yui; Valentina smiled.",
                                "Wanjiru met Yui; Wanjiru smiled."]
    assert list(df["id"]) == ["c1#0000", "c1#0001"]


def test_a_placeholder_separates_the_words_around_it() -> None:
    """Words glued to a placeholder are words of their own, lowercased; lowercase words and
    the placeholders themselves are not taken."""
    taken = mutants_module._taken_names("Kenji<pro-subj> met <Name>Leila and jo<gaw>.")
    assert taken == {"kenji", "leila"}


def test_read_mutants_columns(tmp_path) -> None:
    path = tmp_path / "mutants.parquet"
    write_mutants(hand_mutants(), path)
    some = read_mutants(path, columns=("class", "id"))
    assert list(some.columns) == ["class", "id"]
    assert list(some["id"]) == ["t#0000", "t#0001"]
    with pytest.raises(ConfigError) as err:
        read_mutants(path, columns=("id", "bogus", "other"))
    assert str(err.value) == ("not a mutants column: 'bogus' (columns: id, template_id, "
                              "characteristic, class, values, align, text, label)")


def test_read_mutants_refuses_non_integer_labels(tmp_path) -> None:
    path = tmp_path / "mutants.parquet"
    hand_mutants().assign(label=[1.0, 0.5]).to_parquet(path)
    with pytest.raises(DataError) as err:
        read_mutants(path)
    assert err.value.message == "label must be integers (got float64)"
    assert (err.value.file, err.value.column) == (str(path), "label")
    # a read without the label column does not look at it
    assert list(read_mutants(path, columns=("id", "text"))["text"]) == [
        "Omar is great.", "Ingrid is great."]


def test_read_mutants_says_what_file_it_wanted(tmp_path) -> None:
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet\n")
    with pytest.raises(DataError, match="not a readable Parquet mutants table"):
        read_mutants(junk)


def test_write_mutants_names_the_file_it_refuses(tmp_path) -> None:
    path = tmp_path / "out.parquet"
    with pytest.raises(DataError) as err:
        write_mutants(hand_mutants().drop(columns="values"), path)
    assert (err.value.file, err.value.column) == (str(path), "values")
    assert not path.exists()


GENDER_OK = ("gender", "<Name> is great.", "male", "g1")


@pytest.mark.parametrize(("rows", "message", "row", "column"), [
    ([GENDER_OK, ("race", "<Name> ran.", "male", "r1")],
     "unknown characteristic 'race' (expected gender, occupation, country)", 2,
     "characteristic"),
    ([GENDER_OK, ("gender", 7, "male", "g2")], "template is not text (got 7)", 2,
     "template"),
    ([("gender", "<occupation> ran; he fell.", "male", "g2")],
     "placeholder <occupation> does not belong in a gender template", 1, "template"),
    ([("gender", "Nobody ran.", "male", "g2")],
     "gender template without a name, pronoun or gender-noun placeholder", 1, "template"),
    ([("occupation", "<A> tree fell.", "nurse", "o1")],
     "occupation template without an <occupation> placeholder", 1, "template"),
    ([("country", "<Male> ran.", "other", "c1")],
     "country template of gender 'other' (expected male or female)", 1, "original_class"),
    ([("country", "<Female> ran.", "male", "c1")],
     "country template of a male person needs exactly the <male> placeholder", 1, "template"),
])
def test_bad_template_messages(wl, rows, message, row, column) -> None:
    with pytest.raises(DataError) as err:
        generate_mutants(table(*rows), wl, source="t.parquet")
    assert err.value.message == message
    assert (err.value.file, err.value.row, err.value.column) == ("t.parquet", row, column)


def test_bad_table_errors_name_file_row_and_column(wl) -> None:
    rows = table(GENDER_OK, ("gender", "<Name> ran.", "female", "g2"),
                 ("gender", "<Name> sat.", "female", "g3"))
    with pytest.raises(DataError) as err:  # a label with a fraction is no class label
        generate_mutants(rows.assign(label=[1.0, 1.0, 1.5]), wl, source="t.parquet")
    assert err.value.message == "label is not an integer (got 1.5)"
    assert (err.value.file, err.value.row, err.value.column) == ("t.parquet", 3, "label")
    with pytest.raises(DataError) as err:
        generate_mutants(rows.assign(template_id=["g1", "g2", "g2"]), wl, source="t.parquet")
    assert err.value.message == "duplicate template id 'g2'"
    assert (err.value.file, err.value.row, err.value.column) == ("t.parquet", 3, "template_id")
    with pytest.raises(DataError) as err:
        generate_mutants(rows.drop(columns="original_class"), wl, source="t.parquet")
    assert (err.value.file, err.value.column) == ("t.parquet", "original_class")
    # whole-number labels stored as floats are labels
    df = generate_mutants(rows.assign(label=[1.0, 0.0, 1.0]), wl, max_names=1)
    assert list(df["label"]) == [1, 1, 0, 0, 1, 1]


def test_errors_name_the_templates_table_by_default(wl) -> None:
    with pytest.raises(DataError) as err:
        generate_mutants(table(GENDER_OK, ("gender", "Nobody ran.", "male", "g2")), wl)
    assert (err.value.file, err.value.row) == ("templates", 2)


def test_column_types_also_for_no_mutants(wl) -> None:
    """Text columns are pandas' default ``str`` dtype (NaN as missing value); ``label`` is
    int64 even when there are no mutants at all."""
    for df in (generate_mutants(table(GENDER_OK), wl), generate_mutants(table(), wl)):
        assert df["label"].dtype == np.int64
        for c in ("id", "template_id", "characteristic", "class", "values", "align", "text"):
            assert df[c].dtype == "str", c
            assert df[c].dtype == pd.StringDtype(na_value=np.nan), c


def test_values_keep_non_ascii_names_readable(wl) -> None:
    names = {"male": ("José",), "female": ("Zoë",)}
    accented = Wordlists(pronouns=wl.pronouns, gender_nouns=wl.gender_nouns,
                         occupations=wl.occupations, names=names)
    df = generate_mutants(table(GENDER_OK), accented)
    assert list(df["values"]) == ['{"name": "José"}', '{"name": "Zoë"}']
    assert list(df["text"]) == ["José is great.", "Zoë is great."]
