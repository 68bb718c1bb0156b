"""The ``biasrepro`` command line. Snakemake rules call these subcommands; so can users.

Settings that come from the workflow configuration are passed as ``--settings``: a JSON
object whose keys are dotted config keys (``{"world.reviews": {...}, "seed": 1}``), or
the path of a YAML/JSON config file from which those keys are read.
Expected failures (bad data, bad config, failed download) print one line ``error: ...``
and exit with status 2; nothing is left at the output paths.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from biasrepro import __version__
from biasrepro import config as cfg
from biasrepro.errors import BiasreproError, ConfigError

log = logging.getLogger("biasrepro")

Handler = Callable[[argparse.Namespace], None]


def _settings(value: str) -> dict[str, Any]:
    """Parse ``--settings``: inline JSON, or a config file path (whole config, validated)."""
    text = value.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise argparse.ArgumentTypeError(f"--settings is not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise argparse.ArgumentTypeError("--settings must be a JSON object")
        return data
    try:
        return {"__config__": cfg.load(value)}
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _need(settings: dict[str, Any], key: str) -> Any:
    """A dotted key from ``--settings`` (inline subset or whole config)."""
    if "__config__" in settings:
        return cfg.get(settings["__config__"], key)
    if key not in settings:
        raise ConfigError(f"--settings lacks the key '{key}'")
    return settings[key]


def _split_inputs(values: Sequence[str]) -> Path | dict[str, Path]:
    """``--input PATH`` or ``--input train=PATH --input test=PATH``."""
    if len(values) == 1 and "=" not in values[0]:
        return Path(values[0])
    out: dict[str, Path] = {}
    for v in values:
        split, sep, path = v.partition("=")
        if not sep or split not in ("train", "test"):
            raise ConfigError(f"--input {v!r}: expected PATH or train=PATH / test=PATH")
        out[split] = Path(path)
    return out


# -- handlers: each imports its module lazily so `biasrepro --help` stays fast ------------


def _world(args: argparse.Namespace) -> None:
    from biasrepro.data.world import comments, reviews, sst

    s, seed = args.settings, _need(args.settings, "seed")
    if args.corpus == "reviews":
        reviews.generate(_need(s, "world.reviews"), seed=seed, out_dir=args.out_dir)
    elif args.corpus == "comments":
        comments.generate(
            _need(s, "world.comments"),
            seed=seed,
            identities=_need(s, "identities"),
            attributes=_need(s, "attributes"),
            preprocess=_need(s, "preprocess.civil_comments"),
            out_dir=args.out_dir,
        )
    else:
        sst.generate(_need(s, "world.sst"), seed=seed, out_dir=args.out_dir)


def _download(args: argparse.Namespace) -> None:
    from biasrepro.data.download import fetch

    fetch(args.url, sha256=args.sha256, out=args.out, size=args.size)


def _prepare(args: argparse.Namespace) -> None:
    if args.dataset == "imdb":
        from biasrepro.data import imdb

        imdb.prepare(_split_inputs(args.input), fmt=args.format, out_dir=args.out_dir)
    elif args.dataset == "civil-comments":
        from biasrepro.data import civil_comments

        s = args.settings
        civil_comments.prepare(
            Path(args.input[0]),
            fmt=args.format,
            member=args.member,
            identities=_need(s, "identities"),
            settings=_need(s, "preprocess.civil_comments"),
            seed=_need(s, "seed"),
            out_dir=args.out_dir,
        )
    else:
        from biasrepro.data import sst

        sst.prepare(Path(args.input[0]), out_dir=args.out_dir)


def _summary(args: argparse.Namespace) -> None:
    from biasrepro.data import summary

    s = args.settings
    summary.write(
        args.data_dir,
        attributes=_need(s, "attributes"),
        identities=_need(s, "identities"),
        identity_threshold=_need(s, "preprocess.civil_comments")["identity_threshold"],
        out_json=args.out_json,
        out_md=args.out_md,
    )


def _config_validate(args: argparse.Namespace) -> None:
    cfg.load(*args.files)
    print(f"ok: {' + '.join(map(str, args.files))} is a valid configuration")


def _dvc_yaml(args: argparse.Namespace) -> None:
    from biasrepro import dvc

    if args.check:
        dvc.check(args.configfile, args.output)
        print(f"ok: {args.output} matches the Snakemake DAG")
    else:
        dvc.write(args.configfile, args.output)
        print(f"wrote {args.output}")


# -- parser -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="biasrepro",
        description="Reproduce BiasFinder and the toxicity bias/fairness study; "
        "each subcommand is one workflow step (see README.md).",
    )
    p.add_argument("--version", action="version", version=f"biasrepro {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def settings_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--settings",
            type=_settings,
            required=True,
            help="JSON object of dotted config keys, or a config YAML file",
        )

    w = sub.add_parser("world", help="generate the planted-bias world (embedded default data)",
                       description="Generate one corpus of the seeded planted-bias world "
                       "(DESIGN.md) with its ground truth.")
    w.add_argument("corpus", choices=["reviews", "comments", "sst"])
    settings_arg(w)
    w.add_argument("--out-dir", type=Path, required=True)
    w.set_defaults(func=_world)

    d = sub.add_parser("download", help="download a file and verify its sha256",
                       description="Download URL to OUT; refuse (and delete) anything "
                       "truncated or not matching the pinned sha256.")
    d.add_argument("--url", required=True)
    d.add_argument("--sha256", required=True)
    d.add_argument("--size", type=int, default=None, help="expected size in bytes")
    d.add_argument("--out", type=Path, required=True)
    d.set_defaults(func=_download)

    pr = sub.add_parser("prepare", help="clean and split a raw dataset into Parquet",
                        description="Clean and split a raw dataset as the papers do "
                        "(README.md, 'Data stage').")
    pr.add_argument("dataset", choices=["imdb", "civil-comments", "sst"])
    pr.add_argument("--input", nargs="+", required=True,
                    help="raw file, or train=PATH test=PATH for split formats")
    pr.add_argument("--format", default=None,
                    help="imdb: aclimdb_tar|hf_parquet|tsv; civil-comments: csv|zip; sst: csv")
    pr.add_argument("--member", default=None, help="CSV member name inside a zip archive")
    pr.add_argument("--settings", type=_settings, default={},
                    help="civil-comments: keys seed, identities, preprocess.civil_comments")
    pr.add_argument("--out-dir", type=Path, required=True)
    pr.set_defaults(func=_prepare)

    s = sub.add_parser("summary", help="summarize the prepared datasets (JSON + Markdown)")
    s.add_argument("--data-dir", type=Path, required=True)
    settings_arg(s)
    s.add_argument("--out-json", type=Path, required=True)
    s.add_argument("--out-md", type=Path, required=True)
    s.set_defaults(func=_summary)

    c = sub.add_parser("config", help="validate configuration files")
    c.add_argument("action", choices=["validate"])
    c.add_argument("files", nargs="+", type=Path, help="merged left to right, as Snakemake does")
    c.set_defaults(func=_config_validate)

    dv = sub.add_parser("dvc-yaml", help="derive dvc.yaml from the Snakemake DAG",
                        description="Write (or --check) dvc.yaml: one DVC stage per "
                        "Snakemake job, with the config keys each rule reads as params.")
    dv.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    dv.add_argument("--output", type=Path, default=Path("dvc.yaml"))
    dv.add_argument("--check", action="store_true", help="fail if the file is stale")
    dv.set_defaults(func=_dvc_yaml)
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
        args.func(args)
    except BiasreproError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    log.info("%s finished in %.1f s", args.command, time.perf_counter() - start)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
