"""Headline numbers of a run as one nested JSON, for ``dvc metrics show`` / ``dvc metrics diff``.

One file, ``results/metrics.json``, so two runs (two commits, two datasets, two configs)
compare key by key. Each section is present only when its study ran:

- ``classification``: accuracy, ROC-AUC and F1 per task, model and method (test split);
- ``fairness``: per task, model and method, the balanced-set FPR/TPR/AUC gaps (Eqs. 1-3)
  and SenseScore (Eq. 6) per attribute;
- ``biasfinder``: BTC rate per sentiment model, method and characteristic (Table 4);
- ``representation``: CrowS-Pairs, StereoSet ss and SEAT per model, variant and attribute;
- ``cross_study``: the cross-study's headline correlations;
- ``controls``: how many planted-bias controls passed, failed or did not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro.errors import DataError
from biasrepro.io import atomic_outputs, read_csv, read_json, write_json

#: the decimals kept: enough for any difference that matters, few enough to read a diff
DECIMALS = 6


@dataclass(frozen=True)
class Inputs:
    classification: Path | None = None
    fairness: tuple[Path, ...] = ()  # each task's fairness/report.json
    biasfinder: Path | None = None
    representation: Path | None = None
    cross_study: Path | None = None  # the cross-study's summary.json
    controls: Path | None = None  # controls.json


def _round(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, DECIMALS)
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    return x


def _nest(df: pd.DataFrame, keys: list[str], leaf: str, value: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for row in df.itertuples(index=False):
        node = out
        for k in keys:
            node = node.setdefault(str(getattr(row, k)), {})
        v = getattr(row, value)
        node[str(getattr(row, leaf))] = None if pd.isna(v) else float(v)
    return out


def classification(path: Path) -> dict[str, Any]:
    rows = read_json(path)
    if not isinstance(rows, list):
        raise DataError("expected a list of per-model rows", file=path)
    out: dict[str, Any] = {}
    for i, r in enumerate(rows, start=1):
        try:
            if r.get("set", "test") != "test":  # the headline keeps the test split's
                continue
            node = out.setdefault(r["task"], {}).setdefault(r["model"], {})
            node[r["method"]] = {k: r[k] for k in ("accuracy", "roc_auc", "f1")}
        except (KeyError, TypeError, AttributeError):  # (a row that is not a mapping)
            raise DataError("needs task, model, method, accuracy, roc_auc and f1",
                            file=path, row=i) from None
    return out


def fairness(report: Path) -> tuple[str, dict[str, Any]]:
    task = read_json(report).get("task")
    if not isinstance(task, str):
        raise DataError("missing key 'task'", file=report)
    gaps = read_csv(report.with_name("gaps.csv"),
                ["model", "method", "fairness_set", "attribute", "metric", "value"])
    gaps = gaps[gaps.fairness_set == "balanced"].assign(
        key=lambda d: d.metric.str.lower() + "_" + d.attribute)
    out = _nest(gaps, ["model", "method"], "key", "value")
    sense = read_csv(report.with_name("sensescore.csv"),
                 ["model", "method", "attribute", "sense_score"])
    sense = sense.assign(key="sensescore_" + sense.attribute)
    for model, methods in _nest(sense, ["model", "method"], "key", "sense_score").items():
        for method, values in methods.items():
            out.setdefault(model, {}).setdefault(method, {}).update(values)
    return task, out


def headline(inputs: Inputs) -> dict[str, Any]:
    """The nested headline metrics of one run."""
    out: dict[str, Any] = {}
    if inputs.classification is not None:
        out["classification"] = classification(inputs.classification)
    for report in inputs.fairness:
        task, values = fairness(report)
        out.setdefault("fairness", {})[task] = values
    if inputs.biasfinder is not None:
        df = read_csv(inputs.biasfinder, ["model", "method", "characteristic", "btc_rate"])
        out["biasfinder"] = _nest(df, ["model", "method"], "characteristic", "btc_rate")
    if inputs.representation is not None:
        df = read_csv(inputs.representation, ["model", "variant", "attribute", "source", "value"])
        df = df.assign(key=df.source + "_" + df.attribute)
        out["representation"] = _nest(df, ["model", "variant"], "key", "value")
    if inputs.cross_study is not None:
        out["cross_study"] = read_json(inputs.cross_study)
    if inputs.controls is not None:
        c = read_json(inputs.controls)
        out["controls"] = {k: c.get(k) for k in ("passed", "failed", "not_run", "total")}
    return _round(out)


def write_headline(inputs: Inputs, out: Path) -> dict[str, Any]:
    metrics = headline(inputs)
    with atomic_outputs(out) as (tmp,):
        write_json(metrics, tmp)
    return metrics
