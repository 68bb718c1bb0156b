"""Peak memory and time of ``biasrepro biasfinder btc`` on paper-sized BiasFinder mutants.

Generates, seeded, in the real formats of the ``templates``, ``mutants`` and ``predict``
steps: ``--rows`` occupation mutants (default 1,500,000, the size of BiasFinder's three
characteristics on IMDB's test split; occupations alone give ~1.1 M) of ``--per-template``
mutants each (default 100: one per occupation, so ~15,000 templates), every text a review of
about 1,500 characters with its occupation filled in, and the predictions of a near-random
model (probability uniform on [0, 1]), under which about half of a template's
cross-class pairs are BTCs: ~2,500 per template, ~37 M in all. Then measures, each in a
fresh process:

* the harness: ``biasrepro biasfinder btc`` on the whole file (the mutants' texts not read,
  the BTC pairs built and written by mutant id a chunk of templates at a time);
* ``biasrepro biasfinder annotate sample`` of 400 of those BTCs (the pair file read a batch
  at a time, the sampled pairs' texts joined from the mutants file);
* the naive baseline: BTC pairs as they were written before, every pair with both mutants'
  texts from one whole-input join, on the first ``--naive-rows`` mutants, and the harness on
  that file too for the ratio.

It prints wall time, peak resident memory and the pair file's size of each; the target for
1.5 M mutants is 2 GB (the step runs in a 16 GB ``light`` job). Run::

    python benchmarks/btc_scale.py                 # about 3 min on 2 cores
    python benchmarks/btc_scale.py --rows 20000 --naive-rows 20000
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

from child import measure

HERE = Path(__file__).resolve().parent

#: the pair step as it was: every pair with both texts, one whole-input hash join
NAIVE = """
import sys
import numpy as np
import pandas as pd
from biasrepro.biasfinder import btc, mutants
from biasrepro.io import read_parquet, write_parquet

muts = mutants.read_mutants(sys.argv[1])
df = btc.join_predictions(muts, read_parquet(sys.argv[2]))
df = df.sort_values(["template_id", "id"], kind="stable").reset_index(drop=True)
template = pd.factorize(df["template_id"])[0]
cls = pd.factorize(df["class"])[0]
pred = df["pred"].to_numpy()
pos, neg = np.flatnonzero(pred == 1), np.flatnonzero(pred == 0)
joined = pd.DataFrame({"t": template[pos], "a": pos}).merge(
    pd.DataFrame({"t": template[neg], "b": neg}), on="t", how="inner")
a, b = joined["a"].to_numpy(), joined["b"].to_numpy()
keep = cls[a] != cls[b]
first, second = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
align = df["align"].to_numpy(dtype=object)
order = np.lexsort((second, first))
first, second = first[order], second[order]
col = lambda name, rows: df[name].array.take(rows)
out = pd.DataFrame({
    "template_id": col("template_id", first), "characteristic": col("characteristic", first),
    "id_1": col("id", first), "id_2": col("id", second),
    "class_1": col("class", first), "class_2": col("class", second),
    "aligned": align[first] == align[second],
    "pred_1": col("pred", first), "pred_2": col("pred", second),
    "prob_1": col("prob", first), "prob_2": col("prob", second),
    "text_1": col("text", first), "text_2": col("text", second)})
for name in ("template_id", "characteristic", "id_1", "id_2", "class_1", "class_2",
             "text_1", "text_2"):
    out[name] = out[name].astype(str)
