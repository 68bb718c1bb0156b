"""The planted-bias world: seeded synthetic corpora whose biases are known exactly.

docs/architecture.md, "The embedded default": the harness runs offline on data it generates itself,
so every measured bias has a known true value. Three corpora, each in a real dataset's
file format so that the same loaders read them:

* :mod:`.reviews`: IMDB-shaped reviews (Hugging Face ``stanfordnlp/imdb`` Parquet) with a
  planted association between identity classes (gender, occupation, country of origin)
  and the sentiment label in the training split only — what BiasFinder tests for;
* :mod:`.comments`: a Civil-Comments-shaped ``all_data.csv`` whose per-identity counts and
  toxic ratios are set by config, so the selection bias (toxicity paper Eq. 4) and
  overamplification bias (Eq. 5) of its training split are known in advance;
* :mod:`.sst`: the SST sentiment-fairness CSV (Gero et al. 2023 format, defects included).

All text comes from the project's own word lists (:mod:`.lexicon`) and sentence patterns.
Counts are exact, not sampled: a rate ``r`` over ``n`` items gives :func:`exact_count`
items, and class counts that must add up to a total are apportioned by the largest-remainder
rule (:func:`biasrepro.data.split.allocate`).
"""

from __future__ import annotations

import math
import zlib

import numpy as np


def rng_for(seed: int, *names: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and a stream name, so corpora never share draws."""
    return np.random.default_rng([seed, *(zlib.crc32(n.encode()) for n in names)])


def exact_count(n: int, rate: float) -> int:
    """``n * rate`` rounded half up (``exact_count(5, 0.5) == 3``), robust to float noise."""
    return math.floor(n * rate + 0.5 + 1e-9)
