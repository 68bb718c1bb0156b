"""``docs/architecture.md`` agrees with the workflow: its table of rule files, the commands
their rules call and the package modules behind them."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

from biasrepro import cli, layout

DOC = REPO / "docs" / "architecture.md"
RULES = REPO / "workflow" / "rules"
PACKAGE = REPO / "src" / "biasrepro"
#: a rule's call of the command line (common.smk's launcher helper):
#: `biasrepro("[--gpus N] WORD [WORD] ...")`
CALL = re.compile(r'\bbiasrepro\(f?"(?:--gpus \S+ )?([a-z][a-z-]*)(?: ([a-z][a-z-]*))?')


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
    text = ('biasrepro("--gpus {resources.gpu} biasfinder parse --input x"\n'
            '          " --out y")\nbiasrepro("predict --model m")\n'
            'biasrepro(f"leakage --plan p")\ndef biasrepro(command):\n')
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


def test_one_snakefile_at_the_root_beside_its_profiles() -> None:
    """One Snakefile, at the repository root with the rules in workflow/rules/: Snakemake
    finds it there and finds profiles/default (the one-GPU-job limit) beside it; a second
    Snakefile in a place Snakemake also looks would be ambiguous."""
    assert layout.SNAKEFILE == "Snakefile" and (REPO / layout.SNAKEFILE).is_file()
    assert (REPO / "profiles" / "default" / "profile.yaml").is_file()
    for other in ("snakefile", "workflow/Snakefile", "workflow/snakefile", "workflow/profiles"):
        assert not (REPO / other).exists(), other


# -- the import graph ------------------------------------------------------------------------

#: the package's layers, lowest first, as docs/architecture.md lists them: a module may import
#: from its own layer or a lower one (longest matching prefix decides)
LAYERS = (
    ("floor", ("biasrepro", "biasrepro.errors", "biasrepro.io", "biasrepro.config",
               "biasrepro.gpu", "biasrepro.layout", "biasrepro.models.training")),
    ("metrics", ("biasrepro.metrics",)),
    ("data", ("biasrepro.data",)),
    ("text", ("biasrepro.nlp", "biasrepro.perturb")),
    ("models", ("biasrepro.models", "biasrepro.debias")),
    ("measures", ("biasrepro.biasfinder", "biasrepro.representation", "biasrepro.fairness")),
    ("results", ("biasrepro.analysis", "biasrepro.plan", "biasrepro.calibration",
                 "biasrepro.dvc", "biasrepro.snakedag")),
    ("entry", ("biasrepro.cli", "biasrepro.__main__")),
)


def layer(module: str) -> int:
    best = max(((len(prefix), i) for i, (_, prefixes) in enumerate(LAYERS)
                for prefix in prefixes if module == prefix or module.startswith(prefix + ".")),
               default=None)
    assert best is not None, f"{module} is in no layer of LAYERS (docs/architecture.md)"
    return best[1]


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports at run time (anywhere in the file, function
    bodies included; ``if TYPE_CHECKING:`` blocks left out), from the source with ``ast``."""
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = {id(n) for block in ast.walk(tree) if _type_checking(block)
                   for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name in names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in names:
                        targets.add(full)
                    elif node.module in names:
                        targets.add(node.module)
        graph[name] = targets - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def upward(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} ({LAYERS[layer(m)][0]}) imports {t} ({LAYERS[layer(t)][0]})"
            for m, targets in sorted(graph.items()) for t in sorted(targets)
            if layer(t) > layer(m)]


def test_the_package_has_no_import_cycle_and_no_upward_import() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and graph["biasrepro.cli"]
    assert cycles(graph) == []
    assert upward(graph) == []


def test_the_layers_are_the_documented_ones() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for name, _ in LAYERS:
        assert f"| {name} |" in doc, name


def test_the_import_checks_can_fail(tmp_path: Path) -> None:
    """A planted cycle and a planted upward import are both found; a type-only one is not."""
    pkg = tmp_path / "biasrepro"
    (pkg / "metrics").mkdir(parents=True)
    (pkg / "analysis").mkdir()
    for init in (pkg, pkg / "metrics", pkg / "analysis"):
        (init / "__init__.py").write_text("")
    (pkg / "metrics" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from biasrepro.analysis import b\n\ndef f():\n    from biasrepro.metrics import c\n")
    (pkg / "metrics" / "c.py").write_text("import biasrepro.metrics.a\n")
    (pkg / "analysis" / "b.py").write_text("from biasrepro.metrics.a import f\n")
    graph = import_graph(pkg)
    assert cycles(graph) == [["biasrepro.metrics.a", "biasrepro.metrics.c"]]
    assert upward(graph) == []
    (pkg / "metrics" / "c.py").write_text("from biasrepro.analysis.b import f\n")
    assert upward(import_graph(pkg)) == [
        "biasrepro.metrics.c (metrics) imports biasrepro.analysis.b (results)"]


#: what a reader of a clone cannot follow: the tracker's issue numbers and design notes kept
#: outside the repository (the patterns are assembled so this file does not match itself)
_OUTSIDE = re.compile(
    r"(^|[ (\[,])" + "#" + r"[0-9]{1,2}\b|[Ii]ssues? " + "#?" + r"[0-9]|" + "DESIGN" + r"\.md"
    + "|shared/" + r"(reference|papers)\b"
)
#: where even the optional real-data copies beside the checkout are not named (only tests,
#: which skip without them, and the README's word on those tests may)
_NO_SHARED = ("src/", "workflow/", "config/", "docs/", "published/", "benchmarks/", "scripts/")


def test_no_reference_a_clone_cannot_follow() -> None:
    import subprocess

    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in files:
        path = REPO / name
        binary = {".png", ".svg", ".parquet", ".csv", ".gz", ".lock"}
        if path.suffix in binary or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [
            f"{name}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), 1)
            if _OUTSIDE.search(line) or (name.startswith(_NO_SHARED) and "../" + "shared" in line)
        ]
    assert not found, "references to issues or notes outside the repository:\n" + "\n".join(found)


def test_the_reference_check_can_fail() -> None:
    flagged = ["see (" + "#7)", "Issue" + " 4 adds", "as in issue " + "#12", "DESIGN" + ".md",
               "notes in ../shared/" + "reference/x.md"]
    for line in flagged:
        assert _OUTSIDE.search(line), line
    for line in ["color: #333;", "bias-bench/issues/12", "rank #123"]:
        assert not _OUTSIDE.search(line), line
