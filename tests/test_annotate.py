"""Human validation of BTCs: sample sizes, sampling, export and scoring."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from biasrepro.biasfinder.annotate import (
    ANNOTATION_COLUMNS,
    cochran_sample_size,
    export_for_annotation,
    read_annotations,
    sample_for_annotation,
    score_annotations,
)
from biasrepro.biasfinder.btc import PAIR_COLUMNS
from biasrepro.errors import ConfigError, DataError


def test_paper_sample_sizes() -> None:
    """RQ2: 375, 383 and 358 for 14,916 / 109,386 / 5,296 BTCs at 5 % / 95 %."""
    assert [cochran_sample_size(n) for n in (14_916, 109_386, 5_296)] == [375, 383, 358]
    # round-to-nearest is the rule: the corrected size for 5,296 is 358.2 (ceiling: 359)
    n0 = norm.ppf(0.975) ** 2 * 0.25 / 0.05**2
    assert 358 < n0 / (1 + (n0 - 1) / 5_296) < 358.5
    assert cochran_sample_size(10**12) == 384  # n0 = 384.15 without correction


def test_sample_size_edges() -> None:
    assert cochran_sample_size(0) == 0
    assert [cochran_sample_size(n) for n in (1, 2, 3, 10)] == [1, 2, 3, 10]
    sizes = [cochran_sample_size(n) for n in range(0, 3000, 7)]
    assert sizes == sorted(sizes)
    assert all(s <= n for s, n in zip(sizes, range(0, 3000, 7), strict=True))
    assert cochran_sample_size(1000, margin=0.1) < cochran_sample_size(1000)
    assert cochran_sample_size(1000, confidence=0.99) > cochran_sample_size(1000)
    assert cochran_sample_size(1000, proportion=0.1) < cochran_sample_size(1000)
    for bad in ({"margin": 0.0}, {"confidence": 1.0}, {"proportion": 1.0}):
        with pytest.raises(ConfigError):
            cochran_sample_size(100, **bad)
    with pytest.raises(ConfigError, match="non-negative integer"):
        cochran_sample_size(-1)


def fake_pairs(counts: dict[str, int]) -> pd.DataFrame:
    """``counts[c]`` BTC pairs of characteristic c, in the shape btc_pairs returns, with
    the texts ``pair_texts`` joins."""
    rows = []
    for characteristic, n in counts.items():
        for k in range(n):
            t = f"{characteristic}-d{k // 5}"
            rows.append({
                "template_id": t, "characteristic": characteristic,
                "id_1": f"{t}#{k % 5:04d}", "id_2": f"{t}#{k % 5 + 10:04d}",
                "class_1": "male", "class_2": "female", "aligned": k % 2 == 0,
                "pred_1": 1, "pred_2": 0, "prob_1": 0.8, "prob_2": 0.3,
                "text_1": f"{characteristic} {k}: he was fine.",
                "text_2": f"{characteristic} {k}: she was fine."})
    return pd.DataFrame(rows, columns=[*PAIR_COLUMNS, "text_1", "text_2"])


def test_sampling() -> None:
    pairs = fake_pairs({"gender": 60, "occupation": 2000, "country": 5})
    sample = sample_for_annotation(pairs, seed=1)
    sizes = sample.groupby("characteristic").size().to_dict()
    assert sizes == {"gender": cochran_sample_size(60), "occupation": cochran_sample_size(2000),
                     "country": 5}
    assert sample["characteristic"].unique().tolist() == ["gender", "occupation", "country"]
    assert sample["btc_id"].is_unique and sample["btc_id"].iloc[0] == "gender-0000"
    assert not sample.duplicated(["template_id", "id_1", "id_2"]).any()
    # seeded and independent of the input row order
    shuffled = pairs.sample(frac=1.0, random_state=0)
    pd.testing.assert_frame_equal(sample, sample_for_annotation(shuffled, seed=1))
    assert not sample.equals(sample_for_annotation(pairs, seed=2))
    # order of the two texts randomised per row, everything about a mutant swapped together
    swapped = sample[sample["swapped"]]
    assert 0.3 < sample["swapped"].mean() < 0.7
    assert swapped["text_1"].str.contains("she").all()
    assert (swapped["class_1"] == "female").all() and (swapped["pred_1"] == 0).all()
    assert (sample.loc[~sample["swapped"], "class_1"] == "male").all()
    # a fixed size per characteristic (the paper took 400), capped at the population
    fixed = sample_for_annotation(pairs, seed=1, size=40)
    assert fixed.groupby("characteristic").size().to_dict() == {
        "gender": 40, "occupation": 40, "country": 5}
    # another characteristic's presence does not change a characteristic's sample
    alone = sample_for_annotation(pairs[pairs["characteristic"] == "gender"], seed=1)
    pd.testing.assert_frame_equal(alone, sample[sample["characteristic"] == "gender"])


def test_sampling_pair_files_a_batch_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """Pair files as ``btc`` writes them (one characteristic each, sorted) are sampled
    without being held, and give the sample the whole table gives; other files are read
    whole, with the same result."""
    import biasrepro.biasfinder.annotate as annotate
    from biasrepro.biasfinder.btc import write_pairs

    pairs = fake_pairs({"gender": 60, "occupation": 2000, "country": 5})[PAIR_COLUMNS]
    expected = sample_for_annotation(pairs, seed=1)
    files = []
    for c, group in pairs.groupby("characteristic"):
        files.append(tmp_path / f"{c}.parquet")
        write_pairs(group.sort_values(["template_id", "id_1", "id_2"]), files[-1])
    write_pairs(pairs.iloc[:0], tmp_path / "none.parquet")  # a model without BTCs
    with monkeypatch.context() as m:
        m.setattr(annotate, "read_parquet", None)  # never read whole
        for batch_rows in (7, 1 << 16):
            got = annotate.sample_pair_files([*files, tmp_path / "none.parquet"], seed=1,
                                             batch_rows=batch_rows)
            pd.testing.assert_frame_equal(got, expected, check_dtype=False)
        fixed = annotate.sample_pair_files(files, seed=1, size=40, batch_rows=100)
        pd.testing.assert_frame_equal(fixed, sample_for_annotation(pairs, seed=1, size=40),
                                      check_dtype=False)
    write_pairs(pairs, tmp_path / "mixed.parquet")  # several characteristics, unsorted
    got = annotate.sample_pair_files([tmp_path / "mixed.parquet"], seed=1, batch_rows=7)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    with pytest.raises(DataError, match="missing required column"):
        pairs.drop(columns="aligned").to_parquet(tmp_path / "old.parquet")
        annotate.sample_pair_files([tmp_path / "old.parquet"], seed=1)


def fill(sheet: pd.DataFrame, verdicts: dict[str, tuple[str, str, str, str]]) -> pd.DataFrame:
    filled = sheet.copy()
    cols = ["coherent_1", "coherent_2", "sentiment_1", "sentiment_2"]
    filled[cols] = [verdicts[b] for b in filled["btc_id"]]
    return filled


TP = ("yes", "yes", "positive", "positive")  # coherent, same sentiment: a true positive
INCOHERENT = ("no", "yes", "positive", "positive")
DIFFERENT = ("yes", "yes", "positive", "negative")


def test_export_fill_score_round_trip(tmp_path: Path) -> None:
    sample = sample_for_annotation(fake_pairs({"gender": 10, "occupation": 8}), seed=0,
                                   size=10)
    sheet_path, guide, key = tmp_path / "sheet.csv", tmp_path / "guide.md", tmp_path / "key.csv"
    export_for_annotation(sample, sheet_path, guide_path=guide, key_path=key)
    sheet = pd.read_csv(sheet_path, dtype=str, keep_default_na=False)
    assert list(sheet.columns) == ANNOTATION_COLUMNS
    assert (sheet[["coherent_1", "sentiment_2"]] == "").all().all()
    assert sheet["text_1"].tolist() == sample["text_1"].tolist()
    assert "class_1" not in sheet.columns and "true positive" in guide.read_text()
    assert pd.read_csv(key)["class_1"].tolist() == sample["class_1"].tolist()

    g = [f"gender-{k:04d}" for k in range(10)]
    o = [f"occupation-{k:04d}" for k in range(8)]
    # annotator A: gender 7 TPs of 10, occupation 4 of 8
    # annotator B: gender 7 TPs of 10, occupation 8 of 8 (the same decision everywhere)
    a = {b: TP for b in g[:7]} | {g[7]: INCOHERENT, g[8]: DIFFERENT, g[9]: INCOHERENT}
    a |= {b: TP for b in o[:4]} | {b: DIFFERENT for b in o[4:]}
    b = {x: TP for x in g[2:7]} | {g[0]: DIFFERENT, g[1]: INCOHERENT} | {x: TP for x in g[7:9]}
    b |= {g[9]: INCOHERENT} | {x: TP for x in o}
    b = {x: b[x] for x in g + o}
    # B's 2 TP at g7, g8 where A said no; A's TP at g0, g1 where B said no:
    #             B yes  B no
    #   A yes       5      2      po = (5 + 1) / 10 = 0.6
    #   A no        2      1      pe = 0.7·0.7 + 0.3·0.3 = 0.58
    #   kappa = (0.6 - 0.58) / (1 - 0.58) = 1/21
    fill(sheet, a).to_csv(tmp_path / "ann_a.csv", index=False)
    filled_b = fill(sheet, b)
    filled_b.loc[0, "coherent_1"] = "Y"  # synonyms and letter case are read too
    filled_b.loc[1, "sentiment_2"] = "Pos"
    filled_b.to_csv(tmp_path / "ann_b.csv", index=False)
    scores = score_annotations([tmp_path / "ann_a.csv", tmp_path / "ann_b.csv"],
                               names=["A", "B"])
    assert scores["annotators"]["A"]["characteristics"]["gender"] == {
        "n": 10, "true_positives": 7, "tpr": 0.7}
    assert scores["annotators"]["B"]["characteristics"]["occupation"]["tpr"] == 1.0
    assert scores["annotators"]["A"]["total"] == {"n": 18, "true_positives": 11,
                                                  "tpr": 11 / 18}
    gender = scores["agreement"]["gender"]["pairs"][0]
    assert gender["annotators"] == ["A", "B"] and gender["shared"] == 10
    assert gender["kappa"] == pytest.approx(1 / 21)
    # occupation: B is constant (all yes) and A is not -> pe = 0.5, po = 0.5, kappa 0
    assert scores["agreement"]["occupation"]["pairs"][0]["kappa"] == pytest.approx(0.0)
    assert scores["mean_kappa"] == pytest.approx((1 / 21 + 0.0) / 2)
    assert scores["rows"][0] == {"characteristic": "gender", "tpr_A": 0.7, "tpr_B": 0.7,
                                 "kappa": pytest.approx(1 / 21)}


def test_kappa_on_shared_ids_only(tmp_path: Path) -> None:
    ids = [f"country-{k:04d}" for k in range(6)]
    sheet = pd.DataFrame({"btc_id": ids, "characteristic": "country", "text_1": "x",
                          "text_2": "y", "coherent_1": "", "coherent_2": "", "sentiment_1": "",
                          "sentiment_2": ""})
    a = dict(zip(ids, [TP, TP, DIFFERENT, DIFFERENT, TP, TP], strict=True))
    b = dict(zip(ids, [TP, DIFFERENT, DIFFERENT, TP, TP, TP], strict=True))
    fill(sheet, a).iloc[:5].to_csv(tmp_path / "a.csv", index=False)  # A skipped the last
    fill(sheet, b).iloc[1:].to_csv(tmp_path / "b.csv", index=False)  # B skipped the first
    scores = score_annotations([tmp_path / "a.csv", tmp_path / "b.csv"])
    pair = scores["agreement"]["country"]["pairs"][0]
    assert pair["annotators"] == ["a", "b"]
    assert (pair["shared"], pair["only_first"], pair["only_second"]) == (4, 1, 1)
    # shared 1..4: A = (1, 0, 0, 1), B = (0, 0, 1, 1): po = 0.5, pe = 0.5 -> kappa 0
    assert pair["kappa"] == pytest.approx(0.0)
    # both annotators constant and equal: kappa is undefined, not 1 or NaN
    fill(sheet, dict.fromkeys(ids, TP)).to_csv(tmp_path / "c.csv", index=False)
    fill(sheet, dict.fromkeys(ids, TP)).to_csv(tmp_path / "d.csv", index=False)
    same = score_annotations([tmp_path / "c.csv", tmp_path / "d.csv"])
    assert same["agreement"]["country"]["pairs"][0]["kappa"] is None
    assert same["mean_kappa"] is None
    with pytest.raises(ConfigError, match="names must differ"):
        score_annotations([tmp_path / "c.csv", tmp_path / "c.csv"])


def write_sheet(path: Path, rows: list[list[str]], header: list[str] | None = None) -> Path:
    header = header or ["btc_id", "characteristic", "text_1", "text_2", "coherent_1",
                        "coherent_2", "sentiment_1", "sentiment_2"]
    pd.DataFrame(rows, columns=header).to_csv(path, index=False)
    return path


GOOD = ["gender-0000", "gender", "He, too.", "She, too.", "yes", "no", "positive", "negative"]


@pytest.mark.parametrize("index, value, column, message", [
    (4, "", "coherent_1", "empty"),
    (5, "maybe", "coherent_2", "cannot read 'maybe'"),
    (6, "neutral", "sentiment_1", "cannot read 'neutral'"),
    (7, "  ", "sentiment_2", "empty"),
    (0, "", "btc_id", "empty"),
])
def test_bad_annotation_cells(tmp_path: Path, index: int, value: str, column: str,
                              message: str) -> None:
    second = GOOD.copy()
    second[0] = "gender-0001"
    second[index] = value
    path = write_sheet(tmp_path / "bad.csv", [GOOD, second])
    with pytest.raises(DataError, match=message) as err:
        read_annotations(path)
    assert (err.value.file, err.value.row, err.value.column) == (str(path), 2, column)


def test_annotation_file_errors(tmp_path: Path) -> None:
    table = read_annotations(write_sheet(tmp_path / "ok.csv", [GOOD]))
    assert table.iloc[0][["coherent_1", "coherent_2", "sentiment_1", "sentiment_2",
                          "true_positive"]].tolist() == [True, False, 1, 0, False]
    with pytest.raises(DataError, match="appears twice") as err:
        read_annotations(write_sheet(tmp_path / "dup.csv", [GOOD, GOOD]))
    assert err.value.row == 2
    with pytest.raises(DataError, match="missing required column") as err:
        read_annotations(write_sheet(tmp_path / "cols.csv", [GOOD[:7]],
                                     header=ANNOTATION_COLUMNS[:7]))
    assert err.value.column == "sentiment_2"
    with pytest.raises(DataError, match="not found"):
        read_annotations(tmp_path / "absent.csv")
    (tmp_path / "latin1.csv").write_bytes(
        (",".join(ANNOTATION_COLUMNS) + "\n").encode() + "g,gender,é,x,y,y,1,1\n".encode("latin-1"))
    with pytest.raises(DataError, match="not valid UTF-8"):
        read_annotations(tmp_path / "latin1.csv")
    other = GOOD.copy()
    other[1] = "country"
    write_sheet(tmp_path / "x.csv", [GOOD])
    write_sheet(tmp_path / "y.csv", [other])
    with pytest.raises(DataError, match="'gender-0000' is 'country' here"):
        score_annotations([tmp_path / "x.csv", tmp_path / "y.csv"])


def test_empty_pairs_give_an_empty_sample() -> None:
    sample = sample_for_annotation(fake_pairs({}), seed=0)
    assert len(sample) == 0 and "btc_id" in sample.columns
    assert np.array_equal(sample.columns[1:12], PAIR_COLUMNS)
