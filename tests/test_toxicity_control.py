"""The planted-bias control of the toxicity study (docs/architecture.md, "The embedded default").

The embedded world's comments plant an identity–label association: most toxic comments
about the marginalized groups, and none about the others, are written without any toxic
cue (``world.comments.ambiguous``). A model fine-tuned on that training set must learn the
association for some attribute (SenseScore, §7.3, beyond the null world's margin), score lower
on every attribute it learned once fine-tuned on the perturbed training set (§6.6), and show
larger FPR and AUC gaps on the balanced fairness set on average.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from biasrepro import config as cfg
from biasrepro.analysis import controls
from biasrepro.data import civil_comments
from biasrepro.data.world import comments
from biasrepro.fairness.evaluation import evaluate, sense_scores
from biasrepro.io import write_parquet
from biasrepro.models import embedded, finetune
from biasrepro.models.load import ModelSpec
from biasrepro.models.predict import predict_proba
from biasrepro.perturb.datasets import balanced_fairness_set, perturbed_training_set
from biasrepro.perturb.identity_lexicon import IdentityLexicon
from biasrepro.perturb.identity_swap import Swapper, load_tagger

pytestmark = pytest.mark.slow
CONFIG = cfg.load(REPO / "config" / "config.yaml")


def test_perturbed_training_lowers_the_planted_gaps_and_sensescore(tmp_path: Path) -> None:
    start = time.perf_counter()
    c, prep = CONFIG, CONFIG["preprocess"]["civil_comments"]
    comments.generate(c["world"]["comments"], seed=c["seed"], identities=c["identities"],
                      attributes=c["attributes"], preprocess=prep, out_dir=tmp_path / "raw")
    civil_comments.prepare(tmp_path / "raw" / "all_data.csv", fmt="csv", member=None,
                           identities=c["identities"], settings=prep, seed=c["seed"],
                           out_dir=tmp_path / "data")
    data = tmp_path / "data"
    embedded.build("bert-tiny", architecture="bert", settings=c["models"]["embedded"],
                   seed=c["seed"], corpus=[data / "train.parquet"], out_dir=tmp_path / "base")

    attributes = c["attributes"]
    swapper = Swapper(IdentityLexicon.load(REPO / c["perturbation"]["lexicon"], attributes),
                      attributes, nlp=load_tagger(c["perturbation"]["spacy_model"]))
    train = pd.read_parquet(data / "train.parquet")
    perturbed, _ = perturbed_training_set(train, swapper, attributes,
                                          identities=c["identities"],
                                          identity_threshold=prep["identity_threshold"])
    write_parquet(perturbed, tmp_path / "perturbed.parquet")
    balanced, _ = balanced_fairness_set(pd.read_parquet(data / "fairness_original.parquet"),
                                        swapper, attributes)

    base = ModelSpec("bert-tiny", str(tmp_path / "base"), "bert")
    training = {"seed": c["seed"], **c["models"]["training"]["toxicity"]}
    fair = c["fairness"]
    gaps, sense = {}, {}
    for name, path in (("biased", data / "train.parquet"),
                       ("perturbed", tmp_path / "perturbed.parquet")):
        finetune.finetune(base, task="toxicity", train=path, validation=None,
                          settings=training, out_dir=tmp_path / name,
                          checkpoint_dir=tmp_path / f"checkpoints-{name}")
        joined = balanced.assign(prob=predict_proba(str(tmp_path / name),
                                                    balanced["text"].tolist()))
        result = evaluate(joined, attributes, threshold=fair["threshold"], resamples=100,
                          confidence=0.95, seed=c["seed"])
        gaps[name] = result["gaps"].pivot(index="attribute", columns="metric", values="value")
        sense[name] = sense_scores(joined, fair["sense_pairs"], list(attributes)).set_index(
            "attribute")["sense_score"]
    summary = pd.concat({"biased": gaps["biased"].assign(SenseScore=sense["biased"]),
                         "perturbed": gaps["perturbed"].assign(SenseScore=sense["perturbed"])})
    print(f"\n{summary.round(4).to_string()}\n({time.perf_counter() - start:.0f} s)")
    # An attribute whose association the biased model did not learn (SenseScore within the
    # null world's margin) has nothing to lower; every attribute it learned must fall.
    found = sense["biased"].index[sense["biased"] > controls.NULL_SENSE]
    assert len(found) >= 1, "the biased model learned no planted association"
    assert (sense["perturbed"][found] < sense["biased"][found]).all()
    assert sense["biased"].mean() > 1.5 * sense["perturbed"].mean()
    for metric in ("FPR_gap", "AUC_gap"):
        assert gaps["biased"][metric].mean() > 1.5 * gaps["perturbed"][metric].mean(), metric
