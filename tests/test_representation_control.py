"""The planted-bias control of the representation measures.

The embedded default is described in docs/architecture.md.

A tiny BERT pre-trained as the embedded default pre-trains (``models.embedded``: the planted
stereotype sentences as cloze items first, then the whole corpus) must score the world's
CrowS-Pairs set (bias-bench scoring) and StereoSet set above 50 for every planted attribute.
SentenceDebias for gender and for race must shrink the margin by which that attribute's
stereotypical sentences win: the mean log-probability difference of ``sent_more`` and
``sent_less``. To keep the test short the corpus leaves out the world's reviews (stereotype
sentences and the comments' training split only), and the subspace is computed on 2,000 of
the 32,000 stereotype sentences and the comments.

Only what held for three seeds (the configured one, 1 and 2) is asserted. The CrowS-Pairs
scores were 100 for all three attributes and 83–100 after SentenceDebias (the stereotypical
sentence still wins nearly every pair, by less), so the score itself is not asserted to move;
the Nangia scoring varied with the seed (38–100); SentenceDebias for religion shrank the
religion margin for two seeds of three. SentenceDebias for one attribute shrinks the others'
margins too (bert-tiny's three subspaces are nearly parallel).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from biasrepro import config as cfg
from biasrepro.data import civil_comments
from biasrepro.data.world import benchmarks, comments, stereotypes
from biasrepro.debias import sentdebias
from biasrepro.models import embedded
from biasrepro.models.load import load_masked_lm
from biasrepro.representation.crows import read_crows, score_crows
from biasrepro.representation.stereoset import read_stereoset, score_stereoset

pytestmark = pytest.mark.slow
CONFIG = cfg.load(REPO / "config" / "config.yaml")
#: stereotype sentences (of 32,000) the SentenceDebias subspace is computed on, with comments
N_SUBSPACE_SENTENCES = 2000


def _crows(model: tuple, pairs: pd.DataFrame) -> tuple[dict[str, float], dict[str, float]]:
    """Bias-bench CrowS-Pairs score and mean margin (``sent_more`` − ``sent_less``) by type."""
    result = score_crows(model, pairs, scoring="bias-bench")
    frame = result["pairs"]
    margin = (frame["sent_more_raw"] - frame["sent_less_raw"]).groupby(frame["bias_type"]).mean()
    return ({b: s["metric_score"] for b, s in result["bias_types"].items()},
            margin.round(4).to_dict())


def test_planted_stereotypes_show_and_sentdebias_shrinks_them(tmp_path: Path) -> None:
    start = time.perf_counter()
    c, prep = CONFIG, CONFIG["preprocess"]["civil_comments"]
    settings = c["models"]["embedded"]
    stereotypes.generate(settings["stereotypes"], seed=c["seed"], out_dir=tmp_path / "st")
    comments.generate(c["world"]["comments"], seed=c["seed"], identities=c["identities"],
                      attributes=c["attributes"], preprocess=prep, out_dir=tmp_path / "raw")
    civil_comments.prepare(tmp_path / "raw" / "all_data.csv", fmt="csv", member=None,
                           identities=c["identities"], settings=prep, seed=c["seed"],
                           out_dir=tmp_path / "data")
    corpus = [tmp_path / "data" / "train.parquet", tmp_path / "st" / "sentences.parquet"]
    embedded.build("bert-tiny", architecture="bert", settings=settings, seed=c["seed"],
                   corpus=corpus, out_dir=tmp_path / "model")
    built = time.perf_counter() - start
    benchmarks.generate(settings["stereotypes"]["associations"], attributes=c["attributes"],
                        seed=c["seed"], out_dir=tmp_path / "bench")
    pairs = read_crows(tmp_path / "bench" / "crows_pairs.csv")
    model = load_masked_lm(tmp_path / "model")

    scores, margins = _crows(model, pairs)
    assert set(scores) == {"gender", "race-color", "religion"}
    assert all(score >= 70 for score in scores.values()), scores
    ss, _ = score_stereoset(model, read_stereoset(tmp_path / "bench" / "stereoset.json"))
    assert all(ss[a]["ss"] > 50 for a in ("gender", "race", "religion")), ss

    sentences = (pd.read_parquet(corpus[1])["text"].head(N_SUBSPACE_SENTENCES).tolist()
                 + pd.read_parquet(corpus[0])["text"].tolist())
    words = benchmarks.world_attribute_words(c["attributes"])
    after = {}
    for attribute in ("gender", "race"):
        subspace = sentdebias.compute_subspace(*model, sentences, words[attribute])
        handle = sentdebias.attach(model[0], subspace, {"attribute": attribute})
        after[attribute] = _crows(model, pairs)
        handle.remove()
    print(f"\nCrowS-Pairs (bias-bench) {scores}, margins {margins}; after SentenceDebias "
          f"{after}; StereoSet ss { {a: m['ss'] for a, m in ss.items()} } (built in "
          f"{built:.0f} s, {time.perf_counter() - start:.0f} s in all)")
    for attribute, bias_type in (("gender", "gender"), ("race", "race-color")):
        assert after[attribute][1][bias_type] < margins[bias_type], attribute
