"""A template audit sheet: one self-contained HTML page for judging templates by reading them.

BiasFinder's RQ2 (§6) validated its output by human reading: annotators read sampled
mutants and judged whether each was a coherent text of the same sentiment. Whether a
template is sound, though, is decided before any model is run, and it depends on the corpus:
the person's mentions must be one person, only that person's name, pronouns, gender nouns or
occupation may be replaced, and the filled texts must read naturally. This module renders,
for each characteristic present (gender, occupation, country), a seeded uniform sample of
templates, each as (a) the original review with the replaced spans highlighted, (b) the
template with its placeholders highlighted and (c) two mutants of different classes with the
filled values highlighted, under a short guide of what to look for.

The page has no scripts, no external style sheets and no timestamps: the same inputs and seed
give the same bytes. Review text is HTML-escaped everywhere.
"""

from __future__ import annotations

import html
import json
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from biasrepro.biasfinder.placeholders import fill as fill_placeholders
from biasrepro.biasfinder.placeholders import find as find_placeholders
from biasrepro.biasfinder.placeholders import keys as placeholder_keys
from biasrepro.biasfinder.placeholders import replaced_spans
from biasrepro.biasfinder.templates import CHARACTERISTICS, COLUMNS
from biasrepro.biasfinder.wordlists import GENDERS, Wordlists
from biasrepro.errors import ConfigError, DataError

#: templates shown per characteristic unless told otherwise
DEFAULT_N = 20

#: each characteristic as a heading
TITLES = {"gender": "Gender", "occupation": "Occupation", "country": "Country of origin"}
_PAIRS = {
    "gender": "a male and a female mutant with counterpart values (name i of each list, "
              "gender-noun pair j)",
    "occupation": "two different occupations",
    "country": "names of the template's gender from two different countries",
}

_GUIDE = """\
<p>Each card is one template. Read the <b>original review</b> first: its
<mark class="k-name">highlighted spans</mark> are what the template generator replaced (hover
for the placeholder). The <b>template</b> shows the placeholders in place, and the two
<b>mutants</b> show the template filled with values of two different classes. A template is
good when every check below holds; note the template id of any that fails.</p>
<ol class="checks">
<li><b>One person.</b> Every highlighted span in the original refers to the same single
person: not two people, not a group, not the actor in one sentence and someone else in the
next.</li>
<li><b>Only that person's words.</b> Nothing but that person's name, pronouns and gender nouns
(gender), occupation (occupation) or name (country) was replaced; look for a replaced
<i>his</i>/<i>her</i> that belongs to someone else, and for mentions of the person that were
left unreplaced (a mutant then mixes two genders or names).</li>
<li><b>No part of a name left.</b> A first name replaced but the surname kept (or the other
way round), a title or initial left beside the placeholder (<i>Mr. &lt;name&gt;</i>,
<i>&lt;name&gt; Jr.</i>), a nickname left elsewhere.</li>
<li><b>Pronoun case right.</b> <i>her</i> as object (<i>saw &lt;pro-obj&gt;</i>) versus
possessive (<i>&lt;pro-det&gt; film</i>); the male mutant shows a wrong case at once
(<i>saw his</i>, <i>him film</i>).</li>
<li><b>Article agrees.</b> <i>a</i>/<i>an</i> before a filled word fits that word in both
mutants (<i>an engineer</i>, <i>a nurse</i>).</li>
<li><b>A person, not a title.</b> The replaced name is a person, not a film or series title,
a place, a company or a band (<i>Forrest Gump</i> the film, <i>Paris</i> the city).</li>
<li><b>The mutants read naturally</b> and would be given the same sentiment as the original
(BiasFinder's RQ2 criterion: coherent, same sentiment).</li>
</ol>"""

