#!/usr/bin/env python
"""Plant known bugs, one at a time, in a copy of the project and show a test catches each.

Each bug is one exact text replacement in one file, with the light tests that must fail
once it is planted: bugs that reached this project or that a reviewer of its tests found
unnoticed (Pearson's ρ returned as |ρ|, a 90 % bootstrap interval labelled 95 %, figures
drawing something else than their data, Eq. 4/5 taking the largest group of a side, fast
paths the benchmarks compare with a naive one, a drifted Dockerfile, a loop-made rule
without its conda environment).

A bug in ``src/`` goes into a copy of ``src/`` put first on ``PYTHONPATH`` (the editable
install comes after it); a bug in another file goes into a copy of the committed checkout
(``git archive HEAD``), and the tests run from there. The checkout itself is only read.

    .venv/bin/python scripts/planted_bugs.py            # every bug
    .venv/bin/python scripts/planted_bugs.py -k eq4     # the bugs whose key contains eq4

First runs each bug's tests on the checkout as it is (the control: they must pass), then
prints one line per bug (caught, or NOT CAUGHT with the tests' summary). Exits with status
1 when a bug goes unnoticed, when the control fails, or when a bug's anchor text is no
longer in its file (then the bug needs updating to the code as it is now).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bug:
    key: str
    what: str
    path: str  # relative to the checkout
    old: str
    new: str
    tests: tuple[str, ...]  # pytest arguments, run from the checkout (or its copy)


BUGS = (
    Bug("abs_rho", "Pearson's ρ returned as |ρ|", "src/biasrepro/metrics/correlation.py",
        'out["rho"], out["p_value"] = float(result.statistic)',
        'out["rho"], out["p_value"] = abs(float(result.statistic))',
        ("tests/test_correlation.py",)),
    Bug("alpha", "a 90 % bootstrap interval labelled 95 %",
        "src/biasrepro/metrics/group_fairness.py",
        "alpha = (1 - confidence) / 2", "alpha = 1 - confidence",
        ("tests/test_paired_bootstrap.py", "tests/test_group_fairness.py")),
    Bug("na_bars", 'every bar of a figure drawn as "n/a"', "src/biasrepro/analysis/figures.py",
        "            if math.isnan(value):\n", "            if True:\n",
        ("tests/test_figures_drawing.py", "tests/test_figures.py")),
    Bug("btc_inverse", "the BTC figure plotting 100 − rate", "src/biasrepro/analysis/figures.py",
        "(100 * getattr(r, column)", "(100 - 100 * getattr(r, column)",
        ("tests/test_figures_drawing.py", "tests/test_figures.py")),
    Bug("eq4_max", "Eq. 4 taking the largest toxic ratio of a multi-group side",
        "src/biasrepro/metrics/dataset_bias.py",
        "ratios.append(fmean(", "ratios.append(max(", ("tests/test_dataset_bias.py",)),
    Bug("eq5_max", "Eq. 5 taking the largest group of a multi-group side",
        "src/biasrepro/metrics/dataset_bias.py",
        'sizes = [fmean(c["n"]', 'sizes = [max(c["n"]', ("tests/test_dataset_bias.py",)),
    Bug("bootstrap_draw", "the stratified bootstrap never drawing a group's last row",
        "src/biasrepro/metrics/group_fairness.py",
        "draw = rng.integers(0, len(idx), size=",
        "draw = rng.integers(0, len(idx) - 1, size=",
        ("tests/test_benchmarks.py", "-k", "bootstrap")),
    Bug("crows_shift", "CrowS-Pairs' batched path reading the token before each mask",
        "src/biasrepro/representation/crows.py",
        "last_hidden_state[picked, chunk]", "last_hidden_state[picked, chunk - 1]",
        ("tests/test_benchmarks.py", "-k", "crows")),
    Bug("dockerfile_drift", "the Dockerfile drifting from a self-check's anchor text",
        "Dockerfile", "COPY src/ src/", "COPY ./src/ ./src/",
        ("tests/test_container.py", "-k", "apptainer")),
    Bug("loop_rule_conda", "a rule made in a loop losing its conda: directive",
        "workflow/rules/analysis.smk",
        '        conda:\n            CONDA_ENV\n        shell:\n'
        '            biasrepro("analysis cross-study',
        '        shell:\n            biasrepro("analysis cross-study',
        ("tests/test_envs.py", "-k", "conda_env")),
)


def _checkout_copy(into: Path) -> Path:
    """The committed checkout (``git archive HEAD``) unpacked into ``into``."""
    tar = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True,
                         check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")
    return into


def run_tests(tests: tuple[str, ...], root: Path, env: dict[str, str]) -> tuple[int, str]:
    """pytest's exit status on ``tests`` run from ``root``, and its last summary line."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           "--durations=0", *tests], cwd=root, env=env,
                          capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, lines[-1] if lines else proc.stderr.strip()[-200:]


def missing_anchors(bugs=BUGS) -> list[str]:
    """The bugs whose anchor text their file no longer holds (in the checkout)."""
    return [f"{bug.key}: {bug.path} no longer contains {bug.old!r}: update this bug to the "
            "code as it is now" for bug in bugs
            if bug.old not in (REPO / bug.path).read_text(encoding="utf-8")]


def plant(bug: Bug, work: Path) -> tuple[bool, str]:
    """Plant ``bug`` under ``work``; (caught, the tests' last summary line)."""
    env = dict(os.environ)
    if bug.path.startswith("src/"):
        root = REPO
        shutil.copytree(REPO / "src", work / "src")
        target = work / bug.path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work / "src"),
                                                          env.get("PYTHONPATH")]))
    else:
        root = _checkout_copy(work / "checkout")
        target = root / bug.path
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace(bug.old, bug.new, 1), encoding="utf-8")
    status, summary = run_tests(bug.tests, root, env)
    # exit 1: tests failed; 0 passed (the bug went unnoticed); anything else is no verdict
    if status not in (0, 1):
        raise RuntimeError(f"{bug.key}: pytest exited with {status}: {summary}")
    return status == 1, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="select", default="",
                        help="only the bugs whose key contains this text")
    args = parser.parse_args()
    chosen = [b for b in BUGS if args.select in b.key]
    if not chosen:
        parser.error(f"no bug's key contains {args.select!r}: "
                     + ", ".join(b.key for b in BUGS))
    missing = missing_anchors(chosen)
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    # the control: without a planted bug, the same tests pass
    for tests in dict.fromkeys(b.tests for b in chosen):
        status, summary = run_tests(tests, REPO, dict(os.environ))
        print(f"{'control' if status == 0 else 'FAILS':10} {' '.join(tests)}: {summary}",
              flush=True)
        if status != 0:
            print("these tests fail with no bug planted: fix that first", file=sys.stderr)
            return 1
    unnoticed = 0
    for bug in chosen:
        with tempfile.TemporaryDirectory(prefix=f"planted-{bug.key}-") as tmp:
            try:
                caught, summary = plant(bug, Path(tmp))
            except RuntimeError as e:
                print(f"ERROR      {e}", flush=True)
                unnoticed += 1
                continue
        unnoticed += not caught
        print(f"{'caught' if caught else 'NOT CAUGHT':10} {bug.key}: {bug.what} "
              f"({' '.join(bug.tests)}: {summary})", flush=True)
    print(f"{len(chosen) - unnoticed} of {len(chosen)} planted bugs caught", flush=True)
    return 1 if unnoticed else 0


if __name__ == "__main__":
    sys.exit(main())
