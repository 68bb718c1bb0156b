"""Score texts with a binary classifier, fast, at the scale of BiasFinder's mutants.

BiasFinder (Asyrofi et al., TSE 2022, §3) turns each template into many mutants that differ
only in a name, pronoun or noun, so a run scores thousands of long near-duplicates. This
module therefore scores every distinct text once (and every distinct model input once:
mutants that differ only beyond the truncation point are one input), sorts the inputs by
token length, pads each batch only to its own longest input, sizes batches by a budget of
padded tokens, and runs under ``torch.inference_mode`` (with bf16/fp16 autocast on CUDA).

Paper-sized inputs (about 1.5 M mutants) are read, tokenised, scored and written a chunk of
rows at a time; a 16-byte digest of each text and of each distinct model input, with the
input's index and probability, is all that is kept across chunks, so an input is scored
once and keeps one index however the rows are chunked. Memory is one chunk plus about 200
bytes per distinct text.

Wherever a model is expected, a plain callable ``texts -> probabilities`` is accepted too,
so models that are not HuggingFace checkpoints can be tested.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import (
    ParquetAppender,
    atomic_outputs,
    iter_parquet,
    read_table,
    table_kind,
)
from biasrepro.models.load import ModelSpec, load_classifier, resolve

log = logging.getLogger(__name__)

#: padded tokens per batch when none is given
CPU_BATCH_TOKENS = 8192
CUDA_BATCH_TOKENS = 65536
#: the longest input when neither the call nor the model's training.json sets one
DEFAULT_MAX_LENGTH = 512
#: rows read, tokenised, scored and written at a time; an input (all files of one pass
#: together) of at most this many rows is one chunk
CHUNK_ROWS = 1 << 16
#: texts per tokenizer call within a chunk
_TOKENIZE_BATCH = 4096
#: a text longer than this many characters per kept token is tokenised through a window
#: of that many characters (English averages about 4.5 per WordPiece or BPE token)
WINDOW_CHARS_PER_TOKEN = 6

#: texts -> positive-class probabilities (n,) or class probabilities (n, 2)
PredictCallable = Callable[[list[str]], Any]
#: anything ``predict_proba`` accepts as a model
ModelLike = ModelSpec | str | os.PathLike | tuple[Any, Any] | PredictCallable


@dataclass(frozen=True)
class PredictStats:
    """What one scoring run did, for logs and the benchmark."""

    rows: int
    unique_texts: int
    #: distinct model inputs after tokenisation and truncation (<= unique_texts)
    unique_inputs: int
    #: real (unpadded) tokens over the distinct inputs
    tokens: int
    padded_tokens: int
    batches: int
    seconds: float

    @property
    def texts_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else math.inf


@dataclass(frozen=True)
class _Classifier:
    model: Any
    tokenizer: Any
    #: the model's local directory (for its training.json), if known
    directory: Path | None


def predict_proba(model: ModelLike, texts: Sequence[str], *, max_length: int | None = None,
                  batch_tokens: int | None = None, device: str | None = None,
                  progress: bool = False) -> np.ndarray:
    """The positive-class probability of each text, shape ``(len(texts),)``, float64.

    ``model`` is a ``ModelSpec``, a model directory (or Hub id), a ``(model, tokenizer)``
    pair of loaded HuggingFace objects, or any callable ``texts -> probabilities`` that
    returns one probability per text or an ``(n, 2)`` array of class probabilities (it is
    called once, with the distinct texts). ``max_length`` defaults to the model's training
    max_length (``training.json`` in its directory), else to min(512, the tokenizer's and
    the position embeddings' limits); ``batch_tokens`` bounds padded length x rows of a
    batch (8,192 on CPU, 65,536 on CUDA; an input longer than the budget is a batch of
    its own). ``device`` defaults to CUDA when available; a loaded pair stays where it is
    unless ``device`` is given. On CPU the result does not depend on the input order, and
    on ``batch_tokens`` only within float rounding.
    """
    return score_texts(model, texts, max_length=max_length, batch_tokens=batch_tokens,
                       device=device, progress=progress)[0]


def score_texts(model: ModelLike, texts: Sequence[str], *, max_length: int | None = None,
                batch_tokens: int | None = None, device: str | None = None,
                progress: bool = False) -> tuple[np.ndarray, PredictStats]:
    """``predict_proba`` with the statistics of the run (its seconds exclude model loading)."""
    probs, stats, _ = _score(model, texts, max_length=max_length, batch_tokens=batch_tokens,
                             device=device, progress=progress)
    return probs, stats


def _score(model: ModelLike, texts: Sequence[str], *, max_length: int | None,
           batch_tokens: int | None, device: str | None, progress: bool,
           chunk_rows: int | None = None) -> tuple[np.ndarray, PredictStats, np.ndarray]:
    """:func:`score_texts` plus, per text, the index of the distinct input the model saw
    (texts that tokenize and truncate alike share one; for a callable, identical texts).
    A classifier scores ``chunk_rows`` texts at a time (default :data:`CHUNK_ROWS`)."""
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataError(f"text is a {type(text).__name__}, not a string", row=i + 1)
    prepared = _prepare(model, device)
    start = time.perf_counter()
    if isinstance(prepared, _Classifier):
        step = _chunk_rows(chunk_rows)
        with _Scorer(prepared, max_length=max_length, batch_tokens=batch_tokens,
                     progress=progress) as scorer:
            parts = [scorer.score(texts[i:i + step]) for i in range(0, len(texts), step)]
        probs = np.concatenate([p for p, _ in parts]) if parts else np.zeros(0)
        inputs = np.concatenate([i for _, i in parts]) if parts else np.zeros(0, np.int64)
        stats = scorer.stats(time.perf_counter() - start)
        log.debug("scored %s", stats)
        return probs, stats, inputs
    first: dict[str, int] = {}
    inverse = np.fromiter((first.setdefault(t, len(first)) for t in texts), dtype=np.int64,
                          count=len(texts))
    unique = list(first)
    probs = _call_predictor(prepared, unique)
    stats = PredictStats(len(texts), len(unique), len(unique), 0, 0, 1 if unique else 0,
                         time.perf_counter() - start)
    log.debug("scored %s", stats)
    return probs[inverse], stats, inverse


def score_with_inputs(model: ModelLike, texts: Sequence[str], *, max_length: int | None = None,
                      batch_tokens: int | None = None, device: str | None = None,
                      progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``predict_proba`` and, per text, the index of the distinct input the model saw:
    texts that differ only beyond the truncation point share one (for a callable, only
    identical texts do). BiasFinder's mutants of one template that all share an index cannot
    disagree (biasfinder-original.md §7, pitfall 10)."""
    probs, _, inputs = _score(model, texts, max_length=max_length, batch_tokens=batch_tokens,
                              device=device, progress=progress)
    return probs, inputs


def predict_file(spec: ModelSpec, input: Path, out: Path, *, text_column: str = "text",
                 max_length: int | None = None, batch_tokens: int | None = None,
                 chunk_rows: int | None = None) -> None:
    """Score the ``text_column`` of a Parquet file; write ``id``/``label`` (when present),
    ``prob`` (positive class, float64), ``pred`` (int64, prob >= 0.5) and ``input`` (int64:
    rows with the same value were the same model input after tokenization and truncation)
    in input order."""
    predict_files(spec, [input], [out], text_column=text_column, max_length=max_length,
                  batch_tokens=batch_tokens, chunk_rows=chunk_rows)


def predict_files(spec: ModelSpec, inputs: Sequence[Path], outs: Sequence[Path], *,
                  text_column: str = "text", max_length: int | None = None,
                  batch_tokens: int | None = None, chunk_rows: int | None = None) -> None:
    """:func:`predict_file` for several files with one model load and one scoring pass (a
    text in several files is scored once; ``input`` indexes the inputs of all files)."""
    predict_models([spec], inputs, outs, text_column=text_column, max_length=max_length,
                   batch_tokens=batch_tokens, chunk_rows=chunk_rows)


def predict_models(specs: Sequence[ModelSpec], inputs: Sequence[Path], outs: Sequence[Path],
                   *, text_column: str = "text", max_length: int | None = None,
                   batch_tokens: int | None = None, chunk_rows: int | None = None) -> None:
    """:func:`predict_files` with each model in turn, in one process: ``outs`` holds one
    output per model and input, model by model. Each model scores exactly as it would alone
    (its own load, its own pass, the same bytes); all outputs are written or none.

    The rows of all inputs are scored ``chunk_rows`` at a time (default :data:`CHUNK_ROWS`;
    Parquet inputs are also read a chunk at a time). Inputs of at most that many rows in
    all give the bytes of one whole-input pass; other chunkings agree within float rounding
    and give the same ``input`` indices."""
    inputs, outs = [Path(p) for p in inputs], [Path(p) for p in outs]
    n = len(inputs)
    if not specs or not inputs or len(outs) != len(specs) * n:
        raise DataError(f"{len(specs)} model(s) and {n} input file(s) but {len(outs)} output "
                        "files: give one output per model and input, model by model")
    step = _chunk_rows(chunk_rows)
    for _ in _chunks(inputs, text_column, step):
        pass  # every text checked before any model is loaded
    with atomic_outputs(*outs) as tmps:
        for i, spec in enumerate(specs):
            _predict_into(spec, inputs, tmps[i * n:(i + 1) * n], outs[i * n:(i + 1) * n],
                          text_column=text_column, max_length=max_length,
                          batch_tokens=batch_tokens, chunk_rows=step)


def _chunk_rows(chunk_rows: int | None) -> int:
    if chunk_rows is None:
        return CHUNK_ROWS
    if chunk_rows < 1:
        raise ConfigError(f"chunk_rows must be positive, not {chunk_rows}")
    return chunk_rows


def _predict_into(spec: ModelSpec, inputs: list[Path], tmps: list[Path], outs: list[Path], *,
                  text_column: str, max_length: int | None, batch_tokens: int | None,
                  chunk_rows: int) -> None:
    """Score ``inputs`` in one pass, a chunk at a time, appending each one's predictions to
    its ``tmps`` path (``outs``: the final paths, for the log)."""
    clf = _prepare(spec, None)
    assert isinstance(clf, _Classifier)
    start = time.perf_counter()
    writers = [ParquetAppender(path) for path in tmps]
    try:
        with _Scorer(clf, max_length=max_length, batch_tokens=batch_tokens,
                     progress=True) as scorer:
            for chunk in _chunks(inputs, text_column, chunk_rows):
                probs, ids = scorer.score([t for _, df in chunk
                                           for t in df[text_column].tolist()])
                offset = 0
                for f, df in chunk:
                    part = slice(offset, offset + len(df))
                    offset += len(df)
                    keep = [c for c in ("id", "label") if c in df.columns and c != text_column]
                    writers[f].write(df[keep].reset_index(drop=True).assign(
                        prob=probs[part].astype(np.float64),
                        pred=(probs[part] >= 0.5).astype(np.int64),
                        input=ids[part].astype(np.int64)))
    finally:
        for writer in writers:
            writer.close()
    stats = scorer.stats(time.perf_counter() - start)
    log.info("predict %s on %s: %d rows, %d unique texts (%d distinct inputs; %d tokenised "
             "through a window), %d tokens (%d padded) in %d batches, %.1f s, %.0f texts/s "
             "-> %s", spec.name, ", ".join(map(str, inputs)), stats.rows, stats.unique_texts,
             stats.unique_inputs, scorer.windows, stats.tokens, stats.padded_tokens,
             stats.batches, stats.seconds, stats.texts_per_s, ", ".join(map(str, outs)))


# -- inputs ---------------------------------------------------------------------------------

def _chunks(paths: list[Path], column: str, rows: int
            ) -> Iterator[list[tuple[int, pd.DataFrame]]]:
    """The rows of all ``paths`` in order, ``rows`` at a time, as (file index, frame) pieces
    (a file's piece may be empty); each frame holds ``column`` and ``id``/``label`` when
    present, every ``column`` value checked (:func:`_check_texts`)."""
    chunk: list[tuple[int, pd.DataFrame]] = []
    held = 0
    for f, path in enumerate(paths):
        for frame in _read_pieces(path, column, rows):
            _check_texts(frame, path, column)
            if frame.empty:
                chunk.append((f, frame))
            while len(frame):
                take = frame.iloc[:rows - held]
                frame = frame.iloc[len(take):]
                chunk.append((f, take))
                held += len(take)
                if held == rows:
                    yield chunk
                    chunk, held = [], 0
    if chunk:
        yield chunk


def _read_pieces(path: Path, column: str, rows: int) -> Iterator[pd.DataFrame]:
    """The table at ``path`` in frames of up to ``rows`` rows, indexed by 1-based row
    number: Parquet read a batch of rows at a time (only the needed columns), other formats
    whole (:func:`biasrepro.io.read_table`)."""
    if table_kind(path) == "parquet":
        yield from iter_parquet(path, required=column, optional=("id", "label"),
                                batch_rows=rows)
        return
    df = read_table(path, what="file", allow_empty=True)
    if column not in df.columns:
        raise DataError(f"missing column; found {list(df.columns)}", file=path, column=column)
    yield df[[c for c in ("id", "label", column) if c in df.columns]]


def _check_texts(df: pd.DataFrame, path: Path, column: str) -> None:
    """Refuse unless every ``column`` value is a non-empty string without NULs."""
    for row, value in zip(df.index, df[column].tolist(), strict=True):
        if isinstance(value, str):
            if not value.strip():
                raise DataError("empty text", file=path, row=row, column=column)
            if "\x00" in value:
                raise DataError("NUL character in the text", file=path, row=row, column=column)
        elif pd.api.types.is_scalar(value) and pd.isna(value):
            raise DataError("missing text", file=path, row=row, column=column)
        else:
            raise DataError(f"not a string ({type(value).__name__})", file=path, row=row,
                            column=column)


def _prepare(model: ModelLike, device: str | None) -> _Classifier | PredictCallable:
    """A loaded classifier on its device, or the user's predict callable."""
    if isinstance(model, str | os.PathLike):
        model = resolve(str(model), None)
    if isinstance(model, ModelSpec):
        hf_model, tokenizer = load_classifier(model, 2, trained_head=True)
        target = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        directory = Path(model.location) if model.is_local else None
        clf = _Classifier(hf_model.to(target), tokenizer, directory)
        truncation_side = _training_settings(clf).get("truncation_side")
        if truncation_side:
            tokenizer.truncation_side = truncation_side
        return clf
    if isinstance(model, tuple) and len(model) == 2:
        hf_model, tokenizer = model
        if not isinstance(hf_model, torch.nn.Module) or not callable(tokenizer):
            raise ModelError("a (model, tokenizer) pair must hold a torch model and a "
                             f"tokenizer, not ({type(hf_model).__name__}, "
                             f"{type(tokenizer).__name__})")
        num_labels = getattr(getattr(hf_model, "config", None), "num_labels", None)
        if num_labels != 2:
            raise ModelError(f"model {type(hf_model).__name__} has {num_labels} labels; "
                             "a binary classifier (2 labels) is needed")
        if device is not None:
            hf_model.to(device)
        name = getattr(hf_model, "name_or_path", "")
        directory = Path(name) if name and Path(name).is_dir() else None
        return _Classifier(hf_model, tokenizer, directory)
    if isinstance(model, torch.nn.Module):
        raise ModelError(f"got a bare {type(model).__name__}: pass (model, tokenizer)")
    if callable(model):
        return model
    raise ModelError(f"cannot score with a {type(model).__name__}: expected a ModelSpec, a "
                     "model directory, a (model, tokenizer) pair or a predict callable")


def _training_settings(clf: _Classifier) -> dict[str, Any]:
    """``settings`` of the training.json that fine-tuning saved with the model, if any."""
    if clf.directory is None or not (clf.directory / "training.json").is_file():
        return {}
    path = clf.directory / "training.json"
    try:
        settings = json.loads(path.read_text(encoding="utf-8")).get("settings", {})
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError) as e:
        raise ModelError(f"{path} is not a training record ({e})") from None
    if not isinstance(settings, dict):
        raise ModelError(f"{path}: 'settings' is not an object")
    return settings


