"""Peak memory and time of ``biasrepro prepare civil-comments`` on a paper-sized input.

Generates, seeded, a Kaggle ``all_data.csv``-shaped file of ``--rows`` comments (default
2,000,000, as Kaggle's; its real header of 46 columns, about a quarter of the rows
identity-annotated, comments of 1-6 sentences, a few blank comments and unparsable toxicity
values among the unannotated rows, as real dumps have), then in one run measures, each in a
fresh process:

* the harness: ``biasrepro prepare civil-comments --format kaggle`` (read a block at a time,
  only the study's rows kept and checked);
* the naive baseline: the whole file's needed columns read at once with Arrow and turned
  into one pandas frame, as the data stage did before (nothing else done).

It prints wall time and peak resident memory of each and the ratio; the target for the
data stage on two million rows is 4 GB. Run::

    python benchmarks/scale_civil_comments.py            # about 3 min on 2 cores
    python benchmarks/scale_civil_comments.py --rows 200000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from child import measure

META = ["id", "comment_text", "split", "created_date", "publication_id", "parent_id",
        "article_id", "rating", "funny", "wow", "sad", "likes", "disagree"]
TOXICITY = ["toxicity", "severe_toxicity", "obscene", "sexual_explicit", "identity_attack",
            "insult", "threat"]
IDENTITIES = [
    "male", "female", "transgender", "other_gender", "heterosexual",
    "homosexual_gay_or_lesbian", "bisexual", "other_sexual_orientation", "christian", "jewish",
    "muslim", "hindu", "buddhist", "atheist", "other_religion", "black", "white", "asian",
    "latino", "other_race_or_ethnicity", "physical_disability",
    "intellectual_or_learning_disability", "psychiatric_or_mental_illness", "other_disability",
]
HEADER = [*META, *TOXICITY, *IDENTITIES, "identity_annotator_count", "toxicity_annotator_count"]
STUDY = ["male", "female", "black", "white", "asian", "christian", "muslim", "jewish"]
WORDS = ("the council said it would review the plan before the vote and residents asked "
         "why nobody had read the report about taxes roads schools police housing and jobs "
         "women men black white asian christian muslim jewish people neighbours writers "
         "this is stupid idiotic wrong great fair honest ridiculous sad funny").split()


def sentence_bank(rng: np.random.Generator, n: int = 4000) -> np.ndarray:
    lengths = rng.integers(6, 22, size=n)
    return np.array([" ".join(rng.choice(WORDS, size=k)).capitalize() + "."
                     for k in lengths], dtype=object)


def generate(path: Path, rows: int, seed: int = 0) -> dict[str, int]:
    """Write the file; return how many rows are annotated and how many carry faults."""
    rng = np.random.default_rng(seed)
    bank = sentence_bank(rng)
    text = bank[rng.integers(0, len(bank), rows)]
    for _ in range(5):  # up to six sentences per comment
        more = rng.random(rows) < 0.5
        text[more] = text[more] + " " + bank[rng.integers(0, len(bank), int(more.sum()))]
    annotated = rng.random(rows) < 0.225
    faults = np.flatnonzero(~annotated)[::200_000]  # blank comments, a few per million
    text[faults] = ""
    toxicity = np.round(rng.beta(0.5, 4, rows), 6).astype(str).astype(object)
    toxicity[faults[1::2]] = "n/a"
    columns: dict[str, pa.Array] = {
        "id": pa.array(np.arange(1, rows + 1) * 7 + 239_575),
        "comment_text": pa.array(text, type=pa.string()),
        "split": pa.array(np.where(rng.random(rows) < 0.95, "train", "test")),
        "created_date": pa.array(["2016-05-01 10:00:00.000000+00"] * rows),
        "publication_id": pa.array(rng.integers(1, 100, rows)),
        "parent_id": pa.array([""] * rows),
        "article_id": pa.array(rng.integers(1, 10**6, rows)),
        "rating": pa.array(np.where(rng.random(rows) < 0.9, "approved", "rejected")),
        **{c: pa.array(rng.integers(0, 5, rows)) for c in ("funny", "wow", "sad", "likes",
                                                          "disagree")},
        "toxicity": pa.array(toxicity, type=pa.string()),
        **{c: pa.array(np.round(rng.beta(0.3, 8, rows), 6)) for c in TOXICITY[1:]},
    }
    for name in IDENTITIES:
        values = np.round(rng.beta(0.2, 3, rows), 1).astype(str).astype(object)
        values[~annotated] = ""
        columns[name] = pa.array(values, type=pa.string())
    counts = np.where(annotated, rng.integers(4, 11, rows), 0)
    columns["identity_annotator_count"] = pa.array(counts)
    columns["toxicity_annotator_count"] = pa.array(rng.integers(4, 1000, rows))
    table = pa.table({name: columns[name] for name in HEADER})
    pacsv.write_csv(table, path, write_options=pacsv.WriteOptions(quoting_style="needed"))
    return {"rows": rows, "annotated": int(annotated.sum()), "faults": len(faults)}


NAIVE = """
import sys
import pyarrow as pa, pyarrow.csv as pacsv
cols = ["id", "comment_text", "toxicity", "identity_annotator_count", *sys.argv[2:]]
types = {"id": pa.string(), "comment_text": pa.string(),
         **{c: pa.float64() for c in cols[3:]}, "toxicity": pa.string()}
