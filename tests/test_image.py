"""The image built and run for real, without a registry: buildah, a Debian base made here.

scripts/build_image.py makes a stand-in for the Dockerfile's default base (Docker's
python:3.11-slim-bookworm: Debian 12, CPython 3.11 in /usr/local): Debian 12 bootstrapped
with mmdebstrap from this machine's apt mirror, with this machine's CPython 3.11 copied to
/usr/local. It builds the Dockerfile on it with buildah, handing this machine's
package-index settings (apt sources, pip configuration, local wheel directories and
indexes) to the build as secrets and read-only volumes; TORCH_BUILD=cpu, as this machine's
pip configuration offers the CPU build of torch 2.13.0. The tests then check that none of
those settings is in the image, and run the small profile in it as the image's non-root
user, with a copy of the checkout mounted, as
`docker run -v "$PWD":/project IMAGE --cores all --configfile ...` would: its results must
be byte-identical to the same run on this machine.

Opt-in (20 to 40 minutes on 2 cores; root, for mmdebstrap and buildah):

    apt-get install -y buildah mmdebstrap
    BIASREPRO_IMAGE=1 .venv/bin/python -m pytest -m image tests/test_image.py -s
    BIASREPRO_IMAGE=1 BIASREPRO_IMAGE_TORCH=cuda .venv/bin/python -m pytest -m image ...

The second builds the image's default, the CUDA build of torch, from the package index alone
(scripts/build_image.py --torch-build cuda).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import REPO, SMALL_CONFIG, copy_checkout, tree_hashes

pytestmark = [
    pytest.mark.image,
    pytest.mark.skipif(not os.environ.get("BIASREPRO_IMAGE"),
                       reason="builds the image (20-40 min): set BIASREPRO_IMAGE=1"),
    pytest.mark.skipif(not (shutil.which("buildah") and shutil.which("mmdebstrap")),
                       reason="needs buildah and mmdebstrap (as root: "
                              "apt-get install -y buildah mmdebstrap)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="mmdebstrap and buildah run as root here"),
]

BUILD = REPO / "scripts" / "build_image.py"
#: the torch build the image gets: cpu (this machine's pip offers torch 2.13.0+cpu), or cuda
#: with BIASREPRO_IMAGE_TORCH=cuda (PyPI's CUDA build and NVIDIA's wheels, several GB; the
#: small profile then runs on the CPU through the CUDA build of torch)
TORCH_BUILD = os.environ.get("BIASREPRO_IMAGE_TORCH", "cpu")
TAG = "localhost/biasrepro:image-test"
BASE = "localhost/biasrepro-base:image-test"
RECORD = "results/REPRODUCTION.md"  # the run record: names the Python and platform it ran on
#: machine settings that choose numerical kernels: OpenBLAS (numpy, scipy) otherwise picks
#: its kernels by probing the CPU, and another kernel sums in another order (SEAT's effect
#: sizes then differ in the 13th digit); the host run has them, so the image's run gets them
KERNEL_SETTINGS = ("OPENBLAS_", "OMP_", "MKL_", "GOTO")
#: where the host's index settings live, as the build sees them; none may remain in the image
HOST_PATHS = ("/run/host-index", "/run/secrets/")


class Buildah:
    """buildah on a private vfs storage."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = ["buildah", "--root", str(root), "--runroot", str(root / "run"),
                     "--storage-driver", "vfs"]

    def __call__(self, *args: str, timeout: int = 600) -> str:
        proc = subprocess.run([*self.base, *args], capture_output=True, text=True,
                              timeout=timeout)
        assert proc.returncode == 0, f"buildah {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout.strip()

    def inspect(self, image: str) -> dict:
        return json.loads(self("inspect", "--type", "image", image))

    def mounted(self, image: str) -> tuple[str, Path]:
        """A working container of ``image`` and its root filesystem."""
        container = self("from", "--pull=never", image)
        return container, Path(self("mount", container))


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory):
    """The image, built from a freshly bootstrapped base; removed afterwards."""
    work = tmp_path_factory.mktemp("image")
    buildah = Buildah(work / "storage")
    marker = f"biasrepro-image-test-{uuid.uuid4().hex}"
    timings = work / "timings.json"
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(BUILD), "--root", str(buildah.root), "--tag", TAG,
         "--base-tag", BASE, "--new-base", "--torch-build", TORCH_BUILD, "--marker", marker,
         "--timings", str(timings)],
        capture_output=True, text=True, timeout=3600,
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    seconds = json.loads(timings.read_text())
    size = buildah("images", "--format", "{{.Size}}", TAG)
    print(f"\nimage {TAG} (torch: {TORCH_BUILD}): {size}; base (mmdebstrap) {seconds['base']} s, "
          f"build {seconds['build']} s, in all {time.perf_counter() - started:.0f} s")
    try:
        yield buildah, marker
    finally:
        subprocess.run([*buildah.base, "rm", "--all"], capture_output=True)
        subprocess.run([*buildah.base, "rmi", "--all", "--force"], capture_output=True)
        shutil.rmtree(buildah.root, ignore_errors=True)


def file_hashes(root: Path, below: str) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / below).rglob("*")) if p.is_file() and not p.is_symlink()}


