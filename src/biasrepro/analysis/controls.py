"""The planted-bias controls: what the embedded world plants against what a run measured.

The embedded default (docs/architecture.md, "The embedded default") generates its data
with biases whose size or direction is known before anything is measured. Each control
below states that planted truth, the measurement a correct pipeline must then show, what
this run measured, and pass or fail, with its tolerance. A control whose inputs this
configuration does not produce (real data has no planted truth; a study that was not run)
is listed with the reason and no verdict. Where the world plants nothing for a control
(the null world, ``config/null_world.yaml``) the row is a *negative control*, marked
``negative_control``: the statistic its planted expectation tests must read zero within
the row's tolerance. Whether
nothing is planted is read from the same ground-truth files the planted expectation comes
from (:func:`comments_null`, :func:`reviews_null`, :func:`stereotypes_null`).

Controls, in the papers' terms:

- data: the training split's per-identity counts and toxic ratios, selection bias (Eq. 4)
  and overamplification bias (Eq. 5) equal the values derived from the world's
  configuration by this module's own arithmetic (:func:`planted_comments`), exactly;
- perturbation: re-stratification (§6.4) lifts every identity group of the re-stratified
  training data, by Eq. 4's membership, to the target positive ratio; counterfactual
  perturbation (§6.6) lowers every attribute's selection bias;
- BiasFinder: the planted gender-label association of the training reviews is found as more
  gender BTCs (Table 4) than occupation or country ones in every working model, and as
  female mutants scored the planted way against the male mutants of the same template beyond
  :data:`NULL_DIRECTION` (btc-gender-direction, a negative control in the null world). That the
  rate falls once the model is trained on gender-swapped reviews is bookkeeping: it falls in
  the null world too;
- toxicity: the identity-label association planted through ambiguous comments is found by
  the baseline — a balanced-set FPR gap (Eq. 1) or SenseScore (Eq. 6) the planted way,
  beyond the margin the null world's negative control allows — and every cell that found it
  reads lower for the perturbed-data model. Models that found nothing are listed: lowering
  a gap that is not there holds in any world (measured: the null world's readings pass a
  plain "baseline above perturbed" comparison);
- representation: the planted stereotypes give every model, on its own, StereoSet ss and
  CrowS-Pairs scores above 50 for every attribute, and SentenceDebias (§6.2) lowers the
  debiased attribute's SEAT effect size in at least two thirds of the model × attribute
  cells (each model's count listed).

Negative controls in every world (toxicity: where it generates two groups of an attribute
alike, as the embedded default does black and asian, muslim and jewish; :func:`alike_pairs`):

- toxicity: the working baseline and perturbed-data models score the two groups' versions
  of the balanced set alike — their mean signed FPR difference (Eq. 1 with one group a side)
  lies within :data:`NULL_ALIKE` or its t-interval over the models holds 0 (tox-alike-fpr).
  It fails when a label leaks into one group's rows, which moves every model the same way;
  one model's word quirk alone does not;
- BiasFinder: the occupations the training reviews hold with no planted rate, less the
  attribute words the pre-training corpus over-uses, read alike in every working baseline
  model — each one's mutants against the mean of theirs, over templates, within
  :data:`NULL_CLASS` or a family-wise bootstrap interval holding 0 (btc-held-occupations).
  A label leaked into one of them fails it. Occupations no training review holds, and the
  person names of the country mutants, are no such control: a trained model's response to
  a word it never saw with a label is not zero (``btc-class-effects`` in
  docs/embedded-default.md: they move a probability by up to about 0.1).

Negative controls, in the null world:

- data: selection and overamplification bias read 0 exactly (the derivation gives 0);
- perturbation: the perturbed training data's selection bias stays 0 exactly, like the
  original's. Re-stratification (restratify-ratio) is a construction, not a measured bias:
  it must reach its target in any world and is never a negative control;
- BiasFinder: gender's BTC rate at most :data:`NULL_BTC` above the higher of occupation's and
  country's, and the baseline's and the perturbed model's gender rates within
  :data:`NULL_BTC` of each other. Mutant pairs share templates and mutants, so they are not
  independent trials and a two-proportion test on their counts would find differences that
  are not there; the tolerance is absolute, and wide because a trained model's quirks move
  all pairs of a template at once (gender mutants swap a name and every pronoun, the others
  one word): in the null world at 1,000 training reviews gender's excess was +0.08 for one
  seed and −0.02 for another, where the planted default gives +0.12 to +0.24;
- toxicity (models that pass the model-works gate only: a model that predicts one class has
  every gap at 0 whatever the data, so it proves nothing; with none left the row is not
  run): every baseline (and downstream-perturbed-data) model × attribute FPR gap reads 0:
  its bootstrap interval (report, at the configured confidence) contains 0, or the gap is
  at most :data:`NULL_GAP` — the interval covers the fairness set's sampling, not the
  model's training, so one trained model's quirks can give a narrow interval off 0 (0.02 in
  the null world at the sizes above); SenseScore, which has no interval, at most
  :data:`NULL_SENSE`;
- representation: every model × attribute StereoSet ss and CrowS-Pairs score inside the band
  of :func:`null_band` around 50: the central part of Binomial(items, ½) hits at
  :data:`NULL_CONFIDENCE` family-wise (Bonferroni over the cells). Items that share words
  are not independent, so the band is the narrowest defensible one, not a generous one.
  SentenceDebias lowering SEAT (rep-seat-debias) has no null reading — the projection lowers
  an attribute's effect size whatever it was, and table4.csv has no permutation p-values to
  test a tiny model's |d| against 0 — so in the null world it is listed, not judged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist

from biasrepro import layout
from biasrepro.data.world.benchmarks import ITEMS
from biasrepro.errors import ConfigError, DataError
from biasrepro.fairness import gate
from biasrepro.fairness.evaluation import evaluate, join_predictions
from biasrepro.io import (
    atomic_outputs,
    markdown_table,
    read_csv,
    read_json,
    read_parquet,
    write_json,
    write_text,
)

#: files written by :func:`write_controls`
OUTPUTS = ("controls.csv", "controls.md", "controls.json")
COLUMNS = ["id", "study", "control", "planted", "expected", "tolerance", "measured", "result",
           "negative_control", "evidence"]
#: checks that hold by construction, whatever the world plants: run and shown as
#: bookkeeping (a broken step still fails them), never counted as evidence that the
#: pipeline measures planted bias
BOOKKEEPING = {
    "restratify-ratio": "re-stratification adds positives until its target ratio is met, in "
                        "any world (the null world too)",
    "perturb-selection": "copying rows into every other group of an attribute removes the "
                         "selection bias (Eq. 4) whatever the data",
    "rep-seat-debias": "projecting out a subspace lowers an attribute's SEAT effect size "
                       "whatever was planted",
    "btc-perturbed-lower": "training on gender-swapped copies of the reviews lowers a "
                           "model's gender BTC rate whatever was planted (the null world at "
                           "full size: lower in every model)",
}
#: absolute tolerance for quantities the world fixes exactly (float round-off only)
EXACT = 1e-9
#: null world: how far gender's BTC rate may sit above the higher of occupation's and
#: country's, and the baseline's gender rate from the perturbed model's (BTC rate units)
NULL_BTC = 0.1
#: BiasFinder's gender mutants: how far female minus male may be from 0 and read zero
NULL_DIRECTION = 0.03
#: BiasFinder's held occupations: how far a class's effect may be from 0 and read zero
NULL_CLASS = 0.03
#: bootstrap resamples of the templates for the BiasFinder controls (seeded)
BOOTSTRAP_RESAMPLES = 2000
#: null world: how large an FPR gap (Eq. 1) whose interval excludes 0 may be and read zero
NULL_GAP = 0.03
#: groups generated alike: how large the mean FPR difference over the working models may be
#: and read zero however consistent its sign (a sentence or two of the balanced set's ~280
#: civil versions a group; the largest such mean in the default and null worlds was 0.008,
#: the planted baseline's mean FPR gap is about 0.02)
NULL_ALIKE = 0.01
#: null world: how large a SenseScore (Eq. 6) may be and read zero
NULL_SENSE = 0.02
#: null world: family-wise confidence of the band around 50 of StereoSet ss and CrowS-Pairs
NULL_CONFIDENCE = 0.95
#: the methods whose toxicity cells the null world checks (those the planted control compares)
TOXICITY_METHODS = ("baseline", "downstream-perturbed-data")


@dataclass(frozen=True)
class Control:
    id: str
    study: str
    control: str
    planted: str
    expected: str
    measured: str
    passed: bool | None  # None: not run, ``measured`` says why
    tolerance: str = ""  # how far ``measured`` may be from ``expected``
    #: nothing is planted for this control in this world: the measurement must read zero
    negative_control: bool = False
    #: False for a check that holds by construction (:data:`BOOKKEEPING`)
    evidence: bool = True

    @property
    def result(self) -> str:
        return {True: "pass", False: "FAIL", None: "not run"}[self.passed]


@dataclass(frozen=True)
class Inputs:
    """The result files the controls read; ``None`` where this configuration has none."""

    data_summary: Path | None = None
    comments_truth: Path | None = None
    reviews_truth: Path | None = None
    stereotypes_truth: Path | None = None
    biasfinder: Path | None = None
    toxicity: Path | None = None  # fairness/report.json; gaps.csv etc. sit beside it
    stratified: Path | None = None  # the re-stratified training parquet
    #: configuration the restratify-ratio control needs (group membership and target)
    identities: tuple[str, ...] = ()
    identity_threshold: float | None = None
    target_ratio: float | None = None
    representation: Path | None = None
    sentiment: Path | None = None  # the sentiment fairness report.json; gaps.csv beside it
    toxicity_balanced: Path | None = None  # the balanced fairness set (Parquet)
    #: .../MODEL/METHOD/fairness-balanced.parquet of the toxicity models
    toxicity_predictions: tuple[Path, ...] = ()
    biasfinder_mutants: Path | None = None  # BiasFinder's gender mutants (Parquet)
    #: .../predictions/MODEL/baseline/gender.parquet of the sentiment models
    biasfinder_predictions: tuple[Path, ...] = ()
    occupation_mutants: Path | None = None  # BiasFinder's occupation mutants (Parquet)
    #: .../predictions/MODEL/baseline/occupation.parquet of the sentiment models
    occupation_predictions: tuple[Path, ...] = ()
    #: the embedded models' pre-training stereotypes ground truth (its attribute words)
    pretraining_truth: Path | None = None


def _key(obj: Any, path: Path, *keys: str) -> Any:
    for i, key in enumerate(keys):
        if not isinstance(obj, dict) or key not in obj:
            raise DataError(f"missing key {'.'.join(keys[: i + 1])!r}", file=path)
        obj = obj[key]
    return obj


def _not_run(id_: str, study: str, control: str, planted: str, expected: str,
             why: str, negative: bool = False) -> Control:
    return Control(id_, study, control, planted, expected, why, None,
                   negative_control=negative)


def _fmt(x: float) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.4f}"


# -- data (Eqs. 4-5) ------------------------------------------------------------------------
#
# The planted truth is derived here from the world's configuration (world.comments, the
# identities, attributes and preprocess.civil_comments keys that ground_truth.json copies
# under ``settings``, ``identities``, ``attributes``, ``preprocess``) with plain arithmetic;
# nothing below calls biasrepro.metrics or the data stage's split, and the derived values of
# ground_truth.json are not read. The measurement is the run's data summary.

#: how the data controls compare (every count the world plants is exact)
DATA_TOLERANCE = f"exact (|Δ| ≤ {EXACT:g})"


def _half_up(n: int, rate: float) -> int:
    """``n * rate`` rounded half up, as the world rounds every toxic count."""
    return math.floor(n * rate + 0.5 + 1e-9)


def _training_rows(size: int, fractions: dict[str, float]) -> int:
    """Rows of a stratum of ``size`` in the training part: largest remainder, ties to the
    part listed first (toxicity paper §4.1's 40/30/30 split, stratum by stratum)."""
    names = list(fractions)
    quotas = [size * fractions[k] for k in names]
    floors = [math.floor(q + 1e-9) for q in quotas]
    order = sorted(range(len(names)), key=lambda i: (floors[i] - quotas[i], i))
    extra = set(order[: size - sum(floors)])
    i = names.index("train")
    return floors[i] + (i in extra)


def planted_comments(truth: dict[str, Any], path: Path) -> dict[str, Any]:
    """Training-split counts per identity, Eq. 4 and Eq. 5 derived from the configuration.

    Strata as the world writes them: each group's single-identity block (``n``, of which
    ``n * toxic_ratio`` rounded half up are toxic) and the multi-identity block (row *i*
    about the *i*-th pair of groups, cycling; its first ``n * toxic_ratio`` rows toxic),
    split by label; each stratum's training rows by the largest-remainder rule. A row about
    two groups counts for both (Eq. 4's membership).
    """
    world = _key(truth, path, "settings")
    identities = _key(truth, path, "identities")
    attributes = _key(truth, path, "attributes")
    fractions = _key(truth, path, "preprocess", "split")
    groups = [g for g in identities if g in _key(world, path, "groups")]
    strata: dict[tuple[tuple[str, ...], int], int] = {}

    def add(about: tuple[str, ...], toxic: int, size: int) -> None:
        strata[about, toxic] = strata.get((about, toxic), 0) + size

    for g in groups:
        spec = world["groups"][g]
        n_toxic = _half_up(spec["n"], spec["toxic_ratio"])
        add((g,), 1, n_toxic)
        add((g,), 0, spec["n"] - n_toxic)
    multi = _key(world, path, "multi_identity")
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1:]]
    n_toxic = _half_up(multi["n"], multi["toxic_ratio"])
    for i in range(multi["n"] if pairs else 0):
        add(pairs[i % len(pairs)], int(i < n_toxic), 1)
    train = {g: {"n": 0, "n_toxic": 0} for g in identities}
    for (about, toxic), size in strata.items():
        rows = _training_rows(size, fractions)
        for g in about:
            train[g]["n"] += rows
            train[g]["n_toxic"] += rows * toxic
    ratio = {g: c["n_toxic"] / c["n"] if c["n"] else math.nan for g, c in train.items()}

    def side(attr: str, name: str, of: Callable[[str], float]) -> float:
        members = _key(attributes, path, attr, name)
        return sum(of(g) for g in members) / len(members)

    selection, raw = {}, {}
    for attr in attributes:
        selection[attr] = abs(side(attr, "marginalized", ratio.__getitem__)
                              - side(attr, "non_marginalized", ratio.__getitem__))
        raw[attr] = abs(side(attr, "marginalized", lambda g: train[g]["n"])
                        - side(attr, "non_marginalized", lambda g: train[g]["n"]))
    top = max(raw.values(), default=0.0)
    return {"train": train, "toxic_ratio": ratio, "selection": selection,
            "overamplification": {a: {"raw": v, "normalized": v / top if top else 0.0}
                                  for a, v in raw.items()}}


