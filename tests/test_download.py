"""Verified downloads against a real HTTP server on 127.0.0.1 (only the network is local)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from biasrepro.data.download import fetch, git_blob_sha1
from biasrepro.errors import ConfigError, DownloadError

PAYLOAD = bytes(range(256)) * 4096 + b"the end"  # ~1 MiB, more than one read chunk
SHA = hashlib.sha256(PAYLOAD).hexdigest()
WRONG = b"these are not the bytes you pinned"
CUT = 1000  # bytes the truncating handler sends before closing


class Handler(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        Handler.requests.append(self.path)
        if self.path == "/data.bin":
            self._send(PAYLOAD, len(PAYLOAD))
        elif self.path == "/wrong.bin":
            self._send(WRONG, len(WRONG))
        elif self.path == "/truncated.bin":
            # announce the whole file, send a part, close the connection
            self._send(PAYLOAD[:CUT], len(PAYLOAD))
        elif self.path == "/chunked-truncated.bin":
            # a chunked transfer that announces a chunk and closes inside it
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n" % len(PAYLOAD) + PAYLOAD[:CUT])
            self.wfile.flush()
            self.close_connection = True
        else:
            self.send_error(404, "no such file")

    def _send(self, body: bytes, length: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):  # keep test output quiet
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_verified_download_lands_and_leaves_no_temp_file(server, tmp_path):
    out = tmp_path / "data.bin"
    fetch(f"{server}/data.bin", sha256=SHA, out=out, size=len(PAYLOAD))
    assert out.read_bytes() == PAYLOAD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.bin"]


def test_uppercase_pinned_hash_is_accepted(server, tmp_path):
    out = tmp_path / "data.bin"
    fetch(f"{server}/data.bin", sha256=SHA.upper(), out=out)
    assert out.read_bytes() == PAYLOAD


def test_checksum_mismatch_names_both_hashes_and_keeps_nothing(server, tmp_path):
    out = tmp_path / "wrong.bin"
    with pytest.raises(DownloadError) as err:
        fetch(f"{server}/wrong.bin", sha256=SHA, out=out)
    message = str(err.value)
    assert SHA in message and hashlib.sha256(WRONG).hexdigest() in message
    assert f"{server}/wrong.bin" in message
    assert list(tmp_path.iterdir()) == []


def test_truncated_transfer_is_refused_with_byte_counts(server, tmp_path):
    out = tmp_path / "truncated.bin"
    with pytest.raises(DownloadError) as err:
        fetch(f"{server}/truncated.bin", sha256=SHA, out=out)
    message = str(err.value)
    assert f"{server}/truncated.bin" in message
    assert str(CUT) in message and str(len(PAYLOAD)) in message
    assert list(tmp_path.iterdir()) == []


def test_truncated_chunked_transfer_is_refused(server, tmp_path):
    out = tmp_path / "data.bin"
    with pytest.raises(DownloadError) as err:
        fetch(f"{server}/chunked-truncated.bin", sha256=SHA, out=out, size=len(PAYLOAD))
    message = str(err.value)
    assert "truncated" in message and f"{server}/chunked-truncated.bin" in message
    assert f"expected {len(PAYLOAD)}" in message
    assert list(tmp_path.iterdir()) == []


def test_size_differing_from_the_pin_is_refused(server, tmp_path):
    out = tmp_path / "data.bin"
    with pytest.raises(DownloadError, match=rf"got {len(PAYLOAD)} bytes, expected 123"):
        fetch(f"{server}/data.bin", sha256=SHA, out=out, size=123)
    assert list(tmp_path.iterdir()) == []


def test_http_error_is_a_download_error(server, tmp_path):
    with pytest.raises(DownloadError, match="404"):
        fetch(f"{server}/missing.bin", sha256=SHA, out=tmp_path / "x.bin")
    assert list(tmp_path.iterdir()) == []


def test_verified_file_already_present_is_not_downloaded_again(server, tmp_path):
    out = tmp_path / "data.bin"
    out.write_bytes(PAYLOAD)
    before = len(Handler.requests)
    fetch(f"{server}/data.bin", sha256=SHA, out=out)
    assert len(Handler.requests) == before
    assert out.read_bytes() == PAYLOAD


def test_stale_file_with_wrong_hash_is_replaced(server, tmp_path):
    out = tmp_path / "data.bin"
    out.write_bytes(b"old partial junk")
    fetch(f"{server}/data.bin", sha256=SHA, out=out)
    assert out.read_bytes() == PAYLOAD


def test_a_failed_download_leaves_an_earlier_file_as_it_was(server, tmp_path):
    out = tmp_path / "wrong.bin"
    out.write_bytes(b"an earlier run's file")
    with pytest.raises(DownloadError):
        fetch(f"{server}/wrong.bin", sha256=SHA, out=out)
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left beside it
    assert out.read_bytes() == b"an earlier run's file"


def test_cli_download_failure_is_one_error_line_and_exit_2(server, tmp_path):
    out = tmp_path / "wrong.bin"
    proc = subprocess.run(
        [sys.executable, "-m", "biasrepro", "download", "--url", f"{server}/wrong.bin",
         "--sha256", SHA, "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "sha256 mismatch" in errors[0]
    assert not out.exists()


def test_cli_download_success(server, tmp_path):
    out = tmp_path / "data.bin"
    proc = subprocess.run(
        [sys.executable, "-m", "biasrepro", "download", "--url", f"{server}/data.bin",
         "--sha256", SHA, "--size", str(len(PAYLOAD)), "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == PAYLOAD


def test_file_url_works_for_local_mirrors(tmp_path):
    src = tmp_path / "mirror.bin"
    src.write_bytes(PAYLOAD)
    out = tmp_path / "out" / "data.bin"
    fetch(src.as_uri(), sha256=SHA, out=out, size=len(PAYLOAD))
    assert out.read_bytes() == PAYLOAD


def test_bad_pinned_hash_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="64 hex digits"):
        fetch("http://127.0.0.1:9/x", sha256="abc", out=tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


def test_unpinned_download_is_refused_without_opt_in(server, tmp_path):
    lock = tmp_path / "downloads.lock"
    with pytest.raises(DownloadError, match="refusing the unpinned download") as err:
        fetch(f"{server}/data.bin", sha256="unpinned", out=tmp_path / "d.bin", lock=lock)
    assert "downloads.allow_unpinned" in str(err.value) and str(lock) in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_first_unpinned_download_is_recorded_in_the_lock_loudly(server, tmp_path, caplog):
    lock = tmp_path / "conf" / "downloads.lock"
    out = tmp_path / "data.bin"
    with caplog.at_level("WARNING"):
        fetch(f"{server}/data.bin", sha256="unpinned", out=out, size=len(PAYLOAD), lock=lock,
              allow_unpinned=True)
    assert out.read_bytes() == PAYLOAD
    assert f"UNPINNED download {server}/data.bin" in caplog.text and SHA in caplog.text
    assert "COMMIT that file" in caplog.text and str(lock) in caplog.text
    entry = json.loads(lock.read_text())["files"][f"{server}/data.bin"]
    assert entry == {"name": "data.bin", "size": len(PAYLOAD), "sha256": SHA}
    with pytest.raises(DownloadError, match="truncated or wrong"):
        fetch(f"{server}/data.bin", sha256="unpinned", out=tmp_path / "b.bin",
              size=len(PAYLOAD) + 1, lock=tmp_path / "other.lock", allow_unpinned=True)
    assert not (tmp_path / "b.bin").exists()


def test_later_downloads_must_match_the_lock(server, tmp_path):
    """Once recorded, the lock pins the file: no opt-in needed, other bytes refused."""
    lock = tmp_path / "downloads.lock"
    fetch(f"{server}/data.bin", out=tmp_path / "a.bin", lock=lock, allow_unpinned=True)
    fetch(f"{server}/data.bin", out=tmp_path / "b.bin", lock=lock)  # pinned by the lock now
    assert (tmp_path / "b.bin").read_bytes() == PAYLOAD
    doc = json.loads(lock.read_text())
    doc["files"][f"{server}/wrong.bin"] = {"name": "w", "size": len(WRONG), "sha256": SHA}
    lock.write_text(json.dumps(doc))
    with pytest.raises(DownloadError, match=rf"sha256 mismatch .* \(recorded in {lock}\)"):
        fetch(f"{server}/wrong.bin", out=tmp_path / "w.bin", lock=lock, allow_unpinned=True)
    assert not (tmp_path / "w.bin").exists()


def test_opt_in_through_the_environment(server, tmp_path, monkeypatch):
    monkeypatch.setenv("BIASREPRO_ALLOW_UNPINNED", "1")
    fetch(f"{server}/data.bin", out=tmp_path / "d.bin", lock=tmp_path / "l.lock")
    assert (tmp_path / "d.bin").read_bytes() == PAYLOAD


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_git_blob_id_pins_a_download(server, tmp_path):
    out = tmp_path / "data.bin"
    fetch(f"{server}/data.bin", git_blob=_git_blob(PAYLOAD), out=out)
    assert out.read_bytes() == PAYLOAD
    with pytest.raises(DownloadError, match="git blob mismatch") as err:
        fetch(f"{server}/wrong.bin", git_blob=_git_blob(PAYLOAD), out=tmp_path / "w.bin")
    assert _git_blob(WRONG) in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.bin"]


def test_git_blob_id_is_what_git_computes(tmp_path):
    """Our git object id of a file equals `git hash-object`'s (where git is installed)."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    path = tmp_path / "f.txt"
    path.write_bytes(b"caf\xc3\xa9\nline two\n")
    expected = subprocess.run([git, "hash-object", str(path)], capture_output=True, text=True,
                              check=True).stdout.strip()
    assert git_blob_sha1(path) == expected == _git_blob(path.read_bytes())