table = pacsv.read_csv(sys.argv[1], read_options=pacsv.ReadOptions(block_size=1 << 26),
                       parse_options=pacsv.ParseOptions(newlines_in_values=True),
                       convert_options=pacsv.ConvertOptions(include_columns=cols,
                                                            column_types=types))
frame = table.to_pandas()
print(len(frame))
"""


def run(rows: int, seed: int = 0, workdir: Path | None = None) -> dict[str, float]:
    """Generate, then measure the harness and the naive read; the figures as a dict."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = Path(tmp) / "all_data.csv"
        started = time.perf_counter()
        made = json.loads(subprocess.run(
            [sys.executable, __file__, "--generate", str(path), "--rows", str(rows),
             "--seed", str(seed)], check=True, capture_output=True, text=True).stdout)
        generated = time.perf_counter() - started
        settings = {"seed": seed, "identities": STUDY,
                    "preprocess.civil_comments": {
                        "splits": "all", "identity_threshold": 0.5, "toxicity_threshold": 0.5,
                        "split": {"train": 0.4, "validation": 0.3, "test": 0.3}}}
        harness = measure([sys.executable, "-m", "biasrepro", "prepare", "civil-comments",
                           "--format", "kaggle", "--input", str(path), "--settings",
                           json.dumps(settings), "--out-dir", str(Path(tmp) / "out")])
        stats = json.loads((Path(tmp) / "out" / "identity_stats.json").read_text())
        naive = measure([sys.executable, "-c", NAIVE, str(path), *STUDY])
        return {"rows": rows, "file_mb": path.stat().st_size / 2**20,
                "generate_s": generated, "annotated": made["annotated"],
                "rows_kept": stats["rows_kept"],
                "dropped_rows_with": stats["dropped_rows_with"],
                "harness_s": harness[0], "harness_peak_mb": harness[1],
                "naive_s": naive[0], "naive_peak_mb": naive[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generate", type=Path, default=None,
                        help="only write the file here (what the measuring run calls)")
    args = parser.parse_args()
    if args.generate is not None:
        print(json.dumps(generate(args.generate, args.rows, args.seed)))
        return
    r = run(args.rows, args.seed)
    print(f"{r['rows']:,} rows ({r['file_mb']:.0f} MB, generated in {r['generate_s']:.0f} s); "
          f"{r['annotated']:,} annotated, {r['rows_kept']:,} kept; "
          f"faults counted outside the study: {r['dropped_rows_with']}")
    print(f"prepare civil-comments: {r['harness_s']:.1f} s, peak {r['harness_peak_mb']:,.0f} MB "
          "(target 4,096 MB)")
    print(f"naive whole-file read only: {r['naive_s']:.1f} s, peak {r['naive_peak_mb']:,.0f} MB; "
          f"the harness's peak is {r['harness_peak_mb'] / r['naive_peak_mb']:.2f}x the naive "
          "read's")


if __name__ == "__main__":
    main()
