"""An SST-sentiment-fairness-shaped CSV (Gero, Butters, Bethke & Elsafoury 2023 format).

The toxicity paper's sentiment appendix uses the SST sentiment-fairness set: single SST
sentences whose sentiment targets a gendered person, labelled ``masc``/``femm``, with the
continuous SST sentiment in ``label`` (positive above 0.5). This writes the project's
own sentences in that file's exact layout, defects included:

* header ``,annotation_index,index,sentence,label,gender,A1,A2,A3,keep,agreement,correct,
  incorrect,`` (a leading unnamed index, a trailing empty column);
* Penn-Treebank tokenization ("does n't", "Lopez 's", " , ");
* up to three rows whose sentence holds an unquoted comma and which lack the trailing empty
  field, so their columns shift by one (the real file has four such rows);
* mojibake: a sentence with an accented letter is written UTF-8-decoded-as-Latin-1
  ("Müller" → "MÃ¼ller").

Counts are exact: ``n * female_share`` rows (rounded half up) are ``femm``, and per gender
``positive_rate`` of the rows are positive. No label is exactly 0.5, so binarizing with
``> 0.5`` (as :mod:`biasrepro.data.sst` does) or ``>= 0.5`` gives the same classes.
"""

from __future__ import annotations

import csv
import io
import logging
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from biasrepro.data.world import exact_count, rng_for
from biasrepro.data.world.vocabulary import FIRST_NAMES, PRONOUNS, SURNAMES
from biasrepro.errors import ConfigError
from biasrepro.io import atomic_outputs, write_text

log = logging.getLogger(__name__)

HEADER = ("", "annotation_index", "index", "sentence", "label", "gender", "A1", "A2", "A3",
          "keep", "agreement", "correct", "incorrect", "")
GENDER_CODES = {"female": "femm", "male": "masc"}
#: words for the target, by gender
TARGET_WORDS = {
    "female": {"noun": "actress", "person": "woman", "lead": "heroine", "hon": "Ms."},
    "male": {"noun": "actor", "person": "man", "lead": "hero", "hon": "Mr."},
}
#: surnames with accented letters (they come out as mojibake)
ACCENTED_SURNAMES = ("Müller", "Núñez", "Lefèvre", "Séverin", "Ibáñez", "Zúñiga")
N_SHIFTED_ROWS = 3

PATTERNS = {
    "pos": (
        "{sur} is terrific as the {lead} , and {subj} makes the film worth seeing .",
        "It 's a pleasure to watch {sur} work , and {det} timing is impeccable .",
        "{subj} gives the kind of performance that makes you forgive the script 's shortcuts .",
        "{name} brings warmth and wit to {det} role .",
        "Thanks to {sur} and {det} fearless turn , the film never loses its nerve .",
        "{det} performance is the best reason to see this movie .",
        "{sur} has never been better , and {subj} knows it .",
        "The {noun} is luminous , and the camera loves {obj} .",
        "A career-best turn from {sur} , who lets {refl} be vulnerable .",
        "{subj} 's a natural , and {det} scenes crackle with energy .",
        "You ca n't take your eyes off {obj} .",
        "{hon} {sur} is the real deal .",
        "As the {lead} , {sur} holds the whole picture together .",
        "{sur} 's quiet , intelligent performance shows what {subj} can do .",
        "The {person} at the centre of the story is drawn with real affection , and {sur} "
        "plays {obj} beautifully .",
        "Director {name} finds something fresh in a familiar story , and {det} confidence "
        "shows .",
        "Though {subj} is n't given much to do , {sur} makes every minute count .",
    ),
    "neg": (
        "{sur} is miscast as the {lead} , and {subj} seems to know it .",
        "It 's painful to watch {sur} struggle , and {subj} deserved better material .",
        "{subj} does n't so much act as pose .",
        "{name} is stuck in a role that gives {obj} nothing to play .",
        "Not even {sur} can rescue this mess , and {subj} barely tries .",
        "{det} performance is flat , and the film sinks with it .",
        "{sur} has never been worse , and {subj} does n't seem to care .",
        "The {noun} looks lost , and the camera does {obj} no favours .",
        "A career-low turn from {sur} , who seems embarrassed by {refl} .",
        "{subj} 's all mannerisms and no feeling .",
        "You 'll wish you could take your eyes off {obj} .",
        "{hon} {sur} is wasted here .",
        "As the {lead} , {sur} never convinces for a second .",
        "{sur} 's shrill , monotonous performance wears out its welcome , and {subj} never "
        "lets up .",
        "The {person} at the centre of the story is a cardboard cutout , and {sur} ca n't "
        "make {obj} breathe .",
        "Director {name} seems to have lost interest halfway through , and {det} film "
        "shows it .",
        "( {sur} ) is likable enough , but {subj} ca n't carry a film this lazy .",
    ),
}


