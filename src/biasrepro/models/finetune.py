"""Fine-tune a transformer for binary sequence classification.

Both studies fine-tune pretrained classifiers with the Hugging Face ``Trainer``: the
toxicity paper (§4.2) BERT, ALBERT and RoBERTa on Civil Comments, the journal version of
BiasFinder the same architectures on IMDB (with early stopping on a held-out split). This
module does that for any :class:`~biasrepro.models.load.ModelSpec`:

- seeded and deterministic: the same inputs give byte-identical weights on CPU (with the
  same number of torch threads: CPU kernels split their sums by thread);
- resumable: a killed job resumes from its last checkpoint in ``checkpoint_dir`` (when
  that checkpoint belongs to the same job: same base model, task, settings and data) and
  ends with the same weights as an uninterrupted run;
- the saved model carries its training job (base model, task, settings, data hashes) in
  ``config.json`` under ``biasrepro``; ``training.json`` beside it adds what happened
  (steps, resumption, early stopping, validation metrics) without timings, so reruns
  write the same bytes.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro import __version__, config
from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import atomic_outputs, dumps_json, read_parquet, sha256_file, write_json
from biasrepro.metrics.classification import classification_metrics
from biasrepro.models import training
from biasrepro.models.load import ModelSpec, load_classifier

log = logging.getLogger(__name__)

SETTINGS = ("seed", *training.REQUIRED)
#: class names per task, stored as the model's id2label (label 1 is the positive class)
LABEL_NAMES = {"sentiment": ("negative", "positive"), "toxicity": ("non-toxic", "toxic")}
#: without early stopping, a checkpoint is saved this many times per epoch
CHECKPOINTS_PER_EPOCH = 4
JOB_FILE = "job.json"
_CHECKPOINT_FILES = ("model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth",
                     "trainer_state.json")


# -- data --------------------------------------------------------------------------------


def _label_ok(value: Any) -> bool:
    if isinstance(value, str) or pd.isna(value):
        return False
    return value in (0, 1)


def _text_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "missing text (NaN)" if pd.isna(value) else f"text is a {type(value).__name__}"
    return None if value.strip() else "empty text"


def read_labelled(path: Path, *, both_classes: bool = True) -> pd.DataFrame:
    """``text`` and ``label`` of a Parquet file, checked: non-empty texts, labels in {0, 1}."""
    if not path.is_file():
        raise DataError("file not found", file=path)
    df = read_parquet(path)
    for column in ("text", "label"):
        if column not in df.columns:
            raise DataError(f"missing column; found {list(df.columns)}", file=path, column=column)
    if df.empty:
        raise DataError("no rows", file=path)
    for i, value in enumerate(df["text"]):
        if (problem := _text_problem(value)) is not None:
            raise DataError(problem, file=path, row=i + 1, column="text")
    for i, value in enumerate(df["label"]):
        if not _label_ok(value):
            raise DataError(f"label {value!r} is not 0 or 1", file=path, row=i + 1,
                            column="label")
    out = pd.DataFrame({"text": df["text"].astype(str), "label": df["label"].astype(int)})
    present = set(out["label"])
    if both_classes and present != {0, 1}:
        raise DataError(f"only class {present.pop()} is present; both 0 and 1 are needed",
                        file=path, column="label")
    return out


def _hold_out(train: pd.DataFrame, fraction: float, seed: int,
              path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A stratified, seeded split of the training rows (BiasFinder TSE: a held-out 40 %)."""
    from sklearn.model_selection import train_test_split

    try:
        kept, held = train_test_split(np.arange(len(train)), test_size=fraction,
                                      stratify=train["label"], random_state=seed)
    except ValueError as e:
        raise DataError(f"cannot hold out {fraction:g} of the rows for validation ({e})",
                        file=path) from None
    return (train.iloc[np.sort(kept)].reset_index(drop=True),
            train.iloc[np.sort(held)].reset_index(drop=True))


def _describe(df: pd.DataFrame) -> dict[str, Any]:
    return {"rows": len(df), "positive_rate": float(df["label"].mean())}


# -- the job and its checkpoints ---------------------------------------------------------


