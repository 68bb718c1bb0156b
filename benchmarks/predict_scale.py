"""Peak memory and time of ``biasrepro predict`` on a paper-sized file of BiasFinder mutants.

Generates, seeded, a Parquet file of ``--rows`` mutants (default 1,500,000, the size of
BiasFinder's three characteristics on IMDB's test split): review templates of 100-200 words
built from the world lexicon's frames, each filled with ``--per-template`` different people
and their pronouns, a few mutants repeated exactly, so nearly every row is a near-duplicate
of its template's others. With it, a randomly initialised BERT small enough to score them in
minutes on two cores (hidden 16, 1 layer, 2 heads, WordPiece vocabulary of 4,000 trained on
the mutants, max length 64 tokens). Then measures, each in a fresh process:

* the model alone: ``biasrepro predict`` on the first 1,000 mutants (imports and the model);
* the harness: ``biasrepro predict`` on the whole file (read, tokenised, scored and written
  a chunk of rows at a time);
* the naive baseline: the same scoring with the whole input as one chunk, as prediction
  worked before (every text and token sequence held at once), on the first
  ``--naive-rows`` mutants, and the harness on that file too for the ratio.

It prints wall time and peak resident memory of each; the target for 1.5 M mutants is the
model alone plus 2 GB. A paper model (BERT-base, 512 tokens) keeps more per chunk (its
tokens) but the same per distinct input. Run::

    python benchmarks/predict_scale.py                 # about 10 min on 2 cores
    python benchmarks/predict_scale.py --rows 20000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from child import measure, tiny_bert

HERE = Path(__file__).resolve().parent

NAIVE = """
import sys
from pathlib import Path
from biasrepro.models.load import resolve
from biasrepro.models.predict import predict_models
predict_models([resolve(sys.argv[1], None)], [Path(sys.argv[2])], [Path(sys.argv[3])],
               chunk_rows=1 << 62)
"""


def generate(path: Path, rows: int, per_template: int, seed: int) -> dict[str, int]:
    """Write ``rows`` mutants to ``path``; the first rows of a larger run are the same."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, str(HERE))
    from predict_throughput import invented_words, templates

    from biasrepro.data.world.vocabulary import FIRST_NAMES, PRONOUNS, SURNAMES

    rng = random.Random(seed)
    words = invented_words(rng, 6000)
    people = [(f"{first} {last}", gender) for gender, names in sorted(FIRST_NAMES.items())
              for first in names for last in SURNAMES]
    schema = pa.schema([("id", pa.string()), ("template_id", pa.int64()),
                        ("text", pa.string()), ("label", pa.int64())])
    written = 0
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        while written < rows:
            ids, template_ids, texts, labels = [], [], [], []
            while written + len(texts) < rows and len(texts) < 50_000:
                t = (written + len(texts)) // per_template
                (tmpl,) = templates(rng, 1, words)
                label = int(rng.random() < 0.5)
                filled: list[str] = []
                for name, gender in rng.sample(people, per_template):
                    if filled and rng.random() < 0.02:  # an exact duplicate, as names repeat
                        filled.append(rng.choice(filled))
                        continue
                    text = tmpl.replace("{name}", name)
                    for slot, word in PRONOUNS[gender].items():
                        text = text.replace("{" + slot + "}", word)
                    filled.append(text)
                filled = filled[:rows - written - len(texts)]
                ids += [f"t{t}-m{k}" for k in range(len(filled))]
                template_ids += [t] * len(filled)
                texts += filled
                labels += [label] * len(filled)
            writer.write_table(pa.table({"id": ids, "template_id": template_ids,
                                         "text": texts, "label": labels}, schema=schema))
            written += len(texts)
    return {"rows": written, "words": len(words)}


def build_model(data: Path, out_dir: Path, seed: int) -> None:
    """A random tiny BERT with a WordPiece vocabulary trained on the first mutants."""
    import pyarrow.parquet as pq

    texts = next(pq.ParquetFile(data).iter_batches(5000, columns=["text"]))
    tiny_bert(texts.column(0).to_pylist(), out_dir, seed=seed, max_length=64, positions=64)


