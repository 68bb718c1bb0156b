"""The studies' figures, each as PNG and SVG.

* ``{task}_training_groups``: rows and positive ratio per identity group in every distinct
  training set, the original data beside each data method's (toxicity paper, Figures 3-5);
* ``{task}_gaps_{original,balanced}``: FPR/TPR/AUC gaps (Eqs. 1-3) per attribute, model and
  method, with their bootstrap intervals as error bars (Tables 3, 5-8);
* ``{task}_correlations_{group}``: each group of the Pearson tables (§5.2, Table 9, Figure 2,
  and the harness's across-methods table) as heatmaps of r, starred by permutation p-value;
* ``biasfinder_btc_rates``: BiasFinder's BTC rates per characteristic, model and method, over
  all mutant pairs and over aligned pairs (BiasFinder, Table 4).

A task's tables are read from the directory of its ``report.json``. matplotlib is imported
only to draw, so :func:`figure_names` is cheap to import where the Snakemake rule declares
its outputs. The files are byte-identical on rerun: fixed sizes and dpi, matplotlib's own
defaults, a fixed SVG hash salt, and no date or software version in either format.
"""

from __future__ import annotations

import logging
import math
import textwrap
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro import config, layout
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import atomic_outputs, check_text, numeric, read_json
from biasrepro.io import read_table as read_user_table

log = logging.getLogger(__name__)

FORMATS = ("png", "svg")
FAIRNESS_SETS = layout.FAIRNESS_SETS
#: the groups of ``correlations.csv`` (:mod:`biasrepro.fairness.correlations`)
CORRELATION_GROUPS = ("fairness_metrics", "bias_vs_fairness", "bias_vs_fairness_across_methods")
DPI = 150
#: every method of ``config/config.yaml``'s registry, in the papers' order, with its colour;
#: a method not listed here gets a fixed colour derived from its name (:func:`method_colour`)
METHOD_COLOURS = {
    "baseline": "#4d4d4d",
    "imdb-gendered": "#8c564b",
    "downstream-perturbed-data": "#1f77b4",
    "downstream-stratified-data": "#ff7f0e",
    "downstream-perturbed-stratified-data": "#2ca02c",
    "upstream-sentDebias-gender": "#9467bd",
    "upstream-sentDebias-race": "#c5b0d5",
    "upstream-sentDebias-religion": "#6a3d9a",
    "downstream-sentDebias-gender": "#d62728",
    "downstream-sentDebias-race": "#ff9896",
    "downstream-sentDebias-religion": "#a50f15",
    "upstream-sentDebias-gender-downstream-all-data-debias": "#17becf",
    "upstream-sentDebias-race-downstream-all-data-debias": "#9edae5",
    "upstream-sentDebias-religion-downstream-all-data-debias": "#0b6e79",
}
_SPARE_COLOURS = ("#bcbd22", "#e377c2", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a",
                  "#f7b6d2", "#dbdb8d", "#393b79", "#637939", "#8c6d31", "#843c39")
LABELS = {
    # a no-break space keeps "(Eq. 1)" on one line when labels are wrapped
    "FPR_gap": "FPR gap (Eq.\u00a01)", "TPR_gap": "TPR gap (Eq.\u00a02)",
    "AUC_gap": "AUC gap (Eq.\u00a03)", "selection": "selection bias (Eq.\u00a04)",
    "overamplification": "overamplification (Eq.\u00a05, max-normalised)",
    "overamplification_raw": "overamplification (Eq.\u00a05, raw)",
    "representation_crows": "CrowS-Pairs", "representation_stereoset": "StereoSet",
    "representation_seat": "SEAT",
}
GROUP_TITLES = {
    "fairness_metrics": "the fairness metrics against each other (§5.2)",
    "bias_vs_fairness": "each source of bias against fairness (Table 9, Figure 2)",
    "bias_vs_fairness_across_methods": "bias of each method's data or model against its "
                                       "fairness, over methods",
}
POSITIVE = {"toxicity": "toxic", "sentiment": "positive"}
CHARACTERISTICS = ("gender", "occupation", "country", "total")
#: two-sided p-value thresholds of the heatmaps' stars
STARS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
_RC = {"svg.hashsalt": "biasrepro", "svg.fonttype": "path", "font.family": "DejaVu Sans",
       "font.size": 8, "axes.titlesize": 9, "figure.titlesize": 11, "legend.fontsize": 7.5,
       "figure.dpi": DPI, "savefig.dpi": DPI}


