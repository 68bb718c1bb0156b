"""GPU placement: which CUDA devices a job may use (``CUDA_VISIBLE_DEVICES``).

Snakemake counts GPUs as an abstract resource (``resources: gpu=1``) but never says which
device a job gets. Every job of the training and scoring families therefore runs
``biasrepro --gpus N ...`` with its ``gpu`` resource, and :func:`place` sets
``CUDA_VISIBLE_DEVICES`` before CUDA starts:

* ``N == 0``: no device (``CUDA_VISIBLE_DEVICES=""``): a job the scheduler gave no GPU
  never takes one.
* ``N >= 1``: ``N`` devices out of those visible to the job (its inherited
  ``CUDA_VISIBLE_DEVICES``, as SLURM or the user set it, else every GPU ``nvidia-smi -L``
  lists), each claimed with a lock held for the life of the process. Locks live per
  machine, or per SLURM job inside one (where SLURM has already chosen the devices). A job
  that finds no free device fails at once instead of sharing one silently (the workflow's
  ``gpu`` limit was larger than the devices can take).

Sharing a device (config ``compute.jobs_per_gpu``, ``--jobs-per-gpu K``): with ``K == 1`` a
job holds its device alone (an exclusive lock on ``cuda-D.lock``). With ``K > 1`` up to ``K``
jobs share it: each holds a shared lock on ``cuda-D.lock`` (so never beside a job that wants
the device alone) and an exclusive lock on one of ``K`` slot files ``cuda-D.slot-I.lock``;
a job goes to the device with the fewest jobs, spreading before packing. Before the job
starts, :func:`wait_for_memory` waits until every device it holds has the free memory its
family needs (``--gpu-free-mb``, ``nvidia-smi``), so a packed job does not start into an
out-of-memory error.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from biasrepro.errors import BiasreproError

log = logging.getLogger(__name__)

#: file objects of the claimed locks; closing them (process exit, even SIGKILL) frees them
_HELD: list = []
#: how long a job waits for the free device memory it needs, and how often it looks, seconds
MEMORY_WAIT_S = 1800.0
MEMORY_POLL_S = 10.0


def visible_devices(env: os._Environ | dict[str, str] = os.environ) -> list[str]:
    """The devices this job may choose from: the inherited ``CUDA_VISIBLE_DEVICES`` (set by
    SLURM or the user), else, outside SLURM, the indices of the GPUs ``nvidia-smi -L`` lists
    (inside a SLURM job that variable is unset only when SLURM gave the job no GPU)."""
    inherited = env.get("CUDA_VISIBLE_DEVICES")
    if inherited is not None:
        return [d.strip() for d in inherited.split(",") if d.strip()]
    if env.get("SLURM_JOB_ID"):
        return []
    out = _nvidia_smi(["-L"])
    if out is None:
        return []
    return [str(i) for i, line in enumerate(out.splitlines()) if line.startswith("GPU ")]


def _nvidia_smi(args: list[str]) -> str | None:
    """``nvidia-smi ARGS``' output, or ``None`` where it is absent or fails."""
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def lock_dir(env: os._Environ | dict[str, str] = os.environ) -> Path:
    """Where device locks live: ``BIASREPRO_GPU_LOCKS``, else one directory per user and
    machine, with a subdirectory per SLURM job inside an allocation (its device ids are
    its own: SLURM already keeps separate jobs apart)."""
    base = Path(env.get("BIASREPRO_GPU_LOCKS")
                or Path(tempfile.gettempdir()) / f"biasrepro-gpu-locks-{os.getuid()}")
    job = env.get("SLURM_JOB_ID")
    return base / f"slurm-{job}" if job else base


def _lock(path: Path, mode: int, sign: bool):
    """A non-blocking ``flock`` of ``path`` in ``mode`` (``LOCK_EX``/``LOCK_SH``), held until
    the handle is closed; ``None`` when another process holds a conflicting one. ``sign``:
    write this process's id into the file (for the message of a job that finds it taken)."""
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    if sign:
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
    return handle


def _device_file(device: str, where: Path) -> Path:
    return where / f"cuda-{device}.lock"


def _slot_file(device: str, slot: int, where: Path) -> Path:
    return where / f"cuda-{device}.slot-{slot}.lock"


def _claim(device: str, where: Path, jobs_per_gpu: int) -> list | None:
    """The handles that make this job one of ``device``'s jobs: the device's exclusive lock
    (``jobs_per_gpu == 1``), or its shared lock and a free slot; ``None`` when it is full."""
    if jobs_per_gpu == 1:
        handle = _lock(_device_file(device, where), fcntl.LOCK_EX, sign=True)
        return None if handle is None else [handle]
    shared = _lock(_device_file(device, where), fcntl.LOCK_SH, sign=False)
    if shared is None:
        return None
    for slot in range(jobs_per_gpu):
        handle = _lock(_slot_file(device, slot, where), fcntl.LOCK_EX, sign=True)
        if handle is not None:
            return [shared, handle]
    shared.close()
    return None


