"""Prediction at scale: exact against a per-text reference, each text
scored once, batches within the token budget, the predict-callable API, the Parquet step."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import BIN, env_with_venv
from fixtures.tiny_models import tiny_classifier
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from biasrepro.cli import main
from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import sha256_file
from biasrepro.models.load import ModelSpec, resolve
from biasrepro.models.predict import (
    plan_batches,
    predict_file,
    predict_files,
    predict_proba,
    score_texts,
)

ARCHS = ("bert", "albert", "roberta")
#: the fixture tokenizers stop at 128 tokens (their model_max_length; 130 positions)
POSITION_LIMIT = {"bert": 128, "albert": 128, "roberta": 128}

SENTENCES = [
    "The nurse said she would help with the film.",
    "An engineer from Norway fixed his bicycle before the premiere!",
    "Muslim and Christian neighbours praised the quiet director.",
    "This movie was wonderful, funny and warm; I loved it.",
    "A dull, clumsy script and a terrible ending. I hated it.",
    "Café Meridian — naïve, odd, and ünusual",
    "ok",
]


def workload(seed: int = 0) -> list[str]:
    """Mixed lengths (2 to ~400 tokens, so some are truncated) with exact duplicates."""
    rng = random.Random(seed)
    texts = [" ".join(rng.choices(SENTENCES, k=rng.randint(1, 40))) for _ in range(40)]
    return texts + rng.choices(texts, k=20) + SENTENCES


def spread_weights(path) -> str:
    """Make the fixture's scores spread over (0, 1): at the default initialisation every
    text scores about 0.5, where a padding or truncation error would hide in 1e-6. The
    encoder's matrices are re-drawn at unit scale, and the output layer maps a random
    direction of its input, centred and scaled on the test workload, to the logit
    difference."""
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():
            if param.ndim == 2:
                param.copy_(torch.randn(param.shape, generator=gen))
        out = getattr(model.classifier, "out_proj", model.classifier)
        seen: list[torch.Tensor] = []
        handle = out.register_forward_hook(lambda _m, args, _o: seen.append(args[0]))
        for text in workload():
            model(**tokenizer(text, truncation=True, max_length=128, return_tensors="pt"))
        handle.remove()
        direction = torch.randn(out.in_features, generator=gen)
        z = torch.cat(seen) @ direction
        out.weight.zero_()
        out.weight[1] = direction * 2 / z.std()
        out.bias.copy_(torch.tensor([0.0, -z.mean().item() * 2 / z.std().item()]))
    model.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("models")
    return {arch: spread_weights(tiny_classifier(root / arch, arch, seed=1)) for arch in ARCHS}


def reference(path: str, texts: list[str], max_length: int) -> np.ndarray:
    """One text at a time, unpadded: the plain computation predict_proba must reproduce."""
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    out = []
    with torch.no_grad():
        for text in texts:
            enc = tokenizer(text, truncation=True, max_length=max_length, return_tensors="pt")
            out.append(model(**enc).logits.softmax(-1)[0, 1].item())
    return np.array(out)


def loaded(path: str):
    return (AutoModelForSequenceClassification.from_pretrained(path),
            AutoTokenizer.from_pretrained(path))


def record_batches(model) -> list[torch.Tensor]:
    """Every batch's attention mask, recorded by a forward pre-hook."""
    masks: list[torch.Tensor] = []
    model.register_forward_pre_hook(
        lambda _m, _a, kwargs: masks.append(kwargs["attention_mask"].clone()), with_kwargs=True)
    return masks