def figure_names(tasks: Iterable[str], biasfinder: bool) -> list[str]:
    """The file stems a run writes (each as ``.png`` and ``.svg``) for these tasks' fairness
    reports and, if ``biasfinder``, BiasFinder's Table 4; they do not depend on the data."""
    names = []
    for task in tasks:
        names.append(f"{task}_training_groups")
        names += [f"{task}_gaps_{fset}" for fset in FAIRNESS_SETS]
        names += [f"{task}_correlations_{group}" for group in CORRELATION_GROUPS]
    if biasfinder:
        names.append("biasfinder_btc_rates")
    return names


def figure_files(names: Iterable[str]) -> list[str]:
    """File names of the figure stems ``names``, each in every format."""
    return [f"{name}.{ext}" for name in names for ext in FORMATS]


def method_colour(method: str) -> str:
    """The method's colour, the same in every figure and every run."""
    if method in METHOD_COLOURS:
        return METHOD_COLOURS[method]
    return _SPARE_COLOURS[zlib.crc32(method.encode("utf-8")) % len(_SPARE_COLOURS)]


def ordered_methods(methods: Iterable[str]) -> list[str]:
    """Methods in the order of :data:`METHOD_COLOURS`, others after them alphabetically."""
    known = list(METHOD_COLOURS)
    return sorted(set(methods), key=lambda m: (known.index(m) if m in known else len(known), m))


def _ordered(values: Iterable[str], first: Sequence[str]) -> list[str]:
    present = set(values)
    return [v for v in first if v in present] + sorted(present - set(first))


def _label(name: str) -> str:
    return LABELS.get(name, name)


def _wrap(text: str, width: int = 16) -> str:
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=True)) or text


# -- reading ---------------------------------------------------------------------------


def read_table(path: Path, text: Sequence[str], numbers: Sequence[str],
               keys: Sequence[str], optional_text: Sequence[str] = ()) -> pd.DataFrame:
    """A CSV table with the ``text`` columns (not blank), ``optional_text`` ones (may be
    blank) and ``numbers`` ones (floats, blank = NaN), and one row per ``keys``; any problem
    is a DataError naming the file and column."""
    frame = read_user_table(path, required=[*text, *optional_text, *numbers], delimiter=",",
                            allow_empty=True)
    for column in text:
        check_text(frame[column], file=path, column=column)
    for column in numbers:
        frame[column] = numeric(frame[column], file=path, column=column)
    dup = frame.duplicated(subset=list(keys))
    if dup.any():
        row = int(dup.idxmax())
        key = ", ".join(f"{k}={frame.at[row, k]}" for k in keys)
        raise DataError(f"a second row for {key}", file=path, row=row)
    return frame


def _key(obj: Any, dotted: str, *, file: Path) -> Any:
    try:
        return config.get(obj, dotted)
    except ConfigError:
        raise DataError(f"missing key {dotted!r}", file=file) from None


def read_report(path: Path, task: str) -> dict[str, Any]:
    """The task's ``report.json`` (written by ``biasrepro fairness report``)."""
    report = read_json(path)
    found = _key(report, "task", file=path)
    if found != task:
        raise DataError(f"this is the {found!r} report, not the {task!r} one", file=path)
    for dotted in ("training", "settings.attributes", f"settings.fairness.attributes.{task}",
                   "settings.fairness.bootstrap.confidence"):
        _key(report, dotted, file=path)
    for method, entry in report["training"].items():
        if not isinstance(entry, dict) or "path" not in entry:
            raise DataError(f"missing key 'training.{method}.path'", file=path)
    return report


