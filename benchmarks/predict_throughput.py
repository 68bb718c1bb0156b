"""Throughput of ``biasrepro.models.predict`` against a plain transformers pipeline loop.

On a BiasFinder-like workload (long review templates, each filled with
many names and pronouns, so most texts are near-duplicates and some are exact duplicates;
BiasFinder §3-4), score the same texts with the same model three ways, in one run:

* a ``transformers.pipeline("text-classification")`` called text by text (the naive loop),
* the same pipeline given the whole list with ``batch_size=32`` (a stronger baseline),
* ``predict_proba`` (deduplication, length sorting, dynamic padding, token-budget batches).

It checks that the three agree on every probability and prints texts/s and the ratios.
The default model is a randomly initialised BERT of the embedded size (hidden 64, 2 layers,
WordPiece vocabulary of 4,000 trained on the workload, max length 128); ``--model DIR``
takes any saved classifier instead. Seeded; run ``python benchmarks/predict_throughput.py``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from transformers import BertConfig, BertForSequenceClassification, pipeline

from biasrepro.data.world.vocabulary import (
    FILM_ASPECTS,
    FILM_TITLES,
    FIRST_NAMES,
    GENRES,
    NEGATIVE_ADJECTIVES,
    NEGATIVE_ADVERBS,
    OCCUPATIONS,
    POSITIVE_ADJECTIVES,
    POSITIVE_ADVERBS,
    PRONOUNS,
    SURNAMES,
)
from biasrepro.models.load import load_classifier, resolve
from biasrepro.models.predict import score_texts
from biasrepro.models.tokenizers import train_tokenizer

#: sentence frames; {name} and the pronoun slots are what a gender mutant changes
FRAMES = (
    "I went to see {title} last week and {name} is the reason I stayed until the end.",
    "{name} plays a {occupation} who has lost {det} way, and {subj} carries the film.",
    "Honestly {aspect} is {adj}, and the {genre} never quite finds its rhythm.",
    "The {occupation} at the centre of the story is {adv} drawn, and {name} knows it.",
    "When {subj} finally confronts {det} {occupation} friend, the scene is {adj}.",
    "{aspect} feels {adj} from the first minute to the last.",
    "Nobody in the {genre} seems to care about {obj}, which makes the {aspect2} {adj}.",
    "There is a long sequence near {word} where {name} waits for a letter that never comes.",
    "My friends and I argued for an hour about {aspect} and the {adj} {aspect2}.",
    "It is a {genre} about {word} and {word2}, told {adv} and without hurry.",
    "The director lets {name} talk to {refl} for ten minutes, and it is {adj}.",
    "{subj} walks through {word} at night while {aspect} hums underneath.",
    "Critics called it {adj}; I found {aspect} {adj2} and the {aspect2} {adj}.",
    "The supporting cast around {obj} is {adv} handled, especially the {occupation}.",
    "If you liked the earlier films set in {word}, this one will feel {adj}.",
    "Shot in {word} and {word2}, it borrows from the {word3} school and looks {adj}.",
    "The credits thank {word}, {word2} and the people of {word3}, and {name} too.",
)
SYLLABLES = ("ka", "lo", "ven", "dri", "mor", "sel", "tha", "quin", "bra", "zu", "hel", "tor",
             "ani", "gro", "pel", "vis", "um", "ret", "osk", "lin", "dar", "fe", "nox", "cal")


def invented_words(rng: random.Random, n: int) -> list[str]:
    """Rare words (places, coinages) so the vocabulary and subword splits are realistic."""
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def templates(rng: random.Random, n: int, words: list[str]) -> list[str]:
    """``n`` reviews of 100-200 words with {name} and pronoun slots left open."""
    out = []
    for _ in range(n):
        positive = rng.random() < 0.5
        adjs = POSITIVE_ADJECTIVES if positive else NEGATIVE_ADJECTIVES
        advs = POSITIVE_ADVERBS if positive else NEGATIVE_ADVERBS
        target, sentences = rng.randint(100, 200), []
        while sum(len(s.split()) for s in sentences) < target:
            frame = rng.choice(FRAMES)
            sentences.append(frame.format(
                title=rng.choice(FILM_TITLES), occupation=rng.choice(OCCUPATIONS),
                aspect=rng.choice(FILM_ASPECTS), aspect2=rng.choice(FILM_ASPECTS),
                genre=rng.choice(GENRES), adj=rng.choice(adjs), adj2=rng.choice(adjs),
                adv=rng.choice(advs), word=rng.choice(words).capitalize(),
                word2=rng.choice(words), word3=rng.choice(words), name="{name}",
                subj="{subj}", obj="{obj}", det="{det}", refl="{refl}"))
        out.append(" ".join(s[0].upper() + s[1:] for s in sentences))
    return out


def mutants(rng: random.Random, tmpls: list[str], per_template: int) -> list[str]:
    """Each template filled ``per_template`` times with a name and its pronouns, the
    fillings drawn with replacement (as repeated names give exact duplicate mutants)."""
    people = [(f"{first} {rng.choice(SURNAMES)}", gender)
              for gender, names in FIRST_NAMES.items() for first in names[:12]]
    texts = []
    for tmpl in tmpls:
        for name, gender in rng.choices(people, k=per_template):
            p = PRONOUNS[gender]
            text = tmpl.replace("{name}", name)
            for slot in ("subj", "obj", "det", "refl"):
                text = text.replace("{" + slot + "}", p[slot])
            texts.append(text)
    return texts


def tiny_bert(texts: list[str], out_dir: Path, seed: int, max_length: int) -> Path:
    """A random BERT of the embedded size with the project's WordPiece tokenizer on ``texts``."""
    tokenizer = train_tokenizer("bert", texts, vocab_size=4000, max_length=max_length)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=max_length, num_labels=2,
                        pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    BertForSequenceClassification(config).save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def positive_scores(outputs: list, positive_label: str) -> np.ndarray:
    """The positive label's score per text (a single-text call nests its list once more)."""
    rows = [out[0] if isinstance(out[0], list) else out for out in outputs]
    return np.array([next(d["score"] for d in row if d["label"] == positive_label)
                     for row in rows])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, help="a saved classifier (default: a random tiny BERT)")
    ap.add_argument("--templates", type=int, default=300)
    ap.add_argument("--mutants-per-template", type=int, default=15)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, help="torch threads (default: one per core)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    rng = random.Random(args.seed)
    words = invented_words(rng, 6000)
    tmpls = templates(rng, args.templates, words)
    texts = mutants(rng, tmpls, args.mutants_per_template)
    with tempfile.TemporaryDirectory() as tmp:
        # the vocabulary: the workload's words first, then the unused invented ones
        model_dir = args.model or tiny_bert([*texts, " ".join(words)], Path(tmp) / "bert",
                                            args.seed, args.max_length)
        model, tokenizer = load_classifier(resolve(str(model_dir), None))
        model.eval()
    n_words = [len(t.split()) for t in texts]
    print(f"workload: {len(texts)} texts from {len(tmpls)} templates, {len(set(texts))} "
          f"distinct, {min(n_words)}-{max(n_words)} words (mean {np.mean(n_words):.0f}); "
          f"max_length {args.max_length}; torch threads {torch.get_num_threads()}")
    print(f"model: {model.config.model_type}, hidden {model.config.hidden_size}, "
          f"{model.config.num_hidden_layers} layers, vocabulary {len(tokenizer)}")

    pipe = pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu",
                    truncation=True, max_length=args.max_length, top_k=None)
    positive = model.config.id2label[1]
    pipe(texts[:8])  # warm-up of all three paths on a few texts
    score_texts((model, tokenizer), texts[:8], max_length=args.max_length)

    loop_out, loop_s = timed(lambda: [pipe(t) for t in texts])
    batched_out, batched_s = timed(lambda: pipe(texts, batch_size=32))
    (ours, stats), ours_s = timed(lambda: score_texts((model, tokenizer), texts,
                                                       max_length=args.max_length))
    loop_p = positive_scores(loop_out, positive)
    batched_p = positive_scores(batched_out, positive)
    diff = max(np.abs(ours - loop_p).max(), np.abs(ours - batched_p).max())

    n = len(texts)
    print(f"predict_proba: {stats.unique_texts} unique texts -> {stats.unique_inputs} "
          f"distinct inputs after truncation, {stats.tokens} tokens ({stats.padded_tokens} "
          f"padded) in {stats.batches} batches")
    print(f"{'method':<34}{'seconds':>9}{'texts/s':>10}")
    for label, s in (("pipeline, one text per call", loop_s),
                     ("pipeline, batch_size=32", batched_s), ("predict_proba", ours_s)):
        print(f"{label:<34}{s:>9.2f}{n / s:>10.0f}")
    print(f"ratio vs pipeline loop:          {loop_s / ours_s:.1f}x")
    print(f"ratio vs pipeline batch_size=32: {batched_s / ours_s:.1f}x")
    print(f"max |probability difference|: {diff:.2e} (tolerance {args.tolerance:g})")
    if not diff <= args.tolerance:
        print("error: predict_proba disagrees with the pipeline", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
