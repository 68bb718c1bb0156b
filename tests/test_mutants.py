"""Mutant generation (BiasFinder §4-5 mutant engines)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from fixtures.fill_lists import COUNTRIES, NAMES, OCCUPATIONS, small_wordlists

from biasrepro.biasfinder import placeholders
from biasrepro.biasfinder.mutants import (
    COLUMNS,
    generate_mutants,
    read_mutants,
    write_mutants,
)
from biasrepro.biasfinder.wordlists import Wordlists
from biasrepro.errors import ConfigError, DataError

PRONOUNS = {"male": {"he", "him", "his", "himself"}, "female": {"she", "her", "hers", "herself"}}


@pytest.fixture(scope="module")
def wl() -> Wordlists:
    return small_wordlists()


def table(*rows: tuple[str, str, str, str]) -> pd.DataFrame:
    """A templates table from (characteristic, template, original_class, doc_id) rows."""
    return pd.DataFrame({
        "template_id": [f"{c}-{d}" for c, _, _, d in rows],
        "characteristic": [c for c, _, _, _ in rows],
        "doc_id": [d for _, _, _, d in rows],
        "label": [i % 2 for i in range(len(rows))],
        "original": ["(original)"] * len(rows),
        "template": [t for _, t, _, _ in rows],
        "original_class": [k for _, _, k, _ in rows],
        "placeholders": [",".join(placeholders.keys(t)) for _, t, _, _ in rows],
    })


PRONOUN_ONLY = ("gender", "<Pro-subj> said <pro-det> day was long; the book is <pro-poss>. "
                "Nobody saw <pro-obj> hurt <pro-refl>.", "male", "p1")
NAMES_ONLY = ("gender", "<Name> is great, and <pro-subj> knows it. <Name>'s film works.",
              "female", "n1")
NAMES_NOUNS = ("gender", "<Name>, <a> <gaw> from Ohio, loves <pro-det> dog. <A> <gaw> "
               "needs <pro-obj>.", "male", "b1")
OCCUPATION = ("occupation", "<A> <occupation> met Jo. The <occupation>'s car broke.",
              "nurse", "o1")
COUNTRY = ("country", "I liked <female>; <female> said she would return.", "female", "c1")


def test_columns_types_and_labels(wl) -> None:
    df = generate_mutants(table(PRONOUN_ONLY, NAMES_ONLY, OCCUPATION, COUNTRY), wl)
    assert tuple(df.columns) == COLUMNS
    assert df["label"].dtype == "int64"
    assert all(pd.api.types.is_string_dtype(df[c]) for c in COLUMNS if c != "label")
    labels = dict(zip(table(PRONOUN_ONLY, NAMES_ONLY, OCCUPATION, COUNTRY)["template_id"],
                      [0, 1, 0, 1], strict=True))
    assert (df["label"] == df["template_id"].map(labels)).all()


def test_counts_per_characteristic(wl) -> None:
    df = generate_mutants(table(PRONOUN_ONLY, NAMES_ONLY, NAMES_NOUNS, OCCUPATION, COUNTRY), wl)
    n, g = len(NAMES["male"]), len(wl.gender_nouns)
    per_class = df.groupby(["template_id", "class"]).size()
    for cls in ("male", "female"):
        assert per_class["gender-p1", cls] == 1
        assert per_class["gender-n1", cls] == n
        assert per_class["gender-b1", cls] == n * g
    assert per_class["occupation-o1"].to_dict() == {occ: 1 for _, occ in OCCUPATIONS}
    assert per_class["country-c1"].to_dict() == {country: 1 for country, _, _ in COUNTRIES}
    assert len(df) == 2 * (1 + n + n * g) + len(OCCUPATIONS) + len(COUNTRIES)


def test_pronoun_only_mutants(wl) -> None:
    df = generate_mutants(table(PRONOUN_ONLY), wl).set_index("class")
    assert df.loc["male", "text"] == ("He said his day was long; the book is his. "
                                      "Nobody saw him hurt himself.")
    assert df.loc["female", "text"] == ("She said her day was long; the book is hers. "
                                        "Nobody saw her hurt herself.")
    assert (df["align"] == "p").all()


def test_every_mutant_is_filled_and_values_match_text(wl) -> None:
    tables = table(PRONOUN_ONLY, NAMES_ONLY, NAMES_NOUNS, OCCUPATION, COUNTRY)
    df = generate_mutants(tables, wl)
    templates = dict(zip(tables["template_id"], tables["template"], strict=True))
    for row in df.itertuples():
        assert not placeholders.PLACEHOLDER.search(row.text)
        values = json.loads(row.values)
        assert list(values) == sorted(values)
        assert placeholders.fill(templates[row.template_id], values) == row.text


def test_one_class_fills_every_placeholder(wl) -> None:
    df = generate_mutants(table(NAMES_NOUNS), wl)
    for row in df.to_dict("records"):
        values, cls, text = json.loads(row["values"]), row["class"], row["text"]
        other = "female" if cls == "male" else "male"
        words = set(re.findall(r"[a-z]+", text.lower()))
        assert words & PRONOUNS[cls] and not words & PRONOUNS[other]
        assert values["name"] in NAMES[cls]
        assert wl.gender_of_noun(values["gaw"]) == cls
        assert text.count(values["name"]) == 1 and text.lower().count(values["gaw"]) == 2


def test_article_agrees_with_the_filled_noun(wl) -> None:
    df = generate_mutants(table(NAMES_NOUNS, OCCUPATION), wl)
    texts = set(df["text"])
    pair = next(i for i, (m, _) in enumerate(wl.gender_nouns) if m == "uncle")
    uncle = df[(df["align"] == f"n0g{pair}") & (df["class"] == "male")]["text"].item()
    assert uncle == "Omar, an uncle from Ohio, loves his dog. An uncle needs him."
    assert "A baker met Jo. The baker's car broke." in texts
    assert "An engineer met Jo. The engineer's car broke." in texts


def test_alignment_keys_pair_counterparts(wl) -> None:
    df = generate_mutants(table(NAMES_ONLY, NAMES_NOUNS), wl)
    for template_id, group in df.groupby("template_id"):
        male = group[group["class"] == "male"].set_index("align")
        female = group[group["class"] == "female"].set_index("align")
        assert list(male.index) == list(female.index)  # same keys, same order
        for align in male.index:
            m, f = json.loads(male.loc[align, "values"]), json.loads(female.loc[align, "values"])
            i = int(re.match(r"n(\d+)", align).group(1))
            assert (m["name"], f["name"]) == (NAMES["male"][i], NAMES["female"][i])
            if template_id == "gender-b1":
                j = int(align.split("g")[1])
                assert (m["gaw"], f["gaw"]) == wl.gender_nouns[j]
    occupation = generate_mutants(table(OCCUPATION, COUNTRY), wl)
    assert (occupation["align"] == "").all()


def test_ids_are_numbered_per_template_in_order(wl) -> None:
    df = generate_mutants(table(NAMES_ONLY, OCCUPATION), wl)
    assert df["id"].is_unique
    for template_id, group in df.groupby("template_id", sort=False):
        assert list(group["id"]) == [f"{template_id}#{k:04d}" for k in range(len(group))]
    first = df[df["template_id"] == "gender-n1"]
    assert list(first["class"]) == ["male"] * 4 + ["female"] * 4
    assert list(df[df["template_id"] == "occupation-o1"]["class"]) == [o for _, o in OCCUPATIONS]


def test_duplicate_mutants_are_dropped(wl) -> None:
    doubled = Wordlists(pronouns=wl.pronouns, gender_nouns=wl.gender_nouns,
                        occupations=(*OCCUPATIONS, ("a", "baker")), names=NAMES)
    df = generate_mutants(table(OCCUPATION), doubled)
    assert len(df) == len(OCCUPATIONS)
    assert not df.duplicated(["template_id", "class", "text"]).any()


def test_deterministic(wl) -> None:
    tables = table(PRONOUN_ONLY, NAMES_NOUNS, OCCUPATION, COUNTRY)
    pd.testing.assert_frame_equal(generate_mutants(tables, wl), generate_mutants(tables, wl))


def test_max_names(wl) -> None:
    df = generate_mutants(table(NAMES_NOUNS), wl, max_names=2)
    assert len(df) == 2 * 2 * len(wl.gender_nouns)
    assert set(df["values"].map(lambda v: json.loads(v)["name"])) == {
        "Omar", "Kenji", "Ingrid", "Leila"}
    with pytest.raises(ConfigError, match="max_names"):
        generate_mutants(table(NAMES_NOUNS), wl, max_names=0)


def test_names_already_in_the_text_are_skipped(wl) -> None:
    template = ("gender", "<Name> meets Kenji and Leila; <pro-subj> likes them.", "male", "x")
    df = generate_mutants(table(template), wl)
    male = df[df["class"] == "male"]
    assert list(male["align"]) == ["n0", "n2", "n3"]  # Kenji (n1) would collide
    assert list(df[df["class"] == "female"]["align"]) == ["n0", "n2", "n3"]
    assert not male["text"].str.startswith("Kenji").any()


def test_country_uses_names_of_the_template_gender(wl) -> None:
    df = generate_mutants(table(COUNTRY), wl)
    assert list(df["class"]) == [c for c, _, _ in COUNTRIES]
    assert [json.loads(v) for v in df["values"]] == [{"female": f} for _, _, f in COUNTRIES]
    assert df["text"].iloc[1] == "I liked Yui; Yui said she would return."
    male = ("country", "<Male> waved; he left.", "male", "c2")
    assert list(generate_mutants(table(male), wl)["text"]) == [
        f"{m} waved; he left." for _, m, _ in COUNTRIES]


def test_empty_table(wl) -> None:
    df = generate_mutants(table(), wl)
    assert tuple(df.columns) == COLUMNS and len(df) == 0


@pytest.mark.parametrize(("rows", "column", "message"), [
    ([("gender", "<Name> ran.", "male", "1"), ("race", "<Name> ran.", "male", "2")],
     "characteristic", "unknown characteristic 'race'"),
    ([("gender", "<occupation> ran; he fell.", "male", "1")], "template",
     "<occupation> does not belong"),
    ([("gender", "Nobody ran.", "male", "1")], "template", "without a name"),
    ([("occupation", "<A> tree fell on him.", "nurse", "1")], "template", "without an"),
    ([("country", "<Female> ran; he fell.", "male", "1")], "template", "<male>"),
    ([("country", "<Male> ran; he fell.", "other", "1")], "original_class", "gender"),
    ([("occupation", "He met <a> . <occupation>", "nurse", "1")], "template",
     "not followed by a word"),
])
def test_bad_templates(wl, rows, column, message) -> None:
    with pytest.raises(DataError, match=re.escape(message)) as err:
        generate_mutants(table(*rows), wl, source="t.parquet")
    assert err.value.column == column and err.value.row == len(rows)
    assert err.value.file == "t.parquet"


def test_bad_table(wl) -> None:
    with pytest.raises(DataError, match="missing required column") as err:
        generate_mutants(table(OCCUPATION).drop(columns="template"), wl)
    assert err.value.column == "template"
    bad = table(OCCUPATION, COUNTRY)
    bad["label"] = [1, "x"]
    with pytest.raises(DataError, match="not an integer") as err:
        generate_mutants(bad, wl)
    assert (err.value.row, err.value.column) == (2, "label")
    with pytest.raises(DataError, match="duplicate template id"):
        generate_mutants(table(OCCUPATION, OCCUPATION), wl)


def test_missing_word_lists(wl) -> None:
    bare = Wordlists(pronouns=wl.pronouns, gender_nouns=wl.gender_nouns, occupations=())
    generate_mutants(table(PRONOUN_ONLY), bare)  # pronouns need no further list
    for rows, message in [((NAMES_ONLY,), "name lists"), ((COUNTRY,), "country name list"),
                          ((OCCUPATION,), "occupation list")]:
        with pytest.raises(ConfigError, match=message):
            generate_mutants(table(*rows), bare)


def test_write_and_read_round_trip(wl, tmp_path) -> None:
    df = generate_mutants(table(NAMES_NOUNS, OCCUPATION, COUNTRY), wl)
    path = tmp_path / "mutants.parquet"
    write_mutants(df, path)
    pd.testing.assert_frame_equal(read_mutants(path), df)


def test_read_refuses_bad_files(wl, tmp_path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_mutants(tmp_path / "absent.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet\n")
    with pytest.raises(DataError, match="not a readable Parquet"):
        read_mutants(junk)
    partial = tmp_path / "partial.parquet"
    generate_mutants(table(OCCUPATION), wl).drop(columns="align").to_parquet(partial)
    with pytest.raises(DataError, match="missing required column") as err:
        read_mutants(partial)
    assert err.value.column == "align"


def _random_template(rng, characteristic: str) -> str:
    """A template of random literal words, punctuation and the characteristic's placeholders;
    an article is sometimes left without a word after it."""
    own = {"occupation": ["<occupation>", "<Occupation>"],
           "gender": ["<name>", "<Name>", "<gaw>", "<pro-subj>", "<Pro-obj>", "<pro-det>"],
           "country": ["<female>"]}[characteristic]
    words = ["the", "baker", "Jo", "apple", "umbrella", "met", "hour", "Ulm", ",", ".", "'s"]
    pieces = [str(rng.choice(own))]
    for _ in range(int(rng.integers(1, 9))):
        pieces.append(str(rng.choice(own + words + ["<a>", "<A>"])))
    rng.shuffle(pieces)
    seps = [str(rng.choice([" ", " ", "  ", "\n", ""])) for _ in pieces]
    return "".join(p + s for p, s in zip(pieces, seps, strict=True)).strip()


@pytest.mark.parametrize("characteristic", ["occupation", "gender", "country"])
def test_the_compiled_fill_equals_filling_the_whole_template(wl, characteristic) -> None:
    """Mutant generation fills a template piece by piece (``_compile``); its text must be
    what filling the whole template at once gives, also for an article before literal text,
    before a placeholder written without a space, or last (then both refuse the template)."""
    import numpy as np

    rng = np.random.default_rng(11)
    checked = refused = 0
    for k in range(150):
        template = _random_template(rng, characteristic)
        row = table((characteristic, template, "female", f"r{k}"))
        try:
            df = generate_mutants(row, wl)
        except DataError as e:
            assert "not followed by a word" in str(e) and "row 1" in str(e), str(e)
            with pytest.raises(ValueError, match="not followed by a word"):
                placeholders.fill(template, {key: "x" for key in placeholders.keys(template)})
            refused += 1
            continue
        for values, text in zip(df["values"], df["text"], strict=True):
            assert text == placeholders.fill(template, json.loads(values)), template
        checked += len(df)
    assert checked > 300 and refused > 5, (checked, refused)


def test_a_name_listed_twice_gives_one_mutant_numbered_without_gaps(wl) -> None:
    """A duplicated name (real name lists have them) yields one mutant per class and text:
    the first occurrence's alignment is kept and ids stay consecutive."""
    names = {"male": ("Omar", "Kenji", "Omar"), "female": ("Ingrid", "Leila", "Ingrid")}
    doubled = Wordlists(pronouns=wl.pronouns, gender_nouns=wl.gender_nouns,
                        occupations=wl.occupations, names=names)
    df = generate_mutants(table(NAMES_ONLY), doubled)
    assert list(df["align"]) == ["n0", "n1", "n0", "n1"]
    assert list(df["class"]) == ["male", "male", "female", "female"]
    assert list(df["id"]) == [f"gender-n1#{k:04d}" for k in range(4)]
    assert df["text"].str.startswith(("Omar ", "Kenji ", "Ingrid ", "Leila ")).all()
