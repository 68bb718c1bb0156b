#!/usr/bin/env python3
"""Build the project's image with buildah, on a Debian base made here by mmdebstrap.

For machines that reach package mirrors but no container registry (docker.io, ghcr.io).
The Dockerfile's default base is Docker's python:3.11-slim-bookworm: Debian 12 with CPython
3.11 in /usr/local. Its stand-in is made here the same way: Debian 12 bootstrapped from this
machine's apt sources, with the runtime libraries CPython links to, and this machine's own
CPython 3.11 (the one running this script, or --python-prefix) copied to /usr/local. The
Dockerfile is then built on it with this machine's package-index settings (apt sources,
pip configuration, local wheel directories and indexes) handed in at build time only: as
build secrets and read-only volumes, so none of them lands in a layer, the image's config
or its history.

    sudo apt-get install -y buildah mmdebstrap      # Debian 12
    sudo python3 scripts/build_image.py --tag localhost/biasrepro:local

Needs root (mmdebstrap, buildah's chroot isolation). Storage is buildah's vfs driver under
--root (default /var/tmp/biasrepro-buildah); remove it with
`buildah --root DIR --storage-driver vfs rmi --all` or by deleting the directory.
docs/container.md explains the build arguments.
"""

from __future__ import annotations

import argparse
import configparser
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE = "bookworm"  # the Dockerfile's default base is Debian 12
#: the base's own apt sources: those of Docker Hub's debian:12 image
DEBIAN_SOURCES = """\
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
#: what python:3.11-slim-bookworm installs besides Debian's minimal base: the libraries
#: CPython's extension modules link to (tkinter's aside), CA certificates, netbase, tzdata
BASE_PACKAGES = ("ca-certificates", "netbase", "tzdata", "libbz2-1.0", "libexpat1", "libffi8",
                 "liblzma5", "libncursesw6", "libnsl2", "libreadline8", "libsqlite3-0",
                 "libssl3", "libtirpc3", "libuuid1", "zlib1g")
#: pip settings that say where packages come from (others, such as constraint, stay out)
PIP_KEYS = ("index-url", "extra-index-url", "find-links", "no-index", "trusted-host",
            "cert", "timeout", "default-timeout", "retries", "disable-pip-version-check")
#: where local index directories are mounted during the build
MOUNTS = "/run/host-index"
#: one-line sources options and their deb822 names
DEB822_OPTIONS = {"arch": "Architectures", "signed-by": "Signed-By", "trusted": "Trusted"}


def buildah_cmd(root: Path) -> list[str]:
    return ["buildah", "--root", str(root), "--runroot", str(root / "run"),
            "--storage-driver", "vfs"]


def host_apt_sources() -> str:
    """This machine's apt sources as one deb822 text (one-line entries converted)."""
    stanzas = []
    etc = Path("/etc/apt")
    for path in sorted((etc / "sources.list.d").glob("*.sources")):
        stanzas.append(path.read_text(encoding="utf-8").strip())
    lists = [etc / "sources.list", *sorted((etc / "sources.list.d").glob("*.list"))]
    for path in (p for p in lists if p.is_file()):
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.split("#", 1)[0].split()
            if not words or words[0] not in {"deb", "deb-src"}:
                continue
            options = []
            if words[1].startswith("["):
                end = next(i for i, w in enumerate(words) if w.endswith("]"))
                options = " ".join(words[1:end + 1])[1:-1].split()
                words = [words[0], *words[end + 1:]]
            stanza = [f"Types: {words[0]}", f"URIs: {words[1]}", f"Suites: {words[2]}",
                      f"Components: {' '.join(words[3:])}"]
            for option in options:
                key, _, value = option.partition("=")
                stanza.append(f"{DEB822_OPTIONS.get(key, key)}: {value}")
            stanzas.append("\n".join(stanza))
    if not stanzas:
        raise SystemExit("no apt sources found under /etc/apt")
    return "\n\n".join(stanzas) + "\n"


