"""Property-based fuzzing of the commands that read Parquet, JSON and word-list files, and of
``predict``'s inline ``--settings`` JSON, driven in-process as in tests/test_fuzz_inputs.py:
``fairness report`` (both fairness sets, the predictions, the training data), ``predict``
(a Parquet input), ``biasfinder btc`` (templates, mutants, predictions), ``biasfinder
audit`` (templates), ``biasfinder table`` (the summary JSONs) and ``biasfinder
import-lists`` (BiasFinder's six lists and the pronoun table).

Parquet inputs are mutated as tables (a column cast to text, float, int, bool or lists; a
column dropped, repeated or renamed; rows repeated, dropped or shuffled; NaN, infinity,
null, empty or NUL cells; no rows) and as files (truncated, a flipped byte, not Parquet at
all, a CSV or gzip file named ``.parquet``); benign rewrites (other compression, one row per
row group, large strings, dictionary-encoded text, reordered or extra columns, a pandas
index) must give the clean file's outputs byte for byte. JSON files and the inline settings
also get wrong-typed values, dropped and unknown keys. The invariant is the other module's:
exit 0, or exit 2 with one ``error:`` line naming the mutated file (an input it is checked
against, where ids or values no longer match; ``--settings``) and an earlier run's outputs
left as they were; never a traceback. 200 seeded examples per command (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO
from hypothesis import assume, given
from hypothesis import strategies as st
from test_fuzz_inputs import BENIGN, HARMFUL, _outputs, _run, _tiny_model
from test_fuzz_inputs import mutations as byte_mutations

from biasrepro.cli import main

# -- Parquet mutations ----------------------------------------------------------------------


@dataclass
class _Table:
    """A table on its way to a Parquet file: the frame, then how it is written."""

    frame: pd.DataFrame
    rename: dict[str, str] = field(default_factory=dict)  # column -> name in the file
    index: bool = False
    compression: str = "zstd"
    row_group_size: int | None = None
    large_string: bool = False


def _column(t: _Table, f: float, kinds: str = "") -> str | None:
    """The column ``f`` picks (among those of dtype kind in ``kinds``, when given)."""
    names = [c for c in t.frame.columns if not kinds or t.frame[c].dtype.kind in kinds]
    return names[min(len(names) - 1, int(f * len(names)))] if names else None


def _row(t: _Table, f: float) -> int:
    return min(len(t.frame) - 1, int(f * len(t.frame)))


def _set_cell(value: object, kinds: str = "") -> Callable[[_Table, float], None]:
    def op(t: _Table, f: float) -> None:
        c = _column(t, f, kinds)
        if c is None or t.frame.empty:
            return
        values = t.frame[c].astype(object)
        values.iloc[_row(t, f)] = value
        t.frame[c] = values.infer_objects() if kinds else values
    return op


def _cast(to: Callable[[pd.Series], pd.Series], kinds: str = "") -> Callable[[_Table, float],
                                                                              None]:
    def op(t: _Table, f: float) -> None:
        c = _column(t, f, kinds)
        if c is not None:
            t.frame[c] = to(t.frame[c])
    return op


def _frame_op(fn: Callable[[pd.DataFrame, float], pd.DataFrame]) -> Callable[[_Table, float],
                                                                              None]:
    def op(t: _Table, f: float) -> None:
        if len(t.frame) and len(t.frame.columns) > 1:
            t.frame = fn(t.frame, f)
    return op


def _duplicate_column(t: _Table, f: float) -> None:
    c = _column(t, f)
    t.frame = t.frame.assign(__repeated__=t.frame[c])
    t.rename["__repeated__"] = c


def _rename_column(t: _Table, f: float) -> None:
    c = _column(t, f)
    t.frame = t.frame.rename(columns={c: f" {c.upper()}"})


def _extra_column(t: _Table, _: float) -> None:
    t.frame = t.frame.assign(note_added=[f"n{i}" for i in range(len(t.frame))])


def _categorical(t: _Table, _: float) -> None:
    for c in t.frame.columns:
        if t.frame[c].dtype == object or pd.api.types.is_string_dtype(t.frame[c]):
            t.frame[c] = t.frame[c].astype("category")


def _pandas_index(t: _Table, _: float) -> None:
    t.frame = t.frame.set_axis(pd.RangeIndex(7, 7 + 3 * len(t.frame), 3))
    t.index = True


def _option(**values: object) -> Callable[[_Table, float], None]:
    def op(t: _Table, _: float) -> None:
        for k, v in values.items():
            setattr(t, k, v)
    return op


#: rewrites that must not change the result
PQ_BENIGN: dict[str, Callable[[_Table, float], None]] = {
    "snappy": _option(compression="snappy"),
    "uncompressed": _option(compression="none"),
    "row_groups": _option(row_group_size=1),
    "large_string": _option(large_string=True),
    "reorder_columns": _frame_op(lambda d, _: d[list(reversed(d.columns))]),
    "extra_column": _extra_column,
    "categorical": _categorical,
    "pandas_index": _pandas_index,
}
#: table mutations that may make the file unusable
PQ_TABLE: dict[str, Callable[[_Table, float], None]] = {
    "as_string": _cast(lambda s: s.astype(str)),
    "as_float": _cast(lambda s: s.astype("float64"), kinds="iub"),
    "as_int": _cast(lambda s: s.fillna(0).astype("int64"), kinds="f"),
    "as_bool": _cast(lambda s: s.astype(bool), kinds="iuf"),
    "as_list": _cast(lambda s: pd.Series([[v] for v in s], index=s.index, dtype=object)),
    "drop_column": _frame_op(lambda d, f: d.drop(columns=d.columns[
        min(len(d.columns) - 1, int(f * len(d.columns)))])),
    "duplicate_column": _duplicate_column,
    "rename_column": _rename_column,
    "duplicate_row": _frame_op(lambda d, f: pd.concat(
        [d, d.iloc[[min(len(d) - 1, int(f * len(d)))]]], ignore_index=True)),
    "drop_row": _frame_op(lambda d, f: d.drop(index=d.index[
        min(len(d) - 1, int(f * len(d)))]).reset_index(drop=True)),
    "shuffle_rows": _frame_op(lambda d, f: d.sample(frac=1, random_state=int(f * 1000))
                              .reset_index(drop=True)),
    "empty": _frame_op(lambda d, _: d.iloc[:0]),
    "nan": _set_cell(float("nan"), kinds="f"),
    "inf": _set_cell(float("inf"), kinds="f"),
    "negative": _set_cell(-0.5, kinds="f"),
    "null": _set_cell(None),
    "blank_text": _set_cell("  ", kinds="O"),
    "nul_text": _set_cell("a\x00b", kinds="O"),
    "huge_number": _set_cell(2**62, kinds="iu"),
}
#: byte mutations of the written file
PQ_BYTES: dict[str, Callable[[bytes, float, pd.DataFrame], bytes]] = {
    "truncate": lambda d, f, _: d[:min(len(d) - 1, int(f * len(d)))],
    "flip_byte": lambda d, f, _: (d[:min(len(d) - 1, int(f * len(d)))]
                                  + bytes([d[min(len(d) - 1, int(f * len(d)))] ^ 0x5A])
                                  + d[min(len(d) - 1, int(f * len(d))) + 1:]),
    "not_parquet": lambda d, _, __: b"this is not a Parquet file\n" * 3,
    "csv_renamed": lambda d, _, frame: frame.to_csv(index=False).encode("utf-8"),
    "gzip": lambda d, _, __: gzip.compress(d, mtime=0),
    "empty_file": lambda d, _, __: b"",
}
#: rows or values changed: the file may now disagree with another input (ids, labels),
#: and the error may name either file; a file's columns and bytes are its own
CROSS_OPS = set(PQ_TABLE) - {"drop_column", "duplicate_column", "rename_column"}
#: these leave no readable table: they must be refused
MUST_FAIL = {"not_parquet", "csv_renamed", "gzip", "empty_file", "truncate"}


def _parquet_bytes(t: _Table) -> bytes:
    try:
        table = pa.Table.from_pandas(t.frame, preserve_index=t.index)
    except pa.ArrowException:  # a column of mixed types: written as text (None kept)
        frame = t.frame.apply(lambda s: s.map(lambda v: v if v is None else str(v))
                              if s.dtype == object else s)
        table = pa.Table.from_pandas(frame, preserve_index=t.index)
    if t.large_string:
        table = table.cast(pa.schema([
            f.with_type(pa.large_string()) if pa.types.is_string(f.type) else f
            for f in table.schema], metadata=table.schema.metadata))
    if t.rename:
        table = table.rename_columns([t.rename.get(n, n) for n in table.column_names])
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=t.compression,
                   row_group_size=t.row_group_size)
    return sink.getvalue().to_pybytes()


def _pq_mutations() -> st.SearchStrategy:
    names = sorted(PQ_BENIGN) + sorted(PQ_TABLE) + sorted(PQ_BYTES)
    return st.lists(st.tuples(st.sampled_from(names), st.floats(0, 1, allow_nan=False)),
                    min_size=1, max_size=3)


# -- commands -------------------------------------------------------------------------------


@dataclass
class Fuzzed:
    """A command, its clean inputs written by ``setup`` into a directory, and the files
    (relative paths) a mutation may hit."""

    name: str
    setup: Callable[[Path], None]
    argv: Callable[[Path, Path], list[str]]  # (input directory, output directory) -> argv
    targets: tuple[str, ...]
    #: table mutations that are benign for each target (beyond PQ_BENIGN)
    also_benign: dict[str, frozenset[str]] = field(default_factory=dict)
    #: outputs as compared (say, with a hash of the input masked)
    normalize: Callable[[bytes], bytes] = lambda b: b
    #: the inputs are checked against each other: an error may name any of them
    cross_files: bool = False
    #: the outputs (relative to the output directory), filled in by :func:`_clean`
    outputs: list[str] = field(default_factory=list)


#: what the outputs hold before each run: an earlier run's, which a refused input leaves
EARLIER = b"an earlier run's output\n"


def _earlier_run(out: Path, outputs: list[str]) -> None:
    for rel in outputs:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(EARLIER)


def _outputs_of(command: Fuzzed, out: Path, root: Path) -> dict[str, bytes]:
    return {k: command.normalize(v) for k, v in _outputs(out, root).items()}


def _verdict(code: int, err: str, *, named: str | tuple[str, ...], benign: bool, must_fail: bool,
             outs: dict[str, bytes], clean: dict[str, bytes], steps: object) -> None:
    assert "Traceback" not in err, err
    if benign:
        assert code == 0, (steps, err)
        assert outs == clean, steps
        return
    if must_fail:
        assert code == 2, (steps, err)
    if code == 2:
        lines = [line for line in err.splitlines() if "error:" in line]
        names = (named,) if isinstance(named, str) else named
        assert len(lines) == 1 and any(n in lines[0] for n in names), (steps, err)
        assert outs == dict.fromkeys(clean, EARLIER), steps  # untouched, nothing new
    else:
        assert code == 0, (steps, err)


def _clean(command: Fuzzed) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        command.setup(tmp)
        code, err = _run(command.argv(tmp, tmp / "out"))
        assert code == 0, err
        command.outputs = [str(p.relative_to(tmp / "out"))
                           for p in (tmp / "out").rglob("*") if p.is_file()]
        return _outputs_of(command, tmp / "out", tmp)


def _check_parquet(command: Fuzzed, target: int, steps: list[tuple[str, float]],
                   clean: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        command.setup(tmp)
        path = tmp / command.targets[target]
        t = _Table(pd.read_parquet(path))
        benign = PQ_BENIGN.keys() | command.also_benign.get(command.targets[target], set())
        order = {**dict.fromkeys(PQ_TABLE, 0), **dict.fromkeys(PQ_BENIGN, 1),
                 **dict.fromkeys(PQ_BYTES, 2)}
        steps = sorted(steps, key=lambda s: order[s[0]])
        for name, f in steps:
            if name in PQ_TABLE or name in PQ_BENIGN:
                (PQ_TABLE.get(name) or PQ_BENIGN[name])(t, f)
        data = _parquet_bytes(t)
        for name, f in steps:
            if name in PQ_BYTES:
                data = PQ_BYTES[name](data, f, t.frame)
        path.write_bytes(data)
        _earlier_run(tmp / "out", command.outputs)
        code, err = _run(command.argv(tmp, tmp / "out"))
        named = (str(path),) + (tuple(str(tmp / p) for p in command.targets)
                                if any(n in CROSS_OPS for n, _ in steps) else ())
        _verdict(code, err, named=named, benign=all(n in benign for n, _ in steps),
                 must_fail=any(n in MUST_FAIL for n, _ in steps),
                 outs=_outputs_of(command, tmp / "out", tmp), clean=clean, steps=steps)


def _check_text(command: Fuzzed, target: int, steps: list[tuple[str, float]],
                clean: dict[str, bytes]) -> None:
    """As tests/test_fuzz_inputs.py mutates text files (and JSON_MUTATIONS, for JSON)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        command.setup(tmp)
        path = tmp / command.targets[target]
        data = path.read_bytes()
        first = {name: i for i, (name, _) in reversed(list(enumerate(steps)))}
        steps = [s for i, s in enumerate(steps) if s[0] not in BENIGN or first[s[0]] == i]
        steps = sorted(steps, key=lambda s: (s[0] not in JSON_MUTATIONS, s[0] == "gzip"))
        for name, f in steps:
            if name in JSON_MUTATIONS:
                data = JSON_MUTATIONS[name](data, f)
            else:
                data = (BENIGN.get(name) or HARMFUL[name])(data, f)
        path.write_bytes(data)
        _earlier_run(tmp / "out", command.outputs)
        code, err = _run(command.argv(tmp, tmp / "out"))
        named = (str(path),) + (tuple(str(tmp / p) for p in command.targets)
                                if command.cross_files else ())
        _verdict(code, err, named=named, benign=all(n in BENIGN for n, _ in steps),
                 must_fail=False, outs=_outputs_of(command, tmp / "out", tmp), clean=clean,
                 steps=steps)


