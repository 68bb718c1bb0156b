"""SEAT, the Sentence Encoder Association Test (toxicity paper §6.1, Table 4).

As bias-bench runs it (``bias_bench/benchmark/seat``, a port of W4ngatang/sent-bias;
https://github.com/McGill-NLP/bias-bench):

* a test is one pretty-printed JSON object ``{"targ1", "targ2", "attr1", "attr2"}``, each
  ``{"category", "examples"}`` (template sentences), despite the ``.jsonl`` extension;
* a sentence is encoded by the base model: the last hidden layer averaged over all tokens,
  special tokens included, then L2-normalised (May et al. 2019);
* association ``s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b)``; effect size
  ``d = (mean_{x in X} s(x) - mean_{y in Y} s(y)) / std_{w in X u Y} s(w)`` with the
  sample standard deviation (``ddof=1``) (Caliskan et al. 2017, eq. of the effect size);
* one-sided permutation test over the equal-size partitions (X', Y') of X u Y with the
  statistic ``sum_{x in X'} s(x)``: exact when there are at most ``samples`` partitions,
  else ``samples - 1`` random partitions plus the observed one counted once; a partition
  counts when its statistic is greater than *or equal to* the observed one (conservative).
  The statistics of all partitions are computed as array operations, in chunks of at most
  :data:`CHUNK_ELEMENTS` array elements (no Python loop per partition);
* the number per bias type is the average absolute effect size over its tests
  (:data:`TESTS`; bias-bench ``export/seat.py``, as its maintainers describe it
  at https://github.com/McGill-NLP/bias-bench/issues/12).

Two choices differ from bias-bench without changing what is measured: ties are compared with
a relative tolerance of :data:`TIE_TOLERANCE` (a tie must not depend on summation order), and
each test draws its random partitions from its own ``numpy`` generator seeded with ``seed``
(bias-bench shares one global stream across the tests it runs, so a test's p-value depends
on the tests run before it).
"""

from __future__ import annotations

import itertools
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.errors import ConfigError, DataError, ModelError, in_file
from biasrepro.io import read_json
from biasrepro.models.load import ModelSpec, reattach_sentdebias
from biasrepro.representation.runner import Result

#: the 17 tests bias-bench runs and exports, per bias type (``export/seat.py``)
TESTS: dict[str, list[str]] = {
    "gender": ["sent-weat6", "sent-weat6b", "sent-weat7", "sent-weat7b", "sent-weat8",
               "sent-weat8b"],
    "race": ["sent-angry_black_woman_stereotype", "sent-angry_black_woman_stereotype_b",
             "sent-weat3", "sent-weat3b", "sent-weat4", "sent-weat5", "sent-weat5b"],
    "religion": ["sent-religion1", "sent-religion1b", "sent-religion2", "sent-religion2b"],
}
#: the file extension of a test (bias-bench ``SEATRunner.TEST_EXT``)
EXTENSION = ".jsonl"
#: the four sets of a test, in file order: targets X, Y and attributes A, B
KEYS = ("targ1", "targ2", "attr1", "attr2")
#: p-value samples and seed of bias-bench (``SEATRunner`` defaults, ``experiments/seat.py``)
SAMPLES = 100_000
SEED = 0
#: at most this many partition elements (indices or values) are held at once
CHUNK_ELEMENTS = 1 << 22
#: statistics within this share of sum |s| of the observed one count as ties
TIE_TOLERANCE = 1e-12
#: sentence pooling of :func:`encode`: bias-bench's mean over all tokens, or the first token
POOLINGS = ("mean", "cls")


@dataclass(frozen=True)
class Concept:
    """One set of a test: its category name and its example sentences."""

    category: str
    examples: tuple[str, ...]


