"""The report of a one-call BiasFinder run (:func:`biasrepro.biasfinder.run`): one
self-contained HTML page a person reads.

Per characteristic: the BTC rate (§6, RQ1: bias-uncovering test cases over possible pairs of
mutants of different classes) with a bootstrap interval over templates, the templates with
the most BTCs, BTC pairs side by side with both probabilities and the filled words marked,
then the audit sample of templates (:mod:`biasrepro.biasfinder.audit`); when two or more
models were run into the same folder, a comparison of their rates and of which pairs are
BTCs for one model and not another. No scripts, no external resources, no timestamps: the
same run gives the same bytes.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.biasfinder.audit import (
    CSS,
    TITLES,
    audit_sections,
    guide_panel,
    mutant_html,
    template_html,
)
from biasrepro.io import atomic_outputs, read_parquet, write_text

#: how many templates (most BTCs first) and BTC pairs each characteristic shows
TOP_TEMPLATES = 8
SHOWN_PAIRS = 6
#: templates of the audit sample per characteristic
AUDIT_N = 6


_CSS = CSS + """\
table.rates{border-collapse:collapse;width:100%;margin:4px 0 0;background:#fff}
table.rates th,table.rates td{border-bottom:1px solid #e3e3e8;padding:6px 10px;
text-align:right;white-space:nowrap}
table.rates th{white-space:normal;vertical-align:bottom}
.scroll{overflow-x:auto}
table.rates td.rate{white-space:normal;min-width:9em}
table.rates th:first-child,table.rates td:first-child{text-align:left}
.bar{display:inline-block;height:10px;background:#6366f1;border-radius:2px;
vertical-align:middle;margin-right:6px}
.ci{color:#55555d;font-size:13px}
.prob{font-variant-numeric:tabular-nums;font-weight:600}
.pos{color:#166534}.neg{color:#9f1239}
.note{color:#55555d;font-size:13px}
table.rates .left{text-align:left}
table.compare th:nth-child(n+2),table.compare td:nth-child(n+2){text-align:right}
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _rate(row: Mapping[str, Any]) -> str:
    rate = row.get("btc_rate")
    if rate is None or (isinstance(rate, float) and np.isnan(rate)):
        return '<span class="note">no pairs</span>'
    ci = ""
    if row.get("ci_low") is not None and not pd.isna(row.get("ci_low")):
        ci = f' <span class="ci">[{row["ci_low"]:.3f}, {row["ci_high"]:.3f}]</span>'
    width = max(1, round(90 * float(rate)))
    return f'<span class="bar" style="width:{width}px"></span>{rate:.3f}{ci}'


def _rates_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = ("<tr><th>Characteristic</th><th>Templates</th><th>Mutants</th>"
            "<th>BTCs</th><th>Possible pairs</th><th>Templates with a BTC</th>"
            "<th>BTC rate [95 % interval]</th></tr>")
    body = "".join(
        f"<tr><td>{_esc(r['characteristic'])}</td>"
        f"<td>{r['templates']}</td><td>{r['mutants']}</td><td>{r['btc']}</td>"
        f"<td>{r['possible_pairs']}</td><td>{r['templates_with_btc']}</td>"
        f'<td class="rate">{_rate(r)}</td></tr>' for r in rows)
    return f'<div class="scroll"><table class="rates">{head}{body}</table></div>'


def _label(prob: float, threshold: float) -> str:
    cls, word = ("pos", "positive") if prob >= threshold else ("neg", "negative")
    return f'<span class="prob {cls}">{prob:.3f}</span> <span class="note">{word}</span>'


def _pair_cards(pairs: pd.DataFrame, mutants: pd.DataFrame, templates: pd.DataFrame,
                threshold: float, model: str) -> str:
    by_id = mutants.set_index("id")
    template_of = templates.drop_duplicates("template_id").set_index("template_id")["template"]
    cards = []
    for k, p in enumerate(pairs.itertuples(), start=1):
        template = str(template_of[p.template_id])
        cells = []
        for side in ("1", "2"):
            m = by_id.loc[getattr(p, f"id_{side}")]
            prob = float(getattr(p, f"prob_{side}"))
            cells.append(mutant_html(template, {"values": m["values"], "class": m["class"],
                                                      "text": m["text"]})
                         + f'<p class="replaced"><b>{_esc(model)}:</b> '
                         f"{_label(prob, threshold)}</p>")
        body = "".join(f'<div class="cell">{c}</div>' for c in cells)
        cards.append(f'<section class="card"><header><h3>{k} / {len(pairs)} · '
                     f"<code>{_esc(p.template_id)}</code></h3><span class=\"meta\">"
                     f"{_esc(p.class_1)} vs {_esc(p.class_2)}</span></header>"
                     f'<div class="grid">{body}</div></section>\n')
    return "".join(cards)


def _top_templates(counts: pd.DataFrame, templates: pd.DataFrame) -> str:
    top = counts.sort_values(["btc", "template_id"], ascending=[False, True]).head(TOP_TEMPLATES)
    top = top[top["btc"] > 0]
    if top.empty:
        return '<p class="note">No template has a BTC.</p>'
    template_of = templates.drop_duplicates("template_id").set_index("template_id")["template"]
    rows = "".join(
        f"<tr><td><code>{_esc(r.template_id)}</code></td><td>{r.btc}</td>"
        f"<td>{r.possible_pairs}</td><td>{r.btc_rate:.3f}</td></tr>"
        f'<tr><td colspan="4" style="text-align:left;white-space:normal"><details>'
        f"<summary>the template</summary>"
        f"{template_html(str(template_of[r.template_id]))}</details></td></tr>"
        for r in top.itertuples())
    return ('<table class="rates"><tr><th>Template</th><th>BTCs</th><th>Possible pairs</th>'
            f"<th>Rate</th></tr>{rows}</table>")


def _sample(pairs: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` pairs drawn with ``seed``, from as many templates as possible, in id order."""
    if len(pairs) <= n:
        return pairs
    rng = np.random.default_rng(seed)
    first = pairs.drop_duplicates("template_id")
    take = first.iloc[np.sort(rng.permutation(len(first))[:n])]
    if len(take) < n:
        rest = pairs.drop(index=take.index)
        take = pd.concat([take, rest.iloc[np.sort(rng.permutation(len(rest))[: n - len(take)])]])
    return take.sort_values(["template_id", "id_1", "id_2"])


def _comparison(runs: Sequence[Mapping[str, Any]], current: str) -> str:
    """Rates side by side and, per characteristic, BTC pairs one model has and another not,
    for every model run into the folder (``runs``: each one's summary, with ``folder``)."""
    if len(runs) < 2:
        return ""
    names = [r["model"] for r in runs]
    chars = list(dict.fromkeys(c["characteristic"] for r in runs for c in r["rates"]))
    rate = {(r["model"], c["characteristic"]): c for r in runs for c in r["rates"]}
    head = "<tr><th>Characteristic</th>" + "".join(f"<th>{_esc(n)}</th>" for n in names) + "</tr>"
    body = "".join(
        f"<tr><td>{_esc(c)}</td>" + "".join(
            f"<td>{_rate(rate[(n, c)]) if (n, c) in rate else ''}</td>" for n in names)
        + "</tr>" for c in chars)
    key = ["template_id", "id_1", "id_2"]
    folder = {r["model"]: Path(r["folder"]) for r in runs}
    diff_rows = []
    for c in chars:
        sets = {}
        for n in names:
            path = folder[n] / f"btc-{c}.parquet"
            if path.exists():
                sets[n] = set(map(tuple, read_parquet(path, what="BTC pairs")[key].to_numpy()))
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if a in sets and b in sets:
                    both = len(sets[a] & sets[b])
                    diff_rows.append(f'<tr><td>{_esc(c)}</td><td class="left">{_esc(a)} vs '
                                     f"{_esc(b)}</td>"
                                     f"<td>{both}</td><td>{len(sets[a] - sets[b])}</td>"
                                     f"<td>{len(sets[b] - sets[a])}</td></tr>")
    diffs = ('<div class="scroll"><table class="rates"><tr><th>Characteristic</th>'
             '<th class="left">Models A vs B</th>'
             "<th>BTC for both</th><th>A only</th><th>B only</th></tr>"
             + "".join(diff_rows) + "</table></div>") if diff_rows else ""
    return (f'<h2 id="compare">Models compared on this corpus</h2>\n<p class="lead">Every '
            f"model run into this folder ({len(names)}), on the same templates and mutants; "
            f"this run's model is <b>{_esc(current)}</b>. A pair is a BTC for a model when "
            "its two mutants get different predicted labels.</p>\n"
            f'<div class="panel"><table class="rates compare">{head}{body}</table></div>\n'
            f'<div class="panel"><h3>Which pairs differ</h3>{diffs}</div>\n')


def render(result: Any, runs: Sequence[Mapping[str, Any]] = ()) -> str:
    """The report page (HTML text) of ``result``, a
    :class:`biasrepro.biasfinder.pipeline.Result`; ``runs``, the summaries of every model run
    into the same folder, add the comparison."""
    from biasrepro.biasfinder.btc import CHARACTERISTICS

    model = result.models[0] if result.models else "model"
    threshold = float(result.rates["threshold"].iloc[0]) if "threshold" in result.rates else 0.5
    sections = []
    for c in [c for c in CHARACTERISTICS if c in result.templates]:
        rows = result.rates[result.rates["characteristic"] == c].to_dict("records")
        pairs = (result.pairs[result.pairs["characteristic"] == c]
                 if not result.pairs.empty else result.pairs)
        counts = result.counts.get(c)
        shown = _sample(pairs, SHOWN_PAIRS, result.seed)
        sections.append(
            f'<h2 id="{c}">{TITLES.get(c, c)}</h2>\n'
            f'<div class="panel">{_rates_table(rows)}</div>\n'
            f'<div class="panel"><h3>Templates with the most BTCs</h3>'
            + (_top_templates(counts, result.templates[c]) if counts is not None and len(counts)
               else '<p class="note">No template.</p>') + "</div>\n"
            + (f"<h3>BTC pairs: {len(shown)} of {len(pairs)}</h3>\n"
               + _pair_cards(shown, result.mutants[c], result.templates[c], threshold, model)
               if len(pairs) else '<p class="note">No BTC pair.</p>\n'))
    present = [(f"templates of {c}", t) for c, t in result.templates.items() if len(t)]
    audit_part = ""
    if present:
        body, _, _ = audit_sections(present, result.lists, n=AUDIT_N, seed=result.seed)
        audit_part = ('<h2 id="audit">Audit sample of the templates</h2>\n<p class="lead">'
                      "Before trusting the rates, read a few templates: each card shows the "
                      "original text with the replaced words marked, the template and two "
                      "mutants.</p>\n" + guide_panel()
                      + "".join(body).replace('<h2 id="', '<h3 id="audit-').replace(
                          "</h2>", "</h3>"))
    total = result.corpus
    overview = _rates_table(result.rates.to_dict("records"))
    facts = [("Model", _esc(model)), ("Texts", str(total)),
             ("Threshold", f"{threshold:g} (probability of the positive class)"),
             ("Seed", str(result.seed))]
    if result.out is not None:
        facts.append(("Folder", f"<code>{_esc(result.out)}</code>"))
    fact_rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>BiasFinder report</title>\n"
        f"<style>\n{_CSS}</style>\n</head>\n<body>\n<main>\n<h1>BiasFinder report</h1>\n"
        '<p class="lead">Bias-uncovering test cases (BTCs): pairs of mutants of one template, '
        "differing only in the person's gender, occupation or country of origin, that the "
        "model labels differently. The rate is BTCs over possible pairs; its interval "
        "resamples templates, because the pairs of one template share its mutants.</p>\n"
        f'<div class="panel"><table class="facts">{fact_rows}</table>{overview}</div>\n'
        + _comparison(runs, model) + "".join(sections) + audit_part
        + "</main>\n</body>\n</html>\n")


def write(result: Any, path: Path, runs: Sequence[Mapping[str, Any]] = ()) -> Path:
    """Write the page atomically; returns ``path``."""
    text = render(result, runs)
    with atomic_outputs(path) as (tmp,):
        write_text(text, tmp)
    return path