# -- JSON mutations (a summary file, inline settings) -----------------------------------------

#: values a JSON leaf may be replaced with
ODD_VALUES = ["abc", None, [], {}, -1, 1.5, True, 1e308, "NaN", 10**30]


def _leaves(obj: object, at: tuple = ()) -> list[tuple]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _leaves(v, (*at, k))] or [at]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _leaves(v, (*at, i))] or [at]
    return [at]


def _nodes(obj: object, at: tuple = ()) -> list[tuple]:
    """Paths of every dict entry (a key can be dropped or added there)."""
    if isinstance(obj, dict):
        return [at, *(p for k, v in obj.items() for p in _nodes(v, (*at, k)))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _nodes(v, (*at, i))]
    return []


def _json_op(op: Callable[[object, float], object]) -> Callable[[bytes, float], bytes]:
    def mutate(d: bytes, f: float) -> bytes:
        try:
            obj = json.loads(d.decode("utf-8"))
        except ValueError:
            return d
        return json.dumps(op(obj, f), allow_nan=True).encode("utf-8")
    return mutate


def _pick(items: list, f: float) -> object:
    return items[min(len(items) - 1, int(f * len(items)))]


def _replace(obj: object, path: tuple, value: object) -> object:
    if not path:
        return value
    node = obj
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return obj


