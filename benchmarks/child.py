"""What the scale benchmarks share: the wall time, CPU time and peak memory of one child
process (:func:`measure`), and the random tiny BERT they score with (:func:`tiny_bert`).

Linux counts the parent's resident memory at the time of the fork into the child's peak
(``ru_maxrss``), so a benchmark keeps its measuring process small and makes its data and
models in children too.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple


class Child(NamedTuple):
    """What one child process cost, and what it wrote (stdout and stderr, in order)."""

    seconds: float
    peak_mb: float
    log: str
    #: user + system: what a run costs on shared cores, where wall time also counts waits
    cpu_seconds: float


def measure(argv: list[str], log: Path | None = None) -> Child:
    """Run ``argv`` (one torch/BLAS thread unless ``OMP_NUM_THREADS`` is set), keeping its
    output in ``log`` (a temporary file when None); it must succeed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = log or Path(tmp) / "child.log"
        with open(path, "wb") as out:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    env={"OMP_NUM_THREADS": "1", **os.environ})
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
        text = path.read_text(encoding="utf-8", errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[:5])} failed:\n{text[-2000:]}")
    return Child(elapsed, usage.ru_maxrss / 1024, text, usage.ru_utime + usage.ru_stime)


def tiny_bert(texts: list[str], out_dir: Path, *, seed: int, max_length: int,
              positions: int, masked_lm: bool = False) -> None:
    """A random BERT of hidden size 16 and one layer, with a WordPiece vocabulary of 4,000
    trained on ``texts``: a sequence classifier, or with ``masked_lm`` a masked LM."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification

    from biasrepro.models.tokenizers import train_tokenizer

    tokenizer = train_tokenizer("bert", texts, vocab_size=4000, max_length=max_length)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32,
                        max_position_embeddings=positions, num_labels=2,
                        pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = (BertForMaskedLM if masked_lm else BertForSequenceClassification)(config)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