write_parquet(out, sys.argv[3])
print(len(out))
"""

WORDS = ("the film story plot acting actor scene camera director music score ending script "
         "character role screen minutes hour performance dialogue moment audience picture "
         "was is were had has not very really quite rather too so and but or yet with "
         "without about after before during through over under between good bad great "
         "poor fine dull bright slow quick funny sad long short strange familiar").split()


def generate(out: Path, rows: int, per_template: int, seed: int) -> dict[str, int]:
    """Templates, mutants and predictions for ``rows`` occupation mutants under ``out``;
    the first rows of a larger run are the same."""
    import random

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from biasrepro.biasfinder.mutants import COLUMNS
    from biasrepro.biasfinder.templates import COLUMNS as TEMPLATE_COLUMNS

    sys.path.insert(0, str(HERE))
    from predict_throughput import invented_words

    rng = random.Random(seed)
    rare = invented_words(rng, 6000)  # names, places, coinages: reviews differ as real ones
    occupations = [f"{rng.choice('bcdfglmprstv')}{rng.choice('aeiou')}"
                   f"{rng.choice('nrstl')}{rng.choice(['er', 'ist', 'ian', 'or'])}{k}"
                   for k in range(max(per_template, 120))]
    n_templates = -(-rows // per_template)
    probs = np.random.default_rng(seed).random(rows)  # a near-random model
    str_ = pa.string()
    schemas = {
        "mutants": pa.schema([(c, pa.int64() if c == "label" else str_) for c in COLUMNS]),
        "templates": pa.schema([(c, pa.int64() if c == "label" else str_)
                                for c in TEMPLATE_COLUMNS]),
        "predictions": pa.schema([("id", str_), ("label", pa.int64()), ("prob", pa.float64()),
                                  ("pred", pa.int64()), ("input", pa.int64())]),
    }
    writers = {name: pq.ParquetWriter(out / f"{name}.parquet", schema, compression="zstd")
               for name, schema in schemas.items()}
    written = 0
    t = 0
    while written < rows:
        batch: dict[str, dict[str, list]] = {n: {f.name: [] for f in s}
                                             for n, s in schemas.items()}
        while t < n_templates and len(batch["mutants"]["id"]) < 50_000:
            words = [rng.choice(WORDS) if rng.random() < 0.7 else rng.choice(rare)
                     for _ in range(rng.randint(185, 225))]
            words.insert(rng.randrange(20, 200), "the <occupation>")
            template = " ".join(words).capitalize() + "."
            tid, label = f"occupation-{t:05d}", int(rng.random() < 0.5)
            chosen = rng.sample(occupations, per_template)
            batch["templates"]["template_id"].append(tid)
            batch["templates"]["characteristic"].append("occupation")
            batch["templates"]["doc_id"].append(f"{t:05d}")
            batch["templates"]["label"].append(label)
            batch["templates"]["original"].append(template.replace("<occupation>", chosen[0]))
            batch["templates"]["template"].append(template)
            batch["templates"]["original_class"].append(chosen[0])
            batch["templates"]["placeholders"].append('["occupation"]')
            m, p = batch["mutants"], batch["predictions"]
            chosen = chosen[:rows - written - len(m["id"])]
            first = written + len(m["id"])  # this template's first row
            ids = [f"{tid}#{k:04d}" for k in range(len(chosen))]
            head, tail = template.split("<occupation>")
            m["id"] += ids
            m["template_id"] += [tid] * len(chosen)
            m["characteristic"] += ["occupation"] * len(chosen)
            m["class"] += chosen
            m["values"] += [f'{{"occupation": "{o}"}}' for o in chosen]
            m["align"] += [""] * len(chosen)
            m["text"] += [head + o + tail for o in chosen]
            m["label"] += [label] * len(chosen)
            prob = probs[first:first + len(chosen)]
            p["id"] += ids
            p["label"] += [label] * len(chosen)
            p["prob"] += prob.tolist()
            p["pred"] += (prob >= 0.5).astype(int).tolist()
            p["input"] += list(range(first, first + len(chosen)))
            t += 1
        for name, writer in writers.items():
            writer.write_table(pa.table(batch[name], schema=schemas[name]))
        written += len(batch["mutants"]["id"])
    for writer in writers.values():
        writer.close()
    return {"rows": written, "templates": t}


def run(rows: int, naive_rows: int | None = None, per_template: int = 100, seed: int = 0,
        workdir: Path | None = None) -> dict[str, float]:
    """Generate, then measure the harness on ``rows`` and on ``naive_rows`` mutants and the
    naive with-texts baseline on ``naive_rows``."""
    import pyarrow.parquet as pq

    naive_rows = min(rows, naive_rows or rows)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp_path = Path(tmp)
        started = time.perf_counter()
        sizes = {"full": rows, "naive": naive_rows}
        for name, n in sizes.items():
            if name == "full" or n < rows:
                (tmp_path / name).mkdir()
                subprocess.run([sys.executable, __file__, "--generate", str(tmp_path / name),
                                "--rows", str(n), "--per-template", str(per_template),
                                "--seed", str(seed)], check=True, capture_output=True, text=True)
        if naive_rows == rows:
            os.symlink(tmp_path / "full", tmp_path / "naive")
        generated = time.perf_counter() - started

        def harness(name: str) -> tuple[float, float, str]:
            d = tmp_path / name
            return measure([sys.executable, "-m", "biasrepro", "biasfinder", "btc",
                            "--templates", str(d / "templates.parquet"),
                            "--mutants", str(d / "mutants.parquet"),
                            "--predictions", str(d / "predictions.parquet"),
                            "--characteristic", "occupation",
                            "--out-pairs", str(d / "pairs.parquet"),
                            "--out-counts", str(d / "counts.parquet"),
                            "--out-summary", str(d / "summary.json")], tmp_path / f"{name}.log")

        full = harness("full")
        d = tmp_path / "full"
        sample = measure([sys.executable, "-m", "biasrepro", "biasfinder", "annotate", "sample",
                          "--pairs", str(d / "pairs.parquet"), "--mutants",
                          str(d / "mutants.parquet"), "--size", "400",
                          "--out", str(d / "sample.csv"), "--key", str(d / "key.csv"),
                          "--guide", str(d / "guide.md")], tmp_path / "sample.log")
        summary = json.loads((tmp_path / "full" / "summary.json").read_text())["occupation"]
        pairs = pq.ParquetFile(tmp_path / "full" / "pairs.parquet").metadata.num_rows
        same = full if naive_rows == rows else harness("naive")
        d = tmp_path / "naive"
        naive = measure([sys.executable, "-c", NAIVE, str(d / "mutants.parquet"),
                         str(d / "predictions.parquet"), str(d / "naive-pairs.parquet")],
                        tmp_path / "naive-run.log")
        naive_pairs = int(naive[2].split()[-1])
        mb = 2**20
        return {"rows": rows, "templates": summary["templates"],
                "mutants_mb": (tmp_path / "full" / "mutants.parquet").stat().st_size / mb,
                "generate_s": generated, "pairs": pairs, "btc": summary["btc"],
                "possible_pairs": summary["possible_pairs"],
                "harness_s": full[0], "harness_peak_mb": full[1],
                "sample_s": sample[0], "sample_peak_mb": sample[1],
                "pairs_mb": (tmp_path / "full" / "pairs.parquet").stat().st_size / mb,
                "naive_rows": naive_rows, "naive_pairs": naive_pairs,
                "harness_naive_rows_s": same[0], "harness_naive_rows_peak_mb": same[1],
                "harness_naive_rows_pairs_mb":
                    (d / "pairs.parquet").stat().st_size / mb,
                "naive_s": naive[0], "naive_peak_mb": naive[1],
                "naive_pairs_mb": (d / "naive-pairs.parquet").stat().st_size / mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_500_000)
    parser.add_argument("--naive-rows", type=int, default=20_000,
                        help="mutants for the naive with-texts baseline (at most --rows)")
    parser.add_argument("--per-template", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate is not None:
        print(json.dumps(generate(args.generate, args.rows, args.per_template, args.seed)))
        return
    r = run(args.rows, args.naive_rows, args.per_template, args.seed)
    print(f"{r['rows']:,} mutants of {r['templates']:,} templates ({r['mutants_mb']:,.0f} MB "
          f"Parquet, generated in {r['generate_s']:.0f} s); {r['btc']:,} BTCs of "
          f"{r['possible_pairs']:,} cross-class pairs")
    print(f"btc, {r['rows']:,} mutants: {r['harness_s']:.1f} s, peak "
          f"{r['harness_peak_mb']:,.0f} MB (target 2,048 MB); {r['pairs']:,} pairs, "
          f"{r['pairs_mb']:,.0f} MB")
    print(f"annotate sample (400 BTCs with their texts) from them: {r['sample_s']:.1f} s, peak "
          f"{r['sample_peak_mb']:,.0f} MB")
    ratio = r["naive_pairs_mb"] / max(r["harness_naive_rows_pairs_mb"], 1e-9)
    print(f"naive pairs with texts, {r['naive_rows']:,} mutants: {r['naive_s']:.1f} s, peak "
          f"{r['naive_peak_mb']:,.0f} MB, {r['naive_pairs']:,} pairs, "
          f"{r['naive_pairs_mb']:,.1f} MB; btc on them: {r['harness_naive_rows_s']:.1f} s, "
          f"peak {r['harness_naive_rows_peak_mb']:,.0f} MB, "
          f"{r['harness_naive_rows_pairs_mb']:,.1f} MB ({ratio:.1f}x smaller)")


if __name__ == "__main__":
    main()