def read_task(report_path: Path, task: str) -> dict[str, Any]:
    """The report and the tables beside it that the task's figures show."""
    folder = report_path.parent
    return {
        "task": task, "report_path": report_path, "report": read_report(report_path, task),
        "gaps": read_table(folder / "gaps.csv",
                           ["model", "method", "fairness_set", "attribute", "metric"],
                           ["value", "low", "high"],
                           ["model", "method", "fairness_set", "attribute", "metric"]),
        "training_groups": read_table(folder / "training_groups.csv", ["method", "group"],
                                      ["n", "positive_ratio"], ["method", "group"]),
        "correlations": read_table(folder / "correlations.csv",
                                   ["group", "model", "fairness_set", "x", "y", "points"],
                                   ["rho", "n", "p_value", "p_cluster"],
                                   ["group", "model", "fairness_set", "x", "y"], ["note"]),
    }


def read_btc(path: Path) -> pd.DataFrame:
    """BiasFinder's Table 4 (``biasrepro biasfinder table``'s CSV)."""
    return read_table(path, ["model", "method", "characteristic"],
                      ["btc_rate", "aligned_btc_rate"], ["model", "method", "characteristic"])


# -- drawing ---------------------------------------------------------------------------


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(round(width, 2), round(height, 2)), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _method_legend(fig: Any, methods: Sequence[str], labels: Sequence[str] | None = None,
                   ncols: int | None = None, title: str = "method") -> None:
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=method_colour(m), label=label)
               for m, label in zip(methods, labels or methods, strict=True)]
    columns = ncols or (len(handles) if len(handles) <= 4 else 3)
    fig.legend(handles=handles, loc="outside lower center", ncols=columns,
               title=title, frameon=False)


def _bars(ax: Any, categories: Sequence[str], methods: Sequence[str],
          cells: Mapping[tuple[str, str], tuple[float, float, float]]) -> None:
    """Bars per category (x) and method (colour), a black interval from low to high where
    both exist, and "n/a" where a value is NaN. ``cells``: (category, method) -> (value,
    low, high)."""
    width = 0.84 / max(len(methods), 1)
    xs, ys, colours, ix, lows, highs = [], [], [], [], [], []
    for j, method in enumerate(methods):
        for i, category in enumerate(categories):
            if (category, method) not in cells:
                continue
            value, low, high = cells[category, method]
            x = i - 0.42 + width * (j + 0.5)
            if math.isnan(value):
                ax.text(x, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=5.5,
                        color=method_colour(method))
                continue
            xs.append(x)
            ys.append(value)
            colours.append(method_colour(method))
            if not (math.isnan(low) or math.isnan(high)):
                ix.append(x)
                lows.append(low)
                highs.append(high)
    ax.bar(xs, ys, width, color=colours, linewidth=0)
    if ix:
        ax.vlines(ix, lows, highs, color="black", linewidth=0.6)
        cap = width * 0.3
        ax.hlines([*lows, *highs], [x - cap for x in ix * 2], [x + cap for x in ix * 2],
                  color="black", linewidth=0.6)
    ax.set_xticks(range(len(categories)), [_wrap(c) for c in categories])
    ax.set_xlim(-0.5, len(categories) - 0.5)
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)


def _empty(fig: Any, title: str, message: str) -> Any:
    fig.suptitle(title)
    fig.text(0.5, 0.5, message, ha="center", va="center", fontsize=10)
    return fig


def _attribute_blocks(groups: Iterable[str], report: Mapping[str, Any],
                      task: str) -> list[tuple[str, list[str]]]:
    """Identity groups per attribute of the task (marginalized first), then any others."""
    present, seen, blocks = set(groups), set(), []
    attributes = report["settings"]["attributes"]
    for attribute in report["settings"]["fairness"]["attributes"][task]:
        spec = attributes.get(attribute, {})
        members = [g for g in [*spec.get("marginalized", []), *spec.get("non_marginalized", [])]
                   if g in present and g not in seen]
        if members:
            blocks.append((attribute, members))
            seen.update(members)
    if present - seen:
        blocks.append(("other", sorted(present - seen)))
    return blocks


