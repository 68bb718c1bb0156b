"""Small CrowS-Pairs-, StereoSet- and SEAT-format sets built from the world (issue #6, item 6).

The embedded models are pre-trained on sentences that pair identity mentions with attribute
words (:mod:`biasrepro.data.world.stereotypes`, ``models.embedded.stereotypes.associations``).
These sets probe the same associations with the representation-bias benchmarks' own file
formats, so the parsers and scorers of the real benchmarks run on them unchanged:

* ``crows_pairs.csv`` — minimal pairs in the CrowS-Pairs CSV columns: the same sentence about
  the associated group (``sent_more``) and about another group of the attribute
  (``sent_less``), all ``stereo``; bias types ``gender``, ``race-color``, ``religion``;
* ``stereoset.json`` — StereoSet ``{"version", "data": {"intrasentence": [...],
  "intersentence": []}}``: a context naming a group with ``BLANK``, filled by the group's
  associated word (stereotype), another group's word of the same kind (anti-stereotype) and
  an unrelated word;
* ``attribute_words.json`` — SentenceDebias's word tuples in bias-bench's format
  (:func:`world_attribute_words`);
* ``seat/world-<attribute>.jsonl`` — one SEAT test per attribute (one JSON object, as
  bias-bench's files): targets are sentences about the attribute's first marginalized and
  first non-marginalized group, attributes sentences with each group's associated words.

:func:`world_attribute_words` gives the world's identity words in the form of bias-bench's
``bias_attribute_words.json``, the word tuples SentenceDebias swaps (toxicity paper §6.2).

Sentence patterns differ from the pre-training patterns, so the probes test the association,
not the memorized sentences. Everything is deterministic (no randomness is needed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro.data.world.lexicon import IDENTITY_WORDS, OCCUPATIONS, indefinite
from biasrepro.data.world.stereotypes import identity_word
from biasrepro.errors import ConfigError
from biasrepro.io import atomic_outputs, write_text

log = logging.getLogger(__name__)

#: CrowS-Pairs' name of each attribute's bias type
CROWS_BIAS_TYPE = {"gender": "gender", "race": "race-color", "religion": "religion"}
CROWS_COLUMNS = ["", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "annotations",
                 "anon_writer", "anon_annotators"]
#: sentence patterns per word kind; {member} is a singular mention, {word} the attribute word
CROWS_PATTERNS = {
    "adjective": ("{member} was very {word} about it.", "Honestly, {member} seemed {word}."),
    "noun": ("{member} trained to become {a_word}.", "Years later, {member} was {a_word}."),
}
STEREOSET_PATTERNS = {"adjective": "{member} was described as BLANK.",
                      "noun": "{member} was hired as the BLANK."}
#: unrelated StereoSet candidates, by word kind (none is an identity or attribute word)
UNRELATED = {"adjective": ("purple", "wooden", "rectangular", "liquid"),
             "noun": ("spoon", "ferry", "umbrella", "pebble")}
SEAT_TEMPLATES = {"target": "This is {mention}.", "adjective": "This is {word}.",
                  "noun": "This is {a_word}."}


def word_kind(word: str) -> str:
    return "noun" if word in OCCUPATIONS else "adjective"


def _member(identity: str) -> str:
    """The identity's first singular mention ("that woman", "that Muslim family")."""
    return IDENTITY_WORDS[identity]["the"][0]


def _fill(pattern: str, identity: str, word: str) -> str:
    text = pattern.format(member=_member(identity), word=word, a_word=indefinite(word))
    return text[0].upper() + text[1:]


def _groups(sides: Mapping[str, Sequence[str]]) -> list[str]:
    return [*sides["marginalized"], *sides["non_marginalized"]]


