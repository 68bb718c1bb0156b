"""One run, both tools agree: a Snakemake run records itself in DVC (dvc.lock complete, `dvc
status` clean), `dvc repro` after a dataset swap reruns exactly the stages the Snakemake DAG
puts downstream of it, `dvc push`/`dvc pull` round-trip every result, and each stage depends
on the package modules its command imports (an edit of the figure code stales only the
figure stage)."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from conftest import BIN, SMALL_CONFIG, downstream_stages, env_with_venv, snakemake, tree_hashes

from biasrepro import config, dvc


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env_with_venv(), capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def _dvc(repo: Path, *args: str) -> str:
    return _run([str(BIN / "dvc"), *args], repo)


def _status(repo: Path) -> dict[str, Any]:
    return json.loads(_dvc(repo, "status", "--json").splitlines()[-1])


def _stages(repo: Path) -> dict[str, Any]:
    return yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]


@pytest.fixture(scope="module")
def recorded_run(small_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A clone (git, DVC) whose config/config.yaml is the small profile, after the README's
    main command (`snakemake --cores all`); and that run's output. It starts from a copy of
    the shared small-profile run: the same configuration, now from config/config.yaml, so
    the run only rewrites the run record (whose configuration files changed) and then
    records everything in DVC, as a run from scratch would."""
    repo = tmp_path_factory.mktemp("recorded") / "repo"
    shutil.copytree(small_run, repo, symlinks=True)
    small = config.load(repo / "config/config.yaml", repo / SMALL_CONFIG)
    (repo / "config/config.yaml").write_text(yaml.safe_dump(small, sort_keys=False))
    _run(["git", "init", "-q"], repo)
    _run(["git", "add", "-A"], repo)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "clone"], repo)
    assert not (repo / "dvc.lock").exists()
    started = time.perf_counter()
    proc = snakemake(["--cores", "all"], cwd=repo)
    print(f"run and record: {time.perf_counter() - started:.1f} s")
    output = proc.stdout + proc.stderr
    assert "rule run_record:" in output  # a run that did something (no hook otherwise)
    return repo, output


@pytest.mark.slow
def test_a_run_records_itself_and_dvc_status_is_clean(recorded_run: tuple[Path, str]) -> None:
    repo, output = recorded_run
    # dvc.yaml described the default profile's DAG: the record step re-derived it first
    assert "regenerated dvc.yaml" in output
    took = float(re.search(r"recorded (\d+) of \1 stages .* in ([\d.]+) s", output)[2])
    print(f"record step: {took} s")
    _run([str(BIN / "biasrepro"), "dvc-yaml", "--check"], repo)
    stages = _stages(repo)
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    assert set(lock) == set(stages)
    for name, stage in stages.items():
        outs = stage.get("outs", []) + [next(iter(m)) for m in stage.get("metrics", [])]
        assert sorted(o["path"] for o in lock[name]["outs"]) == sorted(outs), name
        assert {d["path"] for d in lock[name]["deps"]} == set(stage["deps"]), name
        assert all(x.get("md5") for x in lock[name]["deps"] + lock[name]["outs"]), name
    assert _status(repo) == {}
    assert "Data and pipelines are up to date" in _dvc(repo, "status")


def test_a_checkout_copy_holds_no_run_record(checkout: Path) -> None:
    """The copies tests run the workflow in start without a run record, whatever a run
    recorded in this checkout (dvc.lock, untracked, after the README's main command)."""
    assert not [r for r in dvc.RUN_RECORDS if (checkout / r).exists()]


