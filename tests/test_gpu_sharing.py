"""Several GPU jobs on one device (config ``compute.jobs_per_gpu``): slot-counting placement,
the wait for free device memory, the workflow's commands, and a model that is the same
whatever shares its device."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, REPO, env_with_venv
from fixtures.tiny_models import tiny_classifier
from test_finetune import SETTINGS, toy

from biasrepro import cli, gpu
from biasrepro.errors import BiasreproError


@pytest.fixture(autouse=True)
def release_locks():
    yield
    while gpu._HELD:
        gpu._HELD.pop().close()


def env(tmp_path: Path, devices: str) -> dict[str, str]:
    return {"BIASREPRO_GPU_LOCKS": str(tmp_path / "locks"), "CUDA_VISIBLE_DEVICES": devices}


def release(count: int) -> None:
    """Close the locks of the last ``count`` handles claimed (a job that ended)."""
    for _ in range(count):
        gpu._HELD.pop().close()


def test_shared_devices_fill_evenly_then_refuse(tmp_path: Path) -> None:
    """Two devices, two jobs each: the jobs alternate (the least-shared device first), and a
    fifth finds every slot taken, with the limit Snakemake should have had."""
    got = [gpu.place(1, env(tmp_path, "0,1"), jobs_per_gpu=2) for _ in range(4)]
    assert got == ["0", "1", "0", "1"]
    with pytest.raises(BiasreproError, match=r"no free GPU.*\(2 jobs per GPU\).*gpu=4 or less"):
        gpu.place(1, env(tmp_path, "0,1"), jobs_per_gpu=2)
    slots = sorted(p.name for p in (tmp_path / "locks").glob("*.slot-*"))
    assert slots == [f"cuda-{d}.slot-{s}.lock" for d in "01" for s in "01"]
    pids = {(tmp_path / "locks" / name).read_text().strip() for name in slots}
    assert pids == {str(os.getpid())}


def test_a_finished_job_frees_its_slot(tmp_path: Path) -> None:
    for _ in range(3):
        gpu.place(1, env(tmp_path, "4"), jobs_per_gpu=3)
    with pytest.raises(BiasreproError, match="no free GPU"):
        gpu.place(1, env(tmp_path, "4"), jobs_per_gpu=3)
    release(2)  # the third job (its shared device lock and its slot) ended
    assert gpu.place(1, env(tmp_path, "4"), jobs_per_gpu=3) == "4"


def test_alone_and_shared_jobs_never_mix(tmp_path: Path) -> None:
    """A job that wants its device alone never joins shared ones, nor they it."""
    assert gpu.place(1, env(tmp_path, "0,1")) == "0"  # alone on 0
    assert gpu.place(1, env(tmp_path, "0,1"), jobs_per_gpu=4) == "1"
    assert gpu.place(1, env(tmp_path, "0,1"), jobs_per_gpu=4) == "1"  # 0 is taken whole
    with pytest.raises(BiasreproError, match=r"GPU 0 \(process \d+\).*GPU 1"):
        gpu.place(1, env(tmp_path, "0,1"))  # 1 is shared: not free for a job alone


def test_a_job_on_several_shared_devices_takes_a_slot_on_each(tmp_path: Path) -> None:
    assert gpu.place(1, env(tmp_path, "0,1,2"), jobs_per_gpu=2) == "0"
    # the two least-shared devices, in the order CUDA_VISIBLE_DEVICES lists them
    assert gpu.place(2, env(tmp_path, "0,1,2"), jobs_per_gpu=2) == "1,2"


def test_jobs_per_gpu_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(BiasreproError, match="--jobs-per-gpu must be 1 or more, not 0"):
        gpu.place(1, env(tmp_path, "0"), jobs_per_gpu=0)


def test_a_job_waits_for_the_memory_it_needs(monkeypatch, caplog) -> None:
    caplog.set_level("INFO")
    seen = iter([500.0, 900.0, 2000.0])
    asked = []
    monkeypatch.setattr(gpu, "free_memory_mb", lambda d: asked.append(d) or next(seen))
    monkeypatch.setattr(gpu.time, "sleep", lambda s: None)
    gpu.wait_for_memory("3", 1500, wait_s=60, poll_s=1)
    assert asked == ["3", "3", "3"]
    assert caplog.text.count("GPU 3 has 500 MiB free, 1500 MiB needed; waiting") == 1


def test_a_job_gives_up_naming_the_device(monkeypatch) -> None:
    monkeypatch.setattr(gpu, "free_memory_mb", lambda d: 1000.0 if d == "1" else 9000.0)
    with pytest.raises(BiasreproError, match=r"GPU 1 has 1,000 MiB free, this job needs "
                                             r"4,000 MiB .*lower compute.jobs_per_gpu"):
        gpu.wait_for_memory("0,1", 4000, wait_s=0, poll_s=0)
    gpu.wait_for_memory("0,1", 0, wait_s=0)  # no need: nothing is read
    monkeypatch.setattr(gpu, "free_memory_mb", lambda d: None)
    gpu.wait_for_memory("0", 4000, wait_s=0)  # no nvidia-smi: not checked


def test_free_memory_reads_nvidia_smi(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(gpu, "_nvidia_smi", lambda args: calls.append(args) or "81234\n")
    assert gpu.free_memory_mb("GPU-5d3c") == 81234.0
    assert calls == [["--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i",
                      "GPU-5d3c"]]
    monkeypatch.setattr(gpu, "_nvidia_smi", lambda args: None)
    assert gpu.free_memory_mb("0") is None
    monkeypatch.setattr(gpu, "_nvidia_smi", lambda args: "[N/A]\n")
    assert gpu.free_memory_mb("0") is None


def test_the_command_line_shares_and_checks_memory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BIASREPRO_GPU_LOCKS", str(tmp_path / "locks"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    waits = []
    monkeypatch.setattr(gpu, "wait_for_memory", lambda d, mb: waits.append((d, mb)))
    # (an unknown GPU class: plan fails at once, after the placement)
    assert cli.main(["--gpus", "1", "--jobs-per-gpu", "2", "--gpu-free-mb", "700",
                     "plan", "--gpu", "no-such-gpu"]) == 2
    assert waits == [("0", 700.0)]
    assert (tmp_path / "locks" / "cuda-0.slot-0.lock").exists()


def dry_run_commands(*config: str) -> list[str]:
    out = subprocess.run(
        [str(BIN / "snakemake"), "-n", "-p", "--forceall", "--config", *config],
        cwd=REPO, env=env_with_venv(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return re.findall(r"^Shell command: (.*)$", out.stdout, re.M)


def test_the_workflow_passes_the_sharing_to_gpu_jobs_only() -> None:
    """Alone (the default), every command is as it always was; shared, each GPU job's
    command names the share and its family's gpu_free_mb, and no CPU job waits for memory."""
    alone = dry_run_commands("compute={gpus: 1, jobs_per_gpu: 1}")
    assert not any("--jobs-per-gpu" in c or "--gpu-free-mb" in c for c in alone)
    shared = dry_run_commands("compute={gpus: 1, jobs_per_gpu: 3}")
    gpu_jobs = [c for c in shared if " --gpus 1 " in c]
    assert len(gpu_jobs) > 10
    assert all(" --gpus 1 --jobs-per-gpu 3 --gpu-free-mb 1000 " in c for c in gpu_jobs)
    cpu_jobs = [c for c in shared if " --gpus 0 " in c]
    assert cpu_jobs and all("--gpu-free-mb 0 " in c for c in cpu_jobs)
    # the same jobs, the same commands once the sharing options (and the run record's
    # digest of the configuration) are taken out
    strip = re.compile(r" --jobs-per-gpu 3 --gpu-free-mb \d+| --config-sha256 \S+")
    assert sorted(strip.sub("", c) for c in shared) == sorted(strip.sub("", c) for c in alone)


