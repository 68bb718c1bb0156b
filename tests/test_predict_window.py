"""Long texts are tokenised through a window of the part truncation keeps; the encodings
must be exactly those of the whole texts, for every tokenizer kind the harness trains or
loads (WordPiece, byte-level BPE, Metaspace unigram) and both truncation sides."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest
from conftest import realdata
from fixtures.tiny_models import tiny_classifier
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
from transformers import BertTokenizer, PreTrainedTokenizerFast

from biasrepro.io import sha256_file
from biasrepro.models import predict as P
from biasrepro.models.load import resolve
from biasrepro.models.tokenizers import train_tokenizer

ARCHS = ("bert", "albert", "roberta")

#: words that stress the cut: runs and kinds of whitespace, accents decomposed and not,
#: combining marks after a space, CJK (split per character), emoji, control characters,
#: ALBERT's quote replacements, contractions (RoBERTa's pre-tokenizer), long unknown words
WORDS = ["the", "film", "Anna", "isn't", "it's", "café", "cafe\u0301", "naïve", "``quoted''",
         "東京", "映画", "🙂", "x\x07y", "co-star", "(1999)", "...", "'s", "Ö", "\u0301",
         "supercalifragilisticexpialidocious", "12,345", "e.g.", "A.I.", "—", "\u00a0"]
SPACES = [" ", " ", " ", "  ", "\t", "\n", " \n ", "\u3000", "\u00a0"]
CORPUS = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))] * 8 + [
    "a plain English sentence about a film and its cast, which was fine."] * 20


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, object]:
    """The three kinds the harness trains, and variants of their start-of-text handling
    (RoBERTa with a space added in front, SentencePiece's space added to the first word
    only) and of splitting (whitespace and punctuation, digits apart)."""
    found = {arch: train_tokenizer(arch, CORPUS, vocab_size=400, max_length=512)
             for arch in ARCHS}
    found["roberta-prefix-space"] = backend_with(found["roberta"], pre_tokenizer=(
        pre_tokenizers.ByteLevel(add_prefix_space=True)))
    found["albert-first"] = backend_with(found["albert"], pre_tokenizer=(
        pre_tokenizers.Metaspace(prepend_scheme="first")))
    found["bert-whitespace-digits"] = backend_with(found["bert"], pre_tokenizer=(
        pre_tokenizers.Sequence([pre_tokenizers.Whitespace(),
                                 pre_tokenizers.Digits(individual_digits=True)])))
    return found


def whole(tokenizer, texts: list[str], length: int) -> dict[str, list[list[int]]]:
    enc = tokenizer(texts, truncation=True, max_length=length, return_attention_mask=False)
    return {k: enc[k] for k in ("input_ids", "token_type_ids") if k in enc}


def texts_strategy() -> st.SearchStrategy[list[str]]:
    word = st.sampled_from(WORDS) | st.text(min_size=1, max_size=6)
    text = st.lists(st.tuples(word, st.sampled_from(SPACES)), min_size=1, max_size=40).map(
        lambda parts: "".join(w + s for w, s in parts).strip() or "x")
    return st.lists(text, min_size=1, max_size=12)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("arch", [*ARCHS, "roberta-prefix-space", "albert-first",
                                  "bert-whitespace-digits"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=texts_strategy(), length=st.integers(3, 24), width=st.integers(1, 60))
def test_window_encodings_are_the_whole_texts(tokenizers, arch, side, texts, length,
                                              width) -> None:
    tokenizer = copy.deepcopy(tokenizers[arch])
    tokenizer.truncation_side = side
    assert P.window_side(tokenizer) == side
    enc, windowed = P.encode_truncated(tokenizer, texts, length, side, width)
    assert {k: enc[k] for k in ("input_ids", "token_type_ids") if k in enc} == whole(
        tokenizer, texts, length)
    assert set(enc) <= {"input_ids", "token_type_ids"}  # the model's features only
    assert 0 <= windowed <= sum(len(t) > width for t in texts)


def test_text_window_cuts_at_whitespace_on_the_kept_side() -> None:
    text = "one two  three\tfour five"
    assert P.text_window(text, 100, "right") is text
    assert P.text_window(text, 5, "right") == "one two"       # the word reaching char 5
    assert P.text_window(text, 3, "right") == "one"
    assert P.text_window(text, 12, "right") == "one two  three\tfour"  # a tab is no cut
    assert P.text_window(text, 4, "left") == " five"          # from the space before it
    assert P.text_window(text, 9, "left") == " three\tfour five"
    assert P.text_window(text, 15, "left") == " three\tfour five"
    assert P.text_window(text, 16, "left") == " two  three\tfour five"  # one space of a run
    assert P.text_window("nospaceatall" * 3, 5, "right") == "nospaceatall" * 3
    assert P.text_window("nospaceatall" * 3, 5, "left") == "nospaceatall" * 3


@pytest.mark.parametrize("side", ["right", "left"])
def test_no_cut_at_whitespace_that_is_not_a_space(side) -> None:
    """SentencePiece splits words at spaces only: a vocabulary may hold a piece across a
    tab ("x<tab>y" here), which a window cut at the tab would break."""
    vocab = [("<unk>", 0.0), ("<pad>", 0.0), ("▁", -3.0), ("▁x\ty", -1.0), ("x\ty", -1.0),
             ("▁x", -2.0), ("x", -4.0), ("y", -4.0), ("\t", -4.0)]
    backend = Tokenizer(models.Unigram(vocab, unk_id=0))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>",
                                        unk_token="<unk>", truncation_side=side)
    assert tokenizer.tokenize("x\ty x\ty") == ["▁x\ty", "▁x\ty"]
    texts = ["x\ty " * 10 + "x\ty", "x\tyx\ty x\ty\tx\ty y\tx\ty"]
    for width in range(1, 30):
        enc, _ = P.encode_truncated(tokenizer, texts, 4, P.window_side(tokenizer), width)
        assert enc["input_ids"] == whole(tokenizer, texts, 4)["input_ids"], width


def test_windows_do_the_work_and_short_ones_are_encoded_whole(tokenizers) -> None:
    tokenizer = tokenizers["bert"]
    long = " ".join(["film"] * 200)
    sparse = "x" + " " * 300 + "film"  # a long window of few tokens: encoded again whole
    enc, windowed = P.encode_truncated(tokenizer, [long, sparse, "film"], 16, "right")
    assert windowed == 1
    assert enc["input_ids"] == whole(tokenizer, [long, sparse, "film"], 16)["input_ids"]


def backend_with(tokenizer, **parts) -> PreTrainedTokenizerFast:
    """``tokenizer`` with parts of its pipeline replaced."""
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    backend = Tokenizer.from_str(json.dumps(spec))
    for name, value in parts.items():
        setattr(backend, name, value)
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]")


def test_tokenizers_whose_tokens_are_not_local_are_encoded_whole(tokenizers, tmp_path) -> None:
    bert = tokenizers["bert"]
    assert P.window_side(bert) == "right"
    # a pre-tokenizer that does not split at whitespace, or a Metaspace that does not split
    assert P.window_side(backend_with(bert, pre_tokenizer=pre_tokenizers.Split(
        "x", "isolated"))) is None
    assert P.window_side(backend_with(bert, pre_tokenizer=pre_tokenizers.Metaspace(
        split=False))) is None
    assert P.window_side(backend_with(bert, pre_tokenizer=pre_tokenizers.ByteLevel(
        use_regex=False))) is None
    # normalizers that may join across a space; ones that work per character or space run
    assert P.window_side(backend_with(bert, normalizer=normalizers.Replace(
        "a b", "c"))) is None
    assert P.window_side(backend_with(bert, normalizer=normalizers.Strip())) is None
    assert P.window_side(backend_with(bert, normalizer=normalizers.Sequence([
        normalizers.NFKC(), normalizers.Replace("``", '"')]))) is not None
    # an added token with a space in it could span the cut
    spaced = copy.deepcopy(bert)
    spaced.add_tokens(["new york"])
    assert P.window_side(spaced) is None
    # a slow (Python) tokenizer, or a truncation side the window does not know
    bert.save_pretrained(tmp_path / "bert")
    assert P.window_side(BertTokenizer(str(tmp_path / "bert" / "vocab.txt"))) is None
    odd = copy.deepcopy(bert)
    odd.truncation_side = "middle"
    assert P.window_side(odd) is None


@pytest.mark.parametrize("side", ["right", "left"])
def test_predict_writes_the_same_bytes_with_and_without_windows(tmp_path, monkeypatch,
                                                                side) -> None:
    model = tiny_classifier(tmp_path / "model", "roberta", seed=3)
    config = json.loads((model / "tokenizer_config.json").read_text())
    (model / "tokenizer_config.json").write_text(json.dumps(config | {
        "truncation_side": side}))
    texts = [" ".join(CORPUS[i % len(CORPUS)] for i in range(k, k + 1 + k % 5))
             for k in range(60)]
    pd.DataFrame({"id": [f"t{i}" for i in range(60)], "text": texts}).to_parquet(
        tmp_path / "in.parquet")
    spec = resolve(str(model), None)
    P.predict_file(spec, tmp_path / "in.parquet", tmp_path / "windowed.parquet",
                   max_length=32)
    monkeypatch.setattr(P, "window_side", lambda tokenizer: None)
    P.predict_file(spec, tmp_path / "in.parquet", tmp_path / "whole.parquet", max_length=32)
    assert sha256_file(tmp_path / "windowed.parquet") == sha256_file(tmp_path / "whole.parquet")


@pytest.mark.parametrize("arch", ARCHS)
def test_real_reviews_encode_as_whole_texts_and_windows_hold(arch) -> None:
    lines = realdata("imdb", "imdb_test_sample.tsv").read_text(encoding="utf-8").splitlines()
    texts = [line.split("\t", 1)[1] for line in lines[:300]]
    tokenizer = train_tokenizer(arch, texts, vocab_size=4000, max_length=512)
    for side in ("right", "left"):
        tokenizer.truncation_side = side
        for length in (61, 128, 256):
            enc, windowed = P.encode_truncated(tokenizer, texts, length, P.window_side(
                tokenizer))
            assert enc["input_ids"] == whole(tokenizer, texts, length)["input_ids"]
            longer = sum(len(t) > P.WINDOW_CHARS_PER_TOKEN * length for t in texts)
            assert windowed >= 0.95 * longer > 0, (side, length)
