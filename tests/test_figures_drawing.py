"""What each figure draws, read back from the matplotlib objects in process: every bar's slot
and height, every interval, "n/a" mark, heatmap cell, star, label, title and legend entry,
against values worked out by hand from hand-built tables (with decoy rows of other sets and
groups that a wrong filter would draw). Written from a mutation run of the drawing functions of
``analysis/figures.py`` (see docs/testing.md). Each test draws (and, for the writers, saves)
its own figures, so a mutant is always checked by every test that reaches it."""

from __future__ import annotations

import math
import re
import textwrap

import pandas as pd
import pytest

from biasrepro.analysis import figures as F
from biasrepro.errors import DataError

nan = float("nan")
BASE, PERT, UP = "baseline", "downstream-perturbed-data", "upstream-sentDebias-gender"
ATTRIBUTES = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
              "race": {"marginalized": ["black"], "non_marginalized": ["white"]}}


def _hex(colour) -> str:
    from matplotlib.colors import to_hex

    return to_hex(colour, keep_alpha=False)


def _slot(i: int, j: int, n: int) -> float:
    """The centre of method j's bar (of n) at category i: n slots filling 0.84 of a unit."""
    return round(i - 0.42 + 0.84 / n * (j + 0.5), 6)


def _bars(ax) -> list[tuple[float, float, str]]:
    """(x centre, height, colour) of each bar, in drawing order."""
    return [(round(p.get_x() + p.get_width() / 2, 6), round(p.get_height(), 9),
             _hex(p.get_facecolor())) for c in ax.containers for p in c.patches]


def _texts(ax) -> list[tuple[float, float, str]]:
    return [(round(t.get_position()[0], 6), round(t.get_position()[1], 6), t.get_text())
            for t in ax.texts]


def _segments(collection) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    return [tuple((round(float(x), 6), round(float(y), 6)) for x, y in seg)
            for seg in collection.get_segments()]


def _legend(fig) -> tuple[list[str], list[str], str, int]:
    (legend,) = fig.legends
    return ([t.get_text() for t in legend.get_texts()],
            [_hex(h.get_facecolor()) for h in legend.legend_handles],
            legend.get_title().get_text(), legend._ncols)


def _figtexts(fig) -> list[str]:
    """The figure's own texts, not its title."""
    return [t.get_text() for t in fig.texts if t is not fig._suptitle]


def _report(task: str = "toxicity", training: dict | None = None,
            confidence: float = 0.9) -> dict:
    return {"task": task,
            "training": training or {BASE: {"path": "train.parquet"}},
            "settings": {"attributes": ATTRIBUTES,
                         "fairness": {"attributes": {task: ["gender", "race"]},
                                      "bootstrap": {"confidence": confidence}}}}


# -- bars ---------------------------------------------------------------------------------


def _axes():
    return F._figure(4, 3).subplots()


def test_bars_put_each_method_in_its_slot_with_its_interval_or_an_na_mark() -> None:
    ax = _axes()
    new = "some-new-method"
    F._bars(ax, ["a", "a long category name"], [BASE, new],
            {("a", BASE): (0.5, 0.4, 0.6), ("a long category name", BASE): (nan, nan, nan),
             ("a", new): (0.3, nan, 0.4), ("a long category name", new): (0.2, 0.1, 0.3),
             ("unknown", BASE): (9.0, 0.0, 9.0)})
    grey, other = F.method_colour(BASE), F.method_colour(new)
    assert _bars(ax) == [(-0.21, 0.5, grey), (0.21, 0.3, other), (1.21, 0.2, other)]
    assert all(p.get_width() == pytest.approx(0.42) and p.get_linewidth() == 0
               for p in ax.patches)
    (na,) = ax.texts
    assert (round(na.get_position()[0], 6), na.get_position()[1], na.get_text()) == \
        (0.79, 0, "n/a")
    assert (na.get_rotation(), _hex(na.get_color())) == (90, grey)
    vlines, hlines = ax.collections
    assert _segments(vlines) == [((-0.21, 0.4), (-0.21, 0.6)), ((1.21, 0.1), (1.21, 0.3))]
    cap = 0.42 * 0.3
    assert _segments(hlines) == [
        ((round(x - cap, 6), y), (round(x + cap, 6), y))
        for x, y in ((-0.21, 0.4), (1.21, 0.1), (-0.21, 0.6), (1.21, 0.3))]
    assert all(_hex(c.get_color()[0]) == "#000000" for c in (vlines, hlines))
    assert list(ax.get_xticks()) == [0, 1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "a long category\nname"]
    assert ax.get_xlim() == (-0.5, 1.5)
    assert ax.get_axisbelow() is True
    assert ax.yaxis.get_gridlines()[0].get_visible()
    assert not ax.xaxis.get_gridlines()[0].get_visible()