# -- equal to the reference -----------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHS)
def test_matches_per_text_reference(models, arch) -> None:
    texts = workload()
    expected = reference(models[arch], texts, POSITION_LIMIT[arch])
    assert expected.std() > 0.05  # the model tells the texts apart
    for batch_tokens in (None, 300):
        probs = predict_proba(models[arch], texts, batch_tokens=batch_tokens)
        assert probs.shape == (len(texts),) and probs.dtype == np.float64
        np.testing.assert_allclose(probs, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("arch", ARCHS)
def test_spec_pair_and_path_agree(models, arch) -> None:
    texts = workload(1)
    by_path = predict_proba(models[arch], texts)
    by_spec = predict_proba(ModelSpec(arch, models[arch], arch), texts)
    by_pair = predict_proba(loaded(models[arch]), texts)
    assert by_path.tobytes() == by_spec.tobytes()
    np.testing.assert_allclose(by_pair, by_path, rtol=0, atol=1e-6)


def test_training_max_length_is_the_default(models, tmp_path) -> None:
    model_dir = shutil.copytree(models["bert"], tmp_path / "finetuned")
    (model_dir / "training.json").write_text(json.dumps({"settings": {"max_length": 12}}))
    texts = workload(2)
    np.testing.assert_allclose(predict_proba(model_dir, texts),
                               reference(str(model_dir), texts, 12), rtol=0, atol=1e-5)
    long_default = predict_proba(models["bert"], texts)
    assert np.abs(predict_proba(model_dir, texts) - long_default).max() > 1e-4
    # an explicit max_length wins over training.json
    np.testing.assert_allclose(predict_proba(model_dir, texts, max_length=40),
                               reference(str(model_dir), texts, 40), rtol=0, atol=1e-5)


def test_max_length_beyond_the_position_embeddings_is_refused(models) -> None:
    with pytest.raises(ModelError, match="max_length 200 exceeds its 128 positions"):
        predict_proba(models["roberta"], ["a text"], max_length=200)


# -- speed techniques -----------------------------------------------------------------------

def test_each_distinct_text_reaches_the_model_once(models) -> None:
    model, tokenizer = loaded(models["bert"])
    masks = record_batches(model)
    distinct = workload()[:40]
    texts = distinct * 3
    random.Random(0).shuffle(texts)
    probs, stats = score_texts((model, tokenizer), texts)
    assert sum(len(m) for m in masks) == len(set(distinct)) == stats.unique_inputs
    assert (stats.rows, stats.unique_texts) == (120, len(set(distinct)))
    by_text = dict(zip(texts, probs, strict=True))
    np.testing.assert_allclose([by_text[t] for t in texts], probs, rtol=0, atol=0)


def test_texts_equal_after_truncation_are_one_input(models) -> None:
    model, tokenizer = loaded(models["bert"])
    masks = record_batches(model)
    stem = "the nurse said she would help with the film"
    texts = [f"{stem} {name}" for name in ("maria", "tom", "norway")] + [stem]
    probs, stats = score_texts((model, tokenizer), texts, max_length=6)
    assert (stats.unique_texts, stats.unique_inputs) == (4, 1)
    assert sum(len(m) for m in masks) == 1
    assert len(set(probs.tolist())) == 1


@pytest.mark.parametrize("batch_tokens", [64, 257, 1000])
def test_batches_respect_the_token_budget(models, batch_tokens) -> None:
    model, tokenizer = loaded(models["albert"])
    masks = record_batches(model)
    texts = workload(3)
    _, stats = score_texts((model, tokenizer), texts, batch_tokens=batch_tokens)
    for mask in masks:
        rows, padded = mask.shape
        assert rows * padded <= batch_tokens or rows == 1
        assert mask[:, -1].any()  # padded only to the batch's longest input
    lengths = [int(n) for m in masks for n in m.sum(1)]
    assert lengths == sorted(lengths, reverse=True)  # longest first
    assert len(masks) == stats.batches > 1
    assert sum(m.numel() for m in masks) == stats.padded_tokens
    assert sum(lengths) == stats.tokens


def test_plan_batches() -> None:
    assert plan_batches([10, 10, 9, 5, 5, 5, 2], 20) == [(0, 2, 10), (2, 4, 9), (4, 7, 5)]
    assert plan_batches([50, 3], 20) == [(0, 1, 50), (1, 2, 3)]  # too long: a batch alone
    assert plan_batches([13, 5], 32, multiple=8) == [(0, 2, 16)]
    assert plan_batches([130, 1], 200, multiple=8, cap=130) == [(0, 1, 130), (1, 2, 8)]
    assert plan_batches([], 10) == []


def test_same_bytes_for_reruns_and_any_input_order(models) -> None:
    texts = workload(4)
    first = predict_proba(models["roberta"], texts)
    assert predict_proba(models["roberta"], texts).tobytes() == first.tobytes()
    perm = np.random.default_rng(0).permutation(len(texts))
    shuffled = predict_proba(models["roberta"], [texts[i] for i in perm])
    assert shuffled.tobytes() == first[perm].tobytes()
    for batch_tokens in (40, 999, 100_000):
        other = predict_proba(models["roberta"], texts, batch_tokens=batch_tokens)
        np.testing.assert_allclose(other, first, rtol=0, atol=1e-6)


def test_training_mode_is_restored(models) -> None:
    model, tokenizer = loaded(models["bert"])
    model.train()
    predict_proba((model, tokenizer), ["a", "b"])
    assert model.training


def test_no_texts_and_non_strings(models) -> None:
    assert predict_proba(models["bert"], []).shape == (0,)
    with pytest.raises(DataError, match="row 2: text is a int, not a string"):
        predict_proba(models["bert"], ["fine", 3])


# -- the predict-callable API --------------------------------------------

def test_callable_gets_each_distinct_text_once() -> None:
    calls: list[list[str]] = []

    def keyword_model(texts: list[str]) -> list[float]:
        calls.append(texts)
        return [0.9 if "loved" in t else 0.1 for t in texts]

    texts = ["I loved it", "meh", "I loved it", "meh", "boring"]
    probs = predict_proba(keyword_model, texts)
    assert probs.tolist() == [0.9, 0.1, 0.9, 0.1, 0.1]
    assert calls == [["I loved it", "meh", "boring"]]


def test_callable_class_probabilities() -> None:
    def two_class(texts):
        p = np.array([len(t) / 10 for t in texts])
        return np.stack([1 - p, p], axis=1)

    assert predict_proba(two_class, ["abc", "abcdefg"]).tolist() == pytest.approx([0.3, 0.7])
    assert predict_proba(lambda t: torch.tensor([0.25] * len(t)), ["x"]).tolist() == [0.25]


@pytest.mark.parametrize(("output", "message"), [
    ([0.5], "returned 1 probabilities for 2 texts"),
    ([0.5, float("nan")], "non-finite output for text 2 of 2"),
    ([0.5, 1.5], r"output outside \[0, 1\] for text 2 of 2"),
    ([-0.1, 0.5], r"output outside \[0, 1\] for text 1 of 2"),
    ([[0.2, 0.7], [0.5, 0.5]], "class probabilities of text 1 sum to 0.9, not 1"),
    ([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]], r"returned list of shape \(2, 3\)"),
    (["high", "low"], "returned list, not probabilities"),
    (None, r"returned NoneType of shape \(\)"),
])
def test_bad_callable_output_is_refused(output, message) -> None:
    def bad(texts):
        return output

    with pytest.raises(ModelError, match=f"predict callable .*bad: {message}"):
        predict_proba(bad, ["one", "two"])


