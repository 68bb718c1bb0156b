"""benchmarks/precision_check.py at ``--small`` sizes on a CPU: the fp32 and bf16 fine-tunes
of the toxicity study, scored alike, their reported numbers and differences in the JSON.

Nothing here bounds the differences: measuring them is the script's purpose."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


def _run(*args: str) -> str:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "precision_check.py"),
                           *args], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_precision_check_compares_an_fp32_and_a_bf16_fine_tune(tmp_path: Path) -> None:
    out = _run("--small", "--out", str(tmp_path / "p.json"))
    assert "largest |fp32 - bf16| of the fairness gaps" in out
    figures = json.loads((tmp_path / "p.json").read_text())
    arms = figures["arms"]
    assert set(arms) == {"fp32", "bf16"}
    # each arm trained in the precision it asked for, and the weights differ
    assert arms["fp32"]["precision"] == "fp32" and arms["bf16"]["precision"] == "bf16"
    assert arms["fp32"]["steps"] == arms["bf16"]["steps"] > 0
    assert arms["fp32"]["weights_sha256"] != arms["bf16"]["weights_sha256"]
    assert "weights identical: False" in out

    fp32, bf16 = arms["fp32"]["values"], arms["bf16"]["values"]
    assert set(fp32) == set(bf16) == set(figures["values"])
    gaps = [k for k in fp32 if k.startswith("gap/")]
    assert {k.split("/")[1] for k in gaps} == {"gender", "race", "religion"}
    assert {k.split("/")[2] for k in gaps} == {"FPR_gap", "TPR_gap", "AUC_gap"}
    assert {"test/roc_auc", "test/accuracy", "test/f1"} <= set(fp32)
    for key, row in figures["values"].items():
        assert row["fp32"] == fp32[key] and row["bf16"] == bf16[key], key
        for value in (row["fp32"], row["bf16"], row["abs_diff"]):
            assert value is not None and math.isfinite(value), key
        assert row["abs_diff"] == pytest.approx(abs(row["fp32"] - row["bf16"]), abs=1e-12), key

    worst = figures["max_abs_diff"]
    assert worst["gaps"] == pytest.approx(max(figures["values"][k]["abs_diff"] for k in gaps))
    assert figures["values"][worst["gaps_at"]]["abs_diff"] == worst["gaps"]
    assert worst["test_auc"] == figures["values"]["test/roc_auc"]["abs_diff"]
    # the small setting learns the world's toxic cues (AUC ~0.98 on this CPU)
    assert fp32["test/roc_auc"] > 0.5 and bf16["test/roc_auc"] > 0.5