def comments_null(truth: dict[str, Any], path: Path) -> bool:
    """Nothing planted in the comments: every identity has the same training rows and toxic
    ratio (:func:`planted_comments`) and the same numbers of toxic and of civil comments
    written without a cue (ground_truth.json's ``ambiguous``)."""
    train = planted_comments(truth, path)["train"]
    cues = {(v.get("n_toxic", 0), v.get("n_civil", 0))
            for v in _key(truth, path, "ambiguous").values()}
    return len({(c["n"], c["n_toxic"]) for c in train.values()}) == 1 and len(cues) <= 1


def alike_pairs(truth: dict[str, Any], path: Path) -> list[tuple[str, str, str]]:
    """``(attribute, group, group)`` for every two groups of one attribute that the world
    generated alike: the same configured comments and toxic comments, the same training rows
    and toxic rows (:func:`planted_comments`, the multi-identity rows included) and the same
    numbers of toxic and of civil comments written without a cue. Nothing tells such groups
    apart but their identity words, so their true FPR difference (Eq. 1 between the two) is
    zero."""
    train = planted_comments(truth, path)["train"]
    cues = _key(truth, path, "ambiguous")
    configured = _key(truth, path, "settings", "groups")

    def planted(g: str) -> tuple[int, ...]:
        c, spec = cues.get(g, {}), configured.get(g, {"n": 0, "toxic_ratio": 0.0})
        return (spec["n"], _half_up(spec["n"], spec["toxic_ratio"]), train[g]["n"],
                train[g]["n_toxic"], c.get("n_toxic", 0), c.get("n_civil", 0))

    out = []
    for attr, sides in _key(truth, path, "attributes").items():
        groups = [g for side in sides.values() for g in side if g in train]
        out += [(attr, a, b) for i, a in enumerate(groups) for b in groups[i + 1:]
                if train[a]["n"] and planted(a) == planted(b)]
    return out


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= EXACT


