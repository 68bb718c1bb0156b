"""Tests written from mutation testing (scripts/mutation) of representation/crows.py,
representation/stereoset.py and representation/seat.py: each pins a value, column, message or
call that a planted bug changed without any other test noticing. Expectations are worked out
by hand in the comments (CrowS-Pairs log-probabilities of a context-free stub, StereoSet's
closed-form ss/lms, SEAT p-values by enumerating partitions), never by calling the code under
test for the expected value."""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from fixtures.tiny_models import CORPUS, tiny_masked_lm

from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.representation import crows, seat, stereoset
from biasrepro.representation.crows import (
    COLUMNS,
    IDENTICAL,
    NO_MODIFIED,
    masked_log_probs,
    read_crows,
    score_crows,
)
from biasrepro.representation.seat import (
    Concept,
    SeatTest,
    association,
    average_absolute_effect,
    load_encoder,
    permutation_p_value,
    read_seat,
    run_seat,
)
from biasrepro.representation.stereoset import (
    Candidate,
    Example,
    candidate_scores,
    insertion_ids,
    judge,
    masked_inputs,
    needs_leading_space,
    read_stereoset,
    score_stereoset,
    stereoset_metrics,
)

LN2 = math.log(2)

# ================================================================ CrowS-Pairs

#: a whitespace tokenizer's ids; "w<k>" words get ids 100 + k
WORDS = {w: i for i, w in enumerate("[PAD] [CLS] [SEP] [MASK] q x z she he is good".split())}
#: the stub's one distribution (out of 32) at every position, whatever the context
WEIGHTS = [1, 1, 1, 1, 8, 2, 4, 4, 4, 2, 4]
VOCAB_SIZE = 512


class WordTokenizer:
    mask_token_id = WORDS["[MASK]"]

    def __init__(self, do_lower_case: bool | None = None) -> None:
        if do_lower_case is not None:
            self.do_lower_case = do_lower_case
        self.seen: list[str] = []

    def encode(self, text: str) -> list[int]:
        self.seen.append(text)
        ids = [WORDS[w] if w in WORDS else 100 + int(w[1:]) if w[1:].isdigit() else 0
               for w in text.split()]
        return [WORDS["[CLS]"], *ids, WORDS["[SEP]"]]


def _logits(n: int) -> torch.Tensor:
    weights = torch.ones(VOCAB_SIZE)
    weights[:len(WEIGHTS)] = torch.tensor(WEIGHTS, dtype=torch.float32)
    weights[len(WEIGHTS):] = 1e-6  # w<k> words: (almost) never predicted; sum stays ~32
    return weights.log().expand(n, -1)


