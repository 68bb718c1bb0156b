"""The figures: the files figure_names promises, valid PNG and SVG, byte-identical
on rerun, and one clear error (exit 2, no figures) on bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.analysis.figures import (
    FAIRNESS_SETS,
    btc_figure,
    correlations_figure,
    figure_files,
    figure_names,
    method_colour,
    write_figures,
)
from biasrepro.cli import main

MODELS = ("bert-tiny", "albert-tiny")
METHODS = ("baseline", "downstream-perturbed-data", "upstream-sentDebias-gender")
ATTRIBUTES = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
              "race": {"marginalized": ["black"], "non_marginalized": ["white"]}}


def _write_toxicity(folder: Path) -> Path:
    """A tiny toxicity report directory: report.json, gaps, training groups, correlations."""
    folder.mkdir(parents=True)
    report = {"task": "toxicity",
              "training": {"baseline": {"path": "train.parquet", "rows": 40},
                           "downstream-perturbed-data": {"path": "perturbed.parquet", "rows": 80},
                           "upstream-sentDebias-gender": {"path": "train.parquet", "rows": 40}},
              "settings": {"attributes": ATTRIBUTES,
                           "fairness": {"attributes": {"toxicity": ["gender", "race"]},
                                        "bootstrap": {"confidence": 0.95, "resamples": 50}}}}
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    gaps = [{"model": m, "method": meth, "fairness_set": fset, "attribute": a, "metric": metric,
             "value": 0.01 * (i + 1), "low": 0.0, "high": 0.02 * (i + 1), "resamples": 50,
             "note": ""}
            for i, (m, meth, fset, a, metric) in enumerate(
                (m, meth, fset, a, metric) for m in MODELS for meth in METHODS
                for fset in FAIRNESS_SETS for a in ATTRIBUTES
                for metric in ("FPR_gap", "TPR_gap", "AUC_gap"))]
    gaps[0].update(value=float("nan"), low=float("nan"), high=float("nan"),
                   note="no positives in group female")
    pd.DataFrame(gaps).to_csv(folder / "gaps.csv", index=False)
    groups = [{"method": meth, "group": g, "n": 10 * (k + 1), "n_positive": 2 * (k + 1),
               "positive_ratio": 0.2}
              for k, meth in enumerate(METHODS) for g in ("female", "male", "black", "white")]
    pd.DataFrame(groups).to_csv(folder / "training_groups.csv", index=False)
    corr = [{"group": "fairness_metrics", "model": "all", "fairness_set": fset, "x": x, "y": y,
             "rho": 0.5, "n": 4, "p_value": 0.04, "low": -0.1, "high": 0.9, "p_cluster": 0.04,
             "points": "baseline model x attribute", "note": ""}
            for fset in FAIRNESS_SETS
            for x, y in (("FPR_gap", "TPR_gap"), ("FPR_gap", "AUC_gap"), ("TPR_gap", "AUC_gap"))]
    nan = float("nan")
    corr += [{"group": "bias_vs_fairness", "model": m, "fairness_set": "balanced",
              "x": "selection", "y": "FPR_gap", "rho": nan, "n": 2, "p_value": nan,
              "p_cluster": nan,
              "low": nan, "high": nan, "points": "attribute",
              "note": "2 paired values: at least 3 are needed"} for m in (*MODELS, "all")]
    pd.DataFrame(corr).to_csv(folder / "correlations.csv", index=False)
    return folder / "report.json"


def _write_btc(path: Path) -> Path:
    rows = [{"model": m, "method": meth, "threshold": 0.5, "characteristic": c,
             "btc_rate": 0.01 * (k + 1), "aligned_btc_rate": 0.005 * (k + 1)}
            for k, (m, meth, c) in enumerate((m, meth, c) for m in MODELS
                                             for meth in ("baseline", "imdb-gendered")
                                             for c in ("gender", "country", "total"))]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("figures-in")
    return _write_toxicity(root / "toxicity" / "fairness"), _write_btc(root / "table4.csv")


@pytest.fixture(scope="module")
def two_runs(inputs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, Path]:
    report, btc = inputs
    outs = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    for out in outs:
        write_figures(reports={"toxicity": report}, biasfinder=btc, out_dir=out)
    return outs


def test_the_named_files_are_written_and_nothing_else(two_runs: tuple[Path, Path]) -> None:
    expected = figure_files(figure_names(["toxicity"], True))
    assert sorted(p.name for p in two_runs[0].iterdir()) == sorted(expected)
    assert len(expected) == 2 * 7


def test_files_are_valid_png_and_svg_without_dates_or_versions(
        two_runs: tuple[Path, Path]) -> None:
    for path in two_runs[0].iterdir():
        data = path.read_bytes()
        if path.suffix == ".png":
            assert data.startswith(b"\x89PNG\r\n\x1a\n"), path
            assert b"tEXt" not in data and b"tIME" not in data, path
        else:
            root = ET.fromstring(data)
            assert root.tag == "{http://www.w3.org/2000/svg}svg", path
            assert b"<dc:date>" not in data and b"Matplotlib v" not in data, path


def test_figures_are_byte_identical_on_rerun(two_runs: tuple[Path, Path]) -> None:
    first, second = two_runs
    for path in first.iterdir():
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name


def test_figure_names_do_not_import_matplotlib() -> None:
    code = ("import sys; from biasrepro.analysis.figures import figure_names; "
            "names = figure_names(['toxicity', 'sentiment'], False); "
            "assert 'matplotlib' not in sys.modules; print(len(names))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "12"


def test_a_method_keeps_its_colour_and_unknown_methods_get_a_stable_one() -> None:
    assert method_colour("baseline") != method_colour("downstream-perturbed-data")
    assert method_colour("my-new-method") == method_colour("my-new-method")
    assert method_colour("my-new-method").startswith("#")


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["analysis", "figures", *args, "--out-dir", str(tmp_path / "out")])
    return code, capsys.readouterr().err


def test_a_missing_column_is_one_error_and_leaves_no_figures(
        inputs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, btc = inputs
    bad = _write_toxicity(tmp_path / "bad" / "fairness")
    pd.read_csv(bad.parent / "gaps.csv").drop(columns="high").to_csv(bad.parent / "gaps.csv",
                                                                     index=False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "biasfinder_btc_rates.png").write_bytes(b"an earlier run's figure")
    code, err = _cli(tmp_path, capsys, "--toxicity", str(bad), "--biasfinder", str(btc))
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(lines) == 1, err
    assert "gaps.csv" in lines[0] and "column 'high'" in lines[0]
    # no new figure; the earlier run's is untouched
    assert [p.name for p in out.iterdir() if p.suffix in (".png", ".svg")] == [
        "biasfinder_btc_rates.png"]
    assert (out / "biasfinder_btc_rates.png").read_bytes() == b"an earlier run's figure"


@pytest.mark.parametrize("problem", ["unreadable", "wrong task", "no input"])
def test_bad_inputs_are_one_error(problem: str, inputs: tuple[Path, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    report, btc = inputs
    if problem == "unreadable":
        broken = tmp_path / "table4.csv"
        broken.write_bytes(b"model,method\n\"unclosed")
        code, err = _cli(tmp_path, capsys, "--biasfinder", str(broken))
        assert "table4.csv" in err
    elif problem == "wrong task":
        code, err = _cli(tmp_path, capsys, "--sentiment", str(report))
        assert "report.json" in err and "'toxicity' report" in err
    else:
        code, err = _cli(tmp_path, capsys)
        assert "--toxicity, --sentiment or --biasfinder" in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(lines) == 1, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_correlation_stars_follow_the_cluster_permutation_p() -> None:
    rows = [{"group": "bias_vs_fairness", "model": "all", "fairness_set": "balanced",
             "x": x, "y": "FPR_gap", "rho": 0.9, "n": 9, "p_value": 0.001, "p_cluster": p,
             "points": "model x attribute", "note": ""}
            for x, p in (("selection", 1 / 6), ("overamplification", 0.004))]
    fig = correlations_figure({"task": "toxicity", "correlations": pd.DataFrame(rows)},
                              "bias_vs_fairness")
    cells = sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("0.90"))
    assert cells == ["0.90", "0.90**"]


# --- what the figures show: bar heights read back from the SVG files ------------------------

SVG = "{http://www.w3.org/2000/svg}"


def _svg_panels(path: Path) -> list[dict]:
    """Each axes of a matplotlib SVG: its title (the text "<row>: <column>", which the SVG
    keeps as a comment over the glyph paths), x tick positions by label, the bars (fill
    colour, x centre, height in px) and how many "n/a" labels it holds."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(path.read_bytes(), parser=parser)
    panels = []
    for axes in root.iter(f"{SVG}g"):
        if not axes.get("id", "").startswith("axes_"):
            continue
        comments = [c.text.strip() for c in axes.iter() if c.tag is ET.Comment]
        ticks = {}
        for tick in axes.iter(f"{SVG}g"):
            if tick.get("id", "").startswith("xtick_"):
                use = next(tick.iter(f"{SVG}use"))
                label = next(c.text.strip() for c in tick.iter() if c.tag is ET.Comment)
                ticks[label] = float(use.get("x"))
        bars = []
        for patch in axes.findall(f"{SVG}g"):
            if not patch.get("id", "").startswith("patch_"):
                continue
            shape = patch.find(f"{SVG}path")
            fill = re.search(r"fill: (#[0-9a-f]{6})", shape.get("style", ""))
            if fill is None or fill[1] == "#ffffff":              # the axes' background
                continue
            xs_ys = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", shape.get("d"))]
            xs, ys = xs_ys[0::2], xs_ys[1::2]
            bars.append((fill[1], (min(xs) + max(xs)) / 2, max(ys) - min(ys)))
        titles = [c for c in comments if re.fullmatch(r"[\w-]+: .+", c)]
        panels.append({"title": titles[0] if titles else "", "ticks": ticks, "bars": bars,
                       "na": sum(c == "n/a" for c in comments)})
    return panels