def _position_limit(model: Any) -> int | None:
    """The longest input the position embeddings allow (RoBERTa's start after padding)."""
    n = getattr(model.config, "max_position_embeddings", None)
    if n is None:
        return None
    offset = getattr(getattr(model.base_model, "embeddings", None), "padding_idx", None)
    return n - offset - 1 if isinstance(offset, int) else n


def _max_length(clf: _Classifier, requested: int | None) -> int:
    limit = _position_limit(clf.model)
    if requested is None:
        trained = _training_settings(clf).get("max_length")
        length = trained or min(DEFAULT_MAX_LENGTH, clf.tokenizer.model_max_length)
        return min(length, limit) if limit else length
    if requested < 2:
        raise ConfigError(f"max_length must be at least 2, not {requested}")
    if limit and requested > limit:
        raise ModelError(f"model {clf.model.name_or_path or type(clf.model).__name__}: "
                         f"max_length {requested} exceeds its {limit} positions")
    return requested


# -- scoring ------------------------------------------------------------------------------

def _call_predictor(fn: PredictCallable, texts: list[str]) -> np.ndarray:
    """Call the user's predictor once on ``texts``; its output checked and made (n,)."""
    name = getattr(fn, "__qualname__", type(fn).__name__)
    if not texts:
        return np.zeros(0, dtype=np.float64)
    out = fn(list(texts))
    try:
        arr = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError, RuntimeError) as e:
        raise ModelError(f"predict callable {name}: returned {type(out).__name__}, "
                         f"not probabilities ({e})") from None
    if arr.ndim == 2 and arr.shape[1] == 2:
        probs = arr[:, 1]
    elif arr.ndim == 1:
        probs = arr
    else:
        raise ModelError(f"predict callable {name}: returned {type(out).__name__} of shape "
                         f"{arr.shape}; expected ({len(texts)},) or ({len(texts)}, 2)")
    if len(probs) != len(texts):
        raise ModelError(f"predict callable {name}: returned {len(probs)} probabilities "
                         f"for {len(texts)} texts")
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=-1) if arr.ndim == 2
                         else ~np.isfinite(arr))
    if bad.size:
        raise ModelError(f"predict callable {name}: non-finite output for text "
                         f"{bad[0] + 1} of {len(texts)}: {arr[bad[0]]}")
    bad = np.flatnonzero(((arr < 0) | (arr > 1)).reshape(len(texts), -1).any(axis=1))
    if bad.size:
        raise ModelError(f"predict callable {name}: output outside [0, 1] for text "
                         f"{bad[0] + 1} of {len(texts)}: {arr[bad[0]]}")
    if arr.ndim == 2:
        off = np.flatnonzero(np.abs(arr.sum(axis=1) - 1) > 1e-4)
        if off.size:
            raise ModelError(f"predict callable {name}: class probabilities of text "
                             f"{off[0] + 1} sum to {arr[off[0]].sum():.6g}, not 1")
    return probs.copy()


