"""Score texts with a binary classifier, fast, at the scale of BiasFinder's mutants.

BiasFinder (Asyrofi et al., TSE 2022, §3) turns each template into many mutants that differ
only in a name, pronoun or noun, so a run scores thousands of long near-duplicates. This
module (issue #3, items 4 and 5) therefore scores every distinct text once (and every
distinct model input once: mutants that differ only beyond the truncation point are one
input), sorts the inputs by token length, pads each batch only to its own longest input,
sizes batches by a budget of padded tokens, and runs under ``torch.inference_mode`` (with
bf16/fp16 autocast on CUDA).

Wherever a model is expected, a plain callable ``texts -> probabilities`` is accepted too,
so models that are not HuggingFace checkpoints can be tested (issue #3, item 5).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import atomic_outputs, read_table, write_parquet
from biasrepro.models.load import ModelSpec, load_classifier, resolve

log = logging.getLogger(__name__)

#: padded tokens per batch when none is given
CPU_BATCH_TOKENS = 8192
CUDA_BATCH_TOKENS = 65536
#: the longest input when neither the call nor the model's training.json sets one
DEFAULT_MAX_LENGTH = 512

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
           batch_tokens: int | None, device: str | None,
           progress: bool) -> tuple[np.ndarray, PredictStats, np.ndarray]:
    """:func:`score_texts` plus, per text, the index of the distinct input the model saw
    (texts that tokenize and truncate alike share one; for a callable, identical texts)."""
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataError(f"text is a {type(text).__name__}, not a string", row=i + 1)
    first: dict[str, int] = {}
    inverse = np.fromiter((first.setdefault(t, len(first)) for t in texts), dtype=np.int64,
                          count=len(texts))
    unique = list(first)
    prepared = _prepare(model, device)
    start = time.perf_counter()
    if isinstance(prepared, _Classifier):
        probs, text_input, (n_inputs, tokens, padded, batches) = _score_classifier(
            prepared, unique, max_length=max_length, batch_tokens=batch_tokens,
            progress=progress)
    else:
        probs = _call_predictor(prepared, unique)
        text_input = np.arange(len(unique), dtype=np.int64)
        n_inputs, tokens, padded, batches = len(unique), 0, 0, 1 if unique else 0
    stats = PredictStats(len(texts), len(unique), n_inputs, tokens, padded, batches,
                         time.perf_counter() - start)
    log.debug("scored %s", stats)
    return probs[inverse], stats, text_input[inverse]


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
                 max_length: int | None = None, batch_tokens: int | None = None) -> None:
    """Score the ``text_column`` of a Parquet file; write ``id``/``label`` (when present),
    ``prob`` (positive class, float64), ``pred`` (int64, prob >= 0.5) and ``input`` (int64:
    rows with the same value were the same model input after tokenization and truncation)
    in input order."""
    predict_files(spec, [input], [out], text_column=text_column, max_length=max_length,
                  batch_tokens=batch_tokens)


def predict_files(spec: ModelSpec, inputs: Sequence[Path], outs: Sequence[Path], *,
                  text_column: str = "text", max_length: int | None = None,
                  batch_tokens: int | None = None) -> None:
    """:func:`predict_file` for several files with one model load and one scoring pass (a
    text in several files is scored once; ``input`` indexes the inputs of all files)."""
    predict_models([spec], inputs, outs, text_column=text_column, max_length=max_length,
                   batch_tokens=batch_tokens)


def predict_models(specs: Sequence[ModelSpec], inputs: Sequence[Path], outs: Sequence[Path],
                   *, text_column: str = "text", max_length: int | None = None,
                   batch_tokens: int | None = None) -> None:
    """:func:`predict_files` with each model in turn, in one process: ``outs`` holds one
    output per model and input, model by model. Each model scores exactly as it would alone
    (its own load, its own pass, the same bytes); all outputs are written or none."""
    inputs, outs = [Path(p) for p in inputs], [Path(p) for p in outs]
    n = len(inputs)
    if not specs or not inputs or len(outs) != len(specs) * n:
        raise DataError(f"{len(specs)} model(s) and {n} input file(s) but {len(outs)} output "
                        "files: give one output per model and input, model by model")
    with atomic_outputs(*outs) as tmps:
        for i, spec in enumerate(specs):
            _predict_into(spec, inputs, tmps[i * n:(i + 1) * n], outs[i * n:(i + 1) * n],
                          text_column=text_column, max_length=max_length,
                          batch_tokens=batch_tokens)


def _predict_into(spec: ModelSpec, inputs: list[Path], tmps: list[Path], outs: list[Path], *,
                  text_column: str, max_length: int | None, batch_tokens: int | None) -> None:
    """Score ``inputs`` in one pass and write each one's predictions to its ``tmps`` path
    (``outs``: the final paths, for the log)."""
    frames = [_read_texts(path, text_column) for path in inputs]
    texts = [t for df in frames for t in df[text_column].tolist()]
    probs, stats, ids = _score(spec, texts, max_length=max_length, batch_tokens=batch_tokens,
                               device=None, progress=True)
    offset = 0
    for df, path in zip(frames, tmps, strict=True):
        part = slice(offset, offset + len(df))
        offset += len(df)
        result = df[[c for c in ("id", "label") if c in df.columns and c != text_column]]
        result = result.reset_index(drop=True).assign(
            prob=probs[part].astype(np.float64),
            pred=(probs[part] >= 0.5).astype(np.int64), input=ids[part].astype(np.int64))
        write_parquet(result, path)
    log.info("predict %s on %s: %d rows, %d unique texts (%d distinct inputs), %d tokens "
             "(%d padded) in %d batches, %.1f s, %.0f texts/s -> %s", spec.name,
             ", ".join(map(str, inputs)), stats.rows, stats.unique_texts, stats.unique_inputs,
             stats.tokens, stats.padded_tokens, stats.batches, stats.seconds,
             stats.texts_per_s, ", ".join(map(str, outs)))


# -- inputs ---------------------------------------------------------------------------------

def _read_texts(path: Path, column: str) -> pd.DataFrame:
    """The table at ``path`` (Parquet, CSV, ... as :func:`biasrepro.io.read_table` reads),
    refused unless every ``column`` value is a non-empty string."""
    df = read_table(path, what="file", allow_empty=True)
    if column not in df.columns:
        raise DataError(f"missing column; found {list(df.columns)}", file=path, column=column)
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
    return df.reset_index(drop=True)


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


def _score_classifier(clf: _Classifier, texts: list[str], *, max_length: int | None,
                      batch_tokens: int | None,
                      progress: bool
                      ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """Positive-class probabilities of distinct ``texts``, each text's distinct-input index,
    and (inputs, tokens, padded, batches)."""
    model, tokenizer = clf.model, clf.tokenizer
    device = next(model.parameters()).device
    if batch_tokens is None:
        batch_tokens = CUDA_BATCH_TOKENS if device.type == "cuda" else CPU_BATCH_TOKENS
    if batch_tokens < 1:
        raise ConfigError(f"batch_tokens must be positive, not {batch_tokens}")
    if tokenizer.pad_token_id is None:
        raise ModelError(f"the tokenizer of {model.name_or_path or 'the model'} has no "
                         "padding token")
    length = _max_length(clf, max_length)
    if not texts:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64), (0, 0, 0, 0)
    text_input, inputs, features = _distinct_inputs(tokenizer, texts, length)
    # longest first; ties by content, so the batches do not depend on the input order
    order = sorted(range(len(inputs)), key=lambda j: (-len(inputs[j][0]), inputs[j]))
    lengths = [len(inputs[j][0]) for j in order]
    plan = plan_batches(lengths, batch_tokens, 8 if device.type == "cuda" else 1,
                        _position_limit(model))
    pad_values = [tokenizer.pad_token_id, tokenizer.pad_token_type_id][:len(features)]
    sorted_probs = []
    was_training = model.training
    model.eval()
    try:
        with (torch.inference_mode(), _autocast(device),
              tqdm(total=len(inputs), unit="text", desc="predict", disable=not progress) as bar):
            for start, stop, padded in plan:
                batch = _pad([inputs[j] for j in order[start:stop]], padded, features,
                             pad_values, device)
                logits = model(**batch).logits
                if logits.ndim != 2 or logits.shape[1] != 2:
                    raise ModelError(f"model {model.name_or_path}: logits of shape "
                                     f"{tuple(logits.shape)}; 2 classes are needed")
                sorted_probs.append(logits.double().softmax(-1)[:, 1])
                bar.update(stop - start)
    finally:
        model.train(was_training)
    probs = np.empty(len(inputs), dtype=np.float64)
    probs[order] = torch.cat(sorted_probs).cpu().numpy()
    counts = (len(inputs), sum(lengths), sum((b - a) * p for a, b, p in plan), len(plan))
    return probs[text_input], text_input, counts


def _distinct_inputs(tokenizer: Any, texts: list[str], length: int
                     ) -> tuple[np.ndarray, list[tuple[tuple[int, ...], ...]], list[str]]:
    """Tokenize and truncate ``texts``; one distinct model input per distinct token sequence
    (texts truncated alike merge). Returns each text's input index, the inputs, and the
    feature names they hold."""
    enc = tokenizer(texts, truncation=True, max_length=length, return_attention_mask=False)
    features = [k for k in ("input_ids", "token_type_ids") if k in enc]
    keys = [tuple(tuple(enc[k][i]) for k in features) for i in range(len(texts))]
    distinct: dict[tuple[tuple[int, ...], ...], int] = {}
    text_input = np.fromiter((distinct.setdefault(k, len(distinct)) for k in keys),
                             dtype=np.int64, count=len(keys))
    return text_input, list(distinct), features


def _pad(rows: list[tuple[tuple[int, ...], ...]], padded: int, features: list[str],
         pad_values: list[int], device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded tensors of one batch (encoders read positions from the start)."""
    arrays = {k: np.full((len(rows), padded), v, dtype=np.int64)
              for k, v in zip(features, pad_values, strict=True)}
    mask = np.zeros((len(rows), padded), dtype=np.int64)
    for r, row in enumerate(rows):
        n = len(row[0])
        mask[r, :n] = 1
        for k, seq in zip(features, row, strict=True):
            arrays[k][r, :n] = seq
    arrays["attention_mask"] = mask
    return {k: torch.from_numpy(a).to(device, non_blocking=True) for k, a in arrays.items()}

