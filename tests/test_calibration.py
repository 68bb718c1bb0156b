"""The plan's measured GPU speed: fitting the timed steps, reading the calibration file, and
the plan using it (benchmarks/gpu_check.py --calibrate writes it; its run on a CPU is in
tests/test_benchmarks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import REPO

from biasrepro import calibration as cal
from biasrepro import plan
from biasrepro.errors import ConfigError

COSTS = yaml.safe_load((REPO / plan.COSTS).read_text(encoding="utf-8"))
ENTRY = {"device": "NVIDIA H200", "date": "2026-12-03", "torch": "2.13.0+cu128",
         "precision": "bf16", "train": {"overhead_s": 0.004, "flops_per_s": 250e12},
         "infer": {"overhead_s": 0.001, "flops_per_s": 400e12}, "packing": {8: 6.0}}


def test_fit_recovers_an_exact_line() -> None:
    # 2 ms + F / 500 TFLOP/s at three sizes
    points = [(f, 0.002 + f / 500e12) for f in (1e12, 4e12, 9e12)]
    line = cal.fit(points)
    assert line.overhead_s == pytest.approx(0.002, rel=1e-9)
    assert line.flops_per_s == pytest.approx(500e12, rel=1e-9)


def test_fit_least_squares_by_hand() -> None:
    # x = 1, 2, 3 (TFLOP), y = 1, 3, 2 (ms): slope 0.5 ms/TFLOP, intercept 1 ms
    line = cal.fit([(1e12, 0.001), (2e12, 0.003), (3e12, 0.002)])
    assert line.overhead_s == pytest.approx(0.001, rel=1e-9)
    assert line.flops_per_s == pytest.approx(1e12 / 0.0005, rel=1e-9)


def test_a_negative_intercept_is_refitted_through_the_origin() -> None:
    # y = 2x - 1 (ms, x in TFLOP): the least-squares intercept is -1; through the origin
    # the slope is sum(x*y) / sum(x*x) = (1*1 + 2*3 + 3*5) / (1 + 4 + 9) = 22/14 ms per TFLOP
    line = cal.fit([(1e12, 0.001), (2e12, 0.003), (3e12, 0.005)])
    assert line.overhead_s == 0.0
    assert line.flops_per_s == pytest.approx(1e12 / (22 / 14 * 1e-3), rel=1e-9)


@pytest.mark.parametrize(("points", "message"), [
    ([(1e12, 0.1), (1e12, 0.2)], "at least two sizes"),
    ([(1e12, 0.3), (2e12, 0.2), (3e12, 0.1)], "do not take longer"),
])
def test_fit_refuses_what_is_no_line(points, message) -> None:
    with pytest.raises(ValueError, match=message):
        cal.fit(points)


def test_a_line_costs_batches_and_flops() -> None:
    line = cal.Line(overhead_s=0.003, flops_per_s=2e14)
    assert line.seconds(flops=4e16, batches=1000) == pytest.approx(3.0 + 200.0)


def test_parse_reads_an_entry_of_any_case() -> None:
    got = cal.parse({"H200": ENTRY}, "h200", "c.yaml")
    assert (got.gpu, got.device, got.date, got.precision) == ("H200", "NVIDIA H200",
                                                              "2026-12-03", "bf16")
    assert got.line(True) == cal.Line(0.004, 250e12)
    assert got.line(False) == cal.Line(0.001, 400e12)
    assert got.packing == {8: 6.0}
    assert cal.parse({"H200": ENTRY}, "a100", "c.yaml") is None


@pytest.mark.parametrize(("edit", "message"), [
    (lambda e: e.pop("date"), r"c\.yaml: h200: missing date"),
    (lambda e: e.update(train={"overhead_s": 0.1}), r"h200\.train: needs overhead_s and "
                                                     r"flops_per_s"),
    (lambda e: e.update(infer={"overhead_s": -1, "flops_per_s": 1e12}),
     r"h200\.infer: overhead_s must be >= 0"),
    (lambda e: e.update(packing=["8"]), r"h200\.packing: maps a number of jobs"),
])
def test_parse_names_the_file_and_key_of_a_fault(edit, message) -> None:
    entry = {k: (dict(v) if isinstance(v, dict) else v) for k, v in ENTRY.items()}
    edit(entry)
    with pytest.raises(ConfigError, match=message):
        cal.parse({"h200": entry}, "h200", "c.yaml")


def test_load_without_a_file_is_none(tmp_path: Path) -> None:
    assert cal.load(tmp_path / "absent.yaml", "h200") is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        cal.load(bad, "h200")


def test_a_calibrated_work_costs_its_measured_line() -> None:
    """Training: batches x overhead + 6 N T / flops_per_s, by hand; without a calibration
    the assumed max(FLOPs at mfu, batches x floor)."""
    config = {"models": {"registry": {}}, "methods": {"registry": {}}}
    measured = cal.parse({"h200": ENTRY}, "h200", "c.yaml")
    model = plan.CostModel(config, COSTS, "h200", calibration=measured)
    work = plan.Work(train=True, params=85e6, tokens=1e9, batches=500_000)
    assert model.work_seconds(work) == pytest.approx(500_000 * 0.004 + 6 * 85e6 * 1e9 / 250e12)
    infer = plan.Work(train=False, params=85e6, tokens=1e9, batches=15_000)
    assert model.work_seconds(infer) == pytest.approx(15_000 * 0.001 + 2 * 85e6 * 1e9 / 400e12)
    assumed = plan.CostModel(config, COSTS, "h200")
    h200 = COSTS["gpus"]["h200"]
    assert assumed.work_seconds(work) == pytest.approx(max(
        6 * 85e6 * 1e9 / (h200["peak_flops"] * h200["mfu"]),
        500_000 * COSTS["overheads"]["train_step_s"]))


def test_the_plan_says_where_its_speed_comes_from() -> None:
    measured = cal.parse({"h200": ENTRY}, "h200", "c.yaml")
    text = plan.speed_source(measured, Path("c.yaml"), "h200", jobs_per_gpu=8)
    assert text.startswith("Per-batch costs are measured: NVIDIA H200, 2026-12-03, torch "
                           "2.13.0+cu128, bf16 (c.yaml: training 4.00 ms a step + 250 TFLOP/s, "
                           "inference 1.00 ms a batch + 400 TFLOP/s).")
    assert "8 jobs share a device (compute.jobs_per_gpu): measured 6.00x" in text
    assert "no packing throughput measured" in plan.speed_source(measured, Path("c"), "h200", 4)
    assert "assumed" in plan.speed_source(None, Path("c.yaml"), "h200")


@pytest.fixture(scope="module")
def calibration_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cal") / "calibration.yaml"
    path.write_text(yaml.safe_dump({"h200": ENTRY}))
    return path


def test_the_paper_plan_with_a_calibration(calibration_file: Path) -> None:
    """The whole paper profile costed with the measured lines: every GPU rule's hours
    follow the lines (the fine-tunings by hand from their works), the text says so."""
    measured_text = plan.run(Path("config/paper.yaml"), gpu="h200", fmt="csv",
                             calibration=calibration_file, repo=REPO)
    assumed_text = plan.run(Path("config/paper.yaml"), gpu="h200", fmt="csv", assumed=True,
                            calibration=calibration_file, repo=REPO)
    rows = {r.split(",")[0]: r.split(",") for r in measured_text.splitlines()[1:]}
    assumed = {r.split(",")[0]: r.split(",") for r in assumed_text.splitlines()[1:]}
    assert rows.keys() == assumed.keys()
    assert float(rows["total"][4]) != float(assumed["total"][4])
    jobs, config = plan.dag_jobs(REPO / "config/paper.yaml", REPO)
    model = plan.CostModel(config, COSTS, "h200",
                           calibration=cal.parse({"h200": ENTRY}, "h200", "c"))
    over = COSTS["overheads"]
    expected = 0.0
    for job in (j for j in jobs if j.rule == "finetune_toxicity"):
        runs, works = model.works(job)
        expected += over["job_s"] + runs * over["run_s"] + sum(
            w.batches * (0.004 if w.train else 0.001)
            + (6 if w.train else 2) * w.params * w.tokens / (250e12 if w.train else 400e12)
            for w in works)
    assert float(rows["finetune_toxicity"][4]) == pytest.approx(expected / 3600, abs=1e-4)
    md = plan.run(Path("config/paper.yaml"), gpu="h200", calibration=calibration_file, repo=REPO)
    assert "Per-batch costs are measured: NVIDIA H200, 2026-12-03" in md


def test_an_explicit_calibration_without_the_class_is_an_error(calibration_file: Path,
                                                               tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no calibration for GPU class 'a100'"):
        plan.run(Path("config/config.yaml"), gpu="a100", calibration=calibration_file,
                 repo=REPO)
    with pytest.raises(ConfigError, match="calibration file not found"):
        plan.run(Path("config/config.yaml"), gpu="h200", calibration=tmp_path / "x.yaml",
                 repo=REPO)
    # the default file is optional: without it (or its class) the plan is assumed
    text = plan.run(Path("config/config.yaml"), gpu="a100", repo=REPO)
    assert "Per-batch costs are assumed" in text
