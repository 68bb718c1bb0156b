"""Verified downloads against a real HTTP server on 127.0.0.1 (only the network is local)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from biasrepro.data.download import fetch
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


def test_stale_file_is_removed_when_the_new_download_fails(server, tmp_path):
    out = tmp_path / "wrong.bin"
    out.write_bytes(b"old partial junk")
    with pytest.raises(DownloadError):
        fetch(f"{server}/wrong.bin", sha256=SHA, out=out)
    assert list(tmp_path.iterdir()) == []


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


def test_unpinned_download_is_kept_with_a_warning_naming_its_sha256(server, tmp_path, caplog):
    out = tmp_path / "data.bin"
    with caplog.at_level("WARNING"):
        fetch(f"{server}/data.bin", sha256="unpinned", out=out, size=len(PAYLOAD))
    assert out.read_bytes() == PAYLOAD
    assert f"UNPINNED download {server}/data.bin" in caplog.text and SHA in caplog.text
    with pytest.raises(DownloadError, match="truncated or wrong"):
        fetch(f"{server}/data.bin", sha256="unpinned", out=tmp_path / "b.bin",
              size=len(PAYLOAD) + 1)
    assert not (tmp_path / "b.bin").exists()