CSS = """\
body{font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,
sans-serif;color:#1d1d1f;background:#f4f4f6;margin:0}
main{max-width:1320px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:26px;margin:8px 0 4px}
h2{font-size:21px;margin:40px 0 12px;padding-bottom:6px;border-bottom:2px solid #c9c9d1}
h3{font-size:15px;margin:0;font-weight:600}
.lead{color:#55555d;margin:0 0 18px}
.panel{background:#fff;border:1px solid #d9d9e0;border-radius:8px;padding:14px 18px;
margin:0 0 16px}
.panel h2{margin:0 0 8px;border:0;padding:0;font-size:17px}
table.facts{border-collapse:collapse}
table.facts th,table.facts td{text-align:left;vertical-align:top;padding:3px 14px 3px 0}
table.facts th{color:#55555d;font-weight:600;white-space:nowrap}
table.counts{border-collapse:collapse;margin-top:4px}
table.counts th,table.counts td{border-bottom:1px solid #e3e3e8;padding:4px 16px 4px 0;
text-align:right}
table.counts th:first-child,table.counts td:first-child{text-align:left}
ol.checks li{margin:0 0 4px}
code,.ph{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.92em}
.legend mark{margin-right:6px}
.card{background:#fff;border:1px solid #d9d9e0;border-radius:8px;margin:0 0 18px;
overflow:hidden}
.card>header{display:flex;flex-wrap:wrap;gap:4px 18px;align-items:baseline;
padding:9px 16px;background:#ececf1;border-bottom:1px solid #d9d9e0}
.card>header .meta{color:#55555d;font-size:13px}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:0}
.cell{padding:10px 16px 14px;min-width:0;border-top:1px solid #e9e9ee}
.cell:nth-child(odd){border-right:1px solid #e9e9ee}
.label{font-size:12px;font-weight:700;letter-spacing:.04em;text-transform:uppercase;
color:#6b6b75;margin:0 0 4px}
.label .cls{text-transform:none;letter-spacing:0;font-size:13px;color:#1d1d1f;
background:#e4e4ea;border-radius:4px;padding:0 6px;margin-left:6px}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.replaced{font-size:13px;color:#44444c;margin:8px 0 0}
.warn{color:#9a3412;background:#fff7ed;border:1px solid #fed7aa;border-radius:4px;
padding:4px 8px;margin:0 0 6px;font-size:13px}
mark{color:inherit;border-radius:3px;padding:0 2px;box-decoration-break:clone;
-webkit-box-decoration-break:clone}
mark.k-name{background:#fde68a}
mark.k-pro{background:#bfdbfe}
mark.k-gaw{background:#fbcfe8}
mark.k-occupation{background:#bbf7d0}
mark.k-country{background:#fed7aa}
mark.k-a{background:#e5e7eb}
mark.ph{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.9em;
outline:1px solid rgba(0,0,0,.18);white-space:nowrap}
a{color:#1d4ed8}
"""


def _kind(written: str) -> str:
    """The highlight class of a placeholder key (same colour in all three views)."""
    key = written.lower()
    if key.startswith("pro-"):
        return "k-pro"
    if key in GENDERS:
        return "k-country"
    return f"k-{key}"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _marked(text: str, spans: Sequence[tuple[int, int, str]], title: Sequence[str],
            shown: Sequence[str] | None = None) -> str:
    """``text`` escaped, each span wrapped in a ``<mark>`` titled ``title[k]`` (showing
    ``shown[k]`` instead of the span's text when given)."""
    out, pos = [], 0
    for k, (start, end, written) in enumerate(spans):
        out.append(_esc(text[pos:start]))
        body = text[start:end] if shown is None else shown[k]
        extra = " ph" if shown is not None else ""
        out.append(f'<mark class="{_kind(written)}{extra}" title="{_esc(title[k])}">'
                   f"{_esc(body)}</mark>")
        pos = end
    out.append(_esc(text[pos:]))
    return "".join(out)