class FlatMLM(torch.nn.Module):
    """log p(token) = log(WEIGHTS[token] / 32) at any masked position; counts its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1), requires_grad=False)
        self.forwards = 0
        self.moved_to: list[object] = []

    def forward(self, input_ids: torch.Tensor) -> SimpleNamespace:
        self.forwards += 1
        b, t = input_ids.shape
        return SimpleNamespace(logits=_logits(b * t).reshape(b, t, -1))

    def to(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        self.moved_to.append(args[0] if args else kwargs.get("device"))
        return self


def _log_p(word: str) -> float:
    return math.log(WEIGHTS[WORDS[word]] / (32 + (VOCAB_SIZE - len(WEIGHTS)) * 1e-6))


def _pairs(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(COLUMNS))


def test_score_crows_defaults_to_bias_bench_batched_on_the_default_device() -> None:
    model, tok = FlatMLM(), WordTokenizer()
    result = score_crows((model, tok), _pairs([("she is good", "he is good", "stereo", "g")]))
    assert result["scoring"] == "bias-bench"
    # batched: one forward per sentence (not one per masked token)
    assert model.forwards == 2
    # "device defaults to CUDA when available"
    assert model.moved_to == ["cuda" if torch.cuda.is_available() else "cpu"]
    model = FlatMLM()
    score_crows((model, tok), _pairs([("she is good", "he is good", "stereo", "g")]),
                device="cpu")
    assert model.moved_to == ["cpu"]


def test_score_crows_passes_batched_and_token_budget_on() -> None:
    # two modified tokens per sentence ("she good" vs "he is"): naive = one forward per mask
    pairs = _pairs([("q she good", "q he is", "stereo", "g")])
    model = FlatMLM()
    score_crows((model, WordTokenizer()), pairs, batched=False, device="cpu")
    assert model.forwards == 4
    # [CLS] q she good [SEP] is 5 tokens: a budget of 5 is one copy per pass
    model = FlatMLM()
    score_crows((model, WordTokenizer()), pairs, token_budget=5, device="cpu")
    assert model.forwards == 4


def test_default_token_budget_is_4096_tokens() -> None:
    # 241 tokens: 4096 // 241 = 16 copies per pass (4097 // 241 would be 17); 17 modified
    # tokens per sentence (the other 222 words are distinct, so none is difflib-popular)
    shared = " ".join(f"w{k}" for k in range(100, 322))
    more = " ".join(f"w{k}" for k in range(17)) + " " + shared
    less = " ".join(f"w{k}" for k in range(30, 47)) + " " + shared
    assert len(WordTokenizer().encode(more)) == 241
    model = FlatMLM()
    score_crows((model, WordTokenizer()), _pairs([(more, less, "stereo", "g")]), device="cpu")
    assert model.forwards == 4  # 17 masks in passes of 16 + 1, for each sentence
    model = FlatMLM()
    ids = WordTokenizer().encode(more)
    masked_log_probs(model, ids, [1] * 241, WORDS["[MASK]"])
    assert model.forwards == 16  # 241 masks in passes of 16: 15 full + 1


def test_direction_decides_which_sentence_difflib_reads_first() -> None:
    # difflib is not symmetric: SequenceMatcher([q x z], [z x]) keeps "x" and changes q, z
    # in the first and z in the second; read the other way round it keeps "z".
    # stereo: sent1 = sent_more = "q x z": more = mean(log p(q), log p(z)) = -2.5 ln2,
    #   less = log p(z) = -3 ln2 (the stub's p: q 8/32, x 2/32, z 4/32)
    # antistereo: sent1 = sent_less = "q x z" again, so the same positions are masked
    result = score_crows((FlatMLM(), WordTokenizer()), _pairs([
        ("q x z", "z x", "stereo", "g"), ("z x", "q x z", "antistereo", "g")]), device="cpu")
    pairs = result["pairs"]
    q, z = _log_p("q"), _log_p("z")
    assert q == pytest.approx(-2 * LN2, rel=1e-4) and z == pytest.approx(-3 * LN2, rel=1e-4)
    assert pairs["sent_more_raw"].tolist() == pytest.approx([(q + z) / 2, z], abs=1e-6)
    assert pairs["sent_less_raw"].tolist() == pytest.approx([z, (q + z) / 2], abs=1e-6)
    assert pairs["n_tokens_more"].tolist() == [2, 1]
    assert pairs["n_tokens_less"].tolist() == [1, 2]
    assert pairs["hit"].tolist() == [True, False]


def test_nangia_lowercases_both_sentences_when_the_tokenizer_does() -> None:
    pairs = _pairs([("She is Good", "He is Good", "stereo", "g")])
    tok = WordTokenizer(do_lower_case=True)
    score_crows((FlatMLM(), tok), pairs, scoring="nangia", device="cpu")
    assert tok.seen == ["she is good", "he is good"]
    tok = WordTokenizer(do_lower_case=True)
    score_crows((FlatMLM(), tok), pairs, scoring="bias-bench", device="cpu")
    assert tok.seen == ["She is Good", "He is Good"]  # bias-bench keeps the case


def test_score_crows_frame_columns_row_and_skip_reason() -> None:
    # first pair identical (skipped), so the column order cannot come from a scored record
    frame = _pairs([("she is good", "she is good", "stereo", "religion"),
                    ("she is good", "he is good", "stereo", "gender"),
                    ("he is good", "she is good", "antistereo", "gender")])
    frame.insert(0, "row", [7, 8, 9])
    result = score_crows((FlatMLM(), WordTokenizer()), frame, device="cpu")
    pairs = result["pairs"]
    assert pairs.columns.tolist() == [
        "row", *COLUMNS, "status", "skip_reason", "sent_more_score", "sent_less_score",
        "sent_more_raw", "sent_less_raw", "n_tokens_more", "n_tokens_less", "neutral", "hit"]
    assert pairs["row"].tolist() == [7, 8, 9]
    assert pairs["skip_reason"].tolist() == [IDENTICAL, "", ""]
    # she 4/32 = -3 ln2 vs he 4/32: equal; rounded to 3 decimals
    assert pairs["sent_less_score"].tolist()[1:] == [round(-3 * LN2, 3)] * 2
    assert result["overall"]["n_hits"] == 0 and result["overall"]["n_neutral"] == 2
    # bias types sorted, not in order of appearance
    assert list(result["bias_types"]) == ["gender", "religion"]
    assert result["bias_types"]["religion"]["metric_score"] is None


def test_all_pairs_skipped_still_has_every_column_and_no_score() -> None:
    result = score_crows((FlatMLM(), WordTokenizer()),
                         _pairs([("she", "she", "stereo", "g"), ("she is", "she", "stereo", "g")]),
                         device="cpu")
    assert "hit" in result["pairs"] and "sent_less_score" in result["pairs"]
    overall = result["overall"]
    assert overall["metric_score"] is None and overall["n_scored"] == 0
    assert overall["skipped"] == {IDENTICAL: 1, NO_MODIFIED: 1}


def test_direction_score_is_rounded_to_2_decimals() -> None:
    # three stereo pairs, none tied: p(q) 8/32 > p(z) 4/32 > p(x) 2/32; one hit of 3
    result = score_crows((FlatMLM(), WordTokenizer()), _pairs([
        ("q", "z", "stereo", "g"), ("x", "z", "stereo", "g"), ("x", "q", "stereo", "g")]),
        device="cpu")
    assert result["overall"]["stereo"] == {"n_scored": 3, "n_neutral": 0, "n_hits": 1,
                                           "score": 33.33}
    assert result["overall"]["metric_score"] == 33.33


def test_score_crows_error_messages() -> None:
    with pytest.raises(ConfigError) as err:
        score_crows((FlatMLM(), WordTokenizer()), _pairs([]), scoring="pll")
    assert str(err.value) == "unknown CrowS-Pairs scoring 'pll' (known: bias-bench, nangia)"
    with pytest.raises(DataError) as err:
        score_crows((FlatMLM(), WordTokenizer()), pd.DataFrame(
            {"sent_more": ["a"], "stereo_antistereo": ["stereo"]}))
    assert str(err.value) == "CrowS-Pairs frame lacks columns sent_less, bias_type"
    tok = WordTokenizer()
    tok.mask_token_id = None
    with pytest.raises(ModelError) as err:
        score_crows((FlatMLM(), tok), _pairs([]))
    assert str(err.value) == "the tokenizer has no mask token: CrowS-Pairs needs a masked LM"


class BertForMaskedLM(torch.nn.Module):
    """Named like BERT's masked LM: a base model (hidden state = one-hot token) and a head
    ``cls`` (the stub's distribution wherever [MASK] is); counts full and base passes."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1), requires_grad=False)
        self.base_calls = self.full_calls = 0
        outer = self

        class Base(torch.nn.Module):
            def forward(self, input_ids: torch.Tensor) -> SimpleNamespace:
                outer.base_calls += 1
                return SimpleNamespace(last_hidden_state=torch.nn.functional.one_hot(
                    input_ids, VOCAB_SIZE).float())

        class Head(torch.nn.Module):
            def forward(self, hidden: torch.Tensor) -> torch.Tensor:
                assert hidden.dim() == 2  # only the masked positions
                return _logits(len(hidden))

        self.base = Base()
        self.cls = Head()

    @property
    def base_model(self) -> torch.nn.Module:
        return self.base

    def forward(self, input_ids: torch.Tensor) -> SimpleNamespace:
        self.full_calls += 1
        b, t = input_ids.shape
        return SimpleNamespace(logits=_logits(b * t).reshape(b, t, -1))


class RobertaForMaskedLM(FlatMLM):
    """Named like RoBERTa's masked LM but without its ``lm_head``."""


def test_batched_known_architecture_applies_the_head_only_at_the_masks() -> None:
    model, tok = BertForMaskedLM(), WordTokenizer()
    ids = tok.encode("q x z")
    got = masked_log_probs(model, ids, [1, 2, 3], tok.mask_token_id)
    assert (model.base_calls, model.full_calls) == (1, 0)
    assert got == pytest.approx([_log_p("q"), _log_p("x"), _log_p("z")], abs=1e-6)
    naive = masked_log_probs(model, ids, [1, 2, 3], tok.mask_token_id, batched=False)
    assert (model.base_calls, model.full_calls) == (1, 3)
    assert naive == pytest.approx(got, abs=1e-6)
    # a known architecture name without the head attribute: the full model is used
    other = RobertaForMaskedLM()
    assert masked_log_probs(other, ids, [1], tok.mask_token_id) == pytest.approx([_log_p("q")])
    assert other.forwards == 1


def test_masked_log_probs_no_positions_and_budget_below_two_copies() -> None:
    model, tok = FlatMLM(), WordTokenizer()
    ids = tok.encode("q x z")
    assert masked_log_probs(model, ids, [], tok.mask_token_id).shape == (0,)
    assert model.forwards == 0
    masked_log_probs(model, ids, [1, 2, 3], tok.mask_token_id, token_budget=len(ids))
    assert model.forwards == 3  # one copy per pass


def test_device_of_is_the_first_parameters_device() -> None:
    assert crows._device_of(torch.nn.Linear(1, 1, device="meta")) == torch.device("meta")
    assert crows._device_of(torch.nn.Identity()) == torch.device("cpu")
    # no parameters() at all (a plain callable): CPU
    assert crows._device_of(lambda input_ids: None) == torch.device("cpu")


def _write_crows(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(path)
    return path


def test_read_crows_columns_and_messages(tmp_path: Path) -> None:
    path = _write_crows(tmp_path / "c.csv", [("A b.", "C d.", "stereo", "religion"),
                                             ("E f.", "G h.", "antistereo", "gender")])
    frame = read_crows(path, bias_types=["gender"])
    assert frame.columns.tolist() == ["row", *COLUMNS]
    assert frame["row"].tolist() == [2]
    bad = _write_crows(tmp_path / "bad.csv", [("A b.", "C d.", "stereo", "gender"),
                                              ("A b.", " ", "stereo", "gender")])
    with pytest.raises(DataError) as err:
        read_crows(bad)
    assert (err.value.file, err.value.row, err.value.column) == (str(bad), 2, "sent_less")
    bad = _write_crows(tmp_path / "dir.csv", [("A b.", "C d.", "both", "gender")])
    with pytest.raises(DataError) as err:
        read_crows(bad)
    assert str(err.value) == (f"{bad}, row 1, column 'stereo_antistereo': "
                              "expected one of stereo, antistereo (got 'both')")
    junk = tmp_path / "crows.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="not a readable Parquet CrowS-Pairs table"):
        read_crows(junk)


# ================================================================ StereoSet

FIXTURE = Path(__file__).parent / "fixtures" / "stereoset_dev_sample.json"


def _broken(tmp_path: Path, change) -> DataError:  # noqa: ANN001
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    change(doc["data"]["intrasentence"][1])  # row 2, "My mother is a BLANK cook."
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_stereoset(path)
    assert err.value.file == str(path) and err.value.row == 2
    return err.value


ID = "example 'd1a67bb56f1709d7f70c0c480cdecc8a'"


def _sentence(entry: dict, label: str) -> dict:
    return next(s for s in entry["sentences"] if s["gold_label"] == label)


@pytest.mark.parametrize(("change", "column", "message"), [
    (lambda e: e.pop("id"), "id", "example 2: 'id' is missing"),
    (lambda e: e.update(id=""), "id", "example '': 'id' is not a non-empty string ('')"),
    (lambda e: e.pop("context"), "context", f"{ID}: 'context' is missing"),
    (lambda e: e.pop("bias_type"), "bias_type", f"{ID}: 'bias_type' is missing"),
    (lambda e: e.update(bias_type="age"), "bias_type",
     f"{ID}: unknown bias_type 'age' (known: gender, profession, race, religion)"),
    (lambda e: e.update(context="My mother is a cook."), "context",
     f"{ID}: the context has no BLANK: 'My mother is a cook.'"),
    (lambda e: e.update(sentences="x"), "sentences", f"{ID}: 'sentences' is not a list"),
    (lambda e: e["sentences"].append("x"), "sentences",
     f"{ID}: a sentence is a str, not an object"),
    (lambda e: _sentence(e, "unrelated").update(gold_label="neutral"), "gold_label",
     f"{ID}: an unknown gold_label 'neutral' (each of stereotype, anti-stereotype, "
     "unrelated once)"),
    (lambda e: _sentence(e, "unrelated").pop("sentence"), "sentence",
     f"{ID}: 'sentence' is missing"),
    # exactly as many words as the BLANK's index: none at it
    (lambda e: _sentence(e, "unrelated").update(sentence="My mother is a"), "sentence",
     f"{ID}: the unrelated sentence has 4 words, none at the BLANK's index 4: "
     "'My mother is a'"),
    (lambda e: _sentence(e, "unrelated").update(sentence="My mother is a ?! cook."), "sentence",
     f"{ID}: the unrelated sentence's word at the BLANK, '?!', is only punctuation"),
    (lambda e: e.update(sentences=e["sentences"][:1]), "sentences",
     f"{ID}: no stereotype or unrelated sentence"),
])
def test_malformed_entries_name_file_row_column_and_example(tmp_path: Path, change, column,
                                                            message) -> None:  # noqa: ANN001
    err = _broken(tmp_path, change)
    assert err.column == column
    assert err.message == message


def test_entry_that_is_not_an_object_and_duplicate_id_name_their_row(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    entries = doc["data"]["intrasentence"]
    path = tmp_path / "s.json"
    for content, row, message in [
        ([*entries[:2], 5], 3, "example 3 is a int, not an object"),
        ([*entries[:2], {**copy.deepcopy(entries[2]), "id": entries[0]["id"]}], 3,
         f"example {entries[0]['id']!r}: duplicate id"),
    ]:
        path.write_text(json.dumps({"data": {"intrasentence": content}}), encoding="utf-8")
        with pytest.raises(DataError) as err:
            read_stereoset(path)
        assert (err.value.file, err.value.row, err.value.message) == (str(path), row, message)


def test_whole_file_errors_exact(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    for doc, message in [({"data": {}}, 'not a StereoSet file: no list at "data" -> '
                          '"intrasentence"'), ({"data": {"intrasentence": []}},
                                               "no intrasentence examples")]:
        path.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(DataError) as err:
            read_stereoset(path)
        assert (err.value.file, err.value.message) == (str(path), message)
    with pytest.raises(DataError) as err:
        read_stereoset(tmp_path / "absent.json")
    assert (err.value.file, err.value.message) == (str(tmp_path / "absent.json"),
                                                   "StereoSet file not found")


def test_words_are_split_on_single_spaces(tmp_path: Path) -> None:
    # "My mother  is": the double space makes an empty word, so the BLANK is word 5
    def double(e: dict) -> None:
        e["context"] = e["context"].replace("mother is", "mother  is")
        for s in e["sentences"]:
            s["sentence"] = s["sentence"].replace("mother is", "mother  is")

    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    double(doc["data"]["intrasentence"][1])
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    example = read_stereoset(path)[1]
    assert [c.word for c in example.candidates] == ["wonderful", "careless", "granite"]


def test_needs_leading_space_sequence_and_slow_tokenizers() -> None:
    from tokenizers import pre_tokenizers

    def fast(pre: object) -> SimpleNamespace:
        return SimpleNamespace(is_fast=True, backend_tokenizer=SimpleNamespace(pre_tokenizer=pre))

    seq = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.ByteLevel()])
    assert needs_leading_space(fast(seq)) is True
    assert needs_leading_space(fast(pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits()]))) is False
    assert needs_leading_space(fast(pre_tokenizers.ByteLevel())) is True
    assert needs_leading_space(fast(None)) is False
    # slow tokenizers (no is_fast attribute at all): GPT-2's byte encoder decides
    assert needs_leading_space(SimpleNamespace(byte_encoder={})) is True
    assert needs_leading_space(SimpleNamespace()) is False


