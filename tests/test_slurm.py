"""The workflow on a real SLURM cluster through snakemake-executor-plugin-slurm.

A single-node cluster (munged, slurmctld, slurmd from Debian's packages; tests/slurm_local.py)
runs the small profile with profiles/slurm. Every job must go through sbatch and
ask for its rule family's resources, and the results must be byte-identical to the local
run of the same profile. Needs root; skips with the reason otherwise. Opt-in, to keep the suite
short: ``BIASREPRO_SLURM=1 .venv/bin/python -m pytest -m slurm``.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import slurm_local
import yaml
from conftest import BIN, REPO, SMALL_CONFIG, copy_checkout, env_with_venv, tree_hashes

pytestmark = [pytest.mark.slow, pytest.mark.slurm,
              pytest.mark.skipif(not os.environ.get("BIASREPRO_SLURM"),
                                 reason="starts a SLURM cluster (about 4 min): set "
                                 "BIASREPRO_SLURM=1")]

#: the executor's submission line: Snakemake job, SLURM job id, and the rule in the log path
SUBMITTED = re.compile(
    r"has been submitted with SLURM jobid (\d+) \(log: .*/slurm_logs/rule_(\w+)/")


#: the Snakefile's `localrules:` block
LOCAL_RULES = set(re.findall(r"^\s+(\w+),$", re.search(
    r"^localrules:\n((?:\s+\w+,\n)+)", (REPO / "Snakefile").read_text(),
    re.M).group(1), re.M))


def jobcomp_records(path: Path) -> dict[str, dict[str, str]]:
    """SLURM's own completion records (JobCompType=jobcomp/filetxt), by job id."""
    records = {}
    for line in path.read_text().splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        records[fields["JobId"]] = fields
    return records


def test_small_profile_through_slurm_matches_a_local_run(small_run: Path, tmp_path: Path) -> None:
    reason = slurm_local.why_not()
    if reason:
        pytest.skip(f"no private SLURM here: {reason}")
    slurm_local.install()
    repo = copy_checkout(tmp_path / "repo")
    (repo / "cluster.yaml").write_text(yaml.safe_dump(
        {"compute": {"slurm": {"partition": "debug", "account": "biasrepro-ci"}}}))
    cluster = slurm_local.LocalSlurm(tmp_path / "slurm")
    started = time.perf_counter()
    with cluster:
        daemons = {name: proc.pid for name, proc in cluster.procs.items()}
        proc = subprocess.run(
            ["timeout", "-k", "10", "540", str(BIN / "snakemake"),
             "--workflow-profile", "profiles/slurm",
             "--configfile", SMALL_CONFIG, "cluster.yaml", "--jobs", "4",
             # no slurmdbd here: sacct cannot answer
             "--slurm-status-command", "squeue",
             "--slurm-init-seconds-before-status-checks", "7", "--latency-wait", "5"],
            cwd=repo, env=env_with_venv(), capture_output=True, text=True)
        records = jobcomp_records(cluster.jobcomp)
    print(f"SLURM run, daemons included: {time.perf_counter() - started:.1f} s")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    # the daemons this test started are gone, and so is the config link
    for name, pid in daemons.items():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # raises once the daemon has exited
        print(f"stopped {name} (pid {pid})")
    assert not slurm_local.CONF.exists()

    # Every Snakemake job but the Snakefile's `localrules` (gathering tables, seconds each)
    # was an sbatch job that completed, asking for its family's resources (config `compute`,
    # .test/config over config/config); the local ones ran where Snakemake ran.
    submitted = {job: rule for job, rule in SUBMITTED.findall(out)}
    stats = re.search(r"Job stats:\n(.*?)\n\n", out, re.S).group(1)
    counts = {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", stats, re.M)}
    total = counts.pop("total")
    local = set(re.findall(r"^localrule (\w+):", out, re.M))
    assert local == LOCAL_RULES & set(counts) and "all" in local
    assert len(submitted) == total - sum(counts[rule] for rule in local)
    assert set(submitted.values()) == set(counts) - local
    assert set(records) == set(submitted)
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())["compute"]["families"]
    family = {"pretrain_embedded": "train", "finetune_toxicity": "train",
              "predict_sentiment": "score", "representation_score": "score",
              "biasfinder_parse": "parse", "world_reviews": "light", "biasfinder_btc": "light"}
    seen = set()
    for job, rule in submitted.items():
        record = records[job]
        assert record["JobState"] == "COMPLETED" and record["ExitCode"] == "0:0", record
        assert record["Partition"] == "debug" and record["Account"] == "biasrepro-ci"
        if rule in family:
            fam = config[family[rule]]
            assert f"mem={fam['mem_mb']}M" in record["Tres"], (rule, record["Tres"])
            assert record["TimeLimit"] == str(fam["runtime"]), (rule, record["TimeLimit"])
            assert record["Tres"].startswith("cpu=1,"), (rule, record["Tres"])
            seen.add(rule)
    assert seen == set(family)

    # The same bytes as the local run of the small profile; the run record differs only
    # where it names the configuration, which here adds cluster.yaml.
    record = "results/REPRODUCTION.md"
    ours, local = (tree_hashes(r, "results", "resources") for r in (repo, small_run))
    assert ours.pop(record) != local.pop(record)
    assert ours == local
    config_lines = re.compile(r"^- (resolved configuration sha256|configuration files): .*\n",
                              re.M)
    ours, local = ((r / record).read_text() for r in (repo, small_run))
    assert "`cluster.yaml`" in ours and "`cluster.yaml`" not in local
    assert config_lines.sub("", ours) == config_lines.sub("", local)