def _odd_leaf(obj: object, f: float) -> object:
    path = _pick(_leaves(obj), f)
    return _replace(obj, path, ODD_VALUES[int(f * 997) % len(ODD_VALUES)])


def _drop_key(obj: object, f: float) -> object:
    nodes = [p for p in _nodes(obj) if _get(obj, p)]
    if not nodes:
        return obj
    node = _get(obj, _pick(nodes, f))
    node.pop(_pick(list(node), f))
    return obj


def _extra_key(obj: object, f: float) -> object:
    node = _get(obj, _pick(_nodes(obj) or [()], f))
    if isinstance(node, dict):
        node["unexpected_key"] = 1
    return obj


def _get(obj: object, path: tuple) -> object:
    for k in path:
        obj = obj[k]
    return obj


JSON_MUTATIONS: dict[str, Callable[[bytes, float], bytes]] = {
    "odd_leaf": _json_op(_odd_leaf),
    "drop_key": _json_op(_drop_key),
    "extra_key": _json_op(_extra_key),
    "json_nan": _json_op(lambda o, f: _replace(o, _pick(_leaves(o), f), float("nan"))),
    "json_list": _json_op(lambda o, _: [o]),
}
json_mutations = st.lists(
    st.tuples(st.sampled_from(sorted(JSON_MUTATIONS) + sorted(BENIGN) + sorted(HARMFUL)),
              st.floats(0, 1, allow_nan=False)),
    min_size=1, max_size=3,
)


