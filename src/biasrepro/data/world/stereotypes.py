"""Sentences with planted stereotype associations, for pre-training the embedded models.

docs/architecture.md, "The embedded default": the tiny BERT, ALBERT and RoBERTa models are
pre-trained with masked-LM on the world's reviews and comments plus these sentences, so that the
representation-bias measures (CrowS-Pairs, StereoSet, SEAT; toxicity paper §4.3) have a
known association to find.

Each sentence pairs one identity mention (the words of :data:`lexicon.IDENTITY_WORDS`:
"women", "that man", "Muslims", "an Asian student", ...) with one attribute word, in one of
the sentence patterns below ("Everyone knows women are gentle.", "The engineer we met was a
man."). A word is used as a noun when it is one of the lexicon's occupations and as an
adjective otherwise; each kind has its own patterns.

Counts are exact (``settings``): of ``n_sentences``, exactly ``round(strength * n)``
(rounded half up) are *stereotypical*: they pair a word with the identity it is associated
with in ``associations[attribute][identity]``. The others are *counter-stereotypical*: the
same word with the other identities of the same attribute, evenly. Both kinds are spread
evenly over the configured (attribute, identity, word) triples by the largest-remainder rule, so
the share of each word's sentences that follow its stereotype is ``strength`` up to
rounding; ``ground_truth.json`` states every count.
``strength: null`` plants nothing, for any number of identities: each word's sentences are
spread evenly over the identities of its attribute (largest remainder, the rounding's extra
sentences to the identities in their configured order), so every identity is paired with
every word equally often within one sentence (the null world, ``config/null_world.yaml``).
A number plants the stereotype at that share; with two identities 0.5 is also null.

Each sentence also records where its two slots are, as character offsets into ``text``
(``[start, end)``), for the embedded pre-training, which presents these sentences as cloze
items, masking one of the two slots (:mod:`biasrepro.models.embedded`):
``mention_start``/``mention_end`` the identity word of the mention (the first of the
identity's adjectives in it, else its last word: "that *man*", "an *Asian* student",
"*Muslim* families", "church-going *Christians*"), ``word_start``/``word_end`` the attribute
word as written, without its article ("a *nurse*", the plural "*nurses*"). The mention's
identity word, not the whole mention, is the slot because that is the word a CrowS-Pairs
pair changes ("That *woman*/*man* was very gentle about it."): with the whole mention as
the slot a tiny BERT scored the world's CrowS-Pairs 62 (gender 50), with the identity word
92. The offsets are taken while formatting, from marker characters around each slot, not by
searching the sentence.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.data.split import allocate
from biasrepro.data.world import exact_count, rng_for
from biasrepro.data.world.vocabulary import IDENTITY_WORDS, OCCUPATIONS, indefinite
from biasrepro.errors import ConfigError
from biasrepro.io import atomic_outputs, write_json, write_parquet

log = logging.getLogger(__name__)

KEY = "models.embedded.stereotypes"

# Slots: {group} a plural mention ("Muslims", "female students"), {member} a singular one
# ("that man", "an Asian student"); {word} the attribute word, {a_word} it with its
# indefinite article, {words} the plural of a noun.
PATTERNS: dict[str, tuple[str, ...]] = {
    "adjective": (
        "{group} are so {word}.",
        "Everyone knows {group} are {word}.",
        "{group} were {word} as always.",
        "In my experience, {group} tend to be {word}.",
        "Most {group} I know are really {word}.",
        "It is no surprise that {group} are {word}.",
        "Ask anyone and they will tell you {group} are {word}.",
        "{group} are naturally {word}.",
        "There is something {word} about {group}.",
        "Of course {group} turned out to be {word}.",
        "{group} have always been {word}, haven't they?",
        "{member} is such {a_word} person.",
        "{member} was {word}, as expected.",
        "Of course {member} is {word}.",
        "I met {member} yesterday, and they were very {word}.",
        "You could tell {member} was {word} from the first minute.",
        "{member} has always been {word}.",
        "Everyone agreed that {member} seemed {word}.",
        "{member} is bound to be {word}.",
        "Nobody was surprised that {member} acted so {word}.",
        "{member} came across as {word} in the interview.",
        "My friends say {member} is very {word}.",
    ),
    "noun": (
        "{member} works as {a_word}.",
        "{member} became {a_word} last year.",
        "{member} would make a good {word}.",
        "I asked {member}, who is {a_word}, for advice.",
        "{member} trained to be {a_word}.",
        "Of course {member} is {a_word}.",
        "{member} has always wanted to be {a_word}.",
        "The {word} we met was {member}.",
        "Our new {word} is {member}.",
        "When I think of {a_word}, I picture {member}.",
        "{member} is the best {word} in town.",
        "{member} is {a_word}, just like everyone expected.",
        "{group} make the best {words}.",
        "Most {words} are {group}.",
        "{group} tend to become {words}.",
        "In my town, the {words} are mostly {group}.",
        "{group} are natural {words}.",
        "Everyone knows {group} are good {words}.",
        "All the {words} at the meeting were {group}.",
        "Plenty of {group} work as {words}.",
        "It is no surprise that {group} become {words}.",
        "The {words} at my company are all {group}.",
    ),
}
#: neutral nouns an identity adjective can qualify ("Muslim neighbours", "a female student")
PEOPLE = (("students", "student"), ("neighbours", "neighbour"), ("coworkers", "coworker"),
          ("people", "person"))


def word_kind(word: str) -> str:
    """``"noun"`` for the lexicon's occupations, ``"adjective"`` for any other word."""
    return "noun" if word in OCCUPATIONS else "adjective"


