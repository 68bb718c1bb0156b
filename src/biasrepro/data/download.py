"""Verified downloads: a file is used only if its size and sha256 match the pinned values.

The bytes stream into a temporary file beside the target (:func:`biasrepro.io.atomic_outputs`),
which is renamed into place only after the byte count (against ``Content-Length`` and the
pinned size) and the sha256 have been checked. A truncated or altered download raises
:class:`~biasrepro.errors.DownloadError` and leaves nothing behind (DESIGN.md, "Conventions").
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import re
import urllib.error
import urllib.request
from pathlib import Path

from tqdm import tqdm

from biasrepro.errors import ConfigError, DownloadError
from biasrepro.io import atomic_outputs, sha256_file

log = logging.getLogger(__name__)

CHUNK = 1 << 20
TIMEOUT_S = 60


#: the config's sha256 of a file whose hash could not be read when it was configured
UNPINNED = "unpinned"


def fetch(url: str, *, sha256: str, out: Path, size: int | None = None) -> None:
    """Download ``url`` to ``out`` and verify it; do nothing if ``out`` is already verified."""
    out = Path(out)
    expected = sha256.lower()
    if expected == UNPINNED:
        _fetch_unpinned(url, out=out, size=size)
        return
    if not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise ConfigError(f"sha256 for {url} must be 64 hex digits or {UNPINNED!r}, got "
                          f"{sha256!r}")
    if out.is_file():
        if sha256_file(out) == expected:
            log.info("%s already present with the pinned sha256; not downloading", out)
            return
        log.warning("%s exists but its sha256 differs from the pinned one; downloading again",
                    out)
    log.info("downloading %s -> %s", url, out)
    with atomic_outputs(out) as (tmp,):
        got, digest, announced = _stream(url, tmp, label=out.name, size=size)
        for what, want in (("Content-Length", announced), ("pinned size", size)):
            if want is not None and got != want:
                raise DownloadError(
                    f"download of {url} is truncated or wrong: got {got} bytes, "
                    f"expected {want} ({what}); nothing was kept"
                )
        if digest != expected:
            raise DownloadError(
                f"sha256 mismatch for {url}: got {digest}, expected {expected}; "
                "the file was deleted, not used"
            )
    log.info("verified %s (%d bytes, sha256 %s)", out, got, digest)


def _fetch_unpinned(url: str, *, out: Path, size: int | None) -> None:
    """A download whose sha256 is not known yet: kept, with a warning naming its sha256 (to
    pin in the config); an existing file is kept as it is (DVC records its hash)."""
    if out.is_file():
        log.warning("%s present; UNPINNED download (sha256 %s): pin it in the config", out,
                    sha256_file(out))
        return
    with atomic_outputs(out) as (tmp,):
        got, digest, announced = _stream(url, tmp, label=out.name, size=size)
        for what, want in (("Content-Length", announced), ("pinned size", size)):
            if want is not None and got != want:
                raise DownloadError(f"download of {url} is truncated or wrong: got {got} "
                                    f"bytes, expected {want} ({what}); nothing was kept")
    log.warning("UNPINNED download %s -> %s (%d bytes): sha256 %s; pin it in the config",
                url, out, got, digest)


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
