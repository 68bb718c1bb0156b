"""Precision check: does bf16 mixed-precision fine-tuning change the toxicity study's numbers?

The held-back comparison of ``precision: fp32`` and ``precision: bf16`` fine-tunes
(models/training.py PRECISIONS). It builds the planted-bias world's comments
(:func:`biasrepro.data.world.comments.generate`, ``world.comments`` of config/config.yaml)
and prepares them as the workflow does (:func:`biasrepro.data.civil_comments.prepare`:
cleaning, the stratified train/validation/test split and ``fairness_original``, the test
rows about exactly one identity). A randomly initialised BERT with the project's WordPiece
tokenizer trained on the training comments is then fine-tuned twice through
:func:`biasrepro.models.finetune.finetune` with the study's toxicity setting
(``models.training.toxicity``), the same seed, data and settings but for ``precision``:
``fp32`` and ``bf16`` (bf16 autocast, also on a CPU). Both models score the held-back test
split with :func:`biasrepro.models.predict.score_texts`; from each arm's probabilities come
the numbers the study reports, by the study's own functions: accuracy, F1 and ROC-AUC of
the test split (:func:`biasrepro.metrics.classification.classification_metrics`, as
``biasrepro evaluate``), and on the original fairness set
(:func:`biasrepro.perturb.datasets.original_fairness_set`) the FPR/TPR/AUC gaps per
attribute, the per-group rates and Borkan et al.'s AUCs
(:func:`biasrepro.fairness.evaluation.evaluate`, as the fairness report). It prints each
value for fp32 and bf16 with their absolute difference, and the largest absolute difference
of the gaps and of the test AUC (also written as JSON with ``--out``, with each arm's weight
digest and the precision its ``training.json`` records).

    python benchmarks/precision_check.py --out precision_check.json
    python benchmarks/precision_check.py --small

Base sizes (bert-base: hidden 768, 12 layers) by default, for a GPU with bf16; ``--small``
trains a tiny BERT (hidden 32, one layer) for a CPU. A bare BERT learns the world's toxic
cues (insults) from scratch in a few epochs; ``--learning-rate`` defaults to the study's
setting for the small model and to 5e-5 for the base one (1e-3 diverges at 12 layers).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from transformers import BertConfig, BertForSequenceClassification

from biasrepro import config as cfg
from biasrepro.data import civil_comments
from biasrepro.data.world import comments
from biasrepro.fairness.evaluation import evaluate
from biasrepro.io import sha256_file
from biasrepro.metrics.classification import classification_metrics
from biasrepro.models.finetune import finetune
from biasrepro.models.load import ModelSpec
from biasrepro.models.predict import score_texts
from biasrepro.models.tokenizers import train_tokenizer
from biasrepro.perturb.datasets import original_fairness_set

REPO = Path(__file__).resolve().parents[1]
BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
        "intermediate_size": 3072}
SMALL = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
         "intermediate_size": 64}
ARMS = ("fp32", "bf16")
VOCAB_SIZE = 4000  # models.embedded.vocab_size


def world_data(settings: dict[str, Any], out: Path) -> dict[str, pd.DataFrame]:
    """The world's comments prepared as the workflow prepares them: ``train``, ``test`` and
    ``fairness`` (the original fairness set of the configured toxicity attributes)."""
    prep = settings["preprocess"]["civil_comments"]
    comments.generate(settings["world"]["comments"], seed=settings["seed"],
                      identities=settings["identities"], attributes=settings["attributes"],
                      preprocess=prep, out_dir=out / "raw")
    civil_comments.prepare(out / "raw" / "all_data.csv", fmt="csv", member=None,
                           identities=settings["identities"], settings=prep,
                           seed=settings["seed"], out_dir=out / "data")
    fairness = original_fairness_set(pd.read_parquet(out / "data" / "fairness_original.parquet"),
                                     attributes(settings), identity_column="identity",
                                     file="fairness_original.parquet")
    return {"train": pd.read_parquet(out / "data" / "train.parquet"),
            "test": pd.read_parquet(out / "data" / "test.parquet"), "fairness": fairness}


def attributes(settings: dict[str, Any]) -> dict[str, Any]:
    """The attributes the study measures for toxicity (``fairness.attributes.toxicity``)."""
    return {a: settings["attributes"][a] for a in settings["fairness"]["attributes"]["toxicity"]}


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def reported(settings: dict[str, Any], data: dict[str, pd.DataFrame], test_probs,
             fairness_probs) -> dict[str, float | None]:
    """Every number of one arm, by name: the test split's classification metrics and the
    original fairness set's gaps, per-group rates and Borkan AUCs (NaN as None)."""
    out: dict[str, float | None] = {}
    metrics = classification_metrics(data["test"]["label"].to_numpy(), test_probs)
    for key in ("roc_auc", "accuracy", "f1"):
        out[f"test/{key}"] = None if metrics[key] is None else _finite(metrics[key])
    fair, boot = settings["fairness"], settings["fairness"]["bootstrap"]
    result = evaluate(data["fairness"].assign(prob=fairness_probs), attributes(settings),
                      threshold=fair["threshold"], resamples=boot["resamples"],
                      confidence=boot["confidence"], seed=settings["seed"])
    for row in result["gaps"].itertuples():
        out[f"gap/{row.attribute}/{row.metric}"] = _finite(row.value)
    for row in result["groups"].itertuples():
        for metric in ("fpr", "tpr", "auc"):
            out[f"group/{row.group}/{metric}"] = _finite(getattr(row, metric))
    for row in result["borkan"].itertuples():
        for metric in ("subgroup_auc", "bpsn_auc", "bnsp_auc"):
            out[f"borkan/{row.identity}/{metric}"] = _finite(getattr(row, metric))
    return out


