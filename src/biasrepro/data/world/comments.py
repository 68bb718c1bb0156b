"""A Civil-Comments-shaped comment corpus whose dataset bias is known in advance.

Written as the Kaggle "Jigsaw Unintended Bias" ``all_data.csv`` (every column, in order),
so the real loader reads it. Rows (``settings``):

* ``groups``: for each identity *g*, ``n`` comments about *g* alone, exactly
  ``round(n * toxic_ratio)`` of them toxic (rounded half up, :func:`exact_count`);
  of these, ``round(n_toxic * ambiguous.toxic_share[g])`` toxic and
  ``round(n_civil * ambiguous.civil_share)`` civil ones are written *ambiguously*: a
  sentence that names *g* with neither an insult nor a civil cue, the same patterns for
  both labels. This plants the asymmetric counterfactual of toxicity paper §5.1 (toxicity
  aimed at a group "based only on the identity, and no other toxicity signals") and the
  identity-context association of §6.5: a model can fit these rows only through the
  identity words, so groups with a high ``toxic_share`` get false positives;
* ``multi_identity``: comments about two identities, the pairs taken in a fixed cycle over
  all pairs of the configured groups (male+female first); the first
  ``round(n * toxic_ratio)`` comments of that cycle are toxic, so each pair's toxic count
  follows from the configuration alone;
* ``n_background``: identity-annotated comments about none of the configured identities
  (some about an identity outside them, e.g. Hindus), ``background_toxic_ratio`` toxic;
* ``n_unannotated``: ``identity_annotator_count = 0`` and every identity cell empty, as in
  the real file; the data stage drops them (toxicity paper §4.1).

Values are rater fractions ``k / annotator_count``: toxic rows have ``toxicity >=
toxicity_threshold`` and the others less; a comment's own identities are
``>= identity_threshold`` and other identity columns sometimes hold a small fraction below
it. The text names its identities with the words of :data:`lexicon.IDENTITY_WORDS`
("Muslims", "that man", "Black voters"), which the perturbation step replaces, and carries
what §4.1's cleaning removes: URLs, non-ASCII (é, ’, emoji), contractions, capitals,
punctuation glued to words.

``ground_truth.json`` states what the data stage must find: per identity, n and toxic ratio
over the annotated rows; per group, its ambiguous toxic and civil rows; the exact
training-split counts, because the data stage splits each ``"{label}|{signature}"`` stratum
with :func:`biasrepro.data.split.allocate`; and from those the selection bias (Eq. 4) and
overamplification bias (Eq. 5) per attribute.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.data.split import allocate
from biasrepro.data.world import exact_count, rng_for
from biasrepro.data.world.vocabulary import (
    IDENTITY_WORDS,
    INSULT_ADJECTIVES,
    INSULTS,
    KAGGLE_IDENTITY_COLUMNS,
    indefinite,
)
from biasrepro.errors import ConfigError
from biasrepro.io import atomic_outputs, write_json
from biasrepro.metrics.dataset_bias import group_counts, overamplification_bias, selection_bias

log = logging.getLogger(__name__)

#: the columns of the Kaggle ``all_data.csv``, in file order
COLUMNS = (
    "id", "comment_text", "split", "created_date", "publication_id", "parent_id",
    "article_id", "rating", "funny", "wow", "sad", "likes", "disagree", "toxicity",
    "severe_toxicity", "obscene", "sexual_explicit", "identity_attack", "insult", "threat",
    *KAGGLE_IDENTITY_COLUMNS, "identity_annotator_count", "toxicity_annotator_count",
)
#: share of background comments written about an identity outside the configured ones
OTHER_IDENTITY_SHARE = 0.15

# -- sentence patterns ----------------------------------------------------------------------
# Identity slots: {group} (plural), {a_member}, {the_member}, {adj}; second identity
# {group2}; insults {insult}, {insult_adj}, {an_insult_adj}.

IDENTITY = {
    "civil": (
        "I think {group} deserve a fair hearing on this issue.",
        "The article barely mentions how {group} in this city feel about the new policy.",
        "My neighbour is {a_member} and honestly the most generous person on our street.",
        "Plenty of {group} I know have been saying the same thing for years.",
        "{the_member} at the meeting made the best point of the night.",
        "It's not fair to blame {group} for a problem the council created.",
        "I don't agree with the writer, but {adj} voters do have a point about the schools.",
        "As {a_member}, I found this column thoughtful and well researched.",
        "{adj} business owners downtown have been hit hard by the road closures.",
        "Why can't we talk about {group} without shouting at each other?",
        "The survey found that {group} here support the bond measure by a wide margin.",
        "Good for {the_member}. It takes courage to speak up like that.",
        "{group} have been patient. They're only asking for what was promised.",
        "I respectfully disagree; most {group} I've met don't see it that way at all.",
        "This letter writer seems to think {group} all vote the same way, which isn't true.",
        "The photo of {the_member} with the volunteers made my day.",
        "{adj} students at the university organised the food drive, and it was a big success.",
        "Can't we just agree that {group} are as varied as any other group of people?",
        "I'm {a_member} myself, and I think the mayor handled this well.",
        "The reporter should have asked {group} what they actually think.",
    ),
    "toxic": (
        "{group} who write letters like this are {insult_adj} {insult}.",
        "Shut up. Nobody cares what {group} like you think, you {insult_adj} clown.",
        "Only {insult} would defend {the_member} after what happened.",
        "{the_member} is {an_insult_adj} fool and should stay off the council.",
        "Typical {group}, always whining about something. Grow up.",
        "You're an idiot if you think {group} are the problem here.",
        "What a pathetic bunch of {insult}. {group} in this thread should be ashamed.",
        "{adj} politicians are {insult_adj} {insult}, every last one of them.",
        "Stop lying, {the_member} never said that, you {insult_adj} troll.",
        "{group} like these are exactly why this comment section is garbage.",
        "Get lost. {group} who think like this are a joke.",
        "This is the dumbest thing I've read all week, and {group} defending it are even dumber.",
        "{the_member} is a spineless hypocrite and everyone knows it.",
        "Nobody asked you. Go cry to your {adj} friends, loser.",
    ),
}
MULTI_IDENTITY = {
    "civil": (
        "Both {group} and {group2} were at the rally, and it stayed peaceful.",
        "The new clinic will serve {group} and {group2} alike.",
        "I'm tired of politicians pitting {group} against {group2}.",
        "The panel included {group} and {group2}, which made for a good discussion.",
    ),
    "toxic": (
        "{group} and {group2} in this thread are all {insult_adj} {insult}.",
        "Shut up, all of you. {group} and {group2} can argue somewhere else, you {insult}.",
        "Honestly, {group} and {group2} who post here are a bunch of {insult}.",
    ),
}
BACKGROUND = {
    "civil": (
        "The council should fix the potholes on Fifth Street before building anything new.",
        "Great article, thanks for covering the school board meeting.",
        "I don't see how the budget adds up without raising property taxes.",
        "The ferry schedule changes are going to hurt commuters on the island.",
        "Who's paying for the new stadium? Not the team owners, that's for sure.",
        "This is the third rainy weekend in a row. I'm ready for summer.",
        "Interesting point about the pension fund, but the numbers in the chart don't match.",
        "Can't believe the library is cutting hours again.",
        "It's a shame the farmers market is moving; the old spot was perfect.",
        "They're right to question the contract, it was never put out to bid.",
        "I've lived here thirty years and traffic has never been this bad.",
        "The editorial makes a fair case, though I'd like to see more data.",
        "Thanks to the volunteers who cleaned up the park this weekend.",
        "Voter turnout in the primary was embarrassingly low.",
        "The governor's plan is vague, but at least it's a start.",
    ),
    "toxic": (
        "You're {an_insult_adj} troll and everyone here knows it.",
        "What a load of garbage. The editor must be {insult_adj}.",
        "Only {insult} would vote for this budget.",
        "Shut up and do some reading before you comment, {insult}.",
        "The council members are a bunch of {insult_adj} {insult}.",
        "This is the dumbest column I've ever read. Fire the writer.",
        "Are you really this {insult_adj}, or do you just play it online?",
        "Go away, {insult}. Nobody wants your opinion.",
    ),
}
#: single-identity sentences with no civil or toxic cue, written for either label
AMBIGUOUS = (
    "Another article about {group}.",
    "So this thread is about {group} now.",
    "{group} in the headlines again, I see.",
    "Someone brought up {the_member} in the other thread.",
    "The story quotes {a_member} near the end.",
    "{adj} residents get a mention in paragraph four.",
    "I saw {the_member} at the bus station yesterday.",
    "Ask {group} about it.",
    "There were {group} on the ferry this morning.",
    "Talking about {group} again.",
    "{adj} voters, same as last year.",
    "Is this about {a_member} or not?",
)
#: neutral sentences added around the main one (no identity words, not toxic)
FILLERS = (
    "I read the whole article twice.",
    "Just my two cents.",
    "Anyway, that's how I see it.",
    "Look at the numbers.",
    "Well said.",
    "Not sure why this is even news.",
    "Let's see what happens next week.",
    "Read the actual bill before commenting.",
    "Happy Friday, everyone.",
    "Call me naïve, but I still think it can work.",
    "The café on Main Street was talking about nothing else this morning.",
    "We'll find out at the next election.",
)
URLS = (
    "https://www.example.com/news/{n}",
    "http://example.org/story?id={n}",
    "www.example.net/opinion/{n}",
    "https://example.com/{n}/comments",
)
EMOJI = ("🙄", "👍", "😂", "🤔")

PATTERNS: dict[str, str] = {}
for _kind, _table in {"identity": IDENTITY, "multi": MULTI_IDENTITY, "background": BACKGROUND,
                      "ambiguous": {"any": AMBIGUOUS}}.items():
    for _tox, _patterns in _table.items():
        PATTERNS.update({f"{_kind}.{_tox}.{i}": p for i, p in enumerate(_patterns)})
#: pattern ids by (number of identities, toxic, ambiguous)
_GROUPS = {(len(kind), tox, False): [k for k in PATTERNS if k.startswith(f"{name}.{label}.")]
           for name, kind in (("background", ""), ("identity", "g"), ("multi", "gg"))
           for tox, label in ((True, "toxic"), (False, "civil"))}
_GROUPS.update({(1, tox, True): [k for k in PATTERNS if k.startswith("ambiguous.any.")]
                for tox in (True, False)})


class _Fill:
    """``format_map`` mapping for one sentence: identity words and insults drawn at use."""

    def __init__(self, groups: Sequence[str], rng: random.Random) -> None:
        self.groups, self.rng = groups, rng

    def __getitem__(self, key: str) -> str:
        if key == "insult":
            return self.rng.choice(INSULTS)
        if key in ("insult_adj", "an_insult_adj"):
            word = self.rng.choice(INSULT_ADJECTIVES)
            return indefinite(word) if key == "an_insult_adj" else word
        group = self.groups[1] if key == "group2" else self.groups[0]
        form = {"group": "plural", "group2": "plural", "a_member": "a",
                "the_member": "the", "adj": "adjective"}[key]
        return self.rng.choice(IDENTITY_WORDS[group][form])


def _write(rng: random.Random, groups: Sequence[str], toxic: bool, ambiguous: bool,
           n: int) -> tuple[str, str]:
    """One comment about ``groups`` (0, 1 or 2 identities) and the id of its main pattern."""
    pid = rng.choice(_GROUPS[len(groups), toxic, ambiguous])
    main = PATTERNS[pid].format_map(_Fill(groups, rng))
    sentences = [main[0].upper() + main[1:]]
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        sentences.insert(rng.randint(0, len(sentences)), rng.choice(FILLERS))
    text = ("\n\n" if rng.random() < 0.05 else " ").join(sentences)
    # what §4.1's cleaning has to undo
    if rng.random() < 0.10:
        text = text.replace("'", "\u2019")
    if rng.random() < 0.10:
        text = text.replace(", ", ",", 1).replace(". ", ".", 1)
    if rng.random() < 0.06:
        text = text.rstrip(".") + rng.choice(("!!", "?!", "!!!"))
    if rng.random() < 0.05:
        text = text.upper()
    if rng.random() < 0.08:
        url = rng.choice(URLS).format(n=n)
        text = f"{url} {text}" if rng.random() < 0.3 else f"{text} More here: {url}"
    if rng.random() < 0.05:
        text = f"{text} {rng.choice(EMOJI)}"
    return text, pid


def _rater_fractions(rng: np.random.Generator, count: np.ndarray, above: np.ndarray,
                     threshold: float, zero_share: float) -> np.ndarray:
    """Rater fractions ``k / count``: ``>= threshold`` where ``above``, below it elsewhere.

    Above, ``k`` is uniform over the values that reach the threshold; below, ``k`` is 0 with
    probability ``zero_share`` and otherwise uniform over ``1 <= k`` below the threshold.
    """
    first = {c: next(k for k in range(c + 1) if k / c >= threshold) for c in np.unique(count)}
    k_min = np.array([first[c] for c in count])          # smallest k at or above threshold
    up = rng.integers(k_min, count + 1)
    down = np.where((k_min > 1) & (rng.random(len(count)) >= zero_share),
                    rng.integers(1, np.maximum(k_min, 2)), 0)
    return np.where(above, up, down) / count


def _plan(settings: Mapping[str, Any], identities: Sequence[str],
          rng: np.random.Generator) -> pd.DataFrame:
    """One row per comment: ``about`` (identities), ``toxic``, ``ambiguous``, ``annotated``."""
    rows: list[tuple[tuple[str, ...], bool, bool, bool]] = []

    def add(about: Sequence[tuple[str, ...]], toxic_ratio: float, annotated: bool,
            toxic_share: float = 0.0, civil_share: float = 0.0,
            toxic_in_order: bool = False) -> None:
        n = len(about)
        order = rng.permutation(n)   # its first n_toxic are toxic; each label's first ambiguous
        n_toxic = exact_count(n, toxic_ratio)
        toxic = np.zeros(n, dtype=bool)
        if toxic_in_order:           # the first n_toxic rows as given
            order = np.concatenate([np.arange(n_toxic), order[order >= n_toxic]])
        toxic[order[:n_toxic]] = True
        ambiguous = np.zeros(n, dtype=bool)
        ambiguous[order[: exact_count(n_toxic, toxic_share)]] = True
        ambiguous[order[n_toxic:][: exact_count(n - n_toxic, civil_share)]] = True
        rows.extend((a, bool(t), bool(m), annotated)
                    for a, t, m in zip(about, toxic, ambiguous, strict=True))

    groups = [g for g in identities if g in settings["groups"]]
    amb = settings["ambiguous"]
    for g in groups:
        spec = settings["groups"][g]
        add([(g,)] * spec["n"], spec["toxic_ratio"], True,
            amb["toxic_share"].get(g, 0.0), amb["civil_share"])
    multi = settings["multi_identity"]
    pairs = list(combinations(groups, 2))
    if multi["n"] and not pairs:
        raise ConfigError("world.comments.multi_identity.n: needs at least two groups")
    add([pairs[i % len(pairs)] for i in range(multi["n"])], multi["toxic_ratio"], True,
        toxic_in_order=True)

    others = [g for g in KAGGLE_IDENTITY_COLUMNS if g in IDENTITY_WORDS and g not in identities]
    n_bg = settings["n_background"]
    n_other = exact_count(n_bg, OTHER_IDENTITY_SHARE) if others else 0
    about = [(others[i % len(others)],) for i in range(n_other)] + [()] * (n_bg - n_other)
    add([about[i] for i in rng.permutation(n_bg)], settings["background_toxic_ratio"], True)

    n_un = settings["n_unannotated"]
    about = [(groups[i % len(groups)],) if i % 2 else () for i in range(n_un)]
    add(about, settings["background_toxic_ratio"], False)
    return pd.DataFrame(rows, columns=["about", "toxic", "ambiguous", "annotated"])


def build(
    settings: Mapping[str, Any],
    *,
    seed: int,
    identities: Sequence[str],
    attributes: Mapping[str, Mapping[str, Sequence[str]]],
    preprocess: Mapping[str, Any],
) -> tuple[pd.DataFrame, dict[str, Any], list[str]]:
    """The ``all_data.csv`` table, its ground truth, and the pattern id of every row."""
    _check(settings, identities)
    rng = rng_for(seed, "comments")
    plan = _plan(settings, identities, rng)
    n = len(plan)
    id_t, tox_t = preprocess["identity_threshold"], preprocess["toxicity_threshold"]
    text_rng = random.Random(int(rng.integers(2**63)))
    ids = np.sort(rng.choice(6_100_000, size=n, replace=False) + 239_000)
    order = rng.permutation(n)                      # file row -> plan row
    plan = plan.iloc[order].reset_index(drop=True)
    written = [_write(text_rng, a, t, m, int(i)) for a, t, m, i in
               zip(plan["about"], plan["toxic"], plan["ambiguous"], ids, strict=True)]

    df = pd.DataFrame({"id": ids, "comment_text": [w[0] for w in written]})
    df["split"] = "train"
    df.loc[rng.permutation(n)[: exact_count(n, 0.1)], "split"] = "test"
    start = datetime(2015, 9, 29, 10, 50, 41)
    seconds = np.sort(rng.integers(0, 780 * 86400, n))
    micros = rng.integers(0, 1_000_000, n)
    df["created_date"] = [
        (start + timedelta(seconds=int(s), microseconds=int(u))).strftime(
            "%Y-%m-%d %H:%M:%S.%f+00") for s, u in zip(seconds, micros, strict=True)]
    df["publication_id"] = rng.choice([2, 6, 13, 21, 53, 54, 102, 105], n)
    parent = pd.array(rng.integers(100_000, 6_300_000, n), dtype="Int64")
    parent[rng.random(n) < 0.55] = pd.NA
    df["parent_id"] = parent
    df["article_id"] = rng.integers(2_000, 400_000, n)
    df["rating"] = np.where(rng.random(n) < 0.95, "approved", "rejected")
    for col, lam in (("funny", 0.2), ("wow", 0.05), ("sad", 0.05), ("likes", 1.5),
                     ("disagree", 0.4)):
        df[col] = rng.poisson(lam, n)

    toxic = plan["toxic"].to_numpy()
    raters = rng.choice([4, 4, 5, 6, 6, 10, 10, 10, 46, 72], n)
    df["toxicity"] = _rater_fractions(rng, raters, toxic, tox_t, zero_share=0.6)
    k = np.rint(df["toxicity"].to_numpy() * raters).astype(int)
    about_any = plan["about"].map(len).to_numpy() > 0
    shares = {  # (share of rows with a nonzero value, upper bound in raters)
        "severe_toxicity": (toxic * 0.2, k // 4),
        "obscene": (toxic * 0.3 + 0.02, k // 2),
        "sexual_explicit": (np.full(n, 0.03), k // 4),
        "identity_attack": (toxic * about_any * 0.9 + 0.05, k),
        "insult": (toxic * 0.9 + 0.3, k),
        "threat": (toxic * 0.05, k // 4),
    }
    for col, (share, top) in shares.items():
        value = np.minimum(top, 1 + rng.integers(0, np.maximum(top, 1)))
        df[col] = np.where(rng.random(n) < share, value, 0) / raters

    annotated = plan["annotated"].to_numpy()
    id_raters = np.where(annotated, rng.choice([4, 4, 5, 6, 10, 10], n), 0)
    safe = np.maximum(id_raters, 1)
    for col in KAGGLE_IDENTITY_COLUMNS:
        member = plan["about"].map(lambda a, c=col: c in a).to_numpy()
        value = _rater_fractions(rng, safe, member, id_t, zero_share=0.97)
        df[col] = np.where(annotated, value, np.nan)
    df["identity_annotator_count"] = id_raters
    df["toxicity_annotator_count"] = raters
    df = df[list(COLUMNS)]
    ambiguous = {g: {"n_toxic": 0, "n_civil": 0} for g in identities if g in settings["groups"]}
    for (g,), is_toxic in plan.loc[plan["ambiguous"], ["about", "toxic"]].itertuples(False):
        ambiguous[g]["n_toxic" if is_toxic else "n_civil"] += 1
    truth = ground_truth(df, settings, identities=identities, attributes=attributes,
                         preprocess=preprocess, ambiguous=ambiguous)
    return df, truth, [w[1] for w in written]


def expected_split_counts(
    df: pd.DataFrame, identities: Sequence[str], preprocess: Mapping[str, Any]
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Rows per ``"{label}|{signature}"`` stratum and split, and per-identity training counts.

    Exactly what the data stage's stratified split will give: it keeps the rows with
    ``identity_annotator_count > 0`` and divides each stratum with ``allocate``.
    """
    kept = df[df["identity_annotator_count"] > 0]
    label = (kept["toxicity"] >= preprocess["toxicity_threshold"]).astype(int)
    members = kept[list(identities)] >= preprocess["identity_threshold"]
    signature = pd.Series("", index=kept.index)
    for g in sorted(identities):
        signature = signature + np.where(members[g].to_numpy(), "+" + g, "")
    signature = signature.str.lstrip("+").replace("", "none")
    sizes = (label.astype(str) + "|" + signature).value_counts()
    strata = {key: {"n": int(size), **allocate(int(size), preprocess["split"])}
              for key, size in sorted(sizes.items())}
    train = {g: {"n": 0, "n_toxic": 0} for g in identities}
    for key, counts in strata.items():
        lab, sig = key.split("|", 1)
        for g in sig.split("+"):
            if g in train:
                train[g]["n"] += counts["train"]
                train[g]["n_toxic"] += counts["train"] * int(lab)
    return strata, train