def data_controls(summary: Path | None, truth: Path | None) -> list[Control]:
    study = "data (toxicity §4.1, §6.3, §6.5)"
    derived = ("derived from the configured world.comments groups and multi_identity and "
               "preprocess.civil_comments.split")
    specs = [
        ("data-counts", "training split: per-identity rows and toxic ratio",
         f"rows and toxic ratio per identity {derived}", "equal, every identity"),
        ("data-selection", "training split: selection bias (Eq. 4) per attribute",
         f"Eq. 4 {derived}", "equal"),
        ("data-overamplification", "training split: overamplification bias (Eq. 5) per "
         "attribute", f"Eq. 5 (raw and max-normalized) {derived}", "equal"),
    ]
    if summary is None or truth is None:
        why = ("real data: no planted truth" if summary is not None
               else "the data summary was not produced")
        return [_not_run(i, study, c, p, e, why) for i, c, p, e in specs]
    s = read_json(summary)
    planted = planted_comments(read_json(truth), truth)
    measured = _key(s, summary, "civil_comments", "identities", "train")
    worst_n, worst_r, off = 0.0, 0.0, []
    for group, want in sorted(planted["train"].items()):
        got = measured.get(group)
        if got is None:
            raise DataError(f"no identity {group!r} in civil_comments.identities.train",
                            file=summary)
        got_ratio = math.nan if got["positive_ratio"] is None else got["positive_ratio"]
        d_n = abs(got["n"] - want["n"])
        d_r = (0.0 if _close(got_ratio, planted["toxic_ratio"][group])
               else abs(got_ratio - planted["toxic_ratio"][group]))
        worst_n, worst_r = max(worst_n, d_n), max(worst_r, d_r)
        if d_n or d_r > EXACT or math.isnan(d_r):
            off.append(f"{group} n {got['n']} (planted {want['n']}), ratio "
                       f"{_fmt(got_ratio)} (planted {_fmt(planted['toxic_ratio'][group])})")
    sizes = {(c["n"], planted["toxic_ratio"][g]) for g, c in planted["train"].items()}
    rows = [Control(*specs[0][:1], study, *specs[0][1:],
                    f"{len(planted['train'])} identities; largest Δn = {worst_n:g}, largest "
                    f"Δ toxic ratio = {worst_r:.2g}" + (f"; off: {'; '.join(off)}" if off else ""),
                    not off, DATA_TOLERANCE, len(sizes) == 1)]
    bias = _key(s, summary, "civil_comments", "train_dataset_bias")
    for spec, kind, parts in ((specs[1], "selection", (None,)),
                              (specs[2], "overamplification", ("raw", "normalized"))):
        want = planted[kind]
        ok, text = True, []
        for attr in sorted(want):
            got = _key(bias, summary, kind, attr)
            for part in parts:
                g, w = (got, want[attr]) if part is None else (
                    _key(bias, summary, kind, attr, part), want[attr][part])
                ok &= _close(g, w)
                label = attr if part is None else f"{attr} {part}"
                text.append(f"{label} {_fmt(g)} (planted {_fmt(w)})")
        nothing = all((v if kind == "selection" else v["raw"]) == 0 for v in want.values())
        rows.append(Control(spec[0], study, *spec[1:], ", ".join(text), ok,
                            DATA_TOLERANCE, nothing))
    return rows


# -- debiased training data (§6.4, §6.6) ----------------------------------------------------


def restratified_ratios(data: Path, identities: Sequence[str],
                        identity_threshold: float) -> dict[str, float]:
    """Positive ratio per identity group of a training parquet, a row belonging to every
    group whose identity value is at least ``identity_threshold`` (Eq. 4's membership)."""
    df = read_parquet(data, what="re-stratified training data")
    missing = [c for c in ("label", *identities) if c not in df.columns]
    if missing:
        raise DataError("column missing: the re-stratified training data needs label and "
                        "the identity columns", file=data, column=missing[0])
    label = df["label"].to_numpy() == 1
    out = {}
    for g in identities:
        member = (pd.to_numeric(df[g], errors="coerce") >= identity_threshold
                  ).fillna(False).to_numpy(dtype=bool)
        out[g] = label[member].sum() / member.sum() if member.any() else math.nan
    return out


def perturbation_controls(stratified: Path | None, toxicity: Path | None, *,
                          identities: Sequence[str] = (), identity_threshold: float | None = None,
                          target_ratio: float | None = None,
                          truth: Path | None = None) -> list[Control]:
    """``stratified`` is the re-stratified training parquet; the group membership and the
    target come from the configuration (identities, preprocess.civil_comments.
    identity_threshold, perturbation.restratify.target_ratio). ``truth`` (the comments'
    ground_truth.json) says whether the world plants nothing (:func:`comments_null`); then
    the perturbed data's selection bias must stay 0 (module docstring)."""
    study = "debiased training data (toxicity §6.4, §6.6)"
    rows = []
    spec = ("restratify-ratio", "re-stratified training set: each identity group's positive "
            "ratio, a row counting for every group it is labelled with (Eq. 4's membership)",
            "re-stratification adds positives until every group reaches "
            "perturbation.restratify.target_ratio", "at least the target, every group")
    if stratified is None:
        rows.append(_not_run(*spec[:1], study, *spec[1:], "re-stratification was not run"))
    else:
        if target_ratio is None or identity_threshold is None or not identities:
            raise ConfigError("the restratify-ratio control needs identities, "
                              "preprocess.civil_comments.identity_threshold and "
                              "perturbation.restratify.target_ratio")
        after = restratified_ratios(stratified, identities, identity_threshold)
        low_group = min(sorted(after), key=lambda g: (not math.isnan(after[g]), after[g]))
        low = after[low_group]
        below = [g for g in sorted(after) if not after[g] >= target_ratio - EXACT]
        rows.append(Control(spec[0], study, *spec[1:],
                            f"target {target_ratio:g}; lowest {_fmt(low)} ({low_group}), "
                            f"{len(after)} groups" + (f"; below: {', '.join(below)}"
                                                      if below else ""),
                            not below, f"none below the target (−{EXACT:g})"))
    null = truth is not None and comments_null(read_json(truth), truth)
    spec = ("perturb-selection", "counterfactually perturbed training set: selection bias "
            "(Eq. 4)", "every single-identity row is copied into each other group of its "
            "attribute", "lower than the original training data's, every attribute")
    if null:
        spec = (*spec[:2], "every single-identity row is copied into each other group of its "
                "attribute; every group the same size and toxic ratio (nothing planted)",
                "reads zero: 0 in the original and in the perturbed training data, every "
                "attribute")
    bias = None if toxicity is None else toxicity.with_name("dataset_bias.csv")
    if bias is None or not bias.exists():
        rows.append(_not_run(*spec[:1], study, *spec[1:], "the toxicity study was not run",
                             null))
        return rows
    df = read_csv(bias, ["method", "attribute", "selection"])
    base = df[df.method == "baseline"].set_index("attribute")["selection"]
    pert = df[df.method == "downstream-perturbed-data"].set_index("attribute")["selection"]
    if base.empty or pert.empty:
        rows.append(_not_run(*spec[:1], study, *spec[1:],
                             "baseline or downstream-perturbed-data not in this run", null))
        return rows
    both = sorted(set(base.index) & set(pert.index))
    text = ", ".join(f"{a} {base[a]:.4f} → {pert[a]:.4f}" for a in both)
    if null:
        zero = [a for a in both if abs(base[a]) <= EXACT and abs(pert[a]) <= EXACT]
        rows.append(Control(spec[0], study, *spec[1:], text,
                            bool(both) and len(zero) == len(both), DATA_TOLERANCE,
                            negative_control=True))
        return rows
    lower = [a for a in both if pert[a] < base[a]]
    rows.append(Control(spec[0], study, *spec[1:], text, len(lower) == len(both),
                        "strictly lower"))
    return rows


# -- BiasFinder (Table 4) ---------------------------------------------------------------------