def run(rows: int, naive_rows: int | None = None, per_template: int = 60, seed: int = 0,
        workdir: Path | None = None) -> dict[str, float]:
    """Generate, then measure the model alone, the harness and the naive baseline (on
    ``naive_rows`` mutants, default all; 0 measures no baseline)."""
    naive_rows = rows if naive_rows is None else min(rows, naive_rows)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp_path = Path(tmp)
        files = {"small": min(rows, 1000), "full": rows}
        if naive_rows:
            files["naive"] = naive_rows
        started = time.perf_counter()
        for name, n in files.items():
            if name == "full" or n < rows:
                subprocess.run([sys.executable, __file__, "--generate",
                                str(tmp_path / f"{name}.parquet"), "--rows", str(n),
                                "--per-template", str(per_template), "--seed", str(seed)],
                               check=True, capture_output=True, text=True)
        for name, n in files.items():
            if n == rows and name != "full":
                os.link(tmp_path / "full.parquet", tmp_path / f"{name}.parquet")
        model = tmp_path / "model"
        subprocess.run([sys.executable, __file__, "--build-model", str(model), "--data",
                        str(tmp_path / "full.parquet"), "--seed", str(seed)],
                       check=True, capture_output=True, text=True)
        generated = time.perf_counter() - started

        def harness(name: str) -> tuple[float, float, str]:
            return measure([sys.executable, "-m", "biasrepro", "predict", "--model",
                            str(model), "--input", str(tmp_path / f"{name}.parquet"),
                            "--out", str(tmp_path / f"{name}-out.parquet")],
                           tmp_path / f"{name}.log")

        alone = harness("small")
        full = harness("full")
        log = next((line for line in full[2].splitlines() if "unique texts" in line), "")
        result = {"rows": rows, "file_mb": (tmp_path / "full.parquet").stat().st_size / 2**20,
                  "generate_s": generated,
                  "log": log.split(".parquet: ", 1)[-1].split(" -> ")[0],
                  "model_s": alone[0], "model_peak_mb": alone[1],
                  "harness_s": full[0], "harness_peak_mb": full[1], "naive_rows": naive_rows}
        if not naive_rows:
            return result
        same_size = full if naive_rows == rows else harness("naive")
        naive = measure([sys.executable, "-c", NAIVE, str(model),
                         str(tmp_path / "naive.parquet"), str(tmp_path / "naive-out.parquet")],
                        tmp_path / "whole-input.log")
        return result | {"harness_naive_rows_s": same_size[0],
                         "harness_naive_rows_peak_mb": same_size[1],
                         "naive_s": naive[0], "naive_peak_mb": naive[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_500_000)
    parser.add_argument("--naive-rows", type=int, default=300_000,
                        help="mutants for the naive baseline (at most --rows; 0: none)")
    parser.add_argument("--per-template", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--build-model", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate is not None:
        print(json.dumps(generate(args.generate, args.rows, args.per_template, args.seed)))
        return
    if args.build_model is not None:
        build_model(args.data, args.build_model, args.seed)
        return
    r = run(args.rows, args.naive_rows, args.per_template, args.seed)
    print(f"{r['rows']:,} mutants ({r['file_mb']:.0f} MB Parquet, generated with the model "
          f"in {r['generate_s']:.0f} s); {r['log']}")
    print(f"model alone (1,000 mutants): {r['model_s']:.1f} s, peak {r['model_peak_mb']:,.0f} MB")
    print(f"predict, {r['rows']:,} mutants: {r['harness_s']:.1f} s, peak "
          f"{r['harness_peak_mb']:,.0f} MB, {r['harness_peak_mb'] - r['model_peak_mb']:,.0f} MB "
          "beyond the model (target 2,048 MB)")
    if not r["naive_rows"]:
        return
    beyond = r["harness_naive_rows_peak_mb"] - r["model_peak_mb"]
    naive_beyond = r["naive_peak_mb"] - r["model_peak_mb"]
    print(f"naive whole-input pass, {r['naive_rows']:,} mutants: {r['naive_s']:.1f} s, peak "
          f"{r['naive_peak_mb']:,.0f} MB ({naive_beyond:,.0f} MB beyond the model); predict "
          f"on them: {r['harness_naive_rows_s']:.1f} s, peak "
          f"{r['harness_naive_rows_peak_mb']:,.0f} MB ({beyond:,.0f} MB beyond the model, "
          f"{beyond / max(1.0, naive_beyond):.2f}x the naive pass's)")

if __name__ == "__main__":
    main()