@dataclass(frozen=True)
class SeatTest:
    """A SEAT test: targets X (``targ1``), Y (``targ2``), attributes A (``attr1``), B (``attr2``).

    Raises :class:`DataError` naming the set when a set is empty, repeats an example (bias-bench
    keys encodings by text, so a repeat would silently count once) or X and Y differ in size
    (the permutation test partitions X u Y into two halves).
    """

    name: str
    targ1: Concept
    targ2: Concept
    attr1: Concept
    attr2: Concept

    def __post_init__(self) -> None:
        for key in KEYS:
            examples = getattr(self, key).examples
            if not examples:
                raise DataError("no examples", column=f"{key}.examples")
            repeated = [t for t, n in Counter(examples).items() if n > 1]
            if repeated:
                raise DataError(f"repeated example {repeated[0]!r}", column=f"{key}.examples")
        if len(self.targ1.examples) != len(self.targ2.examples):
            raise DataError(f"targ1 has {len(self.targ1.examples)} examples, targ2 "
                            f"{len(self.targ2.examples)}: the targets must be the same size",
                            column="targ2.examples")


def _concept(value: Any, key: str) -> Concept:
    if not isinstance(value, dict):
        raise DataError(f"expected an object, got {type(value).__name__}", column=key)
    for field in ("category", "examples"):
        if field not in value:
            raise DataError(f"missing '{field}'", column=key)
    category, examples = value["category"], value["examples"]
    if not isinstance(category, str) or not category:
        raise DataError("the category must be a non-empty string", column=f"{key}.category")
    if not isinstance(examples, list):
        raise DataError("the examples must be a list", column=f"{key}.examples")
    for i, text in enumerate(examples):
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"example {i} is not a non-empty string", column=f"{key}.examples")
    return Concept(category, tuple(examples))


def read_seat(path: str | Path) -> SeatTest:
    """The SEAT test in ``path`` (bias-bench format), named after the file without its suffix."""
    path = Path(path)
    if not path.is_file():
        raise DataError("SEAT test file not found", file=path)
    data = read_json(path)
    with in_file(path):
        if not isinstance(data, dict):
            raise DataError(f"expected a JSON object, got {type(data).__name__}")
        missing = [k for k in KEYS if k not in data]
        unknown = sorted(set(data) - set(KEYS))
        if missing or unknown:
            raise DataError(f"expected the keys {', '.join(KEYS)}; missing: "
                            f"{', '.join(missing) or '-'}; unknown: {', '.join(unknown) or '-'}",
                            column=(missing or unknown)[0])
        name = path.name.removesuffix(EXTENSION)
        return SeatTest(name, *(_concept(data[k], k) for k in KEYS))


def load_tests(directory: str | Path,
               names: Mapping[str, Sequence[str]] = TESTS) -> dict[str, list[SeatTest]]:
    """The tests ``names`` (bias type -> test names) read from ``directory/<name>.jsonl``."""
    return {attribute: [read_seat(Path(directory) / f"{name}{EXTENSION}") for name in tests]
            for attribute, tests in names.items()}


def association(w: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``s(w, A, B)`` for each row ``w``: mean cosine with the rows of ``a`` minus with ``b``."""
    def unit(m: np.ndarray) -> np.ndarray:
        m = np.asarray(m, dtype=np.float64)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    w = unit(w)
    return (w @ unit(a).T).mean(axis=1) - (w @ unit(b).T).mean(axis=1)


def effect_size(s_x: np.ndarray, s_y: np.ndarray) -> float:
    """Caliskan's ``d`` from the associations of X and Y (sample std over X u Y, ``ddof=1``)."""
    pooled = np.concatenate([s_x, s_y])
    return float((np.mean(s_x) - np.mean(s_y)) / np.std(pooled, ddof=1))


def _exact_statistics(s: np.ndarray, half: int) -> Iterator[np.ndarray]:
    """``sum_{x in X'} s(x)`` of every ``half``-subset X' of the indices of ``s``, in chunks."""
    combinations = itertools.combinations(range(len(s)), half)
    rows = max(1, CHUNK_ELEMENTS // half)
    while True:
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(combinations, rows)),
                           dtype=np.intp)
        if not flat.size:
            return
        yield s[flat.reshape(-1, half)].sum(axis=1)


