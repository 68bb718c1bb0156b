"""The gaps' bootstrap (toxicity paper §5, Eqs. 1–3): paired resampling of the balanced set's
source sentences, stratified resampling of independent groups, and intervals that always
hold their gap."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from biasrepro.errors import DataError
from biasrepro.fairness.evaluation import evaluate
from biasrepro.metrics import group_fairness as gf

GROUPS = ("m1", "m2", "n1", "n2")
ATTRS = {"planted": {"marginalized": ["m1", "m2"], "non_marginalized": ["n1"]},
         "null": {"marginalized": ["n2"], "non_marginalized": ["n1"]}}


def _counterfactuals(rng: np.random.Generator, sources: int, params: dict[str, tuple],
                     *, sigma: float, positives: float) -> tuple[np.ndarray, ...]:
    """A balanced-set-like sample: each source sentence has a label and a latent score z,
    and a version in every group scored sigmoid(beta_g * label + c_g + z + noise)."""
    z = rng.normal(size=sources)
    y = (rng.random(sources) < positives).astype(int)
    score = np.concatenate([b * y + c + z + rng.normal(0, sigma, sources)
                            for b, c in params.values()])
    return (np.tile(y, len(params)), 1 / (1 + np.exp(-score)),
            np.repeat(list(params), sources), np.tile(np.arange(sources), len(params)))


# --- the paired resampling itself -------------------------------------------------------

def _explicit_paired(y, p, g, clusters, used, resamples, seed, step):
    """The paired bootstrap the slow way: per resample, the drawn clusters' rows stacked
    (with repeats) and the rates and AUC computed on them; same draws as ``_paired``."""
    rng = np.random.default_rng(seed)
    _, codes = np.unique(clusters, return_inverse=True)
    k = int(codes.max()) + 1
    members = [np.flatnonzero(codes == j) for j in range(k)]
    out = {m: {grp: [] for grp in used} for m in ("fpr", "tpr", "auc")}
    for begin in range(0, resamples, step):
        for row in rng.integers(0, k, size=(min(step, resamples - begin), k)):
            idx = np.concatenate([members[j] for j in row])
            for grp in used:
                sel = idx[g[idx] == grp]
                fpr, tpr = gf._rates(y[sel], (p[sel] >= 0.5).astype(int))
                out["fpr"][grp].append(fpr)
                out["tpr"][grp].append(tpr)
                out["auc"][grp].append(gf._auc(y[sel], p[sel]))
    return {m: {grp: np.array(v) for grp, v in d.items()} for m, d in out.items()}


@pytest.mark.parametrize("cells", [gf.CHUNK_CELLS, 200])      # one chunk, and several
def test_paired_resamples_are_the_drawn_source_sentences_stacked(monkeypatch, cells) -> None:
    rng = np.random.default_rng(4)
    y, p, g, c = _counterfactuals(rng, 30, {grp: (1.5, -0.7) for grp in GROUPS},
                                  sigma=0.8, positives=0.4)
    p = np.round(p, 1)                                       # many tied scores
    monkeypatch.setattr(gf, "CHUNK_CELLS", cells)
    step = max(1, cells // len(y))
    got = gf._paired(y, p, g, c.astype(str), list(GROUPS), 0.5, 25,
                     np.random.default_rng(7))
    want = _explicit_paired(y, p, g, c.astype(str), GROUPS, 25, 7, step)
    for metric in ("fpr", "tpr", "auc"):
        for grp in GROUPS:
            np.testing.assert_allclose(got[metric][grp], want[metric][grp], rtol=1e-12)


def _old_stratified(y, p, g, attrs, resamples, seed):
    """The stratified bootstrap as it was: each group's rows drawn within it (groups in
    sorted order), the samples of |marginalized mean − non-marginalized mean|."""
    rng = np.random.default_rng(seed)
    boot = {"fpr": {}, "tpr": {}, "auc": {}}
    for grp in sorted({x for s in attrs.values() for side in s.values() for x in side}):
        idx = np.flatnonzero(g == grp)
        draw = rng.integers(0, len(idx), size=(resamples, len(idx)))
        yb, pb = y[idx][draw], p[idx][draw]
        boot["fpr"][grp], boot["tpr"][grp] = gf._rates(yb, (pb >= 0.5).astype(int))
        boot["auc"][grp] = gf._auc(yb, pb)
    return {(a, m): np.abs(np.mean([boot[m][x] for x in s["marginalized"]], axis=0)
                           - np.mean([boot[m][x] for x in s["non_marginalized"]], axis=0))
            for a, s in attrs.items() for m in boot}


def test_stratified_resampling_is_unchanged_and_paired_gives_zero_for_equal_versions() -> None:
    """Every version of a sentence gets the same score: all gaps are exactly 0. Paired
    resamples keep the versions together, so every resampled gap is 0: [0, 0]. Stratified
    resamples (the old draws, unchanged) break the pairs: their |d| samples are all > 0, so
    the old percentile interval of |d| excluded the gap; the signed interval holds it."""
    rng = np.random.default_rng(11)
    sources = 120
    y = (rng.random(sources) < 0.3).astype(int)
    score = np.clip(0.35 + 0.3 * y + rng.normal(0, 0.2, sources), 0, 1)
    groups = ("f", "m")
    attrs = {"gender": {"marginalized": ["f"], "non_marginalized": ["m"]}}
    labels, probs = np.tile(y, 2), np.tile(score, 2)
    g, c = np.repeat(groups, sources), np.tile(np.arange(sources), 2)

    paired = gf.fairness_gaps(labels, probs, g, attrs, resamples=300, seed=5, clusters=c)
    assert (paired["value"] == 0).all() and (paired["low"] == 0).all()
    assert (paired["high"] == 0).all() and (paired["resampling"] == "paired").all()
    assert not np.signbit(paired[["value", "low", "high"]].to_numpy()).any()    # no -0.0

    strat = gf.fairness_gaps(labels, probs, g, attrs, resamples=300, seed=5)
    assert (strat["resampling"] == "stratified").all()
    old = _old_stratified(labels, probs, g, attrs, 300, 5)
    signed = gf._stratified(labels, probs, g, list(groups), 0.5, 300,
                            np.random.default_rng(5))
    for row in strat.itertuples():
        metric = row.metric[:3].lower()
        d = signed[metric]["f"] - signed[metric]["m"]
        np.testing.assert_array_equal(np.abs(d), old[row.attribute, metric])   # same draws
        assert row.value == 0 and row.low == 0 < row.high
        alpha = (1 - 0.95) / 2
        assert row.high == max(-np.quantile(d, alpha), np.quantile(d, 1 - alpha))
        assert np.quantile(old[row.attribute, metric], 0.025) > 0   # the old interval's miss


def test_stratified_output_equals_the_old_one_where_the_folding_changes_nothing() -> None:
    """A clear gap (every resampled difference of one sign): value, resamples and interval
    are the old code's, bit for bit."""
    rng = np.random.default_rng(0)
    n = 3000
    groups = rng.choice(["f", "m"], size=n)
    labels = rng.integers(0, 2, size=n)
    probs = np.clip(0.35 + 0.3 * labels + np.where(groups == "f", 0.15, 0.0)
                    + rng.normal(0, 0.2, n), 0, 1)
    attrs = {"gender": {"marginalized": ["f"], "non_marginalized": ["m"]}}
    t = gf.fairness_gaps(labels, probs, groups, attrs, resamples=500, seed=0)
    old = _old_stratified(labels, probs, groups, attrs, 500, 0)
    signed = gf._stratified(labels, probs, groups, ["f", "m"], 0.5, 500,
                            np.random.default_rng(0))
    for row in t.set_index("metric").loc[["FPR_gap", "TPR_gap"]].itertuples():
        metric = row.Index[:3].lower()
        assert (signed[metric]["f"] > signed[metric]["m"]).all()      # f's shift: d > 0
        samples = old[row.attribute, metric]
        assert row.resamples == 500 and row.resampling == "stratified"
        alpha = (1 - 0.95) / 2
        assert (row.low, row.high) == tuple(np.quantile(samples, [alpha, 1 - alpha]))


