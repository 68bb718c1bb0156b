"""Mutant generation: every template filled with the values of every class.

BiasFinder §4–5 ("Mutant Generation Engine") and biasfinder-original.md §2 "Mutant expansion",
without the original's defects:

- **gender** (classes ``male``, ``female``): in one mutant every placeholder is filled from one
  class. Pronoun placeholders take that gender's pronoun of the placeholder's grammatical case
  (no lossy her->his map, pitfall §7.1); ``<name>`` takes each of the gender's names (the
  first ``max_names`` when set), one name filling every ``<name>``; ``<gaw>`` takes each
  gender noun of the aligned pair list, one noun filling every ``<gaw>``; names x nouns is a
  cartesian product. ``align`` says which counterparts a mutant has in the other class: male
  name i <-> female name i and noun pair j (``n{i}``, ``g{j}``, ``n{i}g{j}``; ``p`` for a
  pronoun-only template, one mutant per class), so aligned pairs can be counted (pitfall §7.4).
- **occupation**: one mutant per occupation of the lexicon, class = the occupation.
- **country of origin**: the template's ``<male>`` or ``<female>`` placeholder takes, for each
  country, that country's name of the template's gender (``original_class``), class = the
  country.

The article ``<a>`` agrees with the filled word after it (:func:`fill_placeholders`). A name
is never inserted where it already occurs as a capitalised word of the template outside its
placeholders, since it would merge the mentioned person with another one (pitfall §7.5);
such a name is skipped for that template. Mutants of one template with the same class and
text are kept once (pitfall §9). Rows come in template order, then class order (male before
female; the lexicon's occupation order; the country list's order), then name index, then
noun index; ``id`` is ``{template_id}#{k:04d}`` numbered in that order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from biasrepro.biasfinder.placeholders import PLACEHOLDER
from biasrepro.biasfinder.placeholders import fill as fill_placeholders
from biasrepro.biasfinder.placeholders import find as find_placeholders
from biasrepro.biasfinder.placeholders import keys as placeholder_keys
from biasrepro.biasfinder.wordlists import GENDERS, PRONOUN_CASES, Wordlists
from biasrepro.errors import ConfigError, DataError, shown
from biasrepro.io import read_parquet, require_columns, write_parquet

#: columns of a mutants table, in order (contract "Tables")
COLUMNS = ("id", "template_id", "characteristic", "class", "values", "align", "text", "label")
#: columns of a templates table that mutant generation reads
TEMPLATE_COLUMNS = ("template_id", "characteristic", "label", "template", "original_class")
PRONOUN_KEYS = tuple(f"pro-{case}" for case in PRONOUN_CASES)
GENDER_KEYS = frozenset({"name", "gaw", *PRONOUN_KEYS})
#: the placeholder keys a template of each characteristic may hold (``a`` everywhere)
ALLOWED_KEYS = {
    "gender": GENDER_KEYS | {"a"},
    "occupation": frozenset({"occupation", "a"}),
    "country": frozenset({*GENDERS, "a"}),
}

_CAPITALISED_WORD = re.compile(r"\b[^\W\d_][^\W_]*")

Part = str | tuple[str, str]  # literal text, or (sub-template, the key whose value it needs)


def _compile(template: str) -> list[Part]:
    """Split ``template`` into literal text and one-value sub-templates.

    Each placeholder is a sub-template of its own, except that an article ``<a>`` (or a run of
    them, each agreeing with the next) travels with the placeholder right after it
    ("<a> <occupation>"), and an article before literal text is resolved once here. Filling
    the sub-templates with :func:`fill_placeholders` and joining gives the same text as
    filling the whole template, at a fraction of the cost.
    """
    found = find_placeholders(template)
    parts: list[Part] = []
    pos = 0
    k = 0
    while k < len(found):
        start, end, written = found[k]
        parts.append(template[pos:start])
        if written.lower() != "a":
            parts.append((template[start:end], written.lower()))
            pos = end
            k += 1
            continue
        last = k  # the last article of a run separated by white space only
        while (last + 1 < len(found) and found[last + 1][2].lower() == "a"
               and not template[found[last][1]:found[last + 1][0]].strip()):
            last += 1
        nxt = found[last + 1] if last + 1 < len(found) else None
        if nxt is not None and not template[found[last][1]:nxt[0]].strip():
            parts.append((template[start:nxt[1]], nxt[2].lower()))
            pos = nxt[1]
            k = last + 2
        else:
            stop = nxt[0] if nxt is not None else len(template)
            parts.append(fill_placeholders(template[start:stop], {}))
            pos = stop
            k = last + 1
    parts.append(template[pos:])
    return [p for p in parts if p != ""]


class _Filled(dict[tuple[str, str, str], str]):
    """(sub-template, key, value) -> the filled sub-template, computed once, shared by all."""

    def __missing__(self, item: tuple[str, str, str]) -> str:
        unit, key, value = item
        text = self[item] = fill_placeholders(unit, {key: value})
        return text


def _render(parts: Sequence[Part], values: Mapping[str, str], filled: _Filled) -> str:
    return "".join([p if isinstance(p, str) else filled[p[0], p[1], values[p[1]]]
                    for p in parts])


def _taken_names(template: str) -> frozenset[str]:
    """Capitalised words of ``template`` outside its placeholders, lowercased."""
    text = PLACEHOLDER.sub(" ", template)
    return frozenset(w.lower() for w in _CAPITALISED_WORD.findall(text) if w[0].isupper())


def _gender_fills(keys: frozenset[str], wordlists: Wordlists, taken: frozenset[str],
                  max_names: int | None) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(class, align, values) for every gender mutant of a template with these keys."""
    has_name, has_noun = "name" in keys, "gaw" in keys
    for side, gender in enumerate(GENDERS):
        pronouns = {k: wordlists.pronouns[gender][k[4:]] for k in PRONOUN_KEYS if k in keys}
        names = [(f"n{i}", {"name": name}) for i, name in
                 enumerate(wordlists.names[gender][:max_names] if has_name else ())
                 if name.lower() not in taken]
        nouns = [(f"g{j}", {"gaw": pair[side]})
                 for j, pair in enumerate(wordlists.gender_nouns if has_noun else ())]
        for name_align, name in names if has_name else [("", {})]:
            for noun_align, noun in nouns if has_noun else [("", {})]:
                yield gender, (name_align + noun_align) or "p", {**pronouns, **name, **noun}