def _check_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings a job records: every required key, and the optional keys and the
    setting's name only where set (models/training.py)."""
    missing = [k for k in SETTINGS if k not in settings]
    if missing:
        raise ConfigError(f"training settings lack {', '.join(missing)}")
    s = {k: settings[k] for k in SETTINGS}
    s |= {k: settings[k] for k in (*training.OPTIONAL, training.NAME)
          if settings.get(k) is not None}
    if s["truncation_side"] not in ("right", "left"):
        raise ConfigError("truncation_side must be 'right' or 'left', "
                          f"not {s['truncation_side']!r}")
    every = s.get("eval_steps")
    if every is not None and (isinstance(every, bool) or not isinstance(every, int)
                              or every < 1):
        raise ConfigError(f"eval_steps must be a positive integer or null, not {every!r}")
    precision = s.pop("precision", training.AUTO_PRECISION)
    if precision not in training.PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(training.PRECISIONS)} or "
                          f"null, not {precision!r}")
    if precision != training.AUTO_PRECISION:  # auto is recorded as absent: same identity
        s["precision"] = precision
    ratio = s.get("warmup_ratio")
    if ratio is not None:
        if not 0 <= ratio < 1:
            raise ConfigError(f"warmup_ratio must be in [0, 1), not {ratio!r}")
        if s["warmup_steps"]:
            raise ConfigError("give warmup_steps or warmup_ratio, not both "
                              f"(warmup_steps {s['warmup_steps']}, warmup_ratio {ratio})")
    return s


def _weights_sha256(spec: ModelSpec) -> dict[str, str] | None:
    if not spec.is_local:
        return None
    return {p.name: sha256_file(p) for p in sorted(Path(spec.location).glob("*.safetensors"))}


def _max_tokens(config: Any) -> int:
    """Longest input the model's position embeddings allow (RoBERTa offsets them by pad+1)."""
    limit = config.max_position_embeddings
    if config.model_type == "roberta":
        limit -= config.pad_token_id + 1
    return int(limit)


def _complete(checkpoint: Path) -> bool:
    if not all((checkpoint / f).is_file() for f in _CHECKPOINT_FILES):
        return False
    try:
        json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
    except ValueError:
        return False
    return True


def _checkpoint_step(path: Path) -> int:
    return int(path.name.rpartition("-")[2])


def _prepare_checkpoint_dir(checkpoint_dir: Path, job: dict[str, Any]) -> Path | None:
    """The checkpoint to resume from, if ``checkpoint_dir`` holds one of this very job.

    A directory holding another job's checkpoints (other data, settings or base model) is
    cleared; a non-empty directory this module did not create is refused.
    """
    job_file = checkpoint_dir / JOB_FILE
    if checkpoint_dir.exists():
        if not job_file.is_file():
            if any(checkpoint_dir.iterdir()):
                raise ModelError(f"checkpoint directory {checkpoint_dir} is not empty and holds "
                                 f"no {JOB_FILE}: not a fine-tuning checkpoint directory")
        else:
            try:
                stored = json.loads(job_file.read_text(encoding="utf-8"))
            except ValueError:
                stored = {}
            if stored == json.loads(dumps_json(job)):
                candidates = sorted(checkpoint_dir.glob("checkpoint-*"), key=_checkpoint_step)
                complete = [c for c in candidates if _complete(c)]
                for partial in [c for c in candidates if c not in complete]:
                    log.info("removing incomplete checkpoint %s", partial)
                    shutil.rmtree(partial)
                if complete:
                    return complete[-1]
            else:
                differs = sorted(k for k in job if stored.get(k) != json.loads(dumps_json(job[k])))
                log.warning("checkpoint directory %s holds another job's checkpoints "
                            "(different %s); starting afresh", checkpoint_dir, ", ".join(differs))
            shutil.rmtree(checkpoint_dir)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    tmp = checkpoint_dir / f".{JOB_FILE}.tmp"
    write_json(job, tmp)
    os.replace(tmp, job_file)
    return None


# -- training ----------------------------------------------------------------------------


class _Encoded:
    """Tokenized texts with labels, as the Trainer's data collator takes them."""

    def __init__(self, tokenizer: Any, df: pd.DataFrame, max_length: int) -> None:
        self.enc = tokenizer(list(df["text"]), truncation=True, max_length=max_length)
        self.labels = df["label"].tolist()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {k: v[i] for k, v in self.enc.items()} | {"label": self.labels[i]}


