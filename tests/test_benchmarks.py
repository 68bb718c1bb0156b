"""The benchmark scripts run (on small sizes); their speed is measured, never asserted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO


def _run(script: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_predict_throughput_reports_ratios() -> None:
    out = _run("predict_throughput.py", "--templates", "12", "--mutants-per-template", "5")
    assert "ratio vs pipeline loop:" in out and "max |probability difference|" in out


def test_gpu_check_runs_small_on_cpu_and_calibrates_the_plan(tmp_path: Path) -> None:
    """The GPU script on a CPU (small sizes): it fine-tunes, scores, times every step kind
    and variant, packs two jobs, and writes a calibration the plan reads (filed under a GPU
    class only for this test: the device says cpu)."""
    from biasrepro import calibration, plan

    out = _run("gpu_check.py", "--small", "--epochs", "2", "--score", "500",
               "--out", str(tmp_path / "g.json"), "--calibrate", str(tmp_path / "c.yaml"),
               "--gpu-class", "h200", "--archs", "bert", "--warmup", "2", "--repeats", "5",
               "--pack", "2", "--pack-steps", "3")
    figures = json.loads((tmp_path / "g.json").read_text())
    assert figures["scored_texts"] == 500 and figures["train_steps"] > 0
    assert figures["train_samples_per_s"] > 0 and figures["score_texts_per_s"] > 0
    entry = yaml.safe_load((tmp_path / "c.yaml").read_text())["h200"]
    timed = {(p["kind"], p["shape"], p["variant"]) for p in entry["points"]}
    assert timed == {(k, s, v) for k, shapes, variants in (
        ("train", ("toxicity", "bert4doc", "tse"), ("fp32", "bf16", "bf16_fused")),
        ("infer", ("score_64", "score_512", "sentdebias"), ("fp32", "bf16")))
        for s in shapes for v in variants}  # torch.compile only on a GPU (or --compile)
    assert entry["device"] == "cpu" and entry["precision"] == "fp32"
    assert entry["train"]["variant"] == entry["infer"]["variant"] == "fp32"
    assert entry["packing_check"]["jobs"] == 2 and entry["packing_check"]["identical_weights"]
    assert "weights identical to alone: True" in out
    goals = entry["targets"]  # the targets, costed from this run's measurements
    assert goals["packed_throughput"] == entry["packing_check"]["throughput_ratio"]
    assert goals["toxicity_epoch_s"] > 0 and goals["mutants_scored_s"] > 0
    low, high = goals["paper_plan_gpu_hours"]
    assert 0 < low <= high
    assert "target paper_plan_gpu_hours:" in out
    measured = calibration.load(tmp_path / "c.yaml", "h200")
    assert measured.train.flops_per_s > 0 and measured.packing == {
        2: entry["packing_check"]["throughput_ratio"]}
    text = plan.run(Path("config/config.yaml"), gpu="h200", calibration=tmp_path / "c.yaml",
                    repo=REPO)
    assert f"Per-batch costs are measured: cpu, {entry['date']}" in text


def test_biasfinder_templates_benchmark_compares_with_the_naive_path() -> None:
    out = _run("biasfinder_templates.py", "--n", "40", "--n-process", "1", "--batch-size", "8")
    assert "speed-up:" in out and "identical templates: True" in out


def test_bootstrap_benchmark_compares_with_a_per_resample_loop() -> None:
    out = _run("bootstrap_gaps.py", "--n-per-group", "60", "--resamples", "50")
    assert "speed-up:" in out and "per-resample loop:" in out


def test_crows_batching_benchmark_compares_with_one_pass_per_mask() -> None:
    out = _run("crows_batching.py", "--hidden", "32", "--layers", "1", "--vocab", "500",
               "--sentences", "3", "--length", "8")
    assert "speed-up:" in out and "one pass per mask" in out


def test_seat_permutation_benchmark_gives_the_exact_p_value_both_ways() -> None:
    out = _run("seat_permutation.py")
    exact = out.split("24 + 24")[0]
    p_values = {line.split("p = ")[1] for line in exact.splitlines() if "p = " in line}
    assert len(p_values) == 1 and "speed-up:" in out


def test_representation_gpu_check_runs_on_cpu(tmp_path: Path) -> None:
    _run("representation_gpu.py", "--device", "cpu", "--out-dir", str(tmp_path))
    report = json.loads((tmp_path / "representation_gpu.json").read_text())
    for arch in ("bert", "albert", "roberta"):
        assert report[arch]["cpu_cuda_agree"] and report[arch]["train_step"]["finite"]
        assert report[arch]["train_step"]["max_abs_projection_after_hook"] < 1e-4


def test_civil_comments_scale_benchmark_runs_small() -> None:
    out = _run("scale_civil_comments.py", "--rows", "20000")
    assert "prepare civil-comments:" in out and "naive whole-file read only:" in out


def test_predict_scale_benchmark_runs_small() -> None:
    out = _run("predict_scale.py", "--rows", "2000", "--naive-rows", "2000",
               "--per-template", "20")
    assert "predict, 2,000 mutants:" in out and "naive whole-input pass, 2,000 mutants:" in out
    assert "2000 rows," in out


def test_btc_scale_benchmark_runs_small() -> None:
    out = _run("btc_scale.py", "--rows", "3000", "--naive-rows", "2000", "--per-template", "30")
    assert "btc, 3,000 mutants:" in out and "naive pairs with texts, 2,000 mutants:" in out
    assert "3,000 mutants of 100 templates" in out and "annotate sample" in out


def test_sentdebias_scale_benchmark_runs_small() -> None:
    out = _run("sentdebias_scale.py", "--sentences", "3000", "--naive-sentences", "2000")
    assert "subspace, 3,000 sentences:" in out and "naive whole-corpus pass, 2,000" in out
    assert "counterfactual tuples of" in out


#: every rule of the paper profile's data path (benchmarks/paper_dryrun.py's targets)
DATA_PATH_RULES = {"prepare_civil_comments", "prepare_imdb", "prepare_sst", "data_summary",
                   "biasfinder_wordlists", "biasfinder_parse", "biasfinder_templates",
                   "restratify_training", "perturb_training", "imdb_gendered",
                   "imdb_gendered_perturbed_test", "fairness_sets"}


def test_paper_dryrun_table_reads_snakemake_benchmark_files(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import paper_dryrun

    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rel, s, rss in (("prepare_imdb.tsv", 2.5, 147.4),
                        ("fairness_sets/toxicity.tsv", 12.0, 443.2),
                        ("fairness_sets/sentiment.tsv", 10.0, 430.0)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(header + f"{s}\t0:00:02\t{rss}\t1\t1\t1\t0\t0\t0\t1.0\n")
    text = paper_dryrun.table(paper_dryrun.read_benchmarks(tmp_path), 20.0, "head")
    assert "| `fairness_sets` | 2 (sentiment, toxicity) | 22.0 | 2.0 | 443 |" in text
    assert "| `prepare_imdb` | 1 | 2.5 | 1.0 | 147 |" in text
    assert "| **total** | 3 | 24.5 (sum of jobs) | 3.0 | 443 (largest job) |" in text


@pytest.mark.slow
def test_paper_dryrun_runs_the_data_path_small(tmp_path: Path) -> None:
    """The paper profile's data path end to end at a tiny size (about two minutes on two
    cores): every rule of it ran and is in the table."""
    out = _run("paper_dryrun.py", "--rows", "50000", "--reviews", "100", "--workdir",
               str(tmp_path / "run"), "--out", str(tmp_path / "table.md"))
    text = (tmp_path / "table.md").read_text()
    assert text.strip() in out and "snakemake failed" not in text
    ran = set(re.findall(r"^\| `(\w+)` \|", text, flags=re.M))
    assert ran == DATA_PATH_RULES, ran ^ DATA_PATH_RULES
    assert "| `perturb_training` | 3 (" in text and "| **total** | 17 |" in text
    config = (tmp_path / "run" / "paper-dryrun.yaml").read_text()
    assert "profile: paper" in config and "dryrun-tiny-mlm" in config


def test_neuralcoref_benchmark_reports_the_ratio_and_the_same_clusters(tmp_path: Path) -> None:
    """The first layer per mention against per pair, on weights in the published layout
    (random, small): the same clusters both ways, and the ratio printed."""
    from test_neuralcoref import write_weights

    corpus = tmp_path / "reviews.tsv"
    corpus.write_text("1\tMy sister has a dog. She loves him and he loves her.\n"
                      "0\tThe director said his film was long, and the critics agreed.\n")
    out = _run("neuralcoref.py", "--weights", str(write_weights(tmp_path / "w")),
               "--corpus", str(corpus), "--n", "6")
    assert "ratio vs naive:" in out and "same clusters: True" in out
