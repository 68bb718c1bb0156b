"""The planted-bias controls: what the embedded world plants against what a run measured.

The embedded default (DESIGN.md, "planted-bias world") generates its data with biases whose
size or direction is known before anything is measured. Each control below states that
planted truth, the measurement a correct pipeline must then show, what this run measured,
and pass or fail. A control whose inputs this configuration does not produce (real data
has no planted truth; a study that was not run) is listed with the reason and no verdict.

Controls, in the papers' terms:

- data: the training split's per-identity counts and toxic ratios, selection bias (Eq. 4)
  and overamplification bias (Eq. 5) equal the values the world was generated with;
- perturbation: re-stratification (§6.4) lifts every identity group to the target positive
  ratio; counterfactual perturbation (§6.6) lowers every attribute's selection bias;
- BiasFinder: the planted gender-label association of the training reviews is found as more
  gender BTCs (Table 4) than occupation or country ones (planted for two classes each), and
  fewer once the model is trained on counterfactually perturbed reviews;
- toxicity: the identity-label association planted through ambiguous comments shows as
  larger balanced-set FPR gaps (Eq. 1) and SenseScore (Eq. 6) for the baseline than for the
  perturbed-data models;
- representation: the planted stereotypes give StereoSet ss and CrowS-Pairs scores above 50,
  and SentenceDebias (§6.2) lowers the debiased attribute's SEAT effect size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro.errors import DataError
from biasrepro.io import (
    atomic_outputs,
    markdown_table,
    read_csv,
    read_json,
    write_json,
    write_text,
)

#: files written by :func:`write_controls`
OUTPUTS = ("controls.csv", "controls.md", "controls.json")
COLUMNS = ["id", "study", "control", "planted", "expected", "measured", "result"]
#: absolute tolerance for quantities the world fixes exactly (float round-off only)
EXACT = 1e-9


@dataclass(frozen=True)
class Control:
    id: str
    study: str
    control: str
    planted: str
    expected: str
    measured: str
    passed: bool | None  # None: not run, ``measured`` says why

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
    stratified: Path | None = None  # the re-stratification stats JSON
    representation: Path | None = None


def _key(obj: Any, path: Path, *keys: str) -> Any:
    for i, key in enumerate(keys):
        if not isinstance(obj, dict) or key not in obj:
            raise DataError(f"missing key {'.'.join(keys[: i + 1])!r}", file=path)
        obj = obj[key]
    return obj


def _not_run(id_: str, study: str, control: str, planted: str, expected: str,
             why: str) -> Control:
    return Control(id_, study, control, planted, expected, why, None)


def _fmt(x: float) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.4f}"


# -- data (Eqs. 4-5) ------------------------------------------------------------------------


def data_controls(summary: Path | None, truth: Path | None) -> list[Control]:
    study = "data (toxicity §4.1, §6.3, §6.5)"
    specs = [
        ("data-counts", "training split: per-identity rows and toxic ratio",
         "the world's configured group sizes and toxic ratios (ground_truth.json, train)",
         "equal, every identity"),
        ("data-selection", "training split: selection bias (Eq. 4) per attribute",
         "the value implied by the planted counts (ground_truth.json)", "equal"),
        ("data-overamplification", "training split: overamplification bias (Eq. 5) per "
         "attribute", "the value implied by the planted counts (ground_truth.json)", "equal"),
    ]
    if summary is None or truth is None:
        why = ("real data: no planted truth" if summary is not None
               else "the data summary was not produced")
        return [_not_run(i, study, c, p, e, why) for i, c, p, e in specs]
    s, t = read_json(summary), read_json(truth)
    measured = _key(s, summary, "civil_comments", "identities", "train")
    planted = _key(t, truth, "train")
    worst_n, worst_r = 0.0, 0.0
    for group, want in sorted(planted.items()):
        got = measured.get(group)
        if got is None:
            raise DataError(f"no identity {group!r} in civil_comments.identities.train",
                            file=summary)
        worst_n = max(worst_n, abs(got["n"] - want["n"]))
        worst_r = max(worst_r, abs(got["positive_ratio"] - want["toxic_ratio"]))
    rows = [Control(*specs[0][:1], study, *specs[0][1:],
                    f"{len(planted)} identities; largest Δn = {worst_n:g}, "
                    f"largest Δ toxic ratio = {worst_r:.2g}",
                    worst_n == 0 and worst_r <= EXACT)]
    bias = _key(s, summary, "civil_comments", "train_dataset_bias")
    for spec, name, pick in ((specs[1], "selection_bias", lambda v: v),
                             (specs[2], "overamplification_bias", lambda v: v["normalized"])):
        kind = "selection" if name == "selection_bias" else "overamplification"
        want = _key(t, truth, name)
        diffs = {a: abs(pick(_key(bias, summary, kind, a)) - pick(v))
                 for a, v in sorted(want.items())}
        text = ", ".join(f"{a} {pick(bias[kind][a]):.4f} (planted {pick(want[a]):.4f})"
                         for a in diffs)
        rows.append(Control(spec[0], study, *spec[1:], text,
                            max(diffs.values()) <= EXACT))
    return rows


# -- debiased training data (§6.4, §6.6) ----------------------------------------------------


def perturbation_controls(stratified: Path | None, toxicity: Path | None) -> list[Control]:
    study = "debiased training data (toxicity §6.4, §6.6)"
    rows = []
    spec = ("restratify-ratio", "re-stratified training set: each identity group's positive "
            "ratio", "re-stratification adds positives until every group reaches "
            "perturbation.restratify.target_ratio", "at least the target, every group")
    if stratified is None:
        rows.append(_not_run(*spec[:1], study, *spec[1:], "re-stratification was not run"))
    else:
        st = read_json(stratified)
        target = _key(st, stratified, "target_ratio")
        after = {g: _key(v, stratified, "after", "positive_ratio")
                 for g, v in sorted(_key(st, stratified, "groups").items())}
        low = min(after.values())
        rows.append(Control(spec[0], study, *spec[1:],
                            f"target {target:g}; lowest {low:.4f} "
                            f"({min(after, key=after.get)}), {len(after)} groups",
                            low >= target - EXACT))
    spec = ("perturb-selection", "counterfactually perturbed training set: selection bias "
            "(Eq. 4)", "every single-identity row is copied into each other group of its "
            "attribute", "lower than the original training data's, every attribute")
    bias = None if toxicity is None else toxicity.with_name("dataset_bias.csv")
    if bias is None or not bias.exists():
        rows.append(_not_run(*spec[:1], study, *spec[1:], "the toxicity study was not run"))
        return rows
    df = read_csv(bias, ["method", "attribute", "selection"])
    base = df[df.method == "baseline"].set_index("attribute")["selection"]
    pert = df[df.method == "downstream-perturbed-data"].set_index("attribute")["selection"]
    if base.empty or pert.empty:
        rows.append(_not_run(*spec[:1], study, *spec[1:],
                             "baseline or downstream-perturbed-data not in this run"))
        return rows
    both = sorted(set(base.index) & set(pert.index))
    lower = [a for a in both if pert[a] < base[a]]
    text = ", ".join(f"{a} {base[a]:.4f} → {pert[a]:.4f}" for a in both)
    rows.append(Control(spec[0], study, *spec[1:], text, len(lower) == len(both)))
    return rows


# -- BiasFinder (Table 4) ---------------------------------------------------------------------


def biasfinder_controls(table: Path | None, truth: Path | None) -> list[Control]:
    study = "BiasFinder (Table 4)"
    planted = "training reviews: a gender-label association for every gender mention"
    if truth is not None:
        t = read_json(truth)
        gender = _key(t, truth, "settings", "planted", "gender")
        planted = ("training reviews' positive rate by gender: "
                   + ", ".join(f"{g} {r:g}" for g, r in sorted(gender.items()))
                   + "; occupation and country: two classes each")
    specs = [
        ("btc-gender-strongest", "baseline models: gender BTC rate against occupation and "
         "country", planted, "gender highest, every sentiment model"),
        ("btc-perturbed-lower", "gender BTC rate: baseline against downstream-perturbed-data",
         planted, "lower after training on counterfactually perturbed reviews, every model"),
    ]
    if table is None:
        return [_not_run(i, study, c, p, e, "BiasFinder was not run") for i, c, p, e in specs]
    if truth is None:
        return [_not_run(i, study, c, p, e, "real data: no planted truth")
                for i, c, p, e in specs]
    df = read_csv(table, ["model", "method", "characteristic", "btc_rate"])
    rate = df.set_index(["model", "method", "characteristic"])["btc_rate"]
    models = sorted(df.model.unique())
    rows = []
    base = df[(df.method == "baseline") & (df.characteristic != "total")]
    if base.empty or "gender" not in set(base.characteristic):
        rows.append(_not_run(*specs[0][:1], study, *specs[0][1:],
                             "no baseline gender rows in this run"))
    else:
        ok, parts = 0, []
        for m in models:
            r = base[base.model == m].set_index("characteristic")["btc_rate"]
            ok += bool(r["gender"] > r.drop("gender").max()) if "gender" in r else 0
            parts.append(f"{m} " + "/".join(f"{c} {r[c]:.3f}" for c in r.index))
        rows.append(Control(specs[0][0], study, *specs[0][1:],
                            f"{ok}/{len(models)} models; " + "; ".join(parts),
                            ok == len(models)))
    pairs = [(m, rate.get((m, "baseline", "gender")),
              rate.get((m, "downstream-perturbed-data", "gender"))) for m in models]
    pairs = [(m, b, p) for m, b, p in pairs if b is not None and p is not None]
    if not pairs:
        rows.append(_not_run(*specs[1][:1], study, *specs[1][1:],
                             "baseline or downstream-perturbed-data not in this run"))
    else:
        ok = sum(p < b for _, b, p in pairs)
        rows.append(Control(specs[1][0], study, *specs[1][1:],
                            f"{ok}/{len(pairs)} models; "
                            + "; ".join(f"{m} {b:.3f} → {p:.3f}" for m, b, p in pairs),
                            ok == len(pairs)))
    return rows


# -- toxicity (Eqs. 1, 6) ----------------------------------------------------------------------


def toxicity_controls(report: Path | None, truth: Path | None) -> list[Control]:
    study = "toxicity fairness (§5, Tables 5-6)"
    planted = ("ambiguous comments: toxic comments of the marginalized groups written "
               "without a toxic cue")
    if truth is not None:
        amb = _key(read_json(truth), truth, "ambiguous")
        marked = sorted(g for g, v in amb.items() if v.get("n_toxic", 0) > 0)
        planted = f"toxic comments without a toxic cue for {', '.join(marked)}"
    specs = [
        ("tox-fpr-gap", "balanced set: FPR gap (Eq. 1), mean over models and attributes",
         planted, "baseline above downstream-perturbed-data"),
        ("tox-sensescore", "balanced set: SenseScore (Eq. 6), mean over models and attributes",
         planted, "baseline above downstream-perturbed-data"),
    ]
    if report is None:
        return [_not_run(i, study, c, p, e, "the toxicity study was not run")
                for i, c, p, e in specs]
    if truth is None:
        return [_not_run(i, study, c, p, e, "real data: no planted truth")
                for i, c, p, e in specs]
    gaps = read_csv(report.with_name("gaps.csv"),
                ["model", "method", "fairness_set", "attribute", "metric", "value"])
    sense = read_csv(report.with_name("sensescore.csv"),
                 ["model", "method", "attribute", "sense_score"])
    fpr = gaps[(gaps.fairness_set == "balanced") & (gaps.metric == "FPR_gap")]
    rows = []
    for spec, df, col in ((specs[0], fpr, "value"), (specs[1], sense, "sense_score")):
        by = {m: df[df.method == m] for m in ("baseline", "downstream-perturbed-data")}
        if any(v.empty for v in by.values()):
            rows.append(_not_run(*spec[:1], study, *spec[1:],
                                 "baseline or downstream-perturbed-data not in this run"))
            continue
        b, p = (by[m].set_index(["model", "attribute"])[col] for m in by)
        cells = sorted(set(b.index) & set(p.index))
        lower = sum(p[c] < b[c] for c in cells)
        mb, mp = b[cells].mean(), p[cells].mean()
        rows.append(Control(spec[0], study, *spec[1:],
                            f"{_fmt(mb)} → {_fmt(mp)}; lower in {lower}/{len(cells)} "
                            "model × attribute cells", bool(mp < mb)))
    return rows


# -- representation (Table 4, §6.2) -------------------------------------------------------------


def representation_controls(table: Path | None, truth: Path | None) -> list[Control]:
    study = "representation bias (Table 4, §6.2)"
    planted = "pre-training sentences pairing identity words with attribute words"
    if truth is not None:
        t = read_json(truth)
        planted = (f"{_key(t, truth, 'n_sentences')} pre-training sentences, "
                   f"{_key(t, truth, 'settings', 'strength'):g} of them stereotypical")
    specs = [
        ("rep-stereoset", "pretrained models: StereoSet ss, mean over models", planted,
         "above 50, every attribute"),
        ("rep-crows", "pretrained models: CrowS-Pairs score, mean over models", planted,
         "above 50, every attribute"),
        ("rep-seat-debias", "SentenceDebias of an attribute: that attribute's absolute SEAT "
         "effect size", planted, "lower than pretrained in at least two thirds of model × "
         "attribute cells"),
    ]
    if table is None:
        return [_not_run(i, study, c, p, e, "representation bias was not measured")
                for i, c, p, e in specs]
    if truth is None:
        return [_not_run(i, study, c, p, e, "real benchmarks: no planted truth")
                for i, c, p, e in specs]
    df = read_csv(table, ["model", "variant", "attribute", "source", "value"])
    pre = df[df.variant == "pretrained"]
    rows = []
    for spec, source in ((specs[0], "stereoset"), (specs[1], "crows")):
        mean = pre[pre.source == source].groupby("attribute")["value"].mean()
        if mean.empty:
            rows.append(_not_run(*spec[:1], study, *spec[1:], f"no {source} scores"))
            continue
        rows.append(Control(spec[0], study, *spec[1:],
                            ", ".join(f"{a} {v:.1f}" for a, v in mean.items()),
                            bool((mean > 50).all())))
    seat = df[df.source == "seat"].set_index(["model", "variant", "attribute"])["value"]
    cells = [(m, a, seat.get((m, "pretrained", a)), seat.get((m, f"sentdebias-{a}", a)))
             for m in sorted(df.model.unique()) for a in sorted(df.attribute.unique())]
    cells = [c for c in cells if c[2] is not None and c[3] is not None]
    if not cells:
        rows.append(_not_run(*specs[2][:1], study, *specs[2][1:],
                             "no SentenceDebias SEAT scores in this run"))
    else:
        lower = sum(abs(d) < abs(p) for *_, p, d in cells)
        rows.append(Control(specs[2][0], study, *specs[2][1:],
                            f"lower in {lower}/{len(cells)} cells",
                            3 * lower >= 2 * len(cells)))
    return rows


def controls(inputs: Inputs) -> list[Control]:
    """Every control of the embedded world, in report order."""
    steps: list[Callable[[], list[Control]]] = [
        lambda: data_controls(inputs.data_summary, inputs.comments_truth),
        lambda: perturbation_controls(inputs.stratified, inputs.toxicity),
        lambda: biasfinder_controls(inputs.biasfinder, inputs.reviews_truth),
        lambda: toxicity_controls(inputs.toxicity, inputs.comments_truth),
        lambda: representation_controls(inputs.representation, inputs.stereotypes_truth),
    ]
    return [c for step in steps for c in step()]


def write_controls(inputs: Inputs, out_dir: Path) -> list[Control]:
    """Write ``controls.{csv,md,json}`` to ``out_dir``."""
    rows = controls(inputs)
    records = [{**asdict(c), "result": c.result} for c in rows]
    counts = {r: sum(c.result == r for c in rows) for r in ("pass", "FAIL", "not run")}
    summary = {"controls": records, "passed": counts["pass"], "failed": counts["FAIL"],
               "not_run": counts["not run"], "total": len(rows)}
    md = ("# Planted-bias controls\n\n"
          "Each control compares what the embedded world plants with what this run "
          f"measured. Passed {counts['pass']} of {len(rows)}; failed {counts['FAIL']}; "
          f"not run {counts['not run']}.\n\n" + markdown_table(records, COLUMNS))
    csv = pd.DataFrame(records, columns=COLUMNS).to_csv(index=False, lineterminator="\n")
    with atomic_outputs(*(out_dir / name for name in OUTPUTS)) as (c, m, j):
        write_text(csv, c)
        write_text(md, m)
        write_json(summary, j)
    return rows