def ground_truth(
    df: pd.DataFrame,
    settings: Mapping[str, Any],
    *,
    identities: Sequence[str],
    attributes: Mapping[str, Mapping[str, Sequence[str]]],
    preprocess: Mapping[str, Any],
    ambiguous: Mapping[str, Mapping[str, int]],
) -> dict[str, Any]:
    """Per-identity counts of the annotated rows, expected training counts, Eq. 4 and Eq. 5.

    ``ambiguous`` gives per group its ambiguous ``n_toxic`` and ``n_civil`` (annotated rows).
    """
    annotated = df[df["identity_annotator_count"] > 0].assign(
        label=lambda d: (d["toxicity"] >= preprocess["toxicity_threshold"]).astype(int))
    counts = group_counts(annotated, identities, preprocess["identity_threshold"])
    strata, train = expected_split_counts(df, identities, preprocess)

    def with_ratio(c: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, Any]]:
        return {g: {**v, "toxic_ratio": v["n_toxic"] / v["n"] if v["n"] else None}
                for g, v in c.items()}

    return {
        "settings": dict(settings),
        "identities": list(identities),
        "attributes": {a: dict(s) for a, s in attributes.items()},
        "preprocess": dict(preprocess),
        "rounding": "toxic rows per block = n * toxic_ratio rounded half up",
        "rows": {"total": len(df), "identity_annotated": len(annotated),
                 "unannotated": len(df) - len(annotated)},
        "annotated": with_ratio(counts),
        "ambiguous": with_ratio({g: {"n": v["n_toxic"] + v["n_civil"], **v}
                                 for g, v in ambiguous.items()}),
        "strata": strata,
        "train": with_ratio(train),
        "selection_bias": selection_bias(train, attributes),
        "overamplification_bias": overamplification_bias(train, attributes),
    }