# --- every interval holds its point estimate ----------------------------------------------

@pytest.mark.parametrize("paired", [False, True])
def test_every_finite_interval_holds_its_gap_on_random_inputs(paired: bool) -> None:
    rng = np.random.default_rng(21 + paired)
    widened = 0
    for _ in range(60):
        groups = list(GROUPS[: rng.integers(2, 5)])
        attrs = {"a": {"marginalized": groups[:-1], "non_marginalized": groups[-1:]}}
        params = {grp: (rng.uniform(0, 3), rng.uniform(-2, 1)) for grp in groups}
        y, p, g, c = _counterfactuals(rng, int(rng.integers(3, 40)), params,
                                      sigma=rng.uniform(0, 1), positives=rng.uniform(0.05, 0.6))
        if rng.random() < 0.5:
            p = np.round(p, 1)
        t = gf.fairness_gaps(y, p, g, attrs, resamples=int(rng.integers(1, 60)),
                             confidence=rng.uniform(0.5, 0.99), seed=int(rng.integers(1000)),
                             clusters=c if paired else None)
        finite = t[np.isfinite(t[["value", "low", "high"]]).all(axis=1)]
        assert len(finite)
        assert ((finite["low"] >= 0) & (finite["low"] <= finite["value"])
                & (finite["value"] <= finite["high"])).all(), finite
        widened += t["note"].str.contains("widened").sum()
    assert widened                                    # the widening branch was exercised


