"""Derive ``dvc.yaml`` from the Snakemake DAG, so the two never drift.

See docs/architecture.md, "Conventions".

One DVC stage per Snakemake job. A stage's command asks Snakemake to (re)build exactly
that job's outputs; its deps are the job's input files plus the workflow and package code;
its params are the dotted config keys the rule declares in its ``settings`` parameter
(:func:`biasrepro.config.settings_json`), so ``dvc status`` names exactly the stages whose
data, code or configuration changed. Snakemake remains the single source of truth.

What ``dvc metrics diff`` and ``dvc plots diff`` compare: outputs
matching :data:`METRICS` are the producing stage's ``metrics``, and every output matching a
:data:`PLOTS` pattern gets a top-level plot drawn by a Vega-Lite template written to
``.dvc/plots`` (DVC's built-in templates stack or overlap the rows of a many-keyed table).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from biasrepro import snakedag
from biasrepro.config import REPO_ROOT
from biasrepro.errors import BiasreproError

#: code every stage depends on (directories are hashed as a whole by DVC; see .dvcignore)
CODE_DEPS = [
    "src/biasrepro",
    "workflow/Snakefile",
    "workflow/rules",
    "workflow/schemas",
    "workflow/scripts",
]
DEFAULT_CONFIG = Path("config/config.yaml")
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
    """The Snakemake DAG's jobs (forceall, no execution) in run order, as plain data."""

    def job(j: Any, level: int) -> tuple[Any, dict[str, Any]]:
        order = (level, j.rule.name, sorted(j.wildcards.items()))
        return order, {
            "rule": j.rule.name,
            "wildcards": dict(sorted(j.wildcards.items())),
            "input": sorted({str(i) for i in j.input}),
            "output": [str(o) for o in j.output],
            "settings": json.loads(j.params.get("settings", "{}")),
        }

    jobs, _ = snakedag.dag_jobs(repo / configfile, repo, job)
    # `rule all` has no outputs
    return [data for _, data in sorted(jobs, key=lambda oj: oj[0]) if data["output"]]


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
            "deps": job["input"] + CODE_DEPS,
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
    when it holds ``workflow/Snakefile``, else the one this package belongs to."""
    here = Path.cwd() if start is None else Path(start)
    return here if (here / "workflow" / "Snakefile").is_file() else REPO_ROOT


def write(configfile: Path = DEFAULT_CONFIG, output: Path = Path("dvc.yaml"),
          repo: Path = REPO_ROOT) -> None:
    from biasrepro.io import atomic_outputs, write_text

    rendered = render_files(configfile, repo, output)
    with atomic_outputs(*(repo / path for path in rendered)) as tmps:
        for text, tmp in zip(rendered.values(), tmps, strict=True):
            write_text(text, tmp)


def check(configfile: Path = DEFAULT_CONFIG, output: Path = Path("dvc.yaml"),
          repo: Path = REPO_ROOT) -> None:
    """Raise if ``output`` or a plot template differs from what the Snakemake DAG gives."""
    for rel, text in render_files(configfile, repo, output).items():
        path = repo / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            raise BiasreproError(
                f"{rel} is stale: it no longer matches the Snakemake DAG; "
                "regenerate it with `biasrepro dvc-yaml`"
            )
