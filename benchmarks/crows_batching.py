"""CrowS-Pairs masked scoring: every mask of a sentence in one pass vs one pass per mask.

Speed: ``representation.crows.masked_log_probs`` puts all masked copies of a
sentence through the encoder together and applies the masked-LM head only at the masked
positions. The baseline, measured in the same run on the same model and token ids, is what
bias-bench and Nangia et al. do: one full forward pass per masked token.

The model is a randomly initialised masked LM of the chosen architecture with a real-sized
vocabulary (the head's cost depends on it); ``--hidden``/``--layers`` set its size (768/12
is bert-base). Sentences are random token ids of CrowS-like length. The script checks the
two paths agree (exit status 1 when a log-probability differs by more than
``TOLERANCE``) and prints the times and the ratio. Seeded; run
``python benchmarks/crows_batching.py``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch
from transformers import AutoConfig, AutoModelForMaskedLM

from biasrepro.representation.crows import masked_log_probs

#: largest |log-probability difference| allowed between the two paths (float32 sums in
#: another order, and on a GPU other kernels for another batch shape)
TOLERANCE = 1e-3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="bert", choices=["bert", "roberta", "albert"])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--length", type=int, default=20, help="tokens per sentence")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.manual_seed(0)
    extra = {"embedding_size": 128} if args.arch == "albert" else {}
    config = AutoConfig.for_model(args.arch, vocab_size=args.vocab, hidden_size=args.hidden,
                                  num_hidden_layers=args.layers,
                                  num_attention_heads=max(1, args.hidden // 64),
                                  intermediate_size=4 * args.hidden,
                                  max_position_embeddings=args.length + 8, **extra)
    model = AutoModelForMaskedLM.from_config(config).eval().to(args.device)
    rng = np.random.default_rng(0)
    sentences = [rng.integers(5, args.vocab, args.length).tolist()
                 for _ in range(args.sentences)]
    positions = list(range(1, args.length - 1))      # every token but the first and last

    timings, results = {}, {}
    for name, batched in (("one pass per mask", False), ("batched", True)):
        masked_log_probs(model, sentences[0], positions, 4, batched=batched)  # warm-up
        start = time.perf_counter()
        results[name] = [masked_log_probs(model, ids, positions, 4, batched=batched)
                         for ids in sentences]  # each call ends with a copy to the host
        timings[name] = time.perf_counter() - start
    diff = max(float(np.max(np.abs(a - b))) for a, b in
               zip(results["one pass per mask"], results["batched"], strict=True))
    masks = len(sentences) * len(positions)
    print(f"{args.arch} on {args.device}: hidden {args.hidden}, {args.layers} layers, "
          f"vocabulary {args.vocab}; "
          f"{len(sentences)} sentences x {len(positions)} masks ({masks} masked tokens)")
    for name, seconds in timings.items():
        print(f"  {name:18s} {seconds:7.2f} s  ({masks / seconds:8.1f} masked tokens/s)")
    print(f"max |log-probability difference|: {diff:.2e}")
    print(f"speed-up: {timings['one pass per mask'] / timings['batched']:.1f}x")
    if not diff <= TOLERANCE:                          # NaN fails too
        sys.exit(f"the batched and the one-pass-per-mask log-probabilities disagree by "
                 f"{diff:.2e} (> {TOLERANCE:g})")


if __name__ == "__main__":
    main()