def test_a_signed_interval_missing_its_point_is_widened_with_a_note() -> None:
    # one resample: the percentile interval is that resample's difference alone
    rng = np.random.default_rng(6)
    y, p, g, c = _counterfactuals(rng, 30, {"x": (1.5, -0.5), "y": (1.5, -1.0)},
                                  sigma=0.5, positives=0.5)
    attrs = {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}}
    for clusters in (None, c):
        t = gf.fairness_gaps(y, p, g, attrs, resamples=1, seed=3, clusters=clusters)
        assert ((t["low"] <= t["value"]) & (t["value"] <= t["high"])).all()
        assert t["note"].str.fullmatch(r"point estimate outside the signed bootstrap "
                                       r"interval \[\S+, \S+\]: widened to include it").all()


def test_cluster_ids_must_be_one_per_row_and_present() -> None:
    args = ([0, 1, 0, 1], [0.2, 0.7, 0.6, 0.9], ["x", "x", "y", "y"],
            {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}})
    with pytest.raises(DataError, match="3 cluster ids for 4 rows"):
        gf.fairness_gaps(*args, resamples=5, clusters=["s1", "s2", "s1"])
    with pytest.raises(DataError, match="missing cluster id"):
        gf.fairness_gaps(*args, resamples=5, clusters=["s1", None, "s1", "s2"])


# --- evaluate: paired on the balanced set only ------------------------------------------

