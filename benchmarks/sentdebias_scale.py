"""Peak memory and time of ``biasrepro representation subspace`` on a paper-sized corpus.

Generates, seeded, a Wikipedia-2.5-like text file of ``--sentences`` sentences (default
4,000,000, the size estimated for bias-bench's corpus in
``profiles/slurm/costs.yaml``): paragraphs of 1-4 sentences of 12-40 words per line,
from common English words and invented rare ones, a gender word of bias-bench's tuples in
40 % of the sentences, a race word in 3 % and a religion word in 1 % (the attribute-word
rates of ``costs.yaml``'s ``sentdebias_corpus``), and a ``bias_attribute_words.json``. With
it, a randomly initialised BERT small enough to embed the counterfactual sentences in
minutes on two cores (hidden 16, 1 layer, 2 heads, WordPiece vocabulary of 4,000 trained on
the corpus's first lines). Then measures, each in a fresh process, the gender subspace with
the paper profile's settings (``config/paper.yaml`` ``representation.sentdebias``: Punkt
sentence split, every sentence, 128 tokens):

* the model alone: the command on the corpus's first 1,000 sentences (imports, the model and
  one chunk of tuples);
* the harness: the command on the whole corpus (the file read and split a block of lines
  at a time, a chunk of 4,096 counterfactual tuples embedded at a time, the PCA from their
  accumulated scatter matrix);
* the naive baseline: the same subspace with the corpus read whole and split into one list
  of sentences first, as the command worked before, on the first ``--naive-sentences``
  sentences, and the harness on that file too for the ratio.

It prints wall time, CPU time and peak resident memory of each; the target is the model
alone plus 2 GB. A paper model (BERT-base) holds more per chunk (768 numbers per sentence
instead of 16), not more per sentence of the corpus. The measured processes run with
``OMP_NUM_THREADS=1`` unless it is set: on shared cores torch's second thread spins while
the other core is busy, which made embedding over ten times slower there. Run::

    python benchmarks/sentdebias_scale.py                       # about 30 min on 2 cores
    python benchmarks/sentdebias_scale.py --sentences 100000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from child import measure, tiny_bert

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: bias_attribute_words.json in bias-bench's format: gender pairs, race and religion triples
WORDS = {
    "gender": [["actor", "actress"], ["boy", "girl"], ["boys", "girls"], ["brother", "sister"],
               ["brothers", "sisters"], ["father", "mother"], ["fathers", "mothers"],
               ["he", "she"], ["him", "her"], ["his", "hers"], ["husband", "wife"],
               ["king", "queen"], ["man", "woman"], ["men", "women"], ["son", "daughter"],
               ["sons", "daughters"], ["uncle", "aunt"], ["nephew", "niece"],
               ["gentleman", "lady"], ["male", "female"]],
    "race": [["black", "caucasian", "asian"], ["african", "caucasian", "asian"],
             ["black", "white", "asian"], ["africa", "america", "asia"],
             ["africa", "america", "china"], ["africa", "europe", "asia"]],
    "religion": [["jewish", "christian", "muslim"], ["jews", "christians", "muslims"],
                 ["torah", "bible", "quran"], ["synagogue", "church", "mosque"],
                 ["rabbi", "priest", "imam"], ["judaism", "christianity", "islam"]],
}
#: share of sentences holding one word of each attribute (costs.yaml tuples_per_sentence)
RATES = {"gender": 0.40, "race": 0.03, "religion": 0.01}
COMMON = ("the of and in to was is for on as by with from at that which it an be were "
          "are this its first after also has had new not their one two three during while "
          "between into city river school team season state film album song county village "
          "station company building war army party election government university music "
          "played released named located population century north south east west born "
          "known used built began became including early later national league club "
          "group series book work year years area part world number members").split()
SYLLABLES = ("ka ri to mo ne sa lu vi de po ra ten ber gan dor mil sen tal ris von").split()

NAIVE = """
import sys
from pathlib import Path
from biasrepro.debias import sentdebias
from biasrepro.io import read_text
words = sentdebias.read_attribute_words(sys.argv[3])["gender"]
sentences = sentdebias.split_lines(read_text(sys.argv[2]).splitlines(), "punkt")
from biasrepro.representation.table4 import load_model
model, tokenizer = load_model(sys.argv[1], None, head="base")
subspace, n = sentdebias.subspace_and_count(model, tokenizer, sentences, words, max_length=128)
print(len(sentences), n)
"""


def generate(path: Path, sentences: int, seed: int) -> dict[str, int]:
    """Write ``sentences`` sentences to ``path``; the first lines of a larger run are the
    same. Returns the counts of lines and of sentences with each attribute's words."""
    import numpy as np

    rng = np.random.default_rng(seed)
    attribute_words = {a: sorted({w for t in ts for w in t}) for a, ts in WORDS.items()}
    taken = {w for ws in attribute_words.values() for w in ws} | set(COMMON)
    rare: set[str] = set()
    while len(rare) < 6000:
        word = "".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 5))))
        if word not in taken:
            rare.add(word)
    vocab = np.array(COMMON * 40 + sorted(rare), dtype=object)  # common words 1 in 4
    made = {"lines": 0, "sentences": 0, **{a: 0 for a in WORDS}}
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        while made["sentences"] < sentences:
            n = min(100_000, sentences - made["sentences"])
            lengths = rng.integers(12, 41, n)
            ids = rng.integers(0, len(vocab), (n, 40))
            extra = {a: rng.random(n) < rate for a, rate in RATES.items()}
            out = []
            for i in range(n):
                words = list(vocab[ids[i, :lengths[i]]])
                for a, has in extra.items():
                    if has[i]:
                        options = attribute_words[a]
                        words.insert(int(rng.integers(0, len(words) + 1)),
                                     options[int(rng.integers(0, len(options)))])
                words[0] = words[0].capitalize()
                out.append(" ".join(words) + ".")
            # paragraphs: 1-4 sentences a line
            breaks = np.cumsum(rng.integers(1, 5, n))
            breaks = breaks[breaks < n]
            lines = [" ".join(out[a:b]) for a, b in zip([0, *breaks], [*breaks, n], strict=True)]
            f.write("\n".join(lines) + "\n")
            made["lines"] += len(lines)
            made["sentences"] += n
            for a, has in extra.items():
                made[a] += int(has.sum())
    return made


