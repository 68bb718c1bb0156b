"""scripts/build_image.py's handling of this machine's package-index settings, without
building anything (the build itself: tests/test_image.py, opt-in)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import REPO

spec = importlib.util.spec_from_file_location("build_image", REPO / "scripts/build_image.py")
build_image = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_image)


def test_local_directories_are_mounted_read_only(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    index = tmp_path / "pypi" / "simple"
    wheels.mkdir()
    index.mkdir(parents=True)
    conf, volumes = build_image.pip_conf_for_build(
        {"find-links": str(wheels), "extra-index-url": f"file://{index} https://example.org/s",
         "cert": "/etc/ssl/certs/ca-certificates.crt"}, marker="m1")
    assert volumes == [f"{wheels}:/run/host-index/0:ro",
                       f"{tmp_path / 'pypi'}:/run/host-index/1:ro"]
    assert conf.startswith("# m1\n[global]\n")
    assert "find-links = /run/host-index/0\n" in conf
    assert "extra-index-url = file:///run/host-index/1/simple https://example.org/s\n" in conf
    assert "cert = /run/secrets/ca.pem\n" in conf


def test_a_cuda_build_installs_from_the_index_alone() -> None:
    """A local directory holding torch 2.13.0+cpu would win over the index's CUDA 2.13.0:
    the CUDA build keeps remote indexes, the certificate and timeouts, nothing local."""
    host = {"find-links": "/opt/wheels", "no-index": "false",
            "extra-index-url": "file:///opt/pypi/simple https://mirror.example/simple",
            "index-url": "file:///opt/only/simple", "cert": "/c.pem", "default-timeout": "180"}
    assert build_image.index_only(host) == {
        "extra-index-url": "https://mirror.example/simple", "cert": "/c.pem",
        "default-timeout": "180"}
    assert build_image.index_only({"extra-index-url": "file:///a file:///b"}) == {}