def test_insertion_ids_only_add_a_space_for_byte_level_and_empty_words_fail() -> None:
    seen: list[str] = []

    def encode(text: str, add_special_tokens: bool) -> list[int]:
        seen.append(text)
        return [] if text.strip() == "ø" else [1]

    assert insertion_ids(SimpleNamespace(encode=encode), "nurse") == [1]
    assert insertion_ids(SimpleNamespace(encode=encode, byte_encoder={}), "nurse") == [1]
    assert seen == ["nurse", " nurse"]
    with pytest.raises(ModelError) as err:
        masked_inputs(SimpleNamespace(encode=encode), "BLANK", "ø")
    assert str(err.value) == "the tokenizer encodes 'ø' as no tokens"


# --- left-to-right fill on a stub (as test_stereoset.py's): logits = table[previous token]

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "was", "very",
         "fluff", "##y", "sleep", "##ing", "blue", "."]


class PreviousTokenLM(torch.nn.Module):
    """Logits at t are row input_ids[t - 1] of a table; checks the attention mask is the
    long 0/1 mask of the real tokens; counts forwards and records .to()."""

    def __init__(self, table: torch.Tensor) -> None:
        super().__init__()
        self.table = torch.nn.Parameter(table, requires_grad=False)
        self.forwards = 0
        self.moved_to: list[object] = []

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                **_: torch.Tensor) -> SimpleNamespace:
        self.forwards += 1
        assert attention_mask.dtype == torch.long
        assert torch.equal(attention_mask, (input_ids != 0).long())
        previous = torch.cat([input_ids[:, :1], input_ids[:, :-1]], dim=1)
        return SimpleNamespace(logits=self.table[previous])

    def to(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        self.moved_to.append(args[0] if args else kwargs.get("device"))
        return self


def _stub(tmp_path: Path) -> tuple[PreviousTokenLM, object]:
    from transformers import BertTokenizerFast

    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(str(tmp_path / "vocab.txt"), do_lower_case=True)
    ix = {t: i for i, t in enumerate(VOCAB)}
    table = torch.zeros(len(VOCAB), len(VOCAB), dtype=torch.float64)
    table[ix["very"], ix["fluff"]] = math.log(8)  # 8 / (8 + 3 + 13) = 1/3
    table[ix["very"], ix["sleep"]] = math.log(3)  # 1/8
    table[ix["fluff"], ix["##y"]] = math.log(42)  # 42 / 56 = 3/4
    table[ix["sleep"], ix["##ing"]] = math.log(14)  # 1/2
    return PreviousTokenLM(table), tokenizer


def _cat(n: int = 0) -> Example:
    cands = [Candidate(f"{n}{w}", f"the cat was very {w} .", w)
             for w in ("fluffy", "sleeping", "blue")]
    return Example(f"cat{n}", "cat", "gender", "the cat was very BLANK .", *cands)


#: fluffy (1/3 + 3/4) / 2, sleeping (1/8 + 1/2) / 2, blue 1/24
CAT = [13 / 24, 5 / 16, 1 / 24]


def test_progress_bar_only_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from tqdm import tqdm

    # no monitor thread and a lock of this process only: tqdm's default lock is a
    # multiprocessing one that forked processes (mutation testing's) would share
    monkeypatch.setattr(tqdm, "monitor_interval", 0)
    monkeypatch.setattr(tqdm, "_lock", threading.RLock(), raising=False)
    model, tok = _stub(tmp_path)
    np.testing.assert_allclose(candidate_scores(model, tok, [_cat()]), [CAT], rtol=1e-12)
    score_stereoset((model, tok), [_cat()])
    assert capsys.readouterr().err == ""
    # 3 distinct inputs (the candidates' first pieces share one), one per batch
    candidate_scores(model, tok, [_cat()], batch_tokens=1, progress=True)
    err = capsys.readouterr().err
    assert "stereoset: 100%" in err and "3/3" in err and "input/s" in err
    assert "4/3" not in err and "9/3" not in err
    score_stereoset((model, tok), [_cat()], progress=True)
    assert "stereoset: 100%" in capsys.readouterr().err


def test_batching_defaults_and_batch_tokens_passed_on(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    model, tok = _stub(tmp_path)
    # CPU default: a budget of 8 tokens is one input (7-8 tokens) per batch: 3 forwards
    monkeypatch.setattr(stereoset, "CPU_BATCH_TOKENS", 8)
    np.testing.assert_allclose(candidate_scores(model, tok, [_cat()]), [CAT], rtol=1e-12)
    assert model.forwards == 3
    model.forwards = 0
    score_stereoset((model, tok), [_cat()], batch_tokens=10_000)
    assert model.forwards == 1
    assert model.moved_to == []  # a pair is moved only when a device is given
    score_stereoset((model, tok), [_cat()], device="cpu")
    assert model.moved_to == ["cpu"]


def test_candidate_scores_edge_cases(tmp_path: Path) -> None:
    model, tok = _stub(tmp_path)
    assert candidate_scores(model, tok, []).shape == (0, 3)
    with pytest.raises(ConfigError) as err:
        candidate_scores(model, tok, [_cat()], batch_tokens=0)
    assert str(err.value) == "batch_tokens must be positive, not 0"
    no_pad = SimpleNamespace(mask_token="[MASK]", pad_token_id=None)
    with pytest.raises(ModelError) as err:
        candidate_scores(model, no_pad, [_cat()])
    assert str(err.value) == "tokenizer SimpleNamespace has no mask or padding token"


def test_mask_that_does_not_tokenize_to_the_mask_id(tmp_path: Path) -> None:
    model, real = _stub(tmp_path)
    # a mask token text that the tokenizer reads as [UNK] (id 1), not as the mask id 4
    class Wrapped:
        mask_token, mask_token_id, pad_token_id, pad_token_type_id = "[UNK]", 4, 0, 0
        encode, decode, __call__ = (staticmethod(f) for f in (real.encode, real.decode, real))

    tok = Wrapped()
    with pytest.raises(ModelError) as err:
        candidate_scores(model, tok, [_cat()])
    assert str(err.value) == "no mask token in the tokenized input 'the cat was very [UNK] .'"


def test_judge_types_and_ties_with_unrelated() -> None:
    examples = [Example(f"e{i}", "t", "gender", "BLANK",
                        *(Candidate(f"{i}{k}", "s", "w") for k in "sau")) for i in range(2)]
    # integer scores: columns still float; a tie with unrelated is not "above" it
    frame = judge(examples, [[2, 1, 2], [1, 2, 2]])
    assert frame["score_stereotype"].dtype == np.float64
    assert frame["related"].dtype == np.int64
    assert frame["related"].tolist() == [0, 0] and frame["pro"].tolist() == [True, False]
    # target "t": ss = 100 * 1/2 = 50, lms = 100 * 0 / 2 = 0, icat = 0
    m = stereoset_metrics(frame)["overall"]
    assert (m["ss"], m["lms"], m["icat"]) == (50.0, 0.0, 0.0)
    with pytest.raises(DataError) as err:
        stereoset_metrics(frame.iloc[:0])
    assert str(err.value) == "no StereoSet examples to score"


def test_score_stereoset_bad_model_message() -> None:
    with pytest.raises(ModelError) as err:
        score_stereoset(torch.nn.Linear(2, 2), [_cat()])  # type: ignore[arg-type]
    assert str(err.value) == ("cannot score StereoSet with a Linear: expected a model "
                              "directory or a (masked LM, tokenizer) pair")


# ================================================================ SEAT


def _seat_file(tmp_path: Path, sets: dict, name: str = "sent-x.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(sets, indent=2), encoding="utf-8")
    return path


def _sets() -> dict:
    return {"targ1": {"category": "X", "examples": ["x one", "x two"]},
            "targ2": {"category": "Y", "examples": ["y one", "y two"]},
            "attr1": {"category": "A", "examples": ["a one"]},
            "attr2": {"category": "B", "examples": ["b one"]}}


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["attr2"].update(examples=[]), "column 'attr2.examples': no examples"),
    (lambda d: d.update(targ1=[1]), "column 'targ1': expected an object, got list"),
    (lambda d: d["targ1"].update(category=""),
     "column 'targ1.category': the category must be a non-empty string"),
    (lambda d: d["targ1"].update(category=5),
     "column 'targ1.category': the category must be a non-empty string"),
    (lambda d: d["attr1"].update(examples="a"),
     "column 'attr1.examples': the examples must be a list"),
    (lambda d: (d.pop("attr1"), d.pop("attr2")),
     "column 'attr1': expected the keys targ1, targ2, attr1, attr2; missing: attr1, attr2; "
     "unknown: -"),
    (lambda d: d.update(b=1, a=2),
     "column 'a': expected the keys targ1, targ2, attr1, attr2; missing: -; unknown: a, b"),
])
def test_seat_messages_exact(tmp_path: Path, change, message) -> None:  # noqa: ANN001
    sets = _sets()
    change(sets)
    path = _seat_file(tmp_path, sets)
    with pytest.raises(DataError) as err:
        read_seat(path)
    assert str(err.value) == f"{path}, {message}"


