"""Bootstrap intervals of the fairness gaps: vectorized against a per-resample loop.

Speed: ``metrics.group_fairness.fairness_gaps`` draws every resample of a group
at once and computes rates as sums over the index matrix and AUCs from row-wise ranks
(Mann–Whitney), with no Python loop per resample. The naive baseline, measured in the same
run on the same data, loops over resamples and calls scikit-learn's ``roc_auc_score`` and
NumPy rate sums for each group in each resample (the usual hand-written bootstrap).

The loop takes the same generator draws (each group's ``resamples`` index vectors, groups
in sorted order, drawn before the loop) and applies the documented interval rule itself (the
signed difference's percentile interval, widened to reach the point, mapped through |.|), so
both paths must give the same values and intervals: the script prints both, the times and the
ratio, and exits with status 1 where any value or bound differs by more than ``TOLERANCE``.
This is the stratified bootstrap of the original fairness set.
Data: a balanced-fairness-set-like table (8 groups of three attributes, ~12 % positives,
scores that depend on label and group). Seeded; ``python benchmarks/bootstrap_gaps.py``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from biasrepro.metrics.group_fairness import fairness_gaps

ATTRIBUTES = {
    "gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
    "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
    "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]},
}
GROUPS = [g for sides in ATTRIBUTES.values() for side in sides.values() for g in side]
#: largest difference allowed between the two paths' values and bounds
TOLERANCE = 1e-9


def make_data(n_per_group: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    groups = np.repeat(GROUPS, n_per_group)
    labels = (rng.random(len(groups)) < 0.12).astype(int)
    shift = {g: 0.05 * i for i, g in enumerate(GROUPS)}
    logits = 2.5 * labels - 1.5 + np.vectorize(shift.get)(groups) + rng.normal(0, 1, len(groups))
    return labels, 1 / (1 + np.exp(-logits)), groups


def _rates(y: np.ndarray, p: np.ndarray, threshold: float) -> dict[str, float]:
    """FPR, TPR and sklearn's AUC of one sample; NaN where undefined."""
    pred = p >= threshold
    neg, pos = int((y == 0).sum()), int((y == 1).sum())
    return {"FPR_gap": (pred & (y == 0)).sum() / neg if neg else np.nan,
            "TPR_gap": (pred & (y == 1)).sum() / pos if pos else np.nan,
            "AUC_gap": roc_auc_score(y, p) if neg and pos else np.nan}


def naive(labels: np.ndarray, probs: np.ndarray, groups: np.ndarray, resamples: int,
          threshold: float, seed: int) -> dict[tuple[str, str], tuple[float, float, float]]:
    """One resample at a time: per group, FPR/TPR sums and sklearn's AUC; (value, low,
    high) per attribute and metric. The draws are the vectorized path's: per group, in
    sorted order, a (resamples, rows) index matrix from one seeded generator."""
    rng = np.random.default_rng(seed)
    index = {g: np.flatnonzero(groups == g) for g in sorted(GROUPS)}
    draws = {g: idx[rng.integers(0, len(idx), size=(resamples, len(idx)))]
             for g, idx in index.items()}
    point = {g: _rates(labels[idx], probs[idx], threshold) for g, idx in index.items()}
    samples: dict[tuple[str, str], list[float]] = {}
    for r in range(resamples):
        per = {g: _rates(labels[draws[g][r]], probs[draws[g][r]], threshold) for g in index}
        for attr, sides in ATTRIBUTES.items():
            for metric in ("FPR_gap", "TPR_gap", "AUC_gap"):
                samples.setdefault((attr, metric), []).append(
                    difference(per, sides, metric))
    out = {}
    for (attr, metric), values in samples.items():
        d = difference(point, ATTRIBUTES[attr], metric)
        finite = np.array([v for v in values if math.isfinite(v)])
        a, b = np.quantile(finite, [0.025, 0.975])
        out[attr, metric] = (abs(d), *fold(min(a, d), max(b, d)))
    return out


def difference(per: dict[str, dict[str, float]], sides: dict[str, list[str]],
               metric: str) -> float:
    """Mean over the marginalized groups minus mean over the non-marginalized ones."""
    low = np.mean([per[g][metric] for g in sides["marginalized"]])
    high = np.mean([per[g][metric] for g in sides["non_marginalized"]])
    return float(low - high)


def fold(a: float, b: float) -> tuple[float, float]:
    """The image of the signed interval [a, b] under |.|."""
    if a <= 0 <= b:
        return 0.0, max(-a, b)
    return min(abs(a), abs(b)), max(abs(a), abs(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-per-group", type=int, default=600)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    labels, probs, groups = make_data(args.n_per_group, args.seed)

    start = time.perf_counter()
    fast = fairness_gaps(labels, probs, groups, ATTRIBUTES, threshold=0.5,
                         resamples=args.resamples, seed=args.seed)
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    slow = naive(labels, probs, groups, args.resamples, 0.5, args.seed)
    t_slow = time.perf_counter() - start

    print(f"{len(labels)} rows, {len(GROUPS)} groups, {args.resamples} resamples")
    worst = 0.0
    for row in fast.itertuples():
        value, lo, hi = slow[(row.attribute, row.metric)]
        worst = max(worst, *(abs(x - y) for x, y in ((row.value, value), (row.low, lo),
                                                     (row.high, hi))))
        print(f"  {row.attribute:9s} {row.metric:8s} value {row.value:.4f} / {value:.4f}  "
              f"vectorized [{row.low:.4f}, {row.high:.4f}]  loop [{lo:.4f}, {hi:.4f}]")
    print(f"vectorized: {t_fast:.2f} s; per-resample loop: {t_slow:.2f} s")
    print(f"speed-up: {t_slow / t_fast:.1f}x")
    print(f"max |vectorized - loop| over values and bounds: {worst:.2e}")
    if not worst <= TOLERANCE:                        # NaN (one side undefined) fails too
        sys.exit(f"the vectorized and the per-resample bootstrap disagree by {worst:.2e} "
                 f"(> {TOLERANCE:g})")


if __name__ == "__main__":
    main()