def test_models_that_cannot_score_are_refused(models, tmp_path) -> None:
    model, tokenizer = loaded(models["bert"])
    with pytest.raises(ModelError, match="bare BertForSequenceClassification"):
        predict_proba(model, ["x"])
    with pytest.raises(ModelError, match="cannot score with a int"):
        predict_proba(42, ["x"])
    three = AutoModelForSequenceClassification.from_config(
        AutoConfig.from_pretrained(models["bert"], num_labels=3))
    with pytest.raises(ModelError, match="has 3 labels; a binary classifier"):
        predict_proba((three, tokenizer), ["x"])
    three_dir = shutil.copytree(models["bert"], tmp_path / "three")
    three.save_pretrained(three_dir)
    with pytest.raises(ModelError, match="classifier with 3 labels; 2 are needed"):
        predict_proba(three_dir, ["x"])
    with pytest.raises(ModelError, match="no such model directory"):
        predict_proba(str(tmp_path / "missing"), ["x"])


# -- predict_file and the command line ------------------------------------------------------

def write_input(path, texts, **columns) -> None:
    pd.DataFrame({**columns, "text": texts}).to_parquet(path)


def test_predict_file_columns_dtypes_and_values(models, tmp_path) -> None:
    texts = workload(5)
    ids = [f"r{i:03d}" for i in range(len(texts))]
    labels = [i % 2 for i in range(len(texts))]
    write_input(tmp_path / "in.parquet", texts, id=ids, label=labels, extra=1.0)
    spec = resolve(models["bert"], None)
    predict_file(spec, tmp_path / "in.parquet", tmp_path / "out.parquet")
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert list(out.columns) == ["id", "label", "prob", "pred", "input"]
    assert out["prob"].dtype == np.float64 and out["pred"].dtype == np.int64
    # the distinct model input of each row: equal exactly where the texts are equal here
    assert out["input"].dtype == np.int64
    same_text = np.equal.outer(np.array(texts, dtype=object), np.array(texts, dtype=object))
    np.testing.assert_array_equal(np.equal.outer(out["input"].to_numpy(),
                                                 out["input"].to_numpy()), same_text)
    assert out["id"].tolist() == ids and out["label"].tolist() == labels
    np.testing.assert_array_equal(out["prob"], predict_proba(spec, texts))
    np.testing.assert_array_equal(out["pred"], (out["prob"] >= 0.5).astype(int))
    assert 0 < out["pred"].sum() < len(out)  # both classes occur, so >= 0.5 is exercised
    # reruns give the same bytes
    predict_file(spec, tmp_path / "in.parquet", tmp_path / "again.parquet")
    assert sha256_file(tmp_path / "again.parquet") == sha256_file(tmp_path / "out.parquet")