def test_seat_file_errors_exact(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        read_seat(tmp_path / "absent.jsonl")
    assert str(err.value) == f"{tmp_path / 'absent.jsonl'}: SEAT test file not found"
    path = _seat_file(tmp_path, [1])  # type: ignore[arg-type]
    with pytest.raises(DataError) as err:
        read_seat(path)
    assert str(err.value) == f"{path}: expected a JSON object, got list"
    with pytest.raises(ConfigError) as err:
        seat.attribute_of("sent-weat1")
    assert str(err.value) == ("SEAT test 'sent-weat1': not one of bias-bench's 17 tests nor a "
                              "world test (world-<attribute>), so its attribute is unknown")
    with pytest.raises(ConfigError) as err:
        seat.encode(["a"], (None, None), pooling="max")
    assert str(err.value) == "unknown seat pooling 'max' (choose from mean, cls)"


def test_association_is_computed_in_float64_from_float32_embeddings() -> None:
    rng = np.random.default_rng(0)
    w, a, b = (rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 4, 5))

    def direct(w: np.ndarray) -> np.ndarray:
        w64, a64, b64 = (m.astype(np.float64) for m in (w, a, b))
        cos = [[u @ v / np.linalg.norm(u) / np.linalg.norm(v) for v in m] for u in w64
               for m in (a64, b64)]
        return np.array([np.mean(cos[2 * i]) - np.mean(cos[2 * i + 1]) for i in range(len(w))])

    got = association(w, a, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, direct(w), rtol=1e-13, atol=1e-15)