def build_model(data: Path, out_dir: Path, seed: int) -> None:
    """A random tiny BERT masked LM with a WordPiece vocabulary trained on the corpus's
    first lines."""
    with open(data, encoding="utf-8") as f:
        lines = [line.lower() for _, line in zip(range(5000), f, strict=False)]
    tiny_bert(lines, out_dir, seed=seed, max_length=128, positions=130, masked_lm=True)


def head(src: Path, dst: Path, sentences: int) -> None:
    """The first lines of ``src`` holding at least ``sentences`` sentences (whole lines)."""
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        count = 0
        for line in f:
            if count >= sentences:
                break
            out.write(line)
            count += line.count(". ") + 1


#: what the command logs: "... from T counterfactual tuples of S sentences"
_COUNTS = re.compile(r"from (\d+) counterfactual tuples of (\d+) sentences")


def paper_settings(seed: int) -> dict[str, object]:
    """The paper profile's SentenceDebias settings, as ``--settings`` takes them."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text(encoding="utf-8"))
    return {"seed": seed, "models": {"registry": {}},
            "representation": {"sentdebias": paper["representation"]["sentdebias"]}}


def run(sentences: int, naive_sentences: int | None = None, seed: int = 0,
        workdir: Path | None = None) -> dict[str, object]:
    """Generate, then measure the model alone, the harness and the naive baseline."""
    naive_sentences = min(sentences, naive_sentences or sentences)
    settings = paper_settings(seed)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp_path = Path(tmp)
        words = tmp_path / "bias_attribute_words.json"
        words.write_text(json.dumps(WORDS), encoding="utf-8")
        started = time.perf_counter()
        full = tmp_path / "full.txt"
        made = json.loads(subprocess.run(
            [sys.executable, __file__, "--generate", str(full), "--sentences", str(sentences),
             "--seed", str(seed)], check=True, capture_output=True, text=True).stdout)
        head(full, tmp_path / "small.txt", min(sentences, 1000))
        if naive_sentences < sentences:
            head(full, tmp_path / "naive.txt", naive_sentences)
        else:
            os.link(full, tmp_path / "naive.txt")
        model = tmp_path / "model"
        subprocess.run([sys.executable, __file__, "--build-model", str(model), "--data",
                        str(full), "--seed", str(seed)], check=True, capture_output=True,
                       text=True)
        generated = time.perf_counter() - started

        def harness(name: str) -> tuple[float, float, str, float]:
            return measure([sys.executable, "-m", "biasrepro", "representation", "subspace",
                            "--model", str(model), "--attribute", "gender", "--stage",
                            "upstream", "--words", str(words), "--corpus",
                            str(tmp_path / f"{name}.txt"), "--settings", json.dumps(settings),
                            "--out", str(tmp_path / f"{name}.safetensors")],
                           tmp_path / f"{name}.log")

        alone = harness("small")
        whole = harness("full")
        line = next((x for x in whole[2].splitlines() if "counterfactual tuples" in x), "")
        same_size = whole if naive_sentences == sentences else harness("naive")
        naive = measure([sys.executable, "-c", NAIVE, str(model), str(tmp_path / "naive.txt"),
                         str(words)], tmp_path / "whole-corpus.log")
        # the same subspace both ways (the naive pass's is not written; compare the count)
        naive_line = next((x for x in same_size[2].splitlines()
                           if "counterfactual tuples" in x), "")
        counts = [tuple(map(int, m.groups())) if (m := _COUNTS.search(x)) else (0, 0)
                  for x in (line, naive_line)]
        return {"sentences": sentences, "lines": made["lines"],
                "tuples": counts[0][0], "split_sentences": counts[0][1],
                "naive_tuples": counts[1][0], "naive_split_sentences": counts[1][1],
                "gender_sentences": made["gender"],
                "file_mb": full.stat().st_size / 2**20, "generate_s": generated,
                "log": line.split(": subspace ", 1)[-1],
                "model_s": alone[0], "model_cpu_s": alone[3], "model_peak_mb": alone[1],
                "harness_s": whole[0], "harness_cpu_s": whole[3], "harness_peak_mb": whole[1],
                "naive_sentences": naive_sentences,
                "naive_log": naive_line.split(": subspace ", 1)[-1],
                "harness_naive_s": same_size[0], "harness_naive_cpu_s": same_size[3],
                "harness_naive_peak_mb": same_size[1],
                "naive_s": naive[0], "naive_cpu_s": naive[3], "naive_peak_mb": naive[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=4_000_000)
    parser.add_argument("--naive-sentences", type=int, default=500_000,
                        help="sentences for the naive baseline (at most --sentences)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--build-model", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate is not None:
        print(json.dumps(generate(args.generate, args.sentences, args.seed)))
        return
    if args.build_model is not None:
        build_model(args.data, args.build_model, args.seed)
        return
    r = run(args.sentences, args.naive_sentences, args.seed)
    print(f"{r['sentences']:,} sentences on {r['lines']:,} lines ({r['file_mb']:.0f} MB, "
          f"{r['gender_sentences']:,} with a gender word; generated with the model in "
          f"{r['generate_s']:.0f} s); {r['log']}")
    print(f"model alone (1,000 sentences): {r['model_s']:.1f} s ({r['model_cpu_s']:.1f} s CPU), "
          f"peak {r['model_peak_mb']:,.0f} MB")
    print(f"subspace, {r['sentences']:,} sentences: {r['harness_s']:.1f} s "
          f"({r['harness_cpu_s']:.1f} s CPU), peak "
          f"{r['harness_peak_mb']:,.0f} MB, {r['harness_peak_mb'] - r['model_peak_mb']:,.0f} MB "
          "beyond the model (target 2,048 MB)")
    beyond = r["harness_naive_peak_mb"] - r["model_peak_mb"]
    naive_beyond = r["naive_peak_mb"] - r["model_peak_mb"]
    print(f"naive whole-corpus pass, {r['naive_sentences']:,} sentences: {r['naive_s']:.1f} s "
          f"({r['naive_cpu_s']:.1f} s CPU), peak {r['naive_peak_mb']:,.0f} MB "
          f"({naive_beyond:,.0f} MB beyond the model); subspace on them ({r['naive_log']}): "
          f"{r['harness_naive_s']:.1f} s ({r['harness_naive_cpu_s']:.1f} s CPU), peak "
          f"{r['harness_naive_peak_mb']:,.0f} MB ({beyond:,.0f} MB beyond the model, "
          f"{beyond / max(1.0, naive_beyond):.2f}x the naive pass's)")


if __name__ == "__main__":
    main()
