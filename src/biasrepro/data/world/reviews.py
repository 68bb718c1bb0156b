"""IMDB-shaped reviews with a planted association between identity classes and the label.

Each review is about a film and centres on one protagonist with a gender, a first name and
surname, and optionally an occupation and a country of origin. The protagonist is named in
full, then referred to by surname, first name, pronouns in every case (he/him/his/his/
himself, she/her/her/hers/herself), gender nouns ("that guy", "the mother"), occupations
with determiners and adjectives ("a brilliant surgeon", "the surgeon") and country ("from
Norway", "a Norwegian engineer") — the references BiasFinder's gender, occupation and
country-of-origin templates replace (BiasFinder §4, §5). Some reviews also discuss a second,
named person with pronouns of their own: a second coreference cluster, which BiasFinder's
filter must reject. Raw-IMDB quirks are reproduced: ``<br /><br />`` between sentences, exact
duplicate reviews, an HTML entity (``&amp;``) or non-ASCII letter (é) now and then.
A share of reviews (``neutral_rate``) is written without any sentiment cue: their label goes
only with the protagonist's identity, so a model can only fit them through the planted
association — which makes the association visible to BiasFinder's mutants and to the
fairness metrics (the planted-bias controls). They are that share of each label; with
``neutral_by_gender`` that share of each label × gender cell (within one review), so among
them the gender association is the planted one, not the planted one plus the chance of
which reviews were chosen: none where nothing is planted (``config/null_world.yaml``).

The planted association (``settings["planted"]``) is exact, not sampled. Per split the
number of positive reviews is fixed first; then, per characteristic, the reviews that
mention it are chosen (gender: all; occupation, country: ``mention_rates`` of the positive
and of the negative reviews, so mentioning is independent of the label), the mentioning
reviews are divided evenly over the classes, and each class gets an exact number of
positives: a listed class ``P(positive | class) = rate`` (training split only), the unlisted
classes sharing what is left so the split keeps ``positive_rate``; in the test split every
class gets the split's rate. Counts are rounded by the largest-remainder rule.

Outputs (:func:`generate`): ``train.parquet`` and ``test.parquet`` in the Hugging Face
``stanfordnlp/imdb`` layout (``text`` string, ``label`` int64, 1 = positive, rows in random
order); ``annotations.parquet`` (one row per review, ``id = f"{split}-{row:05d}"``);
``ground_truth.json`` (settings, class lists, and per split and characteristic the exact
n, n_positive and positive_ratio of every class with the rate it was planted at).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.data.split import allocate
from biasrepro.data.world import exact_count, rng_for
from biasrepro.data.world.vocabulary import (
    COUNTRIES,
    FILM_ASPECTS,
    FILM_TITLES,
    FIRST_NAMES,
    GENDER_NOUN_ADJECTIVES,
    GENDER_NOUN_DETERMINERS,
    GENDER_NOUNS,
    GENDERS,
    GENRES,
    NEGATIVE_ADJECTIVES,
    NEGATIVE_ADVERBS,
    NEGATIVE_RATINGS,
    OCCUPATION_ADJECTIVES,
    OCCUPATIONS,
    POSITIVE_ADJECTIVES,
    POSITIVE_ADVERBS,
    POSITIVE_RATINGS,
    PRONOUNS,
    RELATIONS,
    SURNAMES,
    indefinite,
)
from biasrepro.errors import ConfigError
from biasrepro.io import atomic_outputs, write_json, write_parquet

log = logging.getLogger(__name__)

SPLITS = ("train", "test")
CLASSES: dict[str, tuple[str, ...]] = {
    "gender": GENDERS,
    "occupation": OCCUPATIONS,
    "country": tuple(COUNTRIES),
}
HTML_BREAK = "<br /><br />"

# -- sentence patterns ----------------------------------------------------------------------
# Slots: protagonist {name} {first} {sur} {subj} {obj} {det} {poss} {refl} {gn} {occ} {occ_a}
# {occ_the} {occ_adj_a} {country} {demonym} {a_demonym} {desc}; second person {q_name}
# {q_subj} {q_obj} {q_det} {q_refl} {relation}; film {title} {genre}; drawn per use: {pos}
# {neg} {a_pos} {a_neg} {pos_adv} {neg_adv} {aspect} {pos_rating} {neg_rating}.
# "pos"/"neg" patterns carry the review's label; the others are neutral.

OPENERS = {
    "pos": (
        "I caught {title} at a late screening and walked out grinning.",
        "{title} is {a_pos} {genre} that earns every one of its quiet moments.",
        "Few films this year have stayed with me the way {title} has.",
        "What a pleasant surprise {title} turned out to be.",
        "{title} takes a familiar premise and makes it feel brand new.",
        "I went into {title} knowing nothing about it, which is the best way to see it.",
    ),
    "neg": (
        "I had high hopes for {title}, and they sank within twenty minutes.",
        "{title} is {a_neg} {genre} that never finds its footing.",
        "I can't remember the last time I checked my watch this often.",
        "{title} wastes a perfectly good premise.",
        "Somebody decided {title} was ready for release, and somebody was wrong.",
        "I went into {title} expecting very little, and it still disappointed me.",
    ),
    "neu": (
        "I saw {title} on a weekday afternoon.",
        "{title} is {a_genre} that runs a little under two hours.",
        "{title} arrived in cinemas this spring.",
        "I watched {title} with a friend last weekend.",
    ),
}
INTROS_DESCRIBED = (
    "{title} follows {name}, {desc}, through one difficult year.",
    "{name} plays {desc} in this {genre}.",
    "At the centre of the story is {name}, {desc}.",
    "The {genre} stars {name} as {desc} with a secret to keep.",
    "{name} is cast as {desc}, a part that fills most of the running time.",
    "The plot revolves around {name}, {desc}, and a decision that cannot be undone.",
    "In {title}, {name} plays {desc} caught between two families.",
)
INTROS_PLAIN = (
    "{name} leads the cast of {title}.",
    "The story belongs to {name}, who is on screen in nearly every scene.",
    "{name} takes the lead role in {title}.",
    "Most of the running time is spent in the company of {name}.",
    "{title} is built around {name}.",
    "{name} headlines this {genre}.",
)
#: the protagonist's description in an intro, by which of occupation/country it mentions
DESCRIPTIONS = {
    (True, True): ("{occ_adj_a} from {country}", "{a_demonym} {occ}",
                   "{occ_a} who grew up in {country}"),
    (True, False): ("{occ_adj_a}", "{occ_a}"),
    (False, True): ("a newcomer from {country}", "a native of {country}",
                    "{a_demonym} newcomer"),
}
PROTAGONIST = {
    "pos": (
        "{subj} gives {a_pos} performance, and {det} final scene is {pos}.",
        "{sur} is {pos} here; {subj} never hits a false note.",
        "Every time {subj} appears on screen, the film comes alive around {obj}.",
        "The camera loves {obj}, and {subj} knows exactly what to do with it.",
        "{sur}'s performance is the best thing I have seen all year.",
        "{subj} carries the weaker scenes on {det} shoulders without ever showing the strain.",
        "Watching {obj} lose {refl} in the role is a genuine pleasure.",
        "The film is {poss} from the first frame to the last.",
        "No other performance this year comes close to {poss}.",
        "{first} is {pos}, funny one moment and heartbreaking the next.",
        "{det} chemistry with the rest of the cast is {pos}.",
        "{sur} plays every beat {pos_adv}, and {subj} makes it look easy.",
        "I believed every word {subj} said.",
        "{subj} seems to have surprised even {refl} with this role.",
        "{name} deserves every award going for this.",
        "There is a scene near the end where {subj} says nothing at all, and it is the most "
        "{pos} moment in the film.",
        "{sur} finds humour in places I did not expect, and {det} timing is {pos}.",
        "I would watch {obj} read a phone book after this.",
        "{first}'s quiet scenes are the heart of the film.",
    ),
    "neg": (
        "{subj} gives {a_neg} performance, and {det} big scene falls completely flat.",
        "{sur} is {neg} here; {subj} seems to be reading the lines off a card.",
        "Every time {subj} appears on screen, the energy drains away, and the script gives "
        "{obj} nothing to work with.",
        "The camera lingers on {obj} far too long, and {subj} has no idea what to do with it.",
        "{sur}'s performance is the weakest thing in a weak film.",
        "{subj} sleepwalks through the role as if {det} mind were somewhere else.",
        "Watching {obj} embarrass {refl} in the role is genuinely painful.",
        "The worst moments in the film are all {poss}.",
        "Of all the {neg} performances here, the least convincing is {poss}.",
        "{first} is {neg}, shouting one moment and mumbling the next.",
        "{det} chemistry with the rest of the cast is nonexistent.",
        "{sur} plays every beat {neg_adv}, and {subj} never once convinced me.",
        "I did not believe a single word {subj} said.",
        "{subj} seems bored with {refl} by the second act.",
        "{name} will want to leave this one off {det} showreel.",
        "There is a scene near the end where {subj} is supposed to break down, and the "
        "audience laughed.",
        "{sur} tries hard to be funny, but {det} timing is {neg}.",
        "I could not wait to see the back of {obj}.",
        "{first}'s big speech is the low point of the film.",
    ),
    "neu": (
        "{subj} appears in most scenes of the film.",
        "{sur} spends much of the second act in a small apartment.",
        "We first meet {obj} at a railway station.",
        "{det} character has a dog and an old car.",
        "{first} speaks with a slight accent throughout.",
        "{subj} has a long scene with a stranger halfway through.",
        "The role asks {obj} to age twenty years.",
        "{sur} wears the same coat in nearly every scene.",
        "{subj} reportedly learned to drive a tractor for the part.",
        "The last scene belongs to {obj}.",
        "{subj} finds {refl} in charge of a family business.",
    ),
}
GENDER_NOUN_SENTENCES = {
    "pos": (
        "{gn} steals the whole film, and I could not take my eyes off {obj}.",
        "I would happily watch {gn} in a sequel.",
        "By the end I was completely on the side of {gn}.",
    ),
    "neg": (
        "{gn} is supposed to be the emotional core, but I felt nothing for {obj}.",
        "I never understood what {gn} wanted, and neither, I suspect, did the writers.",
        "By the end I was rooting against {gn}.",
    ),
    "neu": (
        "{gn} is in almost every scene.",
        "The film follows {gn} over a single summer.",
    ),
}
OCCUPATION_SENTENCES = {
    "pos": (
        "As {occ_the}, {subj} is completely {pos}.",
        "The scenes of {occ_the} at work are the most {pos} in the film.",
        "I have never seen {occ_a} portrayed so {pos_adv}.",
        "The film spends a lot of time on the daily routine of {occ_the}.",
    ),
    "neg": (
        "As {occ_the}, {subj} is completely {neg}.",
        "The scenes of {occ_the} at work are the most {neg} in the film.",
        "I have never seen {occ_a} portrayed so {neg_adv}.",
        "The film spends a lot of time on the daily routine of {occ_the}.",
    ),
    "neu": (
        "The film spends a lot of time on the daily routine of {occ_the}.",
        "We see {occ_the} at work in several scenes.",
    ),
}
COUNTRY_SENTENCES = {
    "pos": (
        "The flashbacks to {det} childhood in {country} are {pos}.",
        "The early scenes, set in {country}, are {pos}.",
        "{subj} left {country} as a teenager, we learn in a flashback.",
        "{det} family back in {country} is mentioned only in passing.",
    ),
    "neg": (
        "The flashbacks to {det} childhood in {country} are {neg}.",
        "The early scenes, set in {country}, are {neg}.",
        "{subj} left {country} as a teenager, we learn in a flashback.",
        "The {demonym} accent comes and goes from scene to scene.",
    ),
    "neu": (
        "{subj} left {country} as a teenager, we learn in a flashback.",
        "{det} family back in {country} is mentioned only in passing.",
    ),
}
FILM = {
    "pos": (
        "{aspect} is {pos}.",
        "{aspect} is {pos}, and {aspect} is even better.",
        "The two hours flew by.",
        "{aspect} alone is worth the price of admission.",
        "Even the smallest roles are cast with care.",
        "The final twenty minutes are as {pos} as anything I have seen in a cinema.",
        "It's the kind of film that rewards a second viewing.",
        "The café scenes have a warmth that is hard to describe.",
        "Credit to whoever chose the locations &amp; the music.",
    ),
    "neg": (
        "{aspect} is {neg}.",
        "{aspect} is {neg}, and {aspect} is even worse.",
        "The two hours felt like four.",
        "{aspect} is a mess from start to finish.",
        "Half the subplots go nowhere.",
        "The final twenty minutes are as {neg} as anything I have sat through.",
        "It's the kind of film you forget before you reach the car park.",
        "Every twist is a tired cliché.",
        "The locations &amp; the music deserved a better film.",
    ),
    "neu": (
        "Most of it was shot on location.",
        "The story takes place over about a year.",
        "There is a subplot about a missing letter.",
        "The film is in colour, with a few scenes in black and white.",
        "The soundtrack uses a lot of piano.",
    ),
}
#: negation and concessions: mixed sentences whose overall direction is still the label's
MIXED = {
    "pos": (
        "It is not a perfect film, but it is {a_pos} one.",
        "{aspect} is a little {neg}, but that hardly matters when the rest is this {pos}.",
        "I was not bored for a single minute.",
        "Don't let the slow start put you off.",
        "It isn't flawless, but I haven't stopped thinking about it.",
        "I expected to hate it and ended up loving it.",
    ),
    "neg": (
        "It is not a terrible film, just {a_neg} one.",
        "{aspect} is {pos}, but that cannot rescue such {a_neg} story.",
        "I was not moved for a single minute.",
        "Don't let the trailer fool you.",
        "It isn't the worst thing I've seen, but I wouldn't sit through it again.",
        "I expected to love it and ended up checking my phone.",
    ),
}
SECOND_PERSON = (
    "{q_name} plays {det} {relation}, and {q_subj} makes the most of a thin part.",
    "{det} {relation} is played by {q_name}, who brings {q_det} own dry humour to the role.",
    "{q_name} turns up as {det} {relation}; the script gives {q_obj} very little to do.",
    "Also in the cast is {q_name} as {det} {relation}, and {q_subj} is fine.",
    "{q_name} has a few good scenes as {det} {relation}, although {q_subj} vanishes for most "
    "of the second half.",
    "{q_name}, as {det} {relation}, seems to be enjoying {q_refl}.",
)
CLOSERS = {
    "pos": (
        "Highly recommended.",
        "{pos_rating}.",
        "Go and see it.",
        "Do not miss it; {pos_rating}.",
        "I will be buying this one on disc.",
        "Easily one of the best films of the year.",
        "{sur} fans will not be disappointed.",
        "See it on the biggest screen you can find.",
    ),
    "neg": (
        "Avoid.",
        "{neg_rating}.",
        "Save your money.",
        "Skip it; {neg_rating}.",
        "I want those two hours back.",
        "Easily one of the worst films of the year.",
        "Even {sur} fans should give this one a miss.",
        "Wait until it turns up on television, and then change the channel.",
    ),
    "neu": (
        "It is out on disc next month.",
        "That is about all there is to say.",
        "Make of it what you will.",
    ),
}

#: every pattern by id ("protagonist.pos.3"), for counting which ones a corpus used
PATTERNS: dict[str, str] = {}
for _group, _table in {
    "opener": OPENERS, "protagonist": PROTAGONIST, "gender_noun": GENDER_NOUN_SENTENCES,
    "occupation": OCCUPATION_SENTENCES, "country": COUNTRY_SENTENCES, "film": FILM,
    "mixed": MIXED, "closer": CLOSERS,
}.items():
    for _pol, _patterns in _table.items():
        PATTERNS.update({f"{_group}.{_pol}.{i}": p for i, p in enumerate(_patterns)})
PATTERNS.update({f"intro.described.{i}": p for i, p in enumerate(INTROS_DESCRIBED)})
PATTERNS.update({f"intro.plain.{i}": p for i, p in enumerate(INTROS_PLAIN)})
PATTERNS.update({f"second_person.{i}": p for i, p in enumerate(SECOND_PERSON)})
PATTERNS.update({f"description.{int(o)}{int(c)}.{i}": p
                 for (o, c), ps in DESCRIPTIONS.items() for i, p in enumerate(ps)})
#: pattern ids by group ("protagonist.pos", "intro.plain", "second_person")
_GROUPS: dict[str, list[str]] = {}
for _id in PATTERNS:
    _GROUPS.setdefault(_id.rsplit(".", 1)[0], []).append(_id)

_DRAWN = {
    "pos": POSITIVE_ADJECTIVES, "neg": NEGATIVE_ADJECTIVES, "pos_adv": POSITIVE_ADVERBS,
    "neg_adv": NEGATIVE_ADVERBS, "aspect": FILM_ASPECTS, "pos_rating": POSITIVE_RATINGS,
    "neg_rating": NEGATIVE_RATINGS,
}
_ARTICLED = {"a_pos": "pos", "a_neg": "neg"}

#: annotation flag -> the slots that make that kind of mention
MENTION_SLOTS: dict[str, frozenset[str]] = {
    "mentions_full_name": frozenset({"name"}),
    "mentions_first_name": frozenset({"first"}),
    "mentions_surname": frozenset({"sur"}),
    "mentions_subject_pronoun": frozenset({"subj"}),
    "mentions_object_pronoun": frozenset({"obj"}),
    "mentions_possessive_determiner": frozenset({"det"}),
    "mentions_possessive_pronoun": frozenset({"poss"}),
    "mentions_reflexive_pronoun": frozenset({"refl"}),
    "mentions_gender_noun": frozenset({"gn"}),
    "mentions_occupation": frozenset({"occ", "occ_a", "occ_the", "occ_adj_a"}),
    "mentions_country": frozenset({"country", "demonym", "a_demonym"}),
}


@dataclass(frozen=True)
class _Plan:
    """What one review is: its label, protagonist classes and which features it has."""

    label: int
    gender: str
    occupation: str | None = None
    country: str | None = None
    gender_noun: bool = False
    second_person: bool = False
    html: bool = False
    #: written without any sentiment cue: only the protagonist's identity goes with the label
    neutral: bool = False


class _Fill:
    """The ``format_map`` mapping for one review: fixed slots, fresh draws, used slots."""

    def __init__(self, fixed: dict[str, str], rng: random.Random) -> None:
        self.fixed, self.rng = fixed, rng
        self.used: set[str] = set()
        self._drawn: dict[str, set[str]] = {}

    def __getitem__(self, key: str) -> str:
        self.used.add(key)
        if key in self.fixed:
            return self.fixed[key]
        base = _ARTICLED.get(key, key)
        taken = self._drawn.setdefault(base, set())
        word = self.rng.choice([w for w in _DRAWN[base] if w not in taken])
        taken.add(word)
        return indefinite(word) if key in _ARTICLED else word

    def render(self, pattern: str) -> str:
        """One sentence, first letter capitalized; drawn words do not repeat within it."""
        self._drawn = {}
        text = pattern.format_map(self)
        return text[0].upper() + text[1:]


# -- planning -------------------------------------------------------------------------------


def positive_counts(
    sizes: Mapping[str, int], n_positive: int, planted: Mapping[str, float], key: str
) -> tuple[dict[str, int], dict[str, float]]:
    """Exact positives per class, and the rate each class was aimed at.

    Listed classes get ``size * rate`` positives; the unlisted ones share the remaining
    positives at one common rate; all counts are rounded together by the largest-remainder
    rule so they add up to ``n_positive``. Raises ConfigError (naming ``key``) when the rates
    cannot be met.
    """
    empty = [c for c in planted if sizes[c] == 0]
    if empty:
        raise ConfigError(f"{key}.{empty[0]}: no review of the split has this class "
                          "(the split is too small to plant a rate on it)")
    rest = [c for c in sizes if c not in planted]
    listed = sum(sizes[c] * r for c, r in planted.items())
    rest_n = sum(sizes[c] for c in rest)
    rest_rate = (n_positive - listed) / rest_n if rest_n else 0.0
    if rest_n and not -1e-9 <= rest_rate <= 1 + 1e-9:
        raise ConfigError(
            f"{key}: infeasible; the listed rates give {listed:g} positive reviews of "
            f"{n_positive}, which leaves the other classes a rate of {rest_rate:.3f}")
    targets = {c: float(planted.get(c, min(max(rest_rate, 0.0), 1.0))) for c in sizes}
    quotas = {c: sizes[c] * targets[c] for c in sizes}
    counts = {c: int(np.floor(q + 1e-9)) for c, q in quotas.items()}
    left = n_positive - sum(counts.values())
    room = sorted((c for c in sizes if counts[c] < sizes[c]),
                  key=lambda c: (-(quotas[c] - counts[c]), list(sizes).index(c)))
    if not 0 <= left <= len(room):
        raise ConfigError(
            f"{key}: infeasible; the rates of all classes give {sum(quotas.values()):g} "
            f"positive reviews, but the split has {n_positive}")
    for c in room[:left]:
        counts[c] += 1
    return counts, targets


def _choose(rng: np.random.Generator, labels: np.ndarray, rate: float,
            within: np.ndarray | None = None) -> np.ndarray:
    """A mask choosing ``rate`` of the positive and of the negative items, exactly. With
    ``within`` (each item's class) the items of a label are chosen from its classes in
    proportion to their sizes (largest remainder), so the choice itself carries no
    association between class and label."""
    chosen = np.zeros(len(labels), dtype=bool)
    for value in (1, 0):
        idx = np.flatnonzero(labels == value)
        k = exact_count(len(idx), rate)
        if within is None:
            chosen[rng.permutation(idx)[:k]] = True
            continue
        classes = sorted(set(within[idx].tolist()))
        cells = {c: idx[within[idx] == c] for c in classes}
        quota = allocate(k, {c: len(cells[c]) / len(idx) for c in classes})
        for c in classes:
            chosen[rng.permutation(cells[c])[: quota[c]]] = True
    return chosen


def _assign(
    rng: np.random.Generator,
    labels: np.ndarray,
    mentioned: np.ndarray,
    classes: Sequence[str],
    planted: Mapping[str, float],
    key: str,
) -> np.ndarray:
    """The class of each mentioning review (None elsewhere), with exact positives per class."""
    order = [*planted, *(c for c in classes if c not in planted)]
    n_mentioned = int(mentioned.sum())
    sizes = allocate(n_mentioned, {c: 1 / len(order) for c in order})
    pos, _ = positive_counts(sizes, int(labels[mentioned].sum()), planted, key)
    out = np.full(len(labels), None, dtype=object)
    for value, per_class in ((1, pos), (0, {c: sizes[c] - pos[c] for c in order})):
        idx = rng.permutation(np.flatnonzero(mentioned & (labels == value)))
        start = 0
        for c in order:
            out[idx[start : start + per_class[c]]] = c
            start += per_class[c]
    return out


def _plan_split(settings: Mapping[str, Any], split: str, seed: int) -> list[_Plan]:
    rng = rng_for(seed, "reviews", "plan", split)
    n = settings[f"n_{split}"]
    labels = np.zeros(n, dtype=np.int64)
    labels[: exact_count(n, settings["positive_rate"])] = 1
    planted = settings["planted"] if split == "train" else {}
    rates = settings["mention_rates"]
    key = "world.reviews.planted"
    everyone = np.ones(n, dtype=bool)
    gender = _assign(rng, labels, everyone, GENDERS, planted.get("gender", {}), f"{key}.gender")
    occupation = _assign(rng, labels, _choose(rng, labels, rates["occupation"]), OCCUPATIONS,
                         planted.get("occupation", {}), f"{key}.occupation")
    country = _assign(rng, labels, _choose(rng, labels, rates["country"]), tuple(COUNTRIES),
                      planted.get("country", {}), f"{key}.country")
    gender_noun = _choose(rng, labels, rates["gender_noun"])
    second = _choose(rng, labels, settings["second_person_rate"])
    html = _choose(rng, labels, settings["html_break_rate"])
    neutral = _choose(rng, labels, settings["neutral_rate"],
                      within=gender if settings.get("neutral_by_gender") else None)
    return [
        _Plan(int(labels[i]), gender[i], occupation[i], country[i], bool(gender_noun[i]),
              bool(second[i]), bool(html[i]), bool(neutral[i]))
        for i in range(n)
    ]


def _duplicates(rng: np.random.Generator, plans: Sequence[_Plan], n_dup: int,
                split: str) -> dict[int, int]:
    """``{duplicate: original}``: reviews that copy another with the same plan.

    Copying only between identical plans (label, classes, features) keeps every exact count.
    """
    cells: dict[_Plan, list[int]] = {}
    for i, p in enumerate(plans):
        cells.setdefault(p, []).append(i)
    candidates = [(i, members[0]) for members in cells.values() for i in members[1:]]
    if n_dup > len(candidates):
        raise ConfigError(f"world.reviews.duplicate_rate: {n_dup} duplicates asked of the "
                          f"{split} split, but only {len(candidates)} reviews can be copied "
                          "without changing the exact counts")
    picked = rng.permutation(len(candidates))[:n_dup]
    return dict(candidates[j] for j in sorted(picked))


# -- rendering ------------------------------------------------------------------------------


def _person(rng: random.Random, gender: str, prefix: str,
            avoid: Sequence[str] = ()) -> dict[str, str]:
    first = rng.choice([f for f in FIRST_NAMES[gender] if f not in avoid])
    sur = rng.choice([s for s in SURNAMES if s not in avoid])
    slots = {f"{prefix}name": f"{first} {sur}", f"{prefix}first": first, f"{prefix}sur": sur}
    slots.update({f"{prefix}{case}": word for case, word in PRONOUNS[gender].items()})
    return slots


def _fixed_slots(plan: _Plan, rng: random.Random) -> dict[str, str]:
    """The slots that stay the same through one review."""
    slots = _person(rng, plan.gender, "")
    genre = rng.choice(GENRES)
    slots.update(title=rng.choice(FILM_TITLES), genre=genre, a_genre=indefinite(genre))
    if plan.gender_noun:
        male, female = rng.choice(GENDER_NOUNS)
        words = [rng.choice(GENDER_NOUN_DETERMINERS), rng.choice(GENDER_NOUN_ADJECTIVES),
                 female if plan.gender == "female" else male]
        slots["gn"] = " ".join(w for w in words if w)
    if plan.occupation:
        occ = plan.occupation
        slots.update(occ=occ, occ_a=indefinite(occ), occ_the=f"the {occ}",
                     occ_adj_a=indefinite(f"{rng.choice(OCCUPATION_ADJECTIVES)} {occ}"))
    if plan.country:
        demonym = COUNTRIES[plan.country]
        slots.update(country=plan.country, demonym=demonym, a_demonym=indefinite(demonym))
    if plan.second_person:
        gender = rng.choice(GENDERS)
        slots.update(_person(rng, gender, "q_", avoid=(slots["first"], slots["sur"])))
        slots.update(q_gender=gender, relation=rng.choice(RELATIONS))
    return slots


def _pick(rng: random.Random, group: str, polarity: str | None, used: set[str]) -> str:
    """A pattern id of ``group`` not yet used in this review (any, once all are used)."""
    ids = _GROUPS[f"{group}.{polarity}" if polarity else group]
    fresh = [k for k in ids if k not in used]
    choice = rng.choice(fresh or ids)
    used.add(choice)
    return choice


def _render(plan: _Plan, settings: Mapping[str, Any],
            rng: random.Random) -> tuple[str, dict[str, Any]]:
    """Write one review; return its text and its annotation fields."""
    pol = "neu" if plan.neutral else "pos" if plan.label else "neg"
    fill = _Fill(_fixed_slots(plan, rng), rng)
    used: set[str] = set()
    lo, hi = settings["sentences"]["min"], settings["sentences"]["max"]
    required = 2 + plan.gender_noun + plan.second_person
    n_body = rng.randint(max(lo, required), hi) - required

    opener = []
    if n_body and rng.random() < 0.5:
        opener, n_body = [_pick(rng, "opener", pol, used)], n_body - 1
    if plan.occupation or plan.country:
        desc_id = _pick(rng, f"description.{int(bool(plan.occupation))}"
                        f"{int(bool(plan.country))}", None, used)
        fill.fixed["desc"] = PATTERNS[desc_id].format_map(fill)
        intro = _pick(rng, "intro.described", None, used)
    else:
        intro = _pick(rng, "intro.plain", None, used)

    # body: protagonist sentences mostly; at most one of each kind of aside
    weights = {"protagonist": 6, "film": 3} | ({} if plan.neutral else {"mixed": 1})
    if plan.occupation:
        weights["occupation"] = 1
    if plan.country:
        weights["country"] = 1
    body = []
    for _ in range(n_body):
        group = rng.choices(list(weights), list(weights.values()))[0]
        body.append(_pick(rng, group, pol, used))
        if group not in ("protagonist", "film"):
            del weights[group]
    if plan.gender_noun:
        body.insert(rng.randint(0, len(body)), _pick(rng, "gender_noun", pol, used))
    second = [_pick(rng, "second_person", None, used)] if plan.second_person else []
    ids = [*opener, intro, *body, *second, _pick(rng, "closer", pol, used)]
    sentences = [fill.render(PATTERNS[i]) for i in ids]

    if plan.html:
        breaks = set(rng.sample(range(1, len(sentences)),
                                k=rng.randint(1, max(1, (len(sentences) - 1) // 3))))
        text = "".join((HTML_BREAK if i in breaks else " ") + s if i else s
                       for i, s in enumerate(sentences))
    else:
        text = " ".join(sentences)
    fields = {
        "gender": plan.gender,
        "first_name": fill.fixed["first"],
        "surname": fill.fixed["sur"],
        "occupation": plan.occupation,
        "country": plan.country,
        **{flag: bool(fill.used & slots) for flag, slots in MENTION_SLOTS.items()},
        "second_person": fill.fixed.get("q_gender"),
        "second_person_name": fill.fixed.get("q_name"),
        "has_html_break": plan.html,
        "neutral": plan.neutral,
        "patterns": ids + ([desc_id] if plan.occupation or plan.country else []),
    }
    return text, fields


def build(settings: Mapping[str, Any], *, seed: int) -> tuple[dict[str, pd.DataFrame],
                                                              pd.DataFrame, dict[str, Any]]:
    """The corpus in memory: per-split ``text``/``label`` frames, annotations, ground truth."""
    _check(settings)
    splits: dict[str, pd.DataFrame] = {}
    annotations = []
    for split in SPLITS:
        plans = _plan_split(settings, split, seed)
        rng = rng_for(seed, "reviews", "rows", split)
        dup = _duplicates(rng, plans, exact_count(len(plans), settings["duplicate_rate"]), split)
        plans = [plans[dup.get(i, i)] for i in range(len(plans))]
        order = rng.permutation(len(plans))          # file row -> plan
        row_of = np.empty(len(plans), dtype=np.int64)
        row_of[order] = np.arange(len(plans))          # plan -> file row
        text_rng = random.Random(int(rng.integers(2**63)))
        rendered = {i: _render(plans[i], settings, text_rng)
                    for i in range(len(plans)) if i not in dup}
        texts, labels = [], []
        for row, i in enumerate(order):
            text, fields = rendered[dup.get(i, i)]
            texts.append(text)
            labels.append(plans[i].label)
            original = f"{split}-{row_of[dup[i]]:05d}" if i in dup else None
            annotations.append({"id": f"{split}-{row:05d}", "split": split, **fields,
                                "duplicate_of": original})
        splits[split] = pd.DataFrame({"text": pd.Series(texts, dtype=object),
                                      "label": pd.Series(labels, dtype="int64")})
    frame = pd.DataFrame(annotations)
    truth = ground_truth(settings, seed, splits, frame)
    for char, rates in settings["planted"].items():
        for cls, rate in rates.items():
            got = truth["splits"]["train"]["characteristics"][char][cls]
            if abs(got["positive_ratio"] - rate) > 0.05:
                log.warning("planted %s %s: rate %g asked, %d/%d reviews give %.3f (too few "
                            "reviews of this class for the rate)", char, cls, rate,
                            got["n_positive"], got["n"], got["positive_ratio"])
    return splits, frame, truth


def ground_truth(settings: Mapping[str, Any], seed: int, splits: Mapping[str, pd.DataFrame],
                 annotations: pd.DataFrame) -> dict[str, Any]:
    """Counts recomputed from the generated rows: per split, characteristic and class."""
    out: dict[str, Any] = {"seed": seed, "settings": dict(settings),
                           "classes": {k: list(v) for k, v in CLASSES.items()}, "splits": {}}
    for split, df in splits.items():
        ann = annotations[annotations["split"] == split].reset_index(drop=True)
        labels = df["label"].to_numpy()
        n_pos = int(labels.sum())
        planted = settings["planted"] if split == "train" else {}
        chars = {}
        for char, classes in CLASSES.items():
            values = ann[char].to_numpy()
            mentioned = pd.notna(values)
            sizes = {c: int((values == c).sum()) for c in classes}
            _, targets = positive_counts(sizes, int(labels[mentioned].sum()),
                                         planted.get(char, {}), "ground truth")
            chars[char] = {}
            for c in classes:
                is_c = values == c
                n_c, pos_c = int(is_c.sum()), int(labels[is_c].sum())
                chars[char][c] = {
                    "n": n_c,
                    "n_positive": pos_c,
                    "positive_ratio": pos_c / n_c if n_c else None,
                    "target_rate": targets[c],
                    "planted": c in planted.get(char, {}),
                }
        out["splits"][split] = {
            "n": len(df),
            "n_positive": n_pos,
            "positive_rate": n_pos / len(df),
            "n_duplicates": int(ann["duplicate_of"].notna().sum()),
            "n_html_break": int(ann["has_html_break"].sum()),
            "n_second_person": int(ann["second_person"].notna().sum()),
            "n_neutral": int(ann["neutral"].sum()),
            "characteristics": chars,
        }
    return out


def _check(settings: Mapping[str, Any]) -> None:
    """Refuse planted classes the lexicon lacks and sentence ranges too short to plan."""
    for char, rates in settings["planted"].items():
        for cls in rates:
            if cls not in CLASSES[char]:
                raise ConfigError(
                    f"world.reviews.planted.{char}.{cls}: unknown {char} "
                    f"(known: {', '.join(CLASSES[char])})")
    if settings["sentences"]["max"] < 4:
        raise ConfigError("world.reviews.sentences.max: must be at least 4 (intro, gender "
                          "noun sentence, second person, verdict)")


def generate(settings: dict[str, Any], *, seed: int, out_dir: Path) -> None:
    """Write the review corpus, its annotations and its ground truth to ``out_dir``."""
    start = time.perf_counter()
    out = Path(out_dir)
    paths = [out / "train.parquet", out / "test.parquet", out / "annotations.parquet",
             out / "ground_truth.json"]
    with atomic_outputs(*paths) as tmp:
        splits, annotations, truth = build(settings, seed=seed)
        write_parquet(splits["train"], tmp[0])
        write_parquet(splits["test"], tmp[1])
        write_parquet(annotations, tmp[2])
        write_json(truth, tmp[3])
    log.info("world reviews: %d train + %d test reviews to %s in %.1f s",
             len(splits["train"]), len(splits["test"]), out, time.perf_counter() - start)