def _naive_p(s_x: list[float], s_y: list[float]) -> float:
    s = list(s_x) + list(s_y)
    observed = sum(s_x)
    hits = [sum(s[i] for i in c) >= observed for c in itertools.combinations(range(len(s)),
                                                                             len(s_x))]
    return sum(hits) / len(hits)


def test_p_value_edge_cases() -> None:
    # one sample is allowed: C(2, 1) = 2 > 1, so sampled, no random partition: (1 + 0) / 1
    assert permutation_p_value([1.0], [0.0], samples=1) == 1.0
    # all statistics equal: every partition reaches the observed one, exact and sampled
    assert permutation_p_value([0.0, 0.0], [0.0, 0.0], samples=6) == 1.0
    assert permutation_p_value([0.0, 0.0], [0.0, 0.0], samples=5) == 1.0
    assert permutation_p_value(np.zeros(9), np.zeros(9), samples=1000) == 1.0
    # a partition 1e-11 below the observed sum is not a tie (the tolerance is relative to
    # sum |s| = 3e-3: 3e-15): partitions' sums 1e-3 (observed), 2e-3 - 1e-11, 0,
    # 1e-3 - 1e-11, -1e-3, -1e-11: two reach it
    s_x, s_y = [1e-3, 0.0], [1e-3 - 1e-11, -1e-3]
    assert _naive_p(s_x, s_y) == 2 / 6
    assert permutation_p_value(s_x, s_y, samples=6) == 2 / 6
    # float32 input is compared in float64: 1 + 7e-8 rounds up to 1 + 2^-23 in float32,
    # which would put the observed partition above itself. Only it reaches: 1/6
    x32 = np.array([1.0, 7e-8], dtype=np.float32)
    y32 = np.array([0.0, 0.0], dtype=np.float32)
    assert permutation_p_value(x32, y32, samples=6) == 1 / 6


