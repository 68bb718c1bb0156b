"""SentenceDebias: counterfactual tuples, the PCA subspace, and the projection hook on base,
masked-LM and sequence-classification models of all three architectures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import realdata
from fixtures.tiny_models import CORPUS

from biasrepro.debias.sentdebias import (
    attach,
    bias_subspace,
    compute_subspace,
    counterfactual_tuples,
    embed,
    hook_module,
    read_attribute_words,
)
from biasrepro.errors import DataError, ModelError
from biasrepro.models.tokenizers import train_tokenizer

GENDER = [("he", "she"), ("his", "her"), ("man", "woman")]
RELIGION = [("jewish", "christian", "muslim")]


def test_counterfactual_tuples_follow_bias_bench() -> None:
    tuples = counterfactual_tuples(["He said his car was red .", "No match, he, here",
                                    "The Muslim shop"], GENDER + RELIGION)
    assert tuples == [
        ("he said his car was red .", "she said his car was red ."),
        ("he said his car was red .", "he said her car was red ."),
        ("the jewish shop", "the christian shop", "the muslim shop"),
    ]


def test_attribute_words_file(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"gender": [["he", "she"]], "race": [["a", "b", "c"]]}))
    assert read_attribute_words(path) == {"gender": [("he", "she")],
                                          "race": [("a", "b", "c")]}
    path.write_text(json.dumps({"gender": [["he", "she", "they"]]}))
    with pytest.raises(DataError, match="tuple 1 must hold 2 words"):
        read_attribute_words(path)


def test_real_attribute_words_parse() -> None:
    words = read_attribute_words(realdata("bias_attribute_words.json"))
    assert (len(words["gender"]), len(words["race"]), len(words["religion"])) == (57, 6, 6)


def test_subspace_recovers_a_planted_direction() -> None:
    rng = np.random.default_rng(0)
    direction = np.zeros(8)
    direction[2] = 1.0
    tuples = []
    for _ in range(40):
        base = rng.normal(size=8)
        shift = rng.normal() * 3
        tuples.append(np.stack([base + shift * direction + rng.normal(0, 0.05, 8),
                                base - shift * direction + rng.normal(0, 0.05, 8)]))
    v = bias_subspace(tuples, 1)
    assert v.shape == (1, 8) and abs(abs(v[0, 2]) - 1) < 0.01
    with pytest.raises(DataError, match="no counterfactual tuple"):
        bias_subspace([], 1)


@pytest.mark.parametrize("size, k", [(2, 1), (3, 1), (2, 3)])
def test_the_streamed_subspace_is_scikit_learns_full_pca(size: int, k: int) -> None:
    """The scatter accumulated over chunks gives the components (and their signs) that
    scikit-learn's exact PCA finds on every centred vector at once."""
    from sklearn.decomposition import PCA

    from biasrepro.debias.sentdebias import Scatter

    rng = np.random.default_rng(size * 10 + k)
    scale = np.linspace(3, 0.5, 24)  # distinct variances: a well-defined ordering
    tuples = rng.normal(size=(500, size, 24)) * scale + rng.normal(size=(500, 1, 24))
    centred = (tuples - tuples.mean(axis=1, keepdims=True)).reshape(-1, 24)
    expected = PCA(n_components=k, svd_solver="full").fit(centred).components_
    whole = bias_subspace(list(tuples), k)
    assert np.allclose(whole, expected, atol=1e-5)
    chunked = Scatter()
    for start in range(0, 500, 37):
        chunked.add(tuples[start:start + 37])
    assert chunked.tuples == 500 and chunked.n == 500 * size
    assert np.allclose(chunked.components(k), expected, atol=1e-5)
    assert np.allclose(whole @ whole.T, np.eye(k), atol=1e-5)


def test_too_many_components_is_one_error() -> None:
    with pytest.raises(DataError, match="3 components asked of 2 centred vectors"):
        bias_subspace([np.ones((2, 4))], 3)


def _model(kind: str, arch: str):
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForMaskedLM,
        AutoModelForSequenceClassification,
    )

    extra = {"embedding_size": 16} if arch == "albert" else {}
    config = AutoConfig.for_model(arch, vocab_size=120, hidden_size=16, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=32,
                                  max_position_embeddings=64, pad_token_id=0, num_labels=2,
                                  **extra)
    torch.manual_seed(0)
    cls = {"base": AutoModel, "mlm": AutoModelForMaskedLM,
           "clf": AutoModelForSequenceClassification}[kind]
    return cls.from_config(config).eval()     # no dropout: outputs comparable


