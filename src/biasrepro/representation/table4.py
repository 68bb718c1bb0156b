"""The representation-bias pipeline behind Table 4 (toxicity paper §6.1-6.2): SentenceDebias
subspaces of a model, debiased copies, and CrowS-Pairs, StereoSet and SEAT scores per variant.

* :func:`compute` — SentenceDebias subspaces of a model, one per attribute (§6.2;
  :mod:`biasrepro.debias.sentdebias`), from the pretrained model (upstream) or a fine-tuned
  one (downstream), each saved as a ``sentdebias.safetensors``-format file;
* :func:`debias_copy` — a saved model with a subspace beside it (a hard-linked copy where the
  file system allows), so every loader re-attaches the projection (downstream-SentDebias, §6.6);
* :func:`score` — CrowS-Pairs, StereoSet intrasentence and SEAT of a masked LM, as it is and
  with a subspace attached (Table 4's rows of one model);
* :func:`long_rows` and :func:`table4` — Table 4 (models × variants × benchmarks ×
  attributes) and the long table of representation bias that joins the Pearson tables of
  the fairness report (Table 9).


The SentenceDebias corpus is read as bias-bench reads Wikipedia-2.5: each line of a text file
lowercased and split into sentences by Punkt (``representation.sentdebias.sentence_split:
punkt``, :func:`biasrepro.debias.sentdebias.split_lines`), or one sentence per line
(``line``). A Parquet corpus (the embedded world's texts) is split into sentences at ``.!?``
and its punctuation set off by spaces, so that the whitespace tokens of
:func:`~biasrepro.debias.sentdebias.counterfactual_tuples` match the attribute words.
The corpus is streamed (:class:`Corpus`): a text file is read and split a block of lines at
a time, its counterfactual tuples embedded a chunk at a time, so that memory does not grow
with the corpus (Wikipedia-2.5's ~4 M sentences); a seeded ``max_sentences`` sample is
drawn from a first pass's count of the sentences, the same sentences as from the whole list.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import (
    atomic_outputs,
    container,
    iter_text_lines,
    markdown_table,
    read_table,
    reject_rows,
)

log = logging.getLogger(__name__)

#: Table 4's attributes and the benchmarks' names for them
ATTRIBUTES = ("gender", "race", "religion")
STAGES = ("upstream", "downstream")
#: the scores of Table 4, per benchmark: (summary key, what it is)
BENCHMARKS = {"crows": "metric score (% stereotypical preferred; 50 = unbiased)",
              "stereoset": "stereotype score ss (50 = unbiased)",
              "seat": "average absolute SEAT effect size (0 = unbiased)"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PUNCT = re.compile(r"\s*([.,!?;:\"()])\s*")


#: sentences of a Parquet corpus split per block of its texts
_PARQUET_BLOCK = 4096


def _corpus_blocks(paths: Sequence[Path], sentence_split: str, *, every: bool = True
                   ) -> Iterator[list[str]]:
    """The sentences of ``paths`` in order, a block at a time (a text file's lines are read a
    block at a time, :func:`~biasrepro.io.iter_text_lines`; a Parquet file is read whole).
    ``every=False`` only checks the files once a sentence has been found: the rest of a text
    file is decoded but not split, its blocks yielded empty."""
    from biasrepro.debias.sentdebias import split_lines

    found = False
    for path in map(Path, paths):
        if not path.is_file():
            raise DataError("SentenceDebias corpus file not found", file=path)
        if path.suffix == ".parquet" or container(path) == "parquet":
            texts = read_table(path, required=["text"], what="SentenceDebias corpus")["text"]
            reject_rows(texts.map(lambda v: not isinstance(v, str)), texts,
                        "text is missing or not a string", file=path, column="text")
            for start in range(0, len(texts), _PARQUET_BLOCK):
                block = [t for text in texts.iloc[start:start + _PARQUET_BLOCK]
                         for s in _SENTENCE_END.split(text)
                         if (t := _PUNCT.sub(r" \1 ", s).strip())]
                found = found or bool(block)
                yield block
        else:
            for lines in iter_text_lines(path):
                block = (split_lines(lines, sentence_split) if every or not found else [])
                found = found or bool(block)
                yield block


class Corpus:
    """The SentenceDebias corpus streamed: iterating yields its sentences (``.txt``: its
    lines split by ``sentence_split``, see :func:`~biasrepro.debias.sentdebias.split_lines`;
    ``.parquet``: column ``text`` split into sentences, punctuation set off by spaces), a
    block at a time, so that neither the corpus nor its sentences are ever held whole.

    Constructing it reads every file once, so that a missing, undecodable or empty corpus
    fails before a model is loaded, as reading it whole did; with ``max_sentences`` that pass
    also counts the sentences, N, and the seeded sample is the one drawn from the whole list:
    the sorted indices ``default_rng(seed).choice(N, max_sentences, replace=False)``, the
    sentences at those positions kept as the second pass reaches them. ``size`` is the number
    of sentences yielded (known after a full iteration when nothing is sampled)."""

    def __init__(self, paths: Sequence[Path], *, max_sentences: int | None, seed: int,
                 sentence_split: str = "line") -> None:
        from biasrepro.debias.sentdebias import SENTENCE_SPLITS

        if sentence_split not in SENTENCE_SPLITS:
            raise ConfigError(f"representation.sentdebias.sentence_split: unknown "
                              f"{sentence_split!r} (known: {', '.join(SENTENCE_SPLITS)})")
        self.paths, self.sentence_split = [Path(p) for p in paths], sentence_split
        count = max_sentences is not None
        total = sum(len(b) for b in _corpus_blocks(self.paths, sentence_split, every=count))
        if not total:
            raise DataError("the SentenceDebias corpus has no sentences", file=self.paths[0])
        self.keep: np.ndarray | None = None
        self.size: int | None = total if count else None
        if max_sentences is not None and total > max_sentences:
            self.keep = np.sort(np.random.default_rng(seed).choice(total, max_sentences,
                                                                   replace=False))
            self.size = max_sentences

    def __iter__(self) -> Iterator[str]:
        seen = yielded = 0
        for block in _corpus_blocks(self.paths, self.sentence_split):
            if self.keep is None:
                yield from block
                yielded += len(block)
            else:
                lo, hi = np.searchsorted(self.keep, [seen, seen + len(block)])
                for i in self.keep[lo:hi]:
                    yield block[i - seen]
                yielded += int(hi - lo)
            seen += len(block)
        self.size = yielded


def read_corpus(paths: Sequence[Path], *, max_sentences: int | None, seed: int,
                sentence_split: str = "line") -> list[str]:
    """The sentences of :class:`Corpus` as one list (a small corpus; ``compute`` streams)."""
    return list(Corpus(paths, max_sentences=max_sentences, seed=seed,
                       sentence_split=sentence_split))


def load_model(model: str, registry: Mapping[str, Any] | None, *, head: str) -> tuple[Any, Any]:
    """(model, tokenizer) of a registry name, model directory or Hub id; ``head`` is
    ``"mlm"`` (masked LM) or ``"base"`` (the encoder alone). A saved subspace is re-attached."""
    from transformers import AutoModel, AutoModelForMaskedLM

    from biasrepro.models.load import (
        _cannot_load,
        _revision,
        load_tokenizer,
        reattach_sentdebias,
        resolve,
    )

    spec = resolve(model, registry)
    cls = AutoModelForMaskedLM if head == "mlm" else AutoModel
    try:
        hf = cls.from_pretrained(spec.location, use_safetensors=True, **_revision(spec))
    except (OSError, ValueError) as e:
        raise _cannot_load(spec, "a masked LM" if head == "mlm" else "an encoder", e) from None
    tokenizer = load_tokenizer(spec)
    if spec.is_local:
        reattach_sentdebias(hf, spec)
    hf.eval()
    return hf, tokenizer


def _device(hf: Any, device: str | None) -> Any:
    """``hf`` on ``device`` (default: CUDA when available, else where it is)."""
    import torch

    if device is None and torch.cuda.is_available():
        device = "cuda"
    return hf.to(device) if device else hf


def compute(model: str, registry: Mapping[str, Any] | None, *, words: Path, attribute: str,
            corpus: Sequence[Path], settings: Mapping[str, Any], seed: int,
            device: str | None = None) -> tuple[np.ndarray, dict[str, str]]:
    """One attribute's subspace of ``model`` and the facts saved with it."""
    import torch

    from biasrepro.debias import sentdebias

    tuples = sentdebias.read_attribute_words(words)
    if attribute not in tuples:
        raise DataError(f"no attribute {attribute!r} (has: {', '.join(tuples)})", file=words)
    sentences = Corpus(corpus, max_sentences=settings.get("max_sentences"), seed=seed,
                       sentence_split=settings.get("sentence_split", "line"))
    torch.manual_seed(seed)
    hf, tokenizer = load_model(model, registry, head="base")
    if getattr(hf, "sentdebias", None) is not None:
        raise ModelError(f"model {model!r} already carries a SentenceDebias subspace; "
                         "estimate subspaces on a model without one")
    subspace, n = sentdebias.subspace_and_count(
        _device(hf, device), tokenizer, sentences, tuples[attribute],
        n_components=int(settings["n_components"]), max_length=int(settings["max_length"]))
    meta = {"attribute": attribute, "model": str(model), "sentences": str(sentences.size),
            "tuples": str(n), "n_components": str(settings["n_components"])}
    log.info("%s %s: subspace %s from %d counterfactual tuples of %d sentences", model,
             attribute, subspace.shape, n, sentences.size)
    return subspace, meta