def _jobs_on(device: str, where: Path, jobs_per_gpu: int) -> int:
    """How many of ``device``'s slots other jobs hold now (a probe: each free slot is locked
    and released at once)."""
    held = 0
    for slot in range(jobs_per_gpu):
        handle = _lock(_slot_file(device, slot, where), fcntl.LOCK_EX, sign=False)
        if handle is None:
            held += 1
        else:
            handle.close()
    return held


def _holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid else "another job"


def _holders(device: str, where: Path, jobs_per_gpu: int) -> str:
    if jobs_per_gpu == 1:
        return _holder(_device_file(device, where))
    return ", ".join(_holder(_slot_file(device, slot, where)) for slot in range(jobs_per_gpu))


def place(gpus: int, env: os._Environ | dict[str, str] = os.environ,
          jobs_per_gpu: int = 1) -> str:
    """Claim ``gpus`` devices for this process, each shared by at most ``jobs_per_gpu`` jobs,
    and set ``CUDA_VISIBLE_DEVICES`` to them (``""`` for none); returns the value set."""
    if gpus < 0:
        raise BiasreproError(f"--gpus must be 0 or more, not {gpus}")
    if jobs_per_gpu < 1:
        raise BiasreproError(f"--jobs-per-gpu must be 1 or more, not {jobs_per_gpu}")
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
    order = pool
    if jobs_per_gpu > 1:  # the least-shared devices first (stable: ties in visible order)
        order = sorted(pool, key=lambda d: _jobs_on(d, where, jobs_per_gpu))
    claimed: list[tuple[str, list]] = []
    for device in order:
        handles = _claim(device, where, jobs_per_gpu)
        if handles is not None:
            claimed.append((device, handles))
            if len(claimed) == gpus:
                break
    if len(claimed) < gpus:
        for _, handles in claimed:
            for handle in handles:
                handle.close()
        busy = ", ".join(f"GPU {d} ({_holders(d, where, jobs_per_gpu)})" for d in pool)
        share = "" if jobs_per_gpu == 1 else f" ({jobs_per_gpu} jobs per GPU)"
        raise BiasreproError(
            f"no free GPU for this job: {busy} in use{share} (locks in {where}). More GPU "
            f"jobs ran at once than the GPUs take: give Snakemake --resources "
            f"gpu={len(pool) * jobs_per_gpu} or less")
    _HELD.extend(handle for _, handles in claimed for handle in handles)
    value = ",".join(device for device, _ in claimed)
    env["CUDA_VISIBLE_DEVICES"] = value
    log.info("GPU placement: CUDA_VISIBLE_DEVICES=%s (of %s; %s; locks in %s)",
             value, ",".join(pool),
             "alone on its device" if jobs_per_gpu == 1 else f"up to {jobs_per_gpu} jobs a device",
             where)
    return value


def free_memory_mb(device: str) -> float | None:
    """Free memory of ``device`` (an index or UUID, as in ``CUDA_VISIBLE_DEVICES``), MiB, as
    ``nvidia-smi`` reports it; ``None`` where it cannot say."""
    out = _nvidia_smi(["--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", device])
    try:
        return float(out.strip().splitlines()[0]) if out else None
    except (ValueError, IndexError):
        return None


def wait_for_memory(devices: str, need_mb: float, *, wait_s: float | None = None,
                    poll_s: float | None = None) -> None:
    """Wait until each of ``devices`` (a ``CUDA_VISIBLE_DEVICES`` value) has ``need_mb`` MiB
    free, at most ``wait_s`` (:data:`MEMORY_WAIT_S`), then fail naming the device. Devices
    whose free memory cannot be read (no ``nvidia-smi``) are not checked."""
    wait_s = MEMORY_WAIT_S if wait_s is None else wait_s
    poll_s = MEMORY_POLL_S if poll_s is None else poll_s
    if need_mb <= 0:
        return
    deadline = time.monotonic() + wait_s
    for device in (d for d in devices.split(",") if d):
        told = False
        while True:
            free = free_memory_mb(device)
            if free is None:
                log.info("GPU placement: cannot read GPU %s's free memory; not checked", device)
                break
            if free >= need_mb:
                break
            if time.monotonic() >= deadline:
                raise BiasreproError(
                    f"GPU {device} has {free:,.0f} MiB free, this job needs {need_mb:,.0f} MiB "
                    f"(its family's compute.families.FAMILY.gpu_free_mb) and none freed in "
                    f"{wait_s:,.0f} s: lower compute.jobs_per_gpu, or the family's gpu_free_mb "
                    "if the calibration shows it needs less")
            if not told:
                log.info("GPU placement: GPU %s has %.0f MiB free, %.0f MiB needed; waiting",
                         device, free, need_mb)
                told = True
            time.sleep(poll_s)


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