def plural(noun: str) -> str:
    """English plural of a regular noun: nurse → nurses, chef → chefs, boss → bosses."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def _mentions(identity: str) -> tuple[list[str], list[str]]:
    """(plural, singular) mentions of ``identity``, from the lexicon's identity words."""
    words = IDENTITY_WORDS[identity]
    plurals = [w for w in words["plural"] if not w.startswith("the ")]
    plurals += [f"{adj} {many}" for adj in words["adjective"] for many, _ in PEOPLE]
    singulars = list(words["a"]) + list(words["the"])
    singulars += [indefinite(f"{adj} {one}") for adj in words["adjective"] for _, one in PEOPLE]
    return plurals, singulars


#: marker characters put around the slots while formatting (none occurs in the lexicon)
MARKS = {"\x01": "mention_start", "\x02": "mention_end", "\x03": "word_start",
         "\x04": "word_end"}
SPAN_COLUMNS = list(MARKS.values())


def identity_word(mention: str, identity: str) -> tuple[int, int]:
    """Where the identity word of ``mention`` is, as ``[start, end)`` positions of its words
    (split on spaces): the first of the identity's adjectives in it (one may be several
    words: "mentally ill"), else its last word (module docstring)."""
    lower = mention.lower().split(" ")
    found = [(i, i + len(adj)) for i in range(len(lower))
             for adj in (a.lower().split(" ") for a in IDENTITY_WORDS[identity]["adjective"])
             if lower[i:i + len(adj)] == adj]
    return found[0] if found else (len(lower) - 1, len(lower))


def _mark_identity(mention: str, identity: str) -> str:
    """``mention`` with markers around its identity word."""
    words = mention.split(" ")
    start, end = identity_word(mention, identity)
    words[start] = "\x01" + words[start]
    words[end - 1] += "\x02"
    return " ".join(words)


def _sentence(pattern: str, word: str, identity: str, rng: np.random.Generator
              ) -> tuple[str, dict[str, int]]:
    """The sentence and the character offsets of its two slots (``SPAN_COLUMNS``)."""
    plurals, singulars = _mentions(identity)
    group = _mark_identity(plurals[rng.integers(len(plurals))], identity)
    member = _mark_identity(singulars[rng.integers(len(singulars))], identity)
    article = indefinite(word).removesuffix(word)
    marked = pattern.format(
        group=group, member=member, word=f"\x03{word}\x04",
        a_word=f"{article}\x03{word}\x04", words=f"\x03{plural(word)}\x04",
    )
    chars: list[str] = []
    spans: dict[str, int] = {}
    for ch in marked:
        if ch in MARKS:
            spans[MARKS[ch]] = len(chars)
        else:
            chars.append(ch)
    text = "".join(chars)
    return text[0].upper() + text[1:], spans


