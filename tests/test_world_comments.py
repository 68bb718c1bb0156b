"""The Civil-Comments-shaped comment corpus of the planted-bias world, at default size."""

from __future__ import annotations

import copy
import csv
import json
import string
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasrepro import config as cfg
from biasrepro.data.split import stratified_split
from biasrepro.data.world import comments
from biasrepro.errors import ConfigError
from biasrepro.io import sha256_file
from biasrepro.metrics.dataset_bias import overamplification_bias, selection_bias

REPO = Path(__file__).resolve().parents[1]
CONFIG = cfg.load(REPO / "config" / "config.yaml")
SETTINGS = CONFIG["world"]["comments"]
IDENTITIES = CONFIG["identities"]
PREPROCESS = CONFIG["preprocess"]["civil_comments"]
ID_T, TOX_T = PREPROCESS["identity_threshold"], PREPROCESS["toxicity_threshold"]

#: the header of the Kaggle "Jigsaw Unintended Bias" all_data.csv
KAGGLE_HEADER = (
    "id,comment_text,split,created_date,publication_id,parent_id,article_id,rating,funny,wow,"
    "sad,likes,disagree,toxicity,severe_toxicity,obscene,sexual_explicit,identity_attack,"
    "insult,threat,male,female,transgender,other_gender,heterosexual,"
    "homosexual_gay_or_lesbian,bisexual,other_sexual_orientation,christian,jewish,muslim,"
    "hindu,buddhist,atheist,other_religion,black,white,asian,latino,other_race_or_ethnicity,"
    "physical_disability,intellectual_or_learning_disability,psychiatric_or_mental_illness,"
    "other_disability,identity_annotator_count,toxicity_annotator_count"
)
IDENTITY_COLUMNS = KAGGLE_HEADER.split(",")[20:44]
#: words that show a comment is about each identity (written here, independent of the lexicon)
KEYWORDS = {
    "male": r"males?|man|men|guys?|fathers?|husbands?",
    "female": r"females?|woman|women|girls?|mothers?|wife|wives",
    "black": r"blacks?",
    "white": r"whites?",
    "asian": r"asians?",
    "christian": r"christians?",
    "muslim": r"muslims?",
    "jewish": r"jewish|jews?",
}


def generate(out: Path, settings=SETTINGS, seed=CONFIG["seed"]) -> None:
    comments.generate(copy.deepcopy(settings), seed=seed, identities=list(IDENTITIES),
                      attributes=copy.deepcopy(CONFIG["attributes"]),
                      preprocess=copy.deepcopy(PREPROCESS), out_dir=out)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("comments")
    start = time.perf_counter()
    generate(out)
    print(f"\nworld comments at default size: {time.perf_counter() - start:.2f} s")
    df = pd.read_csv(out / "all_data.csv")
    truth = json.loads((out / "ground_truth.json").read_text())
    return out, df, truth


@pytest.fixture(scope="module")
def built():
    """``comments.build`` at the default settings: the table, its truth, the pattern ids."""
    return comments.build(copy.deepcopy(SETTINGS), seed=CONFIG["seed"], identities=IDENTITIES,
                          attributes=CONFIG["attributes"], preprocess=PREPROCESS)


def half_up(n: int, rate: float) -> int:
    return int(n * rate + 0.5 + 1e-9)


def about(df: pd.DataFrame) -> pd.DataFrame:
    """Membership of the configured identities (False for unannotated rows)."""
    return (df[IDENTITIES] >= ID_T).fillna(False)


def test_csv_has_the_kaggle_columns_and_unique_ids(world):
    out, df, _ = world
    with open(out / "all_data.csv", encoding="utf-8") as f:
        assert f.readline().rstrip("\n") == KAGGLE_HEADER
    assert df["id"].is_unique
    n = sum(g["n"] for g in SETTINGS["groups"].values()) + SETTINGS["multi_identity"]["n"] \
        + SETTINGS["n_background"] + SETTINGS["n_unannotated"]
    assert len(df) == n
    assert set(df["rating"]) <= {"approved", "rejected"}
    assert set(df["split"]) == {"train", "test"}
    assert df["created_date"].str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00").all()