def test_bars_without_intervals_draw_no_lines() -> None:
    ax = _axes()
    F._bars(ax, ["a"], [BASE], {("a", BASE): (0.5, nan, nan)})
    assert _bars(ax) == [(0.0, 0.5, F.method_colour(BASE))]
    assert len(ax.collections) == 0 and len(ax.texts) == 0


# -- gaps ---------------------------------------------------------------------------------


def _gap_rows() -> list[dict]:
    """Balanced-set gaps for 2 models x 2 methods x 2 attributes x 2 metrics, each value
    distinct; bert's perturbed race AUC gap undefined; original-set decoys."""
    rows = []
    for k, (model, method, attr, metric) in enumerate(
            (m, meth, a, g) for m in ("bert", "albert") for meth in (PERT, BASE)
            for a in ("race", "gender") for g in ("AUC_gap", "FPR_gap")):
        value = 0.01 * (k + 1)
        rows.append({"model": model, "method": method, "fairness_set": "balanced",
                     "attribute": attr, "metric": metric, "value": value,
                     "low": value / 2, "high": value * 2})
        rows.append({"model": model, "method": method, "fairness_set": "original",
                     "attribute": attr, "metric": metric, "value": 0.9, "low": 0.0,
                     "high": 1.0})
    by_key = {(r["model"], r["method"], r["attribute"], r["metric"], r["fairness_set"]): r
              for r in rows}
    by_key["bert", PERT, "race", "AUC_gap", "balanced"].update(value=nan, low=nan, high=nan)
    by_key["albert", BASE, "gender", "FPR_gap", "balanced"].update(low=nan, high=nan)
    return rows


def test_gaps_figure_draws_each_attribute_and_metric_of_its_set() -> None:
    rows = _gap_rows()
    data = {"task": "toxicity", "report": _report(confidence=0.9),
            "gaps": pd.DataFrame(rows)}
    fig = F.gaps_figure(data, "balanced")
    # rows: the task's attributes in the configured order; columns: FPR before AUC
    assert list(fig.get_size_inches()) == pytest.approx([3.2 * 2 + 0.4, 2.6 * 2 + 1.6])
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == [
        "gender: FPR gap (Eq.\u00a01)", "gender: AUC gap (Eq.\u00a03)",
        "race: FPR gap (Eq.\u00a01)", "race: AUC gap (Eq.\u00a03)"]
    models, methods = ["albert", "bert"], [BASE, PERT]  # sorted; the papers' order
    balanced = [r for r in rows if r["fairness_set"] == "balanced"]
    for ax, (attr, metric) in zip(axes, [("gender", "FPR_gap"), ("gender", "AUC_gap"),
                                         ("race", "FPR_gap"), ("race", "AUC_gap")],
                                  strict=True):
        cell = {(r["model"], r["method"]): r for r in balanced
                if (r["attribute"], r["metric"]) == (attr, metric)}
        expected, intervals, na = [], [], []
        for j, method in enumerate(methods):
            for i, model in enumerate(models):
                r, x = cell[model, method], _slot(i, j, 2)
                if math.isnan(r["value"]):
                    na.append((x, 0, "n/a"))
                    continue
                expected.append((x, round(r["value"], 9), F.method_colour(method)))
                if not math.isnan(r["low"]):
                    intervals.append(((x, round(r["low"], 6)), (x, round(r["high"], 6))))
        assert _bars(ax) == expected, (attr, metric)
        assert _texts(ax) == na
        assert _segments(ax.collections[0]) == intervals
        assert [t.get_text() for t in ax.get_xticklabels()] == models
        assert ax.get_ylim()[0] == 0
    assert _texts(axes[3]) == [(_slot(1, 1, 2), 0, "n/a")]  # bert, perturbed, race AUC
    assert len(_segments(axes[0].collections[0])) == 3  # albert baseline gender FPR: none
    assert [ax.get_ylabel() for ax in axes] == [
        "|marginalized - non-marginalized|\n(absolute difference, 0-1)", ""] * 2
    assert [ax.get_xlabel() for ax in axes] == ["", "", "model", "model"]
    assert fig._suptitle.get_text() == ("toxicity: group fairness gaps on the balanced "
                                        "fairness set, with 90% bootstrap intervals")
    assert _legend(fig) == ([BASE, PERT], [F.method_colour(BASE), F.method_colour(PERT)],
                            "method", 2)