def _sampled_statistics(s: np.ndarray, half: int, count: int,
                        seed: int) -> Iterator[np.ndarray]:
    """``sum_{x in X'} s(x)`` of ``count`` uniformly random ``half``-subsets X', in chunks."""
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK_ELEMENTS // len(s))
    for start in range(0, count, rows):
        shuffled = np.tile(s, (min(rows, count - start), 1))
        rng.permuted(shuffled, axis=1, out=shuffled)
        yield shuffled[:, :half].sum(axis=1)


def permutation_p_value(s_x: np.ndarray, s_y: np.ndarray, *, samples: int = SAMPLES,
                        seed: int = SEED) -> float:
    """One-sided permutation p-value of ``sum_{x in X} s(x)`` over partitions of X u Y.

    Exact (the share of all ``C(2n, n)`` partitions whose statistic is >= the observed one)
    when ``C(2n, n) <= samples``; otherwise ``(1 + k) / samples`` with ``k`` the number of
    ``samples - 1`` random partitions (seeded) that reach the observed statistic.
    """
    if samples < 1:
        raise ConfigError(f"seat samples must be at least 1, got {samples}")
    s_x, s_y = np.asarray(s_x, dtype=np.float64), np.asarray(s_y, dtype=np.float64)
    if len(s_x) != len(s_y):
        raise DataError(f"the targets differ in size ({len(s_x)} and {len(s_y)})")
    half = len(s_x)
    s = np.concatenate([s_x, s_y])
    threshold = s_x.sum() - TIE_TOLERANCE * np.abs(s).sum()
    exact = math.comb(2 * half, half) <= samples
    statistics = (_exact_statistics(s, half) if exact
                  else _sampled_statistics(s, half, samples - 1, seed))
    reached = sum(int(np.count_nonzero(chunk >= threshold)) for chunk in statistics)
    return reached / math.comb(2 * half, half) if exact else (1 + reached) / samples


def load_encoder(model_dir: str | Path) -> tuple[Any, Any]:
    """The base encoder (``AutoModel``, any head dropped) and tokenizer saved in ``model_dir``;
    a saved SentenceDebias projection is re-attached."""
    from transformers import AutoModel, AutoTokenizer

    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise ModelError(f"model directory not found: {model_dir}")
    try:
        model = AutoModel.from_pretrained(model_dir, use_safetensors=True)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot load a model from {model_dir}: {e}") from None
    reattach_sentdebias(model, ModelSpec(model_dir.name, str(model_dir)))
    return model, tokenizer


def encode(texts: Sequence[str], model: str | Path | tuple[Any, Any], *, pooling: str = "mean",
           batch_size: int = 32) -> np.ndarray:
    """L2-normalised sentence embeddings (float32, one row per text) as bias-bench's SEAT makes.

    ``model`` is a model directory or a ``(model, tokenizer)`` pair; a model with a head
    (masked LM, classifier) is run through its base model, so hooks on the base model or its
    encoder (SentenceDebias) apply. ``pooling="mean"`` averages the last hidden layer over
    all tokens, special tokens included (bias-bench); ``"cls"`` takes the first token's.
    Texts go through in batches of similar length, right-padded, with the padding masked out
    of the mean, so each row equals encoding the text alone; no gradients, eval mode (the
    model's training flag is restored). Nothing is random: there is no seed.
    """
    import torch

    if pooling not in POOLINGS:
        raise ConfigError(f"unknown seat pooling {pooling!r} (choose from {', '.join(POOLINGS)})")
    encoder, tokenizer = load_encoder(model) if isinstance(model, str | Path) else model
    base = encoder.base_model
    device = next(base.parameters()).device
    encoded = tokenizer(list(texts))
    rows = [{k: v[i] for k, v in encoded.items()} for i in range(len(texts))]
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["input_ids"]))
    out = np.empty((len(rows), base.config.hidden_size), dtype=np.float32)
    was_training = base.training
    base.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                batch = tokenizer.pad([rows[i] for i in chunk], padding_side="right",
                                      return_tensors="pt").to(device)
                hidden = base(**batch).last_hidden_state.float()
                if pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1)
                pooled = pooled / pooled.norm(dim=1, keepdim=True)
                out[chunk] = pooled.cpu().numpy()
    finally:
        base.train(was_training)
    return out