def test_identity_cells_are_empty_exactly_for_unannotated_rows(world):
    out, df, _ = world
    with open(out / "all_data.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        empty = [row[c] == "" for c in IDENTITY_COLUMNS]
        assert all(empty) if row["identity_annotator_count"] == "0" else not any(empty)
    assert (df["identity_annotator_count"] == 0).sum() == SETTINGS["n_unannotated"]


def test_values_are_rater_fractions_on_the_right_side_of_the_thresholds(world):
    _, df, _ = world
    k = df["toxicity"] * df["toxicity_annotator_count"]
    assert np.allclose(k, k.round())
    annotated = df[df["identity_annotator_count"] > 0]
    k = annotated[IDENTITY_COLUMNS].mul(annotated["identity_annotator_count"], axis=0)
    assert np.allclose(k, k.round())
    # other identities sometimes hold a small fraction below the threshold
    small = annotated[IDENTITIES].gt(0) & annotated[IDENTITIES].lt(ID_T)
    assert small.any().any()
    for col in ("severe_toxicity", "obscene", "identity_attack", "insult", "threat"):
        assert (df[col] <= df["toxicity"] + 1e-9).all(), col


def test_group_blocks_have_exact_sizes_and_toxic_counts(world):
    _, df, truth = world
    members = about(df[df["identity_annotator_count"] > 0])
    toxic = df.loc[members.index, "toxicity"] >= TOX_T
    single = members.sum(axis=1) == 1
    for g, spec in SETTINGS["groups"].items():
        rows = single & members[g]
        assert rows.sum() == spec["n"]
        assert toxic[rows].sum() == int(spec["n"] * spec["toxic_ratio"] + 0.5)
    multi = members.sum(axis=1) == 2
    assert multi.sum() == SETTINGS["multi_identity"]["n"]
    assert toxic[multi].sum() == round(SETTINGS["multi_identity"]["n"]
                                       * SETTINGS["multi_identity"]["toxic_ratio"])
    assert (members[multi][["male", "female"]].all(axis=1)).any()   # the first pair
    background = members.sum(axis=1) == 0
    assert background.sum() == SETTINGS["n_background"]
    assert truth["rows"]["unannotated"] == SETTINGS["n_unannotated"]


def test_ground_truth_matches_a_recount_and_the_data_stage_split(world):
    _, df, truth = world
    kept = df[df["identity_annotator_count"] > 0].copy()
    kept["label"] = (kept["toxicity"] >= TOX_T).astype(int)
    members = about(kept)
    for g in IDENTITIES:
        stated = truth["annotated"][g]
        assert (stated["n"], stated["n_toxic"]) == (members[g].sum(),
                                                   kept.loc[members[g], "label"].sum())
    # split as the data stage does, with the project's seeded stratified split
    signature = members.apply(lambda r: "+".join(sorted(r.index[r])) or "none", axis=1)
    kept["id"] = kept["id"].astype(str)
    split = stratified_split(kept, kept["label"].astype(str) + "|" + signature,
                             PREPROCESS["split"], seed=7, order_by="id")
    train = kept[split == "train"]
    counts = {g: {"n": int(members.loc[train.index, g].sum()),
                  "n_toxic": int(train.loc[members.loc[train.index, g], "label"].sum())}
              for g in IDENTITIES}
    assert {g: {k: v[k] for k in ("n", "n_toxic")} for g, v in truth["train"].items()} == counts
    assert truth["selection_bias"] == pytest.approx(selection_bias(counts, CONFIG["attributes"]))
    assert truth["overamplification_bias"] == overamplification_bias(counts,
                                                                     CONFIG["attributes"])
    assert max(v["normalized"] for v in truth["overamplification_bias"].values()) == 1.0


def test_the_data_stage_finds_the_stated_training_counts(world, tmp_path):
    civil_comments = pytest.importorskip("biasrepro.data.civil_comments")
    out, _, truth = world
    civil_comments.prepare(out / "all_data.csv", fmt="csv", member=None,
                           identities=list(IDENTITIES), settings=copy.deepcopy(PREPROCESS),
                           seed=CONFIG["seed"], out_dir=tmp_path)
    train = pd.read_parquet(tmp_path / "train.parquet")
    for g in IDENTITIES:
        rows = train[train[g] >= ID_T]
        assert (len(rows), rows["label"].sum()) == (truth["train"][g]["n"],
                                                    truth["train"][g]["n_toxic"]), g


def test_texts_name_their_identities_and_give_the_cleaning_work(world):
    _, df, _ = world
    members = about(df)
    text = df["comment_text"]
    for g, pattern in KEYWORDS.items():
        says_g = text.str.contains(rf"\b(?:{pattern})\b", case=False, regex=True)
        assert says_g[members[g]].all(), g
    any_identity = "|".join(KEYWORDS.values())
    annotated_none = (df["identity_annotator_count"] > 0) & ~members.any(axis=1)
    assert not text[annotated_none].str.contains(rf"\b(?:{any_identity})\b", case=False).any()
    assert text.str.contains(r"https?://", regex=True).any()
    assert text.str.contains("www.", regex=False).any()
    assert text.str.contains(r"[^\x00-\x7f]", regex=True).any()
    assert text.str.contains("\u2019").any()
    for contraction in ("don't", "it's", "they're", "can't"):
        assert text.str.contains(contraction, case=False, regex=False).any(), contraction
    assert text.str.contains(r"\b[A-Z]{4,}\b", regex=True).any()
    assert text.str.contains(r"[a-z][,.][A-Za-z]", regex=True).any()
    assert text.str.contains("\n", regex=False).any()
    # nothing is left empty by removing URLs and non-ASCII characters
    stripped = text.str.replace(r"(?:https?://|www\.)\S+", "", regex=True) \
        .str.replace(r"[^\x00-\x7f]", "", regex=True).str.strip()
    assert (stripped.str.len() > 10).all()


def test_ambiguous_rows_are_exact_per_group_and_stated(world, built):
    _, df, truth = world
    table, _, pids = built
    assert table["id"].tolist() == df["id"].tolist()       # pattern ids line up with the CSV
    ambiguous = pd.Series(pids).str.startswith("ambiguous.").to_numpy()
    members = about(df)
    single = (members.sum(axis=1) == 1).to_numpy() & (df["identity_annotator_count"] > 0)
    assert not ambiguous[~single].any()     # multi-identity, background, unannotated: never
    toxic = (df["toxicity"] >= TOX_T).to_numpy()
    share = SETTINGS["ambiguous"]
    for g, spec in SETTINGS["groups"].items():
        rows = (single & members[g]).to_numpy()
        n_toxic = half_up(spec["n"], spec["toxic_ratio"])
        expected = {"n_toxic": half_up(n_toxic, share["toxic_share"].get(g, 0.0)),
                    "n_civil": half_up(spec["n"] - n_toxic, share["civil_share"])}
        found = {"n_toxic": int((rows & ambiguous & toxic).sum()),
                 "n_civil": int((rows & ambiguous & ~toxic).sum())}
        assert found == expected, g
        stated = truth["ambiguous"][g]
        assert {k: stated[k] for k in found} == found
        assert stated["n"] == sum(found.values())
        assert stated["toxic_ratio"] == pytest.approx(found["n_toxic"] / stated["n"])
    # the plant: among ambiguous comments, marginalized groups are mostly toxic, others never
    for attr in CONFIG["attributes"].values():
        assert all(truth["ambiguous"][g]["toxic_ratio"] > 0.5 for g in attr["marginalized"])
        assert all(truth["ambiguous"][g]["toxic_ratio"] == 0 for g in attr["non_marginalized"])


def test_ambiguous_patterns_have_no_cue_and_serve_both_labels(world, built):
    _, df, _ = world
    _, _, pids = built
    ids = [k for k in comments.PATTERNS if k.startswith("ambiguous.any.")]
    assert len(ids) >= 10
    for k in ids:      # identity slots only (no insult), and none of the labelled patterns
        fields = {f for _, f, _, _ in string.Formatter().parse(comments.PATTERNS[k]) if f}
        assert fields and fields <= {"group", "a_member", "the_member", "adj"}, k
        assert comments.PATTERNS[k] not in (*comments.IDENTITY["civil"],
                                            *comments.IDENTITY["toxic"])
    toxic = df["toxicity"] >= TOX_T
    used = pd.DataFrame({"pid": pids, "toxic": toxic})
    used = used[used["pid"].str.startswith("ambiguous.")]
    labels = used.groupby("pid")["toxic"].nunique()
    assert set(labels.index) == set(ids) and (labels == 2).all()
    # and the same text, identity words aside, with both labels
    any_identity = "|".join(KEYWORDS.values())
    text = df.loc[used.index, "comment_text"].str.lower() \
        .str.replace(rf"\b(?:{any_identity})\b", "<identity>", regex=True)
    both = pd.DataFrame({"text": text, "toxic": toxic[used.index]}) \
        .groupby("text")["toxic"].nunique()
    assert (both == 2).sum() >= 5


def test_ambiguity_changes_the_texts_only(built):
    table, truth, _ = built
    plain = copy.deepcopy(SETTINGS)
    plain["ambiguous"] = {"civil_share": 0.0, "toxic_share": {}}
    other, other_truth, pids = comments.build(plain, seed=CONFIG["seed"], identities=IDENTITIES,
                                              attributes=CONFIG["attributes"],
                                              preprocess=PREPROCESS)
    assert not any(p.startswith("ambiguous.") for p in pids)
    pd.testing.assert_frame_equal(other.drop(columns="comment_text"),
                                  table.drop(columns="comment_text"))
    assert (other["comment_text"] != table["comment_text"]).any()
    for key in ("annotated", "strata", "train", "selection_bias", "overamplification_bias"):
        assert other_truth[key] == truth[key], key
    assert all(v["n"] == 0 and v["toxic_ratio"] is None
               for v in other_truth["ambiguous"].values())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda a: a.update(civil_share=1.5),
         r"world\.comments\.ambiguous\.civil_share: 1\.5 is not in \[0, 1\]"),
        (lambda a: a["toxic_share"].update(female=-0.1),
         r"world\.comments\.ambiguous\.toxic_share\.female: -0\.1 is not in"),
        (lambda a: a["toxic_share"].update(hindu=0.5),
         r"world\.comments\.ambiguous\.toxic_share\.hindu: not in world\.comments\.groups"),
    ],
)
def test_bad_ambiguous_settings_are_refused(tmp_path, edit, message):
    settings = copy.deepcopy(SETTINGS)
    edit(settings["ambiguous"])
    with pytest.raises(ConfigError, match=message):
        generate(tmp_path, settings=settings)
    assert not list(tmp_path.iterdir())