def _check_bars(panel: dict, expected: dict[tuple[str, str], float]) -> float:
    """The panel's bars are exactly the finite cells of ``expected`` ((model, method) ->
    value), one "n/a" per NaN cell, every bar's height proportional to its value; returns
    the panel's px per unit."""
    colour = {method_colour(m): m for _, m in expected}
    seen = {}
    for fill, x, height in panel["bars"]:
        model = min(panel["ticks"], key=lambda label: abs(panel["ticks"][label] - x))
        seen[model, colour[fill]] = height
    finite = {k: v for k, v in expected.items() if v == v}
    assert set(seen) == set(finite), panel["title"]
    assert panel["na"] == len(expected) - len(finite), panel["title"]
    scale = [seen[k] / finite[k] for k in finite]               # px per unit: one value
    assert max(scale) == pytest.approx(min(scale), rel=2e-3), (panel["title"], scale)
    return scale[0]


@pytest.mark.parametrize("fairness_set", FAIRNESS_SETS)
def test_gap_bars_show_the_gaps_csv_values(two_runs: tuple[Path, Path],
                                           inputs: tuple[Path, Path], fairness_set: str) -> None:
    gaps = pd.read_csv(inputs[0].parent / "gaps.csv")
    gaps = gaps[gaps["fairness_set"] == fairness_set]
    panels = _svg_panels(two_runs[0] / f"toxicity_gaps_{fairness_set}.svg")
    assert len(panels) == len(ATTRIBUTES) * 3
    nan_cells = 0
    for panel in panels:
        attribute, label = panel["title"].split(": ", 1)
        metric = label[:3] + "_gap"                            # "FPR gap (Eq. 1)" -> FPR_gap
        rows = gaps[(gaps["attribute"] == attribute) & (gaps["metric"] == metric)]
        assert len(rows) == len(MODELS) * len(METHODS), panel["title"]
        _check_bars(panel, {(r.model, r.method): r.value for r in rows.itertuples()})
        nan_cells += panel["na"]
    # the one NaN gap of the fixture (first row: original set) is the only "n/a"
    assert nan_cells == (1 if fairness_set == "original" else 0)