# -- the fairness report ---------------------------------------------------------------------


def _report_setup(d: Path) -> None:
    from test_study_bad_inputs import _report_inputs

    argv = _report_inputs(d, [0.1, 0.8, 0.2, 0.9])
    (d / "argv.json").write_text(json.dumps(argv), encoding="utf-8")


def _report_argv(d: Path, o: Path) -> list[str]:
    argv = json.loads((d / "argv.json").read_text(encoding="utf-8"))
    argv[argv.index("--out-dir") + 1] = str(o)
    return argv


PREDICTIONS = ("m/baseline/fairness-original.parquet", "m/baseline/fairness-balanced.parquet")

REPORT = Fuzzed(
    "fairness-report", _report_setup, _report_argv,
    targets=("original.parquet", "balanced.parquet", *PREDICTIONS, "train.parquet"),
    also_benign={p: frozenset({"shuffle_rows"}) for p in PREDICTIONS})


# -- predict ---------------------------------------------------------------------------------


def _texts_parquet(d: Path) -> None:
    pd.DataFrame({"id": ["r1", "r2", "r3"],
                  "text": ["A warm, funny film.", "Dull and long.", "She was great."],
                  "label": [1, 0, 1]}).to_parquet(d / "texts.parquet", index=False)


PREDICT = Fuzzed("predict-parquet", _texts_parquet, lambda d, o: [
    "predict", "--model", str(_tiny_model()), "--input", str(d / "texts.parquet"),
    "--out", str(o / "p.parquet")], targets=("texts.parquet",))


