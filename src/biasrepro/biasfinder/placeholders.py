"""Template placeholders: syntax, letter case, filling and article agreement.

A template is a review text in which replaced mentions are placeholders ``<key>``. The letter
case of the key says how to case the filled word: ``<pro-subj>`` inserts the value as given
("he"), ``<Pro-subj>`` capitalises its first letter ("He"), ``<PRO-SUBJ>`` upper-cases it
("HE"). The key ``a`` is the indefinite article agreeing with the word filled right after it,
so "<a> <gaw>" becomes "an uncle" or "a boy" (the original code kept the article of the
original word; biasfinder-original.md §3). Everything outside a placeholder is the original
text, character for character.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

#: Every placeholder key, lowercase (contract "Placeholders"; Algorithms 1-3 of the paper).
KEYS = (
    "name", "pro-subj", "pro-obj", "pro-det", "pro-poss", "pro-refl", "gaw",  # gender
    "occupation",  # occupation
    "male", "female",  # country of origin
    "a",  # indefinite article agreeing with the next word
)


def _spellings(key: str) -> list[str]:
    return list(dict.fromkeys((key, key[:1].upper() + key[1:], key.upper())))


#: A placeholder as written in a template: a known key in lower, Title or UPPER case.
PLACEHOLDER = re.compile(
    "<(" + "|".join(re.escape(s) for k in KEYS for s in _spellings(k)) + ")>"
)

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")

# Exceptions to "an before a written vowel": silent h takes "an", a vowel letter sounding
# like "y"/"w" takes "a". Checked on the word's first hyphen-separated part, lowercased.
_AN_WORDS = frozenset({"heir", "heiress", "heirloom", "honest", "honestly", "honesty",
                       "honor", "honorable", "honorary", "honour", "honourable", "hour",
                       "hourly"})
_A_WORDS = frozenset({"one", "once", "eulogy", "euphemism", "euphoric", "european", "ewe",
                      "ukrainian", "unicorn", "uniform", "union", "unique", "unit", "united",
                      "universal", "universe", "university", "uranium", "uruguayan", "usage",
                      "use", "used", "useful", "user", "usual", "utensil", "utility",
                      "utopian"})


@dataclass(frozen=True)
class Candidate:
    """One template produced for one document by a per-characteristic generator."""

    template: str  #: ``doc.text`` with mention spans replaced by placeholders
    original_class: str  #: "male"/"female" (gender, country) or the occupation word


def article(word: str) -> str:
    """The indefinite article for ``word`` by its sound: "a" or "an" (lowercase).

    A vowel letter takes "an" except for words sounding like "y"/"w" (university, user,
    European, one); a silent h takes "an" (honest, hour, heir). Acronyms are not spelled out.
    """
    first = word.strip().split("-")[0].lower()
    if not first:
        raise ValueError("article() needs a word")
    if first in _AN_WORDS:
        return "an"
    if first in _A_WORDS:
        return "a"
    return "an" if first[0] in "aeiou" else "a"


def placeholder(key: str, like: str) -> str:
    """``<key>`` written in the letter case of the surface text ``like`` it replaces.

    All-caps words of two or more letters give ``<KEY>``, a capitalised word ``<Key>``,
    anything else ``<key>``.
    """
    if key not in KEYS:
        raise ValueError(f"unknown placeholder key {key!r}")
    letters = [c for c in like if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return f"<{key.upper()}>"
    if letters and like.lstrip()[:1].isupper():
        return f"<{key[:1].upper()}{key[1:]}>"
    return f"<{key}>"


def find(template: str) -> list[tuple[int, int, str]]:
    """The placeholders of ``template`` as (start, end, key as written), in text order."""
    return [(m.start(), m.end(), m.group(1)) for m in PLACEHOLDER.finditer(template)]


def keys(template: str) -> tuple[str, ...]:
    """The sorted, distinct lowercase keys present in ``template``."""
    return tuple(sorted({k.lower() for _, _, k in find(template)}))


def _cased(value: str, written: str) -> str:
    if len(written) > 1 and written.isupper():
        return value.upper()
    if written[:1].isupper():
        return value[:1].upper() + value[1:]
    return value


def fill(template: str, values: Mapping[str, str]) -> str:
    """Fill every placeholder of ``template`` from ``values`` (keyed by lowercase key).

    The article ``a`` is not looked up: it is resolved last, from the first word of the
    filled text after it ("an uncle", "a boy"), and written "A"/"An" for ``<A>`` ("AN"
    before an all-caps word). Raises KeyError naming a placeholder without a value and
    ValueError for an article with no word after it.
    """
    out: list[str] = []
    pos = len(template)
    for start, end, written in reversed(find(template)):
        out.append(template[end:pos])
        pos = start
        key = written.lower()
        if key == "a":
            after = "".join(reversed(out))
            m = _WORD.search(after)
            if m is None or after[: m.start()].strip():
                raise ValueError(f"placeholder <{written}> is not followed by a word: "
                                 f"{template!r}")
            nxt = m.group(0)
            art = article(nxt)
            if written == "A":
                art = art.upper() if len(nxt) > 1 and nxt.isupper() else art.capitalize()
            out.append(art)
        else:
            if key not in values:
                raise KeyError(f"no value for placeholder <{written}> in template {template!r}")
            out.append(_cased(values[key], written))
    out.append(template[:pos])
    return "".join(reversed(out))


def replaced_spans(original: str, template: str) -> list[tuple[int, int, str]]:
    """Where each placeholder of ``template`` sits in ``original``: ``(start, end, key as
    written)`` character spans of the original text it replaced, in text order.

    The text between placeholders is the original's, so the spans are recovered by matching
    those literal pieces in order (a regular expression anchored at both ends; a placeholder
    replaced at least one character). ValueError when ``template`` is not ``original`` with
    spans replaced by placeholders.
    """
    found = find(template)
    pattern, pos = ["^"], 0
    for start, end, _ in found:
        pattern += [re.escape(template[pos:start]), "(.+?)"]
        pos = end
    pattern += [re.escape(template[pos:]), "$"]
    match = re.match("".join(pattern), original, flags=re.DOTALL)
    if match is None:
        raise ValueError("the template is not the original text with spans replaced by "
                         "placeholders")
    return [(match.start(k), match.end(k), written)
            for k, (_, _, written) in enumerate(found, start=1)]