def training_groups_figure(data: Mapping[str, Any]) -> Any:
    """Rows and positive ratio per identity group of every distinct training set (Figs. 3-5);
    methods that train on the same file share one set of bars."""
    task, report, groups = data["task"], data["report"], data["training_groups"]
    title = f"{task}: training rows per identity group, original data and each data method"
    by_path: dict[str, list[str]] = {}
    for method in ordered_methods(groups["method"]):
        if method not in report["training"]:
            raise DataError(f"training_groups.csv has method {method!r}, which has no entry "
                            "under 'training'", file=data["report_path"])
        by_path.setdefault(str(report["training"][method]["path"]), []).append(method)
    sets = list(by_path.values())
    blocks = _attribute_blocks(groups["group"], report, task)
    order = [g for _, members in blocks for g in members]
    fig = _figure(max(7.0, 1.5 + 0.2 * len(order) * (len(sets) + 1)), 7.0)
    if not order:
        return _empty(fig, title, "training_groups.csv has no rows")
    axes = fig.subplots(2, 1, sharex=True)
    firsts = [s[0] for s in sets]
    for ax, column in zip(axes, ("n", "positive_ratio"), strict=True):
        cells = {(r.group, r.method): (getattr(r, column), math.nan, math.nan)
                 for r in groups[groups["method"].isin(firsts)].itertuples()}
        _bars(ax, order, firsts, cells)
        start = 0
        for attribute, members in blocks:
            if start:
                ax.axvline(start - 0.5, color="grey", linewidth=0.8, linestyle=":")
            ax.text((start + start + len(members) - 1) / 2, 1.0, attribute, ha="center",
                    va="bottom", transform=ax.get_xaxis_transform(), fontsize=8,
                    style="italic")
            start += len(members)
    axes[0].set_ylabel("training rows (count)")
    axes[1].set_ylabel(f"{POSITIVE.get(task, 'positive')} ratio (share of the group's rows)")
    axes[1].set_ylim(0, 1)
    axes[1].set_xlabel("identity group")
    fig.suptitle(title)
    labels = [s[0] if len(s) == 1 else textwrap.fill(
        f"{s[0]} (same data: {', '.join(s[1:])})", 60, break_on_hyphens=False,
        break_long_words=False, subsequent_indent="    ") for s in sets]
    _method_legend(fig, firsts, labels, ncols=2, title="training data of method")
    return fig


def gaps_figure(data: Mapping[str, Any], fairness_set: str) -> Any:
    """FPR/TPR/AUC gaps per attribute (rows) and metric (columns), models on the x axis and
    methods as colours, with the bootstrap intervals as error bars (Tables 3, 5-8)."""
    task, gaps = data["task"], data["gaps"]
    confidence = data["report"]["settings"]["fairness"]["bootstrap"]["confidence"]
    title = (f"{task}: group fairness gaps on the {fairness_set} fairness set, "
             f"with {confidence:.0%} bootstrap intervals")
    sub = gaps[gaps["fairness_set"] == fairness_set]
    attributes = _ordered(sub["attribute"], data["report"]["settings"]["fairness"]
                          ["attributes"][task])
    metrics = _ordered(sub["metric"], ("FPR_gap", "TPR_gap", "AUC_gap"))
    models, methods = sorted(set(sub["model"])), ordered_methods(sub["method"])
    panel = max(3.2, 0.6 + 0.11 * len(models) * (len(methods) + 1))
    fig = _figure(panel * max(len(metrics), 1) + 0.4, 2.6 * max(len(attributes), 1) + 1.6)
    if sub.empty:
        return _empty(fig, title, f"gaps.csv has no rows for the {fairness_set} set")
    axes = fig.subplots(len(attributes), len(metrics), squeeze=False)
    for i, attribute in enumerate(attributes):
        for j, metric in enumerate(metrics):
            ax = axes[i][j]
            rows = sub[(sub["attribute"] == attribute) & (sub["metric"] == metric)]
            cells = {(r.model, r.method): (r.value, r.low, r.high) for r in rows.itertuples()}
            _bars(ax, models, methods, cells)
            ax.set_title(f"{attribute}: {_label(metric)}")
            ax.set_ylabel("|marginalized - non-marginalized|\n(absolute difference, 0-1)"
                          if j == 0 else "")
            ax.set_ylim(bottom=0)
            if i == len(attributes) - 1:
                ax.set_xlabel("model")
    fig.suptitle(title)
    _method_legend(fig, methods)
    return fig


