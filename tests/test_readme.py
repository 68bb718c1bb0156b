"""The README's quick start is exactly two one-line commands, and CI runs the second."""

from __future__ import annotations

import re

from conftest import REPO


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^##\s+Quick start\s*$(.*?)(?=^##\s|\Z)", text, re.M | re.S)
    assert section, "README.md has no '## Quick start' section"
    blocks = re.findall(r"```[a-z]*\n(.*?)```", section.group(1), re.S)
    return [line.strip() for b in blocks for line in b.strip().splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_quick_start_has_two_commands_run_then_test() -> None:
    run, test = quick_start_commands()
    assert "scripts/bootstrap" in run and "snakemake --cores all" in run
    assert "scripts/bootstrap" in test and "pytest" in test


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert quick_start_commands()[1] in ci
    assert "set -euo pipefail" in ci
