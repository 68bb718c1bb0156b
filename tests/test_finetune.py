"""Fine-tuning: learning, determinism, resumption, bad input."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import BIN, REPO, env_with_venv
from fixtures.tiny_models import tiny_classifier

from biasrepro import cli
from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import sha256_file
from biasrepro.models import finetune as ft
from biasrepro.models.load import ModelSpec

POSITIVE, NEGATIVE = ("wonderful", "loved"), ("terrible", "hated")
FILLER = "the nurse said she would help with film engineer from norway fixed his bicycle".split()
SETTINGS = {"seed": 0, "epochs": 2, "batch_size": 4, "learning_rate": 5e-3, "max_length": 32,
            "warmup_steps": 0, "weight_decay": 0.01, "early_stopping_patience": None,
            "eval_fraction": 0.2, "truncation_side": "right"}


def toy(n: int = 400, seed: int = 0, invert: bool = False) -> pd.DataFrame:
    """Short texts whose label is given by one sentiment word among filler words."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = i % 2
        words = rng.sample(FILLER, 2)
        words.insert(rng.randrange(3), rng.choice(POSITIVE if label else NEGATIVE))
        rows.append((" ".join(words), 1 - label if invert else label))
    return pd.DataFrame(rows, columns=["text", "label"])


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bases")
    return {arch: tiny_classifier(root / arch, arch) for arch in ("bert", "albert", "roberta")}


@pytest.fixture(scope="module")
def train_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "train.parquet"
    toy().to_parquet(path)
    return path