def _stars(p: float) -> str:
    return next((mark for level, mark in STARS if p < level), "")


def _span(values: Iterable[float]) -> str:
    ns = sorted({int(v) for v in values if not math.isnan(v)})
    if not ns:
        return "n = ?"
    return f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}-{ns[-1]}"


def correlations_figure(data: Mapping[str, Any], group: str) -> Any:
    """One group of the Pearson tables as one heatmap of r: a block of rows (x: bias source
    or metric) per model, a block of columns (y: gap metric) per fairness set; stars mark
    ``p_cluster`` (the permutation p-value that counts points sharing an x once), hatched
    "n/a" cells an undefined r, blank cells pairs the table lacks."""
    import matplotlib
    import numpy as np
    from matplotlib.patches import Rectangle

    task, corr = data["task"], data["correlations"]
    title = f"{task}: Pearson r of {GROUP_TITLES.get(group, group)}"
    sub = corr[corr["group"] == group]
    models = sorted(set(sub["model"]), key=lambda m: (m == "all", m))
    fsets = _ordered(sub["fairness_set"], FAIRNESS_SETS)
    xs, ys = list(dict.fromkeys(sub["x"])), list(dict.fromkeys(sub["y"]))
    n_rows, n_cols = len(models) * len(xs), len(fsets) * len(ys)
    fig = _figure(max(6.0, 4.6 + 0.95 * n_cols), max(3.0, 1.9 + 0.3 * n_rows))
    if sub.empty:
        return _empty(fig, title, f"correlations.csv has no rows of group {group!r}")
    ax = fig.subplots()
    values = np.full((n_rows, n_cols), np.nan)
    place = {}
    for r in sub.itertuples():
        i = models.index(r.model) * len(xs) + xs.index(r.x)
        j = fsets.index(r.fairness_set) * len(ys) + ys.index(r.y)
        values[i, j], place[i, j] = r.rho, r
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="white")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    for (i, j), r in sorted(place.items()):
        if math.isnan(r.rho):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="#e6e6e6",
                                   edgecolor="#a6a6a6", hatch="///", linewidth=0))
            ax.text(j, i, "n/a", ha="center", va="center", fontsize=7, color="#404040")
        else:
            ax.text(j, i, f"{r.rho:.2f}{_stars(r.p_cluster)}", ha="center", va="center",
                    fontsize=7, color="white" if abs(r.rho) > 0.6 else "black")
    ax.set_xticks(range(n_cols), [_wrap(_label(y), 12) for _ in fsets for y in ys])
    ax.set_yticks(range(n_rows), [_wrap(_label(x), 20) for _ in models for x in xs])
    ax.tick_params(length=0)
    for k, fset in enumerate(fsets):
        if k:
            ax.axvline(k * len(ys) - 0.5, color="black", linewidth=1.5)
        ax.text((k + 0.5) * len(ys) - 0.5, -0.6, f"{fset} set", ha="center", va="bottom",
                fontsize=9, fontweight="bold")
    for k, model in enumerate(models):
        if k:
            ax.axhline(k * len(xs) - 0.5, color="black", linewidth=1.5)
        rows = sub[sub["model"] == model]
        points = ", ".join(sorted(set(rows["points"])))
        middle = (k + 0.5) * len(xs) - 0.5
        ax.text(n_cols - 0.4, middle, model, ha="left", va="bottom", fontsize=8,
                fontweight="bold")
        ax.text(n_cols - 0.4, middle, f"{_span(rows['n'])}\n({points} points)", ha="left",
                va="top", fontsize=7)
    fig.colorbar(image, ax=ax, label="Pearson r", shrink=min(1.0, 6 / max(n_rows, 1)),
                 aspect=25, pad=0.02)
    fig.suptitle(title)
    undefined = sorted({r.note for r in place.values() if math.isnan(r.rho) and r.note})
    stars = ", ".join(f"{mark} p < {level:g}" for level, mark in reversed(STARS))
    notes = "\n".join(textwrap.wrap(
        f"{stars} (two-sided permutation test, points sharing an x shuffled together). "
        "n/a: r undefined"
        + (f" ({'; '.join(undefined)})" if undefined else "")
        + ". Blank: pair not in the table.", 110))
    fig.text(0.5, 0.01, notes, ha="center", va="bottom", fontsize=7)
    footnote = (0.15 + 0.13 * (notes.count("\n") + 1)) / fig.get_figheight()
    fig.get_layout_engine().set(rect=(0, footnote, 1, 1 - footnote))
    return fig