def test_predict_file_other_text_column_without_id_or_label(models, tmp_path) -> None:
    pd.DataFrame({"sentence": ["good film", "bad film"]}).to_parquet(tmp_path / "in.parquet")
    predict_file(resolve(models["albert"], None), tmp_path / "in.parquet",
                 tmp_path / "out.parquet", text_column="sentence")
    assert list(pd.read_parquet(tmp_path / "out.parquet").columns) == ["prob", "pred", "input"]


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"text": ["fine", None]}), "row 2, column 'text': missing text"),
    (pd.DataFrame({"text": ["fine", "  "]}), "row 2, column 'text': empty text"),
    (pd.DataFrame({"text": [1, 2]}), "row 1, column 'text': not a string"),
    (pd.DataFrame({"body": ["fine"]}), r"column 'text': missing column; found \['body'\]"),
])
def test_predict_file_bad_input_leaves_no_output(models, tmp_path, frame, message) -> None:
    frame.to_parquet(tmp_path / "in.parquet")
    out = tmp_path / "out.parquet"
    out.write_text("an earlier run's output")
    with pytest.raises(DataError, match=message):
        predict_file(resolve(models["bert"], None), tmp_path / "in.parquet", out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "out.parquet"]
    assert out.read_text() == "an earlier run's output"


