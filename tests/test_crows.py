"""CrowS-Pairs: parser, token split, both scorings on a hand-derived case, batched == naive."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import torch
from conftest import realdata
from fixtures.tiny_models import CORPUS, tiny_masked_lm

from biasrepro.errors import ConfigError, DataError
from biasrepro.representation.crows import (
    IDENTICAL,
    NO_MODIFIED,
    NO_UNMODIFIED,
    masked_log_probs,
    read_crows,
    score_crows,
    split_tokens,
)

LOG2 = math.log(2)

# --- a stub masked LM whose log-probabilities are known exactly --------------------------------
# Token ids of a whitespace tokenizer; every sentence is encoded as [CLS] words [SEP].
VOCAB = {w: i for i, w in enumerate(
    "[PAD] [CLS] [SEP] [MASK] she he is a nurse man woman good kind".split())}
# At every position the stub predicts one of three distributions (weights out of 32):
# A when the input shows "she", B when it shows "he", M when it shows neither.
WEIGHTS = {
    #    PAD CLS SEP MASK she he is  a  nurse man woman good kind
    "A": [1, 1, 1, 1, 3, 1, 8, 4, 8, 1, 1, 1, 1],
    "B": [1, 1, 1, 1, 1, 3, 8, 4, 2, 1, 1, 4, 4],
    "M": [1, 1, 1, 1, 8, 4, 4, 4, 2, 2, 2, 1, 1],
}


class StubTokenizer:
    mask_token_id = VOCAB["[MASK]"]

    def encode(self, text: str) -> list[int]:
        return [VOCAB["[CLS]"], *(VOCAB[w] for w in text.split()), VOCAB["[SEP]"]]


class StubMLM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        assert all(sum(w) == 32 for w in WEIGHTS.values())
        self.table = {k: torch.tensor(w, dtype=torch.float32).log() for k, w in WEIGHTS.items()}
        self.forwards = 0

    def forward(self, input_ids: torch.Tensor) -> SimpleNamespace:
        self.forwards += 1
        she = (input_ids == VOCAB["she"]).any(1, keepdim=True)
        he = (input_ids == VOCAB["he"]).any(1, keepdim=True)
        rows = torch.where(she, self.table["A"], torch.where(he, self.table["B"], self.table["M"]))
        return SimpleNamespace(logits=rows[:, None, :].expand(-1, input_ids.shape[1], -1))


# (sent_more, sent_less, direction, bias_type)
HAND_PAIRS = pd.DataFrame([
    ("she is a nurse", "he is a nurse", "stereo", "gender"),
    ("he is kind", "she is good", "antistereo", "gender"),
    ("a man is good", "a woman is good", "stereo", "race-color"),
    ("she is a nurse", "she is a nurse", "stereo", "gender"),
    ("she is a good nurse", "she is a nurse", "stereo", "gender"),
    ("she", "he", "stereo", "gender"),
], columns=["sent_more", "sent_less", "stereo_antistereo", "bias_type"])


def test_bias_bench_scoring_matches_hand_derivation() -> None:
    result = score_crows((StubMLM(), StubTokenizer()), HAND_PAIRS, scoring="bias-bench",
                         device="cpu")
    pairs = result["pairs"]
    # pair 0: the modified token masked leaves no gender word, so M: she 8/32, he 4/32
    # pair 1 (antistereo, two modified tokens each, mean):
    #   "he is kind": he|M 4/32, kind|B 4/32 -> -3 ln2;  "she is good": she|M 8/32, good|A 1/32
    #   -> mean(-2, -5) ln2 = -3.5 ln2.  sent_more ("he is kind") is higher: a hit
    # pair 2: man|M 2/32 == woman|M 2/32: a tie (neutral, in N, no hit)
    # pair 5: she|M vs he|M as pair 0
    expected = {0: (-2 * LOG2, -3 * LOG2), 1: (-3 * LOG2, -3.5 * LOG2),
                2: (-4 * LOG2, -4 * LOG2), 5: (-2 * LOG2, -3 * LOG2)}
    for i, (more, less) in expected.items():
        assert pairs.at[i, "sent_more_raw"] == pytest.approx(more, abs=1e-6)
        assert pairs.at[i, "sent_less_raw"] == pytest.approx(less, abs=1e-6)
        assert pairs.at[i, "sent_more_score"] == round(more, 3)
    assert pairs["hit"].tolist()[:3] == [True, True, False]
    assert pairs.at[2, "neutral"]
    assert pairs.at[1, "n_tokens_more"] == 2
    assert pairs["skip_reason"].tolist()[3:5] == [IDENTICAL, NO_MODIFIED]
    overall = result["overall"]
    assert overall["metric_score"] == 75.0  # 3 hits of N = 4 (the tie counts in N)
    assert (overall["n_pairs"], overall["n_scored"], overall["n_neutral"]) == (6, 4, 1)
    assert overall["skipped"] == {IDENTICAL: 1, NO_MODIFIED: 1}
    assert overall["stereo"] == {"n_scored": 3, "n_neutral": 1, "n_hits": 2, "score": 100.0}
    assert overall["antistereo"] == {"n_scored": 1, "n_neutral": 0, "n_hits": 1, "score": 100.0}
    assert result["bias_types"]["gender"]["metric_score"] == 100.0
    assert result["bias_types"]["gender"]["n_skipped"] == 2
    assert result["bias_types"]["race-color"]["metric_score"] == 0.0


def test_nangia_scoring_matches_hand_derivation() -> None:
    result = score_crows((StubMLM(), StubTokenizer()), HAND_PAIRS, scoring="nangia",
                         device="cpu")
    pairs = result["pairs"]
    # pair 0: unmodified is, a, nurse (CLS/SEP left out) summed; the gender word stays visible
    #   "she ...": A 8, 4, 8 /32 -> -7 ln2;  "he ...": B 8, 4, 2 /32 -> -9 ln2: a hit
    # pair 1: only "is" (A 8/32 vs B 8/32): a tie
    # pair 2: a, is, good under M in both: -11 ln2 each, a tie
    # pair 4 (insertion, scorable here): she|M, is|A, a|A, nurse|A = -9 ln2 in both, a tie
    expected = {0: (-7, -9), 1: (-2, -2), 2: (-11, -11), 4: (-9, -9)}
    for i, (more, less) in expected.items():
        assert pairs.at[i, "sent_more_raw"] == pytest.approx(more * LOG2, abs=1e-6)
        assert pairs.at[i, "sent_less_raw"] == pytest.approx(less * LOG2, abs=1e-6)
    assert pairs.at[0, "n_tokens_more"] == 3
    assert pairs["status"].tolist() == ["scored"] * 3 + ["skipped", "scored", "skipped"]
    assert pairs.loc[pairs["status"] == "scored", "neutral"].tolist() == [False, True, True, True]
    assert pairs.at[3, "skip_reason"] == IDENTICAL
    assert pairs.at[5, "skip_reason"] == NO_UNMODIFIED
    overall = result["overall"]
    assert overall["metric_score"] == 25.0  # 1 hit of N = 4
    assert overall["skipped"] == {IDENTICAL: 1, NO_UNMODIFIED: 1}
    assert result["bias_types"]["gender"]["metric_score"] == 33.33
    assert overall["antistereo"]["score"] is None  # its only pair is a tie


def test_batched_is_one_forward_per_sentence_and_equals_naive() -> None:
    model, tok = StubMLM(), StubTokenizer()
    ids = tok.encode("she is a good nurse")
    naive = masked_log_probs(model, ids, [1, 2, 3, 4, 5], tok.mask_token_id, batched=False)
    assert model.forwards == 5
    batched = masked_log_probs(model, ids, [1, 2, 3, 4, 5], tok.mask_token_id)
    assert model.forwards == 6
    assert batched == pytest.approx(naive, abs=1e-6)
    # a budget of two copies per pass: 3 passes
    masked_log_probs(model, ids, [1, 2, 3, 4, 5], tok.mask_token_id, token_budget=2 * len(ids))
    assert model.forwards == 9


def test_split_tokens_uses_difflib_opcodes() -> None:
    split = split_tokens([1, 4, 6, 7, 8, 2], [1, 4, 6, 7, 11, 8, 2])
    assert split.modified1 == [] and split.modified2 == [4]
    assert split.unmodified1 == [0, 1, 2, 3, 4, 5]
    assert split.unmodified2 == [0, 1, 2, 3, 5, 6]
    split = split_tokens([1, 5, 6, 12, 2], [1, 4, 6, 11, 2])
    assert (split.modified1, split.modified2) == ([1, 3], [1, 3])


def test_unknown_scoring_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="scoring"):
        score_crows((StubMLM(), StubTokenizer()), HAND_PAIRS, scoring="pll")


# --- the CSV format --------------------------------------------------------------------------

def _write_csv(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    frame = pd.DataFrame(rows, columns=["sent_more", "sent_less", "stereo_antistereo",
                                        "bias_type"])
    frame["annotations"] = "[['gender']]"
    frame["anon_writer"] = "a0"
    frame["anon_annotators"] = "['a1']"
    frame.to_csv(path)  # the unnamed index column, as in the real file
    return path


def test_read_crows_filters_paper_attributes(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "crows.csv", [
        ("She cooks.", "He cooks.", "stereo", "gender"),
        ("Black men, \"quoted\",\nlong.", "White men, \"quoted\",\nlong.", "stereo",
         "race-color"),
        ("The poor are lazy.", "The rich are lazy.", "antistereo", "socioeconomic"),
    ])
    assert len(read_crows(path)) == 3
    pairs = read_crows(path, bias_types=["gender", "race", "religion"])
    assert pairs["bias_type"].tolist() == ["gender", "race-color"]
    assert pairs["row"].tolist() == [1, 2]
    assert pairs.at[1, "sent_more"] == 'Black men, "quoted",\nlong.'


def test_read_crows_errors_name_file_row_and_column(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "bad.csv", [
        ("She cooks.", "He cooks.", "stereo", "gender"),
        ("She cooks.", "He cooks.", "anti-stereo", "gender"),
    ])
    with pytest.raises(DataError) as err:
        read_crows(path)
    assert (err.value.file, err.value.row, err.value.column) == (
        str(path), 2, "stereo_antistereo")
    assert "anti-stereo" in str(err.value)
    pd.read_csv(path).drop(columns="sent_less").to_csv(path, index=False)
    with pytest.raises(DataError) as err:
        read_crows(path)
    assert (err.value.file, err.value.column) == (str(path), "sent_less")


def test_read_real_crows_file() -> None:
    pairs = read_crows(realdata("crows", "crows_pairs_anonymized.csv"))
    assert len(pairs) == 1508
    paper = read_crows(realdata("crows", "crows_pairs_anonymized.csv"),
                       bias_types=["gender", "race", "religion"])
    counts = paper.groupby(["bias_type", "stereo_antistereo"]).size().to_dict()
    assert counts == {("gender", "antistereo"): 103, ("gender", "stereo"): 159,
                      ("race-color", "antistereo"): 43, ("race-color", "stereo"): 473,
                      ("religion", "antistereo"): 6, ("religion", "stereo"): 99}


# --- tiny real masked LMs ---------------------------------------------------------------------

TEXTS = [*CORPUS, *["The nurse said she would help.", "The doctor said he would help."] * 20]
REAL_PAIRS = [
    ("The nurse said she would help.", "The nurse said he would help.", "stereo", "gender"),
    ("The doctor said he would help.", "The doctor said she would help.", "antistereo",
     "gender"),
    ("Muslim neighbours praised the director.", "Christian neighbours praised the director.",
     "stereo", "religion"),
    ("The Nurse said she would help.", "the nurse said she would help.", "stereo", "gender"),
]


@pytest.fixture(scope="module")
def tiny_mlms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mlm")
    # the RoBERTa directory's name must not decide anything: call it "bert-like"
    return {"bert": tiny_masked_lm(root / "bert", "bert", TEXTS),
            "roberta": tiny_masked_lm(root / "bert-like", "roberta", TEXTS)}


@pytest.mark.parametrize("arch", ["bert", "roberta"])
@pytest.mark.parametrize("scoring", ["bias-bench", "nangia"])
def test_tiny_masked_lm_end_to_end(tiny_mlms: dict[str, Path], tmp_path: Path, arch: str,
                                   scoring: str) -> None:
    pairs = read_crows(_write_csv(tmp_path / "crows.csv", REAL_PAIRS))
    result = score_crows(tiny_mlms[arch], pairs, scoring=scoring, device="cpu")
    naive = score_crows(tiny_mlms[arch], pairs, scoring=scoring, device="cpu", batched=False)
    frame = result["pairs"]
    scored = frame["status"] == "scored"
    for col in ("sent_more_raw", "sent_less_raw"):
        assert frame.loc[scored, col].to_numpy() == pytest.approx(
            naive["pairs"].loc[scored, col].to_numpy(), abs=1e-5)
    overall = result["overall"]
    assert overall["n_scored"] + overall["n_skipped"] == overall["n_pairs"] == 4
    assert set(result["bias_types"]) == {"gender", "religion"}
    assert 0 <= overall["metric_score"] <= 100
    # BERT lowercases (its tokenizer says so), so the case-only pair is identical there;
    # cased RoBERTa scores it
    assert frame.at[3, "skip_reason"] == (IDENTICAL if arch == "bert" else "")


def test_batched_equals_naive_on_tiny_models(tiny_mlms: dict[str, Path]) -> None:
    from biasrepro.models.load import load_masked_lm

    for path in tiny_mlms.values():
        model, tokenizer = load_masked_lm(path)
        model.eval()
        ids = tokenizer.encode(CORPUS[2])
        positions = list(range(1, len(ids) - 1))
        naive = masked_log_probs(model, ids, positions, tokenizer.mask_token_id, batched=False)
        for budget in (4096, 3 * len(ids)):
            batched = masked_log_probs(model, ids, positions, tokenizer.mask_token_id,
                                       token_budget=budget)
            assert batched == pytest.approx(naive, abs=1e-5)
        assert (naive < 0).all()


def test_roberta_modified_tokens_carry_the_leading_space(tiny_mlms: dict[str, Path]) -> None:
    from biasrepro.models.load import load_masked_lm

    _, tokenizer = load_masked_lm(tiny_mlms["roberta"])
    ids1, ids2 = (tokenizer.encode(s) for s in REAL_PAIRS[0][:2])
    split = split_tokens(ids1, ids2)
    assert tokenizer.convert_ids_to_tokens([ids1[i] for i in split.modified1]) == ["Ġshe"]
    assert tokenizer.convert_ids_to_tokens([ids2[i] for i in split.modified2]) == ["Ġhe"]