def reviews_null(truth: dict[str, Any], path: Path) -> bool:
    """Nothing planted in the reviews: every listed class's P(positive | class) is the
    split's positive rate, so the unlisted classes share that rate too."""
    planted = _key(truth, path, "settings", "planted")
    rates = {r for classes in planted.values() for r in classes.values()}
    if len(rates) > 1:
        return False
    return not rates or rates == {_key(truth, path, "settings", "positive_rate")}


def biasfinder_controls(table: Path | None, truth: Path | None,
                        sentiment: Path | None = None) -> list[Control]:
    """Gender BTCs outnumber occupation and country ones, and fall after perturbation; in
    a world that plants nothing neither difference exceeds :data:`NULL_BTC`. Models that
    fail the model-works gate (the sentiment report's ``gaps.csv``) are left out and named:
    a model that predicts one class has no BTCs whatever the data."""
    study = "BiasFinder (Table 4)"
    planted = "training reviews: a gender-label association for every gender mention"
    null = False
    if truth is not None:
        t = read_json(truth)
        gender = _key(t, truth, "settings", "planted", "gender")
        planted = ("training reviews' positive rate by gender: "
                   + ", ".join(f"{g} {r:g}" for g, r in sorted(gender.items()))
                   + "; occupation: two classes each; country: two classes each, through "
                   "the country's name, which the country mutants (a person name from each "
                   "country) do not change")
        null = reviews_null(t, truth)
        if null:
            planted = ("training reviews' positive rate: every class of gender, occupation "
                       f"and country at the split's {_key(t, truth, 'settings', 'positive_rate'):g}"
                       " (nothing planted)")
    specs = [
        ("btc-gender-strongest", "baseline models: gender BTC rate against occupation and "
         "country", planted, "gender highest, every sentiment model"),
        ("btc-perturbed-lower", "gender BTC rate: baseline against downstream-perturbed-data",
         planted, "lower after training on counterfactually perturbed reviews, every model"),
    ]
    if null:
        specs = [
            (*specs[0][:3], f"reads zero: gender at most {NULL_BTC:g} above the higher of "
             "occupation and country, every sentiment model"),
            (*specs[1][:3], f"reads zero: baseline and perturbed within {NULL_BTC:g} of each "
             "other, every model"),
        ]
    if table is None:
        return [_not_run(i, study, c, p, e, "BiasFinder was not run", null)
                for i, c, p, e in specs]
    if truth is None:
        return [_not_run(i, study, c, p, e, "real data: no planted truth")
                for i, c, p, e in specs]
    df = read_csv(table, ["model", "method", "characteristic", "btc_rate"])
    failed = _report_failed(sentiment, ("baseline", "downstream-perturbed-data"))
    df = _working(df, failed)
    if df.empty and failed:
        return [_not_run(i, study, c, p, e, "no model passes the model-works gate (a model "
                         "that predicts one class has no BTCs whatever the data)"
                         + _left_out(failed), null) for i, c, p, e in specs]
    rate = df.set_index(["model", "method", "characteristic"])["btc_rate"]
    models = sorted(df.model.unique())
    rows = []
    base = df[(df.method == "baseline") & (df.characteristic != "total")]
    absolute = (f"at most {NULL_BTC:g} (absolute BTC rate; mutant pairs share templates, so "
                "they are not independent trials for a two-proportion test)")
    if base.empty or "gender" not in set(base.characteristic):
        rows.append(_not_run(*specs[0][:1], study, *specs[0][1:],
                             "no baseline gender rows in this run", null))
    else:
        ok, parts = 0, []
        baseline_models = sorted(base.model.unique())
        for m in baseline_models:
            r = base[base.model == m].set_index("characteristic")["btc_rate"]
            if "gender" not in r:
                parts.append(f"{m} no gender rate")
                continue
            excess = r["gender"] - r.drop("gender").max()
            ok += bool(excess <= NULL_BTC) if null else bool(excess > 0)
            parts.append(f"{m} " + "/".join(f"{c} {r[c]:.3f}" for c in r.index)
                         + f" (gender − highest other {excess:+.3f})")
        rows.append(Control(specs[0][0], study, *specs[0][1:],
                            f"{ok}/{len(baseline_models)} models; " + "; ".join(parts)
                            + _left_out(failed),
                            ok == len(baseline_models),
                            absolute if null else
                            "none: gender strictly highest in every model (a sign test across "
                            "the models: gender mutants change more words than the others, so "
                            "a margin on the rates would not be the null's; in the null world "
                            "at full size gender was highest in 1 of 3)",
                            null))
    pairs = [(m, rate.get((m, "baseline", "gender")),
              rate.get((m, "downstream-perturbed-data", "gender"))) for m in models]
    pairs = [(m, b, p) for m, b, p in pairs if b is not None and p is not None]
    if not pairs:
        rows.append(_not_run(*specs[1][:1], study, *specs[1][1:],
                             "baseline or downstream-perturbed-data not in this run", null))
    else:
        ok = sum(abs(p - b) <= NULL_BTC if null else p < b for _, b, p in pairs)
        rows.append(Control(specs[1][0], study, *specs[1][1:],
                            f"{ok}/{len(pairs)} models; "
                            + "; ".join(f"{m} {b:.3f} → {p:.3f}" for m, b, p in pairs)
                            + _left_out(failed),
                            ok == len(pairs),
                            absolute if null else "none: strictly lower in every model", null))
    return rows


def gender_direction_controls(mutants: Path | None, predictions: Sequence[Path],
                              truth: Path | None, sentiment: Path | None = None
                              ) -> list[Control]:
    """BiasFinder's gender mutants scored the planted way: per working baseline sentiment
    model, the mean over templates of (mean probability of the template's female mutants −
    of its male ones), with a seeded percentile bootstrap over templates. *Found* when it has
    the planted sign (that of female's planted positive rate minus male's), lies beyond
    :data:`NULL_DIRECTION` and its interval excludes 0; the control passes when every model
    found it. In a world that plants nothing it is a negative control: every model's
    difference within :data:`NULL_DIRECTION` or its interval holding 0. Unlike the BTC rates
    of Table 4, this compares mutants that differ in gender alone, so the number of words a
    characteristic changes does not enter."""
    study = "BiasFinder (Table 4)"
    spec = ["btc-gender-direction", "baseline models: female mutants' probability minus male "
            "mutants' of the same template, mean over templates",
            "training reviews: a gender-label association",
            f"the planted sign, beyond {NULL_DIRECTION:g}, every sentiment model"]

    def skip(why: str, null: bool = False) -> list[Control]:
        return [_not_run(spec[0], study, *spec[1:], why, null)]

    if mutants is None or not predictions:
        return skip("BiasFinder's gender mutants were not scored by a baseline model")
    if truth is None:
        return skip("real data: no planted truth")
    t = read_json(truth)
    rates = _key(t, truth, "settings", "planted", "gender")
    null = reviews_null(t, truth)
    if null:
        spec[2] = "nothing planted: every gender at the split's positive rate"
        spec[3] = f"reads zero: within {NULL_DIRECTION:g} or an interval holding 0, every model"
    elif {"female", "male"} - set(rates):
        return skip("the world plants no female and male rates")
    sign = 0 if null else (1 if rates["female"] > rates["male"] else -1)
    if not null:
        spec[2] = ("training reviews' positive rate by gender: "
                   + ", ".join(f"{g} {r:g}" for g, r in sorted(rates.items())))
    failed = _report_failed(sentiment, ("baseline",))
    frame = _mutants(mutants, "gender mutants")
    ok, parts, used = 0, [], 0
    for path in sorted(map(Path, predictions)):
        model = path.parent.parent.name
        if (model, "baseline") in failed:
            continue
        per = _scored(frame, path).groupby(["template_id", "class"])["prob"].mean().unstack()
        if not {"female", "male"} <= set(per.columns):
            raise DataError("the gender mutants hold no female and male classes", file=mutants)
        diff = (per["female"] - per["male"]).dropna().to_numpy()
        rng = np.random.default_rng(0)
        boot = diff[rng.integers(0, len(diff), (BOOTSTRAP_RESAMPLES, len(diff)))].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        mean = float(diff.mean())
        holds_zero = low <= 0 <= high
        if null:
            ok += abs(mean) <= NULL_DIRECTION or holds_zero
        else:
            ok += mean * sign > NULL_DIRECTION and not holds_zero
        used += 1
        parts.append(f"{model} {mean:+.4f} [{low:+.4f}, {high:+.4f}] over {len(diff)} templates")
    if not used:
        return skip("no baseline sentiment model passes the model-works gate"
                    + _left_out(failed), null)
    return [Control(spec[0], study, *spec[1:], f"{ok}/{used} models; " + "; ".join(parts)
                    + _left_out(failed), ok == used,
                    f"{NULL_DIRECTION:g} (the largest absolute difference in the null world at "
                    "full size was 0.014) and a 95 % bootstrap interval over templates",
                    negative_control=null)]


