"""Derive ``dvc.yaml`` from the Snakemake DAG, so the two never drift, and record a finished
Snakemake run in DVC.

See docs/architecture.md, "Conventions", and docs/dvc.md.

One DVC stage per Snakemake job. A stage's command asks Snakemake to (re)build exactly
that job's outputs; its deps are the job's input files plus the code its command runs (the
package modules it imports, :func:`command_modules`, and the workflow files that define its
rule, :func:`workflow_files`); its params are the dotted config keys the rule declares in its
``settings`` parameter (:func:`biasrepro.config.settings_json`), so ``dvc status`` names
exactly the stages whose data, code or configuration changed. Snakemake remains the single
source of truth; :func:`record` writes what a Snakemake run made into ``dvc.lock`` and the
DVC cache, as if ``dvc repro`` had made it.

Outputs matching :data:`METRICS` are the producing stage's ``metrics`` (``dvc metrics diff``),
and every output matching a :data:`PLOTS` pattern gets a top-level plot drawn by a Vega-Lite
template written to ``.dvc/plots`` (DVC's built-in templates stack or overlap the rows of a
many-keyed table).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import json
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from biasrepro import layout, snakedag
from biasrepro.config import REPO_ROOT
from biasrepro.errors import BiasreproError

#: workflow files every stage depends on besides those :func:`workflow_files` derives (the
#: configuration schema every run validates against; a directory is hashed as a whole)
WORKFLOW_DEPS = ["workflow/schemas"]
#: where the package's source lives in the checkout
SRC = Path("src")
DEFAULT_CONFIG = Path("config/config.yaml")
#: what recording a run writes into the checkout outside git's ignore rules: the user commits
#: it with the code that made it (the DVC cache and .dvc/tmp are ignored by .dvc/.gitignore)
RUN_RECORDS = ("dvc.lock",)
#: present while :func:`record` writes dvc.lock and the cache: left behind, it says a run
#: was killed while recording itself (DVC's own .dvc/tmp, which git ignores)
RECORDING = Path(".dvc/tmp/biasrepro-recording")
#: where DVC looks up a plot's ``template`` by name (relative to the project root)
TEMPLATE_DIR = Path(".dvc/plots")

#: outputs (path patterns, ``{wildcard}`` matches one path segment) that their stage declares
#: under ``metrics`` with these properties; cached like every output (results/ stays out of
#: git), so ``dvc metrics diff`` reads a commit's copy from the DVC cache through dvc.lock
METRICS: dict[str, dict[str, Any]] = {"results/metrics.json": {"cache": True}}

#: tabular outputs drawn by ``dvc plots``, one dot per row: ``x`` its value column, ``y`` the
#: category axis; ``color``/``shape`` and the ``row``/``column`` facets are the other key
#: columns; ``interval`` the confidence bounds drawn as a bar through the dot;
#: ``independent_x`` when the facets' values are on different scales. Revisions sit side by
#: side in each category (``dvc plots diff``). ``title`` may use the pattern's wildcards.
PLOTS: dict[str, dict[str, Any]] = {
    "results/biasfinder/{dataset}/table4.csv": {
        "template": "btc_rate", "title": "BTC rate, BiasFinder Table 4 ({dataset})",
        "x": "btc_rate", "x_label": "BTC rate", "y": "model",
        "color": "method", "row": "characteristic",
    },
    "results/{task}/fairness/gaps.csv": {
        "template": "fairness_gaps", "title": "Group fairness gaps with bootstrap CIs ({task})",
        "x": "value", "x_label": "gap", "y": "method", "color": "model",
        "shape": "fairness_set", "row": "metric", "column": "attribute",
        "interval": ["low", "high"],
    },
    "results/{task}/fairness/training_groups.csv": {
        "template": "training_groups",
        "title": "Positive ratio of each identity group in each method's training set ({task})",
        "x": "positive_ratio", "x_label": "positive ratio", "y": "group", "color": "method",
    },
    "results/representation/table4.csv": {
        "template": "representation",
        "title": "Representation bias before and after SentDebias (toxicity study, Table 4)",
        "x": "value", "x_label": "score", "y": "variant", "color": "model",
        "row": "source", "column": "attribute", "independent_x": True,
    },
}
#: plot properties that go into dvc.yaml besides template and title (the rest shape the template)
PLOT_PROPS = ("x", "x_label", "y", "y_label")
HEADER = (
    "# Generated from the Snakemake DAG by `biasrepro dvc-yaml`; do not edit by hand.\n"
    "# A test fails when this file is stale. Run stages in the project environment\n"
    "# (`. .venv/bin/activate && dvc repro`).\n"
)


def _dag_jobs(configfile: Path, repo: Path) -> list[Any]:
    """The Snakemake DAG's jobs (forceall, no execution) in run order, as plain data, each
    with the ``code`` its command runs (:func:`code_deps`)."""
    code: dict[str, list[str]] = {}

    def job(j: Any, level: int) -> tuple[Any, dict[str, Any]]:
        order = (level, j.rule.name, sorted(j.wildcards.items()))
        if j.rule.name not in code and j.output:
            code[j.rule.name] = code_deps(j.rule, repo)
        return order, {
            "rule": j.rule.name,
            "wildcards": dict(sorted(j.wildcards.items())),
            "input": sorted({str(i) for i in j.input}),
            "output": [str(o) for o in j.output],
            "settings": json.loads(j.params.get("settings", "{}")),
            "code": code.get(j.rule.name, []),
        }

    jobs, _ = snakedag.dag_jobs(repo / configfile, repo, job)
    # `rule all` has no outputs
    return [data for _, data in sorted(jobs, key=lambda oj: oj[0]) if data["output"]]


# -- the code a stage depends on ----------------------------------------------------------


def _rel(path: Any, repo: Path) -> str:
    return Path(os.path.relpath(Path(str(path)).resolve(), repo.resolve())).as_posix()


def _command_words(shellcmd: str | None) -> list[str]:
    """The words of a rule's shell command, up to its first shell operator."""
    if not shellcmd:
        return []
    lexer = shlex.shlex(shellcmd, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = []
    try:
        for word in lexer:
            if word and set(word) <= set("|&;<>()"):
                break
            words.append(word)
    except ValueError:  # an unbalanced quote inside a {placeholder}: the words so far
        pass
    return words


def _script(words: list[str], repo: Path) -> Path | None:
    """The checkout's Python script a command runs (``workflow/scripts/biasrepro.py``)."""
    return next((repo / w for w in words if w.endswith(".py") and (repo / w).is_file()), None)


def _entry_point(script: Path, src: Path) -> Callable[..., Any] | None:
    """The function ``script`` calls after importing it from a package under ``src``
    (``main``)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    called = {n.func.id for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.ImportFrom) and node.module and not node.level
                and _module_file(src, node.module)):
            for alias in node.names:
                if (alias.asname or alias.name) in called:
                    return getattr(importlib.import_module(node.module), alias.name)
    return None


class _Parser(Exception):
    """Raised to carry the parser an entry point built back out of it."""


def _entry_parser(main: Callable[..., Any]) -> argparse.ArgumentParser:
    """The argument parser ``main`` builds, taken at the moment it starts parsing (so it does
    not matter which function builds it or where that lives)."""
    saved = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parser(self)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign,assignment]
    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[method-assign,assignment]
    try:
        main([])
    except _Parser as e:
        return e.args[0]
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = saved
    raise BiasreproError(f"{main.__module__}.{main.__name__} parsed no arguments")


def command_handler(words: Sequence[str], parser: argparse.ArgumentParser) -> Any:
    """The function the command line ``words`` dispatches to: the callable default of the
    innermost subcommand the words name (``biasfinder annotate sample`` → its handler)."""
    node = parser
    for word in words:
        sub = next((a for a in node._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is not None and word in sub.choices:
            node = sub.choices[word]
    handlers = [v for v in node._defaults.values() if callable(v)]
    return handlers[0] if node is not parser and len(handlers) == 1 else None


def _module_file(src: Path, name: str) -> Path | None:
    base = src.joinpath(*name.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()),
                None)


def _walk(node: ast.AST) -> Any:
    """``ast.walk`` that skips ``if TYPE_CHECKING:`` blocks (imports for type hints only)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            todo.extend(n.orelse)
        else:
            todo.extend(ast.iter_child_nodes(n))


def _imports(nodes: Sequence[ast.AST], module: str, src: Path) -> set[str]:
    """The package modules ``nodes`` (code of ``module``) import, with their packages."""
    is_pkg = (_module_file(src, module) or Path()).name == "__init__.py"
    names: set[str] = set()
    for node in nodes:
        for n in _walk(node):
            if isinstance(n, ast.Import):
                names |= {a.name for a in n.names}
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    parts = module.split(".")[: len(module.split(".")) - n.level + is_pkg]
                    base = ".".join([*parts, *([base] if base else [])])
                names |= {base} | {f"{base}.{a.name}" for a in n.names}
    out = set()
    for name in names:
        parts = name.split(".")
        out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return {m for m in out if _module_file(src, m)}


@functools.lru_cache(maxsize=1024)
def _parse(path: Path, mtime_ns: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _function_code(tree: ast.Module, name: str) -> list[ast.AST]:
    """The top-level definition ``name`` of a module and every top-level definition it
    refers to by name, transitively."""
    defs = {d.name: d for d in tree.body
            if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    seen: dict[str, ast.AST] = {}
    todo = [name]
    while todo:
        if (n := todo.pop()) in defs and n not in seen:
            seen[n] = defs[n]
            todo.extend(x.id for x in ast.walk(defs[n]) if isinstance(x, ast.Name))
    return list(seen.values())


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """A module's statements that run when it is imported (not its definitions' bodies)."""
    return [s for s in tree.body
            if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def command_modules(handler: Any, entry: str, src: Path) -> set[str]:
    """The package modules a command runs when its ``handler`` (a function of the command
    line) is called through the entry-point module ``entry``, by the import graph of the
    source under ``src``.

    From the handler's own module only what the handler needs is followed: the module's
    top-level imports (they run when it is imported) and the imports inside the handler and
    the module's definitions it uses, since handlers import their work lazily; a command
    module thus does not tie every one of its commands to every other's code. Every other
    module is followed whole (lazy imports included), except the entry-point module: it
    registers every command and so imports everything, so it counts as a module every
    command runs (with its top-level imports) but its other imports are not followed.
    """
    def tree(name: str) -> ast.Module:
        path = _module_file(src, name)
        assert path is not None
        return _parse(path, path.stat().st_mtime_ns)

    own = handler.__module__
    own_tree = tree(own)
    start = (_imports(_module_level(own_tree), own, src)
             | _imports(_function_code(own_tree, handler.__name__), own, src)
             | _imports(_module_level(tree(entry)), entry, src) | {own, entry})
    seen = {own, entry}
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imports([tree(name)], name, src))
    return seen


def workflow_files(rule: Any, repo: Path) -> list[str]:
    """The workflow files a rule's jobs need: the Snakefile, the rule's own rule file and the
    files it includes (its helpers), the included files that define no rule and that no rule
    file includes (helpers every rule file shares) and :data:`WORKFLOW_DEPS`. Another rule
    file's changes reach a stage only through what they change of its job (its inputs and
    outputs, and so dvc.yaml)."""
    workflow = rule.workflow
    main = _rel(workflow.main_snakefile, repo)
    with_rules = {_rel(r.snakefile, repo) for r in workflow.rules}
    included = [_rel(f.get_path_or_uri(secret_free=True), repo) for f in workflow.included]
    own = {f: _includes(repo / f, (repo / f).stat().st_mtime_ns, repo)
           for f in with_rules if f != main}
    helpers = set().union(*own.values())
    shared = [f for f in included if f not in with_rules and f not in helpers]
    mine = _rel(rule.snakefile, repo)
    return sorted({main, mine, *own.get(mine, ()), *shared, *WORKFLOW_DEPS})


_INCLUDE = re.compile(r"""^include:\s*(?:r|f)?["']([^"']+)["']""", re.M)


@functools.lru_cache(maxsize=64)
def _includes(snakefile: Path, mtime_ns: int, repo: Path) -> frozenset[str]:
    """The files ``snakefile`` includes (``include: "PATH"``, relative to its folder); read
    once per version of the file, not once per rule that asks."""
    text = snakefile.read_text(encoding="utf-8")
    return frozenset(_rel((snakefile.parent / p).resolve(), repo)
                     for p in _INCLUDE.findall(text))


_PARSERS: dict[Path, tuple[str, argparse.ArgumentParser]] = {}


def code_deps(rule: Any, repo: Path) -> list[str]:
    """What a rule's command runs, as paths relative to ``repo``: its workflow files
    (:func:`workflow_files`), the script it calls and the package modules
    (:func:`command_modules`) of the command-line subcommand its shell command names. A
    rule whose command is not such a call depends on the whole source tree."""
    words = _command_words(rule.shellcmd)
    deps = set(workflow_files(rule, repo))
    script = _script(words, repo)
    main = _entry_point(script, repo / SRC) if script is not None else None
    if script is None or main is None:
        return sorted(deps | {SRC.as_posix()})
    if script not in _PARSERS:
        _PARSERS[script] = main.__module__, _entry_parser(main)
    entry, parser = _PARSERS[script]
    handler = command_handler(words[words.index(str(script.relative_to(repo))) + 1:], parser)
    if handler is None:
        return sorted(deps | {_rel(script, repo), SRC.as_posix()})
    src = repo / SRC
    modules = command_modules(handler, entry, src)
    files = {_rel(_module_file(src, m), repo) for m in modules}
    return sorted(deps | files | {_rel(script, repo)})


def _stage_name(job: dict[str, Any]) -> str:
    if not job["wildcards"]:
        return job["rule"]
    suffix = "_".join(str(v) for v in job["wildcards"].values())
    return f"{job['rule']}_{re.sub(r'[^A-Za-z0-9_-]+', '-', suffix)}"


def _pattern(pattern: str) -> re.Pattern[str]:
    """A path pattern as a regex: ``{name}`` matches one path segment."""
    parts = re.split(r"\{(\w+)\}", pattern)
    return re.compile("".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
    ))


def _match(table: dict[str, dict[str, Any]], path: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The spec of the first pattern in ``table`` matching ``path``, and its wildcards."""
    for pattern, spec in table.items():
        if m := _pattern(pattern).fullmatch(path):
            return spec, m.groupdict()
    return {}, {}


def _template_name(spec: dict[str, Any]) -> str:
    return f"biasrepro_{spec['template']}"


def document(jobs: list[dict[str, Any]], configfile: Path = DEFAULT_CONFIG) -> dict[str, Any]:
    """The ``dvc.yaml`` content for the DAG's ``jobs`` (as :func:`_dag_jobs` lists them)."""
    config_arg = "" if configfile == DEFAULT_CONFIG else f" --configfile {configfile}"
    out: dict[str, Any] = {}
    plots: dict[str, dict[str, Any]] = {}
    for job in jobs:
        stage: dict[str, Any] = {
            "cmd": (
                f"snakemake --cores all --force --allowed-rules {job['rule']}{config_arg}"
                f" -- {' '.join(job['output'])}"
            ),
            "deps": job["input"] + job.get("code", []),
        }
        if job["settings"]:
            stage["params"] = [{str(configfile): sorted(job["settings"])}]
        metric = {o: _match(METRICS, o)[0] for o in job["output"]}
        if outs := [o for o in job["output"] if not metric[o]]:
            stage["outs"] = outs
        if metrics := [{o: dict(metric[o])} for o in job["output"] if metric[o]]:
            stage["metrics"] = metrics
        for path in job["output"]:
            spec, wildcards = _match(PLOTS, path)
            if spec:
                plots[path] = {"template": _template_name(spec),
                               "title": spec["title"].format(**wildcards),
                               **{k: spec[k] for k in PLOT_PROPS if k in spec}}
        name = _stage_name(job)
        if name in out:
            raise BiasreproError(f"two Snakemake jobs map to the DVC stage name {name!r}")
        out[name] = stage
    doc: dict[str, Any] = {"stages": out}
    if plots:
        doc["plots"] = [{path: plots[path]} for path in sorted(plots)]
    return doc


def template(spec: dict[str, Any]) -> dict[str, Any]:
    """The Vega-Lite template drawing one :data:`PLOTS` spec: a dot per row (its ``x`` value
    against its ``y`` category), revisions and colours side by side, optional CI bars and
    facets."""
    x, y = "<DVC_METRIC_X>", "<DVC_METRIC_Y>"
    x_enc = {"field": x, "type": "quantitative", "title": "<DVC_METRIC_X_LABEL>",
             "scale": {"zero": False}}
    encoding: dict[str, Any] = {
        "x": x_enc,
        "y": {"field": y, "type": "nominal", "title": "<DVC_METRIC_Y_LABEL>",
              "axis": {"labelLimit": 400}},
        "yOffset": {"field": "dvc_offset", "type": "nominal"},
    }
    if spec.get("color"):
        encoding["color"] = {"field": spec["color"], "type": "nominal",
                             "legend": {"labelLimit": 400}}
    point: dict[str, Any] = {"mark": {"type": "point", "filled": True,
                                      "tooltip": {"content": "data"}}}
    if spec.get("shape"):
        point["encoding"] = {"shape": {"field": spec["shape"], "type": "nominal"}}
    layers = [point]
    numeric = [x]
    offset = [spec[ch] for ch in ("color", "shape") if spec.get(ch)]
    if spec.get("interval"):
        low, high = spec["interval"]
        numeric += [low, high]
        layers.insert(0, {"mark": "rule", "encoding": {
            "x": {**x_enc, "field": low}, "x2": {"field": high}}})
    view = {"width": 300, "height": {"step": 8, "for": "offset"}, "encoding": encoding,
            "layer": layers}
    content: dict[str, Any] = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "<DVC_METRIC_TITLE>",
        "data": {"values": "<DVC_METRIC_DATA>"},
        # CSV cells reach the template as strings
        "transform": [{"calculate": f"toNumber(datum['{f}'])", "as": f} for f in numeric] + [
            # each revision, colour and shape gets its own line within a category
            {"calculate": " + '|' + ".join(f"datum['{f}']" for f in ["rev", *offset]),
             "as": "dvc_offset"}],
    }
    facet = {ch: {"field": spec[ch], "type": "nominal"} for ch in ("row", "column")
             if spec.get(ch)}
    if not facet:
        return content | view
    content |= {"facet": facet, "spec": view}
    if spec.get("independent_x"):
        content["resolve"] = {"scale": {"x": "independent"}}
    return content


def files(jobs: list[dict[str, Any]], configfile: Path = DEFAULT_CONFIG,
          output: Path = Path("dvc.yaml")) -> dict[Path, str]:
    """``dvc.yaml`` (at ``output``) for ``jobs`` and the plot templates it names, by path
    relative to the project root."""
    doc = document(jobs, configfile)
    out = {output: HEADER + yaml.safe_dump(doc, sort_keys=False, width=100)}
    used = {props["template"] for plot in doc.get("plots", []) for props in plot.values()}
    for spec in PLOTS.values():
        if (name := _template_name(spec)) in used:
            out[TEMPLATE_DIR / f"{name}.json"] = json.dumps(template(spec), indent=2) + "\n"
    return out


def render_files(configfile: Path = DEFAULT_CONFIG, repo: Path = REPO_ROOT,
                 output: Path = Path("dvc.yaml")) -> dict[Path, str]:
    """:func:`files` for the Snakemake DAG of ``configfile`` in the checkout ``repo``."""
    return files(_dag_jobs(configfile, repo), configfile, output)


def checkout_root(start: Path | None = None) -> Path:
    """The checkout to derive ``dvc.yaml`` for: ``start`` (default: the working directory)
    when it holds the workflow's Snakefile, else the one this package belongs to."""
    here = Path.cwd() if start is None else Path(start)
    return here if (here / layout.SNAKEFILE).is_file() else REPO_ROOT


def _stale(rendered: dict[Path, str], repo: Path) -> list[Path]:
    return [rel for rel, text in rendered.items()
            if not (repo / rel).exists() or (repo / rel).read_text(encoding="utf-8") != text]


def _write(rendered: dict[Path, str], repo: Path) -> None:
    from biasrepro.io import atomic_outputs, write_text

    with atomic_outputs(*(repo / path for path in rendered)) as tmps:
        for text, tmp in zip(rendered.values(), tmps, strict=True):
            write_text(text, tmp)


def write(configfile: Path = DEFAULT_CONFIG, output: Path = Path("dvc.yaml"),
          repo: Path = REPO_ROOT) -> None:
    _write(render_files(configfile, repo, output), repo)


def check(configfile: Path = DEFAULT_CONFIG, output: Path = Path("dvc.yaml"),
          repo: Path = REPO_ROOT) -> None:
    """Raise if ``output`` or a plot template differs from what the Snakemake DAG gives."""
    for rel in _stale(render_files(configfile, repo, output), repo)[:1]:
        raise BiasreproError(
            f"{rel} is stale: it no longer matches the Snakemake DAG; "
            "regenerate it with `biasrepro dvc-yaml`"
        )


# -- recording a Snakemake run in DVC -----------------------------------------------------


def _same_config(run_configfiles: Sequence[Path], overridden: bool, repo: Path) -> bool:
    """Whether a run used exactly dvc.yaml's configuration (:data:`DEFAULT_CONFIG`)."""
    default = (repo / DEFAULT_CONFIG).resolve()
    return not overridden and all((repo / f).resolve() == default for f in run_configfiles)


@contextlib.contextmanager
def _quick_commit(dvc_repo: Any) -> Iterator[None]:
    """``dvc commit`` without what makes it slow or noisy for a whole run: the params file is
    parsed once rather than once per stage and read (DVC parses YAML in pure Python), the
    run cache (``dvc repro``'s memo of past runs; dvc.lock and the cache are the record) is
    not filled, and DVC's warning about each empty file (an empty ``__init__.py``) is
    silenced."""
    import copy
    import logging

    from dvc.dependency import param

    load_path = param.load_path

    @functools.lru_cache(maxsize=16)
    def parsed(path: str, mtime_ns: int, fs: Any) -> Any:
        return load_path(path, fs)

    def cached_load(path: str, fs: Any, **kwargs: Any) -> Any:
        if kwargs or not os.path.isfile(path):
            return load_path(path, fs, **kwargs)
        return copy.deepcopy(parsed(path, os.stat(path).st_mtime_ns, fs))

    dvc_log = logging.getLogger("dvc")
    level, save = dvc_log.level, dvc_repo.stage_cache.save
    param.load_path = cached_load
    dvc_repo.stage_cache.save = lambda stage: None
    dvc_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        param.load_path = load_path
        dvc_repo.stage_cache.save = save
        dvc_log.setLevel(level)


def interrupted_record(repo: Path = REPO_ROOT) -> str | None:
    """A warning when the last run was killed while recording itself in DVC (its marker,
    :data:`RECORDING`, is still there): dvc.lock may be incomplete. The Snakefile then adds
    a job that always runs, so a resumed run with nothing else to do still ends in its
    record. None otherwise."""
    if not (repo / RECORDING).exists():
        return None
    return ("the last run was stopped while recording itself in DVC, so dvc.lock may be "
            "incomplete; this run records itself again when it succeeds (or "
            "finish the record alone with `biasrepro dvc-record`; the results are complete)")


def record(repo: Path = REPO_ROOT, run_configfiles: Sequence[Path] = (),
           overridden: bool = False) -> str:
    """Record the Snakemake run that just finished in ``repo`` in DVC, as ``dvc repro`` would
    have: regenerate ``dvc.yaml`` when the DAG changed, then hash every stage's deps, params
    and outputs into ``dvc.lock`` and put the outputs in the DVC cache (``dvc commit
    --force``), so ``dvc status`` is clean and ``dvc push`` has everything. Returns what it
    did, in one line.

    Nothing is recorded, and the line says why, when: the run ran inside ``dvc repro`` (DVC
    records that stage itself); ``repo`` is no DVC project in a git work tree; DVC is not
    installed; or the run's configuration is not ``dvc.yaml``'s (``--configfile`` other than
    :data:`DEFAULT_CONFIG`, or ``--config``). Stages with a missing output or dep (a run of
    some targets only) are left out and counted. A DVC failure raises
    :class:`BiasreproError`.
    """
    started = time.perf_counter()
    skip = "run not recorded in DVC: "
    if os.environ.get("DVC_STAGE"):
        return skip + "it ran inside `dvc repro`, which records its stage itself"
    if not (repo / ".dvc").is_dir():
        return skip + f"{repo} is no DVC project (no .dvc/)"
    if not _same_config(run_configfiles, overridden, repo):
        given = " ".join(map(str, run_configfiles)) + (" --config ..." if overridden else "")
        return (skip + f"its configuration ({given.strip()}) is not dvc.yaml's "
                f"({DEFAULT_CONFIG}); see docs/dvc.md")
    try:
        from dvc.exceptions import DvcException
        from dvc.repo import Repo
        from dvc.scm import SCMError
    except ImportError:
        return skip + "DVC is not installed"
    try:
        dvc_repo = Repo(str(repo))
    except SCMError:
        return skip + f"{repo} is not a git work tree (DVC records runs in one)"
    notes = []
    marker = repo / RECORDING
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{os.getpid()}\n", encoding="utf-8")
    rendered = render_files(DEFAULT_CONFIG, repo)
    if stale := _stale(rendered, repo):
        _write(rendered, repo)
        notes.append(f"regenerated {', '.join(map(str, stale))} (the DAG changed)")
    try:
        with dvc_repo, _quick_commit(dvc_repo):
            stages = list(dvc_repo.index.stages)
            done = [st for st in stages if all(
                os.path.exists(repo / str(x.def_path)) for x in [*st.deps, *st.outs])]
            if len(done) == len(stages):
                dvc_repo.commit(None, force=True)
            else:
                for st in done:
                    dvc_repo.commit(st.addressing, force=True)
    except DvcException as e:
        raise BiasreproError(
            f"recording the run in DVC failed: {e}. The run's results are complete; retry "
            "with `biasrepro dvc-record`"
        ) from None
    marker.unlink(missing_ok=True)
    notes.insert(0, f"recorded {len(done)} of {len(stages)} stages in dvc.lock and the DVC "
                    f"cache in {time.perf_counter() - started:.1f} s")
    if len(done) < len(stages):
        notes.append(f"{len(stages) - len(done)} stages have missing outputs or inputs "
                     "(a run of some targets) and were left out")
    return "; ".join(notes)