def run_test(test: SeatTest, embeddings: Mapping[str, np.ndarray], *, samples: int = SAMPLES,
             seed: int = SEED) -> tuple[float, float]:
    """Effect size and p-value of ``test`` given an embedding for each of its texts."""
    x, y, a, b = (np.stack([embeddings[t] for t in getattr(test, k).examples]) for k in KEYS)
    s_x, s_y = association(x, a, b), association(y, a, b)
    return effect_size(s_x, s_y), permutation_p_value(s_x, s_y, samples=samples, seed=seed)


def run_seat(tests: Mapping[str, Sequence[SeatTest]],
             encoder: Callable[[Sequence[str]], np.ndarray], *, samples: int = SAMPLES,
             seed: int = SEED) -> pd.DataFrame:
    """One row per test: test, attribute (bias type), effect_size, p_value, n_targets
    (|X| + |Y|) and n_attributes (|A| + |B|).

    ``encoder`` maps a list of texts to one embedding row each, e.g.
    ``functools.partial(encode, model=load_encoder(path))``; each distinct text is encoded once.
    """
    texts = list(dict.fromkeys(t for group in tests.values() for test in group
                               for k in KEYS for t in getattr(test, k).examples))
    vectors = np.asarray(encoder(texts))
    if vectors.ndim != 2 or len(vectors) != len(texts):
        raise ModelError(f"the encoder returned shape {vectors.shape} for {len(texts)} texts")
    embeddings = dict(zip(texts, vectors, strict=True))
    records = []
    for attribute, group in tests.items():
        for test in group:
            d, p = run_test(test, embeddings, samples=samples, seed=seed)
            records.append({
                "test": test.name, "attribute": attribute, "effect_size": d, "p_value": p,
                "n_targets": len(test.targ1.examples) + len(test.targ2.examples),
                "n_attributes": len(test.attr1.examples) + len(test.attr2.examples),
            })
    return pd.DataFrame.from_records(
        records, columns=["test", "attribute", "effect_size", "p_value", "n_targets",
                          "n_attributes"])


def average_absolute_effect(table: pd.DataFrame) -> dict[str, float]:
    """The mean |effect size| over each attribute's tests (the paper's Table 4 number)."""
    means = table["effect_size"].abs().groupby(table["attribute"], sort=False).mean()
    return {str(k): float(v) for k, v in means.items()}


def attribute_of(name: str) -> str:
    """The attribute of a SEAT test: bias-bench's 17 by :data:`TESTS`; the world's
    ``world-<attribute>``."""
    for attribute, names in TESTS.items():
        if name in names:
            return attribute
    if name.startswith("world-"):
        return name.removeprefix("world-")
    raise ConfigError(f"SEAT test {name!r}: not one of bias-bench's 17 tests nor a world test "
                      "(world-<attribute>), so its attribute is unknown")


def run(model: tuple[Any, Any], source: str | Path | Sequence[str | Path],
        settings: Mapping[str, Any]) -> Result:
    """The SEAT runner (:mod:`~biasrepro.representation.runner`; bias-bench's
    ``SEATRunner``): the test file(s) ``source`` grouped by :func:`attribute_of`, sentences
    encoded by :func:`encode` and run by :func:`run_seat` with ``settings``'
    ``permutation_samples`` and ``seed`` (``representation.seat``). Summary:
    ``average_absolute_effect`` per attribute and the ``tests`` as records; items: the tests."""
    tests: dict[str, list[SeatTest]] = {}
    for path in [source] if isinstance(source, str | os.PathLike) else source:
        test = read_seat(path)
        tests.setdefault(attribute_of(test.name), []).append(test)
    table = run_seat(tests, lambda texts: encode(texts, model),
                     samples=int(settings["permutation_samples"]), seed=int(settings["seed"]))
    return Result({"average_absolute_effect": average_absolute_effect(table),
                   "tests": table.to_dict("records")}, table)