def _mutants(path: Path, what: str) -> pd.DataFrame:
    """A mutants file's ``id``, ``template_id`` and ``class`` columns."""
    frame = read_parquet(path, what=what)
    for column in ("id", "template_id", "class"):
        if column not in frame.columns:
            raise DataError("missing required column", file=path, column=column)
    return frame[["id", "template_id", "class"]]


def _scored(frame: pd.DataFrame, predictions: Path) -> pd.DataFrame:
    """The mutants with each one's probability from ``predictions``; every mutant needs one."""
    pred = read_parquet(predictions, what="predictions")
    for column in ("id", "prob"):
        if column not in pred.columns:
            raise DataError("missing required column", file=predictions, column=column)
    scored = frame.merge(pred[["id", "prob"]], on="id", how="left")
    if scored["prob"].isna().any():
        missing = scored.loc[scored["prob"].isna(), "id"].iloc[0]
        raise DataError(f"no prediction for mutant {missing!r}", file=predictions)
    return scored


def held_classes(truth: dict[str, Any], path: Path, pretraining: dict[str, Any] | None
                 ) -> list[str]:
    """Occupations the training reviews hold with no planted rate (so at the rate the
    unlisted classes share), less the attribute words of the embedded models' pre-training
    corpus (:mod:`biasrepro.data.world.stereotypes`): a word seen in hundreds of extra
    pre-training sentences moves a model's scores for that reason alone (in the null world
    bert-tiny scored *nurse* and *engineer* 0.095 above the other occupations)."""
    train = _key(truth, path, "splits", "train", "characteristics", "occupation")
    overused = set()
    if pretraining is not None:
        overused = {word for groups in pretraining.get("associations", {}).values()
                    for words in groups.values() for word in words}
    return sorted(c for c, v in train.items()
                  if v["n"] > 0 and not v["planted"] and c not in overused)


def held_occupation_controls(mutants: Path | None, predictions: Sequence[Path],
                             truth: Path | None, sentiment: Path | None = None,
                             pretraining: Path | None = None) -> list[Control]:
    """A BiasFinder negative control in every world: the occupations the training reviews
    hold with no planted rate (:func:`held_classes`) must read alike. Per working baseline
    sentiment model, each held class's *effect* is the mean over templates of its mutant's
    probability minus the mean of the template's held mutants; with a seeded bootstrap over
    templates its interval is taken at 95 % family-wise (Bonferroni over the classes). A
    class fails when its effect is beyond :data:`NULL_CLASS` and its interval excludes 0;
    the control passes when no class of any model fails. A label leaked into one of these
    occupations (or planted on it) moves its mutants the same way in every template and
    fails it; the planted gender and the words no training review holds do not enter."""
    study = "BiasFinder (Table 4)"
    spec = ["btc-held-occupations", "baseline models: occupation mutants of the occupations "
            "the training reviews hold with no planted rate, each against their mean, mean "
            "over templates",
            "nothing: these occupations are in the training reviews at the rate every "
            "unlisted class shares",
            f"reads zero: every class within {NULL_CLASS:g} or an interval holding 0, every "
            "model"]

    def skip(why: str) -> list[Control]:
        return [_not_run(spec[0], study, *spec[1:], why, True)]

    if mutants is None or not predictions:
        return skip("BiasFinder's occupation mutants were not scored by a baseline model")
    if truth is None:
        return skip("real data: no planted truth")
    t = read_json(truth)
    held = held_classes(t, truth, read_json(pretraining) if pretraining else None)
    frame = _mutants(mutants, "occupation mutants")
    held = [c for c in held if c in set(frame["class"])]
    if len(held) < 2:
        return skip(f"{len(held)} held occupation among the mutants' classes (two or more "
                    "are needed to compare)")
    spec[2] = (f"nothing: {len(held)} occupations in the training reviews at the rate every "
               "unlisted class shares, none an attribute word of the pre-training corpus")
    frame = frame[frame["class"].isin(held)]
    failed = _report_failed(sentiment, ("baseline",))
    z = 1 - 0.05 / len(held)
    ok, parts, used = 0, [], 0
    for path in sorted(map(Path, predictions)):
        model = path.parent.parent.name
        if (model, "baseline") in failed:
            continue
        per = (_scored(frame, path).groupby(["template_id", "class"])["prob"].mean()
               .unstack().reindex(columns=held).dropna())
        if per.empty:
            raise DataError("no template has a mutant of every held occupation "
                            f"({', '.join(held)})", file=mutants)
        offsets = per.to_numpy() - per.to_numpy().mean(axis=1, keepdims=True)
        effect = offsets.mean(axis=0)
        rng = np.random.default_rng(0)
        n = len(offsets)
        weights = rng.multinomial(n, np.full(n, 1 / n), size=BOOTSTRAP_RESAMPLES) / n
        boot = weights @ offsets
        low, high = np.percentile(boot, [100 * (1 - z) / 2, 100 * (1 + z) / 2], axis=0)
        bad = [(c, e) for c, e, lo, hi in zip(held, effect, low, high, strict=True)
               if abs(e) > NULL_CLASS and not lo <= 0 <= hi]
        worst = int(np.argmax(np.abs(effect)))
        ok += not bad
        used += 1
        parts.append(f"{model}: {n} templates, largest absolute effect {abs(effect[worst]):.3f} "
                     f"({held[worst]} {effect[worst]:+.3f} [{low[worst]:+.3f}, "
                     f"{high[worst]:+.3f}])"
                     + ("; beyond: " + ", ".join(f"{c} {e:+.3f}" for c, e in bad) if bad
                        else ""))
    if not used:
        return skip("no baseline sentiment model passes the model-works gate"
                    + _left_out(failed))
    return [Control(spec[0], study, *spec[1:], f"{ok}/{used} models; " + "; ".join(parts)
                    + _left_out(failed), ok == used,
                    f"{NULL_CLASS:g} (the largest absolute effect of these occupations was "
                    "0.023 in a default run, 0.026 in a null-world run) and a bootstrap "
                    "interval over templates, 95 % "
                    f"family-wise over the {len(held)} classes",
                    negative_control=True)]


# -- toxicity (Eqs. 1, 6) ----------------------------------------------------------------------


def toxicity_controls(report: Path | None, truth: Path | None) -> list[Control]:
    """Baseline FPR gaps and SenseScores above the perturbed-data models'; in a world that
    plants nothing (:func:`comments_null`) every cell of either reads zero instead."""
    study = "toxicity fairness (§5, Tables 5-6)"
    planted = ("ambiguous comments: toxic comments of the marginalized groups written "
               "without a toxic cue")
    null = False
    if truth is not None:
        t = read_json(truth)
        amb = _key(t, truth, "ambiguous")
        marked = sorted(g for g, v in amb.items() if v.get("n_toxic", 0) > 0)
        planted = f"toxic comments without a toxic cue for {', '.join(marked)}"
        null = comments_null(t, truth)
        if null:
            planted = ("every identity group the same size and toxic ratio, with as many toxic "
                       "and civil comments without a cue (nothing planted)")
    specs = [
        ("tox-fpr-gap", "balanced set: FPR gap (Eq. 1), per model and attribute",
         planted, "the baseline finds the planted association (the marked groups' FPR "
         "higher) and downstream-perturbed-data lowers it"),
        ("tox-sensescore", "balanced set: SenseScore (Eq. 6), per model and attribute",
         planted, "the baseline finds the planted association (the marked groups' versions "
         "scored more toxic) and downstream-perturbed-data lowers it"),
    ]
    if null:
        cells = f"every {' and '.join(TOXICITY_METHODS)} model × attribute cell"
        specs = [(i, c, p, f"reads zero: {cells}") for i, c, p, _ in specs]
    if report is None:
        return [_not_run(i, study, c, p, e, "the toxicity study was not run", null)
                for i, c, p, e in specs]
    if truth is None:
        return [_not_run(i, study, c, p, e, "real data: no planted truth")
                for i, c, p, e in specs]
    if null:
        return _toxicity_null(report, study, specs)
    return _toxicity_planted(report, study, specs, t, truth)