# -- BiasFinder: btc, audit, table, import-lists ---------------------------------------------

TEMPLATES = [
    ("gender", "Marta Quinn plays a teacher, and she is superb.",
     "<Name> plays a teacher, and <pro-subj> is superb.", "female"),
    ("gender", "That old man is the heart of the story. I could watch him for hours.",
     "That old <gaw> is the heart of the story. I could watch <pro-obj> for hours.", "male"),
    ("gender", "Oscar Lund is dull, and his scenes drag.",
     "<Name> is dull, and <pro-det> scenes drag.", "male"),
]
NAMES_CSV = "gender,name\nmale,Tom\nmale,Sam\nfemale,Ann\nfemale,Eve\n"


@functools.cache
def _biasfinder_inputs() -> dict[str, bytes]:
    """Templates, names, mutants, predictions and a btc summary, built once per module."""
    from biasrepro.biasfinder import placeholders
    from biasrepro.biasfinder.templates import COLUMNS

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        pd.DataFrame({
            "template_id": [f"gender-{i:05d}" for i in range(len(TEMPLATES))],
            "characteristic": [r[0] for r in TEMPLATES],
            "doc_id": [f"{i:05d}" for i in range(len(TEMPLATES))],
            "label": [i % 2 for i in range(len(TEMPLATES))],
            "original": [r[1] for r in TEMPLATES], "template": [r[2] for r in TEMPLATES],
            "original_class": [r[3] for r in TEMPLATES],
            "placeholders": [",".join(placeholders.keys(r[2])) for r in TEMPLATES],
        })[list(COLUMNS)].to_parquet(d / "templates.parquet", index=False)
        (d / "names.csv").write_text(NAMES_CSV, encoding="utf-8")
        assert main(["biasfinder", "mutants", "--templates", str(d / "templates.parquet"),
                     "--names", str(d / "names.csv"), "--out",
                     str(d / "mutants.parquet")]) == 0
        mutants = pd.read_parquet(d / "mutants.parquet")
        prob = np.where(mutants["class"] == "male", 0.9, 0.2) + 0.01 * (np.arange(len(mutants)) % 7)
        pd.DataFrame({"id": mutants["id"], "label": mutants["label"], "prob": prob,
                      "pred": (prob >= 0.5).astype("int64")}).to_parquet(
            d / "predictions.parquet", index=False)
        assert main(_btc_argv(d, d)) == 0
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        other = {k: {**v, "model": "other"} for k, v in summary.items()}
        (d / "summary-2.json").write_text(json.dumps(other, indent=2), encoding="utf-8")
        return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}