def test_sampled_p_value_with_small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # C(6, 3) = 20 > 10 partitions: sampled. 12 elements / 6 values: 2 partitions per
    # chunk; 9 random partitions in 5 chunks, the last one of 1; all tie: p = (1 + 9) / 10
    monkeypatch.setattr(seat, "CHUNK_ELEMENTS", 12)
    assert permutation_p_value([0.5] * 3, [0.5] * 3, samples=10) == 1.0


#: the hand test of test_seat.py: s(x1) = 0.8, s(x2) = 0, s(y1) = -0.6, s(y2) = 0.28
HAND = {"x1": (2.0, 0.0), "x2": (0.6, 0.8), "y1": (0.0, 3.0), "y2": (0.8, 0.6),
        "a1": (1.0, 0.0), "a2": (3.0, 4.0), "b1": (0.0, 0.5)}


def _hand_test() -> SeatTest:
    return SeatTest("hand", Concept("X", ("x1", "x2")), Concept("Y", ("y1", "y2")),
                    Concept("A", ("a1", "a2")), Concept("B", ("b1",)))


def test_run_seat_passes_samples_and_seed_on() -> None:
    def lookup(texts: list[str]) -> np.ndarray:
        return np.array([HAND[t] for t in texts])

    # 5 samples < C(4, 2) = 6 partitions: sampled, (1 + k) / 5 (the exact p would be 2/6)
    ps = []
    for seed in range(6):
        table = run_seat({"gender": [_hand_test()]}, lookup, samples=5, seed=seed)
        p = table.at[0, "p_value"]
        assert p == permutation_p_value([0.8, 0.0], [-0.6, 0.28], samples=5, seed=seed)
        assert p * 5 == pytest.approx(round(p * 5))
        ps.append(p)
    assert len(set(ps)) > 1  # the seed matters here