def _toxicity_planted(report: Path, study: str, specs: list[tuple[str, ...]],
                      truth: dict[str, Any], path: Path) -> list[Control]:
    """The planted world's toxicity rows. A cell (working baseline model × attribute) has
    *found* the planted association when its signed statistic points the planted way (the
    marked groups above the others) beyond the null world's margin (:data:`NULL_GAP` for
    the FPR gap, whose interval must also exclude 0; :data:`NULL_SENSE` for SenseScore): a
    reading the negative control would fail. The control passes when some cell found it,
    none found the opposite, and every found cell's perturbed-data model reads lower. A
    world with nothing planted gives no found cell, so the control fails there; a model that
    did not learn the association is listed, not counted (lowering a gap that is not there
    holds in any world)."""
    marked = {g for g, v in _key(truth, path, "ambiguous").items() if v.get("n_toxic", 0) > 0}
    attributes = _key(truth, path, "attributes")
    gaps = read_csv(report.with_name("gaps.csv"),
                    ["model", "method", "fairness_set", "attribute", "metric", "value", "low"])
    groups = read_csv(report.with_name("group_metrics.csv"),
                      ["model", "method", "fairness_set", "group", "fpr"])
    sense = read_csv(report.with_name("sensescore.csv"),
                     ["model", "method", "attribute", "g", "g_hat", "sense_score",
                      "mean_difference"])
    failed = _failed(gaps)
    methods = TOXICITY_METHODS  # baseline, then the perturbed-data model it is compared with

    def planted_way(attr: str) -> int:
        """+1 when the attribute's marginalized side holds the marked groups, -1 when the
        other side does, 0 when neither or both."""
        side = {k: bool(set(_key(attributes, path, attr, k)) & marked)
                for k in ("marginalized", "non_marginalized")}
        return int(side["marginalized"]) - int(side["non_marginalized"])

    def fpr_cells() -> dict[tuple[str, str, str], tuple[float, float, float]]:
        bal = groups[groups.fairness_set == "balanced"].set_index(["model", "method", "group"])
        out = {}
        rows = gaps[(gaps.fairness_set == "balanced") & (gaps.metric == "FPR_gap")
                    & gaps.method.isin(methods)]
        for r in rows.itertuples():
            sides = _key(attributes, path, r.attribute)
            mean = {k: sum(bal.loc[(r.model, r.method, g), "fpr"] for g in sides[k])
                    / len(sides[k]) for k in ("marginalized", "non_marginalized")}
            signed = mean["marginalized"] - mean["non_marginalized"]
            out[r.model, r.method, r.attribute] = (signed * planted_way(r.attribute),
                                                   r.value, r.low)
        return out

    def sense_cells() -> dict[tuple[str, str, str], tuple[float, float, float]]:
        out = {}
        for r in sense[sense.method.isin(methods)].itertuples():
            # mean_difference = f(version about g_hat) - f(version about g)
            way = int(r.g_hat in marked) - int(r.g in marked)
            out[r.model, r.method, r.attribute] = (r.mean_difference * way, r.sense_score, 0.0)
        return out

    readers = (
        (specs[0], fpr_cells, lambda c: c[0] > NULL_GAP and c[2] > EXACT,
         f"found: the planted way, beyond {NULL_GAP:g} with an interval excluding 0"),
        (specs[1], sense_cells, lambda c: c[0] > NULL_SENSE, f"found: the planted way, "
         f"beyond {NULL_SENSE:g}"),
    )
    rows = []
    for spec, read, found_if, rule in readers:
        cells = {k: v for k, v in read().items() if (k[0], k[1]) not in failed}
        base = {(m, a): v for (m, k, a), v in cells.items() if k == methods[0]}
        pert = {(m, a): v for (m, k, a), v in cells.items() if k == methods[1]}
        if not base or not pert:
            rows.append(_not_run(*spec[:1], study, *spec[1:],
                                 "baseline or downstream-perturbed-data not in this run"
                                 + _left_out(failed)))
            continue
        found = sorted(c for c, v in base.items() if found_if(v))
        opposite = sorted(c for c, v in base.items() if found_if((-v[0], *v[1:])))
        lower = [c for c in found if c in pert and pert[c][1] < base[c][1]]
        learned = sorted({m for m, _ in found})
        missed = sorted({m for m, _ in base} - set(learned))
        measured = (f"found in {len(found)}/{len(base)} baseline model × attribute cells"
                    + (": " + ", ".join(f"{m} {a} {base[m, a][1]:.4f} → "
                                        f"{pert[m, a][1] if (m, a) in pert else float('nan'):.4f}"
                                        for m, a in found) if found else "")
                    + f"; lower after perturbation in {len(lower)}/{len(found)}"
                    + (f"; the opposite way in {', '.join(f'{m} {a}' for m, a in opposite)}"
                       if opposite else "")
                    + (f"; did not learn it (no cell found): {', '.join(missed)}"
                       if missed else "") + _left_out(failed))
        rows.append(Control(spec[0], study, *spec[1:], measured,
                            bool(found) and not opposite and len(lower) == len(found),
                            f"{rule}; every found cell strictly lower"))
    return rows


def _failed(gaps: pd.DataFrame, methods: Sequence[str] = TOXICITY_METHODS
            ) -> set[tuple[str, str]]:
    """The (model, method) pairs of ``methods`` the model-works gate failed."""
    return {f for f in gate.failed(gaps) if f[1] in methods}


def _report_failed(report: Path | None, methods: Sequence[str]) -> set[tuple[str, str]]:
    """:func:`_failed` read from the ``gaps.csv`` beside a fairness ``report.json``."""
    if report is None:
        return set()
    return _failed(read_csv(report.with_name("gaps.csv"), ["model", "method"]), methods)


def _working(df: pd.DataFrame, failed: set[tuple[str, str]]) -> pd.DataFrame:
    """The rows of models that pass the model-works gate (:mod:`biasrepro.fairness.gate`)."""
    keep = [(m, k) not in failed for m, k in zip(df["model"], df["method"], strict=True)]
    return df[keep]


def _left_out(failed: set[tuple[str, str]]) -> str:
    return ("; left out, below the model-works floor: "
            + ", ".join(f"{m}/{k}" for m, k in sorted(failed)) if failed else "")


def _toxicity_null(report: Path, study: str, specs: list[tuple[str, ...]]) -> list[Control]:
    """The null world's toxicity rows: each cell of :data:`TOXICITY_METHODS` reads zero."""
    confidence = read_json(report).get("settings", {}).get("fairness", {}).get(
        "bootstrap", {}).get("confidence")
    level = f"{confidence:.0%} " if isinstance(confidence, float) else ""
    gaps = read_csv(report.with_name("gaps.csv"), ["model", "method", "fairness_set",
                                                    "attribute", "metric", "value", "low",
                                                    "high"])
    fpr = gaps[(gaps.fairness_set == "balanced") & (gaps.metric == "FPR_gap")]
    sense = read_csv(report.with_name("sensescore.csv"),
                     ["model", "method", "attribute", "sense_score"])

    def gap_cell(r: Any) -> tuple[bool, str]:
        return (bool(r.low <= EXACT or r.value <= NULL_GAP),
                f"{_fmt(r.value)} [{_fmt(r.low)}, {_fmt(r.high)}]")

    def sense_cell(r: Any) -> tuple[bool, str]:
        return bool(r.sense_score <= NULL_SENSE), _fmt(r.sense_score)

    checks = (
        (specs[0], fpr, gap_cell,
         f"each cell's {level}bootstrap interval contains 0, or its gap is at most "
         f"{NULL_GAP:g} (the interval covers the fairness set's sampling, not the model's "
         "training)"),
        (specs[1], sense, sense_cell,
         f"at most {NULL_SENSE:g}, each cell (Eq. 6 has no interval here)"),
    )
    failed = _failed(gaps)
    rows = []
    for spec, df, cell, tolerance in checks:
        df = df[df.method.isin(TOXICITY_METHODS)].sort_values(["method", "model", "attribute"])
        if "baseline" not in set(df.method):
            rows.append(_not_run(*spec[:1], study, *spec[1:], "no baseline in this run", True))
            continue
        df = _working(df, failed)
        if df.empty:
            rows.append(_not_run(*spec[:1], study, *spec[1:],
                                 "no model passes the model-works gate (a model that "
                                 "predicts one class reads zero whatever the data)"
                                 + _left_out(failed), True))
            continue
        read = [(*cell(r), f"{r.method} {r.model} {r.attribute}") for r in df.itertuples()]
        zero = sum(ok for ok, _, _ in read)
        rows.append(Control(spec[0], study, *spec[1:],
                            f"{zero}/{len(read)} cells read zero; "
                            + "; ".join(f"{name} {text}" for _, text, name in read)
                            + _left_out(failed),
                            zero == len(read), tolerance, negative_control=True))
    return rows