def host_pip_settings() -> dict[str, str]:
    """This machine's pip settings that say where packages come from (`pip config list`)."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], check=True,
                         capture_output=True, text=True).stdout
    files: dict[str, str] = {}
    environment: dict[str, str] = {}  # PIP_* variables: they override the files, as in pip
    for line in out.splitlines():
        name, sep, value = line.partition("=")
        key = name.rsplit(".", 1)[-1]
        if sep and key in PIP_KEYS:
            scope = environment if name.startswith(":env:") else files
            scope[key] = shlex.split(value)[0] if value.strip() else ""
    return {**files, **environment}


def index_only(settings: dict[str, str]) -> dict[str, str]:
    """``settings`` without local wheel directories and file:// indexes, for a CUDA build: a
    local CPU build of torch (2.13.0+cpu) would win over the index's CUDA build (2.13.0),
    since pip ranks a local version label above none."""
    out = {k: v for k, v in settings.items() if k not in {"find-links", "no-index"}}
    for key in ("index-url", "extra-index-url"):
        if key in out:
            kept = [v for v in out[key].split() if not v.startswith("file://")]
            if kept:
                out[key] = " ".join(kept)
            else:
                del out[key]
    return out


def pip_conf_for_build(settings: dict[str, str], marker: str = "") -> tuple[str, list[str]]:
    """A pip.conf for the build and the read-only volumes it needs: local directories
    (find-links paths, file:// indexes) are mounted under MOUNTS, the CA bundle becomes the
    ca.pem secret."""
    volumes: list[str] = []

    def mounted(location: str) -> str:
        url = location.startswith("file://")
        path = location.removeprefix("file://") if url else location
        if "://" in path or not Path(path).exists():
            return location  # a remote URL, or nothing here to mount
        # a PEP 503 index's pages link to files beside simple/: mount the directory above
        root = Path(path).resolve()
        below = ""
        if url and root.name == "simple":
            root, below = root.parent, "/simple"
        target = f"{MOUNTS}/{len(volumes)}"
        volumes.append(f"{root}:{target}:ro")
        return f"file://{target}{below}" if url else target

    conf = configparser.ConfigParser(interpolation=None)
    conf["global"] = {}
    for key, value in settings.items():
        if key == "cert":
            value = "/run/secrets/ca.pem"
        elif key in {"index-url", "extra-index-url", "find-links"}:
            value = " ".join(mounted(v) for v in value.split())
        conf["global"][key] = value
    text = f"# {marker}\n" if marker else ""
    with tempfile.TemporaryFile("w+") as f:
        conf.write(f)
        f.seek(0)
        text += f.read()
    return text, volumes


def make_base(buildah: list[str], tag: str, sources: Path, workdir: Path,
              python: Path) -> None:
    """Debian 12 from the host's apt mirror, with Debian's standard sources, and the CPython
    installed at ``python`` (a prefix: bin/, lib/) copied to /usr/local, as in Docker's
    python images (its site-packages and test suite left out)."""
    rootfs = workdir / "base.tar"
    hook = ('rm -f "$1/etc/apt/sources.list" "$1"/etc/apt/sources.list.d/*'
            f' && cat > "$1/etc/apt/sources.list.d/debian.sources" <<\'EOF\'\n{DEBIAN_SOURCES}EOF')
    subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", "--format=tar",
                    f"--include={','.join(BASE_PACKAGES)}", f"--customize-hook={hook}",
                    SUITE, str(rootfs), str(sources)], check=True)
    container = subprocess.run([*buildah, "from", "scratch"], check=True, capture_output=True,
                               text=True).stdout.strip()
    try:
        mount = subprocess.run([*buildah, "mount", container], check=True, capture_output=True,
                               text=True).stdout.strip()
        subprocess.run(["tar", "-C", mount, "-xf", str(rootfs)], check=True)
        packed = subprocess.Popen(
            ["tar", "-C", str(python), "--exclude=lib/python3.11/site-packages/*",
             "--exclude=lib/python3.11/test", "-cf", "-",
             "bin", "include", "lib", "share"], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-C", f"{mount}/usr/local", "-xf", "-"], stdin=packed.stdout,
                       check=True)
        assert packed.wait() == 0, f"could not copy {python}"
        subprocess.run(["ldconfig", "-r", mount], check=True)  # libpython in /usr/local/lib
        subprocess.run([*buildah, "umount", container], check=True, capture_output=True)
        subprocess.run([*buildah, "config", "--env",
                        "PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
                        "--env", "LANG=C.UTF-8", "--cmd", "python3", container], check=True)
        subprocess.run([*buildah, "commit", "--quiet", container, tag], check=True,
                       capture_output=True)
    finally:
        subprocess.run([*buildah, "rm", container], check=False, capture_output=True)
        rootfs.unlink(missing_ok=True)


def image_exists(buildah: list[str], tag: str) -> bool:
    return subprocess.run([*buildah, "inspect", "--type", "image", tag],
                          capture_output=True).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default="localhost/biasrepro:local")
    parser.add_argument("--base-tag", default="localhost/biasrepro-base:debian12")
    parser.add_argument("--root", type=Path, default=Path("/var/tmp/biasrepro-buildah"),
                        help="buildah's storage (vfs driver)")
    parser.add_argument("--torch-build", choices=["cpu", "cuda"], default="cpu",
                        help="TORCH_BUILD: cpu where the host's pip offers torch 2.13.0+cpu; cuda "
                        "installs from the package index alone (index_only)")
    parser.add_argument("--new-base", action="store_true", help="bootstrap the base again")
    parser.add_argument("--python-prefix", type=Path, default=Path(sys.base_prefix),
                        help="the CPython 3.11 (>= 3.11.5) to put in the base "
                             "(default: the one running this script)")
    parser.add_argument("--marker", default="",
                        help="a comment written into the handed-in settings (tests look for it)")
    parser.add_argument("--timings", type=Path, help="write the steps' seconds here (JSON)")
    args = parser.parse_args(argv)

    buildah = buildah_cmd(args.root)
    timings = {}
    with tempfile.TemporaryDirectory(prefix="biasrepro-image-") as tmp:
        work = Path(tmp)
        sources = work / "apt.sources"
        marker = f"# {args.marker}\n" if args.marker else ""
        sources.write_text(marker + host_apt_sources(), encoding="utf-8")
        if args.new_base or not image_exists(buildah, args.base_tag):
            started = time.perf_counter()
            make_base(buildah, args.base_tag, sources, work, args.python_prefix)
            timings["base"] = round(time.perf_counter() - started, 1)
        settings = host_pip_settings()
        if args.torch_build == "cuda":
            settings = index_only(settings)
        pip_conf, volumes = pip_conf_for_build(settings, args.marker)
        (work / "pip.conf").write_text(pip_conf, encoding="utf-8")
        secrets = [f"id=apt.sources,src={sources}", f"id=pip.conf,src={work / 'pip.conf'}"]
        if "cert" in settings:
            secrets.append(f"id=ca.pem,src={settings['cert']}")
        command = [*buildah, "build", "--isolation", "chroot", "--format", "docker",
                   "--build-arg", f"BASE_IMAGE={args.base_tag}",
                   "--build-arg", f"TORCH_BUILD={args.torch_build}",
                   *(f"--secret={s}" for s in secrets), *(f"--volume={v}" for v in volumes),
                   "--tag", args.tag, "--file", str(REPO / "Dockerfile"), str(REPO)]
        print("+", shlex.join(command), flush=True)
        started = time.perf_counter()
        subprocess.run(command, check=True)
        timings["build"] = round(time.perf_counter() - started, 1)
    if args.timings:
        args.timings.write_text(json.dumps(timings), encoding="utf-8")
    print(f"built {args.tag} in {timings['build']} s (base: {timings.get('base', 'reused')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