def test_gaps_figure_of_a_set_without_rows_says_so() -> None:
    rows = [r for r in _gap_rows() if r["fairness_set"] == "original"]
    fig = F.gaps_figure({"task": "sentiment", "report": _report("sentiment"),
                         "gaps": pd.DataFrame(rows)}, "balanced")
    assert fig.axes == []
    assert _figtexts(fig) == ["gaps.csv has no rows for the balanced set"]
    assert fig.texts[-1].get_position() == (0.5, 0.5)
    assert fig._suptitle.get_text().startswith("sentiment: group fairness gaps on the "
                                               "balanced fairness set, with 90%")
    assert list(fig.get_size_inches()) == [3.6, 4.2]


# -- training groups ----------------------------------------------------------------------


def test_training_groups_figure_draws_each_distinct_training_set_once() -> None:
    long = "upstream-sentDebias-gender-downstream-all-data-debias"
    training = {BASE: {"path": "train.parquet"}, PERT: {"path": "perturbed.parquet"},
                UP: {"path": "train.parquet"}, long: {"path": "train.parquet"}}
    groups = ["male", "white", "nonbinary", "female", "black"]
    rows = [{"method": m, "group": g, "n": 10 * (k + 1) + i, "positive_ratio": 0.1 * i + 0.01 * k}
            for k, m in enumerate((BASE, PERT, UP, long)) for i, g in enumerate(groups)]
    data = {"task": "sentiment", "report": _report("sentiment", training),
            "training_groups": pd.DataFrame(rows), "report_path": "r.json"}
    fig = F.training_groups_figure(data)
    # groups per attribute, marginalized first; a group of no attribute under "other"
    order = ["female", "male", "black", "white", "nonbinary"]
    assert list(fig.get_size_inches()) == [7.0, 7.0]
    top, bottom = fig.axes
    by = {(r["method"], r["group"]): r for r in rows}
    for ax, column in ((top, "n"), (bottom, "positive_ratio")):
        assert _bars(ax) == [(_slot(i, j, 2), round(by[m, g][column], 9), F.method_colour(m))
                             for j, m in enumerate((BASE, PERT)) for i, g in enumerate(order)]
        assert [(list(line.get_xdata()), line.get_linestyle()) for line in ax.lines] == \
            [([1.5, 1.5], ":"), ([3.5, 3.5], ":")]
        assert _texts(ax) == [(0.5, 1.0, "gender"), (2.5, 1.0, "race"), (4.0, 1.0, "other")]
        assert len(ax.collections) == 0
    assert [t.get_text() for t in bottom.get_xticklabels()] == order
    assert (top.get_ylabel(), bottom.get_ylabel(), bottom.get_xlabel()) == (
        "training rows (count)", "positive ratio (share of the group's rows)",
        "identity group")
    assert bottom.get_ylim() == (0, 1)
    assert fig._suptitle.get_text() == ("sentiment: training rows per identity group, "
                                        "original data and each data method")
    label = textwrap.fill(f"{BASE} (same data: {UP}, {long})", 60, break_on_hyphens=False,
                          break_long_words=False, subsequent_indent="    ")
    assert label.count("\n") == 1 and "\n    " in label
    assert _legend(fig) == ([label, PERT], [F.method_colour(BASE), F.method_colour(PERT)],
                            "training data of method", 2)