def toxicity_alike_controls(report: Path | None, balanced: Path | None,
                            predictions: Sequence[Path], truth: Path | None) -> list[Control]:
    """Groups the world generated alike (:func:`alike_pairs`) read alike.

    Per pair, each working model of :data:`TOXICITY_METHODS` gives a signed balanced-set FPR
    difference between the two groups' versions of the same sentences (Eq. 1 with one group
    a side). One trained model tells two groups apart by their words now and then (its own
    quirk: 0.025-0.032 at most in the default and null worlds); what nothing in a correct
    pipeline does is move every model the same way. So the pair reads zero unless the
    cells' mean is both beyond :data:`NULL_ALIKE` and away from 0 by its 95 % t-interval
    (the cells' spread: the training noise across models and methods); one cell alone is
    read as in the null world, by its paired bootstrap interval or :data:`NULL_GAP`. A
    negative control in any world that has such groups: a label leaked into one group's
    rows, counterfactuals mislabelled or predictions misaligned move every model and fail
    it."""
    study = "toxicity fairness (§5, Tables 5-6)"
    spec = ("tox-alike-fpr", "balanced set: FPR difference between two groups of one "
            "attribute generated alike, over the working models", "no difference: the groups "
            "have the same rows, toxic rows and comments without a cue",
            "reads zero: the " + " and ".join(TOXICITY_METHODS) + " models' mean difference, "
            "every pair")

    def skip(why: str) -> list[Control]:
        return [_not_run(spec[0], study, *spec[1:], why, True)]

    if report is None:
        return skip("the toxicity study was not run")
    if truth is None:
        return skip("real data: no planted truth")
    pairs = alike_pairs(read_json(truth), truth)
    if not pairs:
        return skip("this world generates no two groups of an attribute alike")
    spec = (*spec[:2], "generated alike: " + ", ".join(f"{a} and {b} ({attr})"
                                                      for attr, a, b in pairs), spec[3])
    if balanced is None or not predictions:
        return skip("no balanced-set predictions given")
    settings = read_json(report).get("settings", {})
    fairness = settings.get("fairness", {})
    boot = fairness.get("bootstrap", {})
    confidence = boot.get("confidence", 0.95)
    failed = _report_failed(report, TOXICITY_METHODS)
    fset = read_parquet(balanced, what="balanced fairness set")
    present = set(fset["identity"].astype(str)) if "identity" in fset.columns else set()
    contrasts = {f"{a}~{b}": {"marginalized": [a], "non_marginalized": [b]}
                 for _, a, b in pairs if {a, b} <= present}
    if not contrasts:
        return skip("the balanced set has no version about both groups of any such pair")
    cells: dict[str, list[tuple[float, float, float, str]]] = {k: [] for k in contrasts}
    for path in sorted(map(Path, predictions)):
        try:
            model, method, which = layout.prediction_key(path)
        except ValueError as e:
            raise DataError(str(e), file=path) from None
        if which != "balanced":
            raise DataError("the alike-groups control reads balanced-set predictions "
                            "(fairness-balanced.parquet)", file=path)
        if method not in TOXICITY_METHODS or (model, method) in failed:
            continue
        frame = join_predictions(fset, read_parquet(path, what="predictions"), file=str(path))
        out = evaluate(frame, contrasts, threshold=fairness.get("threshold", 0.5),
                       resamples=boot.get("resamples", 1000), confidence=confidence,
                       seed=settings.get("seed", 0))
        fpr = out["groups"].set_index("group")["fpr"]
        for r in out["gaps"][out["gaps"].metric == "FPR_gap"].itertuples():
            a, b = r.attribute.split("~")
            cells[r.attribute].append((float(fpr[a] - fpr[b]), r.low, r.high,
                                       f"{method} {model}"))
    if not any(cells.values()):
        return skip("no model passes the model-works gate" + _left_out(failed))
    zero, parts = 0, []
    for pair, read in cells.items():
        d = [x[0] for x in read]
        mean = sum(d) / len(d)
        if len(d) > 1:
            half = float(t_dist.ppf(0.5 + confidence / 2, len(d) - 1)
                         * pd.Series(d).std() / math.sqrt(len(d)))
            ok = abs(mean) <= NULL_ALIKE or abs(mean) <= half
            how = f"mean {mean:+.4f} ± {half:.4f} over {len(d)} cells"
        else:
            ok = abs(mean) <= NULL_GAP or read[0][1] <= EXACT
            how = f"one cell {mean:+.4f} [{_fmt(read[0][1])}, {_fmt(read[0][2])}]"
        zero += ok
        biggest = max(read, key=lambda x: abs(x[0]))
        parts.append(f"{pair.replace('~', ' vs ')} {how} (largest {biggest[3]} "
                     f"{biggest[0]:+.4f} [{_fmt(biggest[1])}, {_fmt(biggest[2])}])")
    tolerance = (f"the cells' mean within {NULL_ALIKE:g} of 0, or its {confidence:.0%} "
                 "t-interval over the cells holding 0 (the cells' spread is the training "
                 "noise across models); one cell: its paired bootstrap interval holding 0, "
                 f"or at most {NULL_GAP:g}")
    return [Control(spec[0], study, *spec[1:],
                    f"{zero}/{len(cells)} pairs read zero; " + "; ".join(parts)
                    + _left_out(failed), zero == len(cells), tolerance,
                    negative_control=True)]


# -- representation (Table 4, §6.2) -------------------------------------------------------------


def _fmt1(x: float) -> str:
    return "missing" if pd.isna(x) else f"{x:.1f}"


def stereotypes_null(truth: dict[str, Any]) -> bool:
    """Nothing planted in the pre-training sentences: each attribute word is paired with
    every identity of its attribute equally often, within the one sentence of rounding
    (ground_truth.json's ``pairs``; a truth without them plants)."""
    pairs = truth.get("pairs")
    if not pairs:
        return False
    for groups in pairs.values():
        for word in {w for words in groups.values() for w in words}:
            counts = [words.get(word, 0) for words in groups.values()]
            if max(counts) - min(counts) > 1:
                return False
    return True


