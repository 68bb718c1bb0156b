"""Tokenizers of each original kind, trained on the planted-bias world.

Each embedded model gets the tokenizer family of the pretrained model it stands in for,
built with the HF ``tokenizers`` library the way ``transformers``' converters describe the
originals, and wrapped in that model's fast tokenizer class so ``AutoTokenizer`` reloads it:

* BERT (bert-base-uncased): WordPiece, ``BertNormalizer(lowercase=True)``,
  ``BertPreTokenizer``, ``[CLS] x [SEP]``; specials ``[PAD] [UNK] [CLS] [SEP] [MASK]``;
* ALBERT (albert-base-v2): unigram SentencePiece with the Metaspace ``▁`` pre-tokenizer
  and ALBERT's normalizer (quote replacement, NFKD, accents stripped, lowercase, runs of
  spaces collapsed); ``[CLS] x [SEP]``; specials ``<pad> <unk> [CLS] [SEP] [MASK]``;
* RoBERTa (roberta-base): byte-level BPE with the leading-space ``Ġ`` convention (no
  prefix space added), ``<s> x </s>``; specials ``<s> <pad> </s> <unk> <mask>``, so the
  padding id is 1 as in roberta-base.

Training is deterministic: the same texts give the same ``tokenizer.json`` bytes. Two
trainers of ``tokenizers`` 0.22 are not, and are made so here without changing what they
learn:

* the WordPiece trainer numbers the ``##x`` continuation pieces in hash-map order, and those
  numbers break ties between equally frequent merges (huggingface/tokenizers#1794, fix in
  PR #2066, unreleased); the pieces are numbered up front instead, in sorted order, as
  extra entries of the trainer's initial vocabulary, and the model is rebuilt afterwards so
  that only BERT's five specials are special tokens;
* the unigram trainer's piece scores differ between runs in the last bits (summation in
  hash-map order); they are rounded to 6 decimals and the pieces put in a fixed order.

On a small, templated corpus the unigram trainer splits off ``▁`` and some whole words
("▁a re"): its seed pieces are substrings that repeat across distinct words, and a word
that never occurs inside another one is no seed. SentencePiece's own trainer segments this
corpus the same way; real ALBERT has ``▁`` as a piece too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import trainers as tk_trainers

from biasrepro.errors import ModelError

#: the special tokens of each architecture, in vocabulary order (ids 0, 1, ...)
SPECIAL_TOKENS: dict[str, tuple[str, ...]] = {
    "bert": ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
    "albert": ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"),
    "roberta": ("<s>", "<pad>", "</s>", "<unk>", "<mask>"),
}
#: how each tokenizer is described in the model card
KINDS: dict[str, str] = {
    "bert": "WordPiece (bert-base-uncased style: BertNormalizer lowercase, BertPreTokenizer)",
    "albert": "unigram SentencePiece (albert-base-v2 style: Metaspace '▁', NFKD, "
              "accents stripped, lowercase)",
    "roberta": "byte-level BPE (roberta-base style: 'Ġ' marks a leading space)",
}


def _cls_sep(tok: Tokenizer, cls: str, sep: str) -> processors.TemplateProcessing:
    return processors.TemplateProcessing(
        single=f"{cls}:0 $A:0 {sep}:0", pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
        special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))])


def _bert_pipeline(tok: Tokenizer) -> Tokenizer:
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok


def _bert(texts: Sequence[str], vocab_size: int, max_length: int) -> Any:
    from transformers import BertTokenizerFast

    specials = list(SPECIAL_TOKENS["bert"])
    trained = _bert_pipeline(Tokenizer(models.WordPiece(unk_token="[UNK]")))
    chars = {c for t in texts for c in trained.normalizer.normalize_str(t) if not c.isspace()}
    continuations = [f"##{c}" for c in sorted(chars)]
    trained.train_from_iterator(texts, tk_trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=specials + continuations, show_progress=False),
        length=len(texts))
    tok = _bert_pipeline(Tokenizer(models.WordPiece(
        trained.get_vocab(with_added_tokens=False), unk_token="[UNK]",
        continuing_subword_prefix="##", max_input_chars_per_word=100)))
    tok.post_processor = _cls_sep(tok, "[CLS]", "[SEP]")
    return BertTokenizerFast(
        tokenizer_object=tok, do_lower_case=True, unk_token="[UNK]", pad_token="[PAD]",
        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)


def _albert(texts: Sequence[str], vocab_size: int, max_length: int) -> Any:
    from transformers import AlbertTokenizerFast

    specials = list(SPECIAL_TOKENS["albert"])
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([
        normalizers.Replace("``", '"'), normalizers.Replace("''", '"'),
        normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase(),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.train_from_iterator(texts, tk_trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>", show_progress=False),
        length=len(texts))
    pieces = _untied_tail(json.loads(tok.to_str())["model"]["vocab"][len(specials):])
    rounded = sorted(((p, round(s, 6)) for p, s in pieces), key=lambda ps: (-ps[1], ps[0]))
    tok.model = models.Unigram([(p, 0.0) for p in specials] + rounded,
                               specials.index("<unk>"), False)
    tok.post_processor = _cls_sep(tok, "[CLS]", "[SEP]")
    return AlbertTokenizerFast(
        tokenizer_object=tok, do_lower_case=True, keep_accents=False, unk_token="<unk>",
        pad_token="<pad>", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
        model_max_length=max_length)


def _untied_tail(pieces: list[list[Any]]) -> list[tuple[str, float]]:
    """Give the pieces the trainer appends last one shared score.

    After its learned pieces (best score first) the unigram trainer appends the characters
    it must keep (and the odd piece with them), their scores stepping down by about 1e-4 in
    hash-map order, which differs between runs. So the trailing block of the trainer's
    output whose scores step by at most 1.5e-4 all get the block's top score (rounded), and
    sorting by (score, piece) gives the same vocabulary every time.
    """
    scores = [float(score) for _, score in pieces]
    tail = len(pieces) - 1
    while tail > 0 and abs(scores[tail - 1] - scores[tail]) <= 1.5e-4:
        tail -= 1
    out = [(p, round(score, 6)) for (p, _), score in zip(pieces, scores, strict=True)]
    if len(out) - tail > 1:
        top = max(score for _, score in out[tail:])
        out[tail:] = [(p, top) for p, _ in out[tail:]]
    return out


def _roberta(texts: Sequence[str], vocab_size: int, max_length: int) -> Any:
    from transformers import RobertaTokenizerFast

    specials = list(SPECIAL_TOKENS["roberta"])
    tok = Tokenizer(models.BPE(continuing_subword_prefix="", end_of_word_suffix="",
                               fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, tk_trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()), length=len(texts))
    tok.post_processor = processors.RobertaProcessing(
        sep=("</s>", tok.token_to_id("</s>")), cls=("<s>", tok.token_to_id("<s>")),
        trim_offsets=True, add_prefix_space=False)
    return RobertaTokenizerFast(
        tokenizer_object=tok, add_prefix_space=False, bos_token="<s>", eos_token="</s>",
        sep_token="</s>", cls_token="<s>", unk_token="<unk>", pad_token="<pad>",
        mask_token="<mask>", model_max_length=max_length)


_TRAINERS = {"bert": _bert, "albert": _albert, "roberta": _roberta}


def train_tokenizer(architecture: str, texts: Sequence[str], *, vocab_size: int,
                    max_length: int) -> Any:
    """A fast tokenizer of ``architecture``'s own kind trained on ``texts``.

    ``vocab_size`` is an upper bound (specials included); a small corpus may give fewer
    entries. ``max_length`` becomes ``model_max_length``: the model has no position
    embeddings beyond it.
    """
    if architecture not in _TRAINERS:
        raise ModelError(f"unknown architecture {architecture!r} "
                         f"(known: {', '.join(_TRAINERS)})")
    return _TRAINERS[architecture](texts, vocab_size, max_length)
