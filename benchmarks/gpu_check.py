"""GPU check: fine-tune a base-size model, score 100k texts, report speed.

One prepared script for a machine with a GPU: it builds a randomly initialised BERT of
bert-base size (hidden 768, 12 layers, 12 heads) with the project's WordPiece tokenizer
trained on the planted-bias world's reviews, fine-tunes it for sentiment through
:func:`biasrepro.models.finetune.finetune` (the workflow's code path: Trainer, bf16/fp16 on
the GPU) for a few hundred steps, then scores 100,000 distinct review variants with
:func:`biasrepro.models.predict.predict_proba`, and prints samples/s and peak GPU memory
(also written as JSON with ``--out``). Random weights are fine: speed and memory do not
depend on them. ``--small`` shrinks everything so the script itself can be tested on a CPU.

    python benchmarks/gpu_check.py --out gpu_check.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import yaml
from transformers import BertConfig, BertForSequenceClassification

from biasrepro.data.world import reviews
from biasrepro.data.world.vocabulary import FIRST_NAMES
from biasrepro.models.finetune import finetune
from biasrepro.models.load import ModelSpec
from biasrepro.models.predict import score_texts
from biasrepro.models.tokenizers import train_tokenizer

REPO = Path(__file__).resolve().parents[1]
BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
        "intermediate_size": 3072}
SMALL = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
         "intermediate_size": 64}


def world_reviews(seed: int) -> dict[str, pd.DataFrame]:
    settings = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["world"]["reviews"]
    splits, _, _ = reviews.build(settings, seed=seed)
    return splits


def variants(texts: list[str], n: int, seed: int) -> list[str]:
    """``n`` distinct texts: reviews with a name and a counter appended (mutant-like)."""
    rng = random.Random(seed)
    names = [name for names in FIRST_NAMES.values() for name in names]
    return [f"{texts[i % len(texts)]} {rng.choice(names)} said so, take {i}." for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=5, help="5 epochs x 63 batches = 315 steps")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--score", type=int, default=100_000, help="texts to score")
    p.add_argument("--small", action="store_true", help="tiny sizes, to test on a CPU")
    p.add_argument("--seed", type=int, default=20231105)
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = p.parse_args(argv)
    sizes = SMALL if args.small else BASE
    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    print(f"device: {device}; torch {torch.__version__}; sizes {sizes}", flush=True)

    splits = world_reviews(args.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tokenizer = train_tokenizer("bert", splits["train"]["text"].tolist(), vocab_size=8000,
                                    max_length=args.max_length)
        config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=args.max_length,
                            pad_token_id=tokenizer.pad_token_id, num_labels=2, **sizes)
        torch.manual_seed(args.seed)
        BertForSequenceClassification(config).save_pretrained(tmp / "base")
        tokenizer.save_pretrained(tmp / "base")
        splits["train"].to_parquet(tmp / "train.parquet")
        settings = {"seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size,
                    "learning_rate": 2e-5, "max_length": args.max_length, "warmup_steps": 0,
                    "weight_decay": 0.0, "early_stopping_patience": None,
                    "eval_fraction": 0.0, "truncation_side": "right"}
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        finetune(ModelSpec("base", str(tmp / "base"), "bert"), task="sentiment",
                 train=tmp / "train.parquet", validation=None, settings=settings,
                 out_dir=tmp / "tuned", checkpoint_dir=tmp / "checkpoints")
        train_s = time.perf_counter() - start
        record = json.loads((tmp / "tuned" / "training.json").read_text())
        steps = record["training"]["steps"]
        trained = len(splits["train"]) * args.epochs
        train_peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None

        texts = variants(splits["test"]["text"].tolist(), args.score, args.seed)
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        probs, stats = score_texts(str(tmp / "tuned"), texts, progress=True)
        score_peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None

    figures = {
        "device": device, "sizes": sizes, "train_examples": trained, "train_steps": steps,
        "train_seconds": round(train_s, 1), "train_samples_per_s": round(trained / train_s, 1),
        "train_peak_gib": train_peak, "scored_texts": len(texts),
        "score_seconds": round(stats.seconds, 1), "score_texts_per_s": round(stats.texts_per_s, 1),
        "score_peak_gib": score_peak, "mean_probability": float(probs.mean()),
    }
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
