"""Failure detection: BTC counts, BTC pairs, predictions and Table 4."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import biasrepro.biasfinder.btc as btc
from biasrepro.biasfinder.btc import (
    COUNT_COLUMNS,
    PAIR_COLUMNS,
    btc_pairs,
    class_counts,
    iter_btc_pairs,
    join_predictions,
    pair_texts,
    score_mutants,
    summarize,
    table_rows,
    template_counts,
    write_btc,
    write_pairs,
    write_table,
)
from biasrepro.errors import ConfigError, DataError


def mutants_frame(rows: list[tuple[str, str, str, str, int]]) -> pd.DataFrame:
    """Mutants (template_id, characteristic, class, align, pred) with contract columns, ids
    numbered per template in row order and prob = 0.9 / 0.1 for pred 1 / 0."""
    seen: dict[str, int] = {}
    out = []
    for template, characteristic, cls, align, pred in rows:
        k = seen[template] = seen.get(template, -1) + 1
        out.append({"id": f"{template}#{k:04d}", "template_id": template,
                    "characteristic": characteristic, "class": cls,
                    "values": json.dumps({"x": cls}), "align": align,
                    "text": f"A review about {cls} ({align or 'any'}), version {k}.", "label": 1,
                    "prob": 0.9 if pred else 0.1, "pred": pred})
    return pd.DataFrame(out)


# Template "t1": classes x, y, z, two mutants each (align a0, a1).
#   preds  x: a0=1 a1=0   y: a0=1 a1=1   z: a0=0 a1=0   -> P = (1, 2, 0), N = (1, 0, 2)
#   btc = (x,y) 1·0 + 1·2 = 2, (x,z) 1·2 + 1·0 = 2, (y,z) 2·2 + 0·0 = 4  -> 8 of 3·4 = 12 pairs
#   aligned, a0: P = (1, 1, 0), N = (0, 0, 1): (x,z) 1 + (y,z) 1 = 2 of 3 pairs
#            a1: P = (0, 1, 0), N = (1, 0, 1): (x,y) 1 + (y,z) 1 = 2 of 3 pairs -> 4 of 6
# Template "t2": other classes u, v, w with 1, 2, 3 mutants, align "" (all pairs aligned).
#   preds  u: 1   v: 0 1   w: 0 0 0   -> P = (1, 1, 0), N = (0, 1, 3)
#   btc = (u,v) 1·1 + 0·1 = 1, (u,w) 1·3 = 3, (v,w) 1·3 + 1·0 = 3 -> 7 of 2 + 3 + 6 = 11 pairs
HAND = [
    ("t1", "occupation", "x", "a0", 1), ("t1", "occupation", "x", "a1", 0),
    ("t1", "occupation", "y", "a0", 1), ("t1", "occupation", "y", "a1", 1),
    ("t1", "occupation", "z", "a0", 0), ("t1", "occupation", "z", "a1", 0),
    ("t2", "occupation", "u", "", 1), ("t2", "occupation", "v", "", 0),
    ("t2", "occupation", "v", "", 1), ("t2", "occupation", "w", "", 0),
    ("t2", "occupation", "w", "", 0), ("t2", "occupation", "w", "", 0),
]


def test_hand_counted_templates() -> None:
    scored = mutants_frame(HAND)
    counts = template_counts(scored)
    assert list(counts.columns) == COUNT_COLUMNS
    assert counts["template_id"].tolist() == ["t1", "t2"]
    assert counts["btc"].tolist() == [8, 7]
    assert counts["possible_pairs"].tolist() == [12, 11]
    assert counts["btc_rate"].tolist() == pytest.approx([8 / 12, 7 / 11])
    assert counts["aligned_pairs"].tolist() == [6, 11]
    assert counts["aligned_btc"].tolist() == [4, 7]
    assert counts["n_mutants"].tolist() == [6, 6]
    assert counts["n_classes"].tolist() == [3, 3]
    assert counts["n_positive"].tolist() == [3, 2]
    assert counts["n_negative"].tolist() == [3, 4]
    assert counts.dtypes["btc"] == np.int64 and counts.dtypes["btc_rate"] == np.float64

    pairs = btc_pairs(scored)
    assert list(pairs.columns) == PAIR_COLUMNS
    assert len(pairs) == counts["btc"].sum() == 15
    assert pairs["aligned"].sum() == counts["aligned_btc"].sum() == 11
    assert len(btc_pairs(scored, aligned_only=True)) == 11
    # every pair: one template, two classes, two predictions; id_1 before id_2
    assert (pairs["class_1"] != pairs["class_2"]).all()
    assert (pairs["pred_1"] != pairs["pred_2"]).all()
    assert (pairs["id_1"] < pairs["id_2"]).all()
    assert (pairs["id_1"].str.split("#").str[0] == pairs["template_id"]).all()
    first = pairs.iloc[0]
    assert (first["id_1"], first["id_2"], bool(first["aligned"])) == ("t1#0000", "t1#0004", True)
    assert first["prob_2"] == 0.1
    assert not {"text", "text_1", "text_2"} & set(pairs.columns)  # texts stay in the mutants


def test_templates_with_different_class_sets() -> None:
    """§7.11: the original looped over the *last* template's classes; here the last
    template's classes (u, v, w) share nothing with the first's and both are counted."""
    scored = mutants_frame(HAND)
    last_only = template_counts(scored[scored["template_id"] == "t2"])
    both = template_counts(scored)
    assert both.loc[both["template_id"] == "t2", "btc"].item() == last_only["btc"].item() == 7
    assert both.loc[both["template_id"] == "t1", "btc"].item() == 8
    # a template with four classes next to one with two
    extra = mutants_frame(HAND + [("t3", "occupation", c, "", p)
                                  for c, p in [("a", 1), ("b", 0)]])
    assert template_counts(extra)["btc"].tolist() == [8, 7, 1]


def brute_force(scored: pd.DataFrame) -> dict[str, tuple[int, int, int, int]]:
    """Per template: (btc, possible, aligned_btc, aligned_pairs) by enumerating every pair."""
    out = {}
    for template, group in scored.groupby("template_id"):
        recs = group.to_dict("records")
        btc = possible = a_btc = a_pairs = 0
        for r, s in itertools.combinations(recs, 2):
            if r["class"] == s["class"]:
                continue
            flip = r["pred"] != s["pred"]
            aligned = r["align"] == s["align"]
            possible += 1
            btc += flip
            a_pairs += aligned
            a_btc += flip and aligned
        out[template] = (btc, possible, a_btc, a_pairs)
    return out


def random_scored(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(25):
        classes = [f"c{t % 4}{k}" for k in range(rng.integers(2, 6))]
        aligns = ["", "n0", "n1", "g0"][: rng.integers(1, 5)]
        for _ in range(rng.integers(2, 30)):
            rows.append((f"tpl{t:02d}", "gender" if t % 2 else "country",
                         str(rng.choice(classes)), str(rng.choice(aligns)),
                         int(rng.random() < 0.5)))
    rows += [(f"tpl{t:02d}", "gender" if t % 2 else "country", f"c{t % 4}{k}", "", 0)
             for t in range(25) for k in range(2)]  # at least two classes per template
    return mutants_frame(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counts_match_pair_enumeration(seed: int) -> None:
    scored = random_scored(seed)
    counts = template_counts(scored).set_index("template_id")
    expected = brute_force(scored)
    got = {t: (int(r.btc), int(r.possible_pairs), int(r.aligned_btc), int(r.aligned_pairs))
           for t, r in counts.iterrows()}
    assert got == expected
    pairs = btc_pairs(scored)
    assert len(pairs) == counts["btc"].sum()
    assert pairs["aligned"].sum() == counts["aligned_btc"].sum()
    assert not pairs.duplicated(["id_1", "id_2"]).any()


def test_deterministic_and_order_independent() -> None:
    scored = random_scored(7)
    shuffled = scored.sample(frac=1.0, random_state=3).reset_index(drop=True)
    pd.testing.assert_frame_equal(btc_pairs(scored), btc_pairs(shuffled))
    pd.testing.assert_frame_equal(template_counts(scored), template_counts(shuffled))
    sorted_pairs = btc_pairs(scored).sort_values(["template_id", "id_1", "id_2"])
    pd.testing.assert_frame_equal(btc_pairs(scored), sorted_pairs.reset_index(drop=True))


def test_chunked_pairs_equal_unchunked(tmp_path, monkeypatch) -> None:
    """A chunk of templates at a time (here one template, or a few rows of a row group)
    gives the same rows and, written, the same bytes as one pass."""
    scored = random_scored(4)
    whole = btc_pairs(scored)
    assert len(whole) > 200
    for chunk in (1, 7, 150):
        tables = list(iter_btc_pairs(scored, chunk_candidates=chunk))
        assert len(tables) > 1
        pd.testing.assert_frame_equal(btc_pairs(scored, chunk_candidates=chunk), whole)
    for aligned in (False, True):
        pd.testing.assert_frame_equal(
            btc_pairs(scored, aligned_only=aligned, chunk_candidates=3),
            btc_pairs(scored, aligned_only=aligned))
    # written: row groups of a fixed size whatever the chunks, so byte-identical files
    monkeypatch.setattr(btc, "PAIR_ROW_GROUP", 64)
    write_pairs(whole, tmp_path / "frame.parquet")
    write_pairs(iter_btc_pairs(scored), tmp_path / "one.parquet")
    n = write_pairs(iter_btc_pairs(scored, chunk_candidates=5), tmp_path / "chunked.parquet")
    assert n == len(whole)
    data = {p.name: p.read_bytes() for p in tmp_path.glob("*.parquet")}
    assert data["frame.parquet"] == data["one.parquet"] == data["chunked.parquet"]
    back = pd.read_parquet(tmp_path / "chunked.parquet")
    pd.testing.assert_frame_equal(back, whole, check_dtype=False)
    assert list(back.columns) == PAIR_COLUMNS and "text_1" not in back.columns
    assert pq.ParquetFile(tmp_path / "chunked.parquet").num_row_groups == -(-n // 64)
    # no BTC at all: an empty file of the same columns
    none = scored.assign(pred=0, prob=0.1)
    write_pairs(iter_btc_pairs(none), tmp_path / "none.parquet")
    assert list(pd.read_parquet(tmp_path / "none.parquet").columns) == PAIR_COLUMNS
    assert len(btc_pairs(none)) == 0 and list(btc_pairs(none).columns) == PAIR_COLUMNS


def test_pair_texts_from_the_mutants_file(tmp_path) -> None:
    """Pairs hold ids only; the texts of a few are read from the mutants file by id."""
    from biasrepro.biasfinder.mutants import COLUMNS, write_mutants

    scored = random_scored(5)
    path = tmp_path / "mutants.parquet"
    write_mutants(scored[list(COLUMNS)], path)
    pairs = btc_pairs(scored)
    sample = pairs.sample(n=25, random_state=0)
    shown = pair_texts(sample, [path])
    text = scored.set_index("id")["text"]
    assert shown["text_1"].tolist() == text.loc[sample["id_1"]].tolist()
    assert shown["text_2"].tolist() == text.loc[sample["id_2"]].tolist()
    pd.testing.assert_frame_equal(shown[PAIR_COLUMNS], sample)
    pd.testing.assert_frame_equal(pair_texts(sample, scored), shown)
    # only the wanted rows and columns, a few rows at a time
    from biasrepro.io import read_parquet_rows
    some = sample["id_1"].tolist()[:5]
    rows = read_parquet_rows(path, key="id", values=some, columns=["text"], batch_rows=7)
    assert list(rows.columns) == ["text"]
    assert sorted(rows["text"]) == sorted(text.loc[list(set(some))])
    assert len(read_parquet_rows(path, key="id", values=[], columns=["id", "text"])) == 0
    with pytest.raises(DataError, match="not in the mutants given"):
        pair_texts(sample, scored[~scored["id"].isin(sample["id_2"].iloc[:1])])


def test_gender_alignment() -> None:
    """Name i ↔ name i is aligned; a male name 0 against a female name 1 is not."""
    rows = [("gender-d1", "gender", "male", "n0", 1), ("gender-d1", "gender", "male", "n1", 1),
            ("gender-d1", "gender", "female", "n0", 0),
            ("gender-d1", "gender", "female", "n1", 1)]
    counts = template_counts(mutants_frame(rows))
    # pairs: m0-f0 (aligned, BTC), m0-f1, m1-f0 (BTC), m1-f1 (aligned)
    assert counts[["btc", "possible_pairs", "aligned_btc", "aligned_pairs"]].iloc[0].tolist() \
        == [2, 4, 1, 2]


def test_score_mutants_with_a_callable() -> None:
    rows = [("gender-d1", "gender", "male", "p", 0), ("gender-d1", "gender", "female", "p", 0),
            ("gender-d2", "gender", "male", "p", 0), ("gender-d2", "gender", "female", "p", 0)]
    mutants = mutants_frame(rows).drop(columns=["prob", "pred"])
    mutants["text"] = ["I think he was great.", "I think she was great.",
                       "He was dull, and we said so.", "She was dull, and we said so."]
    scored = score_mutants(
        mutants, lambda texts: [0.9 if "he" in t.lower().split() else 0.1 for t in texts])
    assert scored["prob"].tolist() == [0.9, 0.1, 0.9, 0.1]
    assert scored["pred"].tolist() == [1, 0, 1, 0]
    assert scored.dtypes["prob"] == np.float64 and scored.dtypes["pred"] == np.int64
    assert template_counts(scored)["btc"].tolist() == [1, 1]
    high = score_mutants(mutants, lambda texts: [0.9 if "he" in t.split() else 0.1
                                                 for t in texts], threshold=0.95)
    assert high["pred"].tolist() == [0, 0, 0, 0]
    with pytest.raises(ConfigError, match="threshold"):
        score_mutants(mutants, lambda texts: [0.5] * len(texts), threshold=1.5)


def predictions_of(scored: pd.DataFrame) -> pd.DataFrame:
    return scored[["id", "label", "prob", "pred"]].iloc[::-1].reset_index(drop=True)


def test_join_predictions() -> None:
    scored = mutants_frame(HAND)
    mutants = scored.drop(columns=["prob", "pred"])
    joined = join_predictions(mutants, predictions_of(scored))
    pd.testing.assert_frame_equal(joined[scored.columns], scored)
    assert template_counts(joined)["btc"].sum() == 15
    # a threshold recomputes pred from prob (predict writes it at 0.5)
    strict = join_predictions(mutants, predictions_of(scored), threshold=0.95)
    assert strict["pred"].tolist() == [0] * 12 and strict.dtypes["pred"] == np.int64
    assert template_counts(strict)["btc"].sum() == 0


@pytest.mark.parametrize("change, message, row", [
    (lambda p: p.iloc[1:], "no prediction for mutant id 't2#0005'", None),
    (lambda p: pd.concat([p, p.iloc[[0]].assign(id="t9#0000")]), "'t9#0000'", 13),
    (lambda p: pd.concat([p, p.iloc[[3]]]), "duplicate prediction for mutant id 't2#0002'", 13),
    (lambda p: p.assign(pred=p["pred"].where(p.index != 2, 2)), "0 or 1", 3),
    (lambda p: p.assign(prob=p["prob"].where(p.index != 4, 1.5)), r"outside \[0, 1\]", 5),
    (lambda p: p.assign(label=0), "label of mutant 't1#0000'", 12),
    (lambda p: p.drop(columns=["prob"]), "missing required column", None),
])
def test_join_errors(change, message: str, row: int | None) -> None:
    scored = mutants_frame(HAND)
    bad = change(predictions_of(scored)).reset_index(drop=True)
    with pytest.raises(DataError, match=message) as err:
        join_predictions(scored.drop(columns=["prob", "pred"]), bad,
                         predictions_file="preds.parquet")
    assert "preds.parquet" in str(err.value)
    assert err.value.row == row


@pytest.mark.parametrize("change, message, column", [
    (lambda m: m.drop(columns=["align"]), "missing required column", "align"),
    (lambda m: m[~m["class"].isin(["u", "v"])], "'t2' has mutants of a single class", "class"),
    (lambda m: m.assign(characteristic=["gender"] + ["occupation"] * 11), "several", None),
    (lambda m: m.assign(id=["t1#0000"] * 12), "duplicate mutant id", "id"),
    (lambda m: m.assign(text=m["text"].where(m.index != 5, " ")), "empty", "text"),
    (lambda m: m.assign(pred=m["pred"].where(m.index != 0, -1)), "0 or 1", "pred"),
])
def test_bad_mutants(change, message: str, column: str | None) -> None:
    bad = change(mutants_frame(HAND)).reset_index(drop=True)
    with pytest.raises(DataError, match=message) as err:
        template_counts(bad)
    if column is not None:
        assert err.value.column == column


def test_summary_and_write(tmp_path) -> None:
    scored = mutants_frame(HAND + [("gender-d1", "gender", "male", "p", 1),
                                   ("gender-d1", "gender", "female", "p", 0)])
    templates = pd.DataFrame({"template_id": ["t1", "t2", "gender-d1", "country-d4"],
                              "characteristic": ["occupation", "occupation", "gender",
                                                 "country"]})
    counts = template_counts(scored)
    # classes over all templates of a characteristic: occupations x, y, z (t1), u, v, w (t2)
    assert class_counts(scored) == {"gender": 2, "occupation": 6}
    rows = summarize(templates, counts, class_counts(scored))
    by = {r["characteristic"]: r for r in rows}
    assert [r["characteristic"] for r in rows] == ["gender", "occupation", "country", "total"]
    assert by["occupation"] == {
        "characteristic": "occupation", "classes": 6, "templates": 2, "mutants": 12, "btc": 15,
        "possible_pairs": 23, "btc_rate": 15 / 23, "aligned_pairs": 17, "aligned_btc": 11,
        "aligned_btc_rate": 11 / 17, "templates_with_btc": 2}
    # a template that yielded no scored mutants still counts as generated (Table 4)
    assert by["country"]["templates"] == 1 and by["country"]["btc_rate"] is None
    assert by["country"]["classes"] is None and by["total"]["classes"] is None
    assert summarize(templates, counts)[1]["classes"] is None  # classes not given
    assert (by["total"]["templates"], by["total"]["btc"], by["total"]["possible_pairs"]) \
        == (4, 16, 24)
    with pytest.raises(DataError, match="'t2' is not in the templates table"):
        summarize(templates.iloc[[0, 2]], counts)
    # a characteristic that yielded no template keeps its row when named (Table 4 shows it)
    none = summarize(templates.iloc[:0], counts.iloc[:0], {}, "gender")
    assert [(r["characteristic"], r["templates"], r["btc_rate"]) for r in none] == [
        ("gender", 0, None), ("total", 0, None)]
    assert [r["characteristic"] for r in summarize(templates.iloc[:0], counts.iloc[:0])] == [
        "total"]

    pairs = btc_pairs(scored)
    paths = {"pairs_path": tmp_path / "btc" / "pairs.parquet",
             "counts_path": tmp_path / "btc" / "counts.parquet",
             "summary_json": tmp_path / "btc" / "summary.json",
             "summary_md": tmp_path / "btc" / "summary.md"}
    write_btc(pairs, counts, rows, **paths)
    pd.testing.assert_frame_equal(pd.read_parquet(paths["pairs_path"]), pairs,
                                  check_dtype=False)
    assert json.loads(paths["summary_json"].read_text())["total"]["btc"] == 16
    assert "| occupation | 6 | 2 | 12 | 15 |" in paths["summary_md"].read_text()
    first = {k: p.read_bytes() for k, p in paths.items()}
    write_btc(btc_pairs(scored), template_counts(scored),
              summarize(templates, counts, class_counts(scored)), **paths)
    assert {k: p.read_bytes() for k, p in paths.items()} == first


def test_table_over_models_and_methods(tmp_path) -> None:
    """Table 4 per model and method from per-characteristic summaries; totals recomputed."""
    occupation = mutants_frame(HAND)
    gender = mutants_frame([("gender-d1", "gender", "male", "p", 1),
                            ("gender-d1", "gender", "female", "p", 0)])
    templates = {"occupation": pd.DataFrame({"template_id": ["t1", "t2"],
                                             "characteristic": "occupation"}),
                 "gender": pd.DataFrame({"template_id": ["gender-d1", "gender-d2"],
                                         "characteristic": "gender"})}
    paths = []
    for model, scored in (("tiny-bert", occupation), ("tiny-bert", gender),
                          ("tiny-albert", gender)):
        characteristic = scored["characteristic"].iloc[0]
        counts = template_counts(scored)
        meta = {"model": model, "method": "baseline", "threshold": 0.5, "lists": "original",
                "occupation_templates": "first"}
        rows = [{**meta, **r} for r in summarize(templates[characteristic], counts,
                                                 class_counts(scored))]
        stem = tmp_path / f"{model}-{characteristic}"
        write_btc(btc_pairs(scored), counts, rows, pairs_path=f"{stem}.parquet",
                  counts_path=f"{stem}.counts.parquet", summary_json=f"{stem}.json")
        paths.append(tmp_path / f"{stem}.json")
    rows = table_rows(paths)
    assert [(r["model"], r["characteristic"]) for r in rows] == [
        ("tiny-albert", "gender"), ("tiny-albert", "total"), ("tiny-bert", "gender"),
        ("tiny-bert", "occupation"), ("tiny-bert", "total")]
    total = rows[-1]
    assert (total["templates"], total["mutants"], total["btc"], total["possible_pairs"]) \
        == (4, 14, 16, 24)
    assert total["btc_rate"] == pytest.approx(16 / 24) and total["threshold"] == 0.5
    assert (total["lists"], total["occupation_templates"], total["classes"]) == \
        ("original", "first", None)
    assert [r["classes"] for r in rows] == [2, None, 2, 6, None]
    out = {"out_json": tmp_path / "t4.json", "out_md": tmp_path / "t4.md",
           "out_csv": tmp_path / "t4.csv"}
    write_table(paths, **out)
    assert json.loads(out["out_json"].read_text())["tiny-bert"]["baseline"]["total"]["btc"] == 16
    assert pd.read_csv(out["out_csv"])["characteristic"].tolist()[-1] == "total"
    md = out["out_md"].read_text()
    assert "| tiny-bert | baseline | 0.5000 | original | first | occupation | 6 | 2 | 12 | 15 |" \
        in md and "possible_pairs" in md
    assert pd.read_csv(out["out_csv"])["classes"].tolist()[-2] == 6
    with pytest.raises(DataError, match="'tiny-bert', method 'baseline', characteristic "
                       "'gender' is also in"):
        table_rows([*paths, paths[1]])
    (tmp_path / "bad.json").write_text('{"gender": {"characteristic": "gender"}}')
    with pytest.raises(DataError, match="lacks 'model'") as err:
        table_rows([tmp_path / "bad.json"])
    assert err.value.column == "gender"


def test_template_chunks_at_their_boundaries() -> None:
    """Runs of whole templates of at most ``limit`` candidate pairs, worked by hand: a run
    closes before the template that would pass the limit; a template over it is alone."""
    chunks = btc._pair_chunks
    assert chunks(np.array([3, 3, 10, 1, 3, 3, 0]), 6) == [(0, 2), (2, 3), (3, 5), (5, 7)]
    assert chunks(np.array([10, 1, 3, 2]), 6) == [(0, 1), (1, 4)]
    assert chunks(np.array([6]), 6) == [(0, 1)] and chunks(np.array([], dtype=int), 6) == []


def test_chunks_around_templates_without_btcs() -> None:
    """Templates with only positive predictions (no candidate pair) before and after the
    one with BTCs: one chunk at a time gives the hand-counted BTCs of HAND's t2."""
    rows = [("t0", "occupation", c, "", 1) for c in "xyz"]
    rows += [r for r in HAND if r[0] == "t2"]
    rows += [("t9", "occupation", c, "", 1) for c in "xyz"]
    scored = mutants_frame(rows)
    for chunk in (1, 2, 100):
        pairs = btc_pairs(scored, chunk_candidates=chunk)
        assert len(pairs) == 7 == template_counts(scored)["btc"].sum(), chunk
        assert set(pairs["template_id"]) == {"t2"}