def test_evaluate_pairs_the_balanced_set_and_stratifies_the_original_one() -> None:
    rng = np.random.default_rng(8)
    y, p, g, c = _counterfactuals(rng, 40, {"f": (2.0, -0.8), "m": (2.0, -1.0)},
                                  sigma=0.3, positives=0.4)
    attrs = {"gender": {"marginalized": ["f"], "non_marginalized": ["m"]}}
    balanced = pd.DataFrame({"id": [f"s{i}>{x}" for i, x in zip(c, g, strict=True)],
                             "label": y, "prob": p, "identity": g,
                             "source_id": [f"s{i}" for i in c]})
    kwargs = {"threshold": 0.5, "resamples": 200, "confidence": 0.9, "seed": 2}
    gaps = evaluate(balanced, attrs, **kwargs)["gaps"]
    assert (gaps["resampling"] == "paired").all()
    want = gf.fairness_gaps(y, p, g, attrs, resamples=200, confidence=0.9, seed=2,
                            clusters=balanced["source_id"])
    pd.testing.assert_frame_equal(gaps, want)
    original = balanced.assign(source_id=balanced["id"])          # each row its own source
    for frame in (original, balanced.drop(columns="source_id")):
        gaps = evaluate(frame, attrs, **kwargs)["gaps"]
        assert (gaps["resampling"] == "stratified").all()
        pd.testing.assert_frame_equal(
            gaps, gf.fairness_gaps(y, p, g, attrs, resamples=200, confidence=0.9, seed=2))


# --- coverage -----------------------------------------------------------------------------

#: (beta, c) per group: scores sigmoid(beta * label + c + z + noise), z ~ N(0, 1) per source
#: sentence, noise ~ N(0, SIGMA^2) per version; n2 is n1's twin, so the null gaps are 0
PARAMS = {"m1": (2.4, -0.5), "m2": (2.0, -0.6), "n1": (1.4, -0.9), "n2": (1.4, -0.9)}
SIGMA, POSITIVES = 0.6, 0.35


def _population_gaps(attribute: str) -> dict[str, float]:
    """The population gaps, analytically: with X = z + noise ~ N(0, S^2), threshold 0.5 on
    the sigmoid is score >= 0, so FPR = Phi(c / S), TPR = Phi((beta + c) / S) and
    AUC = P(beta + X1 > X2) = Phi(beta / (S sqrt 2))."""
    s = np.sqrt(1 + SIGMA**2)
    pop = {grp: {"FPR_gap": norm.cdf(c / s), "TPR_gap": norm.cdf((b + c) / s),
                 "AUC_gap": norm.cdf(b / (s * np.sqrt(2)))} for grp, (b, c) in PARAMS.items()}
    sides = ATTRS[attribute]
    return {m: abs(np.mean([pop[x][m] for x in sides["marginalized"]])
                   - np.mean([pop[x][m] for x in sides["non_marginalized"]]))
            for m in ("FPR_gap", "TPR_gap", "AUC_gap")}


SOURCES, REPLICATIONS, RESAMPLES = 200, 2000, 1000


def test_paired_95_percent_intervals_cover_the_true_gap_95_percent_of_the_time() -> None:
    """SOURCES source sentences in four groups, drawn REPLICATIONS times: the nominal 95 %
    paired intervals hold the planted (non-zero) population gaps in 93-97 % of the draws.
    At a true gap of 0 (n2 vs its twin n1) coverage is that of the signed interval
    holding 0, also about 95 % (a percentile interval of |d| would hold 0 almost never)."""
    truth = {a: _population_gaps(a) for a in ATTRS}
    assert min(truth["planted"].values()) > 0.09 and max(truth["null"].values()) == 0
    rng = np.random.default_rng(2024)
    hits: dict[tuple[str, str], int] = {}
    start = time.perf_counter()
    for rep in range(REPLICATIONS):
        y, p, g, c = _counterfactuals(rng, SOURCES, PARAMS, sigma=SIGMA, positives=POSITIVES)
        t = gf.fairness_gaps(y, p, g, ATTRS, resamples=RESAMPLES, seed=rep, clusters=c)
        for row in t.itertuples():
            key = (row.attribute, row.metric)
            hits[key] = hits.get(key, 0) + bool(row.low <= truth[row.attribute][row.metric]
                                                <= row.high)
    coverage = {key: n / REPLICATIONS for key, n in hits.items()}
    print(f"coverage {coverage} in {time.perf_counter() - start:.1f} s")
    for metric in ("FPR_gap", "TPR_gap", "AUC_gap"):
        assert 0.93 <= coverage["planted", metric] <= 0.97, coverage
        assert 0.93 <= coverage["null", metric] <= 0.98, coverage


