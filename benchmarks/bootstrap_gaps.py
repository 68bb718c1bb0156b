"""Bootstrap intervals of the fairness gaps: vectorized against a per-resample loop.

Issue #5 (speed): ``metrics.group_fairness.fairness_gaps`` draws every resample of a group
at once and computes rates as sums over the index matrix and AUCs from row-wise ranks
(Mann–Whitney), with no Python loop per resample. The naive baseline, measured in the same
run on the same data, loops over resamples and calls scikit-learn's ``roc_auc_score`` and
NumPy rate sums for each group in each resample (the usual hand-written bootstrap).

Both give the same point values and the same interval rule (the signed difference's
percentile interval mapped through |.|); the script prints both intervals, the times and the
ratio. This is the stratified bootstrap of the original fairness set.
Data: a balanced-fairness-set-like table (8 groups of three attributes, ~12 % positives,
scores that depend on label and group). Seeded; ``python benchmarks/bootstrap_gaps.py``.
"""

from __future__ import annotations

import argparse
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


def make_data(n_per_group: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    groups = np.repeat(GROUPS, n_per_group)
    labels = (rng.random(len(groups)) < 0.12).astype(int)
    shift = {g: 0.05 * i for i, g in enumerate(GROUPS)}
    logits = 2.5 * labels - 1.5 + np.vectorize(shift.get)(groups) + rng.normal(0, 1, len(groups))
    return labels, 1 / (1 + np.exp(-logits)), groups


def naive(labels: np.ndarray, probs: np.ndarray, groups: np.ndarray, resamples: int,
          threshold: float, seed: int) -> dict[tuple[str, str], tuple[float, float]]:
    """One resample at a time: per group, draw, then FPR/TPR sums and sklearn's AUC."""
    rng = np.random.default_rng(seed)
    index = {g: np.flatnonzero(groups == g) for g in GROUPS}
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(resamples):
        per = {}
        for g, idx in index.items():
            draw = idx[rng.integers(0, len(idx), len(idx))]
            y, p = labels[draw], probs[draw]
            pred = p >= threshold
            fpr = (pred & (y == 0)).sum() / max((y == 0).sum(), 1)
            tpr = (pred & (y == 1)).sum() / max((y == 1).sum(), 1)
            auc = roc_auc_score(y, p) if 0 < y.sum() < len(y) else np.nan
            per[g] = {"FPR_gap": fpr, "TPR_gap": tpr, "AUC_gap": auc}
        for attr, sides in ATTRIBUTES.items():
            for metric in ("FPR_gap", "TPR_gap", "AUC_gap"):
                low = np.mean([per[g][metric] for g in sides["marginalized"]])
                high = np.mean([per[g][metric] for g in sides["non_marginalized"]])
                samples.setdefault((attr, metric), []).append(low - high)
    return {k: fold(*np.nanquantile(v, [0.025, 0.975])) for k, v in samples.items()}


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
    for row in fast.itertuples():
        lo, hi = slow[(row.attribute, row.metric)]
        print(f"  {row.attribute:9s} {row.metric:8s} value {row.value:.4f}  vectorized "
              f"[{row.low:.4f}, {row.high:.4f}]  loop [{lo:.4f}, {hi:.4f}]")
    print(f"vectorized: {t_fast:.2f} s; per-resample loop: {t_slow:.2f} s")
    print(f"speed-up: {t_slow / t_fast:.1f}x")


if __name__ == "__main__":
    main()