def test_run_seat_without_tests_and_absolute_effect_order() -> None:
    table = run_seat({"gender": []}, lambda texts: np.zeros((0, 2)))
    assert table.columns.tolist() == ["test", "attribute", "effect_size", "p_value",
                                      "n_targets", "n_attributes"]
    assert table.empty
    table = pd.DataFrame({"attribute": ["religion", "gender", "religion"],
                          "effect_size": [-1.0, 0.5, 3.0]})
    means = average_absolute_effect(table)
    assert list(means) == ["religion", "gender"]  # in order of appearance
    assert means == {"religion": 2.0, "gender": 0.5}


# --- a tiny real encoder


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_masked_lm(tmp_path_factory.mktemp("seatmut") / "bert", "bert", CORPUS,
                          vocab_size=300, max_length=128)


def _alone(model: object, tokenizer: object, texts: list[str]) -> np.ndarray:
    rows = []
    with torch.no_grad():
        for text in texts:
            hidden = model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0]
            v = hidden.mean(dim=0).numpy()
            rows.append(v / np.linalg.norm(v))
    return np.stack(rows)


TEXTS = ["This is John.", "The person's name is a rather long one that goes on.", "Amy."]


def test_encode_pads_on_the_right_whatever_the_tokenizer_says(tiny_bert: Path) -> None:
    model, tokenizer = load_encoder(tiny_bert)
    model.eval()
    expected = _alone(model, tokenizer, TEXTS)
    tokenizer.padding_side = "left"
    np.testing.assert_allclose(seat.encode(TEXTS, (model, tokenizer)), expected, atol=1e-5)


