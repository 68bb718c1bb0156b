"""The ``biasrepro`` command line. Snakemake rules call these subcommands; so can users.

Settings that come from the workflow configuration are passed as ``--settings``: a JSON
object whose keys are dotted config keys (``{"world.reviews": {...}, "seed": 1}``), or
the path of a YAML/JSON config file from which those keys are read.
Expected failures (bad data, bad config, failed download) print one line ``error: ...``
and exit with status 2; nothing is left at the output paths.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence

from biasrepro import __version__, gpu
from biasrepro.cli.settings import check_outputs, parse_settings
from biasrepro.errors import BiasreproError
from biasrepro.io import release_outputs

log = logging.getLogger("biasrepro")

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="biasrepro",
        description="Reproduce BiasFinder and the toxicity bias/fairness study; "
        "each subcommand is one workflow step (see README.md).",
        # no abbreviations: a subcommand's `--gpu` must never be read as a prefix of `--gpus`
        allow_abbrev=False,
    )
    p.add_argument("--version", action="version", version=f"biasrepro {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.add_argument(
        "--gpus", type=int, metavar="N",
        help="claim N GPUs and set CUDA_VISIBLE_DEVICES to them (0: hide every GPU); "
        "the workflow passes each job's gpu resource (biasrepro.gpu)",
    )
    p.add_argument(
        "--jobs-per-gpu", type=int, metavar="K", default=1,
        help="with --gpus: share each device with at most K-1 other jobs (default 1: alone; "
        "config compute.jobs_per_gpu)",
    )
    p.add_argument(
        "--gpu-free-mb", type=float, metavar="MB", default=0.0,
        help="with --gpus: wait until each device has MB MiB free before the command runs "
        "(config compute.families.FAMILY.gpu_free_mb; 0: no check)",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from biasrepro.cli import (
        analysis,
        biasfinder,
        coref,
        data,
        fairness,
        leakage,
        models,
        perturb,
        project,
        representation,
    )

    for group in (data, models, project, biasfinder, coref, perturb, fairness, representation,
                  analysis, leakage):
        group.register(sub, parse_settings)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    start = time.perf_counter()
    try:
        check_outputs(args)
        if args.gpus is not None:
            devices = gpu.place(args.gpus, jobs_per_gpu=args.jobs_per_gpu)
            gpu.wait_for_memory(devices, args.gpu_free_mb)
            gpu.warn_if_cpu_only(args.gpus)
        args.func(args)
    except BiasreproError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        release_outputs()
    log.info("%s finished in %.1f s", args.command, time.perf_counter() - start)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