def test_btc_bars_show_the_rates_in_percent(two_runs: tuple[Path, Path],
                                            inputs: tuple[Path, Path]) -> None:
    table = pd.read_csv(inputs[1])
    panels = _svg_panels(two_runs[0] / "biasfinder_btc_rates.svg")
    assert len(panels) == 2 * table["characteristic"].nunique()
    columns = {"all mutant pairs": "btc_rate", "aligned mutant pairs": "aligned_btc_rate"}
    scales: dict[str, list[float]] = {}
    for panel in panels:
        characteristic, pairs = panel["title"].split(": ", 1)
        rows = table[table["characteristic"] == characteristic]
        scales.setdefault(pairs, []).append(_check_bars(
            panel, {(r.model, r.method): getattr(r, columns[pairs]) for r in rows.itertuples()}))
    # each row of panels shares its y axis: one px-per-unit scale across the row
    for pairs, row in scales.items():
        assert max(row) == pytest.approx(min(row), rel=2e-3), pairs


def test_btc_bar_heights_are_the_rate_in_percent_not_its_complement() -> None:
    """The heights handed to Axes.bar: 100 x rate, the all-pairs row drawn first."""
    from matplotlib.axes import Axes

    rows = pd.DataFrame([{"model": "m", "method": "baseline", "characteristic": "gender",
                          "btc_rate": 0.031, "aligned_btc_rate": 0.012}])
    heights = []
    original = Axes.bar

    def record(self, x, height, *args, **kwargs):
        heights.append(list(height))
        return original(self, x, height, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Axes, "bar", record)
        btc_figure(rows)
    assert heights == [[pytest.approx(3.1)], [pytest.approx(1.2)]]