def _occupation_fills(wordlists: Wordlists) -> Iterator[tuple[str, str, dict[str, str]]]:
    for _, occupation in wordlists.occupations:
        yield occupation, "", {"occupation": occupation}


def _country_fills(gender: str, wordlists: Wordlists,
                   taken: frozenset[str]) -> Iterator[tuple[str, str, dict[str, str]]]:
    side = GENDERS.index(gender)
    for country, *names in wordlists.country_names:
        if names[side].lower() not in taken:
            yield country, "", {gender: names[side]}


def _check_table(templates: pd.DataFrame, source: str) -> None:
    require_columns([str(c) for c in templates.columns], TEMPLATE_COLUMNS, file=source)
    labels = templates["label"]
    if not pd.api.types.is_integer_dtype(labels):
        numbers = pd.to_numeric(labels, errors="coerce")
        bad = numbers.isna() | (numbers != numbers.round())
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"label is not an integer (got {shown(labels.iloc[row])})",
                            file=source, row=row + 1, column="label")
    dup = templates["template_id"].duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"duplicate template id {templates['template_id'].iloc[row]!r}",
                        file=source, row=row + 1, column="template_id")


def _check_template(row: int, characteristic: str, template: str, original_class: str,
                    keys: frozenset[str], source: str) -> None:
    """Refuse a template its characteristic cannot fill (unknown or missing placeholders)."""
    if characteristic not in ALLOWED_KEYS:
        raise DataError(f"unknown characteristic {characteristic!r} (expected "
                        f"{', '.join(ALLOWED_KEYS)})", file=source, row=row,
                        column="characteristic")
    if not isinstance(template, str):
        raise DataError(f"template is not text (got {template!r})", file=source, row=row,
                        column="template")
    foreign = sorted(keys - ALLOWED_KEYS[characteristic])
    if foreign:
        raise DataError(f"placeholder <{foreign[0]}> does not belong in a {characteristic} "
                        "template", file=source, row=row, column="template")
    if characteristic == "gender" and not keys & GENDER_KEYS:
        raise DataError("gender template without a name, pronoun or gender-noun placeholder",
                        file=source, row=row, column="template")
    if characteristic == "occupation" and "occupation" not in keys:
        raise DataError("occupation template without an <occupation> placeholder",
                        file=source, row=row, column="template")
    if characteristic == "country":
        if original_class not in GENDERS:
            raise DataError(f"country template of gender {original_class!r} (expected male or "
                            "female)", file=source, row=row, column="original_class")
        if keys & set(GENDERS) != {original_class}:
            raise DataError(f"country template of a {original_class} person needs exactly the "
                            f"<{original_class}> placeholder", file=source, row=row,
                            column="template")


