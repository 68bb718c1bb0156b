"""Gender templates (BiasFinder Algorithm 1) and the person-cluster filter shared with country.

The filter (Algorithm 1 line 4, Algorithm 3 line 4) classifies every coreference mention as a
person name, a gendered pronoun, a gender-noun phrase or something else, and keeps a document
only when exactly one cluster refers to a person and all of that cluster's mentions do
(the original's ``len(person_coreferences) == 1``). Unlike the original
(biasfinder-original.md §2, §7):

- templates are cut from ``doc.text`` by character spans, right to left, so everything outside
  the replaced words is the original text ("<name>'s", not "<name> 's");
- pronoun placeholders come from the grammatical case in the parse (``Case``, ``Reflex``,
  ``Poss`` morphology, the ``poss`` dependency), so object "her" becomes ``<pro-obj>`` and
  determiner "her" ``<pro-det>``; "hers" and all-caps pronouns are handled;
- gender nouns are matched as tokens in both genders, case-insensitively, so "son" never
  matches inside "Jason"; an article right before the noun becomes ``<a>`` ("an uncle" ->
  "<a> <gaw>" -> "a boy");
- mentions that overlap or nest (fastcoref's long spans) reject the document.

Every name mention of the person (full name, first name or surname alone) becomes ``<name>``
and is filled with one first name, so a surname-only mention becomes a first name, as in the
paper. Gendered words outside the person's cluster (another character's "actress", an
unclustered pronoun) are left as they are, as in the paper; but a name word or gender noun of
the cluster that occurs again outside it (coreference missed a mention of the same person)
rejects the document, since it would survive unchanged in every mutant.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from biasrepro.biasfinder.placeholders import PLACEHOLDER, Candidate, placeholder
from biasrepro.nlp.coref import clusters_of

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

    from biasrepro.biasfinder.wordlists import Wordlists

NAME, PRONOUN, NOUN, OTHER = "name", "pronoun", "noun", "other"

#: Titles before a name that carry a gender; a gender template cannot swap them.
GENDERED_TITLES = {
    "mr": "male", "mister": "male", "sir": "male", "lord": "male",
    "mrs": "female", "ms": "female", "miss": "female", "madam": "female", "lady": "female",
    "dame": "female",
}
#: Titles before a name that carry no gender; they stay in the text before the placeholder.
NEUTRAL_TITLES = frozenset({"dr", "doctor", "prof", "professor"})

_TITLES = frozenset({*GENDERED_TITLES, *NEUTRAL_TITLES})
_LINKS = frozenset({"or", "and", "/", "nor"})
_ARTICLES = frozenset({"a", "an"})
_NAME_LIKE_ENTS = frozenset({"", "ORG", "PRODUCT", "WORK_OF_ART"})
_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})


@dataclass(frozen=True)
class Mention:
    """One classified coreference mention.

    ``target`` is the character span a placeholder replaces (the name without title or
    possessive 's, the pronoun, the gender noun; the whole mention for "other"); ``key`` is
    the gender placeholder key for it ("name", "pro-subj", ..., "gaw"; "" for "other");
    ``article`` is the span of "a"/"an" directly before a gender noun; ``gender`` comes from
    a pronoun, a gender noun or, for a name, a gendered title before it ("Mr.").
    """

    start: int
    end: int
    kind: str
    gender: str | None
    target: tuple[int, int]
    key: str
    article: tuple[int, int] | None = None


def _title(token: Token) -> str:
    return token.lower_.rstrip(".")


def _pronoun_case(token: Token, gender: str, wordlists: Wordlists) -> str | None:
    """The pronoun's case: the form decides when it is unambiguous (he, him, hers, himself),
    the parse decides between det/poss ("his") and obj/det ("her")."""
    forms = wordlists.pronouns[gender]
    cases = [c for c, form in forms.items() if form == token.lower_]
    if len(cases) == 1:
        return cases[0]
    morph = token.morph
    if "Yes" in morph.get("Reflex"):
        parsed = "refl"
    elif "Nom" in morph.get("Case"):
        parsed = "subj"
    elif "Yes" in morph.get("Poss") or token.tag_ == "PRP$":
        attached = (token.dep_ == "poss" and token.head.i > token.i
                    and token.head.pos_ in _NOMINAL)
        parsed = "det" if attached else "poss"
    elif "Acc" in morph.get("Case"):
        parsed = "obj"
    else:
        return None
    return parsed if parsed in cases else None


def _generic(token: Token, gender: str, wordlists: Wordlists) -> bool:
    """A pronoun paired with one of the other gender, "his or her", "he/she": no person."""
    doc = token.doc
    for link, other in ((token.i + 1, token.i + 2), (token.i - 1, token.i - 2)):
        if (0 <= min(link, other) and max(link, other) < len(doc)
                and doc[link].lower_ in _LINKS
                and wordlists.gender_of_pronoun(doc[other].text) not in (None, gender)):
            return True
    return False


def _is_gendered(token: Token, wordlists: Wordlists) -> bool:
    return (wordlists.gender_of_pronoun(token.text) is not None
            or wordlists.gender_of_noun(token.text) is not None
            or _title(token) in GENDERED_TITLES)


def _is_name_token(token: Token, person_tokens: set[str]) -> bool:
    """Part of a PERSON entity, or a capitalised word that is part of one elsewhere in the
    text, or a capitalised proper noun that NER did not call a place, group, date or number
    (the small pipeline often misses or mislabels a lone first name)."""
    if token.ent_type_ == "PERSON":
        return True
    if not token.text[:1].isupper():
        return False
    return token.lower_ in person_tokens or (token.pos_ == "PROPN"
                                           and token.ent_type_ in _NAME_LIKE_ENTS)


def _other(span: Span) -> Mention:
    return Mention(span.start_char, span.end_char, OTHER, None,
                   (span.start_char, span.end_char), "")


def classify(span: Span, person_tokens: set[str], wordlists: Wordlists) -> Mention:
    """Classify one mention (a token-aligned span) as a name, pronoun, gender noun or other."""
    start, end = span.start_char, span.end_char
    tokens = list(span)
    if len(tokens) == 1 and (g := wordlists.gender_of_pronoun(tokens[0].text)):
        tok = tokens[0]
        case = _pronoun_case(tok, g, wordlists)
        if case is None or _generic(tok, g, wordlists):
            return _other(span)
        return Mention(start, end, PRONOUN, g, (tok.idx, tok.idx + len(tok)), f"pro-{case}")

    root = span.root
    if (root.tag_ in ("NN", "NNP") and root.dep_ != "compound"  # not "the boy band"
            and (g := wordlists.gender_of_noun(root.text))
            and not any(t.i != root.i and (_is_gendered(t, wordlists) or t.ent_type_ == "PERSON")
                        for t in tokens)):
        article = None
        before = root.i - 1
        if before >= max(span.start - 1, 0) and root.doc[before].lower_ in _ARTICLES:
            art = root.doc[before]
            article = (art.idx, art.idx + len(art))
        return Mention(start, end, NOUN, g, (root.idx, root.idx + len(root)), "gaw", article)

    while tokens and tokens[-1].tag_ == "POS":  # possessive 's stays outside the name
        tokens.pop()
    while tokens and _title(tokens[0]) in _TITLES:
        tokens.pop(0)
    if not tokens or not all(_is_name_token(t, person_tokens) for t in tokens):
        return _other(span)
    # titles right before the name, inside the mention or not ("Mr." left out by a backend)
    genders: set[str | None] = set()
    i = tokens[0].i - 1
    while i >= 0 and _title(span.doc[i]) in _TITLES:
        genders.add(GENDERED_TITLES.get(_title(span.doc[i])))
        i -= 1
    genders.discard(None)
    if len(genders) > 1:
        return _other(span)
    target = (tokens[0].idx, tokens[-1].idx + len(tokens[-1]))
    return Mention(start, end, NAME, genders.pop() if genders else None, target, "name")


def person_cluster(doc: Doc, wordlists: Wordlists) -> list[Mention] | None:
    """The filter of Algorithms 1 and 3: the mentions of the one person cluster, or None.

    None when the text already contains placeholder syntax, when the number of clusters with
    a name, gendered pronoun or gender noun is not exactly one, when that cluster has any
    other mention, or when its mentions overlap or nest.
    """
    if PLACEHOLDER.search(doc.text):
        return None
    person_tokens = {t.lower_ for ent in doc.ents if ent.label_ == "PERSON" for t in ent}
    found: list[list[Mention]] = []
    for cluster in clusters_of(doc):
        mentions = []
        for s, e in sorted(cluster):
            span = doc.char_span(s, e, alignment_mode="expand")
            if span is None or not len(span):
                return None
            mentions.append(classify(span, person_tokens, wordlists))
        if any(m.kind != OTHER for m in mentions):
            found.append(mentions)
    if len(found) != 1:
        return None
    mentions = found[0]
    if any(m.kind == OTHER for m in mentions):
        return None
    if any(a.end > b.start for a, b in pairwise(mentions)):
        return None
    return mentions


def left_over(doc: Doc, mentions: list[Mention], kinds: tuple[str, ...]) -> bool:
    """Whether a word replaced in the cluster (for mentions of ``kinds``: a name's words,
    capitalised, or the gender noun, in any case) also occurs outside the replaced spans:
    likely the same person where coreference missed a mention ("Webb" after "Marcus Webb",
    "An uncle" before "The uncle"), which would survive unchanged in every mutant."""
    chosen = [m for m in mentions if m.kind in kinds]
    replaced = [m.target for m in chosen]
    words = {kind: {t.lower_ for m in chosen if m.kind == kind
                    for t in doc.char_span(*m.target) or () if t.is_alpha}
             for kind in (NAME, NOUN)}
    return any((t.lower_ in words[NOUN] or (t.lower_ in words[NAME] and t.text[:1].isupper()))
               and not any(s <= t.idx < e for s, e in replaced) for t in doc)


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str | None:
    """``text`` with each (start, end) span replaced, right to left; None if spans overlap."""
    edits = sorted(edits)
    if any(a[1] > b[0] for a, b in pairwise(edits)):
        return None
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text


def name_placeholder(key: str, surface: str) -> str:
    """A name placeholder: ``<KEY>`` for an all-caps name, else ``<key>`` (names fill as
    given, Title case)."""
    written = placeholder(key, surface)
    return written if written == f"<{key.upper()}>" else f"<{key}>"


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
    text = doc.text
    edits: list[tuple[int, int, str]] = []
    for m in mentions:
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
    return [Candidate(template, genders.pop())]