@pytest.mark.parametrize("arch", ["bert", "albert", "roberta"])
@pytest.mark.parametrize("kind", ["base", "mlm", "clf"])
def test_hook_removes_the_subspace_out_of_place(arch: str, kind: str) -> None:
    model = _model(kind, arch)
    v = np.zeros((1, 16), dtype=np.float32)
    v[0, 3] = 1.0
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    captured = {}
    target = hook_module(model)
    watch = target.register_forward_hook(
        lambda m, i, o: captured.__setitem__("h", (o[0] if isinstance(o, tuple)
                                                   else o["last_hidden_state"])))
    before = model(input_ids=ids)
    handle = attach(model, v)
    watch.remove()                       # hooks run in order: watch again after the projection
    watch = target.register_forward_hook(
        lambda m, i, o: captured.__setitem__("h", (o[0] if isinstance(o, tuple)
                                                   else o["last_hidden_state"])))
    after = model(input_ids=ids)
    assert torch.allclose(captured["h"][..., 3], torch.zeros(1, 5), atol=1e-6)
    logits = "logits" if kind != "base" else "last_hidden_state"
    assert not torch.allclose(before[logits], after[logits])
    if kind == "clf":                    # fine-tuning through the hook works
        after["logits"].sum().backward()
        assert next(model.parameters()).grad is not None
    handle.remove()
    again = model(input_ids=ids)
    assert torch.allclose(before[logits], again[logits], atol=1e-6)
    with pytest.raises(ModelError, match="does not fit hidden size"):
        attach(model, np.zeros((1, 8), dtype=np.float32))


def test_subspace_from_a_tiny_encoder(tmp_path: Path) -> None:
    tokenizer = train_tokenizer("bert", CORPUS, vocab_size=300, max_length=128)
    model = _model("base", "bert")
    model.resize_token_embeddings(len(tokenizer))
    sentences = ["he said she would help .", "his film was warm .", "the man fixed it ."] * 4
    vectors = embed(model, tokenizer, sentences[:5], batch_size=2)
    assert vectors.shape == (5, 16)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    v = compute_subspace(model, tokenizer, sentences, GENDER, n_components=1, batch_size=4)
    assert v.shape == (1, 16) and abs(np.linalg.norm(v) - 1) < 1e-5
    # a chunk of two tuples at a time: the same subspace, the same count
    from biasrepro.debias.sentdebias import counterfactual_tuples, subspace_and_count

    small, n = subspace_and_count(model, tokenizer, iter(sentences), GENDER, batch_size=4,
                                  chunk_tuples=2)
    assert n == len(counterfactual_tuples(sentences, GENDER)) and n > 2
    assert np.allclose(small, v, atol=1e-5)


def test_a_saved_subspace_is_reattached_on_load_and_survives_fine_tuning(tmp_path: Path
                                                                         ) -> None:
    import pandas as pd
    from fixtures.tiny_models import tiny_classifier

    from biasrepro.debias import sentdebias
    from biasrepro.models import finetune
    from biasrepro.models.load import ModelSpec, load_classifier
    from biasrepro.models.predict import predict_proba

    base = tiny_classifier(tmp_path / "base", "bert")
    texts = ["the nurse said she would help", "an engineer fixed his bicycle"]
    plain = predict_proba(str(base), texts)
    v = np.zeros((1, 16), dtype=np.float32)
    v[0, 0] = 1.0
    sentdebias.save(base, v, {"attribute": "gender", "stage": "upstream"})
    model, _ = load_classifier(ModelSpec("base", str(base), "bert"), trained_head=True)
    assert np.array_equal(model.sentdebias[0], v)
    assert model.sentdebias[1] == {"attribute": "gender", "stage": "upstream"}
    debiased = predict_proba(str(base), texts)
    assert not np.allclose(plain, debiased)

    train = tmp_path / "train.parquet"
    pd.DataFrame({"text": texts * 8, "label": [1, 0] * 8}).to_parquet(train)
    settings = {"seed": 0, "epochs": 1, "batch_size": 4, "learning_rate": 1e-3,
                "max_length": 16, "warmup_steps": 0, "weight_decay": 0.0,
                "early_stopping_patience": None, "eval_fraction": 0.0,
                "truncation_side": "right"}
    finetune.finetune(ModelSpec("base", str(base), "bert"), task="sentiment", train=train,
                      validation=None, settings=settings, out_dir=tmp_path / "tuned",
                      checkpoint_dir=tmp_path / "ck")
    saved = sentdebias.load(tmp_path / "tuned")
    assert saved is not None and np.array_equal(saved[0], v)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / sentdebias.SUBSPACE_FILE).write_text("not safetensors")
    with pytest.raises(ModelError, match="not a SentenceDebias subspace file"):
        sentdebias.load(tmp_path / "broken")


def test_subspace_files_are_byte_identical_for_the_same_subspace(tmp_path) -> None:
    """Facts go in one sorted-JSON metadata key (several keys come out in hash order)."""
    import numpy as np

    from biasrepro.debias.sentdebias import read_file, write_file

    v = np.eye(1, 8, dtype=np.float32)
    meta = {f"k{i}": str(i) for i in range(8)}
    a = write_file(tmp_path / "a.safetensors", v, meta).read_bytes()
    b = write_file(tmp_path / "b.safetensors", v, dict(reversed(meta.items()))).read_bytes()
    assert a == b
    assert read_file(tmp_path / "a.safetensors")[1] == meta
