"""``docs/architecture.md`` agrees with the workflow: its table of rule files, the commands
their rules call and the package modules behind them."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from conftest import REPO

from biasrepro import cli

DOC = REPO / "docs" / "architecture.md"
RULES = REPO / "workflow" / "rules"
PACKAGE = REPO / "src" / "biasrepro"
#: a rule's call of the command line: `biasrepro.py [--gpus N] WORD [WORD]`
CALL = re.compile(r"biasrepro\.py (?:--gpus \S+ )?([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")


def _steps() -> dict[str, set[str]]:
    """Each top-level command's named steps: its subcommands (``biasfinder btc``) or the
    choices of its first positional argument (``prepare imdb``)."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, p in sub.choices.items():
        first = next((a for a in p._actions if not a.option_strings and a.choices), None)
        out[name] = set(first.choices) if first is not None else set()
    return out


def called_commands(rule_file: Path) -> set[str]:
    """Every command the rules of ``rule_file`` call (``biasfinder btc``, ``predict``)."""
    steps = _steps()
    out = set()
    for first, second in CALL.findall(rule_file.read_text(encoding="utf-8")):
        out.add(f"{first} {second}" if second in steps.get(first, ()) else first)
    return out


def documented() -> dict[str, tuple[set[str], list[str]]]:
    """The table: rule file -> (commands, package modules)."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].endswith(".smk`"):
            ticks = [re.findall(r"`([^`]+)`", c) for c in cells]
            rows[ticks[0][0]] = (set(ticks[1]), ticks[2])
    return rows


def test_every_rule_file_is_in_the_table_with_exactly_the_commands_it_calls() -> None:
    table = documented()
    files = {p.name for p in RULES.glob("*.smk") if called_commands(p)}
    assert set(table) == files
    for name, (commands, _) in table.items():
        assert commands == called_commands(RULES / name), name


@pytest.mark.parametrize("rule_file", sorted(documented()))
def test_every_listed_package_module_exists(rule_file: str) -> None:
    for module in documented()[rule_file][1]:
        assert (PACKAGE / module).exists(), f"{rule_file}: {module} is not in src/biasrepro"


def test_the_extraction_sees_gpu_jobs_and_groups(tmp_path: Path) -> None:
    """The reader of rule files is itself checked on the two shapes a call takes."""
    text = ('"python workflow/scripts/biasrepro.py --gpus {resources.gpu} biasfinder parse '
            '--input x"\n"python workflow/scripts/biasrepro.py predict --model m"\n'
            '"python workflow/scripts/biasrepro.py leakage --plan p"')
    tmp = tmp_path / "x.smk"
    tmp.write_text(text, encoding="utf-8")
    assert called_commands(tmp) == {"biasfinder parse", "predict", "leakage"}


def test_the_layout_lists_every_package_area() -> None:
    doc = DOC.read_text(encoding="utf-8")
    areas = {p.name for p in PACKAGE.iterdir()
             if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py",
                                                                       "__main__.py")}
    for name in sorted(areas):
        assert f"`{name}/`" in doc, name
    for name in sorted(modules):
        assert f"`{name}`" in doc, name


def test_one_snakefile_at_the_root() -> None:
    """Snakemake finds the workflow at the root (as the layout says), and nowhere else."""
    assert (REPO / "Snakefile").is_file()
    assert not (REPO / "workflow" / "Snakefile").exists()
    assert not (REPO / "workflow" / "snakefile").exists()
