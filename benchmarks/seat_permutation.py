"""SEAT permutation p-values: vectorized partitions against a loop over partitions.

``representation.seat.permutation_p_value`` computes the test statistic
``sum_{x in X'} s(x)`` of all partitions (or of the sampled ones) as array operations in
chunks. The baseline, measured in the same run on the same associations, is the loop that
sent-bias and bias-bench run: one Python iteration per partition, summing its members.

Two cases with bias-bench's 100,000 samples: an exact test (8 + 8 targets: all 12,870
partitions) where both must give the same p-value, and a sampled one (24 + 24 targets)
where both draw their own random partitions, so the p-values agree only up to sampling
error. Seeded; ``python benchmarks/seat_permutation.py``.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from biasrepro.representation.seat import SAMPLES, TIE_TOLERANCE, permutation_p_value


def looped_p_value(s_x: np.ndarray, s_y: np.ndarray, *, samples: int, seed: int) -> float:
    """The same test, one partition per Python iteration (the baseline)."""
    s = np.concatenate([s_x, s_y])
    half = len(s_x)
    threshold = s_x.sum() - TIE_TOLERANCE * np.abs(s).sum()
    total = math.comb(2 * half, half)
    if total <= samples:
        reached = sum(s[list(xs)].sum() >= threshold
                      for xs in itertools.combinations(range(2 * half), half))
        return reached / total
    rng = np.random.default_rng(seed)
    reached = 0
    for _ in range(samples - 1):
        reached += s[rng.permutation(2 * half)[:half]].sum() >= threshold
    return (1 + reached) / samples


def main() -> None:
    rng = np.random.default_rng(0)
    for half in (8, 24):
        s_x, s_y = rng.normal(0.05, 0.1, half), rng.normal(0.0, 0.1, half)
        timings, values = {}, {}
        for name, fn in (("loop over partitions", looped_p_value),
                         ("vectorized", permutation_p_value)):
            start = time.perf_counter()
            values[name] = fn(s_x, s_y, samples=SAMPLES, seed=0)
            timings[name] = time.perf_counter() - start
        kind = "exact" if math.comb(2 * half, half) <= SAMPLES else f"{SAMPLES:,} sampled"
        print(f"{half} + {half} targets ({kind} partitions):")
        for name, seconds in timings.items():
            print(f"  {name:22s} {seconds:7.3f} s  p = {values[name]:.5f}")
        print(f"  speed-up: {timings['loop over partitions'] / timings['vectorized']:.1f}x")


if __name__ == "__main__":
    main()
