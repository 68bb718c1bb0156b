"""The workflow's own DAG, built in-process by Snakemake without running anything.

``biasrepro dvc-yaml`` (one DVC stage per job) and ``biasrepro plan`` (the job matrix and its
GPU-hours) both read the jobs Snakemake would run, as ``snakemake -n --forceall`` lists them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from biasrepro import layout
from biasrepro.errors import ConfigError

T = TypeVar("T")


def dag_jobs(configfile: Path, repo: Path, convert: Callable[[Any, int], T],
             config: Mapping[str, Any] | None = None) -> tuple[list[T], dict[str, Any]]:
    """``convert(job, level)`` for every job of the workflow in ``repo`` under ``configfile``
    (plus ``config`` overrides, as ``--config`` gives them), forceall; ``level`` is the
    longest chain of jobs before it. Also returns the configuration Snakemake resolved. A
    configuration the workflow rejects raises :class:`ConfigError` with its message."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )
    from snakemake_interface_common.exceptions import WorkflowError

    if not configfile.is_file():
        raise ConfigError(f"{configfile}: configuration file not found")
    logging.disable(logging.INFO)  # Snakemake's own progress lines
    try:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            wf = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(configfiles=[configfile],
                                               config=dict(config or {})),
                snakefile=repo / layout.SNAKEFILE,
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

            return [convert(j, level(j)) for j in dag.jobs], dict(workflow.config)
    except WorkflowError as e:
        raise ConfigError(str(e)) from None
    finally:
        logging.disable(logging.NOTSET)
