"""Bad input: one DataError naming file, row and column; nothing written.

Each case starts from a good fixture in the real layout, breaks one thing, and checks the
error's file, row, column and message, and that the output directory holds no file.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from fixtures.raw_data import (
    IDENTITIES,
    civil_rows,
    write_aclimdb_tar,
    write_biasfinder_tsv,
    write_civil_comments_csv,
    write_hf_parquet,
    write_sst_csv,
    write_tar_gz,
    zip_member,
)

from biasrepro.data import civil_comments, imdb, sst
from biasrepro.errors import DataError

SETTINGS = {"split": {"train": 0.4, "validation": 0.3, "test": 0.3},
            "identity_threshold": 0.5, "toxicity_threshold": 0.5}


def assert_refused(call: Callable[[Path], None], out: Path, *, file: Path | str,
                   row: int | str | None, column: str | None, match: str) -> None:
    """``call(out)`` raises one single-line DataError located as given, and writes nothing."""
    with pytest.raises(DataError) as err:
        call(out)
    e = err.value
    assert e.file == str(file)
    assert (e.row, e.column) == (row, column)
    assert match in e.message, e.message
    assert "\n" not in str(e)
    assert not out.exists() or [p for p in out.rglob("*") if p.is_file()] == []


def replace_bytes(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1, old
    path.write_bytes(data.replace(old, new))


def cut_in_half(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


# -- IMDB ------------------------------------------------------------------------------------


@pytest.fixture
def tsv(tmp_path) -> dict[str, Path]:
    (tmp_path / "raw").mkdir()
    return write_biasfinder_tsv(tmp_path / "raw")


def prepare_tsv(paths: dict[str, Path]) -> Callable[[Path], None]:
    return lambda out: imdb.prepare(paths, fmt="tsv", out_dir=out)


def prepare_tar(path: Path) -> Callable[[Path], None]:
    return lambda out: imdb.prepare(path, fmt="aclimdb_tar", out_dir=out)


def test_imdb_empty_file(tsv, tmp_path):
    tsv["train"].write_bytes(b"")
    assert_refused(prepare_tsv(tsv), tmp_path / "out", file=tsv["train"], row=None,
                   column=None, match="file is empty")


def test_imdb_empty_archive(tmp_path):
    tar = tmp_path / "aclImdb_v1.tar.gz"
    tar.write_bytes(b"")
    assert_refused(prepare_tar(tar), tmp_path / "out", file=tar, row=None, column=None,
                   match="file is empty")


def test_imdb_missing_column(tmp_path):
    (tmp_path / "raw").mkdir()
    paths = write_hf_parquet(tmp_path / "raw")
    pd.read_parquet(paths["test"]).drop(columns="label").to_parquet(paths["test"])
    assert_refused(lambda out: imdb.prepare(paths, fmt="hf_parquet", out_dir=out),
                   tmp_path / "out", file=paths["test"], row=None, column="label",
                   match="missing required column; columns found: 'text'")


def test_imdb_non_utf8_bytes(tsv, tmp_path):
    replace_bytes(tsv["train"], b"weaker", b"weak\xe9r")
    assert_refused(prepare_tsv(tsv), tmp_path / "out", file=tsv["train"], row=3,
                   column="text", match="not valid UTF-8")


def test_imdb_non_utf8_archive_member(tmp_path):
    tar = write_aclimdb_tar(tmp_path / "a.tar.gz",
                            extra={"aclImdb/test/neg/99_1.txt": b"Caf\xe9 scene."})
    assert_refused(prepare_tar(tar), tmp_path / "out", file=tar,
                   row="aclImdb/test/neg/99_1.txt", column="text", match="not valid UTF-8")


def test_imdb_empty_text(tsv, tmp_path):
    lines = tsv["test"].read_text().splitlines()
    lines[1] = "0\t"
    tsv["test"].write_text("\n".join(lines) + "\n")
    assert_refused(prepare_tsv(tsv), tmp_path / "out", file=tsv["test"], row=2,
                   column="text", match="text is empty")


def test_imdb_null_text_in_parquet(tmp_path):
    (tmp_path / "raw").mkdir()
    paths = write_hf_parquet(tmp_path / "raw")
    df = pd.read_parquet(paths["train"])
    df.loc[2, "text"] = None
    df.to_parquet(paths["train"])
    assert_refused(lambda out: imdb.prepare(paths, fmt="hf_parquet", out_dir=out),
                   tmp_path / "out", file=paths["train"], row=3, column="text",
                   match="text is empty")


def test_imdb_label_outside_the_allowed_set(tsv, tmp_path):
    lines = tsv["train"].read_text().splitlines()
    lines[3] = "2" + lines[3][1:]
    tsv["train"].write_text("\n".join(lines) + "\n")
    assert_refused(prepare_tsv(tsv), tmp_path / "out", file=tsv["train"], row=4,
                   column="label", match="label must be 0 or 1 (got '2')")


def test_imdb_unsupervised_label_in_parquet(tmp_path):
    (tmp_path / "raw").mkdir()
    paths = write_hf_parquet(tmp_path / "raw")
    df = pd.read_parquet(paths["test"])
    df.loc[1, "label"] = -1  # the HF "unsupervised" split's label
    df.to_parquet(paths["test"])
    assert_refused(lambda out: imdb.prepare(paths, fmt="hf_parquet", out_dir=out),
                   tmp_path / "out", file=paths["test"], row=2, column="label",
                   match="label must be 0 or 1")


def test_imdb_wrong_delimiter(tsv, tmp_path):
    pd.read_csv(tsv["train"], sep="\t", header=None).to_csv(tsv["train"], header=False,
                                                             index=False)
    assert_refused(prepare_tsv(tsv), tmp_path / "out", file=tsv["train"], row=1, column=None,
                   match="expected tab-separated values, but this row looks comma-separated")


def test_imdb_truncated_archive(tmp_path):
    rng = random.Random(0)  # text that does not compress away, so the cut lands mid-stream
    long_reviews = {f"aclImdb/train/pos/{i}_8.txt": "".join(
        rng.choices(string.ascii_letters + " ", k=4000)).encode() for i in range(100, 140)}
    tar = write_aclimdb_tar(tmp_path / "a.tar.gz", extra=long_reviews)
    cut_in_half(tar)
    with pytest.raises(DataError, match="truncated or corrupt tar.gz archive") as err:
        imdb.prepare(tar, fmt="aclimdb_tar", out_dir=tmp_path / "out")
    assert err.value.file == str(tar)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_imdb_duplicate_ids(tmp_path):
    tar = tmp_path / "a.tar.gz"
    review = ("aclImdb/train/pos/3_8.txt", b"Good fun.")
    write_tar_gz(tar, [review, ("aclImdb/test/neg/1_2.txt", b"Bad."), review])
    assert_refused(prepare_tar(tar), tmp_path / "out", file=tar,
                   row="aclImdb/train/pos/3_8.txt", column="id", match="duplicate id")


def test_imdb_failure_leaves_an_earlier_runs_outputs_untouched(tsv, tmp_path):
    out = tmp_path / "out"
    imdb.prepare(tsv, fmt="tsv", out_dir=out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    tsv["test"].write_bytes(b"")
    with pytest.raises(DataError):
        imdb.prepare(tsv, fmt="tsv", out_dir=out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_cli_prepare_imdb_bad_file_is_one_error_line(tsv, tmp_path):
    lines = tsv["train"].read_text().splitlines()
    lines[1] = "neg" + lines[1][1:]
    tsv["train"].write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "biasrepro", "prepare", "imdb", "--format", "tsv",
         "--input", f"train={tsv['train']}", f"test={tsv['test']}", "--out-dir", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {tsv['train']}, row 2, column 'label': not a number (got 'neg')"
    ]
    assert not out.exists() or list(out.iterdir()) == []


# -- Civil Comments ------------------------------------------------------------------------


def prepare_cc(path: Path, fmt: str = "csv",
               member: str | None = None) -> Callable[[Path], None]:
    return lambda out: civil_comments.prepare(path, fmt=fmt, member=member,
                                              identities=IDENTITIES, settings=SETTINGS,
                                              seed=1, out_dir=out)


def cc_csv(tmp_path: Path, edit: Callable[[list[dict]], None] | None = None) -> Path:
    rows = civil_rows()
    if edit:
        edit(rows)
    path = tmp_path / "all_data.csv"
    write_civil_comments_csv(path, rows=rows)
    return path


def test_cc_empty_file(tmp_path):
    path = tmp_path / "all_data.csv"
    path.write_bytes(b"")
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=None, column=None,
                   match="file is empty")


def test_cc_missing_column(tmp_path):
    path = cc_csv(tmp_path)
    pd.read_csv(path).drop(columns="toxicity").to_csv(path, index=False)
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=None, column="toxicity",
                   match="missing required column; columns found: 'id', 'comment_text'")


def test_cc_missing_identity_column(tmp_path):
    path = cc_csv(tmp_path)
    pd.read_csv(path).drop(columns="muslim").to_csv(path, index=False)
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=None, column="muslim",
                   match="missing required column")


def test_cc_non_utf8_bytes(tmp_path):
    path = cc_csv(tmp_path, lambda rows: rows[4].update(comment_text="Caf-BAD-bytes here."))
    replace_bytes(path, b"-BAD-", b"\xe9")
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=5, column="comment_text",
                   match="not valid UTF-8")


def test_cc_empty_text(tmp_path):
    path = cc_csv(tmp_path, lambda rows: rows[3].update(comment_text=""))
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=4, column="comment_text",
                   match="text is empty")


@pytest.mark.parametrize(("value", "match"), [(1.5, "value outside [0, 1] (got 1.5)"),
                                              ("high", "not a number (got 'high')")])
def test_cc_toxicity_outside_the_allowed_range(tmp_path, value, match):
    path = cc_csv(tmp_path, lambda rows: rows[9].update(toxicity=value))
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=10, column="toxicity",
                   match=match)


def test_cc_identity_outside_the_allowed_range(tmp_path):
    path = cc_csv(tmp_path, lambda rows: rows[0]["labels"].update(male=2.0))
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=1, column="male",
                   match="value outside [0, 1]")


def test_cc_wrong_delimiter(tmp_path):
    path = cc_csv(tmp_path)
    pd.read_csv(path).to_csv(path, sep=";", index=False)
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=None, column=None,
                   match="expected comma-separated values, but the header looks "
                         "semicolon-separated")


def test_cc_ragged_row(tmp_path):
    path = cc_csv(tmp_path, lambda rows: rows[6].update(comment_text="UNQUOTED"))
    replace_bytes(path, b"UNQUOTED", b"one,two")
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=7, column=None,
                   match="expected 46 comma-separated fields, found 47")


def test_cc_truncated_zip(tmp_path):
    archive = zip_member(cc_csv(tmp_path), tmp_path / "cc.zip", "civil_comments.csv")
    cut_in_half(archive)
    assert_refused(prepare_cc(archive, "zip", "civil_comments.csv"), tmp_path / "out",
                   file=archive, row=None, column=None, match="truncated or corrupt zip")


def test_cc_zip_without_the_member(tmp_path):
    archive = zip_member(cc_csv(tmp_path), tmp_path / "cc.zip", "other.csv")
    assert_refused(prepare_cc(archive, "zip", "civil_comments.csv"), tmp_path / "out",
                   file=archive, row=None, column=None,
                   match="no member 'civil_comments.csv'; members: other.csv")


def test_cc_duplicate_ids(tmp_path):
    path = cc_csv(tmp_path, lambda rows: rows[20].update(id=rows[2]["id"]))
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=21, column="id",
                   match="duplicate id '1002' (first seen at row 3)")


def test_cc_no_row_with_human_identity_labels(tmp_path):
    def unannotated(rows):
        for r in rows:
            r["annotators"] = 0

    path = cc_csv(tmp_path, unannotated)
    assert_refused(prepare_cc(path), tmp_path / "out", file=path, row=None, column=None,
                   match="no row has human identity labels (rule: identity_annotator_count > 0)")


def test_cc_failure_inside_a_zip_names_the_member(tmp_path):
    path = cc_csv(tmp_path, lambda rows: rows[3].update(comment_text=""))
    archive = zip_member(path, tmp_path / "cc.zip", "civil_comments.csv")
    assert_refused(prepare_cc(archive, "zip", "civil_comments.csv"), tmp_path / "out",
                   file=f"{archive}:civil_comments.csv", row=4, column="comment_text",
                   match="text is empty")


def test_cc_failure_leaves_an_earlier_runs_outputs_untouched(tmp_path):
    out = tmp_path / "out"
    path = cc_csv(tmp_path)
    prepare_cc(path)(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    path.write_bytes(b"")
    with pytest.raises(DataError):
        prepare_cc(path)(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


# -- SST -----------------------------------------------------------------------------------


@pytest.fixture
def sst_csv(tmp_path) -> Path:
    path = tmp_path / "SST_fairness_dataset.csv"
    write_sst_csv(path)
    return path


def prepare_sst(path: Path) -> Callable[[Path], None]:
    return lambda out: sst.prepare(path, out_dir=out)


def test_sst_empty_file(sst_csv, tmp_path):
    sst_csv.write_bytes(b"")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=None,
                   column=None, match="file is empty")


def test_sst_missing_column(sst_csv, tmp_path):
    replace_bytes(sst_csv, b",gender,", b",sex,")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=None,
                   column="gender", match="missing required column; columns found: '', "
                                          "'annotation_index'")


def test_sst_non_utf8_bytes(sst_csv, tmp_path):
    replace_bytes(sst_csv, b"He mumbles", b"He mumbl\xe9s")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=2,
                   column="sentence", match="not valid UTF-8")


def test_sst_empty_sentence(sst_csv, tmp_path):
    replace_bytes(sst_csv, b"The man in the lead is wooden .", b"")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=9,
                   column="sentence", match="text is empty")


def test_sst_gender_outside_the_allowed_set(sst_csv, tmp_path):
    replace_bytes(sst_csv, b"wooden .,0.1,masc", b"wooden .,0.1,neutral")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=9,
                   column="gender", match="gender must be masc or femm (got 'neutral')")


def test_sst_sentiment_outside_the_allowed_range(sst_csv, tmp_path):
    replace_bytes(sst_csv, b"every scene .,0.2,", b"every scene .,1.3,")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=2,
                   column="label", match="value outside [0, 1]")


def test_sst_wrong_delimiter(sst_csv, tmp_path):
    sst_csv.write_text(sst_csv.read_text().replace(",", ";"))
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=None,
                   column=None, match="expected comma-separated values, but the header "
                                      "looks semicolon-separated")


def test_sst_duplicate_ids(sst_csv, tmp_path):
    replace_bytes(sst_csv, b"13,12,600,", b"5,12,600,")
    assert_refused(prepare_sst(sst_csv), tmp_path / "out", file=sst_csv, row=9,
                   column="(unnamed index)", match="duplicate id '5' (first seen at row 5)")


def test_sst_failure_leaves_an_earlier_runs_outputs_untouched(sst_csv, tmp_path):
    out = tmp_path / "out"
    sst.prepare(sst_csv, out_dir=out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    replace_bytes(sst_csv, b"wooden .,0.1,masc", b"wooden .,0.1,neutral")
    with pytest.raises(DataError):
        sst.prepare(sst_csv, out_dir=out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


# -- biasfinder btc and table, predict's inline settings (found by fuzzing) --------------------


def cli_error(argv: list[str], capsys) -> str:
    """Run the command line in-process: exit 2 and one ``error:`` line, returned."""
    from biasrepro.cli import main

    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture
def btc_inputs(tmp_path: Path) -> dict[str, Path]:
    """A gender templates table, its mutants and predictions of them, and the btc argv."""
    from biasrepro.cli import main

    paths = {k: tmp_path / f"{k}.parquet" for k in ("templates", "mutants", "predictions")}
    pd.DataFrame({
        "template_id": ["gender-00000"], "characteristic": ["gender"], "doc_id": ["00000"],
        "label": [1], "original": ["Ann plays a teacher, and she is superb."],
        "template": ["<Name> plays a teacher, and <pro-subj> is superb."],
        "original_class": ["female"], "placeholders": ["name,pro-subj"],
    }).to_parquet(paths["templates"])
    (tmp_path / "names.csv").write_text("gender,name\nmale,Tom\nfemale,Eve\n")
    assert main(["biasfinder", "mutants", "--templates", str(paths["templates"]), "--names",
                 str(tmp_path / "names.csv"), "--out", str(paths["mutants"])]) == 0
    mutants = pd.read_parquet(paths["mutants"])
    pd.DataFrame({"id": mutants["id"], "label": mutants["label"], "prob": [0.9, 0.1],
                  "pred": [1, 0]}).to_parquet(paths["predictions"])
    paths["argv"] = ["biasfinder", "btc", *(a for k in ("templates", "mutants", "predictions")
                                            for a in (f"--{k}", str(paths[k]))),
                     "--out-pairs", str(tmp_path / "out" / "p.parquet"), "--out-counts",
                     str(tmp_path / "out" / "c.parquet"), "--out-summary",
                     str(tmp_path / "out" / "s.json")]
    return paths


def test_btc_empty_templates_table_is_named(btc_inputs, capsys):
    pd.read_parquet(btc_inputs["templates"]).iloc[:0].to_parquet(btc_inputs["templates"])
    line = cli_error(btc_inputs["argv"], capsys)
    assert line.startswith(f"error: {btc_inputs['templates']}, column 'template_id': template "
                           "'gender-00000' is not in the templates table")


def test_btc_missing_mutant_id_is_named(btc_inputs, capsys):
    mutants = pd.read_parquet(btc_inputs["mutants"])
    mutants.loc[0, "id"] = None
    mutants.to_parquet(btc_inputs["mutants"])
    line = cli_error(btc_inputs["argv"], capsys)
    assert line == f"error: {btc_inputs['mutants']}, row 1, column 'id': missing"


def test_btc_probability_shown_as_written(btc_inputs, capsys):
    predictions = pd.read_parquet(btc_inputs["predictions"])
    predictions.loc[1, "prob"] = float("nan")
    predictions.to_parquet(btc_inputs["predictions"])
    line = cli_error(btc_inputs["argv"], capsys)
    assert line == (f"error: {btc_inputs['predictions']}, row 2, column 'prob': probability "
                    "outside [0, 1] (nan)")


@pytest.mark.parametrize(("value", "match"), [
    (float("nan"), "'btc' is not a count (a non-negative integer) (got nan)"),
    ("3", "'btc' is not a count (a non-negative integer) (got '3')"),
    (-1, "'btc' is not a count"),
    (True, "'btc' is not a count"),
])
def test_table_summary_count_that_is_not_a_count(tmp_path, capsys, value, match):
    from biasrepro.biasfinder.btc import TABLE_COLUMNS

    row = dict.fromkeys(TABLE_COLUMNS, 0) | {
        "model": "m", "method": "baseline", "threshold": 0.5, "lists": "project",
        "occupation_templates": "each_distinct", "characteristic": "gender", "classes": 2,
        "btc_rate": None, "aligned_btc_rate": None, "btc": value}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"gender": row}))
    line = cli_error(["biasfinder", "table", "--inputs", str(path), "--out-json",
                      str(tmp_path / "out" / "t.json"), "--out-md", str(tmp_path / "out" / "t.md"),
                      "--out-csv", str(tmp_path / "out" / "t.csv")], capsys)
    assert line.startswith(f"error: {path}, column 'gender': summary row's ") and match in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("entry", "match"), [
    ({"source": "local", "architecture": "bert"}, "'models.registry.tiny.path': missing"),
    ({"source": "local", "path": 5, "architecture": "bert"}, "5 is not of type 'string'"),
    ("local", "'models.registry.tiny': 'local' is not of type 'object'"),
])
def test_predict_inline_registry_entry_is_checked(tmp_path, capsys, entry, match):
    """An inline ``--settings`` registry is checked as a config file's is (a KeyError before)."""
    pd.DataFrame({"text": ["fine"]}).to_parquet(tmp_path / "in.parquet")
    line = cli_error(["predict", "--model", "tiny", "--input", str(tmp_path / "in.parquet"),
                      "--out", str(tmp_path / "out.parquet"), "--settings",
                      json.dumps({"models.registry": {"tiny": entry}})], capsys)
    assert line.startswith("error: --settings: config key ") and match in line
    assert not (tmp_path / "out.parquet").exists()
