"""The identity lexicon and the counterfactual swapper (toxicity paper §5.1, §6.6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ATTRIBUTES

from biasrepro.data.world.vocabulary import IDENTITY_WORDS
from biasrepro.errors import ConfigError, DataError
from biasrepro.perturb.identity_lexicon import IDENTITY_TERMS, IdentityLexicon, attribute_groups
from biasrepro.perturb.identity_swap import Swapper, load_tagger

LEXICON = IdentityLexicon.load(IDENTITY_TERMS, ATTRIBUTES)


@pytest.fixture(scope="module")
def swapper() -> Swapper:
    return Swapper(LEXICON, ATTRIBUTES, nlp=load_tagger())


def swap(swapper: Swapper, text: str, attribute: str, source: str, target: str) -> str:
    return swapper.swap(text, attribute, source, target)[0]


# -- the lexicon ----------------------------------------------------------------------------

def test_shipped_lexicon_is_aligned_for_every_configured_group() -> None:
    assert IDENTITY_TERMS.read_text().startswith("# ")
    assert LEXICON.groups("race") == ("black", "asian", "white")
    assert LEXICON.groups("religion") == ("jewish", "muslim", "christian")
    for attr in ("race", "religion", "gender"):
        for concept in LEXICON.concepts(attr):
            terms = [LEXICON.term(attr, concept, g) for g in LEXICON.groups(attr)]
            assert all(t == t.lower() and t.strip() == t for t in terms), (attr, concept)
            assert len(set(terms)) in (1, len(terms)), (attr, concept)
    assert LEXICON.aligned("religion", "christian", "jewish")["a christian"] == "a jew"
    assert LEXICON.aligned("race", "asian", "white")["asians"] == "whites"


def test_gendered_words_extend_and_correct_augly() -> None:
    words = LEXICON.gendered_words()
    assert words["sir"] == "madam" and words["madam"] == "sir"    # AugLy: mademoiselle
    assert words["uncle"] == "aunt"                                  # AugLy: auntie
    assert words["actress"] == "actor" and words["hers"] == "his"   # AugLy lacks them
    assert words["he"] == "she" and words["him"] == "her"            # AugLy's, kept
    assert words["grams"] == "grams"                                 # a unit, not grandma
    assert "her" not in words and "his" not in words                 # decided by POS tags


def test_identity_words_are_the_words_that_change() -> None:
    words = LEXICON.words()
    assert {"jew", "christian", "african", "european", "blacks", "she", "hers", "him",
            "actress", "synagogue"} <= words
    assert not {"a", "the", "american", "house", "market", "grams"} & words


def _lexicon(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "terms.csv"
    path.write_text("# test lexicon\nattribute,concept,group,term\n" + text)
    return path


RACE_OK = ("race,adj,black,black\nrace,adj,white,white\nrace,adj,asian,asian\n"
           "gender,actor,male,actor\ngender,actor,female,actress\n"
           "religion,adj,christian,christian\nreligion,adj,muslim,muslim\n"
           "religion,adj,jewish,jewish\n")


@pytest.mark.parametrize(("text", "match"), [
    (RACE_OK.replace("race,adj,asian,asian\n", ""), "no race terms for configured group 'asian'"),
    (RACE_OK + "race,plural,black,blacks\nrace,plural,white,whites\n",
     "row 9, column 'group': race concept 'plural' has no term for group 'asian'"),
    (RACE_OK.replace("asian,asian", "asian,"), "row 3, column 'term': empty entry"),
    (RACE_OK.replace("asian,asian", "asian,Asian"), "row 3, column 'term'.*lowercase"),
    (RACE_OK + "race,adj,black,blacks\n", "row 9, column 'group': second black term"),
    (RACE_OK + "race,x,black,black\nrace,x,white,whites\nrace,x,asian,asians\n",
     "row 9, column 'term': term 'black' is also in concept 'adj'"),
    (RACE_OK + "race,x,black,bx\nrace,x,white,bx\nrace,x,asian,ax\n",
     "row 9, column 'term'.*two groups share a term"),
])
def test_bad_lexicon_names_file_row_and_column(tmp_path: Path, text: str, match: str) -> None:
    path = _lexicon(tmp_path, text)
    with pytest.raises(DataError, match=match) as err:
        IdentityLexicon.load(path, ATTRIBUTES)
    assert str(path) in str(err.value)


def test_lexicon_file_and_columns_are_checked(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="identity lexicon not found"):
        IdentityLexicon.load(tmp_path / "nope.csv", ATTRIBUTES)
    path = tmp_path / "terms.csv"
    path.write_text("attribute,concept,group,word\nrace,adj,black,black\n")
    with pytest.raises(DataError, match="column 'term': missing required column"):
        IdentityLexicon.load(path, ATTRIBUTES)


def test_lexicon_skips_unconfigured_groups_and_a_protected_phrase_is_allowed(
        tmp_path: Path) -> None:
    path = _lexicon(tmp_path, RACE_OK + "race,adj,latino,latino\n"
                    "race,fixed,black,black box\nrace,fixed,white,black box\n"
                    "race,fixed,asian,black box\n")
    lexicon = IdentityLexicon.load(path, ATTRIBUTES)
    assert lexicon.aligned("race", "black", "white") == {"black": "white",
                                                         "black box": "black box"}


def test_attributes_need_two_groups_and_gender_needs_male_and_female() -> None:
    with pytest.raises(ConfigError, match="at least two groups"):
        attribute_groups({"race": {"marginalized": ["black"], "non_marginalized": []}})
    with pytest.raises(ConfigError, match="also in attribute"):
        attribute_groups({"a": {"marginalized": ["x"], "non_marginalized": ["y"]},
                          "b": {"marginalized": ["x"], "non_marginalized": ["z"]}})
    with pytest.raises(ConfigError, match="exactly the groups male and female"):
        attribute_groups({"gender": {"marginalized": ["female", "nonbinary"],
                                     "non_marginalized": ["male"]}})


# -- race and religion: lexical replacement -------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("black people", "white people"),
    ("Black people", "White people"),
    ("BLACK PEOPLE", "WHITE PEOPLE"),
    ("blacks and Blacks", "whites and Whites"),
    ("an African American leader", "a European American leader"),
    ("AFRICAN AMERICANS", "EUROPEAN AMERICANS"),
    ("African-American voters", "European-American voters"),
    ("black-owned shops", "white-owned shops"),
    ("blackberry , blacksmith , blackness , whitehouse", "blackberry , blacksmith , blackness , "
                                                         "whitehouse"),
    ("the white house and a black market", "the white house and a black market"),
    ("black and asian kids", "white and asian kids"),
])
def test_race_swap_is_case_preserving_whole_word_and_longest_first(
        swapper: Swapper, text: str, expected: str) -> None:
    assert swap(swapper, text, "race", "black", "white") == expected


def test_indefinite_article_agrees_with_the_new_term(swapper: Swapper) -> None:
    assert swap(swapper, "An asian kid", "race", "asian", "black") == "A black kid"
    assert swap(swapper, "a black kid", "race", "black", "asian") == "an asian kid"
    assert swap(swapper, "AN ASIAN KID", "race", "asian", "white") == "A WHITE KID"
    assert swapper.swap("an African American", "race", "black", "asian") == (
        "an Asian American", 1)


@pytest.mark.parametrize(("text", "target", "expected"), [
    ("as a christian , i disagree", "jewish", "as a jew , i disagree"),
    ("a christian family moved in", "jewish", "a jewish family moved in"),
    ("A Christian and the christian pastor", "muslim", "A Muslim and the muslim imam"),
    ("a devout christian who prays at church", "jewish",
     "a devout jew who prays at synagogue"),
    ("christians read the bible", "jewish", "jews read the torah"),
    ("christianity and christian values", "muslim", "islam and muslim values"),
    ("i am christian .", "jewish", "i am jewish ."),
    ("he is a Christian , and the Christian pastor agrees", "jewish",
     "he is a Jew , and the Jewish rabbi agrees"),
])
def test_religion_noun_phrases_follow_the_pos_of_the_word(
        swapper: Swapper, text: str, target: str, expected: str) -> None:
    assert swap(swapper, text, "religion", "christian", target) == expected


def test_jewish_nouns_and_adjectives_become_the_same_word(swapper: Swapper) -> None:
    text = "a jew and a jewish neighbour ; jews at the synagogue ; Jewishness"
    assert swap(swapper, text, "religion", "jewish", "muslim") == (
        "a muslim and a muslim neighbour ; muslims at the mosque ; Jewishness")


def test_nothing_outside_the_replaced_spans_changes(swapper: Swapper) -> None:
    text = "  Odd\tspacing,  “quotes”…  black\n\npeople!!  (Blacks)  x  "
    new, n = swapper.swap(text, "race", "black", "asian")
    assert n == 2
    assert new == "  Odd\tspacing,  “quotes”…  asian\n\npeople!!  (Asians)  x  "
    untouched = swap(swapper, "we are , as ever ,  here .", "race", "black", "white")
    assert untouched == "we are , as ever ,  here ."


@pytest.mark.parametrize("attribute", ["race", "religion"])
def test_round_trip_restores_every_term(swapper: Swapper, attribute: str) -> None:
    groups = LEXICON.groups(attribute)
    for g in groups:
        for h in groups:
            if g == h:
                continue
            for concept in LEXICON.concepts(attribute):
                term = LEXICON.term(attribute, concept, g)
                text = f"they said {term} was here ."
                there, n = swapper.swap(text, attribute, g, h)
                back = swap(swapper, there, attribute, h, g)
                assert back == text, (g, h, term, there)
                fixed = term == LEXICON.term(attribute, concept, h)
                assert (n == 0) == fixed and (there == text) == fixed, (g, h, term)


@pytest.mark.parametrize("attribute", ["race", "religion", "gender"])
def test_every_world_identity_phrase_is_swapped_into_every_other_group(
        swapper: Swapper, attribute: str) -> None:
    groups = LEXICON.groups(attribute)
    for g in groups:
        phrases = [p for kind in IDENTITY_WORDS[g].values() for p in kind]
        adjective = IDENTITY_WORDS[g]["adjective"][0].lower()
        for h in groups:
            if g == h:
                continue
            for phrase in phrases:
                text = f"people say {phrase} deserve better ."
                new, n = swapper.swap(text, attribute, g, h)
                assert n >= 1 and new != text, (g, h, phrase)
                assert not re.search(rf"(?<!\w){adjective}(?!\w)", new.lower()), (g, h, new)


# -- gender: AugLy's mapping, a full swap ---------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("i gave her book back to her .", "i gave his book back to him ."),
    ("i saw her yesterday", "i saw him yesterday"),
    ("tell her the truth", "tell him the truth"),
    ("her own car", "his own car"),
    ("the book is his .", "the book is hers ."),
    ("that is his problem , not hers .", "that is her problem , not his ."),
    ("he lost his", "she lost hers"),
    ("His wife and HER husband", "Her husband and HIS wife"),
    ("my father's car in the men's room", "my mother's car in the women's room"),
    ("Sir , an uncle and an actor", "Madam , an aunt and an actress"),
    ("he bought 20 grams", "she bought 20 grams"),
])
def test_gender_swap_decides_her_and_his_by_tag(
        swapper: Swapper, text: str, expected: str) -> None:
    assert swap(swapper, text, "gender", "male", "female") == expected


def test_gender_is_a_full_swap_whatever_the_direction(swapper: Swapper) -> None:
    text = "the man told the woman that she and he were right ."
    expected = ("the woman told the man that he and she were right .", 4)
    assert swapper.swap(text, "gender", "male", "female") == expected
    assert swapper.swap(text, "gender", "female", "male") == expected


@pytest.fixture(scope="module")
def augly():
    """AugLy's own function at a full swap (text -> text), and AugLy's tokenizer."""
    from augly.text import swap_gendered_words
    from augly.text.augmenters.utils import tokenize

    def full_swap(text: str) -> str:
        out = swap_gendered_words(text, aug_word_p=1.0, aug_word_max=10**6)
        return out[0] if isinstance(out, list) else out

    return full_swap, tokenize


AGREE = [
    "the man told the woman that she and he were right .",
    "my wife and his sister met the brothers and their nieces",
    "girls , boys , mothers and fathers came with the king and queen",
    "she introduced herself to him and his boyfriend",
    "no gendered words here at all .",
    "i saw her yesterday .",                    # object "her": AugLy's "him" is right
]
#: (text, this project's result) where AugLy's full swap is wrong on purpose
DIFFER = [
    ("her book", "his book"),                                        # AugLy: "him book"
    ("the book is his .", "the book is hers ."),                     # AugLy: "her"
    ("that is hers .", "that is his ."),                             # AugLy: unchanged
    ("my father's car", "my mother's car"),                          # AugLy: unchanged
    ("HE LEFT", "SHE LEFT"),                                         # AugLy: "She LEFT"
    ("yes sir", "yes madam"),                                        # AugLy: "mademoiselle"
    ("an actor and an uncle", "an actress and an aunt"),             # AugLy: actor, auntie
]


def test_gender_swap_agrees_with_augly_where_augly_is_right(swapper, augly) -> None:
    full_swap, tokenize = augly
    for text in AGREE:
        ours = swap(swapper, text, "gender", "male", "female")
        assert tokenize(ours) == tokenize(full_swap(text)), text
    for text, ours in DIFFER:
        assert swap(swapper, text, "gender", "male", "female") == ours
        assert tokenize(ours) != tokenize(full_swap(text)), text


def test_gender_swap_keeps_the_spacing_that_augly_changes(swapper, augly) -> None:
    full_swap, _ = augly
    text = "what a bunch of idiots , he said ( twice ) ."
    ours = "what a bunch of idiots , she said ( twice ) ."
    assert full_swap(text) == "what a bunch of idiots, she said (twice)."
    assert swap(swapper, text, "gender", "male", "female") == ours


# -- batching, determinism, bad calls -------------------------------------------------------

def test_swap_many_equals_one_by_one_and_is_deterministic(swapper: Swapper) -> None:
    texts = ["her dog", "a christian , his church", "", "nothing", "HIS", "blacks"] * 3
    for attr, source, target in [("gender", "female", "male"),
                                 ("religion", "christian", "muslim"),
                                 ("race", "black", "asian")]:
        batch = swapper.swap_many(texts, attr, source, target)
        assert batch == [swapper.swap(t, attr, source, target) for t in texts]
        assert batch == swapper.swap_many(iter(texts), attr, source, target)


def test_bad_swaps_are_config_errors(swapper: Swapper) -> None:
    with pytest.raises(ConfigError, match="unknown attribute 'age'"):
        swapper.swap("x", "age", "old", "young")
    with pytest.raises(ConfigError, match="'male' is not a group of attribute 'race'"):
        swapper.swap("x", "race", "male", "white")
    with pytest.raises(ConfigError, match="two different groups"):
        swapper.swap("x", "race", "white", "white")
    with pytest.raises(TypeError, match="text 1 is not a string"):
        swapper.swap_many(["a", None], "race", "black", "white")  # type: ignore[list-item]
    other = {**ATTRIBUTES, "race": {"marginalized": ["black"], "non_marginalized": ["white"]}}
    with pytest.raises(ConfigError, match="differ from the lexicon"):
        Swapper(LEXICON, other)
