"""The planted-bias control of BiasFinder (docs/architecture.md, "The embedded default").

On the embedded default's world and training settings, a sentiment model fine-tuned on reviews
whose labels carry the planted gender association must show a higher gender BTC rate than the
same model fine-tuned on the same world without the association. Both share one base model
(pre-trained as the embedded default pre-trains) and one test split: the world's test split
does not depend on the planted rates, which the test checks.
"""

from __future__ import annotations

import copy
import time

import pandas as pd
import pytest
from conftest import REPO

from biasrepro import config as cfg
from biasrepro.biasfinder import btc, mutants, names, templates, wordlists
from biasrepro.data import imdb
from biasrepro.data.world import reviews
from biasrepro.models import embedded, finetune
from biasrepro.models.load import ModelSpec
from biasrepro.nlp.coref import RuleCoref
from biasrepro.nlp.parse import load_pipeline, parse_corpus

pytestmark = pytest.mark.slow
CONFIG = cfg.load(REPO / "config" / "config.yaml")
#: test reviews mined for templates (of 2,000), to keep the test to a few minutes
N_DOCS = 700


def test_planted_gender_association_raises_the_gender_btc_rate(tmp_path) -> None:
    start = time.perf_counter()
    bf = CONFIG["biasfinder"]
    data = {}
    for world in ("planted", "control"):
        settings = copy.deepcopy(CONFIG["world"]["reviews"])
        if world == "control":
            settings["planted"] = {}
        reviews.generate(settings, seed=CONFIG["seed"], out_dir=tmp_path / world / "raw")
        imdb.prepare({s: tmp_path / world / "raw" / f"{s}.parquet" for s in ("train", "test")},
                     fmt="hf_parquet", out_dir=tmp_path / world / "data")
        data[world] = tmp_path / world / "data"
    test = pd.read_parquet(data["planted"] / "test.parquet")
    assert test.equals(pd.read_parquet(data["control"] / "test.parquet"))

    embedded.build("bert-tiny", architecture="bert", settings=CONFIG["models"]["embedded"],
                   seed=CONFIG["seed"], corpus=[data["control"] / "train.parquet"],
                   out_dir=tmp_path / "base")
    base = ModelSpec("bert-tiny", str(tmp_path / "base"), "bert")
    training = {"seed": CONFIG["seed"], **CONFIG["models"]["training"]["sentiment"]}
    for world in data:
        finetune.finetune(base, task="sentiment", train=data[world] / "train.parquet",
                          validation=None, settings=training, out_dir=tmp_path / world / "model",
                          checkpoint_dir=tmp_path / world / "checkpoints")

    source = names.nam_dict_path()
    names.write_names(names.generate_names(source, seed=CONFIG["seed"], n=bf["names"]["n"],
                                           min_frequency=bf["names"]["min_frequency"]),
                      tmp_path / "names.csv", header="control test")
    lists = wordlists.load(names=tmp_path / "names.csv")
    nlp = load_pipeline(bf["spacy_model"])
    docs = parse_corpus(test.head(N_DOCS), nlp, RuleCoref(lists), batch_size=64, n_process=2,
                        wordlists=lists)
    found = templates.generate(docs, "gender", lists, max_templates=bf["max_templates"],
                               seed=CONFIG["seed"])
    muts = mutants.generate_mutants(found, lists, max_names=bf["max_names"])
    rates = {}
    for world in data:
        scored = btc.score_mutants(muts, str(tmp_path / world / "model"),
                                   threshold=bf["threshold"])
        counts = btc.template_counts(scored)
        rates[world] = counts["btc"].sum() / counts["possible_pairs"].sum()
    print(f"\ngender BTC rate: planted {rates['planted']:.4f}, control {rates['control']:.4f} "
          f"({len(found)} templates, {len(muts)} mutants; {time.perf_counter() - start:.0f} s)")
    assert rates["planted"] > 2 * rates["control"]
