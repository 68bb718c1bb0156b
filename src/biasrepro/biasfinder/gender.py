"""Gender templates (BiasFinder §4, Algorithm 1).

The review's one person comes from :func:`biasrepro.biasfinder.person.person_cluster`; it must
carry one gender, and its names, gendered pronouns and gender nouns become placeholders.
Unlike the original:

- templates are cut from ``doc.text`` by character spans, right to left, so everything outside
  the replaced words is the original text ("<name>'s", not "<name> 's");
- pronoun placeholders come from the grammatical case in the parse (``Case``, ``Reflex``,
  ``Poss`` morphology, the ``poss`` dependency), so object "her" becomes ``<pro-obj>`` and
  determiner "her" ``<pro-det>``; "hers" and all-caps pronouns are handled;
- gender nouns are matched as tokens in both genders, case-insensitively, so "son" never
  matches inside "Jason"; an article right before the noun becomes ``<a>`` ("an uncle" ->
  "<a> <gaw>" -> "a boy").

Every name mention of the person (full name, first name or surname alone) becomes ``<name>``
and is filled with one first name, so a surname-only mention becomes a first name, as in the
paper. Precision first: beyond the person filter, the gender checks refuse a review with a
gendered title, a name word of the person left elsewhere, a gendered noun right before the
name, or a word of the person's gender left outside the cluster (the paper left them; a mutant
would keep them). ``docs/biasfinder-templates.md`` lists the rules and what they measure on
real reviews.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from biasrepro.biasfinder.person import (
    NAME,
    NOUN,
    PERSON,
    PRONOUN,
    apply_edits,
    generic_pronoun,
    left_over,
    name_between,
    name_placeholder,
    name_tokens,
    person_cluster,
    plays_a_named_part,
)
from biasrepro.biasfinder.placeholders import Candidate, placeholder

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

    from biasrepro.biasfinder.person import Mention
    from biasrepro.biasfinder.wordlists import Wordlists

_WORDS = re.compile(r"[^\W\d_]+")
_INDEFINITE = frozenset({"a", "an", "another", "some", "any", "one", "every", "each", "no"})
#: gendered words that are not person nouns, and words for the body of one sex
GENDERED_WORDS = {"male": "male", "masculine": "male", "female": "female",
                  "feminine": "female", "lesbian": "female", "cowboy": "male",
                  "cowgirl": "female", "macho": "male", "manly": "male", "womanly": "female",
                  # the body of one sex: a swapped mutant would give it to the other
                  "breast": "female", "breasts": "female", "boobs": "female", "bra": "female",
                  "pregnant": "female", "pregnancy": "female", "beard": "male",
                  "moustache": "male", "mustache": "male"}
#: words ending in "man" that are no man
NOT_MEN = frozenset({"human", "german", "roman", "shaman", "talisman", "ottoman", "caiman",
                     "doberman", "ataman", "superhuman", "inhuman", "humane", "oman"})


def _stray_gendered(doc: Doc, mentions: list[Mention], gender: str,
                    wordlists: Wordlists) -> bool:
    """A word of the person's gender outside the cluster's replaced spans — a pronoun (not a
    generic "he or she"), a gender noun or another gendered person noun ("actress",
    "heroine") or "male"/"female": the same person missed by coreference, or someone else
    the swap would confuse with them; either way a mutant would keep it. Words that are
    probably about someone else may stay (:func:`_another_person`). Words are found in the
    text itself, so "she´s" counts too; plurals ("these guys") are not about one person."""
    inside = [m.target for m in mentions]
    for match in _WORDS.finditer(doc.text):
        word = match.group(0)
        lower = word.lower()
        if any(s <= match.start() < e for s, e in inside):
            continue
        pronoun = wordlists.gender_of_pronoun(lower)
        noun = wordlists.person_noun(lower)[1] or GENDERED_WORDS.get(lower) or _by_suffix(lower)
        if gender not in (pronoun, noun):
            continue
        token = doc.char_span(match.start(), match.end(), alignment_mode="expand")
        tok = token[0] if token is not None and len(token) else None
        if tok is None:
            return True
        if pronoun:
            title = tok.tag_ in ("NNP", "NNPS") and tok.text == word and word[:1].isupper()
            if not title and not generic_pronoun(tok, gender, wordlists):
                return True  # ("He" tagged a proper noun is part of a title in capitals)
        elif not _another_person(tok, wordlists):
            return True
    return False


def _by_suffix(word: str) -> str | None:
    """The gender of a compound person noun: "policewoman", "spokesman" (not "human")."""
    if word.endswith("woman") and len(word) > 5:
        return "female"
    if word.endswith("man") and len(word) > 4 and word not in NOT_MEN:
        return "male"
    return None


def _another_person(tok: Token, wordlists: Wordlists) -> bool:
    """A gendered word outside the person's cluster that is probably not about them: a
    possessed noun ("his son"), an indefinite one that is not predicated of anyone ("he
    stabs a guy", not "a man who betrays", "as an actress"), a modifier ("boy attitude"), an
    interjection ("Man, ..."), a word capitalised in mid-sentence (a title), a generic
    pair ("male/female"), or "man" for humankind ("the nature of man"). A
    possessor ("the heroine's friends") may be the person: it counts."""
    doc = tok.doc
    if tok.dep_ in ("compound", "amod", "nmod") and tok.lower_ not in GENDERED_WORDS:
        return True
    if tok.dep_ in ("intj", "npadvmod") or (  # "Man, what a film"
            tok.is_sent_start and tok.i + 1 < len(doc) and doc[tok.i + 1].text in (",", "!")):
        return True
    if tok.text[:1].isupper() and not tok.is_sent_start:
        return True
    near = doc[max(tok.i - 2, 0): tok.i + 3]
    if any(wordlists.person_noun(t.text)[1] not in (None, wordlists.person_noun(tok.text)[1])
           or GENDERED_WORDS.get(t.lower_) not in (None, GENDERED_WORDS.get(tok.lower_))
           for t in near):
        return True
    if (tok.lower_ in ("man", "woman") and tok.dep_ == "pobj"
            and not any(c.dep_ in ("det", "poss") for c in tok.children)):
        return True  # "the nature of man": humankind, not someone
    if tok.lower_ in GENDERED_WORDS:
        return False
    if any(c.dep_ == "poss" for c in tok.children):
        return True
    indefinite = any(c.dep_ == "det" and c.lower_ in _INDEFINITE for c in tok.children)
    predicated = tok.dep_ in ("attr", "appos") or (
        tok.dep_ == "pobj" and tok.head.lower_ in ("as", "of"))  # "as an actress"
    return indefinite and not predicated


def _gendered_beside(doc: Doc, m: Mention, wordlists: Wordlists) -> bool:
    """A gendered noun right before a name ("the girl Alice"), which a swap would leave."""
    span = name_tokens(doc, m)
    if span.start == 0:
        return False
    before = doc[span.start - 1]
    return wordlists.person_noun(before.text)[1] is not None


def gender_templates(doc: Doc, wordlists: Wordlists) -> list[Candidate]:
    """Algorithm 1: at most one gender template for ``doc``.

    The person cluster must carry a gender (a pronoun or gender noun; all agree) and have no
    gendered title ("Mr. Smith" has no placeholder for "Mr.").
    """
    mentions = person_cluster(doc, wordlists)
    if mentions is None or any(m.kind == NAME and m.gender for m in mentions):
        return []
    genders = {m.gender for m in mentions if m.kind in (PRONOUN, NOUN)}
    if len(genders) != 1 or left_over(doc, mentions, (NAME, NOUN)):
        return []
    if any(_gendered_beside(doc, m, wordlists) for m in mentions if m.kind == NAME):
        return []
    gender = next(iter(genders))
    if (_stray_gendered(doc, mentions, gender, wordlists)
            or plays_a_named_part(doc, mentions) or name_between(doc, mentions, gender)):
        return []
    text = doc.text
    edits: list[tuple[int, int, str]] = []
    for m in mentions:
        if m.kind == PERSON:
            continue  # "the writer" stays: it has no gender to swap
        s, e = m.target
        if m.kind == NAME:
            edits.append((s, e, name_placeholder("name", text[s:e])))
        else:
            edits.append((s, e, placeholder(m.key, text[s:e])))
        if m.article is not None:
            a0, a1 = m.article
            edits.append((a0, a1, placeholder("a", text[a0:a1])))
    template = apply_edits(text, edits)
    if template is None:
        return []
    return [Candidate(template, gender)]