def test_patterns_and_determinism(world, built, tmp_path):
    out, _, _ = world
    _, _, pids = built
    assert len(set(pids)) >= 30
    again = comments.build(copy.deepcopy(SETTINGS), seed=CONFIG["seed"], identities=IDENTITIES,
                           attributes=CONFIG["attributes"], preprocess=PREPROCESS)
    assert again[2] == pids
    generate(tmp_path / "a")
    for name in ("all_data.csv", "ground_truth.json"):
        assert sha256_file(tmp_path / "a" / name) == sha256_file(out / name)
    generate(tmp_path / "b", seed=CONFIG["seed"] + 1)
    assert sha256_file(tmp_path / "b" / "all_data.csv") != sha256_file(out / "all_data.csv")


def test_a_group_without_words_is_refused(tmp_path):
    settings = copy.deepcopy(SETTINGS)
    settings["groups"]["other_religion"] = {"n": 5, "toxic_ratio": 0.2}
    with pytest.raises(ConfigError, match=r"world\.comments\.groups\.other_religion"):
        comments.generate(settings, seed=1, identities=[*IDENTITIES, "other_religion"],
                          attributes=CONFIG["attributes"], preprocess=PREPROCESS,
                          out_dir=tmp_path)
    assert not list(tmp_path.iterdir())
