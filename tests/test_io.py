"""Atomic outputs: all-or-nothing; on failure temporaries go and earlier outputs stay."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from biasrepro.io import atomic_outputs, dumps_json, write_json, write_parquet


def test_outputs_appear_only_when_the_block_succeeds(tmp_path: Path) -> None:
    a, b = tmp_path / "sub" / "a.json", tmp_path / "sub" / "b.parquet"
    with atomic_outputs(a, b) as (ta, tb):
        write_json({"x": 1}, ta)
        assert not a.exists()
        write_parquet(pd.DataFrame({"v": [1, 2]}), tb)
    assert a.read_text() == '{\n  "x": 1\n}\n'
    assert pd.read_parquet(b)["v"].tolist() == [1, 2]
    assert sorted(p.name for p in a.parent.iterdir()) == ["a.json", "b.parquet"]


def test_failure_leaves_no_new_output_and_an_earlier_one_untouched(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    b.write_text("from an earlier run")
    with pytest.raises(ValueError), atomic_outputs(a, b) as (ta, _):
        write_json({"x": 1}, ta)
        raise ValueError("boom")
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]
    assert b.read_text() == "from an earlier run"


def test_an_output_the_step_forgot_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="without writing"), atomic_outputs(
        tmp_path / "a.json", tmp_path / "b.json"
    ) as (ta, _):
        write_json({}, ta)
    assert list(tmp_path.iterdir()) == []


def test_temporaries_of_a_killed_run_are_cleared(tmp_path: Path) -> None:
    (tmp_path / ".tmp-99999.a.json").write_text("half")
    with atomic_outputs(tmp_path / "a.json") as (ta,):
        write_json([1], ta)
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_json_is_canonical_and_nan_free() -> None:
    text = dumps_json({"b": float("nan"), "a": [1.5]})
    assert text == '{\n  "a": [\n    1.5\n  ],\n  "b": null\n}\n'


def test_parquet_bytes_are_reproducible(tmp_path: Path) -> None:
    df = pd.DataFrame({"t": ["x", "y"], "n": [1, 2]})
    write_parquet(df, tmp_path / "1.parquet")
    write_parquet(df, tmp_path / "2.parquet")
    assert (tmp_path / "1.parquet").read_bytes() == (tmp_path / "2.parquet").read_bytes()


@pytest.mark.parametrize("damage", ["no pandas_type", "bad numpy type"])
def test_damaged_pandas_metadata_is_one_error_naming_the_file(tmp_path, damage) -> None:
    """A Parquet file whose data is fine but whose pandas metadata (a JSON document in its
    footer) is damaged is refused with a DataError naming it, by both whole-file readers."""
    import json as _json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from biasrepro import io as brio
    from biasrepro.errors import DataError

    table = pa.Table.from_pandas(pd.DataFrame({"id": ["a", "b"], "n": [1, 2]}),
                                 preserve_index=False)
    meta = _json.loads(table.schema.metadata[b"pandas"])
    column = next(c for c in meta["columns"] if c["name"] == "n")
    if damage == "no pandas_type":
        del column["pandas_type"]
    else:
        column["numpy_type"] = "i\x7ft8"
    path = tmp_path / "damaged.parquet"
    pq.write_table(table.replace_schema_metadata({b"pandas": _json.dumps(meta).encode()}),
                   path)
    assert pq.read_table(path).num_rows == 2  # the data itself reads
    with pytest.raises(DataError, match="damaged.parquet.*pandas metadata is damaged"):
        brio.read_parquet(path)
    with pytest.raises(DataError, match="damaged.parquet.*pandas metadata is damaged"):
        brio.read_parquet_rows(path, key="id", values=["a"], columns=["id", "n"])


@pytest.mark.parametrize(("cell", "said"), [
    (["She was fine."], "a list of 1 item: ['She was fine.']"),
    (["a", "b"], "a list of 2 items: ['a', 'b']"),
    ({"t": "x"}, "a mapping with keys ['t']"),
    (7, "7"),
])
def test_text_that_is_no_string_says_what_it_is(cell: object, said: str) -> None:
    """A Parquet list column reaches pandas as numpy arrays: named as a list, not a
    traceback, not a bare string that hides it was a list."""
    import numpy as np

    from biasrepro.errors import DataError
    from biasrepro.io import check_text

    value = np.array(cell, dtype=object) if isinstance(cell, list) else cell
    values = pd.Series([value, "fine"], index=[1, 2], dtype=object)
    with pytest.raises(DataError, match=r"row 1, column 'text': text is not a string") as e:
        check_text(values, file="f.parquet", column="text")
    assert str(e.value).endswith(f"(got {said})")


def test_an_input_that_is_no_regular_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    import os

    from biasrepro.errors import DataError
    from biasrepro.io import require_file

    with pytest.raises(DataError, match="input file not found"):
        require_file(tmp_path / "missing.csv")
    with pytest.raises(DataError, match="input is a directory, not a file"):
        require_file(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file .a pipe"):
        require_file(fifo)


def test_a_review_starting_with_a_quote_says_how_to_write_the_file(tmp_path: Path) -> None:
    from biasrepro.errors import DataError
    from biasrepro.io import read_table

    path = tmp_path / "r.tsv"
    path.write_text('label\ttext\n1\t"Titanic" is long\n')
    with pytest.raises(DataError, match=r"row 1: malformed delimited text .*quote such "
                                        r"fields as CSV writers do, or save the file as "
                                        r"Parquet"):
        read_table(path, required=["label", "text"])
    path.write_text('label\ttext\n1\t"""Titanic"" is long"\n')
    assert read_table(path, required=["label", "text"])["text"].tolist() == [
        '"Titanic" is long']