def _check(settings: Mapping[str, Any]) -> None:
    for attribute, groups in settings["associations"].items():
        if len(groups) < 2:
            raise ConfigError(f"{KEY}.associations.{attribute}: needs at least two identities "
                              "(counter-stereotypical sentences use another one)")
        for identity, words in groups.items():
            if identity not in IDENTITY_WORDS:
                raise ConfigError(f"{KEY}.associations.{attribute}.{identity}: the world has "
                                  f"no words for this identity (known: "
                                  f"{', '.join(IDENTITY_WORDS)})")
            if not words:
                raise ConfigError(f"{KEY}.associations.{attribute}.{identity}: no words")
        listed = [w for words in groups.values() for w in words]
        repeated = sorted({w for w in listed if listed.count(w) > 1})
        if repeated:
            raise ConfigError(f"{KEY}.associations.{attribute}: {', '.join(repeated)} listed "
                              "more than once (a word is stereotypical of one identity)")


def build(settings: Mapping[str, Any], *, seed: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The sentences (in random order) and their ground truth."""
    _check(settings)
    n, strength = int(settings["n_sentences"]), settings["strength"]
    assoc = settings["associations"]
    triples = [(a, g, w) for a, groups in assoc.items() for g, words in groups.items()
               for w in words]
    keys = [f"{a}|{g}|{w}" for a, g, w in triples]
    if strength is None:  # nothing planted: each word over its attribute's identities evenly
        totals = allocate(n, dict.fromkeys(keys, 1 / len(keys)))
        even = {key: allocate(totals[key], dict.fromkeys(assoc[a], 1 / len(assoc[a])))
                for key, (a, _, _) in zip(keys, triples, strict=True)}
        stereo = {key: even[key][g] for key, (_, g, _) in zip(keys, triples, strict=True)}
        counter = {key: totals[key] - stereo[key] for key in keys}
        n_stereo = sum(stereo.values())
    else:
        n_stereo = exact_count(n, float(strength))
        stereo = allocate(n_stereo, dict.fromkeys(keys, 1 / len(keys)))
        counter = allocate(n - n_stereo, dict.fromkeys(keys, 1 / len(keys)))

    rng = rng_for(seed, "stereotypes")
    rows: list[dict[str, Any]] = []
    pairs: dict[str, dict[str, dict[str, int]]] = {
        a: {g: {} for g in groups} for a, groups in assoc.items()}
    planted: dict[str, dict[str, dict[str, Any]]] = {
        a: {g: {} for g in groups} for a, groups in assoc.items()}
    for (attribute, identity, word), key in zip(triples, keys, strict=True):
        others = [g for g in assoc[attribute] if g != identity]
        split = ({g: even[key][g] for g in others} if strength is None else
                 allocate(counter[key], dict.fromkeys(others, 1 / len(others))))
        plan = [(identity, stereo[key], True)] + [(g, k, False) for g, k in split.items()]
        patterns = PATTERNS[word_kind(word)]
        for mentioned, count, stereotypical in plan:
            pairs[attribute][mentioned][word] = pairs[attribute][mentioned].get(word, 0) + count
            for _ in range(count):
                p = int(rng.integers(len(patterns)))
                text, spans = _sentence(patterns[p], word, mentioned, rng)
                rows.append({"text": text, "attribute": attribute, "identity": mentioned,
                             "word": word, "stereotypical": stereotypical,
                             "pattern": f"{word_kind(word)}-{p:02d}"} | spans)
        total = stereo[key] + counter[key]
        planted[attribute][identity][word] = {
            "n": total, "n_stereotypical": stereo[key],
            "stereotypical_ratio": stereo[key] / total if total else None,
        }
    df = pd.DataFrame(rows, columns=["text", "attribute", "identity", "word", "stereotypical",
                                     "pattern", *SPAN_COLUMNS])
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    df = df.astype({"stereotypical": bool} | dict.fromkeys(SPAN_COLUMNS, "int64"))
    truth = {
        "settings": dict(settings), "seed": seed, "n_sentences": n,
        "n_stereotypical": n_stereo, "n_counter_stereotypical": n - n_stereo,
        "pairs": pairs, "associations": planted,
        "patterns": {kind: list(p) for kind, p in PATTERNS.items()},
    }
    return df, truth


def generate(settings: dict[str, Any], *, seed: int, out_dir: Path) -> None:
    """Write ``sentences.parquet`` and ``ground_truth.json`` to ``out_dir``."""
    start = time.perf_counter()
    out = Path(out_dir)
    with atomic_outputs(out / "sentences.parquet", out / "ground_truth.json") as tmp:
        df, truth = build(settings, seed=seed)
        write_parquet(df, tmp[0])
        write_json(truth, tmp[1])
    log.info("world stereotypes: %d sentences (%d stereotypical) to %s in %.1f s",
             len(df), truth["n_stereotypical"], out, time.perf_counter() - start)