def test_training_groups_toxicity_label_and_its_two_failures() -> None:
    rows = [{"method": BASE, "group": "female", "n": 3, "positive_ratio": 0.5}]
    data = {"task": "toxicity", "report": _report(), "training_groups": pd.DataFrame(rows),
            "report_path": "r.json"}
    fig = F.training_groups_figure(data)
    assert fig.axes[1].get_ylabel() == "toxic ratio (share of the group's rows)"
    assert [len(ax.lines) for ax in fig.axes] == [0, 0]  # one block: no separator
    rows.append({"method": PERT, "group": "female", "n": 3, "positive_ratio": 0.5})
    with pytest.raises(DataError) as e:
        F.training_groups_figure({**data, "training_groups": pd.DataFrame(rows)})
    assert str(e.value) == (f"r.json: training_groups.csv has method {PERT!r}, which has no "
                            "entry under 'training'")
    empty = F.training_groups_figure({**data, "training_groups": pd.DataFrame(
        columns=["method", "group", "n", "positive_ratio"])})
    assert empty.axes == [] and _figtexts(empty) == [
        "training_groups.csv has no rows"]


# -- correlations -------------------------------------------------------------------------


def _correlations() -> pd.DataFrame:
    cols = ["group", "model", "fairness_set", "x", "y", "rho", "n", "p_cluster", "points",
            "note"]
    rows = [("g1", "all", "balanced", "selection", "FPR_gap", 0.7, 10, 0.0005, "attribute", ""),
            ("g1", "all", "balanced", "selection", "thirteen char", -0.2, 10, 0.2, "attribute",
             ""),
            ("g1", "bert", "original", "twenty-one characters", "FPR_gap", nan, 2, nan,
             "attribute", "2 paired values: at least 3 are needed"),
            ("g1", "bert", "balanced", "selection", "FPR_gap", -0.65, 5, 0.005, "attribute",
             ""),
            ("g1", "albert", "balanced", "selection", "FPR_gap", 0.3, 7, 0.03, "method", ""),
            ("g1", "albert", "balanced", "selection", "thirteen char", -0.6, 9, 0.05,
             "attribute", ""),
            ("g2", "bert", "balanced", "selection", "FPR_gap", 0.99, 3, 0.5, "attribute", "")]
    return pd.DataFrame(rows, columns=cols)