def filled_spans(template: str, values: Mapping[str, str]) -> tuple[str, list[
        tuple[int, int, str]]]:
    """The mutant text of ``template`` filled from ``values`` and the ``(start, end, key as
    written)`` span each placeholder's value took in it (articles included).

    A placeholder's value depends only on the text after it (an article agrees with the next
    word), so the filled suffix from each placeholder is the tail of the whole filled text.
    """
    text = fill_placeholders(template, values)
    spans = []
    for start, end, written in find_placeholders(template):
        head = len(text) - len(fill_placeholders(template[start:], values))
        tail = len(text) - len(fill_placeholders(template[end:], values))
        spans.append((head, tail, written))
    return text, spans


def _check_fill_lists(table: pd.DataFrame, wordlists: Wordlists) -> None:
    """One ConfigError naming every fill list the templates need and the audit lacks."""
    missing = []
    gender = table.loc[table["characteristic"] == "gender", "template"]
    if any("name" in placeholder_keys(t) for t in gender if isinstance(t, str)) and any(
            not wordlists.names.get(g) for g in GENDERS):
        missing.append("gender templates with a <name> placeholder need the names list "
                       "(--names: a gender,name CSV such as `biasrepro biasfinder wordlists` "
                       "writes)")
    if (table["characteristic"] == "country").any() and not wordlists.country_names:
        missing.append("country templates need the country names list (--country-names: a "
                       "country,male,female CSV)")
    if (table["characteristic"] == "occupation").any() and not wordlists.occupations:
        missing.append("occupation templates need a non-empty occupations.csv (--wordlists)")
    if missing:
        raise ConfigError("cannot fill the templates to audit: " + "; ".join(missing))


