"""Shared test helpers: repository paths, a throwaway copy of the checkout, Snakemake runs."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

#: property-based fuzzing: "ci" (the default) is seeded and derandomised; "long" explores
#: (`pytest tests/test_fuzz_inputs.py --hypothesis-profile=long`)
_FUZZ = {"deadline": None, "database": None, "print_blob": True,
         "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.function_scoped_fixture]}
settings.register_profile("ci", max_examples=200, derandomize=True, **_FUZZ)
settings.register_profile("long", max_examples=5000, **_FUZZ)
settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
#: real data samples for format checks; absent in a user's clone (tests skip then)
REALDATA = REPO.parent / "shared" / "realdata"
BIN = Path(sys.executable).parent
SMALL_CONFIG = ".test/config/config.yaml"
#: the toxicity paper's identity groups per attribute (config `attributes`), for unit tests
#: that build their own inputs
ATTRIBUTES = {
    "gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
    "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
    "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]},
}


def realdata(*parts: str) -> Path:
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data sample {path} not present")
    return path


def env_with_venv() -> dict[str, str]:
    """The environment with this interpreter's bin first on PATH (as an activated venv)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    return env


def copy_checkout(dest: Path, source: Path = REPO) -> Path:
    """Copy the checkout's tracked and untracked-but-not-ignored files, a fresh clone's view
    with the work in progress: never what a run recorded in the checkout (``dvc.lock``,
    :data:`biasrepro.dvc.RUN_RECORDS`), so the tests see the same copy before and after the
    README's main command has run in this checkout."""
    from biasrepro.dvc import RUN_RECORDS

    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=source, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, files):
        if rel in RUN_RECORDS:
            continue
        src = source / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def snakemake(args: list[str], cwd: Path, timeout: float | None = None,
              check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(BIN / "snakemake"), *args], cwd=cwd, env=env_with_venv(),
        capture_output=True, text=True, timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A throwaway copy of the checkout to run the workflow in."""
    return copy_checkout(tmp_path / "repo")


def tree_hashes(root: Path, *dirs: str) -> dict[str, str]:
    """sha256 of every file under ``root/dir`` for each dir, by relative path."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for d in dirs for p in sorted((root / d).rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the checkout in which the small profile has run once (the README's
    first command, shrunk); shared by the tests that compare other runs with it. Read-only:
    a test that runs more copies it first."""
    repo = copy_checkout(tmp_path_factory.mktemp("small-run") / "repo")
    started = time.perf_counter()
    snakemake(["--cores", "all", "--configfile", SMALL_CONFIG], cwd=repo)
    print(f"small profile: {time.perf_counter() - started:.1f} s")
    return repo


def sentiment_report(folder: Path, works: dict[str, bool]) -> Path:
    """A sentiment fairness ``report.json`` whose ``gaps.csv`` says which baseline models
    pass the model-works gate (``works``: model -> passes), for the controls that read it."""
    import pandas as pd

    report = folder / "fairness" / "report.json"
    report.parent.mkdir(parents=True)
    report.write_text("{}")
    pd.DataFrame([{"model": m, "method": "baseline", "model_works": w}
                  for m, w in works.items()]).to_csv(report.with_name("gaps.csv"), index=False)
    return report


def downstream_stages(jobs: list[dict], start: set[str]) -> set[str]:
    """``start`` and every stage after them in the Snakemake DAG ``jobs`` (by their inputs),
    as DVC stage names."""
    from biasrepro import dvc

    by_name = {dvc._stage_name(j): j for j in jobs}
    consumers: dict[str, set[str]] = {}
    for name, job in by_name.items():
        for path in job["input"]:
            consumers.setdefault(path, set()).add(name)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        if (name := todo.pop()) not in seen:
            seen.add(name)
            todo.extend(c for o in by_name[name]["output"] for c in consumers.get(o, ()))
    return seen


#: the small profile's planted world and its null world, as configuration files
REVIEW_WORLDS = {"planted": (REPO / "config/config.yaml", REPO / SMALL_CONFIG),
                 "null": (REPO / "config/config.yaml", REPO / SMALL_CONFIG,
                          REPO / "config/null_world.yaml")}


def review_truths(tmp_path_factory: pytest.TempPathFactory, *,
                  pretraining: bool = False) -> dict[str, Path]:
    """The review world's ``ground_truth.json`` of each of :data:`REVIEW_WORLDS` (and with
    ``pretraining``, its stereotype corpus's, under ``NAME-pretraining``)."""
    import copy

    from biasrepro import config as cfg
    from biasrepro.data.world import reviews, stereotypes

    out = {}
    for name, files in REVIEW_WORLDS.items():
        c = cfg.load(*files)
        d = tmp_path_factory.mktemp(name)
        reviews.generate(copy.deepcopy(c["world"]["reviews"]), seed=c["seed"], out_dir=d)
        out[name] = d / "ground_truth.json"
        if pretraining:
            s = tmp_path_factory.mktemp(f"{name}-stereotypes")
            settings = {**copy.deepcopy(c["models"]["embedded"]["stereotypes"]),
                        "n_sentences": 200}
            stereotypes.generate(settings, seed=c["seed"], out_dir=s)
            out[f"{name}-pretraining"] = s / "ground_truth.json"
    return out