def test_correlations_figure_places_each_r_with_its_stars() -> None:
    import numpy as np

    fig = F.correlations_figure({"task": "toxicity", "correlations": _correlations()}, "g1")
    ax, bar = fig.axes
    # rows: models (all last) x sources in order of appearance; columns: sets x gap metrics
    assert list(fig.get_size_inches()) == [8.4, 3.7]
    (image,) = ax.images
    expected = np.full((6, 4), np.nan)
    for model, x, fset, y, rho in (("albert", 0, 1, 0, 0.3), ("albert", 0, 1, 1, -0.6),
                                   ("bert", 0, 1, 0, -0.65), ("all", 0, 1, 0, 0.7),
                                   ("all", 0, 1, 1, -0.2)):
        expected[["albert", "bert", "all"].index(model) * 2 + x, fset * 2 + y] = rho
    array = image.get_array()
    assert np.array_equal(np.ma.filled(array, np.nan), expected, equal_nan=True)
    assert image.get_clim() == (-1, 1) and image.get_cmap().name == "RdBu_r"
    assert image.get_cmap().get_bad().tolist() == [1.0, 1.0, 1.0, 1.0]
    cells = [t for t in ax.texts if round(t.get_position()[0]) == t.get_position()[0]
             and 0 <= t.get_position()[0] < 4 and t.get_position()[1] >= 0]
    assert sorted((t.get_position()[1], t.get_position()[0], t.get_text(),
                   _hex(t.get_color())) for t in cells) == [
        (0, 2, "0.30*", "#000000"), (0, 3, "-0.60", "#000000"),  # |r| = 0.6 is still black
        (2, 2, "-0.65**", "#ffffff"), (3, 0, "n/a", "#404040"),
        (4, 2, "0.70***", "#ffffff"), (4, 3, "-0.20", "#000000")]
    (hatch,) = [p for p in ax.patches if p.get_hatch()]
    assert (hatch.get_xy(), hatch.get_width(), hatch.get_height(), hatch.get_hatch()) == \
        ((-0.5, 2.5), 1, 1, "///")
    assert _hex(hatch.get_facecolor()) == "#e6e6e6"
    # labels wrapped at 12 (columns) and 20 (rows) characters
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "FPR gap\n(Eq.\u00a01)", "thirteen\nchar"] * 2
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "selection bias\n(Eq.\u00a04)", "twenty-one\ncharacters"] * 3
    labels = {t.get_text(): (round(t.get_position()[0], 6), round(t.get_position()[1], 6))
              for t in ax.texts if t not in cells}
    assert labels == {"original set": (0.5, -0.6), "balanced set": (2.5, -0.6),
                      "albert": (3.6, 0.5), "n = 7-9\n(attribute, method points)": (3.6, 0.5),
                      "bert": (3.6, 2.5), "n = 2-5\n(attribute points)": (3.6, 2.5),
                      "all": (3.6, 4.5), "n = 10\n(attribute points)": (3.6, 4.5)}
    verticals = [line.get_xdata()[0] for line in ax.lines if list(line.get_ydata()) == [0, 1]]
    horizontals = [line.get_ydata()[0] for line in ax.lines if list(line.get_xdata()) == [0, 1]]
    assert (verticals, horizontals) == ([1.5], [1.5, 3.5])
    assert bar.get_ylabel() == "Pearson r"
    assert fig._suptitle.get_text() == "toxicity: Pearson r of g1"
    notes = _figtexts(fig)
    full = ("* p < 0.05, ** p < 0.01, *** p < 0.001 (two-sided permutation test, points "
            "sharing an x shuffled together). n/a: r undefined (2 paired values: at least 3 "
            "are needed). Blank: pair not in the table.")
    assert notes == ["\n".join(textwrap.wrap(full, 110))]
    lines = notes[0].count("\n") + 1
    rect = fig.get_layout_engine().get()["rect"]
    footnote = (0.15 + 0.13 * lines) / 3.7
    assert rect == pytest.approx((0, footnote, 1, 1 - footnote))


def test_correlations_figure_titles_a_known_group_and_says_when_it_is_missing() -> None:
    corr = _correlations()
    corr.loc[corr["group"] == "g2", "group"] = "fairness_metrics"
    fig = F.correlations_figure({"task": "sentiment", "correlations": corr},
                                "fairness_metrics")
    assert fig._suptitle.get_text() == ("sentiment: Pearson r of the fairness metrics "
                                        "against each other (§5.2)")
    assert "r undefined. Blank" in fig.texts[-1].get_text()  # no undefined r: no note
    assert [t.get_text() for t in fig.axes[0].texts if t.get_text()[:1] in "0-"] == ["0.99"]
    empty = F.correlations_figure({"task": "toxicity", "correlations": corr}, "g9")
    assert empty.axes == [] and _figtexts(empty) == [
        "correlations.csv has no rows of group 'g9'"]
    assert list(empty.get_size_inches()) == [6.0, 3.0]


# -- BiasFinder ---------------------------------------------------------------------------