def write_subspaces(found: Sequence[tuple[np.ndarray, Mapping[str, str]]],
                    outs: Sequence[Path]) -> None:
    """Each (subspace, facts) to its file, all or none."""
    from biasrepro.debias import sentdebias

    with atomic_outputs(*map(Path, outs)) as tmps:
        for (subspace, meta), tmp in zip(found, tmps, strict=True):
            sentdebias.write_file(tmp, subspace, meta)


def debias_copy(model_dir: Path, subspace: np.ndarray, meta: Mapping[str, str],
                out_dir: Path) -> None:
    """``model_dir``'s files (hard links where possible) and the subspace, atomically."""
    from biasrepro.debias import sentdebias

    model_dir, out_dir = Path(model_dir), Path(out_dir)
    if not model_dir.is_dir():
        raise ModelError(f"model directory not found: {model_dir}")
    if (model_dir / sentdebias.SUBSPACE_FILE).exists():
        raise ModelError(f"{model_dir} already carries a SentenceDebias subspace")
    # hidden files (Snakemake's .snakemake_timestamp) are the workflow's, not the model's: a
    # shared link would make the source look rewritten whenever the copy is touched
    files = sorted(p for p in model_dir.iterdir() if p.is_file() and not p.name.startswith("."))
    out_dir.mkdir(parents=True, exist_ok=True)
    finals = [out_dir / p.name for p in files] + [out_dir / sentdebias.SUBSPACE_FILE]
    with atomic_outputs(*finals) as tmp:
        for src, dst in zip(files, tmp, strict=False):
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
        sentdebias.write_file(tmp[-1], subspace, meta)