# --- the interval's level, against an independent computation ----------------------------

def _rates_and_auc(y: np.ndarray, p: np.ndarray) -> tuple[float, float, float]:
    """FPR, TPR (threshold 0.5) and ROC AUC of one sample, written out here (sklearn for the
    AUC); NaN where undefined."""
    from sklearn.metrics import roc_auc_score

    pred = p >= 0.5
    neg, pos = int((y == 0).sum()), int((y == 1).sum())
    fpr = (pred & (y == 0)).sum() / neg if neg else np.nan
    tpr = (pred & (y == 1)).sum() / pos if pos else np.nan
    auc = roc_auc_score(y, p) if neg and pos else np.nan
    return float(fpr), float(tpr), float(auc)


def _percentile_interval(point: float, samples: np.ndarray, confidence: float
                         ) -> tuple[float, float]:
    """The documented interval, from scratch: the central ``confidence`` percentile interval
    [a, b] of the signed differences (widened to reach the signed point), mapped through
    |.|: [0, max(|a|, |b|)] when it holds 0, else [min(|a|, |b|), max(|a|, |b|)]."""
    tail = (1 - confidence) / 2                         # 2.5 % in each tail at 95 %
    finite = samples[np.isfinite(samples)]
    a, b = np.quantile(finite, tail), np.quantile(finite, 1 - tail)
    a, b = min(a, point), max(b, point)
    if a <= 0 <= b:
        return 0.0, max(-a, b)
    return min(abs(a), abs(b)), max(abs(a), abs(b))


def _resampled_gaps(y, p, g, attrs, draws_of_group):
    """Per (attribute, metric): the signed point difference and the signed difference of
    every resample, the resamples given as row indices per group."""
    metrics = ("FPR_gap", "TPR_gap", "AUC_gap")
    point = {grp: _rates_and_auc(y[g == grp], p[g == grp]) for grp in draws_of_group}
    boot = {grp: np.array([_rates_and_auc(y[rows], p[rows]) for rows in draws])
            for grp, draws in draws_of_group.items()}
    def signed(values, sides):
        return (np.mean([values[x] for x in sides["marginalized"]], axis=0)
                - np.mean([values[x] for x in sides["non_marginalized"]], axis=0))

    out = {}
    for attr, sides in attrs.items():
        for k, metric in enumerate(metrics):
            d_point = signed({x: point[x][k] for x in point}, sides)
            d_boot = signed({x: boot[x][:, k] for x in boot}, sides)
            out[attr, metric] = (float(d_point), d_boot)
    return out


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_stratified_interval_is_the_percentile_interval_of_the_same_draws(confidence) -> None:
    """The same generator draws, redone here: each group (in sorted order) draws
    ``resamples`` rows-with-replacement index vectors within itself; the rates and AUC of
    every resample are recomputed without the module, and the interval is the central
    ``confidence`` percentile interval, 2.5 % cut from each tail at 95 %."""
    rng = np.random.default_rng(12)
    y, p, g, _ = _counterfactuals(rng, 60, {grp: (1.2 + 0.3 * i, -0.6 - 0.2 * i)
                                             for i, grp in enumerate(GROUPS)},
                                  sigma=0.7, positives=0.4)
    resamples, seed = 150, 9
    t = gf.fairness_gaps(y, p, g, ATTRS, resamples=resamples, confidence=confidence, seed=seed)
    draw_rng = np.random.default_rng(seed)
    draws = {}
    for grp in sorted(GROUPS):
        idx = np.flatnonzero(g == grp)
        draws[grp] = idx[draw_rng.integers(0, len(idx), size=(resamples, len(idx)))]
    want = _resampled_gaps(y, p, g, ATTRS, draws)
    for row in t.itertuples():
        point, samples = want[row.attribute, row.metric]
        assert row.value == pytest.approx(abs(point), abs=1e-12)
        low, high = _percentile_interval(point, samples, confidence)
        assert (row.low, row.high) == (pytest.approx(low, abs=1e-12),
                                       pytest.approx(high, abs=1e-12)), row