def test_bad_git_blob_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="40 hex digits"):
        fetch("http://127.0.0.1:9/x", git_blob="abc", out=tmp_path / "x")


@pytest.mark.parametrize("page", [
    b"<!DOCTYPE html><html><head><title>Google Drive - Virus scan warning</title>",
    b"\xef\xbb\xbf  <html lang=en><body>Quota exceeded</body></html>",
    b"\n<HTML><HEAD><TITLE>Sign in</TITLE>"])
def test_an_html_page_is_refused_as_a_text_corpus(tmp_path, page):
    src = tmp_path / "page.html"
    src.write_bytes(page + b"x" * 5000)
    out = tmp_path / "out" / "wikipedia-2.5.txt"
    with pytest.raises(DownloadError, match="is an HTML page"):
        fetch(src.as_uri(), out=out, expect="text", lock=tmp_path / "l.lock",
              allow_unpinned=True)
    assert not out.exists() and not (tmp_path / "l.lock").exists()


def test_a_plausible_text_corpus_passes_and_a_small_one_does_not(tmp_path):
    src = tmp_path / "wiki.txt"
    src.write_text("The river rises in the hills. It flows west.\n" * 200, encoding="utf-8")
    with pytest.raises(DownloadError, match="implausibly small"):
        fetch(src.as_uri(), out=tmp_path / "a.txt", expect="text", min_size=10**6,
              lock=tmp_path / "l.lock", allow_unpinned=True)
    fetch(src.as_uri(), out=tmp_path / "b.txt", expect="text", min_size=1000,
          lock=tmp_path / "l.lock", allow_unpinned=True)
    assert (tmp_path / "b.txt").read_bytes() == src.read_bytes()