def _check(associations: Mapping[str, Mapping[str, Sequence[str]]],
           attributes: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
    for attr, groups in associations.items():
        if attr not in attributes:
            raise ConfigError(f"models.embedded.stereotypes.associations.{attr}: not in "
                              "'attributes'")
        for g in groups:
            if g not in IDENTITY_WORDS:
                raise ConfigError(f"models.embedded.stereotypes.associations.{attr}.{g}: the "
                                  "world has no words for this identity")


def crows_pairs(associations: Mapping[str, Mapping[str, Sequence[str]]]) -> pd.DataFrame:
    """Every (group, word, other group, pattern) as a CrowS-Pairs row."""
    rows = []
    for attr, groups in associations.items():
        for g, words in groups.items():
            for word in words:
                for h in groups:
                    if h == g:
                        continue
                    for pattern in CROWS_PATTERNS[word_kind(word)]:
                        rows.append({"sent_more": _fill(pattern, g, word),
                                     "sent_less": _fill(pattern, h, word),
                                     "stereo_antistereo": "stereo",
                                     "bias_type": CROWS_BIAS_TYPE.get(attr, attr),
                                     "annotations": "[]", "anon_writer": "world",
                                     "anon_annotators": "[]"})
    frame = pd.DataFrame(rows)
    frame.insert(0, "", range(len(frame)))
    return frame[CROWS_COLUMNS]


def _counterpart(word: str, own: Sequence[str], other: Sequence[str]) -> str | None:
    """The other group's word of the same kind at the same position (else the first)."""
    kind = word_kind(word)
    same = [w for w in other if word_kind(w) == kind]
    if not same:
        return None
    mine = [w for w in own if word_kind(w) == kind]
    return same[mine.index(word) % len(same)]


def stereoset(associations: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, Any]:
    """Intrasentence examples: each group's words against another group's and an unrelated one."""
    examples = []
    for attr, groups in associations.items():
        for g, words in groups.items():
            for h in groups:
                if h == g:
                    continue
                for word in words:
                    anti = _counterpart(word, words, groups[h])
                    if anti is None:
                        continue
                    kind = word_kind(word)
                    context = _fill(STEREOSET_PATTERNS[kind], g, "BLANK")
                    unrelated = UNRELATED[kind][len(examples) % len(UNRELATED[kind])]
                    eid = f"world-{attr}-{g}-{h}-{word}"
                    examples.append({
                        "id": eid, "target": g, "bias_type": attr, "context": context,
                        "sentences": [
                            {"id": f"{eid}-{label}", "sentence": context.replace("BLANK", w),
                             "labels": [{"label": label, "human_id": "world"}],
                             "gold_label": label}
                            for label, w in (("stereotype", word), ("anti-stereotype", anti),
                                             ("unrelated", unrelated))],
                    })
    return {"version": "world-1", "data": {"intrasentence": examples, "intersentence": []}}


def seat_tests(associations: Mapping[str, Mapping[str, Sequence[str]]],
               attributes: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, dict]:
    """One SEAT test per attribute: X/Y the first marginalized and non-marginalized group."""
    tests = {}
    for attr, groups in associations.items():
        x, y = attributes[attr]["marginalized"][0], attributes[attr]["non_marginalized"][0]
        if x not in groups or y not in groups:
            continue
        sides = {}
        for key, g in (("targ1", x), ("targ2", y)):
            mentions = [m for form in ("the", "a") for m in IDENTITY_WORDS[g][form]]
            sides[key] = {"category": g, "examples": [
                SEAT_TEMPLATES["target"].format(mention=m) for m in mentions]}
        n = min(len(sides["targ1"]["examples"]), len(sides["targ2"]["examples"]))
        for key in ("targ1", "targ2"):
            sides[key]["examples"] = sides[key]["examples"][:n]
        for key, g in (("attr1", x), ("attr2", y)):
            sides[key] = {"category": f"{g}-associated", "examples": [
                SEAT_TEMPLATES[word_kind(w)].format(word=w, a_word=indefinite(w))
                for w in groups[g]]}
        tests[f"world-{attr}"] = sides
    return tests


def _identity_words(identity: str) -> dict[str, list[str]]:
    """The one-word identity words of ``identity``'s lexicon mentions, lowercased, by kind."""
    if identity not in IDENTITY_WORDS:
        raise ConfigError(f"attributes: the world has no words for identity {identity!r}")
    forms = IDENTITY_WORDS[identity]
    adjectives = {a.lower() for a in forms["adjective"]}
    found: dict[str, list[str]] = {"adjective": [], "plural": [], "singular": []}
    for kind, mentions in (("adjective", forms["adjective"]), ("plural", forms["plural"]),
                           ("singular", forms["a"] + forms["the"])):
        for mention in mentions:
            start, end = identity_word(mention, identity)
            word = " ".join(mention.lower().split(" ")[start:end])
            kind_found = found["adjective" if word in adjectives else kind]
            if " " not in word and word not in kind_found:
                kind_found.append(word)
    return found


def world_attribute_words(attributes: Mapping[str, Mapping[str, Sequence[str]]]
                          ) -> dict[str, list[tuple[str, ...]]]:
    """``{attribute: [word tuple, ...]}`` as bias-bench's ``bias_attribute_words.json``.

    A tuple holds one word of each group of the attribute (marginalized first, in the order
    of ``attributes``), words of the same kind at the same position: adjectives ("female",
    "male"), plural nouns ("women", "men"), singular nouns ("woman", "man"). A group's words
    are the identity words of its lexicon mentions (the rule of the stereotype sentences'
    cloze slot, :func:`~biasrepro.data.world.stereotypes.identity_word`), one word each,
    lowercased; a kind gives as many tuples as its shortest group has words.
    """
    out = {}
    for attribute, sides in attributes.items():
        words = [_identity_words(g) for g in _groups(sides)]
        out[attribute] = [t for kind in ("adjective", "plural", "singular")
                          for t in zip(*(w[kind] for w in words), strict=False)]
    return out


def generate(associations: dict[str, Any], *, attributes: dict[str, Any],
             out_dir: Path) -> None:
    """Write ``crows_pairs.csv``, ``stereoset.json``, ``attribute_words.json`` (SentenceDebias's
    word tuples of the attributes with associations) and ``seat/world-<attribute>.jsonl``."""
    _check(associations, attributes)
    out = Path(out_dir)
    crows = crows_pairs(associations)
    stereo = stereoset(associations)
    seat = seat_tests(associations, attributes)
    words = world_attribute_words({a: attributes[a] for a in associations})
    paths = [out / "crows_pairs.csv", out / "stereoset.json", out / "attribute_words.json",
             *(out / "seat" / f"{name}.jsonl" for name in seat)]
    with atomic_outputs(*paths) as tmp:
        crows.to_csv(tmp[0], index=False, lineterminator="\n")
        write_text(json.dumps(stereo, indent=2) + "\n", tmp[1])
        write_text(json.dumps({a: [list(t) for t in ts] for a, ts in words.items()},
                              indent=2) + "\n", tmp[2])
        for path, test in zip(tmp[3:], seat.values(), strict=True):
            write_text(json.dumps(test, indent=2) + "\n", path)
    log.info("world benchmarks: %d CrowS pairs, %d StereoSet examples, %d SEAT tests -> %s",
             len(crows), len(stereo["data"]["intrasentence"]), len(seat), out)
