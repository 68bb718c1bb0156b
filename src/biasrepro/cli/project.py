"""``biasrepro config|dvc-yaml|dvc-record|plan``: the project's own tools (configuration check,
dvc.yaml from the DAG, recording a run in DVC, the GPU plan)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasrepro import config as cfg
from biasrepro.cli.settings import OutputFile

# -- handlers: each imports its module lazily so `biasrepro --help` stays fast ----------


def _config_validate(args: argparse.Namespace) -> None:
    cfg.load(*args.files)
    print(f"ok: {' + '.join(map(str, args.files))} is a valid configuration")


def _dvc_yaml(args: argparse.Namespace) -> None:
    from biasrepro import dvc

    repo = dvc.checkout_root()
    if args.check:
        dvc.check(args.configfile, args.output, repo)
        print(f"ok: {args.output} matches the Snakemake DAG")
    else:
        dvc.write(args.configfile, args.output, repo)
        print(f"wrote {repo / args.output}")


def _dvc_record(args: argparse.Namespace) -> None:
    from biasrepro import dvc

    print(dvc.record(dvc.checkout_root(), args.run_configfiles, args.run_overrides))


def _plan(args: argparse.Namespace) -> None:
    from biasrepro import dvc, plan

    text = plan.run(args.configfile, gpu=args.gpu, fmt=args.format, out=args.out,
                    costs=args.costs, calibration=args.calibration, assumed=args.assumed,
                    repo=dvc.checkout_root())
    if args.out is None:
        print(text, end="")
    else:
        print(f"wrote {args.out}")


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add this group's commands to the top-level parser's subparsers."""
    c = sub.add_parser("config", help="validate configuration files")
    c.add_argument("action", choices=["validate"])
    c.add_argument("files", nargs="+", type=Path, help="merged left to right, as Snakemake does")
    c.set_defaults(func=_config_validate)

    dv = sub.add_parser("dvc-yaml", help="derive dvc.yaml from the Snakemake DAG",
                        description="Write (or --check) dvc.yaml: one DVC stage per "
                        "Snakemake job, with the config keys each rule reads as params. "
                        "Run it in the checkout (its config and workflow are used).")
    dv.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    dv.add_argument("--output", type=OutputFile, default=Path("dvc.yaml"))
    dv.add_argument("--check", action="store_true", help="fail if the file is stale")
    dv.set_defaults(func=_dvc_yaml)

    dr = sub.add_parser("dvc-record", help="record a finished Snakemake run in DVC",
                        description="Write the outputs of a finished Snakemake run into "
                        "dvc.lock and the DVC cache (regenerating a stale dvc.yaml first), so "
                        "`dvc status` is clean; stages with missing outputs are left out. "
                        "The workflow runs it when a run succeeds (docs/dvc.md). Records "
                        "nothing, and says why, outside a DVC project in a git work tree, "
                        "without DVC, or for a run of another configuration than dvc.yaml's.")
    dr.add_argument("--run-configfiles", type=Path, nargs="*", default=[],
                    help="the --configfile values the run was given (none: the default)")
    dr.add_argument("--run-overrides", action="store_true",
                    help="the run was given --config values")
    dr.set_defaults(func=_dvc_record)

    pl = sub.add_parser("plan", help="the job matrix, its estimated GPU-hours and memory",
                        description="Print every job of the configuration's workflow (as "
                        "`snakemake -n --forceall` lists them, with one GPU per GPU job) per "
                        "rule: jobs, GPU jobs, GPU-hours estimated for one GPU of a class "
                        "(low: early stopping at its earliest; high: every configured "
                        "epoch), the rule's family and its largest job's estimated peak "
                        "memory against the family's mem_mb, from the cost model in "
                        "profiles/slurm/costs.yaml (src/biasrepro/plan.py). A job "
                        "whose estimate exceeds its mem_mb is named in a warning (stderr and "
                        "the Markdown table). Offline; nothing is downloaded or run.")
    pl.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    pl.add_argument("--gpu", default="h200",
                    help="GPU class of the estimate, a name under `gpus` in the cost model")
    pl.add_argument("--format", choices=["md", "csv"], default="md")
    pl.add_argument("--out", type=OutputFile, default=None, help="write here (default: stdout)")
    pl.add_argument("--costs", type=Path, default=None,
                    help="cost model YAML (default: profiles/slurm/costs.yaml)")
    pl.add_argument("--calibration", type=Path, default=None,
                    help="measured GPU speed (default: profiles/slurm/calibration.yaml, where "
                    "it has the GPU class; benchmarks/gpu_check.py --calibrate writes it)")
    pl.add_argument("--assumed", action="store_true",
                    help="ignore any calibration: the cost model's assumed floors and mfu")
    pl.set_defaults(func=_plan)
