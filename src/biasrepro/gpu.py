"""GPU placement: which CUDA devices a job may use (``CUDA_VISIBLE_DEVICES``).

Snakemake counts GPUs as an abstract resource (``resources: gpu=1``) but never says which
device a job gets. Every job of the training and scoring families therefore runs
``biasrepro --gpus N ...`` with its ``gpu`` resource, and :func:`place` sets
``CUDA_VISIBLE_DEVICES`` before CUDA starts:

* ``N == 0``: no device (``CUDA_VISIBLE_DEVICES=""``): a job the scheduler gave no GPU
  never takes one.
* ``N >= 1``: ``N`` devices out of those visible to the job (its inherited
  ``CUDA_VISIBLE_DEVICES``, as SLURM or the user set it, else every GPU ``nvidia-smi -L``
  lists), each claimed with an exclusive lock held for the life of the process. Locks live
  per machine, or per SLURM job inside one (where SLURM has already chosen the devices), so
  two local jobs never share a device; a job that finds no free device fails at once
  instead of sharing one silently (the workflow's ``gpu`` limit was larger than the
  number of GPUs).
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from biasrepro.errors import BiasreproError

log = logging.getLogger(__name__)

#: file objects of the claimed locks; closing them (process exit, even SIGKILL) frees them
_HELD: list = []


def visible_devices(env: os._Environ | dict[str, str] = os.environ) -> list[str]:
    """The devices this job may choose from: the inherited ``CUDA_VISIBLE_DEVICES`` (set by
    SLURM or the user), else, outside SLURM, the indices of the GPUs ``nvidia-smi -L`` lists
    (inside a SLURM job that variable is unset only when SLURM gave the job no GPU)."""
    inherited = env.get("CUDA_VISIBLE_DEVICES")
    if inherited is not None:
        return [d.strip() for d in inherited.split(",") if d.strip()]
    if env.get("SLURM_JOB_ID"):
        return []
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [str(i) for i, line in enumerate(out.stdout.splitlines()) if line.startswith("GPU ")]


def lock_dir(env: os._Environ | dict[str, str] = os.environ) -> Path:
    """Where device locks live: ``BIASREPRO_GPU_LOCKS``, else one directory per user and
    machine, with a subdirectory per SLURM job inside an allocation (its device ids are
    its own: SLURM already keeps separate jobs apart)."""
    base = Path(env.get("BIASREPRO_GPU_LOCKS")
                or Path(tempfile.gettempdir()) / f"biasrepro-gpu-locks-{os.getuid()}")
    job = env.get("SLURM_JOB_ID")
    return base / f"slurm-{job}" if job else base


def _claim(device: str, where: Path):
    """An exclusive, non-blocking lock on one device; ``None`` when another job holds it."""
    handle = open(where / f"cuda-{device}.lock", "a+")  # held until exit
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def _holder(device: str, where: Path) -> str:
    try:
        pid = (where / f"cuda-{device}.lock").read_text().strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid else "another job"


def place(gpus: int, env: os._Environ | dict[str, str] = os.environ) -> str:
    """Claim ``gpus`` devices for this process and set ``CUDA_VISIBLE_DEVICES`` to them
    (``""`` for none); returns the value set."""
    if gpus < 0:
        raise BiasreproError(f"--gpus must be 0 or more, not {gpus}")
    if gpus == 0:
        env["CUDA_VISIBLE_DEVICES"] = ""
        log.info("GPU placement: this job asked for no GPU; CUDA devices hidden")
        return ""
    pool = visible_devices(env)
    if len(pool) < gpus:
        seen = env.get("CUDA_VISIBLE_DEVICES")
        if seen is not None:
            source = f"CUDA_VISIBLE_DEVICES={seen!r}"
        elif env.get("SLURM_JOB_ID"):
            source = f"SLURM job {env['SLURM_JOB_ID']} was given no GPU"
        else:
            source = "nvidia-smi -L lists " + (str(len(pool)) if pool else "none")
        raise BiasreproError(
            f"this job asks for {gpus} GPU(s) but {len(pool)} are visible ({source}); "
            "set compute.gpus to 0 to run on the CPU")
    where = lock_dir(env)
    where.mkdir(parents=True, exist_ok=True)
    claimed = []
    for device in pool:
        handle = _claim(device, where)
        if handle is not None:
            claimed.append((device, handle))
            if len(claimed) == gpus:
                break
    if len(claimed) < gpus:
        for _, handle in claimed:
            handle.close()
        busy = ", ".join(f"GPU {d} ({_holder(d, where)})" for d in pool)
        raise BiasreproError(
            f"no free GPU for this job: {busy} in use (locks in {where}). More GPU jobs ran "
            f"at once than there are GPUs: give Snakemake --resources gpu={len(pool)} or less")
    _HELD.extend(handle for _, handle in claimed)
    value = ",".join(device for device, _ in claimed)
    env["CUDA_VISIBLE_DEVICES"] = value
    log.info("GPU placement: CUDA_VISIBLE_DEVICES=%s (of %s; locks in %s)",
             value, ",".join(pool), where)
    return value


def warn_if_cpu_only(gpus: int) -> None:
    """Warn when this job holds GPUs that torch cannot use (an NVIDIA driver older than the
    CUDA of its build, or a container without the driver): it would silently run on the
    CPU, for hours where the paper profile's jobs expect a GPU."""
    if gpus <= 0:
        return
    import torch

    if not torch.cuda.is_available():
        log.warning("GPU placement: this job holds %d GPU(s) (CUDA_VISIBLE_DEVICES=%s) but "
                    "torch %s sees no CUDA device; it runs on the CPU. Check the NVIDIA driver "
                    "(torch's CUDA %s) or apptainer's --nv, or set compute.gpus to 0",
                    gpus, os.environ.get("CUDA_VISIBLE_DEVICES"), torch.__version__,
                    torch.version.cuda or "none: a CPU-only build")