def run(base: Path, arch: str, train: Path, out: Path, *, validation: Path | None = None,
        **overrides: object) -> dict:
    ft.finetune(ModelSpec("tiny", str(base), arch), task="sentiment", train=train,
                validation=validation, settings=SETTINGS | overrides, out_dir=out,
                checkpoint_dir=out.with_name(out.name + "-ckpt"))
    return json.loads((out / "training.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reference(bases: dict[str, Path], train_file: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted BERT run with the default SETTINGS."""
    out = tmp_path_factory.mktemp("reference") / "out"
    run(bases["bert"], "bert", train_file, out)
    return out


def same_model(out: Path, reference: Path) -> bool:
    return all((out / name).read_bytes() == (reference / name).read_bytes()
               for name in ("model.safetensors", "config.json"))


@pytest.mark.parametrize("arch", ["bert", "albert", "roberta"])
def test_learns_and_records_the_job(arch: str, bases: dict[str, Path], train_file: Path,
                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    record = run(bases[arch], arch, train_file, out)

    assert record["validation"]["last"]["accuracy"] >= 0.75  # chance is 0.5
    assert record["validation"]["last"]["roc_auc"] >= 0.9
    assert [e["epoch"] for e in record["validation"]["history"]] == [1.0, 2.0]
    assert record["base"] | {"weights_sha256": None} == {
        "name": "tiny", "location": str(bases[arch]), "architecture": arch, "revision": None,
        "commit": None, "weights_sha256": None}
    assert record["base"]["weights_sha256"] == {
        "model.safetensors": sha256_file(bases[arch] / "model.safetensors")}
    assert record["task"] == "sentiment" and record["settings"] == SETTINGS
    assert record["data"]["train"] == {"file": str(train_file), "sha256": sha256_file(train_file),
                                       "rows": 320, "positive_rate": 0.5}
    assert record["data"]["validation"] == {"held_out_of_train": 0.2, "rows": 80,
                                            "positive_rate": 0.5}
    assert record["training"] == {"max_steps": 160, "steps": 160, "epochs": 2.0,
                                  "resumed_from_step": None}
    assert record["early_stopping"] is None
    assert set(record["versions"]) >= {"transformers", "torch", "biasrepro"}
    assert "runtime" not in json.dumps(record)

    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == arch
    assert config["id2label"] == {"0": "negative", "1": "positive"}
    assert config["biasrepro"]["settings"] == SETTINGS
    assert config["biasrepro"]["data"]["train"]["sha256"] == sha256_file(train_file)
    tokenizer_config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert tokenizer_config["model_max_length"] == 32
    assert tokenizer_config["truncation_side"] == "right"
    assert (out / "model.safetensors").is_file()
    assert not [p for p in out.iterdir() if p.suffix in (".bin", ".pt", ".pth")]
    assert not (tmp_path / "out-ckpt").exists()


def test_left_truncation_keeps_the_tail(bases: dict[str, Path], tmp_path: Path) -> None:
    """The sentiment word ends a text far longer than max_length: only the tail shows it."""
    def tail_labelled(n: int, seed: int) -> pd.DataFrame:
        rng, head = random.Random(seed), " ".join(FILLER * 2)
        labels = [i % 2 for i in range(n)]
        texts = [f"{head} {rng.choice(POSITIVE if y else NEGATIVE)}" for y in labels]
        return pd.DataFrame({"text": texts, "label": labels})

    tail_labelled(400, 0).to_parquet(tmp_path / "train.parquet")
    tail_labelled(100, 1).to_parquet(tmp_path / "validation.parquet")
    out = tmp_path / "out"
    record = run(bases["bert"], "bert", tmp_path / "train.parquet", out,
                 validation=tmp_path / "validation.parquet", truncation_side="left",
                 max_length=16, eval_fraction=0.0)
    assert record["validation"]["last"]["accuracy"] >= 0.75

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    assert tokenizer.truncation_side == "left" and tokenizer.model_max_length == 16
    ids = tokenizer(" ".join(["film"] * 40 + ["wonderful"]), truncation=True)["input_ids"]
    assert len(ids) == 16 and "wonderful" in tokenizer.decode(ids)

    # Prediction truncates as training did, from the model's training record even when its
    # tokenizer files say otherwise: texts that differ only in the head are one input.
    config_file = out / "tokenizer_config.json"
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    config_file.write_text(json.dumps(saved | {"truncation_side": "right",
                                               "model_max_length": 512}), encoding="utf-8")
    from biasrepro.models.predict import score_with_inputs

    head = " ".join(FILLER * 2)
    texts = [f"{head} wonderful", f"film {head} wonderful", f"{head} terrible"]
    probs, inputs = score_with_inputs(str(out), texts)
    assert inputs[0] == inputs[1] != inputs[2]
    assert probs[0] > 0.5 > probs[2]


def test_no_validation(bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    record = run(bases["bert"], "bert", train_file, tmp_path / "out", eval_fraction=0.0,
                 epochs=1)
    assert record["validation"] is None and "validation" not in record["data"]
    assert record["data"]["train"]["rows"] == 400


def test_same_inputs_same_bytes(bases: dict[str, Path], train_file: Path, reference: Path,
                                tmp_path: Path) -> None:
    run(bases["bert"], "bert", train_file, tmp_path / "out")
    files = sorted(p.name for p in reference.iterdir())
    assert files == sorted(p.name for p in (tmp_path / "out").iterdir())
    for name in files:
        assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name


def _fail_after_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*paths: object) -> None:
        raise KeyboardInterrupt("killed while writing the outputs")

    monkeypatch.setattr(ft, "atomic_outputs", boom)


def test_job_killed_after_training_resumes_from_its_last_checkpoint(
        bases: dict[str, Path], train_file: Path, reference: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    with monkeypatch.context() as m:
        _fail_after_training(m)
        with pytest.raises(KeyboardInterrupt):
            run(bases["bert"], "bert", train_file, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert (tmp_path / "out-ckpt" / "checkpoint-160").is_dir()

    with caplog.at_level("INFO", logger="biasrepro"):
        record = run(bases["bert"], "bert", train_file, tmp_path / "out")
    assert "resuming from checkpoint" in caplog.text
    assert record["training"]["resumed_from_step"] == 160
    assert same_model(tmp_path / "out", reference)


def test_checkpoint_of_another_job_is_not_resumed(
        bases: dict[str, Path], train_file: Path, reference: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    with monkeypatch.context() as m:
        _fail_after_training(m)
        with pytest.raises(KeyboardInterrupt):
            run(bases["bert"], "bert", train_file, tmp_path / "out", learning_rate=1e-3)
    with caplog.at_level("INFO", logger="biasrepro"):
        record = run(bases["bert"], "bert", train_file, tmp_path / "out")
    assert "another job's checkpoints (different settings)" in caplog.text
    assert "resuming" not in caplog.text
    assert record["training"]["resumed_from_step"] is None
    assert same_model(tmp_path / "out", reference)


def test_foreign_checkpoint_directory_is_refused(bases: dict[str, Path], train_file: Path,
                                                 tmp_path: Path) -> None:
    (tmp_path / "out-ckpt").mkdir()
    (tmp_path / "out-ckpt" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ModelError, match="not a fine-tuning checkpoint directory"):
        run(bases["bert"], "bert", train_file, tmp_path / "out")
    assert (tmp_path / "out-ckpt" / "notes.txt").is_file()
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_cli_killed_mid_training_resumes_with_the_same_bytes(
        bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    """SIGKILL after the first checkpoint; the rerun resumes and matches an unbroken run."""
    training = {k: v for k, v in SETTINGS.items() if k != "seed"} | {"epochs": 6}
    settings = {"seed": SETTINGS["seed"],
                "models.registry": {"tiny": {"source": "local", "architecture": "bert",
                                             "path": str(bases["bert"])}},
                "models.training.sentiment": training}
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    cmd = [str(BIN / "biasrepro"), "finetune", "--model", "tiny", "--task", "sentiment",
           "--train", str(train_file), "--settings", json.dumps(settings),
           "--out-dir", str(out), "--checkpoint-dir", str(ckpt)]
    with (tmp_path / "first.log").open("w") as log:
        proc = subprocess.Popen(cmd, env=env_with_venv(), stdout=log, stderr=log,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not list(ckpt.glob("checkpoint-*/trainer_state.json")):
                assert proc.poll() is None, (tmp_path / "first.log").read_text()
                assert time.monotonic() < deadline, "no checkpoint within 120 s"
                time.sleep(0.02)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not out.exists()

    second = subprocess.run(cmd, env=env_with_venv(), capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "resuming from checkpoint" in second.stderr, second.stderr
    record = json.loads((out / "training.json").read_text(encoding="utf-8"))
    assert 0 < record["training"]["resumed_from_step"] < record["training"]["max_steps"]

    run(bases["bert"], "bert", train_file, tmp_path / "unbroken", epochs=6)
    assert same_model(out, tmp_path / "unbroken")


def _killed_after_first_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import Trainer

    save = Trainer._save_checkpoint

    def save_then_die(self: Trainer, *args: object, **kwargs: object) -> None:
        save(self, *args, **kwargs)
        raise KeyboardInterrupt(f"killed after checkpoint {self.state.global_step}")

    monkeypatch.setattr(Trainer, "_save_checkpoint", save_then_die)


def test_job_killed_mid_epoch_resumes_with_the_same_bytes(
        bases: dict[str, Path], train_file: Path, reference: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints every 20 steps (80 a epoch): resumption skips seen batches, restores RNG."""
    with monkeypatch.context() as m:
        _killed_after_first_checkpoint(m)
        with pytest.raises(KeyboardInterrupt, match="checkpoint 20"):
            run(bases["bert"], "bert", train_file, tmp_path / "out")
    record = run(bases["bert"], "bert", train_file, tmp_path / "out")
    assert record["training"]["resumed_from_step"] == 20
    unbroken = json.loads((reference / "training.json").read_text(encoding="utf-8"))
    assert record["validation"] == unbroken["validation"]
    assert same_model(tmp_path / "out", reference)


def test_early_stopping_stops_when_validation_loss_cannot_improve(
        bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    """A learning rate of 1e-30 leaves the weights (and the validation loss) as they are."""
    record = run(bases["bert"], "bert", train_file, tmp_path / "out", learning_rate=1e-30,
                 epochs=4, early_stopping_patience=1)
    steps_per_epoch = 80
    assert record["early_stopping"] == {"patience": 1, "stopped_early": True,
                                        "best_step": steps_per_epoch}
    assert record["training"]["steps"] == 2 * steps_per_epoch < record["training"]["max_steps"]
    losses = [e["loss"] for e in record["validation"]["history"]]
    assert len(losses) == 2 and losses[0] == losses[1]
    assert record["validation"]["saved_model"] == "best"


def test_early_stopping_keeps_the_best_epoch_and_resumes(
        bases: dict[str, Path], train_file: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation labels are the training rule inverted, so epochs differ in validation loss.

    The saved weights are the best epoch's; a run killed after its first (epoch) checkpoint
    resumes with the early-stopping state and ends with the same bytes and record.
    """
    toy(100, seed=1, invert=True).to_parquet(tmp_path / "validation.parquet")
    settings = {"validation": tmp_path / "validation.parquet", "epochs": 3,
                "early_stopping_patience": 1, "eval_fraction": 0.0}
    out = tmp_path / "out"
    record = run(bases["bert"], "bert", train_file, out, **settings)
    history, best = record["validation"]["history"], record["validation"]["best"]
    assert record["data"]["validation"]["sha256"] == sha256_file(tmp_path / "validation.parquet")
    assert best["loss"] == min(e["loss"] for e in history)
    assert record["early_stopping"]["best_step"] == best["step"]
    assert record["early_stopping"]["stopped_early"] == (len(history) < 3)
    assert record["validation"]["saved_model"] == "best"

    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(out).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)
    validation = pd.read_parquet(tmp_path / "validation.parquet")
    with torch.inference_mode():
        batch = tokenizer(list(validation["text"]), padding=True, return_tensors="pt")
        loss = model(**batch, labels=torch.tensor(validation["label"].to_numpy())).loss
    assert float(loss) == pytest.approx(best["loss"], rel=1e-4)

    with monkeypatch.context() as m:
        _killed_after_first_checkpoint(m)
        with pytest.raises(KeyboardInterrupt, match="checkpoint 100"):
            run(bases["bert"], "bert", train_file, tmp_path / "resumed", **settings)
    resumed = run(bases["bert"], "bert", train_file, tmp_path / "resumed", **settings)
    assert resumed["training"]["resumed_from_step"] == 100
    assert resumed["early_stopping"] == record["early_stopping"]
    assert resumed["validation"] == record["validation"]
    assert (out / "model.safetensors").read_bytes() == (
        tmp_path / "resumed" / "model.safetensors").read_bytes()


# -- named settings: BiasFinder v1 (BERT4doc) and TSE, as the paper profile holds them ------


def _paper_settings(model: str, task: str = "sentiment") -> dict:
    """What ``model`` fine-tunes with for ``task`` in the paper profile (merged as Snakemake
    merges it; test_config.py validates it)."""
    from biasrepro import config

    paper = config.deep_merge(config.read_mapping(REPO / "config/config.yaml"),
                              config.read_mapping(REPO / "config/paper.yaml"))
    return ft.training_settings({"__config__": paper}, model, task)


def test_tse_setting_evaluates_every_500_steps_with_patience_7(tmp_path: Path) -> None:
    """BiasFinder TSE (fine_tune.py): evaluation and checkpoints every 500 steps, early
    stopping after 7 evaluations without a lower validation loss, the best model kept."""
    s = ft._check_settings(_paper_settings("roberta-base"))
    assert s["setting"] == "tse"
    args = ft._training_arguments(s, tmp_path, steps_per_epoch=1875, evaluate=True,
                                  cuda=False, precision="fp32")
    assert (args.eval_strategy, args.eval_steps) == ("steps", 500)
    assert (args.save_strategy, args.save_steps) == ("steps", 500)
    assert args.load_best_model_at_end and args.metric_for_best_model == "eval_loss"
    assert not args.greater_is_better
    assert (args.learning_rate, args.per_device_train_batch_size, args.num_train_epochs,
            args.warmup_steps, args.weight_decay) == (1e-5, 8, 20, 50, 0.01)
    assert (s["max_length"], s["truncation_side"], s["eval_fraction"]) == (512, "right", 0.4)
    (stopping,) = ft._callbacks(s)
    assert stopping.early_stopping_patience == 7


def test_bert4doc_setting_is_v1s(tmp_path: Path) -> None:
    """BiasFinder v1 (BERT4doc fine-tune.py, its README's command): batch 24, lr 2e-5, 5
    epochs, seed 42, warm-up
    over 10 % of the steps, 128 tokens keeping the tail, every training review, the last
    epoch's model: no validation, no early stopping."""
    s = ft._check_settings(_paper_settings("bert-base-uncased"))
    assert s["setting"] == "bert4doc"
    assert (s["max_length"], s["truncation_side"], s["eval_fraction"]) == (128, "left", 0.0)
    args = ft._training_arguments(s, tmp_path, steps_per_epoch=782, evaluate=False,
                                  cuda=False, precision="fp32")
    assert (args.learning_rate, args.per_device_train_batch_size, args.num_train_epochs,
            args.seed, args.warmup_steps, args.warmup_ratio, args.weight_decay) == (
        2e-5, 24, 5, 42, 0, 0.1, 0.01)
    assert args.eval_strategy == "no" and not args.load_best_model_at_end
    assert ft._callbacks(s) == []


def test_albert_and_toxicity_keep_their_settings() -> None:
    """Only the compared BERT trains as v1 did; the other sentiment models train as TSE, and
    toxicity as §4.2 of the toxicity paper."""
    assert _paper_settings("albert-base-v2")["setting"] == "tse"
    toxicity = _paper_settings("bert-base-uncased", "toxicity")
    assert toxicity["setting"] == "main-study"
    assert (toxicity["learning_rate"], toxicity["batch_size"], toxicity["max_length"]) == (
        2e-5, 32, 61)


@pytest.mark.parametrize("model", ["bert-base-uncased", "albert-base-v2", "roberta-base"])
def test_the_appendix_trains_every_architecture_with_the_main_studys_recipe(model) -> None:
    """The sentiment appendix's models (IMDB-gendered, and its perturbed copy) train with
    the main study's recipe whatever the architecture (methods.registry names it), while the
    same models' BiasFinder methods keep theirs (bert4doc, tse)."""
    from biasrepro import config

    paper = config.deep_merge(config.read_mapping(REPO / "config/config.yaml"),
                              config.read_mapping(REPO / "config/paper.yaml"))
    main = ft.training_settings({"__config__": paper}, model, "toxicity")
    for method in ("imdb-gendered", "downstream-perturbed-data"):
        s = ft.training_settings({"__config__": paper}, model, "sentiment", method)
        assert s == main
    assert ft.training_settings({"__config__": paper}, model, "sentiment", "baseline") == \
        _paper_settings(model)
    # a method's choice is a name, checked like any other
    broken = config.deep_merge(paper, {"methods": {"registry": {
        "imdb-gendered": {"training": {"sentiment": "nope"}}}}})
    with pytest.raises(ConfigError, match="'models.training.named.nope': missing"):
        ft.training_settings({"__config__": broken}, model, "sentiment", "imdb-gendered")


def test_step_evaluation_keeps_the_best_step_and_resumes(
        bases: dict[str, Path], train_file: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluation every 30 steps (80 a epoch) with early stopping: checkpoints follow the
    evaluations, the saved model is the best evaluation's, and a run killed after its first
    checkpoint (step 30) resumes to the same bytes and record."""
    toy(100, seed=1, invert=True).to_parquet(tmp_path / "validation.parquet")
    settings = {"validation": tmp_path / "validation.parquet", "epochs": 2,
                "early_stopping_patience": 2, "eval_fraction": 0.0, "eval_steps": 30}
    out = tmp_path / "out"
    record = run(bases["bert"], "bert", train_file, out, **settings)
    steps = [e["step"] for e in record["validation"]["history"]]
    assert steps == list(range(30, 30 * len(steps) + 1, 30)) and len(steps) >= 3
    best = record["validation"]["best"]
    assert best["loss"] == min(e["loss"] for e in record["validation"]["history"])
    assert record["early_stopping"]["best_step"] == best["step"]
    assert record["validation"]["saved_model"] == "best"
    assert record["settings"]["eval_steps"] == 30

    with monkeypatch.context() as m:
        _killed_after_first_checkpoint(m)
        with pytest.raises(KeyboardInterrupt, match="checkpoint 30"):
            run(bases["bert"], "bert", train_file, tmp_path / "resumed", **settings)
    resumed = run(bases["bert"], "bert", train_file, tmp_path / "resumed", **settings)
    assert resumed["training"]["resumed_from_step"] == 30
    assert resumed["early_stopping"] == record["early_stopping"]
    assert resumed["validation"] == record["validation"]
    assert same_model(tmp_path / "resumed", out)


def test_step_evaluation_stops_after_patience_evaluations(
        bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    """A learning rate of 1e-30 leaves the validation loss as it is: with patience 2 and an
    evaluation every 20 steps, training stops at step 60 and keeps step 20's model."""
    record = run(bases["bert"], "bert", train_file, tmp_path / "out", learning_rate=1e-30,
                 epochs=2, early_stopping_patience=2, eval_steps=20)
    assert [e["step"] for e in record["validation"]["history"]] == [20, 40, 60]
    assert record["early_stopping"] == {"patience": 2, "stopped_early": True, "best_step": 20}
    assert record["training"]["steps"] == 60


def test_unset_optional_settings_are_not_recorded(bases: dict[str, Path], train_file: Path,
                                                   reference: Path) -> None:
    """Settings without eval_steps, warmup_ratio or a name record exactly the keys they
    always did, so existing models keep their bytes."""
    record = json.loads((reference / "training.json").read_text(encoding="utf-8"))
    assert sorted(record["settings"]) == sorted(SETTINGS)
    assert ft._check_settings(SETTINGS | {"eval_steps": None, "warmup_ratio": None}) == SETTINGS


@pytest.mark.parametrize(("overrides", "match"), [
    ({"eval_steps": 0}, "eval_steps must be a positive integer"),
    ({"warmup_ratio": 0.1, "warmup_steps": 5}, "give warmup_steps or warmup_ratio"),
])
def test_bad_optional_settings(overrides: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ft._check_settings(SETTINGS | overrides)


# -- bad input: one clear error, nothing written ------------------------------------------


@pytest.mark.parametrize(("frame", "match"), [
    (pd.DataFrame({"text": ["a b", "c d"], "target": [0, 1]}),
     r"column 'label': missing column; found \['text', 'target'\]"),
    (pd.DataFrame({"text": ["a b", "c d", "e f"], "label": [0, 2, 1]}),
     r"row 2, column 'label': label 2 is not 0 or 1"),
    (pd.DataFrame({"text": ["a b", "  ", "e f"], "label": [0, 1, 1]}),
     r"row 2, column 'text': empty text"),
    (pd.DataFrame({"text": [np.nan, np.nan], "label": [0, 1]}),
     r"row 1, column 'text': missing text \(NaN\)"),
    (pd.DataFrame({"text": ["a b", "c d"], "label": [1, 1]}),
     r"column 'label': only class 1 is present"),
])
def test_bad_training_data(frame: pd.DataFrame, match: str, bases: dict[str, Path],
                           tmp_path: Path) -> None:
    frame.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(DataError, match=match) as e:
        run(bases["bert"], "bert", tmp_path / "bad.parquet", tmp_path / "out")
    assert str(tmp_path / "bad.parquet") in str(e.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out-ckpt").exists()


def test_bad_validation_file(bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    pd.DataFrame({"text": ["a", "b"], "label": [0, -1]}).to_parquet(tmp_path / "val.parquet")
    with pytest.raises(DataError, match=r"val.parquet, row 2, column 'label': label -1"):
        run(bases["bert"], "bert", train_file, tmp_path / "out",
            validation=tmp_path / "val.parquet")
    assert not (tmp_path / "out").exists()


def test_missing_training_file(bases: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(DataError, match="nope.parquet: file not found"):
        run(bases["bert"], "bert", tmp_path / "nope.parquet", tmp_path / "out")


def test_checkpoint_of_another_architecture(bases: dict[str, Path], train_file: Path,
                                            tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="is a albert model, but bert was expected"):
        run(bases["albert"], "bert", train_file, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out-ckpt").exists()


def test_pickled_only_checkpoint_is_refused(train_file: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForSequenceClassification

    base = tiny_classifier(tmp_path / "base", "bert")
    model = AutoModelForSequenceClassification.from_pretrained(base)
    (base / "model.safetensors").unlink()
    model.save_pretrained(base, safe_serialization=False)
    with pytest.raises(ModelError, match="pickled weights are not loaded"):
        run(base, "bert", train_file, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_max_length_beyond_the_models_positions(bases: dict[str, Path], train_file: Path,
                                                tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="takes at most 128 tokens, but max_length is 129"):
        run(bases["roberta"], "roberta", train_file, tmp_path / "out", max_length=129)


def test_incomplete_settings(bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    settings = {k: v for k, v in SETTINGS.items() if k not in ("epochs", "truncation_side")}
    with pytest.raises(ConfigError, match="training settings lack epochs, truncation_side"):
        ft.finetune(ModelSpec("tiny", str(bases["bert"]), "bert"), task="sentiment",
                    train=train_file, validation=None, settings=settings,
                    out_dir=tmp_path / "out", checkpoint_dir=tmp_path / "ckpt")
    with pytest.raises(ConfigError, match="early_stopping_patience needs a validation set"):
        run(bases["bert"], "bert", train_file, tmp_path / "out", eval_fraction=0.0,
            early_stopping_patience=2)
    assert not [p for p in tmp_path.iterdir() if p.name in ("out", "ckpt", "out-ckpt")]


def test_cli_nonexistent_model_path(train_file: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    settings = {"seed": 0, "models.registry": {}, "models.training.sentiment": SETTINGS}
    code = cli.main(["finetune", "--model", str(tmp_path / "no-such-model"), "--task",
                     "sentiment", "--train", str(train_file), "--settings",
                     json.dumps(settings), "--out-dir", str(tmp_path / "out"),
                     "--checkpoint-dir", str(tmp_path / "ckpt")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: model '{tmp_path / 'no-such-model'}'") and "directory" in err
    assert not (tmp_path / "out").exists()


def test_cli_registered_path_that_does_not_exist(train_file: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    settings = {"seed": 0, "models.training.sentiment": SETTINGS,
                "models.registry": {"mine": {"source": "local", "architecture": "bert",
                                             "path": str(tmp_path / "gone")}}}
    code = cli.main(["finetune", "--model", "mine", "--task", "sentiment", "--train",
                     str(train_file), "--settings", json.dumps(settings), "--out-dir",
                     str(tmp_path / "out"), "--checkpoint-dir", str(tmp_path / "ckpt")])
    assert code == 2
    assert f"model 'mine': {tmp_path / 'gone'} has no config.json" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_upstream_sentdebias_trains_with_the_projection_and_saves_it(
        bases: dict[str, Path], train_file: Path, tmp_path: Path) -> None:
    """upstream-SentDebias (§6.2): the subspace is attached before training, recorded in the
    job, saved beside the model and re-attached by the loader; the saved model's encoder
    output has no component along it."""
    from biasrepro.debias import sentdebias
    from biasrepro.models.load import load_classifier

    rng = np.random.default_rng(0)
    v = rng.normal(size=(1, 16)).astype(np.float32)
    v /= np.linalg.norm(v)
    sub = sentdebias.write_file(tmp_path / "gender.safetensors", v,
                                {"attribute": "gender", "stage": "upstream"})
    out = tmp_path / "out"
    ft.finetune(ModelSpec("tiny", str(bases["bert"]), "bert"), task="sentiment",
                train=train_file, validation=None, settings=SETTINGS | {"epochs": 1},
                out_dir=out, checkpoint_dir=tmp_path / "ckpt", sentdebias=sub)
    record = json.loads((out / "training.json").read_text(encoding="utf-8"))
    assert record["sentdebias"]["attribute"] == "gender"
    assert record["sentdebias"]["sha256"] == sha256_file(sub)
    model, tokenizer = load_classifier(ModelSpec("tiny", str(out), "bert"))
    assert model.sentdebias[1]["attribute"] == "gender"
    enc = tokenizer(["the nurse said she loved it"], return_tensors="pt")
    with torch.no_grad():
        hidden = model.base_model(**enc).last_hidden_state
    assert float((hidden @ torch.from_numpy(v).T).abs().max()) < 1e-5
    with pytest.raises(ModelError, match="already carries"):
        ft.finetune(ModelSpec("tiny", str(out), "bert"), task="sentiment", train=train_file,
                    validation=None, settings=SETTINGS, out_dir=tmp_path / "again",
                    checkpoint_dir=tmp_path / "ckpt2", sentdebias=sub)


def test_cli_several_runs_write_what_each_writes_alone(bases: dict[str, Path], train_file: Path,
                                                       reference: Path, tmp_path: Path) -> None:
    """One process fine-tunes several training sets in turn, each exactly as alone."""
    inverted = tmp_path / "inverted.parquet"
    toy(invert=True).to_parquet(inverted)
    settings = {"seed": SETTINGS["seed"], "models.training.sentiment": SETTINGS,
                "models.registry": {"tiny": {"source": "local", "architecture": "bert",
                                             "path": str(bases["bert"])}}}
    outs = [tmp_path / "plain", tmp_path / "inverted"]
    assert cli.main(["finetune", "--model", "tiny", "--task", "sentiment", "--train",
                     str(train_file), str(inverted), "--settings", json.dumps(settings),
                     "--out-dir", *map(str, outs), "--checkpoint-dir",
                     str(tmp_path / "c1"), str(tmp_path / "c2")]) == 0
    run(bases["bert"], "bert", inverted, tmp_path / "inverted-alone")
    for out, alone in ((outs[0], reference), (outs[1], tmp_path / "inverted-alone")):
        files = sorted(p.name for p in alone.iterdir())
        assert files == sorted(p.name for p in out.iterdir())
        for name in files:
            assert (out / name).read_bytes() == (alone / name).read_bytes(), (out, name)
    assert not (tmp_path / "c1").exists() and not (tmp_path / "c2").exists()


def test_cli_a_method_that_names_a_setting_trains_with_it(bases: dict[str, Path],
                                                         train_file: Path, reference: Path,
                                                         tmp_path: Path) -> None:
    """``--methods``: a run whose method names a training setting for the task trains with
    that setting (recorded in its training.json); the others with the model's, byte for
    byte as without --methods."""
    other = {**SETTINGS, "epochs": 1, "learning_rate": 1e-3}
    settings = {"seed": SETTINGS["seed"], "models.training.sentiment": SETTINGS,
                "models.training.named.short": other,
                "methods.registry.special": {"data": "gendered",
                                             "training": {"sentiment": "short"}},
                "models.registry": {"tiny": {"source": "local", "architecture": "bert",
                                             "path": str(bases["bert"])}}}
    outs = [tmp_path / "plain", tmp_path / "special"]
    assert cli.main(["finetune", "--model", "tiny", "--task", "sentiment", "--train",
                     str(train_file), str(train_file), "--methods", "baseline", "special",
                     "--settings", json.dumps(settings), "--out-dir", *map(str, outs),
                     "--checkpoint-dir", str(tmp_path / "c1"), str(tmp_path / "c2")]) == 0
    for name in sorted(p.name for p in reference.iterdir()):
        assert (outs[0] / name).read_bytes() == (reference / name).read_bytes(), name
    recorded = json.loads((outs[1] / "training.json").read_text())
    assert (recorded["settings"]["setting"], recorded["settings"]["epochs"]) == ("short", 1)
    assert (outs[1] / "model.safetensors").read_bytes() != \
        (outs[0] / "model.safetensors").read_bytes()
    code = cli.main(["finetune", "--model", "tiny", "--task", "sentiment", "--train",
                     str(train_file), "--methods", "a", "b", "--settings",
                     json.dumps(settings), "--out-dir", str(tmp_path / "x"),
                     "--checkpoint-dir", str(tmp_path / "c3")])
    assert code == 2


def test_several_runs_are_all_or_none(bases: dict[str, Path], train_file: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    spec = ModelSpec("tiny", str(bases["bert"]), "bert")
    runs = [ft.Run(train_file, tmp_path / f"out{i}", tmp_path / f"ckpt{i}") for i in (1, 2)]
    # bad data in a later run stops the job before the first run trains
    pd.DataFrame({"text": ["fine", "fine"], "label": [0, 2]}).to_parquet(tmp_path / "bad.parquet")
    bad = [runs[0], ft.Run(tmp_path / "bad.parquet", tmp_path / "out2", tmp_path / "ckpt2")]
    with pytest.raises(DataError, match="bad.parquet"):
        ft.finetune_runs(spec, task="sentiment", runs=bad, validation=None,
                         settings=SETTINGS | {"epochs": 1})
    assert not list(tmp_path.glob("out*")) and not list(tmp_path.glob("ckpt*"))
    # a later run that fails takes the finished ones with it
    real = ft.finetune

    def second_fails(*args: object, **kwargs: object) -> None:
        if kwargs["out_dir"] == runs[1].out_dir:
            raise ModelError("the second run failed")
        real(*args, **kwargs)

    monkeypatch.setattr(ft, "finetune", second_fails)
    with pytest.raises(ModelError, match="second run"):
        ft.finetune_runs(spec, task="sentiment", runs=runs, validation=None,
                         settings=SETTINGS | {"epochs": 1})
    assert not runs[0].out_dir.exists() and not runs[1].out_dir.exists()
    # one value per run for every per-run option, or nothing starts
    code = cli.main(["finetune", "--model", str(bases["bert"]), "--task", "sentiment",
                     "--train", str(train_file), str(train_file), "--settings",
                     json.dumps({"seed": 0, "models.registry": {},
                                 "models.training.sentiment": SETTINGS}),
                     "--out-dir", str(tmp_path / "a"), "--checkpoint-dir", str(tmp_path / "c")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "--out-dir (got 1)" in err[-1]
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize(("wanted", "cuda", "bf16_supported", "mode"), [
    (None, False, False, "fp32"), ("auto", False, False, "fp32"),
    ("auto", True, True, "bf16"), ("auto", True, False, "fp16"),
    ("fp32", True, True, "fp32"), ("fp32", False, False, "fp32"),
    ("bf16", False, False, "bf16"), ("bf16", True, True, "bf16")])
def test_precision_modes(wanted, cuda, bf16_supported, mode) -> None:
    s = {} if wanted is None else {"precision": wanted}
    assert ft.precision_mode(s, cuda, bf16_supported) == mode


def test_precision_is_recorded_only_when_not_auto() -> None:
    """``auto`` is what a setting without the key means: the same identity and record."""
    assert ft._check_settings(SETTINGS | {"precision": "auto"}) == SETTINGS
    assert ft._check_settings(SETTINGS | {"precision": "bf16"}) == SETTINGS | {"precision": "bf16"}
    with pytest.raises(ConfigError, match="precision must be one of auto, fp32, bf16 or null, "
                                          "not 'fp16'"):
        ft._check_settings(SETTINGS | {"precision": "fp16"})
    with pytest.raises(ConfigError, match="this GPU has no bf16"):
        ft.precision_mode({"precision": "bf16"}, cuda=True, bf16_supported=False)


def test_gpu_training_uses_the_fused_optimizer(tmp_path: Path) -> None:
    """The same AdamW update in one kernel on a GPU; the loop AdamW on a CPU (its bytes)."""
    s = ft._check_settings(SETTINGS)
    cpu = ft._training_arguments(s, tmp_path, 10, False, cuda=False, precision="fp32")
    assert (cpu.optim, cpu.bf16, cpu.fp16, cpu.use_cpu) == ("adamw_torch", False, False, True)
    half = ft._training_arguments(s, tmp_path, 10, False, cuda=True, precision="fp16")
    assert (half.optim, half.bf16, half.fp16) == ("adamw_torch_fused", False, True)


def test_a_bf16_fine_tune_runs_on_the_cpu_and_says_so(
        bases: dict[str, Path], train_file: Path, reference: Path, tmp_path: Path,
        monkeypatch) -> None:
    """bf16 autocast (the held-back comparison's other arm) trains, records its precision,
    and gives other weights than fp32; an fp32 run after it in the same process is the
    default's bytes (transformers leaves its choice in ACCELERATE_MIXED_PRECISION, which
    made the second run train in bf16), as is a default run under a shell exporting bf16."""
    record = run(bases["bert"], "bert", train_file, tmp_path / "bf16", precision="bf16")
    assert record["device"]["precision"] == "bf16"
    assert record["settings"]["precision"] == "bf16"
    assert not same_model(tmp_path / "bf16", reference)
    record = run(bases["bert"], "bert", train_file, tmp_path / "fp32", precision="fp32")
    assert (record["device"]["precision"], record["settings"]["precision"]) == ("fp32", "fp32")
    # the weights are the default's; config.json differs only by the recorded setting
    assert ((tmp_path / "fp32" / "model.safetensors").read_bytes()
            == (reference / "model.safetensors").read_bytes())
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    run(bases["bert"], "bert", train_file, tmp_path / "default")
    assert same_model(tmp_path / "default", reference)