def test_btc_figure_draws_both_rates_in_percent_per_characteristic() -> None:
    rows = [{"model": m, "method": meth, "characteristic": c,
             "btc_rate": 0.01 * (k + 1), "aligned_btc_rate": 0.002 * (k + 1)}
            for k, (m, meth, c) in enumerate(
                (m, meth, c) for m in ("roberta", "bert") for meth in ("imdb-gendered", BASE)
                for c in ("total", "country", "gender"))]
    fig = F.btc_figure(pd.DataFrame(rows))
    assert list(fig.get_size_inches()) == pytest.approx([2.8 * 3 + 0.4, 6.6])
    axes = fig.axes
    chars = ["gender", "country", "total"]  # BiasFinder's order, not the file's
    assert [ax.get_title() for ax in axes] == [
        *(f"{c}: all mutant pairs" for c in chars),
        *(f"{c}: aligned mutant pairs" for c in chars)]
    by = {(r["model"], r["method"], r["characteristic"]): r for r in rows}
    for k, ax in enumerate(axes):
        column, c = ("btc_rate", "aligned_btc_rate")[k // 3], chars[k % 3]
        assert _bars(ax) == [(_slot(i, j, 2), round(100 * by[m, meth, c][column], 9),
                              F.method_colour(meth))
                             for j, meth in enumerate((BASE, "imdb-gendered"))
                             for i, m in enumerate(("bert", "roberta"))], (column, c)
    assert [ax.get_ylabel() for ax in axes] == [
        "BTC rate (% of all mutant pairs)", "", "", "BTC rate (% of aligned mutant pairs)",
        "", ""]
    assert [ax.get_xlabel() for ax in axes] == ["", "", "", "model", "model", "model"]
    shared = axes[0].get_shared_y_axes()
    assert shared.joined(axes[0], axes[2]) and not shared.joined(axes[0], axes[3])
    assert axes[3].get_shared_y_axes().joined(axes[3], axes[5])
    assert fig._suptitle.get_text() == ("BiasFinder: bias-uncovering test cases per "
                                        "characteristic, model and method")
    assert _legend(fig)[:3] == ([BASE, "imdb-gendered"],
                                [F.method_colour(BASE), F.method_colour("imdb-gendered")],
                                "method")
    empty = F.btc_figure(pd.DataFrame(columns=list(rows[0])))
    assert empty.axes == [] and _figtexts(empty) == [
        "the BTC table has no rows"]


# -- legends and the figure list ----------------------------------------------------------


@pytest.mark.parametrize("n, ncols, expected", [(1, None, 1), (4, None, 4), (5, None, 3),
                                                (9, None, 3), (5, 2, 2)])
def test_method_legend_columns(n: int, ncols: int | None, expected: int) -> None:
    fig = F._figure(4, 3)
    methods = [f"m{k}" for k in range(n)]
    F._method_legend(fig, methods, ncols=ncols)
    texts, colours, title, columns = _legend(fig)
    assert (texts, colours, title, columns) == (
        methods, [F.method_colour(m) for m in methods], "method", expected)
    assert fig.legends[0].get_frame_on() is False


def test_drawers_draw_the_figure_their_name_says(tmp_path) -> None:
    corr = _correlations()
    corr["group"] = "bias_vs_fairness"
    data = {"task": "toxicity", "report": _report(), "report_path": "r.json",
            "gaps": pd.DataFrame(_gap_rows()), "correlations": corr,
            "training_groups": pd.DataFrame([{"method": BASE, "group": "female", "n": 3,
                                              "positive_ratio": 0.5}])}
    btc = pd.DataFrame([{"model": "m", "method": BASE, "characteristic": "gender",
                         "btc_rate": 0.1, "aligned_btc_rate": 0.1}])
    drawers = F._drawers({"toxicity": data}, btc)
    assert list(drawers) == F.figure_names(["toxicity"], True)
    titles = {name: draw()._suptitle.get_text() for name, draw in drawers.items()}
    assert titles["toxicity_training_groups"].startswith("toxicity: training rows")
    assert "on the original fairness set" in titles["toxicity_gaps_original"]
    assert "on the balanced fairness set" in titles["toxicity_gaps_balanced"]
    for group in F.CORRELATION_GROUPS:
        assert titles[f"toxicity_correlations_{group}"] == \
            f"toxicity: Pearson r of {F.GROUP_TITLES[group]}"
    assert titles["biasfinder_btc_rates"].startswith("BiasFinder:")
    assert list(F._drawers({"toxicity": data}, None)) == F.figure_names(["toxicity"], False)


# -- more shapes of the gaps figure -------------------------------------------------------


def test_gaps_figure_orders_the_three_metrics_and_grows_with_its_bars() -> None:
    models = [f"model{k}" for k in range(4)]
    methods = [BASE, PERT, UP, "downstream-stratified-data", "downstream-sentDebias-race",
               "other-method"]
    rows = [{"model": m, "method": meth, "fairness_set": "original", "attribute": "gender",
             "metric": g, "value": 0.1, "low": 0.0, "high": 0.2}
            for g in ("AUC_gap", "TPR_gap", "FPR_gap") for m in models for meth in methods]
    fig = F.gaps_figure({"task": "toxicity", "report": _report(), "gaps": pd.DataFrame(rows)},
                        "original")
    assert [ax.get_title() for ax in fig.axes] == [
        "gender: FPR gap (Eq.\u00a01)", "gender: TPR gap (Eq.\u00a02)",
        "gender: AUC gap (Eq.\u00a03)"]
    panel = 0.6 + 0.11 * 4 * 7  # 4 models x (6 methods + a gap) outgrow the 3.2-inch minimum
    assert list(fig.get_size_inches()) == pytest.approx([round(panel * 3 + 0.4, 2), 4.2])
    assert len(_bars(fig.axes[0])) == 24
    # one attribute and one metric: still a grid of axes
    one = F.gaps_figure({"task": "toxicity", "report": _report(),
                         "gaps": pd.DataFrame(rows[-1:])}, "original")
    assert [ax.get_title() for ax in one.axes] == ["gender: FPR gap (Eq.\u00a01)"]
    assert one.axes[0].get_xlabel() == "model"


# -- reading and writing ------------------------------------------------------------------


def test_read_task_returns_the_report_and_its_tables(tmp_path) -> None:
    from test_figures import _write_toxicity

    report = _write_toxicity(tmp_path / "tox" / "fairness")
    data = F.read_task(report, "toxicity")
    assert sorted(data) == ["correlations", "gaps", "report", "report_path", "task",
                            "training_groups"]
    assert (data["task"], data["report_path"]) == ("toxicity", report)
    corr = report.parent / "correlations.csv"
    frame = pd.read_csv(corr).drop(columns="note")
    frame.to_csv(corr, index=False)
    with pytest.raises(DataError, match="'note'"):
        F.read_task(report, "toxicity")


def test_save_writes_the_png_at_its_dpi_and_neither_file_names_a_date_or_version(
        tmp_path) -> None:
    from PIL import Image

    fig = F._figure(2, 1)
    fig.subplots().bar([0], [1])
    png, svg = tmp_path / "f.png", tmp_path / "f.svg"
    F._save(fig, png, svg)
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size == (2 * F.DPI, 1 * F.DPI)
        assert not any("software" in str(k).lower() for k in image.info)
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and "<svg" in text
    assert "<dc:date>" not in text and "Matplotlib v" not in text


def test_write_figures_draws_only_the_figures_of_what_it_is_given(tmp_path, caplog) -> None:
    import logging

    from test_figures import _write_btc, _write_toxicity

    btc = _write_btc(tmp_path / "table4.csv")
    out = tmp_path / "bf"
    with caplog.at_level(logging.INFO, logger=F.__name__):
        paths = F.write_figures(reports={}, biasfinder=btc, out_dir=out)
    assert [p.name for p in paths] == ["biasfinder_btc_rates.png", "biasfinder_btc_rates.svg"]
    assert sorted(p.name for p in out.iterdir()) == [p.name for p in paths]
    (message,) = [r.getMessage() for r in caplog.records if r.name == F.__name__]
    assert re.fullmatch(rf"figures: 1 \(x png/svg\) -> {re.escape(str(out))} in \d+\.\d s",
                        message), message
    report = _write_toxicity(tmp_path / "tox" / "fairness")
    out = tmp_path / "tox-only"
    paths = F.write_figures(reports={"toxicity": report}, biasfinder=None, out_dir=out)
    assert [p.name for p in paths] == F.figure_files(F.figure_names(["toxicity"], False))
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)