def _check_wordlists(characteristics: set[str], need_names: bool, wordlists: Wordlists,
                     max_names: int | None) -> None:
    if max_names is not None and max_names < 1:
        raise ConfigError(f"max_names must be a positive number of names (got {max_names})")
    if need_names and any(not wordlists.names.get(g) for g in GENDERS):
        raise ConfigError("gender templates with a <name> placeholder need the male and "
                          "female name lists (wordlists.load(names=...))")
    if "country" in characteristics and not wordlists.country_names:
        raise ConfigError("country templates need the country name list "
                          "(wordlists.load(country_names=...))")
    if "occupation" in characteristics and not wordlists.occupations:
        raise ConfigError("occupation templates need a non-empty occupation list")


def generate_mutants(templates: pd.DataFrame, wordlists: Wordlists, *,
                     max_names: int | None = None, source: str = "templates") -> pd.DataFrame:
    """All mutants of ``templates`` (a templates table) as a mutants table.

    ``max_names`` keeps the first that many names per gender; ``source`` names the table in
    errors (its file path, say). Raises DataError for a malformed templates table and
    ConfigError for a missing word list or a bad ``max_names``.
    """
    _check_table(templates, source)
    rows = list(templates[list(TEMPLATE_COLUMNS)].itertuples(index=False, name=None))
    compiled = []
    for row, (template_id, characteristic, label, template, original_class) in enumerate(
            rows, start=1):
        keys = frozenset(placeholder_keys(template)) if isinstance(template, str) else frozenset()
        _check_template(row, characteristic, template, original_class, keys, source)
        try:
            parts = _compile(template)
        except ValueError as e:
            raise DataError(str(e), file=source, row=row, column="template") from None
        compiled.append((str(template_id), characteristic, int(label), template,
                         str(original_class), keys, parts))
    _check_wordlists({c[1] for c in compiled},
                     any(c[1] == "gender" and "name" in c[5] for c in compiled),
                     wordlists, max_names)

    filled = _Filled()
    dumped: dict[tuple[tuple[str, str], ...], str] = {}
    out: dict[str, list] = {c: [] for c in COLUMNS}
    for template_id, characteristic, label, template, original_class, keys, parts in compiled:
        if characteristic == "gender":
            fills = _gender_fills(keys, wordlists, _taken_names(template), max_names)
        elif characteristic == "occupation":
            fills = _occupation_fills(wordlists)
        else:
            fills = _country_fills(original_class, wordlists, _taken_names(template))
        seen: set[tuple[str, str]] = set()
        for cls, align, values in fills:
            text = _render(parts, values, filled)
            if (cls, text) in seen:
                continue
            seen.add((cls, text))
            items = tuple(sorted(values.items()))
            js = dumped.get(items)
            if js is None:
                js = dumped[items] = json.dumps(dict(items), ensure_ascii=False)
            out["class"].append(cls)
            out["values"].append(js)
            out["align"].append(align)
            out["text"].append(text)
        n = len(seen)
        out["id"].extend([f"{template_id}#{k:04d}" for k in range(n)])
        out["template_id"].extend([template_id] * n)
        out["characteristic"].extend([characteristic] * n)
        out["label"].extend([label] * n)
    # through pyarrow: twice as fast as pandas' own conversion of long Python strings
    frame = {c: pd.array(pa.array(out[c], type=pa.large_string()), dtype="str")
             for c in COLUMNS if c != "label"}
    frame["label"] = np.asarray(out["label"], dtype=np.int64)
    return pd.DataFrame(frame, columns=list(COLUMNS))


def write_mutants(df: pd.DataFrame, path: str | Path) -> None:
    """Write a mutants table as Parquet (call inside the step's ``io.atomic_outputs``)."""
    require_columns([str(c) for c in df.columns], COLUMNS, file=path)
    write_parquet(df[list(COLUMNS)], path)


def read_mutants(path: str | Path, columns: Sequence[str] = COLUMNS) -> pd.DataFrame:
    """Read a mutants table written by :func:`write_mutants`, checking its columns; with
    ``columns``, only those are read (BTC counting needs no ``text``, the bulk of the file)."""
    path = Path(path)
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise ConfigError(f"not a mutants column: {unknown[0]!r} (columns: {', '.join(COLUMNS)})")
    df = read_parquet(path, what="Parquet mutants table", columns=list(columns))
    if "label" in columns and not pd.api.types.is_integer_dtype(df["label"]):
        raise DataError(f"label must be integers (got {df['label'].dtype})", file=path,
                        column="label")
    return df[list(columns)]