def weights_digest(model_dir: Path) -> str:
    """sha256 of the saved weights (model.safetensors)."""
    return sha256_file(model_dir / "model.safetensors")


def compare(arms: dict[str, dict[str, float | None]]) -> dict[str, Any]:
    """Per value: fp32, bf16 and |fp32 - bf16| (None where either is undefined); the largest
    absolute difference of the gaps and of the test AUC."""
    rows = {}
    for key in arms["fp32"]:
        a, b = arms["fp32"][key], arms["bf16"][key]
        rows[key] = {"fp32": a, "bf16": b,
                     "abs_diff": None if a is None or b is None else abs(a - b)}
    gap_diffs = [r["abs_diff"] for k, r in rows.items()
                 if k.startswith("gap/") and r["abs_diff"] is not None]
    worst_gap = max(((r["abs_diff"], k) for k, r in rows.items()
                     if k.startswith("gap/") and r["abs_diff"] is not None), default=(None, None))
    return {"values": rows,
            "max_abs_diff": {"gaps": max(gap_diffs) if gap_diffs else None,
                             "gaps_at": worst_gap[1],
                             "test_auc": rows["test/roc_auc"]["abs_diff"]}}


def _shown(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small", action="store_true", help="tiny sizes, to run on a CPU")
    p.add_argument("--epochs", type=int, default=None,
                   help="fine-tuning epochs (default: models.training.toxicity.epochs)")
    p.add_argument("--learning-rate", type=float, default=None,
                   help="default: models.training.toxicity.learning_rate with --small, "
                   "else 5e-5")
    p.add_argument("--seed", type=int, default=None, help="default: the configuration's seed")
    p.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = p.parse_args(argv)
    start = time.perf_counter()
    settings = cfg.load(args.config)
    if args.seed is not None:
        settings["seed"] = args.seed
    seed = settings["seed"]
    sizes = SMALL if args.small else BASE
    training = dict(settings["models"]["training"]["toxicity"])
    if args.epochs is not None:
        training["epochs"] = args.epochs
    training["learning_rate"] = (args.learning_rate if args.learning_rate is not None
                                 else training["learning_rate"] if args.small else 5e-5)
    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    print(f"device: {device}; torch {torch.__version__}; {torch.get_num_threads()} threads; "
          f"sizes {sizes}; seed {seed}", flush=True)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        data = world_data(settings, tmp)
        print(f"world comments: train {len(data['train'])}, test {len(data['test'])} "
              f"(positive rate {data['test']['label'].mean():.3f}), fairness set "
              f"{len(data['fairness'])}", flush=True)
        max_length = training["max_length"]
        tokenizer = train_tokenizer("bert", data["train"]["text"].tolist(),
                                    vocab_size=VOCAB_SIZE, max_length=max_length)
        config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=max_length,
                            pad_token_id=tokenizer.pad_token_id, num_labels=2, **sizes)
        torch.manual_seed(seed)
        BertForSequenceClassification(config).save_pretrained(tmp / "base")
        tokenizer.save_pretrained(tmp / "base")
        spec = ModelSpec("random-bert", str(tmp / "base"), "bert")

        arms, record = {}, {}
        for arm in ARMS:
            arm_start = time.perf_counter()
            finetune(spec, task="toxicity", train=tmp / "data" / "train.parquet",
                     validation=None, settings={"seed": seed, **training, "precision": arm},
                     out_dir=tmp / arm, checkpoint_dir=tmp / f"checkpoints-{arm}")
            train_s = time.perf_counter() - arm_start
            trained = json.loads((tmp / arm / "training.json").read_text())
            # the same scoring for both arms: score_texts, the workflow's predict path
            test_probs, _ = score_texts(str(tmp / arm), data["test"]["text"].tolist())
            fair_probs, _ = score_texts(str(tmp / arm), data["fairness"]["text"].tolist())
            arms[arm] = reported(settings, data, test_probs, fair_probs)
            record[arm] = {"precision": trained["device"]["precision"],
                           "device": trained["device"]["type"],
                           "steps": trained["training"]["steps"],
                           "weights_sha256": weights_digest(tmp / arm),
                           "train_seconds": round(train_s, 1),
                           "seconds": round(time.perf_counter() - arm_start, 1)}
            print(f"{arm}: trained {record[arm]['steps']} steps in {train_s:.1f} s "
                  f"(training.json precision {record[arm]['precision']}); test AUC "
                  f"{_shown(arms[arm]['test/roc_auc'])}", flush=True)

    result = compare(arms)
    print(f"\n{'value':34} {'fp32':>8} {'bf16':>8} {'|diff|':>9}")
    for key, row in result["values"].items():
        print(f"{key:34} {_shown(row['fp32']):>8} {_shown(row['bf16']):>8} "
              f"{_shown(row['abs_diff'], 6):>9}")
    worst = result["max_abs_diff"]
    print(f"\nlargest |fp32 - bf16| of the fairness gaps: {_shown(worst['gaps'], 6)} "
          f"({worst['gaps_at']}); of the test AUC: {_shown(worst['test_auc'], 6)}")
    same = record["fp32"]["weights_sha256"] == record["bf16"]["weights_sha256"]
    print(f"weights identical: {same}")
    seconds = time.perf_counter() - start
    print(f"total {seconds:.1f} s", flush=True)
    figures = {"device": device, "torch": str(torch.__version__),
               "torch_threads": torch.get_num_threads(), "sizes": sizes, "seed": seed,
               "training": training, "rows": {k: len(v) for k, v in data.items()},
               "arms": {arm: record[arm] | {"values": arms[arm]} for arm in ARMS},
               **result, "seconds": round(seconds, 1),
               "command": "python benchmarks/precision_check.py " + " ".join(sys.argv[1:])}
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
