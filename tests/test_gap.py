"""GAP scoring of the coreference backends: the reader's errors, GAP's scorer semantics on
hand-counted examples, predictions read off clusters, the report, ``biasrepro coref
evaluate`` end to end, and the rule backend on the real validation file (skipped without
it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, realdata

from biasrepro.cli import main
from biasrepro.errors import DataError
from biasrepro.nlp import gap
from biasrepro.nlp.gap import GapExample, overlaps, predict_from_clusters, read_gap, score

HEADER = "\t".join(gap.COLUMNS)


def example(text: str, pronoun: str, a: str, a_coref: bool, b: str, b_coref: bool, *,
            id: str = "t-1", nth_pronoun: int = 1) -> GapExample:
    """An example with offsets found in ``text`` (the ``nth_pronoun`` whole-word pronoun)."""
    words = [i for i in range(len(text)) if text.startswith(pronoun, i)
             and (i == 0 or not text[i - 1].isalpha())
             and not text[i + len(pronoun):i + len(pronoun) + 1].isalpha()]
    return GapExample(id=id, text=text, pronoun=pronoun,
                      pronoun_offset=words[nth_pronoun - 1], a=a, a_offset=text.index(a),
                      a_coref=a_coref, b=b, b_offset=text.index(b), b_coref=b_coref,
                      url="http://example.org/x")


def tsv_row(e: GapExample) -> str:
    return "\t".join([e.id, e.text, e.pronoun, str(e.pronoun_offset), e.a, str(e.a_offset),
                      "TRUE" if e.a_coref else "FALSE", e.b, str(e.b_offset),
                      "TRUE" if e.b_coref else "FALSE", e.url])


def write_gap(path: Path, examples: list[GapExample]) -> Path:
    path.write_text("\n".join([HEADER, *map(tsv_row, examples)]) + "\n", encoding="utf-8")
    return path


#: our own sentences: pronoun, A, B and gold labels, two of each gender and a "Neither"
FIXTURE = [
    example("Maria Lopez met Tom Hardy at the station in Leeds. She gave him a map of the "
            "old town.", "She", "Maria Lopez", True, "Tom Hardy", False, id="fx-1"),
    example("Peter Walsh hired Anna Berg as his assistant. Later he promoted her to manager.",
            "he", "Peter Walsh", True, "Anna Berg", False, id="fx-2"),
    example("Linda Park thanked Julia Stone for the flowers, and then she left the party "
            "early.", "she", "Linda Park", False, "Julia Stone", True, id="fx-3"),
    example("George Miles and Susan Clark opened a bakery together. He bakes the bread every "
            "morning.", "He", "George Miles", True, "Susan Clark", False, id="fx-4"),
    example("Emma Reid wrote to Oliver Grant after the match. Her brother said she was "
            "pleased.", "she", "Oliver Grant", False, "Emma Reid", False, id="fx-5"),
]


# -- the scorer --------------------------------------------------------------------------------


def _gold(e: GapExample) -> tuple[bool, bool]:
    return e.a_coref, e.b_coref


def _hand_built() -> tuple[list[GapExample], list[tuple[bool | None, bool | None]]]:
    m = "Adam Long met Ben Cole. He waved."
    f = "Cara Long met Dina Cole. She waved."
    examples = [
        example(m, "He", "Adam Long", True, "Ben Cole", False, id="m1"),
        example(m, "He", "Adam Long", False, "Ben Cole", True, id="m2"),
        example(m, "He", "Adam Long", False, "Ben Cole", True, id="m3"),
        example(m, "He", "Adam Long", False, "Ben Cole", False, id="m4"),  # Neither
        example(f, "She", "Cara Long", True, "Dina Cole", False, id="f1"),
        example(f, "She", "Cara Long", False, "Dina Cole", True, id="f2"),
        example(f, "She", "Cara Long", False, "Dina Cole", False, id="f3"),  # Neither
        example(f, "She", "Cara Long", True, "Dina Cole", False, id="f4"),
    ]
    predictions = [(True, False), (False, True), (True, False), (False, False),
                   (False, False), (False, True), (True, False), (None, False)]
    return examples, predictions


def test_scores_hand_counted_examples_as_gap_does() -> None:
    """Masculine: tp 2, fp 1, fn 1, tn 4 (P = R = F1 = 66.7). Feminine: tp 1, fp 1 (a
    Neither example given A), fn 2 (one missed, one missing decision), tn 4: P 50, R 33.3,
    F1 40. B = 40 / 66.7 = 0.6; overall tp 3, fp 2, fn 3, tn 8: F1 = 2*60*50/110."""
    examples, predictions = _hand_built()
    s = score(examples, predictions)
    assert (s.masculine.tp, s.masculine.fp, s.masculine.fn, s.masculine.tn) == (2, 1, 1, 4)
    assert (s.feminine.tp, s.feminine.fp, s.feminine.fn, s.feminine.tn) == (1, 1, 2, 4)
    assert (s.overall.tp, s.overall.fp, s.overall.fn, s.overall.tn) == (3, 2, 3, 8)
    assert s.masculine.precision == pytest.approx(200 / 3)
    assert s.masculine.recall == pytest.approx(200 / 3) and s.m == pytest.approx(200 / 3)
    assert (s.feminine.precision, s.feminine.recall) == pytest.approx((50.0, 100 / 3))
    assert s.f == pytest.approx(40.0)
    assert s.bias == pytest.approx(0.6)
    assert s.o == pytest.approx(2 * 60 * 50 / 110)
    assert (s.n, s.n_masculine, s.n_feminine) == (8, 4, 4)
    assert s.overall.total == 2 * s.n == s.masculine.total + s.feminine.total
    d = s.as_dict()
    assert (d["M"], d["F"], d["B"], d["O"]) == (s.m, s.f, s.bias, s.o)
    assert d["feminine"] == {"tp": 1, "fp": 1, "fn": 2, "tn": 4, "precision": 50.0,
                             "recall": pytest.approx(100 / 3), "f1": pytest.approx(40.0)}
    assert s.line() == "M 66.7  F 40.0  B 0.60  O 54.5  (n=8)"


def test_all_correct_scores_100_and_b_1() -> None:
    examples, _ = _hand_built()
    s = score(examples, [_gold(e) for e in examples])
    assert (s.m, s.f, s.o, s.bias) == (100.0, 100.0, 100.0, 1.0)
    assert (s.overall.fp, s.overall.fn) == (0, 0)
    assert s.overall.tp == sum(e.a_coref + e.b_coref for e in examples)


def test_neither_examples_count_only_through_false_positives() -> None:
    examples, _ = _hand_built()
    neither = [e for e in examples if not (e.a_coref or e.b_coref)]
    right = score(neither, [(False, False)] * len(neither))
    assert (right.overall.tn, right.overall.tp, right.overall.fp, right.overall.fn) == (4, 0, 0, 0)
    assert (right.o, right.bias) == (0.0, None)  # nothing positive: F1 0, B undefined
    wrong = score(neither, [(True, False)] * len(neither))
    assert (wrong.overall.fp, wrong.overall.tn) == (2, 2)
    assert wrong.overall.precision == 0.0 and wrong.overall.recall == 0.0


def test_a_missing_decision_is_a_false_negative_even_when_gold_is_false() -> None:
    e = example("Adam Long met Ben Cole. He waved.", "He", "Adam Long", False, "Ben Cole",
                False)
    s = score([e], [(None, None)])
    assert (s.overall.fn, s.overall.tn) == (2, 0)


def test_b_is_undefined_when_one_gender_has_no_f1() -> None:
    examples, _ = _hand_built()
    masculine = [e for e in examples if e.gender == "masculine"]
    s = score(masculine, [_gold(e) for e in masculine])
    assert (s.m, s.f, s.bias, s.n_feminine) == (100.0, 0.0, None, 0)
    assert "B -" in s.line()


@pytest.mark.parametrize(("predictions", "message"), [
    ([(True, False)], "1 predictions for 8 GAP examples"),
    ([(True, False)] * 7 + [(1, 0)], "prediction A for example f4 is 1, not a bool"),
    ([(True, False)] * 7 + [True], "prediction for example f4 is True, not a pair"),
])
def test_malformed_predictions_are_refused(predictions, message: str) -> None:
    examples, _ = _hand_built()
    with pytest.raises(DataError, match=message):
        score(examples, predictions)


def test_evaluate_scores_any_predictor_callable() -> None:
    """A resolver that scores the given candidate pairs plugs into the same scorer."""
    examples, predictions = _hand_built()
    seen = []

    def predict(batch):
        seen.append([e.id for e in batch])
        return predictions

    assert gap.evaluate(examples, predict) == score(examples, predictions)
    assert seen == [[e.id for e in examples]]


# -- predictions from clusters -----------------------------------------------------------------


def test_overlap_is_a_shared_character_touching_spans_do_not_overlap() -> None:
    assert overlaps((0, 5), (4, 9)) and overlaps((4, 9), (0, 5))
    assert overlaps((2, 3), (0, 10)) and overlaps((0, 10), (2, 3))
    assert not overlaps((0, 5), (5, 9)) and not overlaps((5, 9), (0, 5))
    assert not overlaps((0, 5), (7, 9))


def test_predict_from_clusters_edge_cases() -> None:
    text = "Maria Lopez met Tom Hardy. She gave him a map."
    e = example(text, "She", "Maria Lopez", True, "Tom Hardy", False)
    she, maria, tom = e.pronoun_span, e.a_span, e.b_span
    him = (text.index("him"), text.index("him") + 3)
    assert predict_from_clusters(e, []) == (False, False)
    assert predict_from_clusters(e, [[maria, she], [tom, him]]) == (True, False)
    assert predict_from_clusters(e, [[maria, him], [tom, she]]) == (False, True)
    # a mention of part of a name, and a pronoun mention wider than the pronoun, still count
    assert predict_from_clusters(e, [[(0, 5), (she[0], she[1] + 5)]]) == (True, False)
    # touching the name or the pronoun is not overlapping it
    assert predict_from_clusters(e, [[(maria[1], maria[1] + 4), she]]) == (False, False)
    assert predict_from_clusters(e, [[maria, (she[0] - 2, she[0])]]) == (False, False)
    # pronoun and name in different clusters are not linked
    assert predict_from_clusters(e, [[maria, tom], [she, him]]) == (False, False)
    # both names in the pronoun's cluster: both predicted
    assert predict_from_clusters(e, [[maria, tom, she]]) == (True, True)


def test_one_mention_covering_pronoun_and_name_does_not_link_them() -> None:
    text = "Ann Cole saw her sister Mary Cole. She smiled."
    e = example(text, "her", "Ann Cole", True, "Mary Cole", False)
    whole = (text.index("her sister"), text.index(".", text.index("Mary")))
    she = (text.index("She"), text.index("She") + 3)
    assert predict_from_clusters(e, [[whole, she]]) == (False, False)
    assert predict_from_clusters(e, [[e.a_span, e.pronoun_span], [whole, she]]) \
        == (True, False)


# -- the reader ---------------------------------------------------------------------------------


def test_reads_the_fixture_back(tmp_path: Path) -> None:
    path = write_gap(tmp_path / "fx.tsv", FIXTURE)
    assert read_gap(path) == FIXTURE
    assert [e.gender for e in FIXTURE] == ["feminine", "masculine", "feminine", "masculine",
                                           "feminine"]


def test_coref_labels_any_case_and_no_url_column(tmp_path: Path) -> None:
    e = FIXTURE[0]
    fields = tsv_row(e).split("\t")[:-1]
    fields[6], fields[9] = "True", "false"
    path = tmp_path / "g.tsv"
    path.write_text("\t".join(gap.REQUIRED) + "\n" + "\t".join(fields) + "\n", encoding="utf-8")
    (got,) = read_gap(path)
    assert (got.a_coref, got.b_coref, got.url) == (True, False, "")


def _edit(column: str, value: str):
    def edit(fields: list[str]) -> list[str]:
        fields[gap.COLUMNS.index(column)] = value
        return fields
    return edit


@pytest.mark.parametrize(("edit", "message"), [
    (_edit("A-offset", "12.5"), "row 2, column 'A-offset': offset '12.5' is not an integer "
                                "(ID fx-2)"),
    (_edit("Pronoun-offset", "-3"), "row 2, column 'Pronoun-offset': offset -3 is negative"),
    (_edit("B-offset", "0"), "row 2, column 'B-offset': the text at offset 0 is 'Peter "
                             "Wal', not 'Anna Berg' (ID fx-2)"),
    (_edit("Pronoun-offset", "9999"), "row 2, column 'Pronoun-offset': the text at offset "
                                      "9999 is '', not 'he'"),
    (_edit("A-coref", "yes"), "row 2, column 'A-coref': expected TRUE or FALSE, not 'yes' "
                              "(ID fx-2)"),
    (_edit("B-coref", ""), "row 2, column 'B-coref': expected TRUE or FALSE"),
    (_edit("A", ""), "row 2, column 'A': empty value (ID fx-2)"),
    (_edit("ID", "fx-1"), "row 2, column 'ID': ID 'fx-1' repeated (first in row 1)"),
    (_edit("ID", " "), "row 2, column 'ID': empty ID"),
])
def test_bad_rows_name_file_row_id_and_column(tmp_path: Path, edit, message: str) -> None:
    rows = [tsv_row(e).split("\t") for e in FIXTURE]
    rows[1] = edit(rows[1])
    path = tmp_path / "bad.tsv"
    path.write_text("\n".join([HEADER, *("\t".join(r) for r in rows)]) + "\n",
                    encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_gap(path)
    assert str(err.value).startswith(f"{path}, {message}")


def test_a_pronoun_that_is_not_he_or_she_names_the_row(tmp_path: Path) -> None:
    e = example("Sam Reed met Alex Hart. They talked.", "They", "Sam Reed", True, "Alex Hart",
                False, id="x-9")
    path = write_gap(tmp_path / "they.tsv", [FIXTURE[0], e])
    with pytest.raises(DataError, match=r"row 2, column 'Pronoun': pronoun 'They' is not a "
                                        r"masculine .* pronoun \(ID x-9\)"):
        read_gap(path)


@pytest.mark.parametrize(("content", "message"), [
    ("", "file is empty"),
    (HEADER + "\n", "the file holds no data rows"),
    (HEADER.replace("\tB-coref", "") + "\n", "column 'B-coref': missing required column"),
    (HEADER.replace("\tA-offset", "").replace("\tB-offset", "") + "\n",
     "missing required columns 'A-offset', 'B-offset'"),
    (HEADER.replace("\t", ",") + "\n", "expected tab-separated values"),
])
def test_unreadable_files_are_one_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "g.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message) as err:
        read_gap(path)
    assert str(err.value).startswith(str(path))


# -- published baselines and the report ---------------------------------------------------------


def test_published_baselines_are_gaps_test_set_numbers() -> None:
    got = {b.system: b.values for b in gap.read_published()}
    assert got == {"parallelism": {"M": 69.4, "F": 64.4, "B": 0.93, "O": 66.9},
                   "parallelism+url": {"M": 72.3, "F": 68.8, "B": 0.95, "O": 70.6}}
    assert gap.PUBLISHED == REPO / "published" / "gap.csv"
    for b in gap.read_published():
        assert b.table_id == "gap-test" and "test set" in b.source
        assert round(b.values["F"] / b.values["M"], 2) == b.values["B"]


def test_report_files_hold_scores_baselines_and_the_reading_of_b(tmp_path: Path) -> None:
    examples, predictions = _hand_built()
    data = write_gap(tmp_path / "hand.tsv", examples)
    result = score(examples, predictions)
    out = tmp_path / "report"
    paths = gap.write_report(result, out, "rules", data)
    assert paths == (out / "gap_scores.json", out / "gap_scores.md")
    assert sorted(p.name for p in out.iterdir()) == ["gap_scores.json", "gap_scores.md"]
    doc = json.loads(paths[0].read_text())
    assert doc["backend"] == "rules" and len(doc["data_sha256"]) == 64
    assert doc["scores"]["B"] == pytest.approx(0.6) and doc["scores"]["n"] == 8
    assert [p["system"] for p in doc["published_test_set"]] == ["parallelism",
                                                               "parallelism+url"]
    md = paths[1].read_text()
    assert "| rules | 66.7 | 66.7 | 66.7 | 50.0 | 33.3 | 40.0 | 60.0 | 50.0 | 54.5 | 0.60 | 8 |" \
        in md
    assert "## Published baselines (GAP test set)" in md
    assert "| parallelism | 69.4 | 64.4 | 0.93 | 66.9 |" in md
    assert "B = 0.60 is below 1" in md and "disproportionately from reviews about men" in md


def test_a_failed_report_leaves_the_earlier_one(tmp_path: Path) -> None:
    examples, predictions = _hand_built()
    out = tmp_path / "report"
    gap.write_report(score(examples, predictions), out, "rules", tmp_path / "x.tsv",
                     baselines=[])
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    broken = gap.Baseline("gap-test", "x", {"F": 1.0}, "src", "")  # fails while rendering
    with pytest.raises(KeyError):
        gap.write_report(score(examples, predictions[:-1] + [(True, True)]), out, "other",
                         tmp_path / "x.tsv", baselines=[broken])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_malformed_published_file_is_one_error(tmp_path: Path) -> None:
    bad = tmp_path / "published.csv"
    bad.write_text(",".join(gap.PUBLISHED_COLUMNS) + "\ngap,gap-test,x,M,abc,,src,\n")
    with pytest.raises(DataError, match=r"row 1, column 'value': 'abc' is not a number"):
        gap.read_published(bad)
    bad.write_text(",".join(gap.PUBLISHED_COLUMNS) + "\ngap,gap-test,x,M,1,,src,\n")
    with pytest.raises(DataError, match="x lacks F, B, O"):
        gap.read_published(bad)


# -- the command line ---------------------------------------------------------------------------


def _counts_add_up(doc: dict, n: int) -> None:
    s = doc["scores"]
    assert s["n"] == n == s["n_masculine"] + s["n_feminine"]
    for group in ("overall", "masculine", "feminine"):
        c = s[group]
        total = c["tp"] + c["fp"] + c["fn"] + c["tn"]
        assert total == 2 * (n if group == "overall" else s[f"n_{group}"]), group


def test_cli_evaluates_the_rule_backend_end_to_end(tmp_path: Path, capsys) -> None:
    data = write_gap(tmp_path / "fixture.tsv", FIXTURE)
    out = tmp_path / "out"
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "rules",
                 "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("GAP fixture.tsv [rules]: M ") and " B " in line and " O " in line
    assert len(line.splitlines()) == 1
    doc = json.loads((out / "gap_scores.json").read_text())
    _counts_add_up(doc, len(FIXTURE))
    assert doc["scores"]["O"] > 0  # plain sentences: the rules resolve some pronouns
    assert "| rules |" in (out / "gap_scores.md").read_text()
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "rules", "--limit",
                 "2", "--out", str(out)]) == 0
    _counts_add_up(json.loads((out / "gap_scores.json").read_text()), 2)


def test_cli_runs_the_fastcoref_backend_from_a_local_directory(tmp_path: Path, capsys) -> None:
    from fixtures.tiny_coref import tiny_fcoref

    model = tiny_fcoref(tmp_path / "fcoref")
    data = write_gap(tmp_path / "fixture.tsv", FIXTURE)
    out = tmp_path / "out"
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "fastcoref",
                 "--model", str(model), "--out", str(out)]) == 0
    assert "[fastcoref (" in capsys.readouterr().out
    _counts_add_up(json.loads((out / "gap_scores.json").read_text()), len(FIXTURE))


@pytest.mark.parametrize(("args", "message"), [
    (["--backend", "fastcoref"], "error: --backend fastcoref needs --model"),
    (["--backend", "rules", "--limit", "0"], "error: --limit must be positive, not 0"),
    (["--backend", "fastcoref", "--model", "nowhere"], "error: biasfinder.coref.model: "
                                                        "'nowhere' is not a local fastcoref"),
])
def test_cli_errors_are_one_line_and_exit_2(tmp_path: Path, capsys, args, message) -> None:
    data = write_gap(tmp_path / "fixture.tsv", FIXTURE)
    out = tmp_path / "out"
    assert main(["coref", "evaluate", "--gap", str(data), *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(message)
    assert not out.exists()


def test_cli_bad_gap_file_is_one_error_and_writes_nothing(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text(HEADER + "\n" + tsv_row(FIXTURE[0]).replace("\tTRUE\t", "\tmaybe\t", 1)
                   + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["coref", "evaluate", "--gap", str(bad), "--backend", "rules", "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"error: {bad}, row 1, column 'A-coref': expected TRUE or FALSE, not "
                   "'maybe' (ID fx-1)")
    assert not out.exists()


# -- real data ----------------------------------------------------------------------------------


def test_real_development_file_reads_cleanly() -> None:
    examples = read_gap(realdata("gap", "gap-development.tsv"))
    assert len(examples) == 2000 and len({e.id for e in examples}) == 2000
    assert sum(e.gender == "feminine" for e in examples) == 1000
    assert all(e.text[e.pronoun_offset:].startswith(e.pronoun) for e in examples)


def test_rule_backend_on_the_real_validation_file(tmp_path: Path, capsys) -> None:
    data = realdata("gap", "gap-validation.tsv")
    out = tmp_path / "val"
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "rules", "--out",
                 str(out)]) == 0
    doc = json.loads((out / "gap_scores.json").read_text())
    _counts_add_up(doc, 454)
    s = doc["scores"]
    assert (s["n_masculine"], s["n_feminine"]) == (227, 227)
    # a rule resolver: far from nothing, far from GAP's best systems (the published
    # parallelism baseline is 66.9 O on the test set)
    assert 40 <= s["O"] <= 80 and 40 <= s["M"] <= 85 and 35 <= s["F"] <= 85
    assert 0.7 <= s["B"] <= 1.3
    assert "GAP gap-validation.tsv [rules]: M " in capsys.readouterr().out
