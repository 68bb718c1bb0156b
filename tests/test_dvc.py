"""DVC: dvc.yaml is derived from the Snakemake DAG (and fresh), and `dvc repro` works in a
fresh clone, rebuilding only what a parameter change affects (a dataset parameter: the SST
set's size reruns its world, its preparation and the summary, and no model)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import BIN, REPO, SMALL_CONFIG, env_with_venv

from biasrepro import config, dvc


def test_dvc_yaml_matches_the_snakemake_dag() -> None:
    dvc.check()  # raises with "regenerate it with `biasrepro dvc-yaml`" when stale


def test_a_stale_dvc_yaml_is_detected(tmp_path: Path) -> None:
    stale = tmp_path / "dvc.yaml"
    stale.write_text((REPO / "dvc.yaml").read_text().replace("world_sst", "world_ssst"))
    with pytest.raises(Exception, match="stale"):
        dvc.check(output=stale)


def test_stage_params_are_the_keys_each_rule_reads() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    params = {name: s.get("params", [{}])[0].get("config/config.yaml", [])
              for name, s in stages.items()}
    assert params["world_comments"] == sorted(
        ["seed", "identities", "attributes", "preprocess.civil_comments", "world.comments"])
    assert params["prepare_imdb"] == ["datasets.imdb"]
    assert "world.comments" not in params["world_reviews"]
    cc_deps = stages["prepare_civil_comments"]["deps"]
    assert cc_deps[0] == "resources/world/civil_comments/all_data.csv"
    assert {"world_reviews", "world_comments", "world_sst", "prepare_imdb",
            "prepare_civil_comments", "prepare_sst", "data_summary",
            "pretrain_embedded_bert-tiny", "finetune_baseline_roberta-tiny_toxicity",
            "model_metrics"} <= set(stages)
    assert params["finetune_baseline_albert-tiny_sentiment"] == sorted(
        ["seed", "models.registry.albert-tiny", "models.training.sentiment"])


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env_with_venv(), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def _ran(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


@pytest.mark.slow
def test_dvc_repro_in_a_fresh_clone_reruns_only_affected_stages(checkout: Path) -> None:
    # The small profile as a complete config/config.yaml (DVC reads params from that file).
    small = config.load(checkout / "config/config.yaml", checkout / SMALL_CONFIG)
    (checkout / "config/config.yaml").write_text(yaml.safe_dump(small, sort_keys=False))
    # its stages: one per job of the small profile (fewer models than the default's)
    _run([str(BIN / "biasrepro"), "dvc-yaml"], checkout)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "clone"]):
        _run(cmd, checkout)

    first = _run([str(BIN / "dvc"), "repro"], checkout)
    assert _ran(first) == set(yaml.safe_load((checkout / "dvc.yaml").read_text())["stages"])
    assert "up to date" in _run([str(BIN / "dvc"), "status"], checkout)

    def sst_dependent(p: Path) -> bool:  # SST is the sentiment appendix's fairness set
        rel = p.relative_to(checkout / "results").parts
        return ("sst" in rel or "summary" in p.name or rel[:2] == ("predictions", "sentiment")
                or rel[:2] == ("sentiment", "fairness"))

    untouched = {p: p.stat().st_mtime_ns for p in (checkout / "results").rglob("*")
                 if p.is_file() and not sst_dependent(p)}
    small["world"]["sst"]["n"] += 10
    (checkout / "config/config.yaml").write_text(yaml.safe_dump(small, sort_keys=False))

    status = json.loads(_run([str(BIN / "dvc"), "status", "--json"], checkout).splitlines()[-1])
    assert set(status) == {"world_sst"}
    assert "world.sst" in json.dumps(status)

    second = _run([str(BIN / "dvc"), "repro"], checkout)
    stages = yaml.safe_load((checkout / "dvc.yaml").read_text())["stages"]
    sentiment_fairness = {n for n in stages if n in (
        "fairness_sets_sentiment", "fairness_report_sentiment")
        or (n.startswith("predict_test_") and n.endswith("_sentiment"))}
    assert sentiment_fairness
    assert _ran(second) == {"world_sst", "prepare_sst", "data_summary", *sentiment_fairness}
    assert {p: p.stat().st_mtime_ns for p in untouched} == untouched
    summary = json.loads((checkout / "results/data/summary.json").read_text())
    assert summary["sst"]["all"]["n"] == small["world"]["sst"]["n"]