# -- edge shapes of every figure ----------------------------------------------------------


def test_bars_skip_a_missing_cell_and_go_on_after_an_na_mark() -> None:
    ax = _axes()
    F._bars(ax, ["a", "b", "c", "d"], [BASE],
            {("b", BASE): (nan, nan, nan), ("c", BASE): (0.5, nan, nan),
             ("d", BASE): (0.25, nan, nan)})
    grey = F.method_colour(BASE)
    assert _bars(ax) == [(2.0, 0.5, grey), (3.0, 0.25, grey)]
    assert _texts(ax) == [(1.0, 0, "n/a")]


def _groups_data(task: str, methods: list[str], groups: list[str]) -> dict:
    training = {m: {"path": f"{m}.parquet"} for m in methods}
    rows = [{"method": m, "group": g, "n": 5, "positive_ratio": 0.5}
            for m in methods for g in groups]
    return {"task": task, "report": _report(task, training),
            "training_groups": pd.DataFrame(rows, columns=["method", "group", "n",
                                                           "positive_ratio"]),
            "report_path": "r.json"}


def test_training_groups_grows_with_its_bars_and_shares_the_group_axis() -> None:
    groups = [f"g{k}" for k in range(10)]  # none of an attribute: one "other" block
    fig = F.training_groups_figure(_groups_data("reviews", [BASE, PERT, UP], groups))
    assert list(fig.get_size_inches()) == pytest.approx([1.5 + 0.2 * 10 * 4, 7.0])
    top, bottom = fig.axes
    assert top.get_shared_x_axes().joined(top, bottom)
    assert bottom.get_ylabel() == "positive ratio (share of the group's rows)"  # any task
    assert _legend(fig)[2:] == ("training data of method", 2)  # three sets, two columns
    assert [len(ax.lines) for ax in fig.axes] == [0, 0]
    empty = F.training_groups_figure(_groups_data("reviews", [BASE], []))
    assert empty._suptitle.get_text() == ("reviews: training rows per identity group, "
                                          "original data and each data method")


