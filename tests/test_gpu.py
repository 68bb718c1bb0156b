"""GPU placement: which CUDA devices a job gets, locally and inside SLURM."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from conftest import BIN, SMALL_CONFIG, env_with_venv

from biasrepro import cli, gpu
from biasrepro.errors import BiasreproError

#: the command line's log lines begin with their time (biasrepro.cli.main)
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")


@pytest.fixture(autouse=True)
def release_locks():
    yield
    while gpu._HELD:
        gpu._HELD.pop().close()


def local_env(tmp_path: Path, devices: str | None) -> dict[str, str]:
    env = {"BIASREPRO_GPU_LOCKS": str(tmp_path / "locks")}
    if devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = devices
    return env


def test_no_gpu_requested_hides_every_device(tmp_path: Path) -> None:
    env = local_env(tmp_path, "0,1")
    assert gpu.place(0, env) == ""
    assert env["CUDA_VISIBLE_DEVICES"] == ""


def test_jobs_get_distinct_devices_of_those_visible(tmp_path: Path) -> None:
    first, second = local_env(tmp_path, "3,5"), local_env(tmp_path, "3,5")
    assert gpu.place(1, first) == "3"
    assert gpu.place(1, second) == "5"  # 3 is held by the first job
    third = local_env(tmp_path, "3,5")
    with pytest.raises(BiasreproError, match=r"no free GPU.*GPU 3 \(process \d+\).*gpu=2"):
        gpu.place(1, third)
    assert "CUDA_VISIBLE_DEVICES" in third and third["CUDA_VISIBLE_DEVICES"] == "3,5"


def test_a_job_claims_several_devices(tmp_path: Path) -> None:
    env = local_env(tmp_path, "0,1,2")
    assert gpu.place(2, env) == "0,1"
    assert gpu.place(1, local_env(tmp_path, "0,1,2")) == "2"


def test_more_gpus_than_visible_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BiasreproError, match=r"asks for 2 GPU\(s\) but 1 are visible "
                                             r"\(CUDA_VISIBLE_DEVICES='7'\)"):
        gpu.place(2, local_env(tmp_path, "7"))
    with pytest.raises(BiasreproError, match="asks for 1 GPU.*0 are visible.*compute.gpus"):
        gpu.place(1, local_env(tmp_path, ""))


def test_a_slurm_job_given_no_gpu_takes_none_of_the_nodes(tmp_path: Path) -> None:
    env = {**local_env(tmp_path, None), "SLURM_JOB_ID": "42"}
    assert gpu.visible_devices(env) == []  # never nvidia-smi's list of the whole node
    with pytest.raises(BiasreproError, match="SLURM job 42 was given no GPU"):
        gpu.place(1, env)


def test_a_finished_job_frees_its_device(tmp_path: Path) -> None:
    env = {**os.environ, **local_env(tmp_path, "0")}
    code = ("import os; from biasrepro import gpu; print(gpu.place(1, os.environ))")
    for _ in range(2):  # the second process gets the device the first one held until exit
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        assert out.stdout.strip() == "0"


def test_inside_slurm_each_job_has_its_own_lock_namespace(tmp_path: Path) -> None:
    # SLURM numbers a job's devices from 0 in every job: two jobs on one node both see "0"
    a = {**local_env(tmp_path, "0"), "SLURM_JOB_ID": "11"}
    b = {**local_env(tmp_path, "0"), "SLURM_JOB_ID": "12"}
    assert gpu.place(1, a) == "0" and gpu.place(1, b) == "0"
    assert gpu.lock_dir(a) != gpu.lock_dir(b)
    assert gpu.lock_dir(a).parent == gpu.lock_dir(local_env(tmp_path, None))


def test_the_command_line_places_before_the_command_runs(tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    monkeypatch.setenv("BIASREPRO_GPU_LOCKS", str(tmp_path / "locks"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    # placement fails before dvc-yaml would run (it would write nothing here either way)
    assert cli.main(["--gpus", "1", "dvc-yaml", "--check"]) == 2
    err = capsys.readouterr().err
    assert "error: this job asks for 1 GPU(s) but 0 are visible" in err
    assert "dvc-yaml finished" not in err


def test_a_job_placed_on_a_gpu_torch_cannot_use_warns(tmp_path: Path, monkeypatch,
                                                      caplog) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    gpu.warn_if_cpu_only(0)
    assert not caplog.records
    gpu.warn_if_cpu_only(1)
    assert "holds 1 GPU(s) (CUDA_VISIBLE_DEVICES=0) but torch" in caplog.text
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    caplog.clear()
    gpu.warn_if_cpu_only(1)
    assert not caplog.records


def job_interval(log: Path) -> tuple[datetime, datetime, str]:
    """When a job held its GPU (placement line to its last line) and the device it got."""
    stamps = [datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
              for line in log.read_text().splitlines() if STAMP.match(line)]
    placed = re.search(r"GPU placement: CUDA_VISIBLE_DEVICES=(\S*)", log.read_text())
    assert placed and stamps, log.read_text()[-2000:]
    return stamps[0], stamps[-1], placed.group(1)


def weights(repo: Path, model: str) -> bytes:
    return (repo / f"resources/models/embedded/{model}/model.safetensors").read_bytes()


@pytest.mark.slow
def test_local_profile_never_runs_two_gpu_jobs_at_once(small_run: Path, tmp_path: Path) -> None:
    """Both embedded models' pre-training (GPU jobs, independent) on 2 cores, as GPU jobs on
    one GPU: the default profile's `gpu: 1` runs them one after the other, each on device 0.
    Allowing two at once makes the second find the device taken and fail loudly."""
    repo = tmp_path / "repo"
    shutil.copytree(small_run, repo, symlinks=True)
    env = {**env_with_venv(), "CUDA_VISIBLE_DEVICES": "0",
           "BIASREPRO_GPU_LOCKS": str(tmp_path / "locks")}
    models = ["albert-tiny", "roberta-tiny"]
    # (targets first: --forcerun and --config take every argument after them)
    args = [str(BIN / "snakemake"), *(f"resources/models/embedded/{m}" for m in models),
            "--cores", "2", "--configfile", SMALL_CONFIG, "--config", "compute={gpus: 1}",
            "--forcerun", "pretrain_embedded"]
    logs = [repo / f"logs/pretrain_embedded/{m}.log" for m in models]

    proc = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (a_start, a_end, a_dev), (b_start, b_end, b_dev) = map(job_interval, logs)
    assert a_dev == b_dev == "0"
    assert a_end < b_start or b_end < a_start, "two GPU jobs overlapped"
    alone = {m: weights(repo, m) for m in models}

    # sharing the device (compute.jobs_per_gpu 2, Snakemake's limit 2): both run at once on
    # device 0, each in its own slot, and train the same models as alone
    shared = [*args[:-4], "--config", "compute={gpus: 1, jobs_per_gpu: 2}", *args[-2:],
              "--resources", "gpu=2"]
    proc = subprocess.run(shared, cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (a_start, a_end, a_dev), (b_start, b_end, b_dev) = map(job_interval, logs)
    assert a_dev == b_dev == "0"
    assert a_start < b_end and b_start < a_end, "the shared jobs did not overlap"
    assert all("(of 0; up to 2 jobs a device;" in log.read_text() for log in logs)
    assert {m: weights(repo, m) for m in models} == alone

    proc = subprocess.run([*args, "--resources", "gpu=2"], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    # (the holder may not have written its pid yet when the other job names it)
    assert sum("error: no free GPU for this job: GPU 0 (" in log.read_text()
               for log in logs) == 1