def btc_figure(table: pd.DataFrame) -> Any:
    """BTC rates (%) per characteristic (columns), model (x) and method (colour), over all
    mutant pairs as the original counts and over aligned pairs (BiasFinder, Table 4)."""
    title = "BiasFinder: bias-uncovering test cases per characteristic, model and method"
    characteristics = _ordered(table["characteristic"], CHARACTERISTICS)
    models, methods = sorted(set(table["model"])), ordered_methods(table["method"])
    panel = max(2.8, 0.6 + 0.12 * len(models) * (len(methods) + 1))
    fig = _figure(panel * max(len(characteristics), 1) + 0.4, 6.6)
    if table.empty:
        return _empty(fig, title, "the BTC table has no rows")
    axes = fig.subplots(2, len(characteristics), squeeze=False, sharey="row")
    for i, (column, pairs) in enumerate((("btc_rate", "all mutant pairs"),
                                         ("aligned_btc_rate", "aligned mutant pairs"))):
        for j, characteristic in enumerate(characteristics):
            ax = axes[i][j]
            rows = table[table["characteristic"] == characteristic]
            cells = {(r.model, r.method): (100 * getattr(r, column), math.nan, math.nan)
                     for r in rows.itertuples()}
            _bars(ax, models, methods, cells)
            ax.set_title(f"{characteristic}: {pairs}")
            if j == 0:
                ax.set_ylabel(f"BTC rate (% of {pairs})")
            if i == 1:
                ax.set_xlabel("model")
    fig.suptitle(title)
    _method_legend(fig, methods)
    return fig


# -- writing ---------------------------------------------------------------------------


def _save(fig: Any, png: Path, svg: Path) -> None:
    """Write the PNG (which lays the figure out), then the SVG with that same layout."""
    fig.savefig(png, format="png", dpi=DPI, metadata={"Software": None})
    fig.set_layout_engine("none")
    fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})


def _drawers(tasks: Mapping[str, Mapping[str, Any]], btc: pd.DataFrame | None
             ) -> dict[str, Callable[[], Any]]:
    drawers: dict[str, Callable[[], Any]] = {}
    for task, data in tasks.items():
        drawers[f"{task}_training_groups"] = lambda d=data: training_groups_figure(d)
        for fset in FAIRNESS_SETS:
            drawers[f"{task}_gaps_{fset}"] = lambda d=data, f=fset: gaps_figure(d, f)
        for group in CORRELATION_GROUPS:
            drawers[f"{task}_correlations_{group}"] = (
                lambda d=data, g=group: correlations_figure(d, g))
    if btc is not None:
        drawers["biasfinder_btc_rates"] = lambda: btc_figure(btc)
    return drawers


def write_figures(*, reports: Mapping[str, Path], biasfinder: Path | None,
                  out_dir: Path) -> list[Path]:
    """Draw every figure of :func:`figure_names` for the given tasks' reports (task ->
    ``report.json``) and BiasFinder table into ``out_dir``: all files or none."""
    import matplotlib

    start = time.perf_counter()
    names = figure_names(reports, biasfinder is not None)
    paths = [Path(out_dir) / f for f in figure_files(names)]
    with atomic_outputs(*paths) as tmps, matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(_RC)
        tasks = {task: read_task(Path(path), task) for task, path in reports.items()}
        btc = None if biasfinder is None else read_btc(Path(biasfinder))
        drawers = _drawers(tasks, btc)
        files = dict(zip(figure_files(names), tmps, strict=True))
        for name in names:
            _save(drawers[name](), files[f"{name}.png"], files[f"{name}.svg"])
    log.info("figures: %d (x %s) -> %s in %.1f s", len(names), "/".join(FORMATS), out_dir,
             time.perf_counter() - start)
    return paths