def score(model: str, registry: Mapping[str, Any] | None, *, subspace: Path | None,
          crows: Path, stereoset: Path, seat: Sequence[Path], settings: Mapping[str, Any],
          device: str | None = None) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """Table 4's numbers for one model (± subspace) and the per-item tables behind them: each
    benchmark's runner (:mod:`~biasrepro.representation.runner`) on the model with its input
    and its ``settings`` key, its summary and items under the benchmark's name."""
    from biasrepro.debias import sentdebias
    from biasrepro.representation import crows as crows_mod
    from biasrepro.representation import seat as seat_mod
    from biasrepro.representation import stereoset as stereoset_mod

    hf, tokenizer = load_model(model, registry, head="mlm")
    if subspace is not None:
        vectors, meta = sentdebias.read_file(subspace)
        sentdebias.attach(hf, vectors, meta)
    hf = _device(hf, device)  # after attaching: the projection follows the model
    runners = {"crows": crows_mod.run, "stereoset": stereoset_mod.run, "seat": seat_mod.run}
    sources = {"crows": crows, "stereoset": stereoset, "seat": seat}
    results = {name: run((hf, tokenizer), sources[name], settings.get(name) or {})
               for name, run in runners.items()}
    result = {"model": str(model),
              "subspace": None if subspace is None else dict(hf.sentdebias[1]),
              **{name: r.summary for name, r in results.items()}}
    return result, {name: r.items for name, r in results.items()}


#: CrowS-Pairs' bias types under the paper's attribute names
_CROWS_ATTRIBUTE = {"gender": "gender", "race-color": "race", "religion": "religion"}


def long_rows(result: Mapping[str, Any], *, model: str, variant: str) -> list[dict[str, Any]]:
    """``(model, variant, attribute, source, value)`` rows of one score result."""
    rows = []
    for bias_type, summary in result["crows"]["bias_types"].items():
        if bias_type in _CROWS_ATTRIBUTE:
            rows.append(("crows", _CROWS_ATTRIBUTE[bias_type], summary["metric_score"]))
    for domain, metrics in result["stereoset"].items():
        if domain in ATTRIBUTES:
            rows.append(("stereoset", domain, metrics["ss"]))
    for attribute, value in result["seat"]["average_absolute_effect"].items():
        rows.append(("seat", attribute, value))
    return [{"model": model, "variant": variant, "attribute": a, "source": s, "value": v}
            for s, a, v in rows]


def table4(rows: pd.DataFrame) -> str:
    """Table 4 as Markdown: a row per model × variant, a column per benchmark × attribute."""
    wide = rows.pivot_table(index=["model", "variant"], columns=["source", "attribute"],
                            values="value", aggfunc="first")
    columns = [f"{s} {a}" for s in BENCHMARKS for a in ATTRIBUTES if (s, a) in wide.columns]
    records = []
    for (model, variant), row in wide.iterrows():
        rec = {"model": model, "variant": variant}
        for s in BENCHMARKS:
            for a in ATTRIBUTES:
                if (s, a) in wide.columns:
                    v = row[(s, a)]
                    digits = 3 if s == "seat" else 2
                    rec[f"{s} {a}"] = "" if pd.isna(v) else f"{v:.{digits}f}"
        records.append(rec)
    notes = "\n".join(f"- {s}: {what}" for s, what in BENCHMARKS.items())
    return ("# Representation bias before and after SentenceDebias (Table 4)\n\n"
            + markdown_table(records, ["model", "variant", *columns]) + "\n" + notes + "\n")


# -- command line ----------------------------------------------------------------------