def plan_batches(lengths: Sequence[int], batch_tokens: int, multiple: int = 1,
                 cap: int | None = None) -> list[tuple[int, int, int]]:
    """(start, stop, padded length) of consecutive batches over descending ``lengths``.

    Each batch is padded to its first (longest) input, rounded up to ``multiple`` but not
    beyond ``cap``, and holds as many rows as keep rows x padded length <= batch_tokens
    (at least one).
    """
    plan, start = [], 0
    while start < len(lengths):
        padded = -(-lengths[start] // multiple) * multiple
        padded = min(padded, cap) if cap else padded
        stop = min(len(lengths), start + max(1, batch_tokens // padded))
        plan.append((start, stop, padded))
        start = stop
    return plan


def _autocast(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    if device.type != "cuda":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.autocast("cuda", dtype=dtype)


class _Scorer:
    """Scores chunks of texts with one classifier, each distinct text and each distinct model
    input once over all chunks: texts and inputs (token ids after truncation) are known by a
    16-byte digest, an input by its index (in order of first appearance) and probability.

    A chunk's new inputs are sorted longest first, ties by content, and batched within the
    token budget, so the batches do not depend on the order of the texts in a chunk."""

    def __init__(self, clf: _Classifier, *, max_length: int | None, batch_tokens: int | None,
                 progress: bool) -> None:
        model, tokenizer = clf.model, clf.tokenizer
        self.model, self.tokenizer = model, tokenizer
        self.device = next(model.parameters()).device
        if batch_tokens is None:
            batch_tokens = CUDA_BATCH_TOKENS if self.device.type == "cuda" else CPU_BATCH_TOKENS
        if batch_tokens < 1:
            raise ConfigError(f"batch_tokens must be positive, not {batch_tokens}")
        if tokenizer.pad_token_id is None:
            raise ModelError(f"the tokenizer of {model.name_or_path or 'the model'} has no "
                             "padding token")
        self.batch_tokens = batch_tokens
        self.length = _max_length(clf, max_length)
        self.features: list[str] = []
        self.texts: dict[bytes, int] = {}    # text digest -> input index
        self.inputs: dict[bytes, int] = {}   # input digest -> input index
        self.probs = np.zeros(0, dtype=np.float64)  # by input index
        self.rows = self.tokens = self.padded = self.batches = 0
        self.window_side = window_side(tokenizer)
        self.windows = 0  # texts encoded through a window
        self.bar = tqdm(total=0, unit="text", desc="predict", disable=not progress)
        self.was_training = model.training

    def __enter__(self) -> _Scorer:
        self.model.eval()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()
        self.model.train(self.was_training)

    def stats(self, seconds: float) -> PredictStats:
        return PredictStats(self.rows, len(self.texts), len(self.inputs), self.tokens,
                            self.padded, self.batches, seconds)

    def score(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each text's positive-class probability and distinct-input index."""
        self.rows += len(texts)
        known = np.full(len(texts), -1, dtype=np.int64)
        fresh = np.full(len(texts), -1, dtype=np.int64)
        pending: dict[bytes, int] = {}  # digest of a text first seen here -> its position
        new_texts: list[str] = []
        for row, text in enumerate(texts):
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"),
                                     digest_size=16).digest()
            index = self.texts.get(digest)
            if index is not None:
                known[row] = index
                continue
            position = pending.setdefault(digest, len(new_texts))
            if position == len(new_texts):
                new_texts.append(text)
            fresh[row] = position
        text_input, keys, first_index = self._tokenize(new_texts)
        for digest, index in zip(pending, text_input.tolist(), strict=True):
            self.texts[digest] = index
        self._run(keys, first_index)
        inputs = known
        inputs[fresh >= 0] = text_input[fresh[fresh >= 0]]
        return self.probs[inputs], inputs

    def _tokenize(self, texts: list[str]) -> tuple[np.ndarray, list[bytes], int]:
        """Each new text's input index, the new inputs' keys (big-endian token ids of each
        feature, one after the other), and the index of the first new input."""
        first_index = len(self.inputs)
        text_input = np.empty(len(texts), dtype=np.int64)
        keys: list[bytes] = []
        for start in range(0, len(texts), _TOKENIZE_BATCH):
            part = texts[start:start + _TOKENIZE_BATCH]
            enc, windows = encode_truncated(self.tokenizer, part, self.length, self.window_side)
            self.windows += windows
            if not self.features:
                self.features = [k for k in ("input_ids", "token_type_ids") if k in enc]
            lengths = [len(ids) for ids in enc["input_ids"]]
            total = sum(lengths)
            flat = []
            for k in self.features:
                ids = np.fromiter(itertools.chain.from_iterable(enc[k]), dtype=np.int64,
                                  count=total)
                if total and not (0 <= ids.min() and ids.max() < 1 << 32):
                    raise ModelError(f"{k} outside [0, 2^32) from the tokenizer")
                # unsigned big-endian: the bytes compare as the ids do
                flat.append(ids.astype(">u4").tobytes())
            offset = 0
            for j, n in enumerate(lengths):
                a, b = 4 * offset, 4 * (offset + n)
                offset += n
                key = b"".join(f[a:b] for f in flat)
                digest = hashlib.blake2b(key, digest_size=16).digest()
                size = len(self.inputs)
                index = self.inputs.setdefault(digest, size)
                if index == size:
                    keys.append(key)
                text_input[start + j] = index
        return text_input, keys, first_index

    def _run(self, keys: list[bytes], first_index: int) -> None:
        """Score the new inputs ``keys`` (indices from ``first_index`` on) into ``probs``."""
        size = len(self.inputs)
        if size > len(self.probs):
            grown = np.zeros(max(size, 2 * len(self.probs)), dtype=np.float64)
            grown[:len(self.probs)] = self.probs
            self.probs = grown
        if not keys:
            return
        width = 4 * len(self.features)
        # longest first; ties by content, so the batches do not depend on the input order
        order = sorted(range(len(keys)), key=lambda j: (-len(keys[j]), keys[j]))
        lengths = [len(keys[j]) // width for j in order]
        plan = plan_batches(lengths, self.batch_tokens, 8 if self.device.type == "cuda" else 1,
                            _position_limit(self.model))
        tokenizer = self.tokenizer
        pad_values = [tokenizer.pad_token_id, tokenizer.pad_token_type_id][:len(self.features)]
        self.bar.total += len(keys)
        self.bar.refresh()
        sorted_probs = []
        with torch.inference_mode(), _autocast(self.device):
            for start, stop, padded in plan:
                rows = [np.frombuffer(keys[j], dtype=">u4").reshape(len(self.features), -1)
                        for j in order[start:stop]]
                batch = _pad(rows, padded, self.features, pad_values, self.device)
                logits = self.model(**batch).logits
                if logits.ndim != 2 or logits.shape[1] != 2:
                    raise ModelError(f"model {self.model.name_or_path}: logits of shape "
                                     f"{tuple(logits.shape)}; 2 classes are needed")
                sorted_probs.append(logits.double().softmax(-1)[:, 1])
                self.bar.update(stop - start)
        probs = np.empty(len(keys), dtype=np.float64)
        probs[order] = torch.cat(sorted_probs).cpu().numpy()
        self.probs[first_index:first_index + len(keys)] = probs
        self.tokens += sum(lengths)
        self.padded += sum((b - a) * p for a, b, p in plan)
        self.batches += len(plan)


# -- windows of long texts -------------------------------------------------------------------

_NORMALIZERS = {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents",
                "Precompiled"}
#: pre-tokenizers that split at every space (ByteLevel with its regex, Metaspace with split)
_SPLITTERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit", "ByteLevel", "Metaspace"}
#: pre-tokenizers that split within words only, next to one of those
_WORD_SPLITTERS = {"Punctuation", "Digits"}
#: Replace patterns that only ever match a run of whitespace
_SPACE_RUN = re.compile(r"(?: |\\s)(?:\+|\{\d+,\d*\})?")
#: cuts are made at a space (U+0020), which every such pre-tokenizer splits at (Metaspace
#: splits at no other whitespace)
_BEFORE_SPACE = re.compile(r"[^ ](?= )")
_LAST_SPACE_BEFORE_WORD = re.compile(r".* (?=[^ ])", re.DOTALL)


def window_side(tokenizer: Any) -> str | None:
    """The truncation side (``right``/``left``) when ``tokenizer`` may encode a long text
    through a window of it cut at a space (:func:`text_window`), else ``None``.

    That holds when tokenisation is local: a fast tokenizer whose normalizer works a
    character (or a run of spaces) at a time, whose pre-tokenizer splits at every space and
    treats a text that starts with a space as it treats a word after one, and whose added
    tokens hold no whitespace, so the words inside the window get the tokens they get in
    the whole text (BERT's WordPiece, RoBERTa's byte-level BPE, ALBERT's Metaspace
    unigram)."""
    side = getattr(tokenizer, "truncation_side", "right")
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if not getattr(tokenizer, "is_fast", False) or backend is None or side not in (
            "right", "left"):
        return None
    try:
        spec = json.loads(backend.to_str())
    except (ValueError, TypeError, AttributeError):
        return None
    if any(any(c.isspace() for c in t.get("content", "")) for t in spec.get("added_tokens", ())):
        return None  # an added token could span the cut
    return side if _local(spec.get("normalizer"), spec.get("pre_tokenizer")) else None


def _local(normalizer: dict[str, Any] | None, pre: dict[str, Any] | None) -> bool:
    def norm_ok(n: dict[str, Any] | None) -> bool:
        if n is None or n["type"] in _NORMALIZERS:
            return True
        if n["type"] == "Sequence":
            return all(norm_ok(m) for m in n["normalizers"])
        if n["type"] == "Replace":
            pattern = n["pattern"]
            if "String" in pattern:
                return not any(c.isspace() for c in pattern["String"])
            return _SPACE_RUN.fullmatch(pattern.get("Regex", "")) is not None
        return False

    def splits(p: dict[str, Any]) -> bool:
        return p["type"] in _SPLITTERS and p.get("use_regex", True) and p.get("split", True)

    if pre is None or not norm_ok(normalizer):
        return False
    parts = pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]
    return (all(splits(q) or q["type"] in _WORD_SPLITTERS for q in parts)
            and any(splits(q) for q in parts))


def encode_truncated(tokenizer: Any, texts: list[str], length: int, side: str | None,
                     width: int | None = None) -> tuple[dict[str, list[list[int]]], int]:
    """The encodings of ``texts`` truncated to ``length`` tokens, exactly as ``tokenizer``
    gives them for the whole texts, and how many were encoded through a window.

    With ``side`` (:func:`window_side`), a text longer than ``width`` characters (default
    :data:`WINDOW_CHARS_PER_TOKEN` x ``length``) is encoded through :func:`text_window`;
    a window that turns out to hold too few tokens is encoded again whole. A 1,300-character
    review truncated to 128 tokens is then tokenised through about 770 of its characters."""
    call = dict(truncation=True, max_length=length, return_attention_mask=False)
    if side is None:
        return dict(tokenizer(texts, **call)), 0
    width = WINDOW_CHARS_PER_TOKEN * length if width is None else width
    windows = [text_window(text, width, side) for text in texts]
    cut = [j for j, (w, t) in enumerate(zip(windows, texts, strict=True)) if w is not t]
    if not cut:
        return dict(tokenizer(texts, **call)), 0
    enc = dict(tokenizer(windows, **call))
    # a window holding ``length`` tokens after truncation holds those of the whole text
    redo = [j for j in cut if len(enc["input_ids"][j]) < length]
    if redo:
        whole = tokenizer([texts[j] for j in redo], **call)
        for k in enc:
            for j, ids in zip(redo, whole[k], strict=True):
                enc[k][j] = ids
    return enc, len(cut) - len(redo)


def text_window(text: str, width: int, side: str) -> str:
    """``text`` when it has at most ``width`` characters, else the part a ``side``
    truncation keeps, cut at a space: up to the first space at or after ``width``
    (``right``), or from the last space before the last ``width`` characters (``left``;
    the window starts with it, so its first word begins as it does in the whole text);
    ``text`` itself when there is no such cut."""
    if len(text) <= width:
        return text
    if side == "right":
        m = _BEFORE_SPACE.search(text, width - 1)
        return text[:m.end()] if m else text
    m = _LAST_SPACE_BEFORE_WORD.match(text, 0, len(text) - width + 1)
    if m is None:
        return text
    return text[m.end() - 1:]


def _pad(rows: list[np.ndarray], padded: int, features: list[str], pad_values: list[int],
         device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded tensors of one batch (encoders read positions from the start); each row
    holds one sequence per feature. For a GPU they are copied from pinned (page-locked)
    memory, so the copy runs asynchronously, overlapping the work queued before it."""
    arrays = {k: np.full((len(rows), padded), v, dtype=np.int64)
              for k, v in zip(features, pad_values, strict=True)}
    mask = np.zeros((len(rows), padded), dtype=np.int64)
    for r, row in enumerate(rows):
        n = row.shape[1]
        mask[r, :n] = 1
        for k, seq in zip(features, row, strict=True):
            arrays[k][r, :n] = seq
    arrays["attention_mask"] = mask
    pin = device.type == "cuda"
    return {k: (torch.from_numpy(a).pin_memory() if pin else torch.from_numpy(a)).to(
        device, non_blocking=True) for k, a in arrays.items()}