def _compute_metrics(prediction: Any) -> dict[str, Any]:
    logits = np.asarray(prediction.predictions, dtype=np.float64)
    logits = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return classification_metrics(prediction.label_ids, probs[:, 1])


def _validation_record(history: list[dict[str, Any]], best_step: int | None,
                       early: bool) -> dict[str, Any] | None:
    """Each evaluation's validation metrics, the best (lowest loss) and the last one."""
    evals = [{k.removeprefix("eval_"): v for k, v in h.items()
              if k.startswith("eval_") and not k.endswith(("_runtime", "_per_second"))}
             | {"epoch": h["epoch"], "step": h["step"]}
             for h in history if "eval_loss" in h]
    if not evals:
        return None
    if best_step is None:
        best = min(evals, key=lambda e: e["loss"])
    else:
        best = next(e for e in evals if e["step"] == best_step)
    return {"history": evals, "best": best, "last": evals[-1],
            "saved_model": "best" if early else "last"}


def _versions() -> dict[str, str]:
    import accelerate
    import tokenizers
    import torch
    import transformers

    return {"biasrepro": __version__, "transformers": transformers.__version__,
            "torch": torch.__version__, "tokenizers": tokenizers.__version__,
            "accelerate": accelerate.__version__}


def _read_data(train: Path, validation: Path | None,
               s: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    """Training rows, validation rows (a file, a held-out share, or none) and their hashes."""
    train_df = read_labelled(train)
    data: dict[str, Any] = {"train": {"file": str(train), "sha256": sha256_file(train)}}
    eval_df = None
    if validation is not None:
        eval_df = read_labelled(validation, both_classes=False)
        data["validation"] = {"file": str(validation), "sha256": sha256_file(validation)}
    elif s["eval_fraction"] > 0:
        train_df, eval_df = _hold_out(train_df, s["eval_fraction"], s["seed"], train)
        data["validation"] = {"held_out_of_train": s["eval_fraction"]}
    if s["early_stopping_patience"] is not None and eval_df is None:
        raise ConfigError("early_stopping_patience needs a validation set "
                          "(a validation file or eval_fraction > 0)")
    return train_df, eval_df, data


def precision_mode(s: dict[str, Any], cuda: bool, bf16_supported: bool) -> str:
    """What a fine-tune computes in: ``bf16`` or ``fp16`` mixed precision (autocast), or
    ``fp32``, from its ``precision`` setting (models/training.py PRECISIONS) and the device."""
    wanted = s.get("precision", training.AUTO_PRECISION)
    if wanted == "fp32":
        return "fp32"
    if wanted == "bf16":
        if cuda and not bf16_supported:
            raise ConfigError("precision bf16: this GPU has no bf16; use auto (fp16) or fp32")
        return "bf16"
    if not cuda:
        return "fp32"
    return "bf16" if bf16_supported else "fp16"


def _forget_mixed_precision() -> None:
    """Let only this run's setting choose its mixed precision. ``TrainingArguments`` takes
    ``ACCELERATE_MIXED_PRECISION`` from the environment unless bf16/fp16 is asked for, and
    writes its choice back there, so a run asking for fp32 after a bf16 one in the same
    process (or under a shell that exported the variable) would train in bf16 without a word."""
    os.environ["ACCELERATE_MIXED_PRECISION"] = "no"


def _training_arguments(s: dict[str, Any], checkpoint_dir: Path, steps_per_epoch: int,
                        evaluate: bool, cuda: bool, precision: str) -> Any:
    """The Trainer's arguments. Validation runs once per epoch, or every ``eval_steps``
    steps (BiasFinder TSE's fine_tune.py: every 500 steps, early stopping with patience 7,
    the best model by validation loss). With early stopping the checkpoints are the
    evaluations' (the best model must be one); otherwise a checkpoint is saved
    CHECKPOINTS_PER_EPOCH times an epoch, so a killed job loses little work. On a GPU the
    optimiser is PyTorch's fused AdamW (one kernel for every parameter: the same update
    rule, fewer launches); on a CPU the loop AdamW, as before."""
    from transformers import TrainingArguments

    early = s["early_stopping_patience"] is not None
    every = max(1, math.ceil(steps_per_epoch / CHECKPOINTS_PER_EPOCH))
    eval_steps = s.get("eval_steps") if evaluate else None
    eval_strategy = ("steps" if eval_steps else "epoch") if evaluate else "no"
    return TrainingArguments(
        output_dir=str(checkpoint_dir),
        num_train_epochs=s["epochs"],
        per_device_train_batch_size=s["batch_size"],
        per_device_eval_batch_size=s["batch_size"],
        learning_rate=s["learning_rate"],
        weight_decay=s["weight_decay"],
        warmup_steps=s["warmup_steps"],
        warmup_ratio=s.get("warmup_ratio") or 0.0,
        lr_scheduler_type="linear",
        optim="adamw_torch_fused" if cuda else "adamw_torch",
        seed=s["seed"],
        data_seed=s["seed"],  # the sampler's own generator: epoch order = f(seed, epoch)
        eval_strategy=eval_strategy,
        eval_steps=eval_steps,
        save_strategy=eval_strategy if early else "steps",
        save_steps=eval_steps if early and eval_steps else every,
        save_total_limit=1,  # the newest is written before older ones are deleted
        save_safetensors=True,
        load_best_model_at_end=early,
        metric_for_best_model="eval_loss" if early else None,
        greater_is_better=False if early else None,
        logging_strategy="steps",
        logging_steps=every,
        disable_tqdm=False,
        report_to=[],
        use_cpu=not cuda,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        dataloader_num_workers=0,
    )


def _callbacks(s: dict[str, Any]) -> list[Any]:
    """Early stopping after ``early_stopping_patience`` evaluations without a lower
    validation loss, or nothing."""
    from transformers import EarlyStoppingCallback

    patience = s["early_stopping_patience"]
    return [] if patience is None else [EarlyStoppingCallback(patience)]


def _write_outputs(model: Any, tokenizer: Any, record: dict[str, Any], out_dir: Path,
                   staging: Path) -> list[str]:
    """The model, its tokenizer and ``training.json``: all in place, or none of them."""
    shutil.rmtree(staging, ignore_errors=True)  # left by a run that failed after training
    model.save_pretrained(staging, safe_serialization=True)
    tokenizer.save_pretrained(staging)
    if getattr(model, "sentdebias", None) is not None:  # the projection trained with it
        from biasrepro.debias import sentdebias

        sentdebias.save(staging, *model.sentdebias)
    files = sorted(p.name for p in staging.iterdir())
    with atomic_outputs(*(out_dir / f for f in files), out_dir / "training.json") as tmps:
        for name, tmp in zip(files, tmps, strict=False):
            shutil.move(staging / name, tmp)
            tmp.chmod(0o644)  # safetensors writes its file private (0600)
        write_json(record, tmps[-1])
    return [*files, "training.json"]


def finetune(spec: ModelSpec, *, task: str, train: Path, validation: Path | None,
             settings: dict[str, Any], out_dir: Path, checkpoint_dir: Path,
             sentdebias: Path | None = None) -> None:
    """Fine-tune ``spec`` on ``train`` and save the classifier and ``training.json`` to ``out_dir``.

    Validation uses ``validation`` if given, else a stratified ``eval_fraction`` of the
    training rows, else none. Nothing is written to ``out_dir`` unless training succeeds;
    ``checkpoint_dir`` is removed afterwards. ``sentdebias``: a subspace file attached to the
    encoder before training (upstream-SentDebias, toxicity paper §6.2), saved with the model.
    """
    import torch
    from transformers import DataCollatorWithPadding, Trainer, set_seed

    if task not in LABEL_NAMES:
        raise ConfigError(f"unknown task {task!r} (known: {', '.join(LABEL_NAMES)})")
    s = _check_settings(settings)
    train, validation = Path(train), None if validation is None else Path(validation)
    train_df, eval_df, data = _read_data(train, validation, s)

    set_seed(s["seed"])  # before loading: a new classification head is initialised from it
    model, tokenizer = load_classifier(spec, num_labels=2)
    subspace = None
    if sentdebias is not None:
        from biasrepro.debias import sentdebias as sd

        if getattr(model, "sentdebias", None) is not None:
            raise ModelError(f"model {spec.name!r} already carries a SentenceDebias subspace")
        subspace, meta = sd.read_file(sentdebias)
        sd.attach(model, subspace, meta)
        subspace = {"file": str(sentdebias), "sha256": sha256_file(sentdebias), **meta}
    if s["max_length"] > _max_tokens(model.config):
        raise ModelError(f"model {spec.name!r} takes at most {_max_tokens(model.config)} "
                         f"tokens, but max_length is {s['max_length']}")
    names = LABEL_NAMES[task]
    model.config.id2label = dict(enumerate(names))
    model.config.label2id = {n: i for i, n in enumerate(names)}
    # (set by the first forward pass otherwise: a job resumed at its end would lack it)
    model.config.problem_type = "single_label_classification"
    base = {"name": spec.name, "location": spec.location, "architecture": spec.architecture,
            "revision": spec.revision, "weights_sha256": _weights_sha256(spec)}
    job = {"base": base, "task": task, "settings": s, "data": data, "sentdebias": subspace}
    resume_from = _prepare_checkpoint_dir(checkpoint_dir, job)

    # saved in tokenizer_config.json, so whoever loads the model truncates as it was trained
    tokenizer.truncation_side = tokenizer.init_kwargs["truncation_side"] = s["truncation_side"]
    tokenizer.model_max_length = s["max_length"]
    train_set = _Encoded(tokenizer, train_df, s["max_length"])
    eval_set = None if eval_df is None else _Encoded(tokenizer, eval_df, s["max_length"])
    steps_per_epoch = math.ceil(len(train_set) / s["batch_size"])
    max_steps = steps_per_epoch * s["epochs"]
    early = s["early_stopping_patience"] is not None
    cuda = torch.cuda.is_available()
    precision = precision_mode(s, cuda, cuda and torch.cuda.is_bf16_supported())
    _forget_mixed_precision()
    trainer = Trainer(
        model=model,
        args=_training_arguments(s, checkpoint_dir, steps_per_epoch, eval_set is not None,
                                 cuda, precision),
        train_dataset=train_set,
        eval_dataset=eval_set,
        data_collator=DataCollatorWithPadding(tokenizer),  # pads each batch to its longest
        processing_class=tokenizer,
        compute_metrics=_compute_metrics if eval_set is not None else None,
        callbacks=_callbacks(s),
    )
    log.info("fine-tuning %s (%s) for %s: %d training rows, %d validation rows; %d epochs x "
             "%d steps of batch %d = %d steps on %s; %s", spec.name, spec.location, task,
             len(train_set), 0 if eval_set is None else len(eval_set), s["epochs"],
             steps_per_epoch, s["batch_size"], max_steps, "cuda" if cuda else "cpu",
             training.describe(s))
    resumed_step = None
    if resume_from is not None:
        resumed_step = _checkpoint_step(resume_from)
        log.info("resuming from checkpoint %s (step %d of %d), not restarting",
                 resume_from, resumed_step, max_steps)
    start = time.perf_counter()
    # Resuming reads the optimizer, scheduler and RNG states with torch.load: transformers
    # 4.57 passes weights_only=True for the first two, and loads rng_state.pth under
    # transformers.trainer.safe_globals() with torch's default weights_only=True (numpy
    # arrays allow-listed), so no pickled code runs. It restores the RNG states and skips
    # the batches already seen, so a resumed run ends with the same weights.
    with warnings.catch_warnings():
        # checkpoints saved within a second of each other: Trainer orders them by step then
        warnings.filterwarnings("ignore", message="mtime may not be reliable")
        trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    seconds = time.perf_counter() - start
    state = trainer.state
    done = state.global_step - (resumed_step or 0)
    log.info("trained %d steps in %.1f s (%.0f samples/s, evaluation and checkpoints "
             "included)", done, seconds, done * len(train_set) / steps_per_epoch / seconds)

    validation_record = _validation_record(state.log_history,
                                           state.best_global_step if early else None, early)
    if validation_record is not None:
        log.info("validation (%s model): %s", validation_record["saved_model"],
                 {k: validation_record[validation_record["saved_model"]][k]
                  for k in ("loss", "accuracy", "roc_auc", "f1")})
    described = {"train": data["train"] | _describe(train_df)}
    if eval_df is not None:
        described["validation"] = data["validation"] | _describe(eval_df)
    record = {
        **job,
        "base": base | {"commit": getattr(model.config, "_commit_hash", None)},
        "data": described,
        "labels": dict(enumerate(names)),
        "training": {"max_steps": max_steps, "steps": state.global_step,
                     "epochs": state.epoch, "resumed_from_step": resumed_step},
        "early_stopping": None if not early else {
            "patience": s["early_stopping_patience"],
            "stopped_early": state.global_step < max_steps,
            "best_step": state.best_global_step},
        "validation": validation_record,
        "versions": _versions(),
        # CPU results are bit-reproducible for a fixed number of threads (reductions are
        # split by thread); Snakemake sets it from the rule's `threads` (OMP_NUM_THREADS)
        "device": {"type": "cuda" if cuda else "cpu", "torch_threads": torch.get_num_threads(),
                   "precision": precision},
    }
    trainer.model.config.biasrepro = job
    files = _write_outputs(trainer.model, tokenizer, record, out_dir, checkpoint_dir / "final")
    shutil.rmtree(checkpoint_dir)
    log.info("wrote %s (%s)", out_dir, ", ".join(files))


@dataclass(frozen=True)
class Run:
    """One fine-tuning of :func:`finetune_runs`: its training data, where it writes, the
    upstream-SentDebias subspace it trains with (or none) and its own validation split (or
    none: the shared one, else a held-out ``eval_fraction``)."""

    train: Path
    out_dir: Path
    checkpoint_dir: Path
    sentdebias: Path | None = None
    validation: Path | None = None
    #: this run's own settings (its method names a training setting), else the shared ones
    settings: dict[str, Any] | None = None


def finetune_runs(spec: ModelSpec, *, task: str, runs: Sequence[Run],
                  validation: Path | None, settings: dict[str, Any]) -> None:
    """:func:`finetune` of ``spec`` for each run in turn, in one process (one start-up for
    all). Each run seeds everything before it loads the model, so it writes exactly what it
    would alone. Every run's data is checked before the first trains; should a later run
    fail, the runs finished before it are removed too: all outputs or none."""
    def validation_of(run: Run) -> Path | None:
        chosen = run.validation if run.validation is not None else validation
        return None if chosen is None else Path(chosen)

    def settings_of(run: Run) -> dict[str, Any]:
        return run.settings if run.settings is not None else settings

    for run in runs:
        _read_data(Path(run.train), validation_of(run), _check_settings(settings_of(run)))
    finished: list[Path] = []
    try:
        for run in runs:
            finetune(spec, task=task, train=run.train, validation=validation_of(run),
                     settings=settings_of(run), out_dir=run.out_dir,
                     checkpoint_dir=run.checkpoint_dir, sentdebias=run.sentdebias)
            finished.append(Path(run.out_dir))
    except BaseException:
        for out_dir in finished:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise


def training_settings(settings: dict[str, Any], model: str, task: str,
                      method: str | None = None) -> dict[str, Any]:
    """The settings ``model`` fine-tunes with for ``task`` (and ``method``): the method's
    named setting where its registry entry names one, else the task's, or the named setting
    the model picks, with the registry entry's overrides; and the seed (models/training.py)."""
    registry = config.need(settings, "models.registry")
    if model not in registry:
        raise ConfigError(f"model {model!r} is not in models.registry "
                          f"(registered: {', '.join(sorted(registry))})")
    task_training = config.need(settings, f"models.training.{task}")
    own = registry[model].get("training", {}).get(task)
    choice = None
    if method is not None:
        entry = config.optional(settings, f"methods.registry.{method}", None) or {}
        choice = training.method_choice({method: entry}, method, task)
    named = {name: config.need(settings, f"models.training.named.{name}")
             for name in training.used_names(task_training, own, choice)}
    return training.resolve(task_training, own, named, seed=config.need(settings, "seed"),
                            task=task, model=model, method_choice=choice,
                            method=method or "METHOD")