def test_index_settings_stay_out_of_the_image(image) -> None:
    buildah, marker = image
    # The config (ENV, labels, user, entrypoint) and the history: no setting and no path
    # the build read them from; the RUN steps name only the secrets' mount points.
    info = buildah.inspect(TAG)
    config = json.dumps([info.get("Docker"), info.get("OCIv1"), info.get("History")])
    for needle in (marker, HOST_PATHS[0], "index-url", "find-links", "deb.debian.org"):
        assert needle not in config, f"{needle!r} is in the image's config or history"
    env = dict(e.split("=", 1) for e in info["Docker"]["config"]["Env"])
    assert not [k for k in env if k.startswith(("PIP_", "UV_", "APT_"))], env
    assert info["Docker"]["config"]["User"] == "1000:1000"

    base_container, base_root = buildah.mounted(BASE)
    container, root = buildah.mounted(TAG)
    try:
        # apt's configuration is the base's own: the handed-in sources did not replace it
        assert file_hashes(root, "etc/apt") == file_hashes(base_root, "etc/apt")
        for path in ("etc/pip.conf", "etc/xdg/pip", "root/.config/pip", "root/.cache/pip",
                     "opt/venv/pip.conf", "home/biasrepro/.config/pip"):
            assert not (root / path).exists(), f"/{path} is in the image"
        # the build's mount points may stay behind as empty directories, nothing in them
        for mount_point in HOST_PATHS:
            left = [p for p in (root / mount_point.strip("/")).rglob("*") if not p.is_dir()]
            assert not left, left
        # no file anywhere holds the settings: the marker was written into the sources and
        # the pip.conf that the build read, and the mounted indexes' paths are in the latter
        found = subprocess.run(
            ["grep", "-rlF", "--devices=skip", "-e", marker, "-e", f"file://{HOST_PATHS[0]}",
             "-e", f"{HOST_PATHS[0]}/0", "."],
            cwd=root, capture_output=True, text=True, timeout=600,
        )
        assert found.returncode == 1, f"files holding index settings:\n{found.stdout}"
    finally:
        buildah("rm", container, base_container)


def test_small_profile_in_the_image_matches_the_host(image, small_run: Path,
                                                     tmp_path: Path) -> None:
    """The README's main job, shrunk (the small profile), run in the image as it is
    published: its ENTRYPOINT, WORKDIR and USER, the checkout mounted at the WORKDIR."""
    buildah, _ = image
    config = buildah.inspect(TAG)["Docker"]["config"]
    repo = copy_checkout(tmp_path / "repo")
    uid, gid = (int(i) for i in config["User"].split(":"))
    assert uid != 0
    for path in [repo, *repo.rglob("*")]:
        os.chown(path, uid, gid, follow_symlinks=False)
    kernels = [f"--env={k}={v}" for k, v in sorted(os.environ.items())
               if k.startswith(KERNEL_SETTINGS)]
    container = buildah("from", "--pull=never", TAG)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [*buildah.base, "run", "--isolation", "chroot", *kernels, "--user", config["User"],
             "--workingdir", config["WorkingDir"], "--volume", f"{repo}:{config['WorkingDir']}",
             container, "--", *config["Entrypoint"], "--cores", "all", "--configfile",
             SMALL_CONFIG],
            capture_output=True, text=True, timeout=1800,
        )
    finally:
        subprocess.run([*buildah.base, "rm", container], capture_output=True)
    print(f"\nsmall profile in the image: {time.perf_counter() - started:.0f} s")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    assert (repo / "results/metrics.json").stat().st_uid == uid, "the job ran as root"

    ours, host = (tree_hashes(r, "results", "resources") for r in (repo, small_run))
    # the run record describes the environment (Python, platform), which differs by design
    assert ours.pop(RECORD) and host.pop(RECORD)
    differ = sorted(k for k in ours.keys() | host.keys() if ours.get(k) != host.get(k))
    # a model's records name the torch it was made with (2.13.0+cu130 in the CUDA build,
    # 2.13.0+cpu here): files that differ only by that label hold the same results
    labelled = [k for k in differ if k in ours and k in host
                and same_but_torch_build(repo / k, small_run / k)]
    if labelled:
        print(f"{len(labelled)} files differ only by torch's build label: {labelled}")
    differ = [k for k in differ if k not in labelled]
    assert not differ, f"{len(differ)} of {len(host)} files differ from the host run: {differ}"


#: torch's version with its build label (2.13.0+cpu, 2.13.0+cu130)
TORCH_LABEL = re.compile(r"\b(2\.\d+\.\d+)\+(?:cpu|cu\d+)\b")


def same_but_torch_build(a: Path, b: Path) -> bool:
    """Whether two text files are equal once torch's build label is taken out."""
    try:
        texts = [TORCH_LABEL.sub(r"\1", p.read_text(encoding="utf-8")) for p in (a, b)]
    except UnicodeDecodeError:
        return False
    return texts[0] == texts[1]


def test_torch_build_labels_are_all_that_is_ignored(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text('{"torch": "2.13.0+cu130", "auc": 0.91}')
    b.write_text('{"torch": "2.13.0+cpu", "auc": 0.91}')
    assert same_but_torch_build(a, b)
    b.write_text('{"torch": "2.13.0+cpu", "auc": 0.92}')
    assert not same_but_torch_build(a, b)
