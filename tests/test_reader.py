"""The one reader (biasrepro.io): every format problem a user's file can have, and the
regressions of the commands that read files their own way before."""

from __future__ import annotations

import gzip
import io
import json
import logging
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from fixtures.raw_data import IDENTITIES, civil_rows, write_biasfinder_tsv, write_civil_comments_csv

from biasrepro.cli import main
from biasrepro.data import civil_comments, imdb
from biasrepro.errors import DataError
from biasrepro.io import (
    check_fractions,
    labels,
    open_input,
    probabilities,
    read_table,
    truncate_texts,
)
from biasrepro.nlp.parse import read_corpus

CSV = "id,text,label\n1,Good film.,1\n2,\"Bad, sadly.\",0\n"
EXPECTED = {"id": ["1", "2"], "text": ["Good film.", "Bad, sadly."], "label": ["1", "0"]}
SETTINGS = {"split": {"train": 0.4, "validation": 0.3, "test": 0.3},
            "identity_threshold": 0.5, "toxicity_threshold": 0.5}


def as_lists(frame: pd.DataFrame) -> dict:
    return {c: [str(v) for v in frame[c]] for c in frame.columns}


def zipped(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


# -- formats that read the same as the clean file ------------------------------------------


@pytest.mark.parametrize(("name", "data"), [
    ("a.csv", CSV.encode()),
    ("a.csv", b"\xef\xbb\xbf" + CSV.encode()),                        # Excel "CSV UTF-8"
    ("a.csv", b"\xef\xbb\xbf" + CSV.replace("\n", "\r\n").encode()),  # ... on Windows
    ("a.csv", (CSV + "\n\n").encode()),                               # trailing blank lines
    ("a.csv", CSV.replace("\n", ",\n").encode()),                    # an empty last column
    ("a.tsv", CSV.replace(",", "\t").replace('"Bad\t sadly."', "Bad, sadly.").encode()),
    ("a.csv.gz", gzip.compress(CSV.encode())),
    ("a.tsv.gz", gzip.compress(CSV.replace(",", "\t").replace('"Bad\t sadly."',
                                                              "Bad, sadly.").encode())),
    ("a.txt", CSV.replace(",", "|").replace('"Bad| sadly."', "Bad, sadly.").encode()),
    ("a.json", json.dumps([{"id": 1, "text": "Good film.", "label": 1},
                           {"id": 2, "text": "Bad, sadly.", "label": 0}]).encode()),
    ("a.jsonl", b'{"id": 1, "text": "Good film.", "label": 1}\n\n'
                b'{"id": 2, "text": "Bad, sadly.", "label": 0}\n'),
])
def test_benign_variants_read_as_the_clean_file(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    frame = read_table(tmp_path / name, required=["id", "text", "label"])
    assert as_lists(frame) == EXPECTED


def test_zip_with_one_member_and_parquet_by_magic(tmp_path):
    zipped(tmp_path / "a.zip", {"inner/a.csv": CSV.encode()})
    assert as_lists(read_table(tmp_path / "a.zip")) == EXPECTED
    pd.DataFrame({"id": [1, 2], "text": EXPECTED["text"], "label": [1, 0]}).to_parquet(
        tmp_path / "misnamed.csv")
    assert as_lists(read_table(tmp_path / "misnamed.csv")) == EXPECTED


def test_fields_longer_than_the_csv_modules_limit(tmp_path):
    long = "word " * 40_000  # 200,000 characters > csv's default 131,072
    (tmp_path / "a.csv").write_text(f"id,text\n1,{long}\n", encoding="utf-8")
    assert read_table(tmp_path / "a.csv")["text"].iloc[0] == long


# -- problems: one DataError naming file, row and column -----------------------------------


@pytest.mark.parametrize(("name", "data", "row", "column", "match"), [
    ("a.csv", b"", None, None, "file is empty"),
    ("a.csv", b"id,text,label\n", None, None, "no data rows"),
    ("a.csv", b"id;text;label\n1;x;1\n", None, None, "looks semicolon-separated"),
    ("a.csv", "id,text\n1,caf\u00e9\n".encode("latin-1"), 1, "text", "Latin-1"),
    ("a.csv", "id,text\n1,x\n".encode("utf-16"), None, None, "UTF-16 text; save it as UTF-8"),
    ("a.csv", b"id,text\n1,x\x00y\n", 1, "text", "NUL character"),
    ("a.csv", b"id,text,id\n1,x,2\n", None, "id", "column name repeated"),
    ("a.csv", b"id,,label\n1,x,1\n", None, "field 2", "values but no name"),
    ("a.csv", b"id,text\n1,x\n2\n", 2, "text", "expected 2 comma-separated fields, found 1"),
    ("a.csv", b'id,text\n1,"x\n', 1, None, "malformed"),
    ("a.csv.gz", gzip.compress(CSV.encode())[:20], None, None, "truncated or corrupt"),
    ("a.json", b'[{"id": 1}, 3]', 2, None, "expected an object"),
    ("a.jsonl", b'{"id": 1}\n{"id": \n', 2, None, "not valid JSON"),
    ("a.xls", b"id,text\n", None, None, "unsupported file type '.xls'"),
])
def test_problems_are_one_error(tmp_path, name, data, row, column, match):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(DataError) as err:
        read_table(tmp_path / name)
    e = err.value
    assert (e.file, e.row, e.column) == (str(tmp_path / name), row, column)
    assert match in e.message and "\n" not in str(e)


def test_required_columns_are_listed_at_once(tmp_path):
    (tmp_path / "a.csv").write_text("body\nx\n")
    with pytest.raises(DataError, match=r"missing required columns 'id', 'text'; columns "
                       r"found: 'body'"):
        read_table(tmp_path / "a.csv", required=["id", "text"])


def test_archives_that_are_not_one_table(tmp_path):
    zipped(tmp_path / "two.zip", {"a.csv": b"x\n1\n", "b.csv": b"x\n1\n"})
    with pytest.raises(DataError, match="holds 2 files; name the table with --member"):
        read_table(tmp_path / "two.zip")
    assert as_lists(read_table(tmp_path / "two.zip", member="b.csv")) == {"x": ["1"]}
    zipped(tmp_path / "book.xlsx", {"[Content_Types].xml": b"", "xl/workbook.xml": b""})
    with pytest.raises(DataError, match="Excel workbook"):
        with open_input(tmp_path / "book.xlsx"):
            pass


# -- value policies --------------------------------------------------------------------------


def test_value_policies():
    values = pd.Series(["1", "0", "2"], index=[1, 2, 3])
    with pytest.raises(DataError, match=r"row 3, column 'label': label must be 0 or 1"):
        labels(values, file="f", column="label")
    with pytest.raises(DataError, match=r"row 2, column 'prob': value outside \[0, 1\]"):
        probabilities(pd.Series([0.5, None], index=[1, 2]), file="f", column="prob")
    frame = pd.DataFrame({"male": [0.2, None, None]})
    check_fractions(frame, ["male"])  # positional rows: missing allowed
    with pytest.raises(DataError, match=r"row 3, column 'male': identity value missing"):
        check_fractions(frame, ["male"], annotated=pd.Series([True, False, True]))


def test_texts_over_a_limit_are_truncated_with_a_count(caplog):
    with caplog.at_level(logging.WARNING):
        out = truncate_texts(pd.Series(["abcdef", "ab"]), 4, what="the limit")
    assert out.tolist() == ["abcd", "ab"]
    assert "1 text(s) longer than the limit (4 characters) truncated" in caplog.text


# -- regressions of the commands ------------------------------------------------------------


def test_read_corpus_bom_keeps_the_ids_and_labels(tmp_path):
    (tmp_path / "c.csv").write_bytes(b"\xef\xbb\xbfid,text,label\r\n7,Good.,1\r\n8,Bad.,0\r\n")
    assert read_corpus(tmp_path / "c.csv").to_dict("list") == {
        "id": ["7", "8"], "text": ["Good.", "Bad."], "label": [1, 0]}


def test_read_corpus_accepts_a_text_over_spacys_limit(tmp_path):
    long = "x" * 1_000_001
    pd.DataFrame({"text": [long, "short"]}).to_parquet(tmp_path / "c.parquet")
    assert read_corpus(tmp_path / "c.parquet")["text"].str.len().tolist() == [1_000_001, 5]


def test_parse_truncates_a_text_over_spacys_limit(caplog):
    import spacy

    from biasrepro.nlp.parse import parse_corpus

    class NoCoref:
        name = "none"

        def clusters(self, docs):
            return [[] for _ in docs]

    nlp = spacy.blank("en")
    nlp.max_length = 50
    frame = pd.DataFrame({"id": ["a"], "text": ["she said " * 20], "label": [1]})
    with caplog.at_level(logging.WARNING):
        (doc,) = parse_corpus(frame, nlp, NoCoref())
    assert len(doc.text) == 50
    assert "1 text(s) longer than spaCy's limit" in caplog.text


def test_prepare_imdb_bom_crlf_and_gzip_give_the_clean_result(tmp_path):
    (tmp_path / "clean").mkdir()
    clean = write_biasfinder_tsv(tmp_path / "clean")
    imdb.prepare(clean, fmt="tsv", out_dir=tmp_path / "a")
    messy = {}
    for split, path in clean.items():
        data = b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n")
        messy[split] = tmp_path / f"{split}.tsv.gz"
        messy[split].write_bytes(gzip.compress(data))
    imdb.prepare(messy, fmt="tsv", out_dir=tmp_path / "b")
    for name in ("train.parquet", "test.parquet"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "a" / name),
                                      pd.read_parquet(tmp_path / "b" / name))


def _cc(tmp_path: Path, rows: list[dict]) -> None:
    path = tmp_path / "all_data.csv"
    write_civil_comments_csv(path, rows=rows)
    civil_comments.prepare(path, fmt="csv", member=None, identities=IDENTITIES,
                           settings=SETTINGS, seed=1, out_dir=tmp_path / "out")


def test_cc_missing_identity_value_in_an_annotated_row_is_refused(tmp_path):
    rows = civil_rows()
    rows[5]["labels"]["jewish"] = ""  # written as an empty cell
    with pytest.raises(DataError, match=r"row 6, column 'jewish': identity value missing"):
        _cc(tmp_path, rows)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_cc_tiny_input_with_empty_splits_is_refused(tmp_path):
    with pytest.raises(DataError, match=r"leave the validation and test split\(s\) empty"):
        _cc(tmp_path, civil_rows()[:1])


def test_cli_evaluate_reads_csv_and_checks_values(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("label,prob\n1,0.9\n0,0.2\n")
    assert main(["evaluate", "--predictions", str(tmp_path / "p.csv"),
                 "--out", str(tmp_path / "m.json")]) == 0
    (tmp_path / "p.csv").write_text("label,prob\n1,0.9\n0,1.2\n")
    assert main(["evaluate", "--predictions", str(tmp_path / "p.csv"),
                 "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'p.csv'}, row 2, column 'prob': value outside [0, 1] "
                   "(got 1.2)"]
    assert json.loads((tmp_path / "m.json").read_text())["n"] == 2  # the earlier result


def test_open_input_strips_the_bom_only_once(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbf\xef\xbb\xbfx")
    with open_input(tmp_path / "a.txt") as f:
        assert f.read() == b"\xef\xbb\xbfx"
    assert io.BytesIO  # the module is used by the fuzz tests too


@pytest.mark.parametrize(("data", "row", "column", "match"), [
    (b"id,text,id\n1,x,2\n", None, "id", "column name repeated"),
    (b"id,text,label\n", None, None, "no data rows"),
    (b"id,text,label\n1,Good.,2\n2,Bad.,1\n", 1, "label", "label must be 0 or 1"),
])
def test_read_corpus_refuses_what_prepare_refuses(tmp_path, data, row, column, match):
    (tmp_path / "c.csv").write_bytes(data)
    with pytest.raises(DataError, match=match) as err:
        read_corpus(tmp_path / "c.csv")
    assert (err.value.file, err.value.row, err.value.column) == (str(tmp_path / "c.csv"), row,
                                                                  column)


def test_comment_lines_are_skipped_and_not_counted(tmp_path):
    (tmp_path / "w.csv").write_text("# a list\nword,gender\n  # note\nhe,male\nshe,\n")
    frame = read_table(tmp_path / "w.csv", comment="#")
    assert as_lists(frame) == {"word": ["he", "she"], "gender": ["male", ""]}
    assert frame.index.tolist() == [1, 2]


def test_a_pandas_index_column_is_dropped(tmp_path):
    pd.DataFrame({"id": ["a"], "text": ["x"]}).to_csv(tmp_path / "a.csv")  # ",id,text"
    assert as_lists(read_table(tmp_path / "a.csv")) == {"id": ["a"], "text": ["x"]}


def test_read_text_names_the_line_of_a_bad_byte(tmp_path):
    from biasrepro.io import read_text

    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfone\r\ntw\xe9\n")
    with pytest.raises(DataError, match=r"a\.txt, row 2: not valid UTF-8") as err:
        read_text(tmp_path / "a.txt")
    assert err.value.row == 2
    (tmp_path / "a.txt").write_bytes(gzip.compress(b"\xef\xbb\xbfone\n"))
    assert read_text(tmp_path / "a.txt") == "one\n"


def test_a_step_can_read_back_its_temporary_output(tmp_path):
    from biasrepro.io import atomic_outputs

    with atomic_outputs(tmp_path / "a.csv.gz") as (tmp,):
        tmp.write_bytes(gzip.compress(CSV.encode()))
        assert as_lists(read_table(tmp)) == EXPECTED
    assert as_lists(read_table(tmp_path / "a.csv.gz")) == EXPECTED


def test_config_file_problems_are_one_line_naming_the_file(tmp_path):
    from biasrepro import config
    from biasrepro.errors import ConfigError

    path = tmp_path / "c.yaml"
    path.write_bytes(b"seed: [1\n")
    with pytest.raises(ConfigError, match=rf"{path}, line 2, column 1: not valid YAML") as e:
        config.load(path)
    assert "\n" not in str(e.value)
    path.write_bytes("seed: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=rf"{path}, row 1: not valid UTF-8"):
        config.load(path)


def test_dictionary_encoded_parquet_columns_read_as_plain_values(tmp_path):
    from biasrepro.io import read_parquet

    frame = pd.DataFrame({"id": ["a", "b", "a2"], "text": ["x", "y", "z"], "label": [1, 0, 1]})
    frame.astype({"id": "category", "text": "category"}).to_parquet(tmp_path / "c.parquet")
    frame.to_parquet(tmp_path / "p.parquet")
    read = read_parquet(tmp_path / "c.parquet")
    assert not any(isinstance(t, pd.CategoricalDtype) for t in read.dtypes)
    pd.testing.assert_frame_equal(read, read_parquet(tmp_path / "p.parquet"))


def test_parquet_batches_name_the_file_when_it_breaks(tmp_path: Path) -> None:
    """A reader that keeps one batch at a time gets the batches, and one DataError naming the
    file for a missing column, a file that is not Parquet, or one cut short."""
    from biasrepro.io import iter_parquet_batches, write_parquet

    good = tmp_path / "pairs.parquet"
    write_parquet(pd.DataFrame({"a": range(10), "b": list("abcdefghij")}), good)
    batches = list(iter_parquet_batches(good, columns=["b"], batch_rows=4))
    assert [len(b) for b in batches] == [4, 4, 2] and batches[0].schema.names == ["b"]
    with pytest.raises(DataError, match=f"{good}, column 'c': missing"):
        list(iter_parquet_batches(good, columns=["c"], batch_rows=4))
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[:-30])
    renamed = tmp_path / "csv.parquet"
    renamed.write_text("a,b\n1,x\n")
    for bad in (cut, renamed):
        with pytest.raises(DataError, match=f"{bad}: not a readable BTC pair file"):
            list(iter_parquet_batches(bad, columns=["a"], batch_rows=4, what="BTC pair file"))
