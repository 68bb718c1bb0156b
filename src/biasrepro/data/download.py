"""Verified downloads: a file is used only if it matches what pins it.

A file is pinned by its sha256, by its git object id (``git_blob``: the sha1 of
``b"blob <size>\\0" + bytes``, which a repository's tree lists for every file, so a file read
from a pinned commit is pinned even where nobody published its sha256), or by the lock file
:data:`LOCK_PATH`, where the first download of a file that nothing else pins records its size
and sha256 (the user commits it; later downloads must match it). A download that nothing pins
is refused unless the user opts in (``allow_unpinned``: config ``downloads.allow_unpinned``,
``--allow-unpinned``, or the environment variable :data:`ALLOW_ENV` set to 1), and then it is
recorded in the lock with a loud warning.

The bytes stream into a temporary file beside the target (:func:`biasrepro.io.atomic_outputs`),
which is renamed into place only after the byte count (against ``Content-Length`` and the
pinned size), the content (an HTML page, such as a sign-in or quota page served in place of a
file, is refused; see :func:`sniff`) and the hashes have been checked. A truncated or altered
download raises :class:`~biasrepro.errors.DownloadError`, leaves no temporary file behind and
an earlier download at the target as it was.
"""

from __future__ import annotations

import codecs
import fcntl
import hashlib
import http.client
import json
import logging
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from tqdm import tqdm

from biasrepro.errors import ConfigError, DownloadError, ModelError
from biasrepro.io import atomic_outputs, sha256_file

log = logging.getLogger(__name__)

CHUNK = 1 << 20
TIMEOUT_S = 60


#: the config's sha256 of a file whose hash could not be read when it was configured
UNPINNED = "unpinned"
#: where the size and sha256 of downloads that no config pins are recorded (commit it);
#: relative to the working directory (the workflow's root)
LOCK_PATH = Path("config/downloads.lock")
#: set to 1 to allow downloads that nothing pins (recorded in the lock on first download)
ALLOW_ENV = "BIASREPRO_ALLOW_UNPINNED"
#: what the bytes of each dataset ``format`` must look like (see :func:`sniff`)
EXPECT_BY_FORMAT = {"txt": "text", "csv": "text", "tsv": "text", "json": "json",
                    "jsonl": "json", "zip": "zip", "aclimdb_tar": "gzip",
                    "hf_parquet": "parquet", "tfds": "zip", "kaggle": "text",
                    "wilds": "text", "biasfinder_asset": "text", "gap_tsv": "text",
                    "litbank_tsv": "text", "neuralcoref_tar": "gzip"}
_MAGIC = {"zip": b"PK\x03\x04", "gzip": b"\x1f\x8b", "parquet": b"PAR1"}
_HTML = (b"<!doctype", b"<html", b"<head", b"<body", b"<?xml", b"<script", b"<meta",
         b"<title")
#: bytes read from the start of a file to judge its content
SNIFF_BYTES = 1 << 16


def git_blob_sha1(path: str | Path, chunk: int = CHUNK) -> str:
    """The git object id of a file's bytes: sha1 of ``b"blob <size>\\0"`` + the bytes."""
    path = Path(path)
    h = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def sniff(path: str | Path, expect: str | None, *, url: str) -> None:
    """Refuse bytes that are not what a dataset file of kind ``expect`` looks like: an HTML
    or XML page (a sign-in, virus-scan or quota page served in place of the file) for every
    kind; for ``text`` also binary data (NUL bytes) or bytes that are not UTF-8; for ``json``
    anything not starting with ``{`` or ``[``; for ``zip``, ``gzip`` and ``parquet`` a wrong
    magic number. ``None`` checks for HTML only."""
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    start = head.removeprefix(codecs.BOM_UTF8).lstrip()
    if start[:16].lower().startswith(_HTML):
        raise DownloadError(f"download of {url} is an HTML page, not the data file (a sign-in, "
                            f"virus-scan or quota page?): it starts {start[:60]!r}; nothing was "
                            "kept")
    if expect in (None, "any"):
        return
    if expect in _MAGIC:
        if not head.startswith(_MAGIC[expect]):
            raise DownloadError(f"download of {url} is not a {expect} file (starts "
                                f"{head[:16]!r}); nothing was kept")
        return
    if expect not in ("text", "json"):
        raise ConfigError(f"unknown expected content {expect!r} for {url} (known: text, json, "
                          f"{', '.join(_MAGIC)})")
    if b"\0" in head:
        raise DownloadError(f"download of {url} is binary data, not {expect}; nothing was kept")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as e:
        raise DownloadError(f"download of {url} is not UTF-8 {expect} ({e}); nothing was "
                            "kept") from None
    if expect == "json" and start[:1] not in (b"{", b"["):
        raise DownloadError(f"download of {url} is not JSON (starts {start[:40]!r}); nothing "
                            "was kept")