def test_predict_file_missing_or_unreadable_input(models, tmp_path) -> None:
    spec = resolve(models["bert"], None)
    with pytest.raises(DataError, match="missing.parquet: input file not found"):
        predict_file(spec, tmp_path / "missing.parquet", tmp_path / "out.parquet")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(DataError, match="bad.parquet: not a readable Parquet file"):
        predict_file(spec, tmp_path / "bad.parquet", tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_cli_predict_end_to_end(models, tmp_path) -> None:
    texts = workload(6)
    write_input(tmp_path / "in.parquet", texts, id=range(len(texts)))
    cmd = [str(BIN / "biasrepro"), "predict", "--model", models["roberta"], "--input",
           str(tmp_path / "in.parquet"), "--out", str(tmp_path / "out.parquet"),
           "--batch-tokens", "500"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env_with_venv(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"{len(texts)} rows, {len(set(texts))} unique texts" in proc.stderr
    out = pd.read_parquet(tmp_path / "out.parquet")
    np.testing.assert_allclose(out["prob"], reference(models["roberta"], texts, 128),
                               rtol=0, atol=1e-5)
    earlier = (tmp_path / "out.parquet").read_bytes()
    write_input(tmp_path / "bad.parquet", ["fine", ""])
    cmd[cmd.index(str(tmp_path / "in.parquet"))] = str(tmp_path / "bad.parquet")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env_with_venv(), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("bad.parquet, row 2, column 'text': empty text")
    assert (tmp_path / "out.parquet").read_bytes() == earlier  # the earlier run's, untouched


def test_several_models_in_one_run_write_what_each_writes_alone(models, tmp_path) -> None:
    for name, seed in (("a", 1), ("b", 2)):
        write_input(tmp_path / f"{name}.parquet", workload(seed), id=range(len(workload(seed))))
    inputs = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    both = [str(tmp_path / f"{arch}-{name}-both.parquet")
            for arch in ("bert", "roberta") for name in ("a", "b")]
    assert main(["predict", "--model", models["bert"], models["roberta"], "--input", *inputs,
                 "--out", *both]) == 0
    for arch in ("bert", "roberta"):
        alone = [str(tmp_path / f"{arch}-{name}-alone.parquet") for name in ("a", "b")]
        assert main(["predict", "--model", models[arch], "--input", *inputs,
                     "--out", *alone]) == 0
        for path in alone:
            assert sha256_file(path) == sha256_file(path.replace("-alone", "-both"))
    # one output per model and input, or the run stops before writing anything
    short = [str(tmp_path / f"short-{i}.parquet") for i in range(3)]
    assert main(["predict", "--model", models["bert"], models["roberta"], "--input", *inputs,
                 "--out", *short]) == 2
    assert not any((tmp_path / f"short-{i}.parquet").exists() for i in range(3))


# -- chunks: constant memory on paper-sized inputs -------------------------------------------

def chunked_pass(models, tmp_path, chunk_rows, tag) -> list[pd.DataFrame]:
    """One pass over three files (texts shared across files, an empty file) in chunks."""
    inputs = []
    files = (("a", workload(1)), ("empty", []), ("b", workload(2) + workload(1)[:9]))
    for name, texts in files:
        path = tmp_path / f"{name}.parquet"
        write_input(path, pd.Series(texts, dtype=object),
                    id=pd.Series([f"{name}{i}" for i in range(len(texts))], dtype=object),
                    label=pd.Series([i % 2 for i in range(len(texts))], dtype="int64"))
        inputs.append(path)
    outs = [tmp_path / f"{tag}-{p.name}" for p in inputs]
    predict_files(resolve(models["bert"], None), inputs, outs, chunk_rows=chunk_rows)
    return [pd.read_parquet(p) for p in outs]


# one row per chunk scores each text alone, unpadded: the per-text reference's tolerance
@pytest.mark.parametrize(("chunk_rows", "atol"), [(1, 1e-5), (7, 1e-6), (50, 1e-6)])
def test_any_chunk_size_gives_the_same_predictions_and_inputs(models, tmp_path, chunk_rows,
                                                             atol) -> None:
    whole = chunked_pass(models, tmp_path, None, "whole")
    chunked = chunked_pass(models, tmp_path, chunk_rows, "chunked")
    assert [len(df) for df in whole] == [len(df) for df in chunked] == [67, 0, 76]
    for one, many in zip(whole, chunked, strict=True):
        assert list(one.columns) == list(many.columns) == ["id", "label", "prob", "pred",
                                                           "input"]
        assert one["id"].tolist() == many["id"].tolist()
        assert one["label"].tolist() == many["label"].tolist()
        np.testing.assert_allclose(many["prob"], one["prob"], rtol=0, atol=atol)
        clear = (one["prob"] - 0.5).abs() > atol
        assert (one["pred"][clear] == many["pred"][clear]).all()
        # the distinct-input index is global: shared by files and chunks alike
        assert one["input"].tolist() == many["input"].tolist()
        assert one.dtypes.tolist() == many.dtypes.tolist()
        assert [str(t) for t in many.dtypes[1:]] == ["int64", "float64", "int64", "int64"]
    # texts of file a repeated in file b: the same input, so the same probability
    a, b = whole[0], whole[2]
    assert b["input"].tolist()[-9:] == a["input"].tolist()[:9]
    assert b["prob"].tolist()[-9:] == a["prob"].tolist()[:9]


def test_chunked_reruns_give_the_same_bytes(models, tmp_path) -> None:
    chunked_pass(models, tmp_path, 7, "first")
    chunked_pass(models, tmp_path, 7, "again")
    for name in ("a", "empty", "b"):
        assert (sha256_file(tmp_path / f"first-{name}.parquet")
                == sha256_file(tmp_path / f"again-{name}.parquet"))


def test_one_chunk_is_written_as_write_parquet_writes(models, tmp_path) -> None:
    from biasrepro.io import write_parquet

    chunked_pass(models, tmp_path, None, "whole")
    for name in ("a", "empty", "b"):
        out = tmp_path / f"whole-{name}.parquet"
        write_parquet(pd.read_parquet(out), tmp_path / "rewritten.parquet")
        assert sha256_file(tmp_path / "rewritten.parquet") == sha256_file(out)


def test_each_distinct_input_reaches_the_model_once_over_chunks(models, monkeypatch) -> None:
    from biasrepro.models import predict

    model, tokenizer = loaded(models["bert"])
    masks = record_batches(model)
    distinct = workload()[:40]
    texts = distinct * 3
    random.Random(1).shuffle(texts)
    whole, inputs = predict.score_with_inputs((model, tokenizer), texts)
    n_whole = sum(len(m) for m in masks)
    masks.clear()
    monkeypatch.setattr(predict, "CHUNK_ROWS", 11)
    probs, stats = score_texts((model, tokenizer), texts)
    assert sum(len(m) for m in masks) == n_whole == stats.unique_inputs == len(set(distinct))
    assert (stats.rows, stats.unique_texts) == (120, len(set(distinct)))
    np.testing.assert_allclose(probs, whole, rtol=0, atol=1e-6)
    assert predict.score_with_inputs((model, tokenizer), texts)[1].tolist() == inputs.tolist()


def test_parquet_is_read_in_row_batches_with_file_row_numbers(models, tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = workload(8)[:30]
    table = pa.table({"id": list(range(30)), "text": texts})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=4)  # several row groups
    spec = resolve(models["bert"], None)
    predict_file(spec, tmp_path / "in.parquet", tmp_path / "one.parquet")
    predict_file(spec, tmp_path / "in.parquet", tmp_path / "many.parquet", chunk_rows=3)
    one = pd.read_parquet(tmp_path / "one.parquet")
    many = pd.read_parquet(tmp_path / "many.parquet")
    assert one["id"].tolist() == many["id"].tolist() == list(range(30))
    np.testing.assert_allclose(one["prob"], many["prob"], rtol=0, atol=1e-6)
    # a fault in a later chunk names its row in the file, and nothing is written
    pq.write_table(pa.table({"text": [*texts[:20], "  ", *texts[21:]]}), tmp_path / "bad.parquet",
                   row_group_size=4)
    with pytest.raises(DataError, match="bad.parquet, row 21, column 'text': empty text"):
        predict_file(spec, tmp_path / "bad.parquet", tmp_path / "bad-out.parquet", chunk_rows=3)
    assert not (tmp_path / "bad-out.parquet").exists()
    with pytest.raises(ConfigError, match="chunk_rows must be positive"):
        predict_file(spec, tmp_path / "in.parquet", tmp_path / "x.parquet", chunk_rows=0)


def test_predict_file_dictionary_encoded_input_gives_the_same_bytes(models, tmp_path) -> None:
    texts = workload(2)[:6]
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(len(texts))], "text": texts})
    frame.to_parquet(tmp_path / "plain.parquet")
    frame.astype("category").to_parquet(tmp_path / "dict.parquet")
    spec = resolve(models["bert"], None)
    predict_file(spec, tmp_path / "plain.parquet", tmp_path / "plain-out.parquet")
    predict_file(spec, tmp_path / "dict.parquet", tmp_path / "dict-out.parquet")
    assert sha256_file(tmp_path / "dict-out.parquet") == sha256_file(
        tmp_path / "plain-out.parquet")
