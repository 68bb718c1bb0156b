"""Output paths a user gets wrong and runs that collide: every command's outputs are checked
before any work (a directory given as a file, a folder below a file, a folder that cannot be
written), one clear error names the path, nothing is half-written; a second run writing the
same output is refused while the first lives, and never deletes the first one's temporary
file; a set of outputs is committed all or none. Property tests generate path layouts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import env_with_venv
from hypothesis import given
from hypothesis import strategies as st

from biasrepro.cli import main
from biasrepro.errors import DataError
from biasrepro.io import (
    atomic_outputs,
    check_output,
    lock_output,
    release_outputs,
    write_json,
    write_text,
)


def table_args(summary: Path, out: Path) -> list[str]:
    return ["biasfinder", "table", "--inputs", str(summary), "--out-json", str(out / "t.json"),
            "--out-md", str(out / "t.md"), "--out-csv", str(out / "t.csv")]


def error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and err[-1].startswith("error: ")
    return err[-1]


@pytest.fixture
def summary(tmp_path: Path) -> Path:
    """An input the command would reject: the output checks must come first."""
    path = tmp_path / "summary.json"
    path.write_text("not JSON")
    return path


def test_an_output_file_that_is_a_directory_is_named(tmp_path: Path, summary: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    (out / "t.md").mkdir(parents=True)
    line = error_line(table_args(summary, out), capsys)
    assert line == f"error: the output path {out / 't.md'} is a directory; give a file path"
    assert sorted(p.name for p in out.iterdir()) == ["t.md"]  # nothing written, no temp


def test_an_output_folder_below_a_file_is_named(tmp_path: Path, summary: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("x")
    line = error_line(table_args(summary, tmp_path / "afile" / "sub"), capsys)
    assert f"cannot make the output folder {tmp_path / 'afile' / 'sub'}" in line
    assert "is a file" in line
    assert main(["coref", "evaluate", "--gap", str(summary), "--backend", "rules",
                 "--out", str(tmp_path / "afile")]) == 2  # a folder output that is a file
    assert "is a file, not a folder" in capsys.readouterr().err


def test_an_unwritable_output_folder_is_named(tmp_path: Path, summary: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    if subprocess.run(["chattr", "+i", str(frozen)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        line = error_line(table_args(summary, frozen), capsys)
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], check=True)
    assert f"cannot write the output folder {frozen}" in line
    assert "choose a folder this user can write" in line
    assert list(frozen.iterdir()) == []


def test_a_second_writer_is_refused_while_the_first_lives(tmp_path: Path) -> None:
    """This process holds the output (as a running command does); another command writing
    it is refused with the holder's pid, and the holder's temporary file survives."""
    out = tmp_path / "out"
    out.mkdir()
    summary = tmp_path / "summary.json"
    summary.write_text("not JSON")
    final = out / "t.json"
    with atomic_outputs(final) as (tmp,):
        write_json({"first": True}, tmp)
        proc = subprocess.run([sys.executable, "-m", "biasrepro", *table_args(summary, out)],
                              capture_output=True, text=True, env=env_with_venv())
        assert proc.returncode == 2
        assert f"another run (pid {os.getpid()}) is writing {final.absolute()}" in proc.stderr
        assert tmp.exists()
    assert json.loads(final.read_text()) == {"first": True}


def test_temporary_files_of_live_runs_are_kept_and_of_dead_ones_cleared(tmp_path: Path) -> None:
    final = tmp_path / "x.txt"
    live = tmp_path / f".tmp-{os.getppid()}.x.txt"  # the test runner's parent: alive
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout.strip()
    dead = tmp_path / f".tmp-{dead_pid}.x.txt"
    for p in (live, dead):
        p.write_text("partial")
    with atomic_outputs(final) as (tmp,):
        write_text("done", tmp)
    assert live.exists() and not dead.exists() and final.read_text() == "done"


def test_a_set_of_outputs_is_committed_all_or_none(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    with pytest.raises(DataError, match="is a directory"), atomic_outputs(first, second) as (
            ta, tb):
        write_json({}, ta)
        write_json({}, tb)
        second.mkdir()  # appears while the step runs
    assert not first.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]


def test_locks_are_released_after_the_block_and_after_a_command(tmp_path: Path) -> None:
    final = tmp_path / "y.txt"
    with atomic_outputs(final) as (tmp,):
        write_text("1", tmp)
    assert lock_output(final)  # free again: taken now
    release_outputs([final])
    summary = tmp_path / "s.json"
    summary.write_text("not JSON")
    assert main(table_args(summary, tmp_path / "o")) == 2  # a rejected input
    assert lock_output(tmp_path / "o" / "t.json")  # the command released its outputs
    release_outputs()


LAYOUT = st.sampled_from(["missing", "file", "dir"])


@given(parent=LAYOUT, final=LAYOUT, folder=st.booleans())
def test_any_path_layout_is_accepted_or_refused_with_a_data_error(
        tmp_path_factory: pytest.TempPathFactory, parent: str, final: str,
        folder: bool) -> None:
    """Every combination of what the output's folder and the output itself already are:
    either the check passes and a write then succeeds, or it raises DataError; never an
    OSError, and nothing is left beside the path."""
    root = tmp_path_factory.mktemp("layout")
    holder = root / "holder"
    target = holder / "out"
    if parent == "file":
        holder.write_text("x")
    elif parent == "dir":
        holder.mkdir()
        if final == "file":
            target.write_text("old")
        elif final == "dir":
            target.mkdir()
    before = sorted(p.name for p in root.rglob("*"))
    try:
        check_output(target, folder=folder)
    except DataError:
        assert sorted(p.name for p in root.rglob("*")) == before
        return
    finally:
        release_outputs()
    if folder:
        target.mkdir(parents=True, exist_ok=True)
        write_text("new", target / "inside.txt")
    else:
        with atomic_outputs(target) as (tmp,):
            write_text("new", tmp)
        assert target.read_text() == "new"
    shutil.rmtree(root)


@given(pids=st.lists(st.sampled_from(["live", "dead", "self", "other-name"]), max_size=6))
def test_cleanup_keeps_every_live_writers_temp_and_clears_dead_ones(
        tmp_path_factory: pytest.TempPathFactory, pids: list[str]) -> None:
    """Temporary files left beside an output by any mix of writers: those of live processes
    (another run still writing) survive this run's write, those of dead ones are cleared, and
    files of other outputs are never touched."""
    root = tmp_path_factory.mktemp("temps")
    final = root / "out.json"
    live, dead = os.getppid(), _dead_pid()
    made = []
    for k, kind in enumerate(pids):
        pid = {"live": live, "dead": dead, "self": os.getpid(), "other-name": dead}[kind]
        name = f".tmp-{pid}.{'other.json' if kind == 'other-name' else final.name}"
        if kind == "self" or (root / name).exists():
            continue  # this run's own name is its temporary file
        (root / name).write_text(str(k))
        made.append((root / name, kind))
    with atomic_outputs(final) as (tmp,):
        write_text("done", tmp)
    for path, kind in made:
        assert path.exists() == (kind in ("live", "other-name")), (path.name, kind)
    assert final.read_text() == "done"


_DEAD: list[int] = []


def _dead_pid() -> int:
    """The pid of a process that has exited (made once)."""
    if not _DEAD:
        out = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                             capture_output=True, text=True, check=True)
        _DEAD.append(int(out.stdout))
    return _DEAD[0]
