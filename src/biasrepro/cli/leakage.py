"""``biasrepro leakage``: fail when a model is scored on a text it trained on
(:mod:`biasrepro.data.leakage`)."""

from __future__ import annotations

from typing import Any

from biasrepro.cli.settings import OutputFile
from biasrepro.data.leakage import write


def register(sub: Any, settings_type: Any) -> None:
    """Add ``leakage`` to the top-level parser's subparsers."""
    import argparse

    def plan_type(value: str) -> dict[str, Any]:
        data = settings_type(value)
        if not isinstance(data, dict):
            raise argparse.ArgumentTypeError("the plan is not a JSON object")
        return data

    p = sub.add_parser("leakage", help="fail when a model is scored on a text it trained on",
                       description="Compare each task x model x method's training and "
                       "validation texts with every set it is scored on (whitespace-folded, "
                       "case-sensitive exact match) and fail with the overlap counts.")
    p.add_argument("--plan", type=plan_type, required=True,
                   help="JSON: task, methods: [{method, models, fitted: {name: path}, "
                   "scored: {name: path}}]")
    p.add_argument("--settings", type=settings_type, required=True,
                   help="leakage.identical_texts.TASK (fail | report), as JSON or a config")
    p.add_argument("--out-json", type=OutputFile, required=True)
    p.add_argument("--out-md", type=OutputFile, required=True)
    p.set_defaults(func=_command)


def _command(args: Any) -> None:
    from biasrepro.config import need

    policy = need(args.settings, f"leakage.identical_texts.{args.plan.get('task')}")
    write(args.plan, identical_texts=policy, out_json=args.out_json, out_md=args.out_md)
