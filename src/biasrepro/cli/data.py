"""``biasrepro world|download|prepare|summary``: the data stage (the planted-bias world, verified
downloads, cleaning and splitting, the data summary)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasrepro import config as cfg
from biasrepro.cli.settings import OutputFile, OutputFolder, settings_option, split_inputs
from biasrepro.errors import ConfigError

# -- handlers: each imports its module lazily so `biasrepro --help` stays fast ----------


def _world(args: argparse.Namespace) -> None:
    from biasrepro.data.world import benchmarks, comments, reviews, sst_like, stereotypes

    s = args.settings
    seed = cfg.need(s, "seed")
    if args.corpus == "benchmarks":
        benchmarks.generate(cfg.need(s, "models.embedded.stereotypes.associations"),
                            attributes=cfg.need(s, "attributes"), seed=seed,
                            out_dir=args.out_dir)
        return
    if args.corpus == "stereotypes":
        stereotypes.generate(cfg.need(s, "models.embedded.stereotypes"), seed=seed,
                             out_dir=args.out_dir)
    elif args.corpus == "reviews":
        reviews.generate(cfg.need(s, "world.reviews"), seed=seed, out_dir=args.out_dir)
    elif args.corpus == "comments":
        comments.generate(
            cfg.need(s, "world.comments"),
            seed=seed,
            identities=cfg.need(s, "identities"),
            attributes=cfg.need(s, "attributes"),
            preprocess=cfg.need(s, "preprocess.civil_comments"),
            out_dir=args.out_dir,
        )
    else:
        sst_like.generate(cfg.need(s, "world.sst"), seed=seed, out_dir=args.out_dir)


def _download(args: argparse.Namespace) -> None:
    from biasrepro.data.download import EXPECT_BY_FORMAT, fetch

    if args.sha256 is None and args.git_blob is None:
        raise ConfigError("download: give --sha256 (or 'unpinned') and/or --git-blob")
    fetch(args.url, sha256=args.sha256, git_blob=args.git_blob, out=args.out, size=args.size,
          min_size=args.min_size, expect=EXPECT_BY_FORMAT.get(args.format or ""),
          allow_unpinned=args.allow_unpinned, **({"lock": args.lock} if args.lock else {}))


def _prepare(args: argparse.Namespace) -> None:
    if args.dataset == "imdb":
        from biasrepro.data import imdb

        imdb.prepare(split_inputs(args.input), fmt=args.format, out_dir=args.out_dir)
    elif args.dataset == "civil-comments":
        from biasrepro.data import civil_comments

        s = args.settings
        civil_comments.prepare(
            Path(args.input[0]),
            fmt=args.format,
            member=args.member,
            identities=cfg.need(s, "identities"),
            settings=cfg.need(s, "preprocess.civil_comments"),
            seed=cfg.need(s, "seed"),
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
        attributes=cfg.need(s, "attributes"),
        identities=cfg.need(s, "identities"),
        identity_threshold=cfg.need(s, "preprocess.civil_comments")["identity_threshold"],
        out_json=args.out_json,
        out_md=args.out_md,
    )


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add this group's commands to the top-level parser's subparsers."""
    settings_arg = settings_option(settings_type)

    w = sub.add_parser("world", help="generate the planted-bias world (embedded default data)",
                       description="Generate one corpus of the seeded planted-bias world "
                       "(docs/architecture.md) with its ground truth.")
    w.add_argument("corpus", choices=["reviews", "comments", "sst", "stereotypes", "benchmarks"])
    settings_arg(w)
    w.add_argument("--out-dir", type=OutputFolder, required=True)
    w.set_defaults(func=_world)

    d = sub.add_parser("download", help="download a file and verify it",
                       description="Download URL to OUT; refuse (and delete) anything "
                       "truncated, an HTML page, or not matching the pinned sha256 or git "
                       "blob id. A file pinned by neither is pinned by the lock file, where "
                       "its first download (only with --allow-unpinned) records it.")
    d.add_argument("--url", required=True)
    d.add_argument("--sha256", default=None, help="64 hex digits, or 'unpinned'")
    d.add_argument("--git-blob", default=None,
                   help="the file's git object id (40 hex digits: sha1 of 'blob SIZE\\0' + "
                   "bytes), as a repository's tree lists it")
    d.add_argument("--size", type=int, default=None, help="expected size in bytes")
    d.add_argument("--min-size", type=int, default=None,
                   help="smallest plausible size in bytes (catches error pages)")
    d.add_argument("--format", default=None,
                   help="the dataset format (txt, csv, json, zip, ...): what the bytes must "
                   "look like")
    d.add_argument("--lock", type=Path, default=None,
                   help="the downloads lock file (default: config/downloads.lock)")
    d.add_argument("--allow-unpinned", action="store_true",
                   help="download a file nothing pins and record it in the lock")
    d.add_argument("--out", type=OutputFile, required=True)
    d.set_defaults(func=_download)

    pr = sub.add_parser("prepare", help="clean and split a raw dataset into Parquet",
                        description="Clean and split a raw dataset as the papers do "
                        "(README.md, 'Data stage').")
    pr.add_argument("dataset", choices=["imdb", "civil-comments", "sst"])
    pr.add_argument("--input", nargs="+", required=True,
                    help="raw file, or train=PATH test=PATH for split formats")
    pr.add_argument("--format", default=None,
                    help="imdb: aclimdb_tar|hf_parquet|tsv; civil-comments: "
                    "tfds|kaggle|wilds|csv|zip; sst: csv")
    pr.add_argument("--member", default=None, help="CSV member name inside a zip archive")
    pr.add_argument("--settings", type=settings_type, default={},
                    help="civil-comments: keys seed, identities, preprocess.civil_comments")
    pr.add_argument("--out-dir", type=OutputFolder, required=True)
    pr.set_defaults(func=_prepare)

    s = sub.add_parser("summary", help="summarize the prepared datasets (JSON + Markdown)")
    s.add_argument("--data-dir", type=Path, required=True)
    settings_arg(s)
    s.add_argument("--out-json", type=OutputFile, required=True)
    s.add_argument("--out-md", type=OutputFile, required=True)
    s.set_defaults(func=_summary)