def test_paired_interval_is_the_percentile_interval_of_the_same_cluster_draws() -> None:
    """Paired: the generator draws, per resample, k cluster ids with replacement (clusters
    numbered in sorted order of their ids); the resample is every row of every drawn
    cluster, repeats included. Rates, AUCs and the 95 % interval recomputed here."""
    rng = np.random.default_rng(13)
    y, p, g, c = _counterfactuals(rng, 40, {grp: (1.0 + 0.4 * i, -0.5 - 0.25 * i)
                                             for i, grp in enumerate(GROUPS)},
                                  sigma=0.7, positives=0.4)
    resamples, seed = 120, 4
    ids = np.array([f"s{i:03d}" for i in c])
    t = gf.fairness_gaps(y, p, g, ATTRS, resamples=resamples, confidence=0.95, seed=seed,
                         clusters=ids)
    names = sorted(set(ids))
    members = {j: np.flatnonzero(ids == name) for j, name in enumerate(names)}
    cluster_draws = np.random.default_rng(seed).integers(0, len(names),
                                                         size=(resamples, len(names)))
    draws = {grp: [] for grp in GROUPS}
    for row in cluster_draws:
        rows = np.concatenate([members[j] for j in row])
        for grp in GROUPS:
            draws[grp].append(rows[g[rows] == grp])
    want = _resampled_gaps(y, p, g, ATTRS, draws)
    for row in t.itertuples():
        point, samples = want[row.attribute, row.metric]
        low, high = _percentile_interval(point, samples, 0.95)
        assert (row.low, row.high) == (pytest.approx(low, abs=1e-12),
                                       pytest.approx(high, abs=1e-12)), row


@pytest.mark.parametrize(("confidence", "z"), [(0.95, 1.959964), (0.9, 1.644854)])
def test_interval_width_matches_the_binomial_standard_error(confidence, z) -> None:
    """A clear gap between two large groups with exact counts: 500 negatives and 500
    positives each; FPR 0.4 vs 0.2 and TPR 0.7 vs 0.5. The bootstrap distribution of the
    difference is close to normal with the binomial standard error
    sqrt(p1 (1 - p1) / 500 + p2 (1 - p2) / 500), so the interval is close to
    point ± z · se: its width over 2 · se is z (1.96 at 95 %, 1.64 at 90 %)."""
    def group(fpr: float, tpr: float) -> tuple[list[int], list[float]]:
        labels = [0] * 500 + [1] * 500
        probs = ([0.9] * round(500 * fpr) + [0.1] * round(500 * (1 - fpr))
                 + [0.8] * round(500 * tpr) + [0.2] * round(500 * (1 - tpr)))
        return labels, probs
    (yf, pf), (ym, pm) = group(0.4, 0.7), group(0.2, 0.5)
    attrs = {"gender": {"marginalized": ["f"], "non_marginalized": ["m"]}}
    t = gf.fairness_gaps(yf + ym, pf + pm, ["f"] * 1000 + ["m"] * 1000, attrs,
                         resamples=2000, confidence=confidence, seed=3).set_index("metric")
    for metric, (p1, p2) in (("FPR_gap", (0.4, 0.2)), ("TPR_gap", (0.7, 0.5))):
        se = np.sqrt(p1 * (1 - p1) / 500 + p2 * (1 - p2) / 500)
        row = t.loc[metric]
        assert row["value"] == pytest.approx(0.2)
        ratio = (row["high"] - row["low"]) / (2 * se)
        assert ratio == pytest.approx(z, rel=0.06), (metric, ratio)