@pytest.mark.slow
def test_a_fine_tune_is_the_same_alone_and_sharing_its_device(tmp_path: Path) -> None:
    """One fine-tune run alone on "GPU 0", and three of it at once sharing that device
    (three processes, each in its own slot): every model's bytes are the alone run's. Here
    the device is a CPU (CUDA_VISIBLE_DEVICES names a device torch cannot use), which runs
    the placement, the locks and the training code path of a shared GPU."""
    base = tiny_classifier(tmp_path / "base", "bert")
    train = tmp_path / "train.parquet"
    toy(240).to_parquet(train)
    training = {k: v for k, v in SETTINGS.items() if k != "seed"} | {"eval_fraction": 0.0}
    settings = json.dumps({"seed": 3, "models.training.sentiment": training,
                           "models.registry": {"tiny": {"source": "local", "architecture":
                                                        "bert", "path": str(base)}}})
    run_env = {**env_with_venv(), **env(tmp_path, "0"), "OMP_NUM_THREADS": "1"}

    def command(out: str, *sharing: str) -> list[str]:
        return [str(BIN / "biasrepro"), "--gpus", "1", *sharing, "finetune", "--model",
                "tiny", "--task", "sentiment", "--train", str(train), "--settings", settings,
                "--out-dir", str(tmp_path / out), "--checkpoint-dir", str(tmp_path / f"{out}-c")]

    alone = subprocess.run(command("alone"), env=run_env, capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr[-3000:]
    procs = [subprocess.Popen(command(f"shared{i}", "--jobs-per-gpu", "3"), env=run_env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in range(3)]
    errors = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    # three slots, each signed by a different one of the three: they held the device at once
    signed = {(tmp_path / "locks" / f"cuda-0.slot-{s}.lock").read_text().strip() for s in
              range(3)}
    assert signed == {str(p.pid) for p in procs}
    for i in range(3):
        for name in ("model.safetensors", "config.json"):
            assert (tmp_path / f"shared{i}" / name).read_bytes() == (
                tmp_path / "alone" / name).read_bytes(), (i, name)