def _combine(tables: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """The templates of every table, with ``_source`` file and 1-based ``_row``; sorted by
    template id. DataError for a missing column, an unknown characteristic or an id found
    twice."""
    from biasrepro.io import require_columns

    frames = []
    sources = [source for source, _ in tables]
    twice = next((s for k, s in enumerate(sources) if s in sources[:k]), None)
    if twice is not None:
        raise DataError("the same templates file is given twice", file=twice)
    for source, df in tables:
        require_columns([str(c) for c in df.columns], COLUMNS, file=source)
        unknown = ~df["characteristic"].isin(CHARACTERISTICS)
        if unknown.any():
            row = int(np.flatnonzero(unknown.to_numpy())[0])
            raise DataError(f"unknown characteristic {df['characteristic'].iloc[row]!r} "
                            f"(expected one of {', '.join(CHARACTERISTICS)})", file=source,
                            row=row + 1, column="characteristic")
        frames.append(df[list(COLUMNS)].assign(_source=source, _row=np.arange(1, len(df) + 1)))
    if not frames:
        raise DataError("no templates table to audit")
    table = pd.concat(frames, ignore_index=True)
    table["template_id"] = table["template_id"].astype(str)
    dup = table["template_id"].duplicated(keep=False)
    if dup.any():
        first = table[dup].iloc[0]
        second = table[dup & (table["template_id"] == first["template_id"])].iloc[1]
        raise DataError(f"template id {first['template_id']!r} appears twice (also "
                        f"{second['_source']}, row {second['_row']})", file=first["_source"],
                        row=int(first["_row"]), column="template_id")
    return table.sort_values("template_id", kind="stable").reset_index(drop=True)


def _sample(df: pd.DataFrame, characteristic: str, n: int, seed: int) -> pd.DataFrame:
    """A seeded uniform sample of ``n`` rows (all when fewer), in template-id order."""
    if len(df) <= n:
        return df.reset_index(drop=True)
    rng = np.random.default_rng([seed, CHARACTERISTICS.index(characteristic)])
    keep = np.sort(rng.choice(len(df), n, replace=False))
    return df.iloc[keep].reset_index(drop=True)


def _mutants_of(sample: pd.DataFrame, wordlists: Wordlists) -> pd.DataFrame:
    """Every mutant of the sampled templates; a DataError names the template's own file/row."""
    from biasrepro.biasfinder.mutants import generate_mutants

    try:
        return generate_mutants(sample[list(COLUMNS)], wordlists, source="templates")
    except DataError as e:
        if not isinstance(e.row, int):
            raise
        bad = sample.iloc[e.row - 1]
        raise DataError(e.message, file=bad["_source"], row=int(bad["_row"]),
                        column=e.column) from None


def _pick_two(muts: pd.DataFrame, template_id: str, seed: int) -> list[dict]:
    """Two mutants of different classes (seeded): two classes drawn, shown in table order,
    then counterpart values (the same ``align`` key) when both classes have them."""
    rng = np.random.default_rng([seed, zlib.crc32(template_id.encode("utf-8"))])
    classes = list(dict.fromkeys(muts["class"]))
    if not classes:
        return []
    if len(classes) == 1:
        return [muts.iloc[int(rng.integers(len(muts)))].to_dict()]
    i, j = sorted(int(k) for k in rng.choice(len(classes), 2, replace=False))
    first = muts[muts["class"] == classes[i]]
    second = muts[muts["class"] == classes[j]]
    common = [a for a in dict.fromkeys(first["align"]) if a in set(second["align"])]
    if common:
        align = common[int(rng.integers(len(common)))]
        first, second = first[first["align"] == align], second[second["align"] == align]
    return [part.iloc[int(rng.integers(len(part)))].to_dict() for part in (first, second)]


def _original_html(original: object, template: str) -> tuple[str, str]:
    """The original review marked at the replaced spans, and a line listing them."""
    if not isinstance(original, str):
        return '<p class="warn">No original text in the table.</p>', ""
    try:
        spans = replaced_spans(original, template)
    except ValueError:
        return ('<p class="warn">The template is not this text with spans replaced by '
                'placeholders; shown without highlights.</p>'
                f'<p class="text">{_esc(original)}</p>', "")
    body = _marked(original, spans, [f"replaced by <{w}>" for _, _, w in spans])
    listed = ", ".join(f"“{_esc(original[s:e])}” → <code>{_esc(f'<{w}>')}</code>"
                       for s, e, w in spans)
    return (f'<p class="text">{body}</p>',
            f'<p class="replaced"><b>Replaced ({len(spans)}):</b> {listed}</p>')


def template_html(template: str) -> str:
    found = find_placeholders(template)
    shown = [f"<{w}>" for _, _, w in found]
    body = _marked(template, found, [f"placeholder {s}" for s in shown], shown)
    return f'<p class="text">{body}</p>'


def mutant_html(template: str, mutant: Mapping[str, object]) -> str:
    values = json.loads(str(mutant["values"]))
    text, spans = filled_spans(template, values)
    label = (f'<p class="label">Mutant<span class="cls">{_esc(str(mutant["class"]))}</span>'
             f"</p>")
    if text != mutant["text"]:  # not expected: mutants are fill(template, values)
        return (f'{label}<p class="warn">Could not locate the filled values.</p>'
                f'<p class="text">{_esc(str(mutant["text"]))}</p>')
    titles = [f"<{w}> = {text[s:e]}" for s, e, w in spans]
    filled = dict.fromkeys(f"<code>{_esc(f'<{w}>')}</code> = “{_esc(text[s:e])}”"
                           for s, e, w in spans)
    return (f'{label}<p class="text">{_marked(text, spans, titles)}</p>'
            f'<p class="replaced"><b>Filled:</b> {", ".join(filled)}</p>')


def _card(k: int, total: int, row: Mapping[str, object], picked: list[dict]) -> str:
    template = str(row["template"])
    original, replaced = _original_html(row["original"], template)
    meta = (f"doc {_esc(str(row['doc_id']))} · label {_esc(str(row['label']))} · "
            f"original class {_esc(str(row['original_class']))} · "
            f"{_esc(str(row['_source']))}, row {row['_row']}")
    cells = [f'<p class="label">Original review</p>{original}{replaced}',
             f'<p class="label">Template</p>{template_html(template)}']
    cells += [mutant_html(template, m) for m in picked]
    if len(picked) < 2:
        cells.append('<p class="warn">No mutant of a second class: every value of the other '
                     "classes was skipped for this template (a name already in the text), "
                     "or the fill list has one class.</p>")
    body = "".join(f'<div class="cell">{c}</div>' for c in cells)
    tid = _esc(str(row["template_id"]))
    return (f'<section class="card" id="{tid}"><header><h3>{k} / {total} · '
            f'<code>{tid}</code></h3><span class="meta">{meta}</span></header>'
            f'<div class="grid">{body}</div></section>\n')


def _fill_summary(wordlists: Wordlists, present: Sequence[str]) -> list[tuple[str, str]]:
    rows = []
    if "gender" in present:
        names = {g: len(wordlists.names.get(g, ())) for g in GENDERS}
        rows.append(("gender", f"{names['male']} male and {names['female']} female names, "
                     f"{len(wordlists.gender_nouns)} gender-noun pairs, pronouns by case"))
    if "occupation" in present:
        rows.append(("occupation", f"{len(wordlists.occupations)} occupations"))
    if "country" in present:
        rows.append(("country", f"{len(wordlists.country_names)} countries, one male and one "
                     "female name each"))
    return rows


def audit_html(tables: Sequence[tuple[str, pd.DataFrame]], wordlists: Wordlists, *,
               n: int = DEFAULT_N, seed: int = 0,
               fill_lists: Mapping[str, str] | None = None) -> str:
    """The audit page (HTML text) of the templates in ``tables``, ``(source, table)`` pairs.

    For each characteristic present, in the order gender, occupation, country: a uniform
    sample of ``n`` templates (all when fewer) drawn with ``seed``, each shown as the original
    with the replaced spans marked, the template, and two mutants of different classes (from
    :func:`biasrepro.biasfinder.mutants.generate_mutants` on the sample, picked with
    ``seed``). ``fill_lists`` (label -> file) is listed in the header. DataError for a table
    that is not a templates table, ConfigError for a bad ``n``/``seed`` or a fill list the
    templates need and ``wordlists`` lacks.
    """
    sections, counts, present = audit_sections(tables, wordlists, n=n, seed=seed)
    return _page(tables, wordlists, n=n, seed=seed, fill_lists=fill_lists, sections=sections,
                 counts=counts, present=present)


def audit_sections(tables: Sequence[tuple[str, pd.DataFrame]], wordlists: Wordlists, *,
                   n: int = DEFAULT_N, seed: int = 0
                   ) -> tuple[list[str], list[tuple[str, int, int]], list[str]]:
    """The audit's sections (one per characteristic present: a heading and its cards), the
    ``(characteristic, templates, sampled)`` counts and the characteristics present; the
    page's checks and errors as :func:`audit_html`."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ConfigError(f"the sample size must be a positive number of templates (got {n!r})")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ConfigError(f"the seed must be a non-negative integer (got {seed!r})")
    table = _combine(tables)
    _check_fill_lists(table, wordlists)
    present = [c for c in CHARACTERISTICS if (table["characteristic"] == c).any()]

    sections, counts = [], []
    for characteristic in present:
        every = table[table["characteristic"] == characteristic]
        sample = _sample(every, characteristic, int(n), int(seed))
        muts = _mutants_of(sample, wordlists)
        by_template = dict(list(muts.groupby("template_id", sort=False)))
        counts.append((characteristic, len(every), len(sample)))
        cards = []
        for k, row in enumerate(sample.to_dict("records"), start=1):
            own = by_template.get(row["template_id"], muts.iloc[:0])
            cards.append(_card(k, len(sample), row, _pick_two(own, row["template_id"],
                                                               int(seed))))
        sections.append(
            f'<h2 id="{characteristic}">{TITLES[characteristic]}: {len(sample)} of '
            f"{len(every)} templates</h2>\n"
            f'<p class="lead">Mutants shown: {_PAIRS[characteristic]}.</p>\n'
            + "".join(cards))
    return sections, counts, present


def _page(tables: Sequence[tuple[str, pd.DataFrame]], wordlists: Wordlists, *, n: int,
          seed: int, fill_lists: Mapping[str, str] | None, sections: list[str],
          counts: list[tuple[str, int, int]], present: list[str]) -> str:
    sources = list(dict.fromkeys(source for source, _ in tables))
    facts = [("Templates", "<br>".join(f"<code>{_esc(s)}</code>" for s in sources)),
             ("Seed", f"{int(seed)} (sample of at most {int(n)} templates per "
                      "characteristic)")]
    facts += [(label, f"<code>{_esc(path)}</code>") for label, path in (fill_lists or {}).items()]
    facts += [(f"Fills ({c})", _esc(text)) for c, text in _fill_summary(wordlists, present)]
    fact_rows = "".join(f"<tr><th>{_esc(k)}</th><td>{v}</td></tr>" for k, v in facts)
    if counts:
        count_rows = "".join(
            f'<tr><td><a href="#{c}">{TITLES[c]}</a></td><td>{total}</td><td>{shown}</td></tr>'
            for c, total, shown in counts)
        summary = (f'<table class="counts"><tr><th>Characteristic</th><th>Templates</th>'
                   f"<th>Sampled</th></tr>{count_rows}</table>")
    else:
        summary = "<p>The inputs hold no templates.</p>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>BiasFinder template audit</title>\n"
        f"<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n"
        "<h1>BiasFinder template audit</h1>\n"
        '<p class="lead">A seeded sample of templates per characteristic, each with its '
        "original review, the template and two mutants, to judge by reading whether the "
        "templates of this corpus are sound (BiasFinder RQ2 checked its output by human "
        "reading).</p>\n"
        f'<div class="panel"><table class="facts">{fact_rows}</table>{summary}</div>\n'
        + guide_panel()
        + "".join(sections)
        + "</main>\n</body>\n</html>\n")


def guide_panel() -> str:
    """The panel saying what to look for in a template, with the highlight colours."""
    legend = "".join(f'<mark class="{cls}">{name}</mark>' for cls, name in (
        ("k-name", "name"), ("k-pro", "pronoun"), ("k-gaw", "gender noun"),
        ("k-occupation", "occupation"), ("k-country", "country name"),
        ("k-a", "article a/an")))
    return (f'<div class="panel"><h2>How to read this / what to look for</h2>\n{_GUIDE}\n'
            f'<p class="legend">Colours: {legend} (the same in the original, the template and '
            "the mutants; hover a highlight for its placeholder).</p></div>\n")


def write_audit(html_text: str, path: str | Path) -> None:
    """Write the page atomically (nothing at ``path`` unless the whole page was written)."""
    from biasrepro.io import atomic_outputs, write_text

    with atomic_outputs(path) as (tmp,):
        write_text(html_text, tmp)


def audit(template_paths: Sequence[str | Path], out: str | Path, *,
          names: str | Path | None = None, country_names: str | Path | None = None,
          wordlists_dir: str | Path | None = None, n: int = DEFAULT_N, seed: int = 0) -> None:
    """Read the templates files and word lists, render the page and write it to ``out``.

    Everything happens inside one atomic block: on any error nothing is left at ``out``
    (not even an earlier run's page).
    """
    from biasrepro.biasfinder.templates import read_templates
    from biasrepro.biasfinder.wordlists import WORDLISTS_DIR
    from biasrepro.biasfinder.wordlists import load as load_wordlists
    from biasrepro.io import atomic_outputs, write_text

    with atomic_outputs(out) as (tmp,):
        tables = [(str(p), read_templates(p)) for p in template_paths]
        lists = load_wordlists(
            names=Path(names) if names is not None else None,
            country_names=Path(country_names) if country_names is not None else None,
            **({"directory": Path(wordlists_dir)} if wordlists_dir is not None else {}))
        fill_lists = {"Word lists": str(wordlists_dir if wordlists_dir is not None
                                        else WORDLISTS_DIR),
                      "Names": str(names) if names is not None else "not given",
                      "Country names": (str(country_names) if country_names is not None
                                        else "not given")}
        write_text(audit_html(tables, lists, n=n, seed=seed, fill_lists=fill_lists), tmp)