def _sentence(rng: random.Random, gender: str, positive: bool) -> tuple[str, str]:
    """One PTB-tokenized sentence about a target of ``gender``, and its pattern id."""
    pol = "pos" if positive else "neg"
    i = rng.randrange(len(PATTERNS[pol]))
    sur = rng.choice(ACCENTED_SURNAMES if rng.random() < 0.03 else SURNAMES)
    slots = {"sur": sur, "name": f"{rng.choice(FIRST_NAMES[gender])} {sur}",
             **PRONOUNS[gender], **TARGET_WORDS[gender]}
    text = PATTERNS[pol][i].format_map(slots)
    text = text[0].upper() + text[1:]
    if not text.isascii():
        text = text.encode("utf-8").decode("latin-1")  # mojibake, as in the real file
    return text, f"{pol}.{i}"


def build(settings: Mapping[str, Any], *, seed: int) -> tuple[str, list[str]]:
    """The CSV text and the pattern id of each row."""
    n = settings["n"]
    rates = settings["positive_rate"]
    n_female = exact_count(n, settings["female_share"])
    if not 0 < n_female < n:
        raise ConfigError(f"world.sst.female_share: gives {n_female} femm rows of {n}; "
                          "both genders need at least one")
    rng = rng_for(seed, "sst")
    genders = np.array(["female"] * n_female + ["male"] * (n - n_female))
    positive = np.zeros(n, dtype=bool)
    for g in ("female", "male"):
        idx = np.flatnonzero(genders == g)
        positive[idx[: exact_count(len(idx), rates[g])]] = True
    order = rng.permutation(n)
    genders, positive = genders[order], positive[order]

    text_rng = random.Random(int(rng.integers(2**63)))
    written = [_sentence(text_rng, g, p) for g, p in zip(genders, positive, strict=True)]
    # never exactly 0.5, so "positive" is the same whether one binarizes with > or >= 0.5
    labels = np.where(positive, rng.integers(51, 99, n), rng.integers(2, 50, n)) / 100
    first_col = np.cumsum(np.r_[0, 1 + rng.choice([0, 0, 0, 1, 1, 2, 4], n - 1)])
    annotation = first_col - (np.arange(n) >= int(0.73 * n))
    sst_index = rng.choice(8544, n, replace=False)
    agreement = np.where(rng.random(n) < 0.68, 3, 2)
    votes = np.ones((n, 3), dtype=int)
    votes[np.flatnonzero(agreement == 2), rng.integers(0, 3, int((agreement == 2).sum()))] = 0

    one_comma = [i for i, (s, _) in enumerate(written) if s.count(",") == 1 and '"' not in s]
    shifted = set(rng.permutation(one_comma)[:N_SHIFTED_ROWS].tolist())
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for i, (sentence, _) in enumerate(written):
        fields = [first_col[i], annotation[i], sst_index[i], sentence,
                  f"{labels[i]:.2f}".rstrip("0"), GENDER_CODES[genders[i]], *votes[i], "True",
                  agreement[i], agreement[i], 3 - agreement[i]]
        if i in shifted:  # the real file's defect: unquoted comma, no trailing field
            buffer.write(",".join(map(str, fields)) + "\n")
        else:
            writer.writerow([*fields, ""])
    return buffer.getvalue(), [pid for _, pid in written]


def generate(settings: dict[str, Any], *, seed: int, out_dir: Path) -> None:
    """Write ``SST_fairness_dataset.csv`` to ``out_dir``."""
    start = time.perf_counter()
    out = Path(out_dir) / "SST_fairness_dataset.csv"
    with atomic_outputs(out) as tmp:
        text, _ = build(settings, seed=seed)
        write_text(text, tmp[0])
    log.info("world sst: %d sentences to %s in %.1f s", settings["n"], out,
             time.perf_counter() - start)