@pytest.mark.slow
def test_the_readme_commands_in_order_in_one_clone(recorded_run: tuple[Path, str]) -> None:
    """The README's main command, then its test command, in one clone: the tests that copy
    the checkout (this file's, which once errored at setup on the run's dvc.lock) pass there."""
    repo, _ = recorded_run
    assert (repo / "dvc.lock").is_file()
    assert "dvc.lock" in _run(["git", "status", "--porcelain"], repo)  # untracked, as a user has it
    proc = subprocess.run(
        [str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/test_dvc_record.py", "-k", "holds_no_run_record"],
        cwd=repo, env=env_with_venv(), capture_output=True, text=True)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_figure_code_edit_stales_only_the_figure_stages(
        recorded_run: tuple[Path, str]) -> None:
    repo, _ = recorded_run
    figures = repo / "src/biasrepro/analysis/figures.py"
    code = figures.read_bytes()
    figure_stages = {name for name, s in _stages(repo).items()
                     if "--allowed-rules figures " in s["cmd"]}
    assert figure_stages
    try:
        figures.write_bytes(code + b"\n# an edit\n")
        assert set(_status(repo)) == figure_stages
    finally:
        figures.write_bytes(code)
    assert _status(repo) == {}


@pytest.mark.slow
def test_dvc_push_and_pull_round_trip_every_result(recorded_run: tuple[Path, str],
                                                  tmp_path: Path) -> None:
    repo, _ = recorded_run
    _dvc(repo, "remote", "add", "--local", "-d", "store", str(tmp_path / "store"))
    try:
        _dvc(repo, "push")
        before = tree_hashes(repo, "results", "resources")
        outs = {o for s in _stages(repo).values()
                for o in s.get("outs", []) + [next(iter(m)) for m in s.get("metrics", [])]}
        assert {Path(p).parts[0] for p in outs} == {"results", "resources"}
        shutil.rmtree(repo / "results")
        shutil.rmtree(repo / "resources")
        shutil.rmtree(repo / ".dvc" / "cache")
        _dvc(repo, "pull")
        after = tree_hashes(repo, "results", "resources")
        def results(hashes: dict[str, str]) -> dict[str, str]:  # DVC's .gitignore files aside
            return {p: h for p, h in hashes.items() if not p.endswith(".gitignore")}

        assert results(after) == results(before)
        assert _status(repo) == {}
    finally:
        _dvc(repo, "remote", "remove", "--local", "store")


def _contents(repo: Path) -> dict[str, str]:
    """sha256 of every file a stage may read or write, by path relative to ``repo``."""
    return tree_hashes(repo, "results", "resources", "data")


@pytest.mark.slow
def test_a_dataset_swap_reruns_exactly_the_stages_downstream_of_it(
        recorded_run: tuple[Path, str]) -> None:
    repo, _ = recorded_run
    old = {dvc._stage_name(j): j for j in dvc._dag_jobs(dvc.DEFAULT_CONFIG, repo)}
    # swap the SST set for a local file: the world's, its last ten rows left out
    world_sst = repo / "resources/world/sst/SST_fairness_dataset.csv"
    (repo / "data").mkdir()
    (repo / "data/sst.csv").write_text(
        "".join(world_sst.read_text().splitlines(keepends=True)[:-10]))
    cfg = yaml.safe_load((repo / "config/config.yaml").read_text())
    cfg["datasets"]["sst"] = {"source": "local", "format": "csv", "path": "data/sst.csv"}
    (repo / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    _run([str(BIN / "biasrepro"), "dvc-yaml"], repo)  # the DAG changed: re-derive

    # Snakemake's view, from its DAG alone: the jobs that read the new file or whose
    # inputs or settings changed, and every job after them
    new = {dvc._stage_name(j): j for j in dvc._dag_jobs(dvc.DEFAULT_CONFIG, repo)}
    changed = {n for n, j in new.items() if n not in old or "data/sst.csv" in j["input"]
               or (j["input"], j["settings"]) != (old[n]["input"], old[n]["settings"])}
    print(f"changed by the swap: {sorted(changed)}")
    assert "prepare_sst" in changed and "world_sst" not in new
    expected = downstream_stages(list(new.values()), changed)
    assert "pretrain_embedded_albert-tiny" not in expected
    assert {"data_summary", "fairness_report_sentiment"} <= expected

    assert set(_status(repo)) == changed
    before = _contents(repo)
    started = time.perf_counter()
    ran = set(re.findall(r"Running stage '([^']+)'", _dvc(repo, "repro")))
    print(f"dvc repro after the SST swap: {time.perf_counter() - started:.1f} s")
    after = _contents(repo)
    # the swap re-scores the SST sets and nothing else any model scored
    assert not {s for s in ran if s.startswith(("biasfinder_predict", "finetune_"))}, ran
    assert not {s for s in ran if s.startswith("predict_") and not s.endswith(
        ("_fairness-original", "_fairness-balanced"))}, ran
    # DVC compares contents: a stage after the swap whose inputs came out byte-identical
    # (the sentiment leakage check's report, say) does not rerun, nor do stages after it
    # for that reason alone; Snakemake, comparing times, would rerun them all
    def inputs_changed(name: str) -> bool:
        return any(before.get(f) != after.get(f) for i in new[name]["input"]
                   for f in before.keys() | after.keys() if f == i or f.startswith(i + "/"))

    assert ran == {n for n in expected if n in changed or inputs_changed(n)}
    print(f"downstream: {len(expected)} stages, rerun: {len(ran)}, "
          f"inputs unchanged: {sorted(expected - ran)}")
    assert _status(repo) == {}
    summary = json.loads((repo / "results/data/summary.json").read_text())
    assert summary["sst"]["all"]["n"] == cfg["world"]["sst"]["n"] - 10


def _package(root: Path, modules: dict[str, str]) -> Path:
    for name, text in modules.items():
        path = root / "pkg" / f"{name.replace('.', '/')}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_command_modules_follow_the_handler_not_its_neighbours(tmp_path: Path) -> None:
    """The closure starts at the handler's own code and stops at the entry-point module,
    which imports every command; a module importing the entry point still depends on it."""
    src = _package(tmp_path, {
        "__init__": "",
        "cli": "import json\nfrom pkg import base\n\ndef build():\n    from pkg import cmds\n",
        "base": "",
        "cmds": ("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
                 "from pkg import shared\nif TYPE_CHECKING:\n    from pkg import hinted\n\n"
                 "def _helper():\n    from pkg.work import plots\n\n"
                 "def draw(args):\n    _helper()\n\n"
                 "def train(args):\n    from .work import fit\n"),
        "shared": "", "hinted": "", "work.__init__": "",
        "work.plots": "from pkg import cli\n", "work.fit": "from . import maths\n",
        "work.maths": "",
    })

    def handler(name: str) -> Any:
        return SimpleNamespace(__module__="pkg.cmds", __name__=name)

    common = {"pkg", "pkg.cli", "pkg.base", "pkg.cmds", "pkg.shared"}
    assert dvc.command_modules(handler("draw"), "pkg.cli", src) == common | {
        "pkg.work", "pkg.work.plots"}
    assert dvc.command_modules(handler("train"), "pkg.cli", src) == common | {
        "pkg.work", "pkg.work.fit", "pkg.work.maths"}


def test_the_handler_is_the_innermost_subcommand_named() -> None:
    def a(args: Any) -> None: ...

    def b(args: Any) -> None: ...

    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus")
    sub = parser.add_subparsers()
    sub.add_parser("one").set_defaults(func=a)
    group = sub.add_parser("two").add_subparsers()
    group.add_parser("inner").set_defaults(func=b)
    assert dvc.command_handler(["--gpus", "{resources.gpu}", "one", "--x"], parser) is a
    assert dvc.command_handler(["two", "inner", "one"], parser) is b
    assert dvc.command_handler(["none"], parser) is None


def test_a_run_outside_dvc_or_of_another_configuration_is_not_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DVC_STAGE", raising=False)
    assert "no DVC project" in dvc.record(tmp_path)
    (tmp_path / ".dvc").mkdir()
    assert "is not dvc.yaml's" in dvc.record(tmp_path, [Path(SMALL_CONFIG)])
    assert "is not dvc.yaml's" in dvc.record(tmp_path, [], overridden=True)
    assert "not a git work tree" in dvc.record(tmp_path, [Path("config/config.yaml")])
    monkeypatch.setenv("DVC_STAGE", "world_sst")
    assert "inside `dvc repro`" in dvc.record(tmp_path)


@pytest.mark.slow
def test_a_run_killed_while_recording_is_clean_after_the_next_run(
        recorded_run: tuple[Path, str], tmp_path: Path) -> None:
    """SIGKILL the record step once it has begun: the next workflow call says so, plans a
    job that always runs (a resumed run with nothing to do would not record) and, run, leaves
    dvc.lock complete, `dvc status` clean and the warning gone; `biasrepro dvc-record`
    alone repairs it too."""
    import os
    import signal

    source, _ = recorded_run
    repo = tmp_path / "repo"
    shutil.copytree(source, repo, symlinks=True)
    (repo / "dvc.lock").unlink()  # as before the record: nothing recorded yet
    marker = repo / dvc.RECORDING
    proc = subprocess.Popen([str(BIN / "biasrepro"), "dvc-record"], cwd=repo,
                            env=env_with_venv(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while not marker.exists() and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert marker.exists()
    again = tmp_path / "again"
    shutil.copytree(repo, again, symlinks=True)
    dry = snakemake(["--cores", "all", "-n"], cwd=repo)
    assert "the last run was stopped while recording itself in DVC" in dry.stderr
    assert "`biasrepro dvc-record`" in dry.stderr
    # the job that lets the run end in its record (a kill inside DVC's commit may also have
    # touched some files, whose jobs then run again: same results)
    assert re.search(r"^finish_dvc_record\s+1$", dry.stdout, flags=re.M), dry.stdout
    snakemake(["--cores", "all"], cwd=repo)
    assert not marker.exists() and (repo / "dvc.lock").is_file()
    assert _status(repo) == {}
    dry = snakemake(["--cores", "all", "-n"], cwd=repo)
    assert "stopped while recording" not in dry.stderr
    assert "Nothing to be done" in dry.stdout + dry.stderr
    _run([str(BIN / "biasrepro"), "dvc-record"], again)
    assert not (again / dvc.RECORDING).exists() and (again / "dvc.lock").is_file()
    assert _status(again) == {}
