"""Model names and checkpoints: registry, directory and Hub resolution;
refusal of unknown names, missing or foreign checkpoints and pickled weights; base and
masked-LM checkpoints gain a classification head."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from fixtures.tiny_models import tiny_classifier
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
)

from biasrepro.errors import ModelError
from biasrepro.models.load import (
    ModelSpec,
    check_checkpoint,
    load_classifier,
    load_tokenizer,
    resolve,
)

REGISTRY = {
    "bert-tiny": {"source": "embedded", "architecture": "bert"},
    "mine": {"source": "local", "architecture": "albert", "path": "models/mine"},
    "roberta-base": {"source": "hub", "architecture": "roberta", "id": "FacebookAI/roberta-base",
                     "revision": "e2da8e2f811d1448a5b465c236feacd80ffbac7b"},
}


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return tiny_classifier(tmp_path_factory.mktemp("m") / "bert", "bert", seed=2)


def copy(src, dest):
    return shutil.copytree(src, dest)


# -- resolve --------------------------------------------------------------------------------

def test_resolve_registry_entries() -> None:
    assert resolve("bert-tiny", REGISTRY) == ModelSpec(
        "bert-tiny", "resources/models/embedded/bert-tiny", "bert")
    mine = resolve("mine", REGISTRY)
    assert (mine.location, mine.architecture, mine.is_local) == ("models/mine", "albert", True)
    hub = resolve("roberta-base", REGISTRY)
    assert hub == ModelSpec("roberta-base", "FacebookAI/roberta-base", "roberta",
                            REGISTRY["roberta-base"]["revision"])
    assert not hub.is_local


def test_resolve_a_directory(bert_dir, monkeypatch) -> None:
    for registry in (None, REGISTRY):
        spec = resolve(str(bert_dir), registry)
        assert spec == ModelSpec("bert", str(bert_dir)) and spec.is_local
    monkeypatch.chdir(bert_dir)
    assert resolve(".", None).name == "bert"


def test_resolve_a_hub_id_outside_the_registry() -> None:
    assert resolve("owner/model", REGISTRY) == ModelSpec("owner/model", "owner/model", None,
                                                         "main")
    assert resolve("bert-base-uncased", None).revision == "main"


def test_unknown_name_lists_the_registered_names() -> None:
    with pytest.raises(ModelError, match=r"unknown model name 'bert-tyni' \(registered: "
                       r"bert-tiny, mine, roberta-base\)"):
        resolve("bert-tyni", REGISTRY)
    with pytest.raises(ModelError, match=r"unknown model name 'x' \(none registered\)"):
        resolve("x", {})


@pytest.mark.parametrize("name", ["/no/such/model", "./missing", "results/models/x"])
def test_nonexistent_path(name, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError, match=f"model '{name}': no such model directory"):
        resolve(name, REGISTRY)


def test_a_file_is_not_a_model_directory(tmp_path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ModelError, match="is a file, not a model directory"):
        resolve(str(tmp_path / "model.safetensors"), None)


# -- check_checkpoint -----------------------------------------------------------------------

def test_check_checkpoint_accepts_a_saved_model(bert_dir) -> None:
    config = check_checkpoint(ModelSpec("b", str(bert_dir), "bert"))
    assert config["model_type"] == "bert"


def test_missing_config(tmp_path) -> None:
    with pytest.raises(ModelError, match=r"model 'm': .* has no config.json \(not a saved"):
        check_checkpoint(ModelSpec("m", str(tmp_path)))


def test_config_that_is_not_json(bert_dir, tmp_path) -> None:
    d = copy(bert_dir, tmp_path / "m")
    (d / "config.json").write_text("{model_type: bert")
    with pytest.raises(ModelError, match="config.json is not valid JSON"):
        check_checkpoint(ModelSpec("m", str(d)))


def test_checkpoint_of_another_architecture(tmp_path) -> None:
    d = tiny_classifier(tmp_path / "rob", "roberta")
    with pytest.raises(ModelError, match=r"model 'bert-tiny': the checkpoint at .*rob is a "
                       r"roberta model, but bert was expected"):
        check_checkpoint(ModelSpec("bert-tiny", str(d), "bert"))
    with pytest.raises(ModelError, match="is a roberta model, but bert was expected"):
        load_classifier(ModelSpec("bert-tiny", str(d), "bert"))


def test_only_pickled_weights_are_refused(bert_dir, tmp_path) -> None:
    d = copy(bert_dir, tmp_path / "m")
    (d / "model.safetensors").unlink()
    (d / "pytorch_model.bin").write_bytes(b"never unpickled")
    with pytest.raises(ModelError, match=r"no .safetensors weights in .* \(found only "
                       r"pytorch_model.bin: pickled weights are not loaded\)"):
        load_classifier(ModelSpec("m", str(d), "bert"))
    (d / "pytorch_model.bin").unlink()
    with pytest.raises(ModelError, match=r"no .safetensors weights in \S+$"):
        check_checkpoint(ModelSpec("m", str(d)))


def test_missing_tokenizer(bert_dir, tmp_path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(bert_dir / name, d / name)
    with pytest.raises(ModelError, match="has no tokenizer files"):
        load_classifier(ModelSpec("m", str(d)))
    assert load_tokenizer(ModelSpec("b", str(bert_dir))).pad_token == "[PAD]"


# -- load_classifier ------------------------------------------------------------------------

@pytest.mark.parametrize("base", [BertForMaskedLM, BertModel])
def test_base_or_masked_lm_checkpoint_gains_a_two_label_head(bert_dir, tmp_path, base) -> None:
    d = copy(bert_dir, tmp_path / "m")
    config = AutoConfig.from_pretrained(bert_dir)
    torch.manual_seed(3)
    pretrained = base(config)
    pretrained.save_pretrained(d)
    encoder = pretrained if base is BertModel else pretrained.bert
    model, tokenizer = load_classifier(ModelSpec("m", str(d), "bert"))
    assert isinstance(model, BertForSequenceClassification)
    assert model.config.num_labels == 2
    # the encoder's weights are the checkpoint's, not a fresh initialisation
    torch.testing.assert_close(model.bert.embeddings.word_embeddings.weight,
                               encoder.embeddings.word_embeddings.weight, rtol=0, atol=0)
    with torch.no_grad():
        logits = model(**tokenizer(["a film", "a nurse"], padding=True,
                                   return_tensors="pt")).logits
    assert logits.shape == (2, 2)
    # for prediction, a random head is refused
    with pytest.raises(ModelError, match=r"not a trained sequence classifier .* these weights "
                       r"are not in the checkpoint: .*classifier.weight"):
        load_classifier(ModelSpec("m", str(d), "bert"), trained_head=True)


def test_classifier_with_another_number_of_labels(bert_dir, tmp_path) -> None:
    d = copy(bert_dir, tmp_path / "m")
    three = AutoModelForSequenceClassification.from_config(
        AutoConfig.from_pretrained(bert_dir, num_labels=3))
    three.save_pretrained(d)
    model, _ = load_classifier(ModelSpec("m", str(d)))  # fine-tuning: a new 2-label head
    assert model.classifier.out_features == 2
    torch.testing.assert_close(model.bert.pooler.dense.weight, three.bert.pooler.dense.weight,
                               rtol=0, atol=0)
    with pytest.raises(ModelError, match="is a classifier with 3 labels; 2 are needed"):
        load_classifier(ModelSpec("m", str(d)), trained_head=True)


def test_trained_classifier_loads_unchanged(bert_dir) -> None:
    model, _ = load_classifier(ModelSpec("b", str(bert_dir), "bert"), trained_head=True)
    saved = AutoModelForSequenceClassification.from_pretrained(bert_dir)
    torch.testing.assert_close(model.classifier.weight, saved.classifier.weight, rtol=0, atol=0)


def test_config_without_model_type(bert_dir, tmp_path) -> None:
    d = copy(bert_dir, tmp_path / "m")
    config = json.loads((d / "config.json").read_text())
    del config["model_type"]
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="is a model without a model_type, but bert was"):
        check_checkpoint(ModelSpec("m", str(d), "bert"))
    with pytest.raises(ModelError, match=r"model 'm': cannot load its config from"):
        load_classifier(ModelSpec("m", str(d)))