def _check(settings: Mapping[str, Any], identities: Sequence[str]) -> None:
    for g in identities:
        if g not in KAGGLE_IDENTITY_COLUMNS:
            raise ConfigError(f"identities: {g!r} is not a Civil Comments identity column "
                              f"(known: {', '.join(KAGGLE_IDENTITY_COLUMNS)})")
    for g in settings["groups"]:
        if g not in identities:
            raise ConfigError(f"world.comments.groups.{g}: not in 'identities'")
        if g not in IDENTITY_WORDS:
            raise ConfigError(f"world.comments.groups.{g}: the world has no words for this "
                              f"identity (it has: {', '.join(IDENTITY_WORDS)})")
    if settings["n_unannotated"] and not settings["groups"]:
        raise ConfigError("world.comments.groups: needs at least one group")
    amb = settings["ambiguous"]
    for g in amb["toxic_share"]:
        if g not in settings["groups"]:
            raise ConfigError(f"world.comments.ambiguous.toxic_share.{g}: not in "
                              "world.comments.groups")
    shares = {"civil_share": amb["civil_share"],
              **{f"toxic_share.{g}": v for g, v in amb["toxic_share"].items()}}
    for key, share in shares.items():
        if not 0 <= share <= 1:
            raise ConfigError(f"world.comments.ambiguous.{key}: {share} is not in [0, 1]")


def generate(
    settings: dict[str, Any],
    *,
    seed: int,
    identities: list[str],
    attributes: dict[str, Any],
    preprocess: dict[str, Any],
    out_dir: Path,
) -> None:
    """Write ``all_data.csv`` and ``ground_truth.json`` to ``out_dir``."""
    start = time.perf_counter()
    out = Path(out_dir)
    with atomic_outputs(out / "all_data.csv", out / "ground_truth.json") as tmp:
        df, truth, _ = build(settings, seed=seed, identities=identities,
                             attributes=attributes, preprocess=preprocess)
        df.to_csv(tmp[0], index=False, lineterminator="\n")
        write_json(truth, tmp[1])
    log.info("world comments: %d rows (%d identity-annotated) to %s in %.1f s", len(df),
             truth["rows"]["identity_annotated"], out, time.perf_counter() - start)