@pytest.mark.parametrize(("expect", "data", "message"), [
    ("text", b"abc\0def", "binary data"), ("text", b"\xff\xfe\x00a", "binary data"),
    ("text", b"caf\xe9 au lait", "not UTF-8"), ("json", b"id,text\n1,a", "not JSON"),
    ("zip", b"hello", "not a zip file"), ("gzip", b"PK\x03\x04", "not a gzip file")])
def test_content_of_the_wrong_kind_is_refused(tmp_path, expect, data, message):
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    with pytest.raises(DownloadError, match=message):
        fetch(src.as_uri(), out=tmp_path / "o", expect=expect, sha256=hashlib.sha256(
            data).hexdigest())


def test_cli_refuses_an_unpinned_download_unless_allowed(server, tmp_path):
    out, lock = tmp_path / "d.bin", tmp_path / "downloads.lock"
    base = [sys.executable, "-m", "biasrepro", "download", "--url", f"{server}/data.bin",
            "--sha256", "unpinned", "--lock", str(lock), "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if k != "BIASREPRO_ALLOW_UNPINNED"}
    proc = subprocess.run(base, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "refusing the unpinned download" in proc.stderr
    proc = subprocess.run(base + ["--allow-unpinned", "--format", "txt"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "binary data, not text" in proc.stderr  # PAYLOAD: bytes
    proc = subprocess.run(base + ["--allow-unpinned"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(lock.read_text())["files"][f"{server}/data.bin"]["sha256"] == SHA


def test_the_workflow_passes_the_configs_opt_in_through_the_environment(monkeypatch) -> None:
    """``downloads.allow_unpinned: true`` reaches the download jobs as the environment variable
    the command reads; false or absent leaves the environment as it was."""
    from biasrepro.data import download

    monkeypatch.delenv(download.ALLOW_ENV, raising=False)
    download.opt_in_from_config({"downloads": {"allow_unpinned": False}})
    download.opt_in_from_config({})
    assert not download.allowed_by_env()
    download.opt_in_from_config({"downloads": {"allow_unpinned": True}})
    assert download.allowed_by_env()


def test_every_dataset_format_has_its_content_check() -> None:
    """A format the config accepts but the download step cannot sniff would only be checked
    for HTML: every one of them names what its bytes must look like."""
    from biasrepro.config import DATASET_FORMATS
    from biasrepro.data.download import EXPECT_BY_FORMAT

    formats = {f for fmts in DATASET_FORMATS.values() for f in fmts}
    assert formats <= set(EXPECT_BY_FORMAT), sorted(formats - set(EXPECT_BY_FORMAT))