def _biasfinder_setup(d: Path) -> None:
    for name, data in _biasfinder_inputs().items():
        (d / name).write_bytes(data)


def _btc_argv(d: Path, o: Path) -> list[str]:
    return ["biasfinder", "btc", "--templates", str(d / "templates.parquet"), "--mutants",
            str(d / "mutants.parquet"), "--predictions", str(d / "predictions.parquet"),
            "--characteristic", "gender", "--model-name", "tiny", "--settings",
            json.dumps({"biasfinder.threshold": 0.5}), "--out-pairs", str(o / "pairs.parquet"),
            "--out-counts", str(o / "counts.parquet"), "--out-summary", str(o / "summary.json")]


BTC = Fuzzed("biasfinder-btc", _biasfinder_setup, _btc_argv,
             targets=("mutants.parquet", "predictions.parquet", "templates.parquet"),
             also_benign={"predictions.parquet": frozenset({"shuffle_rows"})})

AUDIT = Fuzzed("biasfinder-audit", _biasfinder_setup, lambda d, o: [
    "biasfinder", "audit", "--templates", str(d / "templates.parquet"), "--names",
    str(d / "names.csv"), "--seed", "3", "--out", str(o / "audit.html")],
    targets=("templates.parquet",))

TABLE = Fuzzed("biasfinder-table", _biasfinder_setup, lambda d, o: [
    "biasfinder", "table", "--inputs", str(d / "summary.json"), str(d / "summary-2.json"),
    "--out-json", str(o / "t.json"), "--out-md", str(o / "t.md"), "--out-csv", str(o / "t.csv")],
    targets=("summary.json", "summary-2.json"))


def _lists_setup(d: Path) -> None:
    from test_original_lists import write_fixture

    write_fixture(d / "asset")
    (d / "pronouns.csv").write_bytes((REPO / "wordlists" / "pronouns.csv").read_bytes())


def _mask_sha256(data: bytes) -> bytes:
    return re.sub(rb"sha256 [0-9a-f]{64}", b"sha256 X", data)


LISTS = ("neutral-occupation.csv", "masculine-feminine-person.txt", "male_names_only_USA.csv",
         "female_names_only_USA.csv", "unique_male_names_and_country.csv",
         "unique_female_names_and_country.csv")
IMPORT_LISTS = Fuzzed("biasfinder-import-lists", _lists_setup, lambda d, o: [
    "biasfinder", "import-lists", "--asset-dir", str(d / "asset"), "--pronouns",
    str(d / "pronouns.csv"), "--lists-out", str(o / "lists"), "--names-out",
    str(o / "names.csv"), "--countries-out", str(o / "countries.csv")],
    targets=(*(f"asset/{n}" for n in LISTS), "pronouns.csv"),
    normalize=_mask_sha256, cross_files=True)  # male and female lists must match

PARQUET_COMMANDS = {c.name: c for c in (REPORT, PREDICT, BTC, AUDIT)}
TEXT_COMMANDS = {c.name: c for c in (TABLE, IMPORT_LISTS)}


@pytest.mark.parametrize("name", sorted(PARQUET_COMMANDS))
def test_mutated_parquet_is_read_or_refused_in_one_line(name: str) -> None:
    command = PARQUET_COMMANDS[name]
    clean = _clean(command)

    @given(st.integers(0, len(command.targets) - 1), _pq_mutations())
    def fuzz(target: int, steps: list[tuple[str, float]]) -> None:
        _check_parquet(command, target, steps, clean)

    fuzz()


@pytest.mark.parametrize("name", sorted(TEXT_COMMANDS))
def test_mutated_list_or_summary_is_read_or_refused_in_one_line(name: str) -> None:
    command = TEXT_COMMANDS[name]
    clean = _clean(command)
    steps_of = json_mutations if name == "biasfinder-table" else byte_mutations

    @given(st.integers(0, len(command.targets) - 1), steps_of)
    def fuzz(target: int, steps: list[tuple[str, float]]) -> None:
        _check_text(command, target, steps, clean)

    fuzz()


