"""``biasrepro representation {subspace,score,table}`` and their library functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from fixtures.tiny_models import CORPUS, tiny_masked_lm

from biasrepro.cli import main
from biasrepro.data.world.benchmarks import generate
from biasrepro.debias import sentdebias
from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.fairness.report import representation_by_method
from biasrepro.representation import table4

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config/config.yaml").read_text())
WORDS = {"gender": [["woman", "man"], ["women", "men"], ["she", "he"]],
         "race": [["black", "white", "asian"]],
         "religion": [["muslim", "christian", "jewish"]]}
SETTINGS = {"seed": 3, "models": {"registry": {}},
            "representation": {"models": [], "attributes": ["gender"],
                               "crows": {"scoring": "bias-bench"},
                               "seat": {"permutation_samples": 200, "seed": 0},
                               "sentdebias": {"n_components": 1, "max_sentences": None,
                                              "max_length": 64}}}
TEXTS = ["The woman said she liked the film. The man said he did not!",
         "Black and white neighbours met; the Muslim family came too.",
         "A quiet evening."] * 10


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "biasrepro", *args], capture_output=True,
                          text=True, cwd=REPO)


def _main(*args: str) -> int:
    """The command line in this process (no interpreter start per call)."""
    return main(list(args))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("rep")
    generate(CONFIG["models"]["embedded"]["stereotypes"]["associations"],
             attributes=CONFIG["attributes"], seed=CONFIG["seed"], out_dir=d / "bench")
    (d / "words.json").write_text(json.dumps(WORDS))
    pd.DataFrame({"text": TEXTS}).to_parquet(d / "corpus.parquet")
    crows = pd.read_csv(d / "bench/crows_pairs.csv")
    corpus = [*CORPUS, *crows["sent_more"], *crows["sent_less"], *TEXTS]
    model = tiny_masked_lm(d / "mlm", "bert", corpus)
    return {"dir": d, "model": model, "bench": d / "bench", "words": d / "words.json",
            "corpus": d / "corpus.parquet"}


def test_parquet_corpus_is_split_into_sentences_with_punctuation_set_off(tmp_path):
    pd.DataFrame({"text": ["The woman left. Then the man came!", "Why?"]}).to_parquet(
        tmp_path / "c.parquet")
    (tmp_path / "c.txt").write_text("one line\n\nanother line\n")
    got = table4.read_corpus([tmp_path / "c.parquet", tmp_path / "c.txt"],
                               max_sentences=None, seed=0)
    assert got == ["The woman left .", "Then the man came !", "Why ?", "one line",
                   "another line"]
    # the tokens now match the attribute words, as Wikipedia-2.5's do
    assert sentdebias.counterfactual_tuples(got[:2], [("woman", "man")]) == [
        ("the woman left .", "the man left ."), ("then the woman came !", "then the man came !")]
    one = table4.read_corpus([tmp_path / "c.parquet"], max_sentences=2, seed=5)
    assert one == table4.read_corpus([tmp_path / "c.parquet"], max_sentences=2, seed=5)
    assert len(one) == 2 and set(one) <= set(got)


def test_empty_or_missing_corpus_names_the_file(tmp_path):
    (tmp_path / "empty.txt").write_text("\n \n")
    with pytest.raises(DataError, match="no sentences") as e:
        table4.read_corpus([tmp_path / "empty.txt"], max_sentences=None, seed=0)
    assert "empty.txt" in str(e.value)
    with pytest.raises(DataError, match="not found"):
        table4.read_corpus([tmp_path / "nope.txt"], max_sentences=None, seed=0)


def test_the_corpus_streams_the_sentences_and_the_sample_of_the_whole_list(tmp_path,
                                                                           monkeypatch):
    """Read three bytes and two Parquet texts at a time, the corpus gives the sentences (every
    line break of ``str.splitlines``, ``\\r\\n`` across blocks, multi-byte characters) and the
    seeded sample that holding it whole gave; its errors name the line as before."""
    import functools

    from biasrepro import io

    text = "He said é .\r\nshe left\r\rthe man\u2028a woman 🙂\x85\n\n  x  \x0blast one"
    (tmp_path / "c.txt").write_text(text, encoding="utf-8", newline="")
    texts = ["The woman left. Then the man came!", "Why?", "", "A. B. C."]
    pd.DataFrame({"text": texts}).to_parquet(tmp_path / "c.parquet")
    paths = [tmp_path / "c.txt", tmp_path / "c.parquet", tmp_path / "c.txt"]
    whole = table4.read_corpus(paths, max_sentences=None, seed=0, sentence_split="punkt")
    assert whole[:3] == ["he said é .", "she left", "the man"]
    monkeypatch.setattr(table4, "iter_text_lines",
                        functools.partial(io.iter_text_lines, block_bytes=3))
    monkeypatch.setattr(table4, "_PARQUET_BLOCK", 2)
    for split in ("line", "punkt"):
        lines = sentdebias.split_lines(text.splitlines(), split)
        parquet = table4.read_corpus([tmp_path / "c.parquet"], max_sentences=None, seed=0)
        everything = [*lines, *parquet, *lines]
        assert table4.read_corpus(paths, max_sentences=None, seed=0,
                                    sentence_split=split) == everything
        for k, seed in ((1, 0), (4, 3), (len(everything) - 1, 5), (len(everything), 0)):
            keep = (np.sort(np.random.default_rng(seed).choice(len(everything), k,
                                                                replace=False))
                    if k < len(everything) else range(k))
            corpus = table4.Corpus(paths, max_sentences=k, seed=seed, sentence_split=split)
            assert list(corpus) == [everything[i] for i in keep] and corpus.size == k
    (tmp_path / "bad.txt").write_bytes(b"he a\nshe\x00 b\nc\n\xc3 x\n")
    with pytest.raises(DataError, match="row 4: not valid UTF-8"):
        table4.read_corpus([tmp_path / "bad.txt"], max_sentences=None, seed=0)
    (tmp_path / "bad.txt").write_bytes(b"he a\nshe\x00 b\nc\n")
    with pytest.raises(DataError, match="row 2: NUL character"):
        table4.read_corpus([tmp_path / "bad.txt"], max_sentences=None, seed=0)


def test_a_bad_corpus_fails_before_the_model_is_loaded(tmp_path):
    """The corpus is checked whole before the model is loaded, though it is streamed."""
    (tmp_path / "w.json").write_text(json.dumps(WORDS))
    (tmp_path / "c.txt").write_bytes(b"he said\n" * 1000 + b"\xff\n")
    with pytest.raises(DataError, match="row 1001: not valid UTF-8"):
        table4.compute(str(tmp_path / "no-model"), None, words=tmp_path / "w.json",
                         attribute="gender", corpus=[tmp_path / "c.txt"],
                         settings=SETTINGS["representation"]["sentdebias"], seed=0)


def test_seat_tests_map_to_their_attribute():
    from biasrepro.representation.seat import attribute_of

    assert attribute_of("sent-weat7b") == "gender"
    assert attribute_of("sent-angry_black_woman_stereotype") == "race"
    assert attribute_of("world-religion") == "religion"
    with pytest.raises(ConfigError, match="sent-weat1"):
        attribute_of("sent-weat1")


def test_table4_has_a_row_per_model_and_variant():
    result = {"crows": {"bias_types": {"gender": {"metric_score": 60.0},
                                       "race-color": {"metric_score": 55.0},
                                       "age": {"metric_score": 70.0}}},
              "stereoset": {"gender": {"ss": 58.0}, "overall": {"ss": 57.0}},
              "seat": {"average_absolute_effect": {"gender": 0.25}}}
    rows = table4.long_rows(result, model="m", variant="pretrained")
    assert sorted((r["source"], r["attribute"], r["value"]) for r in rows) == [
        ("crows", "gender", 60.0), ("crows", "race", 55.0), ("seat", "gender", 0.25),
        ("stereoset", "gender", 58.0)]
    md = table4.table4(pd.DataFrame(rows))
    assert "| m | pretrained | 60.00 | 55.00 | 58.00 | 0.250 |" in md


def test_representation_rows_follow_each_method_to_its_pretrained_variant():
    table = pd.DataFrame([{"model": "m", "variant": v, "attribute": "gender", "source": "crows",
                           "value": x} for v, x in (("pretrained", 60.0),
                                                    ("sentdebias-gender", 52.0))])
    registry = {"baseline": {"data": "original"},
                "up": {"data": "original", "sentdebias": {"attribute": "gender",
                                                          "stage": "upstream"}},
                "down": {"data": "original", "sentdebias": {"attribute": "gender",
                                                            "stage": "downstream",
                                                            "base": "baseline"}}}
    got = representation_by_method(table, ["baseline", "up", "down"], registry)
    assert sorted(zip(got["method"], got["value"], got["source"], strict=True)) == [
        ("baseline", 60.0, "representation_crows"), ("up", 52.0, "representation_crows")]


def test_subspace_score_and_table_through_the_command_line(world, tmp_path):
    settings = json.dumps(SETTINGS)
    subs = [tmp_path / f"{a}.safetensors" for a in ("gender", "race")]
    assert _main("representation", "subspace", "--model", str(world["model"]), "--attribute",
                 "gender", "race", "--stage", "upstream", "--words", str(world["words"]),
                 "--corpus", str(world["corpus"]), "--settings", settings,
                 "--out", *map(str, subs)) == 0
    for attribute, sub in zip(("gender", "race"), subs, strict=True):
        vectors, meta = sentdebias.read_file(sub)
        assert vectors.shape == (1, 16) and np.linalg.norm(vectors[0]) == pytest.approx(1, 1e-5)
        assert meta["attribute"] == attribute and meta["stage"] == "upstream"
    # one model, several attributes: the same bytes as one run per attribute
    alone = tmp_path / "alone.safetensors"
    assert _main("representation", "subspace", "--model", str(world["model"]), "--attribute",
                 "race", "--stage", "upstream", "--words", str(world["words"]), "--corpus",
                 str(world["corpus"]), "--settings", settings, "--out", str(alone)) == 0
    assert alone.read_bytes() == subs[1].read_bytes()
    seat = sorted(str(p) for p in (world["bench"] / "seat").glob("*.jsonl"))
    bench = ["--crows", str(world["bench"] / "crows_pairs.csv"), "--stereoset",
             str(world["bench"] / "stereoset.json"), "--seat", *seat, "--settings", settings]
    out = tmp_path / "scores" / "tiny"
    assert _main("representation", "score", "--model", str(world["model"]), "--variant",
                 "pretrained", f"sentdebias-gender={subs[0]}", *bench,
                 "--out-dir", str(out)) == 0
    assert sorted(os.listdir(out)) == ["pretrained", "sentdebias-gender"]
    outs = [out / variant / "scores.json" for variant in ("pretrained", "sentdebias-gender")]
    for path in outs:
        assert sorted(os.listdir(path.parent)) == ["crows.csv", "scores.json", "seat.csv",
                                                   "stereoset.csv"]
    debiased = json.loads(outs[1].read_text())
    assert debiased["variant"] == "sentdebias-gender"
    assert debiased["subspace"]["attribute"] == "gender"
    # the hook is active: the gender SEAT effect changes when the subspace is removed
    plain = json.loads(outs[0].read_text())
    assert (plain["seat"]["average_absolute_effect"]["gender"]
            != debiased["seat"]["average_absolute_effect"]["gender"])
    # each variant scored on its own gives the same bytes as in one run with the others
    one = tmp_path / "one"
    assert _main("representation", "score", "--model", str(world["model"]), "--variant",
                 f"sentdebias-gender={subs[0]}", *bench, "--out-dir", str(one)) == 0
    for name in ("scores.json", "crows.csv", "stereoset.csv", "seat.csv"):
        got = (one / "sentdebias-gender" / name).read_bytes()
        assert got == (out / "sentdebias-gender" / name).read_bytes()
    assert _main("representation", "table", "--inputs", *map(str, outs), "--out-csv",
                 str(tmp_path / "t4.csv"), "--out-md", str(tmp_path / "t4.md")) == 0
    t4 = pd.read_csv(tmp_path / "t4.csv")
    assert set(t4["variant"]) == {"pretrained", "sentdebias-gender"}
    assert set(t4["source"]) == {"crows", "stereoset", "seat"} and set(t4["model"]) == {"tiny"}


@pytest.mark.parametrize("case", ["outs", "out-dir", "variant", "missing-subspace"])
def test_mismatched_arguments_are_one_error_and_no_output(world, tmp_path, case):
    common = ["--words", str(world["words"]), "--corpus", str(world["corpus"]), "--settings",
              json.dumps(SETTINGS)]
    subspace = ["representation", "subspace", "--model", str(world["model"]), "--stage",
                "upstream", *common]
    score = ["representation", "score", "--model", str(world["model"]), "--crows",
             str(world["bench"] / "crows_pairs.csv"), "--stereoset",
             str(world["bench"] / "stereoset.json"), "--seat",
             str(world["bench"] / "seat" / "world-gender.jsonl"), "--settings",
             json.dumps(SETTINGS), "--out-dir", str(tmp_path / "scores")]
    args, expected = {
        "outs": ([*subspace, "--attribute", "gender", "race", "--out",
                  str(tmp_path / "g.safetensors")], "one --out per --attribute"),
        "out-dir": ([*subspace, "--attribute", "gender", "race", "--out-dir",
                     str(tmp_path / "copy")], "--out-dir takes one --attribute"),
        "variant": ([*score, "--variant", "pretrained", "pretrained"], "must differ"),
        "missing-subspace": ([*score, "--variant", "pretrained",
                              f"sentdebias-gender={tmp_path / 'nope.safetensors'}"],
                             "nope.safetensors"),
    }[case]
    proc = _cli(*args)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_downstream_copy_carries_the_subspace_and_refuses_a_second(world, tmp_path):
    out = tmp_path / "debiased"
    (world["model"] / ".snakemake_timestamp").touch()
    assert _main("representation", "subspace", "--model", str(world["model"]), "--attribute",
                 "gender", "--stage", "downstream", "--words", str(world["words"]), "--corpus",
                 str(world["corpus"]), "--settings", json.dumps(SETTINGS), "--out-dir",
                 str(out)) == 0
    originals = sorted(p.name for p in world["model"].iterdir()
                       if p.is_file() and p.name != ".snakemake_timestamp")
    assert sorted(os.listdir(out)) == sorted([*originals, sentdebias.SUBSPACE_FILE])
    assert sentdebias.load(out)[1]["stage"] == "downstream"
    model, _ = table4.load_model(str(out), None, head="base")
    assert model.sentdebias[1]["attribute"] == "gender"          # re-attached on load
    again = _cli("representation", "subspace", "--model", str(out), "--attribute", "gender",
                 "--stage", "downstream", "--words", str(world["words"]), "--corpus",
                 str(world["corpus"]), "--settings", json.dumps(SETTINGS), "--out-dir",
                 str(tmp_path / "twice"))
    assert again.returncode == 2 and again.stderr.count("error:") == 1
    assert "already carries a SentenceDebias subspace" in again.stderr
    assert not (tmp_path / "twice").exists() or not os.listdir(tmp_path / "twice")


def test_unknown_attribute_in_the_words_file_is_a_clear_error(world, tmp_path):
    (tmp_path / "w.json").write_text(json.dumps({"gender": WORDS["gender"]}))
    with pytest.raises(DataError, match="no attribute 'race'"):
        table4.compute(str(world["model"]), None, words=tmp_path / "w.json",
                         attribute="race", corpus=[world["corpus"]],
                         settings=SETTINGS["representation"]["sentdebias"], seed=0)
    with pytest.raises(ModelError):
        table4.debias_copy(tmp_path / "missing", np.zeros((1, 16)), {}, tmp_path / "o")


def test_a_missing_text_in_a_parquet_corpus_names_its_row(tmp_path: Path) -> None:
    from biasrepro.errors import DataError
    from biasrepro.io import write_parquet

    bad = tmp_path / "corpus.parquet"
    write_parquet(pd.DataFrame({"text": ["A film. Another one!", None, "x"]}), bad)
    with pytest.raises(DataError, match=f"{bad}, row 2, column 'text': text is missing"):
        table4.read_corpus([bad], max_sentences=None, seed=1)
