"""Property-based fuzzing of every command that reads a user's file, driven in-process.

Each example starts from a clean file, applies drawn mutations (encodings, byte-order marks,
line endings, compression, delimiters, NULs, huge fields, truncation, missing or repeated
columns and rows, wrong types, empty files) and runs the command's ``main(argv)`` in a fresh
directory. The invariant: exit 0, with the clean file's outputs byte for byte when every
mutation was benign; or exit 2 with one ``error:`` line naming the file and nothing written.
Never a traceback. Profiles (tests/conftest.py): ``ci`` (200 seeded examples per command),
``long`` (``--hypothesis-profile=long``). Parquet inputs, JSON summaries, BiasFinder's word
lists and inline ``--settings``: tests/test_fuzz_inputs_more.py, with these helpers.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gzip
import io
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO
from fixtures.raw_data import IDENTITIES, civil_rows, write_civil_comments_csv, write_sst_csv
from hypothesis import given
from hypothesis import strategies as st

from biasrepro.cli import main

#: mutations that must not change the result
BENIGN = {
    "bom": lambda d, _: b"\xef\xbb\xbf" + d,
    "crlf": lambda d, _: d.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"),
    "gzip": lambda d, _: gzip.compress(d, mtime=0),
    "blank_line": lambda d, _: d + b"\n",
}


def _at(d: bytes, f: float) -> int:
    return min(len(d), int(f * len(d)))


def _lines(d: bytes) -> list[bytes]:
    return d.split(b"\n")


def _line_op(op: Callable[[list[bytes], int], list[bytes]]) -> Callable[[bytes, float], bytes]:
    def mutate(d: bytes, f: float) -> bytes:
        lines = _lines(d)
        return b"\n".join(op(lines, min(len(lines) - 1, int(f * len(lines)))))
    return mutate


#: mutations that may make the file unusable (then: one error line)
HARMFUL = {
    "nul": lambda d, f: d[:_at(d, f)] + b"\x00" + d[_at(d, f):],
    "truncate": lambda d, f: d[:_at(d, f)],
    "byte": lambda d, f: d[:_at(d, f)] + bytes([int(f * 997) % 256]) + d[_at(d, f) + 1:],
    "latin1": lambda d, _: d.decode("utf-8", "replace").encode("latin-1", "replace") + b"\xe9",
    "utf16": lambda d, _: d.decode("utf-8", "replace").encode("utf-16"),
    "semicolon": lambda d, _: d.replace(b",", b";").replace(b"\t", b";"),
    "quote": lambda d, f: d[:_at(d, f)] + b'"' + d[_at(d, f):],
    "huge": lambda d, f: d[:_at(d, f)] + b"x" * 140_000 + d[_at(d, f):],
    "empty": lambda d, _: b"",
    "drop_line": _line_op(lambda ls, i: ls[:i] + ls[i + 1:]),
    "repeat_line": _line_op(lambda ls, i: ls[:i + 1] + ls[i:]),
    "repeat_header_field": _line_op(
        lambda ls, _: [ls[0] + b"," + ls[0].split(b",")[0], *ls[1:]]),
    "drop_header_field": _line_op(
        lambda ls, i: [b",".join(ls[0].split(b",")[:-1] or [b"x"]), *ls[1:]]),
    "wrong_type": lambda d, f: d[:_at(d, f)] + b"abc" + d[_at(d, f):],
    "header_only": _line_op(lambda ls, _: ls[:1]),
}

mutations = st.lists(
    st.tuples(st.sampled_from(sorted(BENIGN) + sorted(HARMFUL)),
              st.floats(0, 1, allow_nan=False)),
    min_size=1, max_size=3,
)


@dataclass
class Command:
    """A command with one user file: how to write the clean file and the argv to run."""

    name: str
    write: Callable[[Path], Path]                 # the clean input in a directory
    argv: Callable[[Path, Path], list[str]]       # (input, output directory) -> argv


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse refuses a bad --settings file this way
            code = e.code
    return code, err.getvalue()


def _outputs(out: Path, root: Path) -> dict[str, bytes]:
    """The files under ``out``, the temporary directory ``root`` in them written as ``TMP``."""
    return {p.name: p.read_bytes().replace(str(root).encode(), b"TMP")
            for p in sorted(out.rglob("*")) if p.is_file()} if out.exists() else {}


def _check(command: Command, steps: list[tuple[str, float]], clean: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = command.write(tmp)
        data = path.read_bytes()
        first = {name: i for i, (name, _) in reversed(list(enumerate(steps)))}
        steps = [s for i, s in enumerate(steps) if s[0] in HARMFUL or first[s[0]] == i]
        steps = sorted(steps, key=lambda s: s[0] == "gzip")  # compress the mutated text
        for name, f in steps:
            data = (BENIGN.get(name) or HARMFUL[name])(data, f)
        path.write_bytes(data)
        out = tmp / "out"
        code, err = _run(command.argv(path, out))
        assert "Traceback" not in err
        if all(name in BENIGN for name, _ in steps):
            assert code == 0, err
            assert _outputs(out, tmp) == clean, steps
        elif code == 2:
            lines = [line for line in err.splitlines() if "error:" in line]
            # a configuration that is valid YAML but not valid names each wrong key instead
            assert len(lines) == 1 and (str(path) in lines[0] or lines[0].endswith(
                "invalid configuration:")), err
            assert _outputs(out, tmp) == {}
        else:
            assert code == 0, err


def _clean(command: Command) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        path = command.write(Path(tmp))
        code, err = _run(command.argv(path, Path(tmp) / "out"))
        assert code == 0, err
        return _outputs(Path(tmp) / "out", Path(tmp))


def _imdb_tsv(d: Path) -> Path:
    rows = ["1\tA warm, funny film; she shines.", "0\tDull <br />and long.",
            "1\tGreat \"cast\".", "0\tNot for me."]
    (d / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (d / "train.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return d / "train.tsv"


def _sst(d: Path) -> Path:
    write_sst_csv(d / "sst.csv")
    return d / "sst.csv"


def _civil(d: Path) -> Path:
    write_civil_comments_csv(d / "all_data.csv", rows=civil_rows(n_per_group=4))
    return d / "all_data.csv"


def _corpus(d: Path) -> Path:
    (d / "corpus.csv").write_text(
        "id,text,label\nr1,\"She is a nurse, and she is kind.\",1\nr2,He hated it.,0\n"
        "r3,My father loved the film.,1\n", encoding="utf-8")
    return d / "corpus.csv"


def _predictions(d: Path) -> Path:
    pd.DataFrame({"label": [1, 0, 1, 0], "prob": [0.9, 0.2, 0.4, 0.6]}).to_csv(
        d / "p.csv", index=False)
    return d / "p.csv"


@functools.cache
def _tiny_model() -> Path:
    """A random tiny classifier, built once per module."""
    from fixtures.tiny_models import tiny_classifier

    path = Path(tempfile.mkdtemp(prefix="fuzz-model-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return tiny_classifier(path)


def _texts(d: Path) -> Path:
    (d / "texts.csv").write_text(
        "id,text,label\nr1,\"A warm, funny film.\",1\nr2,Dull and long.,0\n"
        "r3,She was great.,1\n", encoding="utf-8")
    return d / "texts.csv"


def _settings_file(d: Path) -> Path:
    (d / "settings.json").write_text(json.dumps(_default_config(), indent=1), encoding="utf-8")
    return d / "settings.json"


@functools.cache
def _default_config() -> dict:
    from biasrepro import config

    return config.load(REPO / "config" / "config.yaml")


def _config_yaml(d: Path) -> Path:
    (d / "config.yaml").write_bytes((REPO / "config" / "config.yaml").read_bytes())
    return d / "config.yaml"


ANNOTATION_HEADER = ("btc_id,characteristic,text_1,text_2,coherent_1,coherent_2,sentiment_1,"
                     "sentiment_2\n")
ANNOTATIONS = [("gender-0000", "yes,yes,positive,positive"),
               ("gender-0001", "yes,no,positive,positive"),
               ("gender-0002", "yes,yes,positive,negative"),
               ("gender-0003", "Y,y,Pos,pos")]


def _annotations(d: Path) -> Path:
    for name, flip in (("a", False), ("b", True)):
        rows = [f"{i},gender,\"He, too.\",She too.,{v if not flip else ANNOTATIONS[0][1]}"
                for i, v in ANNOTATIONS]
        (d / f"{name}.csv").write_text(ANNOTATION_HEADER + "\n".join(rows) + "\n",
                                       encoding="utf-8")
    return d / "a.csv"


def _representation(d: Path) -> Path:
    from test_study_bad_inputs import _report_inputs

    _report_inputs(d, [0.1, 0.8, 0.2, 0.9])
    (d / "table4.csv").write_text(
        "model,variant,attribute,source,value\nm,baseline,gender,crows,55.5\n"
        "m,baseline,gender,stereoset,60.25\nm,baseline,gender,seat,0.5\n", encoding="utf-8")
    return d / "table4.csv"


def _report_argv(p: Path, o: Path) -> list[str]:
    from test_study_bad_inputs import _report_inputs

    argv = _report_inputs(p.parent, [0.1, 0.8, 0.2, 0.9])  # rewrites only the clean inputs
    argv[argv.index("--out-dir") + 1] = str(o)
    return [*argv, "--representation", str(p)]


@functools.cache
def _templates() -> Path:
    """Gender templates of a few reviews (parse, templates), built once per module."""
    from test_biasfinder_cli import REVIEWS, SETTINGS

    d = Path(tempfile.mkdtemp(prefix="fuzz-templates-"))
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    pd.DataFrame(REVIEWS, columns=["label", "text"]).to_csv(d / "reviews.csv", index=False)
    for argv in (["parse", "--input", str(d / "reviews.csv"), "--out", str(d / "p.spacy")],
                 ["templates", "--parsed", str(d / "p.spacy"), "--characteristic", "gender",
                  "--out", str(d / "t.parquet")]):
        assert main(["biasfinder", *argv, "--settings", json.dumps(SETTINGS)]) == 0
    return d / "t.parquet"


MUTANT_SETTINGS = json.dumps({"seed": 7, "biasfinder.max_names": 2})


def _names(d: Path) -> Path:
    (d / "names.csv").write_text("# my names\ngender,rank,name\nmale,0,Tom\nfemale,0,Ann\n"
                                 "male,1,Sam\nfemale,1,Eve\n", encoding="utf-8")
    return d / "names.csv"


CC_SETTINGS = json.dumps({
    "seed": 1, "identities": IDENTITIES,
    "preprocess.civil_comments": {"split": {"train": 0.4, "validation": 0.3, "test": 0.3},
                                  "identity_threshold": 0.5, "toxicity_threshold": 0.5}})

COMMANDS = {
    "prepare-imdb": Command("prepare-imdb", _imdb_tsv, lambda p, o: [
        "prepare", "imdb", "--format", "tsv", "--input", f"train={p}",
        f"test={p.parent / 'test.tsv'}", "--out-dir", str(o)]),
    "prepare-sst": Command("prepare-sst", _sst, lambda p, o: [
        "prepare", "sst", "--input", str(p), "--out-dir", str(o)]),
    "prepare-civil-comments": Command("prepare-civil-comments", _civil, lambda p, o: [
        "prepare", "civil-comments", "--format", "csv", "--input", str(p),
        "--settings", CC_SETTINGS, "--out-dir", str(o)]),
    "biasfinder-parse": Command("biasfinder-parse", _corpus, lambda p, o: [
        "biasfinder", "parse", "--input", str(p), "--out", str(o / "parsed.spacy")]),
    "evaluate": Command("evaluate", _predictions, lambda p, o: [
        "evaluate", "--predictions", str(p), "--out", str(o / "metrics.json")]),
    "predict": Command("predict", _texts, lambda p, o: [
        "predict", "--model", str(_tiny_model()), "--input", str(p),
        "--out", str(o / "p.parquet")]),
    "predict-settings": Command("predict-settings", _settings_file, lambda p, o: [
        "predict", "--model", str(_tiny_model()), "--input", str(_texts(p.parent)),
        "--out", str(o / "p.parquet"), "--settings", str(p)]),
    "config-validate": Command("config-validate", _config_yaml, lambda p, o: [
        "config", "validate", str(p)]),
    "annotate-score": Command("annotate-score", _annotations, lambda p, o: [
        "biasfinder", "annotate", "score", "--annotations", str(p), str(p.parent / "b.csv"),
        "--out", str(o / "scores.json")]),
    "fairness-report": Command("fairness-report", _representation, _report_argv),
    "biasfinder-mutants": Command("biasfinder-mutants", _names, lambda p, o: [
        "biasfinder", "mutants", "--templates", str(_templates()), "--names", str(p),
        "--settings", MUTANT_SETTINGS, "--out", str(o / "mutants.parquet")]),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_mutated_input_is_read_or_refused_in_one_line(name: str) -> None:
    command = COMMANDS[name]
    clean = _clean(command)

    @given(mutations)
    def fuzz(steps: list[tuple[str, float]]) -> None:
        _check(command, steps, clean)

    fuzz()


def test_exit_codes_as_a_subprocess(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = _predictions(tmp_path)
    path.write_bytes(b"\xff\xfe" + path.read_bytes())
    argv = [sys.executable, "-m", "biasrepro", "evaluate", "--predictions", str(path),
            "--out", str(tmp_path / "m.json")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: {path}: the file is UTF-16 text; save it as UTF-8"]
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes()[2:])
    assert subprocess.run(argv, capture_output=True, timeout=120).returncode == 0