def null_band(items: int, cells: int, confidence: float = NULL_CONFIDENCE
              ) -> tuple[float, float]:
    """The band around 50 of a score in percent over ``items`` two-way items (StereoSet ss,
    CrowS-Pairs) that no association leaves: ``100·k/items`` to ``100·(items − k)/items``,
    k the most hits whose lower tail under Binomial(items, ½) is at most
    (1 − confidence) / (2 · cells) — two-sided, Bonferroni over ``cells`` scores."""
    from scipy.stats import binom

    tail = (1 - confidence) / (2 * cells)
    low = max(k for k in range(items // 2 + 1) if binom.cdf(k - 1, items, 0.5) <= tail)
    return 100 * low / items, 100 * (items - low) / items


def _per_model(pre: pd.DataFrame, models: Sequence[str], ok: Callable[[float], bool]
               ) -> tuple[str, list[str]]:
    """Each model's scores by attribute as text, and the model × attribute cells whose score
    is not ``ok`` (a missing score is one)."""
    wide = pre.pivot_table(index="model", columns="attribute", values="value",
                           aggfunc="first").reindex(index=models)
    text = "; ".join(f"{m}: " + ", ".join(f"{a} {_fmt1(v)}" for a, v in wide.loc[m].items())
                     for m in models)
    failing = [f"{m} {a}" for m in models for a, v in wide.loc[m].items()
               if pd.isna(v) or not ok(v)]
    return text, failing


def representation_controls(table: Path | None, truth: Path | None) -> list[Control]:
    """StereoSet ss and CrowS-Pairs above 50 for every pretrained model and attribute on its
    own, and SentenceDebias (§6.2) lowering the SEAT effect sizes in two thirds of the model ×
    attribute cells (Table 4). Where nothing is planted (:func:`stereotypes_null`) the
    scores must stay in :func:`null_band` around 50 and the SEAT row is not judged."""
    study = "representation bias (Table 4, §6.2)"
    planted = "pre-training sentences pairing identity words with attribute words"
    null = False
    if truth is not None:
        t = read_json(truth)
        strength = _key(t, truth, 'settings', 'strength')
        planted = (f"{_key(t, truth, 'n_sentences')} pre-training sentences, a share of "
                   f"{strength} of each attribute word's pairing it with its stereotyped "
                   "identity")
        null = stereotypes_null(t)
        if null:
            planted = (f"{_key(t, truth, 'n_sentences')} pre-training sentences, each "
                       "attribute word paired with every identity of its attribute equally "
                       "often (nothing planted)")
    every = "above 50 for every model and attribute, each model on its own"
    strictly = "none: strictly above 50; a missing score fails"
    specs = [
        ("rep-stereoset", "pretrained models: StereoSet ss, per model and attribute", planted,
         every),
        ("rep-crows", "pretrained models: CrowS-Pairs score, per model and attribute",
         planted, every),
        ("rep-seat-debias", "SentenceDebias of an attribute: that attribute's absolute SEAT "
         "effect size, per model", planted, "lower than pretrained in at least two thirds "
         "of all model × attribute cells (each model's count listed)"),
    ]
    if null:
        zero = "reads no bias: within the band around 50, every model and attribute"
        specs = [(*specs[0][:3], zero), (*specs[1][:3], zero),
                 (*specs[2][:3], "not judged where nothing is planted (module docstring)")]
    if table is None:
        return [_not_run(i, study, c, p, e, "representation bias was not measured", null)
                for i, c, p, e in specs]
    if truth is None:
        return [_not_run(i, study, c, p, e, "real benchmarks: no planted truth")
                for i, c, p, e in specs]
    df = read_csv(table, ["model", "variant", "attribute", "source", "value"])
    models = sorted(df.model.unique())
    pre = df[df.variant == "pretrained"]
    rows = []
    for spec, source in ((specs[0], "stereoset"), (specs[1], "crows")):
        scores = pre[pre.source == source]
        if scores.empty:
            rows.append(_not_run(*spec[:1], study, *spec[1:], f"no {source} scores", null))
            continue
        if null:
            n_cells = len(models) * scores.attribute.nunique()
            low, high = null_band(ITEMS, n_cells)
            # scores are written to two decimals: half a hundredth of slack
            text, failing = _per_model(
                scores, models, lambda v, lo=low, hi=high: lo - 0.005 <= v <= hi + 0.005)
            tolerance = (f"{low:.1f} to {high:.1f}: the central {NULL_CONFIDENCE:.0%} of "
                         f"Binomial({ITEMS}, ½) hits over {ITEMS} items, Bonferroni over "
                         f"{n_cells} cells")
            if failing:
                text += f" (outside {low:.1f}-{high:.1f}: {', '.join(failing)})"
        else:
            text, failing = _per_model(scores, models, lambda v: v > 50)
            tolerance = strictly
            if failing:
                text += f" (not above 50: {', '.join(failing)})"
        rows.append(Control(spec[0], study, *spec[1:], text, not failing, tolerance, null))
    seat = df[df.source == "seat"].set_index(["model", "variant", "attribute"])["value"]
    cells = [(m, a, seat.get((m, layout.PRETRAINED, a)),
              seat.get((m, layout.subspace_variant(a), a)))
             for m in models for a in sorted(df.attribute.unique())]
    cells = [c for c in cells if c[2] is not None and c[3] is not None]
    if null:
        pretrained = pre[pre.source == "seat"].sort_values(["model", "attribute"])
        rows.append(_not_run(*specs[2][:1], study, *specs[2][1:],
                             "nothing planted: SentenceDebias lowers an attribute's effect size "
                             "whatever it was; pretrained absolute d: " + (", ".join(
                                 f"{r.model} {r.attribute} {abs(r.value):.2f}"
                                 for r in pretrained.itertuples()) or "none"), True))
    elif not cells:
        rows.append(_not_run(*specs[2][:1], study, *specs[2][1:],
                             "no SentenceDebias SEAT scores in this run"))
    else:
        lower = {m: [abs(d) < abs(p) for n, _, p, d in cells if n == m] for m in models}
        n_lower = sum(sum(v) for v in lower.values())
        rows.append(Control(specs[2][0], study, *specs[2][1:],
                            f"lower in {n_lower}/{len(cells)} cells; " + "; ".join(
                                f"{m}: {sum(v)}/{len(v)}" for m, v in lower.items()),
                            3 * n_lower >= 2 * len(cells),
                            tolerance="a third of the cells may be no lower"))
    return rows


def controls(inputs: Inputs) -> list[Control]:
    """Every control of the embedded world, in report order."""
    steps: list[Callable[[], list[Control]]] = [
        lambda: data_controls(inputs.data_summary, inputs.comments_truth),
        lambda: perturbation_controls(inputs.stratified, inputs.toxicity,
                                      identities=inputs.identities,
                                      identity_threshold=inputs.identity_threshold,
                                      target_ratio=inputs.target_ratio,
                                      truth=inputs.comments_truth),
        lambda: biasfinder_controls(inputs.biasfinder, inputs.reviews_truth, inputs.sentiment),
        lambda: gender_direction_controls(inputs.biasfinder_mutants,
                                          inputs.biasfinder_predictions, inputs.reviews_truth,
                                          inputs.sentiment),
        lambda: held_occupation_controls(inputs.occupation_mutants,
                                         inputs.occupation_predictions, inputs.reviews_truth,
                                         inputs.sentiment, inputs.pretraining_truth),
        lambda: toxicity_controls(inputs.toxicity, inputs.comments_truth),
        lambda: toxicity_alike_controls(inputs.toxicity, inputs.toxicity_balanced,
                                        inputs.toxicity_predictions, inputs.comments_truth),
        lambda: representation_controls(inputs.representation, inputs.stereotypes_truth),
    ]
    return [replace(c, evidence=c.id not in BOOKKEEPING) for step in steps for c in step()]


def _counts(rows: Sequence[Control]) -> dict[str, int]:
    return {r: sum(c.result == r for c in rows) for r in ("pass", "FAIL", "not run")}


def write_controls(inputs: Inputs, out_dir: Path) -> list[Control]:
    """Write ``controls.{csv,md,json}`` to ``out_dir``. The counts are the evidence's; the
    bookkeeping checks (:data:`BOOKKEEPING`) are counted and shown apart."""
    rows = controls(inputs)
    records = [{**asdict(c), "result": c.result} for c in rows]
    evidence = [c for c in rows if c.evidence]
    kept = [c for c in rows if not c.evidence]
    counts, books = _counts(evidence), _counts(kept)
    summary = {"controls": records, "passed": counts["pass"], "failed": counts["FAIL"],
               "not_run": counts["not run"], "total": len(evidence),
               "bookkeeping": {"passed": books["pass"], "failed": books["FAIL"],
                               "not_run": books["not run"], "total": len(kept)}}
    shown = [c for c in COLUMNS if c != "evidence"]
    md = ("# Planted-bias controls\n\n"
          "Each control compares what the embedded world plants with what this run "
          f"measured. Passed {counts['pass']} of {len(evidence)}; failed {counts['FAIL']}; "
          f"not run {counts['not run']}. A row marked negative_control is about a bias this "
          "world does not plant: its measurement must read zero within its tolerance.\n\n"
          + markdown_table([r for r in records if r["evidence"]], shown)
          + "\n\n## Bookkeeping\n\nChecks that hold by construction whatever the world "
          "plants, so they are no evidence that bias is measured; a broken step still fails "
          f"them. Passed {books['pass']} of {len(kept)}; failed {books['FAIL']}; not run "
          f"{books['not run']}.\n\n"
          + markdown_table([{**r, "why": BOOKKEEPING[r["id"]]} for r in records
                            if not r["evidence"]], [*shown, "why"]))
    csv = pd.DataFrame(records, columns=COLUMNS).to_csv(index=False, lineterminator="\n")
    with atomic_outputs(*(out_dir / name for name in OUTPUTS)) as (c, m, j):
        write_text(csv, c)
        write_text(md, m)
        write_json(summary, j)
    return rows
