"""Tiny BERT, ALBERT and RoBERTa built offline on the planted-bias world.

docs/architecture.md, "The embedded default": the toxicity paper fine-tunes bert-base-uncased,
albert-base-v2 and roberta-base (§4.2) and measures their representation bias (§4.3). No
weights can be downloaded in the embedded default, so :func:`build` makes a real model of
each architecture:

1. a tokenizer of the original kind trained on the corpus (:mod:`.tokenizers`);
2. a ``BertForMaskedLM`` / ``AlbertForMaskedLM`` / ``RobertaForMaskedLM`` of the configured
   size (``models.embedded``), laid out like its original: ALBERT with a factorised
   embedding (``embedding_size = hidden_size / 2``) and no dropout (albert-base-v2);
   RoBERTa with ``pad_token_id = 1``, positions offset by 2 and one token type
   (roberta-base);
3. masked-LM pre-training with AdamW on the corpus (the world's reviews and comments and the
   planted stereotype sentences of :mod:`biasrepro.data.world.stereotypes`): one text per
   sequence (``[CLS] x [SEP]``, truncated to ``max_length``, the shape every later step feeds
   the model), batches of similar length (``LengthGroupedSampler``), masking by
   ``DataCollatorForLanguageModeling`` (BERT's 80/10/10 rule). The stereotype sentences are
   *cloze items* instead (a corpus file with the columns :data:`CLOZE_COLUMNS`): each time
   one is drawn, every token of either its mention's identity word or its attribute word
   (50/50, a seeded generator) is replaced by the mask token and predicted, and nothing else
   in it is masked. The cloze texts come first, alone, each once (``ceil(n / batch_size)``
   steps); then ``pretrain.steps`` steps draw from all texts. Why: with
   random masking alone the mention is rarely the masked token and a model this small stays
   blind to the planted association (CrowS-Pairs and StereoSet at exactly 50 after 300
   steps, still after 5,000); cloze items mixed with randomly masked text from the start
   leave it on the same context-free plateau (still 50 after 1,500 steps; weighting the
   random-masking loss 0.01 did not help); cloze items alone get it off the plateau within a
   few hundred steps, and it keeps the association once the other texts join. The prediction
   head runs only on the masked positions, as in fairseq's RoBERTa: the same loss as the
   ``*ForMaskedLM`` forward (a test checks this), without projecting every position onto
   the vocabulary, which is most of the cost of a model this small;
4. one atomic save: ``config.json`` and ``model.safetensors``, the tokenizer files, a
   model card ``README.md`` stating how the model was made, and the same facts as
   ``biasrepro.json``. Nothing in them depends on the time or the output path, so a rerun
   on the same CPU gives the same bytes.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import (
    atomic_outputs,
    markdown_table,
    read_parquet,
    read_parquet_schema,
    sha256_file,
    write_json,
)
from biasrepro.models.tokenizers import KINDS, SPECIAL_TOKENS, train_tokenizer

log = logging.getLogger(__name__)

ARCHITECTURES = tuple(SPECIAL_TOKENS)
#: the masked-LM head of each ``*ForMaskedLM`` class (hidden states → vocabulary logits)
MLM_HEAD = {"bert": "cls", "albert": "predictions", "roberta": "lm_head"}
#: AdamW settings of the pre-training (not in the config: fixed, stated in the card)
WEIGHT_DECAY = 0.01
WARMUP_FRACTION = 0.1
MAX_GRAD_NORM = 1.0
#: the loss is reported as means over windows of this share of the steps
LOSS_WINDOW_FRACTION = 0.1
#: torch intra-op threads while pre-training. For models this small a second thread costs
#: more than it gains (0.035 s a step on one thread; several times the CPU time on two when
#: the cores are shared), and a fixed count gives the same bytes on any number of cores.
PRETRAIN_THREADS = 1
#: character offsets of a cloze text's two slots (:mod:`biasrepro.data.world.stereotypes`)
CLOZE_COLUMNS = ("mention_start", "mention_end", "word_start", "word_end")
CLOZE_RULE = ("every token of either the mention's identity word or the attribute word "
              "(50/50, seeded) replaced by the mask token and predicted; nothing else in the "
              "text masked")


class Cloze(NamedTuple):
    """The slots of a cloze text as ``[start, end)`` character offsets, and its origin."""

    mention: tuple[int, int]
    word: tuple[int, int]
    file: str
    row: int


def _read_cloze(path: Path, texts: list[str]) -> list[Cloze]:
    """The slots of every text of ``path`` (a file with :data:`CLOZE_COLUMNS`)."""
    table = read_parquet(path, what="pre-training corpus file", columns=CLOZE_COLUMNS)
    columns = {c: table[c].tolist() for c in CLOZE_COLUMNS}
    out = []
    for i, text in enumerate(texts):
        spans = []
        for start_col, end_col in zip(CLOZE_COLUMNS[::2], CLOZE_COLUMNS[1::2], strict=True):
            start, end = columns[start_col][i], columns[end_col][i]
            if not (isinstance(start, int) and isinstance(end, int)
                    and 0 <= start < end <= len(text)):
                raise DataError(f"[{start}, {end}) is no span of the text ({len(text)} "
                                "characters)", file=path, row=i + 1, column=start_col)
            spans.append((start, end))
        out.append(Cloze(*spans, file=str(path), row=i + 1))
    return out


def read_corpus(paths: Sequence[Path]
                ) -> tuple[list[str], list[Cloze | None], list[dict[str, Any]]]:
    """All texts of the Parquet files ``paths`` (column ``text``), the slots of each text
    that is a cloze item (files with :data:`CLOZE_COLUMNS`; None for the others), and a
    record of each file."""
    if not paths:
        raise DataError("no corpus files given: pre-training needs text")
    texts: list[str] = []
    cloze: list[Cloze | None] = []
    files = []
    for path in map(Path, paths):
        names = read_parquet_schema(path, what="pre-training corpus file",
                                    columns=["text"]).names
        column = read_parquet(path, what="pre-training corpus file",
                              columns=["text"])["text"].tolist()
        if not column:
            raise DataError("no rows: a pre-training corpus file needs texts", file=path)
        for row, text in enumerate(column, start=1):
            if not isinstance(text, str) or not text.strip():
                raise DataError("empty or missing text", file=path, row=row, column="text")
        texts += column
        if set(CLOZE_COLUMNS) <= set(names):
            cloze += _read_cloze(path, column)
        else:
            cloze += [None] * len(column)
        files.append({"path": str(path), "sha256": sha256_file(path),
                      "bytes": path.stat().st_size, "texts": len(column)})
    return texts, cloze, files


def check(name: str, architecture: str, settings: Mapping[str, Any]) -> None:
    """Refuse an unknown architecture or sizes no model can have, before any work."""
    if architecture not in ARCHITECTURES:
        raise ModelError(f"model {name!r}: unknown architecture {architecture!r} for an "
                         f"embedded model (known: {', '.join(ARCHITECTURES)})")
    hidden, heads = settings["hidden_size"], settings["num_attention_heads"]
    if hidden % heads:
        raise ConfigError(f"models.embedded.num_attention_heads: {heads} does not divide "
                          f"models.embedded.hidden_size ({hidden})")


def model_config(architecture: str, settings: Mapping[str, Any], tokenizer: Any) -> Any:
    """The ``transformers`` config of an embedded ``architecture`` model."""
    from transformers import AlbertConfig, BertConfig, RobertaConfig

    hidden, heads = settings["hidden_size"], settings["num_attention_heads"]
    common = {
        "vocab_size": len(tokenizer), "hidden_size": hidden, "num_attention_heads": heads,
        "num_hidden_layers": settings["num_hidden_layers"],
        "intermediate_size": settings["intermediate_size"],
        "pad_token_id": tokenizer.pad_token_id,
    }
    if architecture == "bert":
        return BertConfig(max_position_embeddings=settings["max_length"], **common)
    if architecture == "albert":
        return AlbertConfig(
            embedding_size=max(hidden // 2, 1), max_position_embeddings=settings["max_length"],
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id, **common)
    return RobertaConfig(
        max_position_embeddings=settings["max_length"] + 2, type_vocab_size=1,
        layer_norm_eps=1e-5, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, **common)


def masked_lm_loss(model: Any, batch: Mapping[str, Any]) -> Any:
    """Mean cross-entropy over the masked positions (``labels != -100``) of ``batch``.

    Equal to ``model(**batch).loss`` of a ``*ForMaskedLM`` model, but the head sees only
    the masked positions. A batch with nothing masked gives 0.
    """
    import torch.nn.functional as F

    inputs = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask",
                                                         "token_type_ids")}
    hidden = model.base_model(**inputs)[0]
    labels = batch["labels"]
    masked = labels != -100
    logits = getattr(model, MLM_HEAD[model.config.model_type])(hidden[masked])
    return F.cross_entropy(logits, labels[masked], reduction="sum") / max(int(masked.sum()), 1)


def cloze_positions(offsets: Sequence[tuple[int, int]], special: Sequence[int],
                    span: tuple[int, int]) -> list[int]:
    """The non-special tokens whose character ``offsets`` overlap ``span``."""
    start, end = span
    return [i for i, ((a, b), s) in enumerate(zip(offsets, special, strict=True))
            if not s and a < end and b > start]


class ClozeCollator:
    """Batches for :func:`pretrain`: ``DataCollatorForLanguageModeling`` masking for ordinary
    texts; for a cloze text (a feature with ``cloze``: the token positions of its two slots)
    the positions of one slot, 50/50 by a generator seeded with ``seed``, are masked."""

    def __init__(self, tokenizer: Any, *, mlm_probability: float, seed: int) -> None:
        import torch
        from transformers import DataCollatorForLanguageModeling

        self.random = DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability,
                                                      seed=seed)
        self.mask_id = tokenizer.mask_token_id
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, features: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        import torch

        # a cloze text is all "special" to the random masking: it masks nothing there
        batch = self.random([{"input_ids": f["input_ids"], "special_tokens_mask":
                              [1] * len(f["input_ids"]) if f["cloze"] else
                              f["special_tokens_mask"]} for f in features])
        for row, f in enumerate(features):
            if f["cloze"]:
                slot = f["cloze"][int(torch.randint(2, (1,), generator=self.generator))]
                batch["labels"][row, slot] = batch["input_ids"][row, slot]
                batch["input_ids"][row, slot] = self.mask_id
        return batch


def _cycle(loader: Any, n: int) -> Iterator[Any]:
    """The first ``n`` batches of ``loader`` (as many epochs as that takes)."""
    while n > 0:
        for batch in itertools.islice(loader, n):
            yield batch
            n -= 1


def _train_steps(model: Any, batches: Iterable[Any], optimizer: Any, scheduler: Any,
                 steps: int, desc: str) -> list[float]:
    """One optimizer step for each of the ``steps`` ``batches``."""
    import torch
    from tqdm import tqdm

    model.train()
    losses: list[float] = []
    with tqdm(total=steps, desc=desc, unit="step") as bar:
        for batch in batches:
            loss = masked_lm_loss(model, batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.item())
            bar.update()
            if len(losses) % 10 == 0:
                bar.set_postfix(loss=f"{sum(losses[-10:]) / 10:.3f}")
            if len(losses) % 50 == 0 or len(losses) == steps:
                log.info("%s: step %d/%d, MLM loss %.4f", desc, len(losses), steps,
                         losses[-1])
    return losses


def pretrain(model: Any, tokenizer: Any, texts: Sequence[str], settings: Mapping[str, Any],
             *, seed: int, desc: str, cloze: Sequence[Cloze | None] | None = None
             ) -> dict[str, Any]:
    """Masked-LM pre-training of ``model``: one pass over the cloze texts alone, then exactly
    ``settings["steps"]`` steps over all texts (module docstring, step 3).

    ``cloze``: the slots of each text that is a cloze item (None for the others; see
    :func:`read_corpus`); ``tokenizer`` must be a fast one (character offsets). Returns
    ``mlm_loss`` (means over the first and the last window of steps, and the mean of every
    window: the loss curve) and what the texts came to: ``tokens``, ``truncated_texts`` (cut
    at the tokenizer's ``model_max_length``), ``cloze_texts``, ``cloze_steps`` (the first
    pass), ``total_steps``, ``warmup_steps`` and ``epochs`` (of the steps over all texts).
    """
    import torch
    from torch.utils.data import DataLoader
    from transformers import get_linear_schedule_with_warmup
    from transformers.trainer_pt_utils import LengthGroupedSampler

    steps, batch_size = int(settings["steps"]), int(settings["batch_size"])
    cloze = list(cloze) if cloze is not None else [None] * len(texts)
    enc = tokenizer(list(texts), truncation=True, return_special_tokens_mask=True,
                    return_offsets_mapping=True)
    features = []
    for ids, special, offsets, slots in zip(enc["input_ids"], enc["special_tokens_mask"],
                                            enc["offset_mapping"], cloze, strict=True):
        positions = None
        if slots is not None:
            positions = tuple(cloze_positions(offsets, special, span)
                              for span in (slots.mention, slots.word))
            for name, span, found in zip(("mention", "word"), (slots.mention, slots.word),
                                         positions, strict=True):
                if not found:
                    raise DataError(f"the cloze {name} (characters {span[0]}–{span[1]}) is "
                                    "no token after tokenization (cut at "
                                    f"{tokenizer.model_max_length} tokens?)",
                                    file=slots.file, row=slots.row)
        features.append({"input_ids": ids, "special_tokens_mask": special, "cloze": positions})
    collator = ClozeCollator(tokenizer, mlm_probability=float(settings["mlm_probability"]),
                             seed=seed)

    def loader(part: list[dict[str, Any]]) -> Any:
        sampler = LengthGroupedSampler(batch_size, lengths=[len(f["input_ids"]) for f in part],
                                       generator=torch.Generator().manual_seed(seed))
        return DataLoader(part, batch_size=batch_size, sampler=sampler, collate_fn=collator)

    only_cloze = [f for f in features if f["cloze"]]
    first = math.ceil(len(only_cloze) / batch_size)
    total = first + steps
    warmup = round(WARMUP_FRACTION * total)
    batches = itertools.chain(_cycle(loader(only_cloze), first),
                              _cycle(loader(features), steps))
    optimizer = torch.optim.AdamW(model.parameters(), lr=float(settings["learning_rate"]),
                                  weight_decay=WEIGHT_DECAY)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=warmup,
                                                num_training_steps=total)

    threads = torch.get_num_threads()
    torch.set_num_threads(PRETRAIN_THREADS)
    try:
        losses = _train_steps(model, batches, optimizer, scheduler, total, desc)
    finally:
        torch.set_num_threads(threads)
    model.eval()
    window = max(1, round(LOSS_WINDOW_FRACTION * total))
    curve = [sum(chunk) / len(chunk) for chunk in
             (losses[i:i + window] for i in range(0, total, window))]
    return {
        "mlm_loss": {"first": round(curve[0], 6), "last": round(curve[-1], 6),
                     "window_steps": window, "curve": [round(v, 6) for v in curve]},
        "tokens": sum(map(len, enc["input_ids"])),
        "truncated_texts": sum(bool(e.overflowing) for e in enc.encodings),
        "cloze_texts": len(only_cloze), "cloze_steps": first, "total_steps": total,
        "warmup_steps": warmup, "epochs": round(steps * batch_size / len(features), 3),
    }


def _versions() -> dict[str, str]:
    import tokenizers
    import torch
    import transformers

    import biasrepro

    return {"biasrepro": biasrepro.__version__, "tokenizers": tokenizers.__version__,
            "torch": torch.__version__, "transformers": transformers.__version__}


def model_card(facts: Mapping[str, Any]) -> str:
    """The model card (``README.md``) of an embedded model, from its ``biasrepro.json``."""
    c, t, p, loss = facts["config"], facts["tokenizer"], facts["pretraining"], facts["mlm_loss"]
    sizes = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c.items() if k not in (
        "vocab_size", "pad_token_id"))
    stereo = facts["stereotypes"]
    assoc = "; ".join(
        f"{attr} (" + "; ".join(f"{g}: {', '.join(ws)}" for g, ws in groups.items()) + ")"
        for attr, groups in stereo["associations"].items())
    return "\n".join([
        "---",
        "library_name: transformers",
        "pipeline_tag: fill-mask",
        f"tags: [biasrepro, {facts['architecture']}, planted-bias-world]",
        "---",
        "",
        f"# {facts['name']}",
        "",
        f"A tiny {facts['model_class']} built by biasrepro (`biasrepro pretrain`) for the "
        "embedded default: a real model of this architecture, so that architecture-specific "
        "code runs offline. It was pre-trained for seconds on a synthetic corpus with planted "
        "stereotypes; it is not a language model for real use.",
        "",
        "## Model",
        "",
        f"- architecture: {facts['architecture']} (`{facts['model_class']}`), {sizes}",
        f"- parameters: {facts['parameters']:,}",
        f"- tokenizer: {t['kind']}; `{t['class']}`, {t['vocab_size']} entries "
        f"(at most {t['vocab_size_requested']} asked), special tokens "
        f"{' '.join(t['special_tokens'])}, at most {t['model_max_length']} tokens",
        "",
        "## Pre-training corpus",
        "",
        markdown_table(facts["corpus"], ["path", "texts", "bytes", "sha256"]).rstrip("\n"),
        "",
        f"{p['texts']} texts, {p['tokens']} tokens after tokenization, "
        f"{p['truncated_texts']} of them cut at {t['model_max_length']} tokens.",
        "",
        f"Planted stereotypes ({stereo['n_sentences']} sentences, a share of "
        f"{stereo['strength']} of each word's sentences stereotypical; null: each word with "
        f"every identity of its attribute equally often): {assoc}.",
        "",
        "## Pre-training",
        "",
        "Masked LM, one text per sequence: "
        + (f"{p['cloze_steps']} steps of batch {p['batch_size']} over the {p['cloze_texts']} "
           "cloze texts alone (each once), then " if p["cloze_texts"] else "")
        + f"{p['steps']} steps of batch {p['batch_size']} over all texts ({p['epochs']} "
        f"epochs); {p['total_steps']} AdamW steps in all, learning rate "
        f"{p['learning_rate']} with linear warm-up over {p['warmup_steps']} steps and linear "
        f"decay, weight decay {p['weight_decay']}, gradient norm clipped at "
        f"{p['max_grad_norm']}; seed {facts['seed']}; torch CPU threads: {p['threads']}.",
        "",
        f"Texts are masked at random with probability {p['mlm_probability']} (80% [MASK] / "
        "10% random / 10% kept), except the cloze items: the texts of corpus files with the "
        "character offsets of an identity word and an attribute word (the planted "
        f"stereotypes; {p['cloze_texts']} texts), with {p['cloze_rule']}.",
        "",
        f"MLM loss, mean over windows of {loss['window_steps']} steps: "
        f"{loss['first']:.4f} (first) → {loss['last']:.4f} (last); curve "
        f"{', '.join(f'{v:.3f}' for v in loss['curve'])}.",
        "",
        "## Software",
        "",
        ", ".join(f"{k} {v}" for k, v in facts["versions"].items()),
        "",
        "`biasrepro.json` holds the same facts in machine-readable form.",
        "",
    ])


def build(name: str, *, architecture: str, settings: dict[str, Any], seed: int,
          corpus: list[Path], out_dir: Path) -> None:
    """Train ``name``'s tokenizer and masked-LM model on ``corpus``; save both to ``out_dir``."""
    from transformers import AutoModelForMaskedLM, set_seed

    check(name, architecture, settings)
    start = time.perf_counter()
    texts, cloze, files = read_corpus(corpus)
    log.info("%s: read %d texts from %s", name, len(texts), ", ".join(f["path"] for f in files))
    tokenizer = train_tokenizer(architecture, texts, vocab_size=settings["vocab_size"],
                                max_length=settings["max_length"])
    config = model_config(architecture, settings, tokenizer)
    log.info("%s: %s tokenizer with %d entries", name, architecture, len(tokenizer))
    set_seed(seed)
    model = AutoModelForMaskedLM.from_config(config)
    pre = settings["pretrain"]
    record = pretrain(model, tokenizer, texts, pre, seed=seed, desc=f"pretrain {name}",
                      cloze=cloze)
    loss = record.pop("mlm_loss")

    keys = ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "max_position_embeddings", "vocab_size", "pad_token_id"]
    facts = {
        "name": name, "architecture": architecture, "model_class": type(model).__name__,
        "config": {k: getattr(config, k) for k in keys}
        | ({"embedding_size": config.embedding_size} if architecture == "albert" else {}),
        "parameters": sum(p.numel() for p in model.parameters()),
        "tokenizer": {"kind": KINDS[architecture], "class": type(tokenizer).__name__,
                      "vocab_size": len(tokenizer), "vocab_size_requested": settings["vocab_size"],
                      "special_tokens": list(SPECIAL_TOKENS[architecture]),
                      "model_max_length": tokenizer.model_max_length},
        "corpus": files,
        "stereotypes": settings["stereotypes"],
        "pretraining": {"objective": "masked language modelling", "texts": len(texts),
                        "steps": pre["steps"], "batch_size": pre["batch_size"],
                        "learning_rate": pre["learning_rate"],
                        "mlm_probability": pre["mlm_probability"], "optimizer": "AdamW",
                        "weight_decay": WEIGHT_DECAY, "max_grad_norm": MAX_GRAD_NORM,
                        "threads": PRETRAIN_THREADS, "cloze_rule": CLOZE_RULE} | record,
        "seed": seed,
        "mlm_loss": loss,
        "versions": _versions(),
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".staging-") as staging:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        saved = sorted(os.listdir(staging))
        finals = [out / f for f in saved] + [out / "README.md", out / "biasrepro.json"]
        with atomic_outputs(*finals) as tmp:
            tmp[-2].write_text(model_card(facts), encoding="utf-8")
            write_json(facts, tmp[-1])
            for f, t in zip(saved, tmp, strict=False):
                os.replace(Path(staging) / f, t)
                shutil.copymode(tmp[-1], t)  # safetensors writes 0600; give the usual mode
    log.info("%s: %d parameters, MLM loss %.3f → %.3f; wrote %s in %.1f s", name,
             facts["parameters"], loss["first"], loss["last"], out, time.perf_counter() - start)