# -- predict's inline --settings --------------------------------------------------------------


def _inline_settings() -> dict:
    return {"seed": 7, "models.registry": {"tiny": {
        "source": "local", "path": str(_tiny_model()), "architecture": "bert"}}}


#: inline-settings mutations that must not change the result
SETTINGS_BENIGN = {"spaces", "other_key"}


def _settings_text(steps: list[tuple[str, float]]) -> str:
    """The inline settings after ``steps``: changes to the JSON value first, then to the
    text."""
    text = json.dumps(_inline_settings())
    for name, f in sorted(steps, key=lambda s: s[0] not in {*JSON_MUTATIONS, "other_key"}):
        if name == "spaces":
            text = "  " + text.replace(", ", ",\n   ").replace(": ", " :  ") + "\n"
        elif name == "other_key":
            obj = json.loads(text)
            text = json.dumps({**obj, "seed": 3, "fairness.threshold": 0.5}
                              if isinstance(obj, dict) else obj)
        elif name in JSON_MUTATIONS:
            text = JSON_MUTATIONS[name](text.encode(), f).decode()
        elif name == "truncate":
            text = text[:int(f * len(text))]
        elif name == "byte":
            i = min(len(text) - 1, int(f * len(text)))
            text = text[:i] + chr(32 + int(f * 997) % 95) + text[i + 1:]
        elif name == "quote":
            i = int(f * len(text))
            text = text[:i] + '"' + text[i:]
        elif name == "scalar":
            text = ["[1, 2]", "3", '"tiny"', "null", "{", ""][int(f * 5.99)]
    return text


@given(st.lists(st.tuples(st.sampled_from(
    sorted(SETTINGS_BENIGN | {"truncate", "byte", "quote", "scalar"} | set(JSON_MUTATIONS))),
    st.floats(0, 1, allow_nan=False)), min_size=1, max_size=3))
def _fuzz_inline_settings(steps: list[tuple[str, float]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _texts_parquet(tmp)
        text = _settings_text(steps)
        with contextlib.suppress(ValueError):  # no settings: "tiny" would be a Hub id
            assume(json.loads(text) != {})
        _earlier_run(tmp / "out", ["p.parquet"])
        code, err = _run(["predict", "--model", "tiny", "--input", str(tmp / "texts.parquet"),
                          "--out", str(tmp / "out" / "p.parquet"), "--settings", text])
        _verdict(code, err, named=("--settings", "'tiny'"),
                 benign=all(n in SETTINGS_BENIGN for n, _ in steps), must_fail=False,
                 outs=_outputs(tmp / "out", tmp), clean=_inline_clean(), steps=steps)


@functools.cache
def _inline_clean() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _texts_parquet(tmp)
        code, err = _run(["predict", "--model", "tiny", "--input", str(tmp / "texts.parquet"),
                          "--out", str(tmp / "out" / "p.parquet"), "--settings",
                          json.dumps(_inline_settings())])
        assert code == 0, err
        return _outputs(tmp / "out", tmp)


def test_mutated_inline_settings_are_read_or_refused_in_one_line() -> None:
    _fuzz_inline_settings()


# -- as a subprocess ---------------------------------------------------------------------------


def test_btc_exit_codes_as_a_subprocess(tmp_path: Path) -> None:
    import subprocess
    import sys

    _biasfinder_setup(tmp_path)
    path = tmp_path / "predictions.parquet"
    clean = path.read_bytes()
    argv = [sys.executable, "-m", "biasrepro", *_btc_argv(tmp_path, tmp_path / "out")]
    path.write_bytes(clean[:len(clean) // 2])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: not a readable Parquet")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    frame = pd.read_parquet(io.BytesIO(clean))
    frame.loc[2, "prob"] = float("nan")
    frame.to_parquet(path, index=False)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: {path}, row 3, column 'prob': probability outside [0, 1] (nan)"]
    path.write_bytes(clean)
    assert subprocess.run(argv, capture_output=True, timeout=120).returncode == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "counts.parquet", "pairs.parquet", "summary.json"]

