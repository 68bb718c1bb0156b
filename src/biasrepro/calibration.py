"""Measured GPU speed for ``biasrepro plan``: the calibration file ``benchmarks/gpu_check.py
--calibrate`` writes (``profiles/slurm/calibration.yaml``, one entry per GPU class).

Without it the plan's cost of a pass over data is assumed (``costs.yaml``: a share ``mfu`` of
the datasheet peak, and a floor per batch). A calibration replaces both by a straight line
fitted to steps timed on the GPU, one line for training steps and one for inference batches::

    seconds(batch) = overhead_s + flops(batch) / flops_per_s

with flops = k * N * tokens (k = 6 training, 2 inference; N the compute parameters, as the
plan counts them). ``overhead_s`` is what a batch costs whatever its size (kernel launches,
Python), fitted from the timed steps' intercept, plus what the workflow's own loop adds per
step beyond the bare one (the Hugging Face Trainer; ``biasrepro predict``'s tokenising and
copying), measured by running both on the same GPU. A work of ``batches`` batches and
``flops`` FLOPs then takes ``batches * overhead_s + flops / flops_per_s``.

Standard library and PyYAML only: the plan imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasrepro.errors import ConfigError

#: where the plan looks for it, relative to the checkout (beside costs.yaml)
CALIBRATION = Path("profiles/slurm/calibration.yaml")
KINDS = ("train", "infer")
#: the keys of an entry the plan reads (the entry also lists every timed step: ``points``)
REQUIRED = ("device", "date", "torch", "precision", *KINDS)


@dataclass(frozen=True)
class Line:
    """A batch's seconds as ``overhead_s + flops / flops_per_s``."""

    overhead_s: float
    flops_per_s: float

    def seconds(self, flops: float, batches: float) -> float:
        """Seconds of ``batches`` batches holding ``flops`` FLOPs in all."""
        return batches * self.overhead_s + flops / self.flops_per_s


@dataclass(frozen=True)
class Calibration:
    """One GPU class's measured lines and where they come from."""

    gpu: str
    device: str
    date: str
    torch: str
    precision: str
    train: Line
    infer: Line
    #: jobs sharing one device -> their summed throughput over one job's alone
    packing: Mapping[int, float]

    def line(self, train: bool) -> Line:
        return self.train if train else self.infer

    def describe(self) -> str:
        return f"{self.device}, {self.date}, torch {self.torch}, {self.precision}"


def fit(points: Sequence[tuple[float, float]]) -> Line:
    """Least-squares line through (flops, seconds) points; the intercept (overhead) is kept
    at 0 or more (then the slope is refitted through the origin). Needs two distinct flops."""
    if len({f for f, _ in points}) < 2:
        raise ValueError("a line needs steps of at least two sizes")
    n = len(points)
    mf = sum(f for f, _ in points) / n
    ms = sum(s for _, s in points) / n
    slope = (sum((f - mf) * (s - ms) for f, s in points)
             / sum((f - mf) ** 2 for f, _ in points))
    intercept = ms - slope * mf
    if intercept < 0:
        intercept = 0.0
        slope = sum(f * s for f, s in points) / sum(f * f for f, _ in points)
    if slope <= 0:
        raise ValueError("the timed steps do not take longer with more FLOPs")
    return Line(overhead_s=intercept, flops_per_s=1.0 / slope)


def _line(node: Any, where: str) -> Line:
    try:
        line = Line(float(node["overhead_s"]), float(node["flops_per_s"]))
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"{where}: needs overhead_s and flops_per_s, numbers") from None
    if line.overhead_s < 0 or line.flops_per_s <= 0:
        raise ConfigError(f"{where}: overhead_s must be >= 0 and flops_per_s > 0")
    return line


def parse(entries: Mapping[str, Any], gpu: str, path: Path | str) -> Calibration | None:
    """The entry of GPU class ``gpu`` (any case) in a calibration file's mapping, or
    ``None`` when it has none; a malformed entry is an error naming the file and key."""
    if not isinstance(entries, Mapping):
        raise ConfigError(f"{path}: a calibration file maps GPU classes to their entries")
    names = {str(k).lower(): k for k in entries}
    if gpu.lower() not in names:
        return None
    key = names[gpu.lower()]
    entry = entries[key]
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{path}: {key}: an entry is a mapping")
    missing = [k for k in REQUIRED if k not in entry]
    if missing:
        raise ConfigError(f"{path}: {key}: missing {', '.join(missing)}")
    packing = entry.get("packing") or {}
    try:
        packing = {int(jobs): float(ratio) for jobs, ratio in packing.items()}
    except (AttributeError, TypeError, ValueError):
        raise ConfigError(f"{path}: {key}.packing: maps a number of jobs to a ratio") from None
    return Calibration(gpu=str(key), device=str(entry["device"]), date=str(entry["date"]),
                       torch=str(entry["torch"]), precision=str(entry["precision"]),
                       train=_line(entry["train"], f"{path}: {key}.train"),
                       infer=_line(entry["infer"], f"{path}: {key}.infer"),
                       packing=packing)


def load(path: Path, gpu: str) -> Calibration | None:
    """GPU class ``gpu``'s calibration in ``path``; ``None`` where the file or the entry
    does not exist."""
    if not path.is_file():
        return None
    from biasrepro.config import read_mapping

    return parse(read_mapping(path, "calibration file"), gpu, path)
