"""Derive ``dvc.yaml`` from the Snakemake DAG, so the two never drift (DESIGN.md, Conventions).

One DVC stage per Snakemake job. A stage's command asks Snakemake to (re)build exactly
that job's outputs; its deps are the job's input files plus the workflow and package code;
its params are the dotted config keys the rule declares in its ``settings`` parameter
(:func:`biasrepro.config.settings_json`), so ``dvc status`` names exactly the stages whose
data, code or configuration changed. Snakemake remains the single source of truth.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import yaml

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
HEADER = (
    "# Generated from the Snakemake DAG by `biasrepro dvc-yaml`; do not edit by hand.\n"
    "# A test fails when this file is stale. Run stages in the project environment\n"
    "# (`. .venv/bin/activate && dvc repro`).\n"
)


def _dag_jobs(configfile: Path, repo: Path) -> list[Any]:
    """Build the Snakemake DAG (forceall, no execution) and return its jobs in run order."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )

    logging.getLogger("snakemake").setLevel(logging.WARNING)
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        wf = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[repo / configfile]),
            snakefile=repo / "workflow" / "Snakefile",
            workdir=repo,
        )
        wf.dag(DAGSettings(forceall=True))
        workflow = wf._workflow  # the pinned Snakemake (9.x) has no public DAG accessor
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        dag = workflow.dag
        depth: dict[Any, int] = {}

        def level(job: Any) -> int:
            if job not in depth:
                depth[job] = 1 + max((level(d) for d in dag.dependencies[job]), default=-1)
            return depth[job]

        jobs = sorted(
            (j for j in dag.jobs if j.output),  # `rule all` has no outputs
            key=lambda j: (level(j), j.rule.name, sorted(j.wildcards.items())),
        )
        return [
            {
                "rule": j.rule.name,
                "wildcards": dict(sorted(j.wildcards.items())),
                "input": sorted({str(i) for i in j.input}),
                "output": [str(o) for o in j.output],
                "settings": json.loads(j.params.get("settings", "{}")),
            }
            for j in jobs
        ]


def _stage_name(job: dict[str, Any]) -> str:
    if not job["wildcards"]:
        return job["rule"]
    suffix = "_".join(str(v) for v in job["wildcards"].values())
    return f"{job['rule']}_{re.sub(r'[^A-Za-z0-9_-]+', '-', suffix)}"


def stages(configfile: Path = DEFAULT_CONFIG, repo: Path = REPO_ROOT) -> dict[str, Any]:
    """The ``dvc.yaml`` content for ``configfile`` as a dict."""
    config_arg = "" if configfile == DEFAULT_CONFIG else f" --configfile {configfile}"
    out: dict[str, Any] = {}
    for job in _dag_jobs(configfile, repo):
        stage: dict[str, Any] = {
            "cmd": (
                f"snakemake --cores all --force --allowed-rules {job['rule']}{config_arg}"
                f" -- {' '.join(job['output'])}"
            ),
            "deps": job["input"] + CODE_DEPS,
        }
        if job["settings"]:
            stage["params"] = [{str(configfile): sorted(job["settings"])}]
        stage["outs"] = job["output"]
        name = _stage_name(job)
        if name in out:
            raise BiasreproError(f"two Snakemake jobs map to the DVC stage name {name!r}")
        out[name] = stage
    return {"stages": out}


def render(configfile: Path = DEFAULT_CONFIG, repo: Path = REPO_ROOT) -> str:
    return HEADER + yaml.safe_dump(stages(configfile, repo), sort_keys=False, width=100)


def checkout_root(start: Path | None = None) -> Path:
    """The checkout to derive ``dvc.yaml`` for: ``start`` (default: the working directory)
    when it holds ``workflow/Snakefile``, else the one this package belongs to."""
    here = Path.cwd() if start is None else Path(start)
    return here if (here / "workflow" / "Snakefile").is_file() else REPO_ROOT


def write(configfile: Path = DEFAULT_CONFIG, output: Path = Path("dvc.yaml"),
          repo: Path = REPO_ROOT) -> None:
    from biasrepro.io import atomic_outputs, write_text

    text = render(configfile, repo)
    with atomic_outputs(repo / output) as (tmp,):
        write_text(text, tmp)


def check(configfile: Path = DEFAULT_CONFIG, output: Path = Path("dvc.yaml"),
          repo: Path = REPO_ROOT) -> None:
    """Raise if ``output`` differs from what the current Snakemake DAG gives."""
    path = repo / output
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if current != render(configfile, repo):
        raise BiasreproError(
            f"{output} is stale: it no longer matches the Snakemake DAG; "
            "regenerate it with `biasrepro dvc-yaml`"
        )