def read_lock(lock: str | Path = LOCK_PATH) -> dict[str, dict]:
    """The lock's entries: URL -> {name, size, sha256}; no file, no entries."""
    lock = Path(lock)
    if not lock.is_file():
        return {}
    try:
        doc = json.loads(lock.read_text(encoding="utf-8") or "{}")
        files = doc.get("files", {})
        if not isinstance(files, dict):
            raise TypeError("'files' is not a mapping")
        return files
    except (json.JSONDecodeError, AttributeError, TypeError) as e:
        raise ConfigError(f"{lock}: not a downloads lock file ({e})") from None


def _record(lock: Path, url: str, entry: dict) -> None:
    """Add ``url``'s entry to the lock (under an exclusive lock: downloads run in parallel)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.seek(0)
            text = f.read()
            doc = json.loads(text) if text.strip() else {}
            doc["about"] = ("size and sha256 of each download that no config pins, recorded "
                            "on its first download; commit this file. Later downloads must "
                            "match (biasrepro.data.download).")
            files = doc.setdefault("files", {})
            files[url] = entry
            doc["files"] = dict(sorted(files.items()))
            f.seek(0)
            f.truncate()
            f.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def allowed_by_env() -> bool:
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")


def opt_in_from_config(config: dict) -> None:
    """Set :data:`ALLOW_ENV` for the jobs of a run whose configuration opts in
    (``downloads.allow_unpinned: true``). The workflow passes the opt-in this way, not as a
    rule parameter, so switching it off after the first download (recorded in the lock
    file) does not rerun finished downloads."""
    if (config.get("downloads") or {}).get("allow_unpinned"):
        os.environ[ALLOW_ENV] = "1"


def fetch(url: str, *, out: Path, sha256: str | None = None, git_blob: str | None = None,
          size: int | None = None, min_size: int | None = None, expect: str | None = None,
          lock: str | Path = LOCK_PATH, allow_unpinned: bool = False) -> None:
    """Download ``url`` to ``out`` and verify it; do nothing if ``out`` is already verified.

    ``sha256`` and/or ``git_blob`` pin the file; with neither (or ``sha256="unpinned"``) the
    lock's entry for ``url`` pins it, and without one the download is refused unless
    ``allow_unpinned`` (or :data:`ALLOW_ENV`), when it is recorded in ``lock``. ``size``: the
    exact byte count; ``min_size``: the least plausible one; ``expect``: the content kind
    (:func:`sniff`)."""
    out = Path(out)
    want_sha = None if sha256 is None or sha256.lower() == UNPINNED else sha256.lower()
    if want_sha is not None and not re.fullmatch(r"[0-9a-f]{64}", want_sha):
        raise ConfigError(f"sha256 for {url} must be 64 hex digits or {UNPINNED!r}, got "
                          f"{sha256!r}")
    want_blob = None if git_blob is None else git_blob.lower()
    if want_blob is not None and not re.fullmatch(r"[0-9a-f]{40}", want_blob):
        raise ConfigError(f"git_blob for {url} must be 40 hex digits (a git object id), got "
                          f"{git_blob!r}")
    locked = None
    if want_sha is None and want_blob is None:
        locked = read_lock(lock).get(url)
        if locked is None:
            if not (allow_unpinned or allowed_by_env()):
                raise DownloadError(
                    f"refusing the unpinned download {url}: no sha256 or git_blob in the "
                    f"config and no entry in {lock}. To download it once and record its size "
                    f"and sha256 in {lock} (then commit that file), set the config key "
                    f"downloads.allow_unpinned: true or the environment variable "
                    f"{ALLOW_ENV}=1")
        else:
            want_sha, size = str(locked["sha256"]).lower(), int(locked["size"])

    def matches(path: Path) -> str | None:
        """Why ``path`` does not match the pins, or None."""
        got = path.stat().st_size
        if size is not None and got != size:
            return f"{got} bytes, expected {size}"
        if want_sha is not None and (digest := sha256_file(path)) != want_sha:
            return f"sha256 {digest}, expected {want_sha}"
        if want_blob is not None and (blob := git_blob_sha1(path)) != want_blob:
            return f"git blob {blob}, expected {want_blob}"
        return None

    pinned = want_sha is not None or want_blob is not None
    if out.is_file() and pinned:
        why = matches(out)
        if why is None:
            log.info("%s already present and verified; not downloading", out)
            return
        log.warning("%s exists but does not match (%s); downloading again", out, why)
    log.info("downloading %s -> %s", url, out)
    with atomic_outputs(out) as (tmp,):
        got, digest, announced = _stream(url, tmp, label=out.name, size=size)
        for what, want in (("Content-Length", announced), ("pinned size", size)):
            if want is not None and got != want:
                raise DownloadError(
                    f"download of {url} is truncated or wrong: got {got} bytes, "
                    f"expected {want} ({what}); nothing was kept"
                )
        sniff(tmp, expect, url=url)
        if min_size is not None and got < min_size:
            raise DownloadError(f"download of {url} is implausibly small: {got} bytes, at "
                                f"least {min_size} expected; nothing was kept")
        if want_sha is not None and digest != want_sha:
            where = f" (recorded in {lock})" if locked is not None else ""
            raise DownloadError(
                f"sha256 mismatch for {url}: got {digest}, expected {want_sha}{where}; "
                "the file was deleted, not used"
            )
        if want_blob is not None and (blob := git_blob_sha1(tmp)) != want_blob:
            raise DownloadError(
                f"git blob mismatch for {url}: got {blob}, expected {want_blob}; the file "
                "was deleted, not used"
            )
    if pinned:
        log.info("verified %s (%d bytes, sha256 %s)", out, got, digest)
        return
    _record(Path(lock), url, {"name": out.name, "size": got, "sha256": digest})
    bar = "!" * 78
    log.warning("\n%s\nUNPINNED download %s -> %s\n  %d bytes, sha256 %s\n  RECORDED in %s: "
                "COMMIT that file; later downloads must match it.\n%s", bar, url, out, got,
                digest, lock, bar)


def _stream(url: str, dest: Path, *, label: str,
            size: int | None) -> tuple[int, str, int | None]:
    """Copy ``url`` into ``dest``; return (bytes received, their sha256, Content-Length)."""
    h = hashlib.sha256()
    got = 0
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            length = resp.headers.get("Content-Length")
            announced = int(length) if length and length.isdigit() else None
            with open(dest, "wb") as f, tqdm(total=announced or size, unit="B",
                                             unit_scale=True, desc=label) as bar:
                while block := resp.read(CHUNK):
                    f.write(block)
                    h.update(block)
                    got += len(block)
                    bar.update(len(block))
    except http.client.IncompleteRead:  # a chunked transfer cut off inside a chunk
        expected = f", expected {size}" if size is not None else ""
        raise DownloadError(
            f"download of {url} is truncated: the connection closed inside a chunk after "
            f"{got} complete bytes{expected}; nothing was kept"
        ) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
        raise DownloadError(f"download of {url} failed after {got} bytes: {e}") from None
    return got, h.hexdigest(), announced


def hub_snapshot(model: str, revision: str, *, key: str = "biasfinder.coref.model") -> str:
    """``model`` itself when it is a local directory; for a Hub id ``owner/name``, the
    local snapshot of it at ``revision`` (downloaded once into the Hugging Face cache, as
    the hub models of ``models.registry`` are). ``key`` names the config key in errors."""
    if Path(model).is_dir() or model.count("/") != 1 or model.startswith((".", "/", "~")):
        return model
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return snapshot_download(model, revision=revision)
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as e:
        reason = " ".join(str(e).split())[:300] or type(e).__name__
        raise ModelError(f"{key}: cannot fetch '{model}' at revision "
                         f"'{revision}' from the Hugging Face Hub ({reason})") from None