def test_btc_figure_grows_with_its_bars_and_keeps_one_characteristic_narrow() -> None:
    methods = [BASE, PERT, UP, "imdb-gendered", "downstream-stratified-data", "x-method"]
    rows = [{"model": m, "method": meth, "characteristic": "gender", "btc_rate": 0.1,
             "aligned_btc_rate": 0.1} for m in ("a", "b", "c") for meth in methods]
    fig = F.btc_figure(pd.DataFrame(rows))
    assert list(fig.get_size_inches()) == pytest.approx([round(0.6 + 0.12 * 3 * 7 + 0.4, 2),
                                                         6.6])
    small = F.btc_figure(pd.DataFrame(rows[:1]))
    assert list(small.get_size_inches()) == pytest.approx([2.8 + 0.4, 6.6])
    empty = F.btc_figure(pd.DataFrame(columns=list(rows[0])))
    assert empty._suptitle.get_text().startswith("BiasFinder: bias-uncovering test cases")


def test_correlation_notes_list_each_reason_for_an_undefined_r_once() -> None:
    corr = _correlations()
    extra = pd.DataFrame([
        ("g1", "all", "original", "selection", "FPR_gap", nan, 1, nan, "attribute",
         "one point"),
        ("g1", "albert", "original", "selection", "FPR_gap", nan, 2, nan, "attribute",
         "2 paired values: at least 3 are needed"),
        # a defined r with a note is not an undefined r
        ("g1", "bert", "balanced", "twenty-one characters", "FPR_gap", 0.2, 4, 0.5,
         "attribute", "a note on a defined r")], columns=corr.columns)
    fig = F.correlations_figure({"task": "toxicity",
                                 "correlations": pd.concat([corr, extra])}, "g1")
    (notes,) = [t for t in fig.texts if t is not fig._suptitle]
    assert notes.get_position() == (0.5, 0.01)
    assert "n/a: r undefined (2 paired values: at least 3 are needed; one point). Blank" in \
        notes.get_text().replace("\n", " ")


def test_figure_size_wrap_and_legend_place() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = F._figure(1.2345, 2.3456)
    assert list(fig.get_size_inches()) == [1.23, 2.35]  # sizes in hundredths of an inch
    assert isinstance(fig.canvas, FigureCanvasAgg)
    # labels wrap at 16 characters, also after a hyphen
    assert F._wrap("abcdefgh abcdefg") == "abcdefgh abcdefg"
    assert F._wrap("abcdefgh abcdefgh") == "abcdefgh\nabcdefgh"
    assert F._wrap("downstream-perturbed-data") == "downstream-\nperturbed-data"
    F._method_legend(fig, [BASE])
    legend = fig.legends[0]
    assert (legend._loc, legend._outside_loc) == (8, "lower")  # below the axes, centred
