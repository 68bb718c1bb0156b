"""The representation benchmarks' one calling convention (``representation.runner``): each
runner gives what its module's scoring function gives, and ``table4.score`` is the three."""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from fixtures.tiny_models import CORPUS, tiny_masked_lm

from biasrepro.data.world.benchmarks import generate
from biasrepro.errors import ConfigError
from biasrepro.models.load import load_masked_lm
from biasrepro.representation import crows, seat, stereoset, table4
from biasrepro.representation.runner import Result

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config/config.yaml").read_text())
SEAT_SETTINGS = {"permutation_samples": 200, "seed": 0}
#: every KEEP-th CrowS-Pairs pair and StereoSet example (all bias types stay)
KEEP = 6


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The world's benchmarks, thinned, a bias-bench-named SEAT test beside them, and a tiny
    BERT masked LM."""
    d = tmp_path_factory.mktemp("runner")
    generate(CONFIG["models"]["embedded"]["stereotypes"]["associations"],
             attributes=CONFIG["attributes"], seed=CONFIG["seed"], out_dir=d)
    pairs = pd.read_csv(d / "crows_pairs.csv")
    pairs.iloc[::KEEP].to_csv(d / "crows_pairs.csv", index=False)
    doc = json.loads((d / "stereoset.json").read_text())
    doc["data"] = {kind: items[::KEEP] for kind, items in doc["data"].items()}
    (d / "stereoset.json").write_text(json.dumps(doc))
    shutil.copy(d / "seat" / "world-race.jsonl", d / "seat" / "sent-weat6.jsonl")
    model = tiny_masked_lm(d / "mlm", "bert",
                           [*CORPUS, *pairs["sent_more"], *pairs["sent_less"]])
    return {"model": model, "crows": d / "crows_pairs.csv", "stereoset": d / "stereoset.json",
            "seat": sorted((d / "seat").glob("*.jsonl"))}


@pytest.fixture(scope="module")
def pair(bench: dict[str, Path]) -> tuple:
    hf, tokenizer = load_masked_lm(bench["model"])
    return hf.to("cpu").eval(), tokenizer


def _same(got: Result, summary: dict, items: pd.DataFrame) -> None:
    assert isinstance(got, Result) and isinstance(got.items, pd.DataFrame)
    assert json.dumps(got.summary) == json.dumps(summary)  # JSON-ready, same keys in order
    pd.testing.assert_frame_equal(got.items, items)


@pytest.mark.parametrize("module", [crows, stereoset, seat])
def test_every_runner_has_the_one_signature(module) -> None:
    assert list(inspect.signature(module.run).parameters) == ["model", "source", "settings"]


@pytest.mark.parametrize("scoring", ["bias-bench", "nangia"])
def test_crows_runner_is_score_crows(bench, pair, scoring) -> None:
    got = crows.run(pair, bench["crows"], {"scoring": scoring})
    want = crows.score_crows(pair, crows.read_crows(bench["crows"]), scoring=scoring)
    items = want.pop("pairs")
    assert list(want) == ["scoring", "overall", "bias_types"]
    _same(got, want, items)


def test_stereoset_runner_is_score_stereoset(bench, pair) -> None:
    metrics, frame = stereoset.score_stereoset(pair, stereoset.read_stereoset(bench["stereoset"]))
    _same(stereoset.run(pair, bench["stereoset"], {}), metrics, frame)


def test_seat_runner_is_run_seat_over_the_tests_by_attribute(bench, pair) -> None:
    tests: dict[str, list[seat.SeatTest]] = {}
    for path in bench["seat"]:
        test = seat.read_seat(path)
        tests.setdefault(seat.attribute_of(test.name), []).append(test)
    assert [t.name for t in tests["gender"]] == ["sent-weat6", "world-gender"]
    table = seat.run_seat(tests, lambda texts: seat.encode(texts, pair), samples=200, seed=0)
    summary = {"average_absolute_effect": seat.average_absolute_effect(table),
               "tests": table.to_dict("records")}
    _same(seat.run(pair, bench["seat"], SEAT_SETTINGS), summary, table)
    one = seat.run(pair, bench["seat"][0], SEAT_SETTINGS)  # a single file is a source too
    pd.testing.assert_frame_equal(one.items, table.iloc[:1])
    with pytest.raises(ConfigError, match="attribute is unknown"):
        seat.attribute_of("sent-weat1")


def test_table4_score_is_the_three_runners_under_their_names(bench, pair) -> None:
    settings = {"crows": {"scoring": "bias-bench"}, "seat": SEAT_SETTINGS}
    result, frames = table4.score(str(bench["model"]), None, subspace=None,
                                  crows=bench["crows"], stereoset=bench["stereoset"],
                                  seat=bench["seat"], settings=settings, device="cpu")
    runs = {"crows": crows.run(pair, bench["crows"], settings["crows"]),
            "stereoset": stereoset.run(pair, bench["stereoset"], {}),
            "seat": seat.run(pair, bench["seat"], settings["seat"])}
    assert list(result) == ["model", "subspace", "crows", "stereoset", "seat"]
    assert result["model"] == str(bench["model"]) and result["subspace"] is None
    assert list(frames) == list(runs)
    for name, run in runs.items():
        _same(Result(result[name], frames[name]), run.summary, run.items)