def test_load_encoder_reattaches_sentdebias_and_wants_safetensors(tiny_bert: Path,
                                                                  tmp_path: Path) -> None:
    import shutil

    from transformers import AutoModel

    from biasrepro.debias import sentdebias

    copy_dir = tmp_path / "debiased"
    shutil.copytree(tiny_bert, copy_dir)
    v = np.zeros((1, 16), dtype=np.float32)
    v[0, 0] = 1.0
    sentdebias.save(copy_dir, v, {"attribute": "gender", "stage": "upstream"})
    model, _ = load_encoder(copy_dir)
    assert np.array_equal(model.sentdebias[0], v)
    # the projection removes the subspace: embeddings have no component along v
    emb = seat.encode(TEXTS, copy_dir)
    np.testing.assert_allclose(emb[:, 0], 0.0, atol=1e-6)
    # a checkpoint without safetensors weights is refused, naming the directory
    plain = tmp_path / "bin"
    AutoModel.from_pretrained(tiny_bert).save_pretrained(plain, safe_serialization=False)
    shutil.copy(tiny_bert / "tokenizer.json", plain / "tokenizer.json")
    with pytest.raises(ModelError) as err:
        load_encoder(plain)
    assert str(err.value).startswith(f"cannot load a model from {plain}: ")


def test_seat_runner_passes_the_seed_on(tiny_bert: Path, tmp_path: Path) -> None:
    model, tokenizer = load_encoder(tiny_bert)
    path = _seat_file(tmp_path, _sets(), "world-gender.jsonl")
    tests = {"gender": [read_seat(path)]}
    ps = []
    for seed in range(4):
        got = seat.run((model, tokenizer), path, {"permutation_samples": 5, "seed": seed})
        want = run_seat(tests, lambda texts: seat.encode(texts, (model, tokenizer)),
                        samples=5, seed=seed)
        assert got.items.at[0, "p_value"] == want.at[0, "p_value"]
        ps.append(want.at[0, "p_value"])
    assert len(set(ps)) > 1


def test_stereoset_directory_model_defaults_to_an_available_device(tiny_bert: Path) -> None:
    metrics, frame = score_stereoset(tiny_bert, [_cat()])
    assert frame["id"].tolist() == ["cat0"] and metrics["overall"]["count"] == 1
