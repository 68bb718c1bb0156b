"""BiasFinder's own word lists, read in their published formats (BiasFinder §4–5).

The original tool fills its placeholders from files under ``asset/`` of soarsmu/BiasFinder
(Apache-2.0): 79 occupations, 11 masculine/feminine noun pairs, 30 USA first names per
gender and one male and one female name per country. This module parses those files as they
are published and writes them in the project's word-list formats (``gender_nouns.csv``,
``occupations.csv``, the ``names.csv`` and ``country_names.csv`` of
:mod:`biasrepro.biasfinder.names`), each under a ``#`` header naming the source file and its
sha256, so that the parse, template and mutant steps use the original lists unchanged.

Formats (as published):

- ``neutral-occupation.csv``: one occupation per line, no header, written as the paper's
  fillers are ("CEO", "physician's assistant", "air traffic controller"); the article of
  ``<a>`` is derived from the word (:func:`biasrepro.biasfinder.placeholders.article`), as
  the original derived it with ``inflect``.
- ``masculine-feminine-person.txt``: CSV with header ``masculine,feminine``.
- names, in one of the two published versions:

  - v1, the code behind the paper's counts (e.g. commit 1317970 of 4 January 2021):
    ``male_names_only.csv`` / ``female_names_only.csv``, every name Gender Computer knows for
    one gender, in any country (51,518 and 56,112, lower case, column ``name``); the code
    shuffled each with pandas' ``sample(frac=1, random_state=123)`` and filled the first 30
    (:data:`V1_NAMES`, :data:`V1_SEED`; :func:`draw_names`);
  - the TSE version (d6d5424, files of July–August 2021): ``male_names_only_USA.csv`` /
    ``female_names_only_USA.csv``, the 30 USA names it fills, in order.

  Either is filled title-cased (``name.title()``), as the original did.
- ``unique_male_names_and_country.csv`` / ``unique_female_names_and_country.csv``: CSV with
  an unnamed index column, then ``name`` and ``country``; one name per country and gender
  (27 countries in v1, 25 at d6d5424).

Only the standard library is imported at module level (the workflow reads :data:`FILES`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from biasrepro.errors import DataError
from biasrepro.io import iter_records, open_input, sha256_file

#: each list's file, by its path under the repository's ``asset/`` directory
FILES: dict[str, str] = {
    "occupations": "predefined_occupation_list/neutral-occupation.csv",
    "gender_nouns": "gender_associated_word/masculine-feminine-person.txt",
    "male_names": "gender_computer/male_names_only_USA.csv",
    "female_names": "gender_computer/female_names_only_USA.csv",
    "male_countries": "gender_computer/unique_male_names_and_country.csv",
    "female_countries": "gender_computer/unique_female_names_and_country.csv",
}
#: v1's all-country name files (drawn from), which take the place of the USA lists
V1_FILES: dict[str, str] = {
    "male_names": "gender_computer/male_names_only.csv",
    "female_names": "gender_computer/female_names_only.csv",
}
#: the v1 code's draw: pandas ``sample(frac=1, random_state=V1_SEED)``, the first V1_NAMES
V1_SEED = 123
V1_NAMES = 30
#: the file name each list is recognised by
FILE_NAMES: dict[str, str] = {role: Path(rel).name for role, rel in FILES.items()}
#: every file name a list may come as: the d6d5424 name, then v1's where it differs
ALL_NAMES: dict[str, tuple[str, ...]] = {
    role: (FILE_NAMES[role], *([Path(V1_FILES[role]).name] if role in V1_FILES else []))
    for role in FILES}


def locate(directory: str | Path) -> dict[str, Path]:
    """Each list's file in ``directory``: a flat folder of the six files (as downloaded), or
    a copy of the repository's ``asset/`` folder. The names come from the USA lists where
    they are there (d6d5424, whose ``asset/`` also keeps a later all-country file), else from
    v1's all-country lists. A missing file is a DataError."""
    directory = Path(directory)
    out = {}
    for role, rel in FILES.items():
        rels = [rel, *([V1_FILES[role]] if role in V1_FILES else [])]
        candidates = [p for r in rels for p in (directory / Path(r).name, directory / r)]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise DataError(f"BiasFinder word list {' or '.join(ALL_NAMES[role])} not found "
                            f"(looked for {', '.join(rels)})", file=directory)
        out[role] = found
    return out


def by_name(paths: Iterable[str | Path]) -> dict[str, Path]:
    """Each list's file among ``paths``, recognised by file name; every list needs exactly
    one file and every file must be one of the lists."""
    roles = {name: role for role, names in ALL_NAMES.items() for name in names}
    out: dict[str, Path] = {}
    for path in map(Path, paths):
        role = roles.get(path.name)
        if role is None:
            raise DataError("not one of BiasFinder's word lists (expected "
                            f"{', '.join(roles)})", file=path)
        if role in out:
            raise DataError(f"given twice (also {out[role]})", file=path)
        out[role] = path
    missing = [FILE_NAMES[r] for r in FILES if r not in out]
    if missing:
        raise DataError(f"BiasFinder word list(s) missing: {', '.join(missing)}")
    return out


def _rows(path: Path) -> list[list[str]]:
    """The CSV rows of ``path`` (blank lines skipped), cells stripped."""
    if not Path(path).is_file():
        raise DataError("no such file", file=path)
    with open_input(path) as stream:
        records = [fields for _, fields in
                   iter_records(stream, file=path, delimiter=",", columns=())]
    rows = [[c.strip() for c in row] for row in records]
    return [r for r in rows if any(r)]


def _header(path: Path, rows: list[list[str]], expected: list[str]) -> list[list[str]]:
    if not rows or rows[0] != expected:
        got = rows[0] if rows else "nothing"
        raise DataError(f"expected the header {','.join(expected)}, found {got}", file=path,
                        row=1)
    if len(rows) == 1:
        raise DataError("no rows under the header", file=path)
    body = rows[1:]
    for i, row in enumerate(body, start=1):
        if len(row) != len(expected):
            raise DataError(f"{len(row)} fields, expected {len(expected)}", file=path, row=i)
        for column, value in zip(expected, row, strict=True):
            if not value and column:
                raise DataError("empty entry", file=path, row=i, column=column)
    return body


def _no_repeats(path: Path, values: list[str], column: str) -> None:
    seen: dict[str, int] = {}
    for row, value in enumerate(values, start=1):
        key = value.casefold()
        if key in seen:
            raise DataError(f"{value!r} repeats row {seen[key]}", file=path, row=row,
                            column=column)
        seen[key] = row


def read_occupations(path: Path) -> tuple[tuple[str, str], ...]:
    """``(article, occupation)`` per line of ``neutral-occupation.csv`` (no header), in file
    order, the occupation as written."""
    from biasrepro.biasfinder.placeholders import article

    path = Path(path)
    rows = _rows(path)
    if not rows:
        raise DataError("no occupations", file=path)
    for row, cells in enumerate(rows, start=1):
        if len(cells) != 1:
            raise DataError(f"{len(cells)} fields, expected one occupation per line",
                            file=path, row=row)
    occupations = [cells[0] for cells in rows]
    _no_repeats(path, occupations, "occupation")
    return tuple((article(occ), occ) for occ in occupations)


def read_gender_nouns(path: Path) -> tuple[tuple[str, str], ...]:
    """``(male, female)`` noun pairs of ``masculine-feminine-person.txt``, lowercased."""
    path = Path(path)
    body = _header(path, _rows(path), ["masculine", "feminine"])
    pairs = [(m.lower(), f.lower()) for m, f in body]
    for side, column in enumerate(("masculine", "feminine")):
        _no_repeats(path, [p[side] for p in pairs], column)
    both = {m for m, _ in pairs} & {f for _, f in pairs}
    if both:
        raise DataError(f"{sorted(both)[0]!r} is listed as masculine and feminine", file=path)
    return tuple(pairs)


def read_names(path: Path) -> tuple[str, ...]:
    """The names of ``male_names_only_USA.csv`` or ``female_names_only_USA.csv`` (header
    ``name``), title-cased as the original filled them, in file order."""
    path = Path(path)
    names = [row[0].title() for row in _header(path, _rows(path), ["name"])]
    _no_repeats(path, names, "name")
    return tuple(names)


def is_v1(path: Path) -> bool:
    """Whether ``path`` is one of v1's all-country name files (names are drawn from it)."""
    return Path(path).name in {Path(rel).name for rel in V1_FILES.values()}


def draw_names(path: Path, n: int = V1_NAMES, seed: int = V1_SEED) -> tuple[str, ...]:
    """The names the v1 code filled from an all-country name file: the file read as pandas
    reads it, shuffled with ``sample(frac=1, random_state=seed)``, the first ``n``,
    title-cased (its ``getMaleNamesFromGenderComputer`` and ``replaceNamePlaceholder``)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise DataError("no such file", file=path)
    try:
        frame = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"not a CSV of names ({e})", file=path) from None
    if "name" not in frame.columns:
        raise DataError("no 'name' column", file=path)
    drawn = frame.sample(frac=1, random_state=seed)["name"].head(n)
    if len(drawn) < n:
        raise DataError(f"{len(drawn)} names, fewer than the {n} drawn", file=path)
    if drawn.isna().any():
        raise DataError("an empty name among those drawn", file=path, column="name")
    names = [str(name).title() for name in drawn]
    _no_repeats(path, names, "name")
    return tuple(names)


def read_country_file(path: Path) -> dict[str, str]:
    """country -> name of ``unique_{male,female}_names_and_country.csv`` (an unnamed index
    column, then ``name`` and ``country``), in file order."""
    path = Path(path)
    body = _header(path, _rows(path), ["", "name", "country"])
    _no_repeats(path, [r[2] for r in body], "country")
    _no_repeats(path, [r[1] for r in body], "name")
    return {country: name for _, name, country in body}


def read_country_names(male: Path, female: Path) -> tuple[tuple[str, str, str], ...]:
    """``(country, male name, female name)`` from the two country files, in the male file's
    order; both must list the same countries."""
    men, women = read_country_file(male), read_country_file(female)
    for mine, theirs, path in ((men, women, male), (women, men, female)):
        extra = [c for c in mine if c not in theirs]
        if extra:
            other = female if path == male else male
            raise DataError(f"country {extra[0]!r} has no name in {Path(other).name}",
                            file=path, column="country")
    clash = set(map(str.casefold, men.values())) & set(map(str.casefold, women.values()))
    if clash:
        raise DataError(f"name {sorted(clash)[0]!r} is listed for both genders", file=male,
                        column="name")
    return tuple((c, men[c], women[c]) for c in men)


def read_all(files: Mapping[str, Path]) -> dict[str, object]:
    """Every list from its file (``files``: :func:`locate` or :func:`by_name`)."""
    if is_v1(files["male_names"]) != is_v1(files["female_names"]):
        raise DataError("the male and female names come from different versions (v1's "
                        "all-country lists and d6d5424's USA lists)", file=files["female_names"])
    male, female = (draw_names(files[r]) if is_v1(files[r]) else read_names(files[r])
                    for r in ("male_names", "female_names"))
    if len(male) != len(female):
        raise DataError(f"{len(male)} male but {len(female)} female names; the two lists "
                        "must be of one length", file=files["female_names"])
    return {
        "occupations": read_occupations(files["occupations"]),
        "gender_nouns": read_gender_nouns(files["gender_nouns"]),
        "names": {"male": male, "female": female},
        "country_names": read_country_names(files["male_countries"],
                                            files["female_countries"]),
    }


def header(role: str, path: Path, what: str) -> str:
    """The ``#`` header of a converted list: what it is and which file, with its sha256."""
    rel = V1_FILES[role] if is_v1(path) else FILES[role]
    return (f"{what}\nConverted from BiasFinder's {rel} (soarsmu/BiasFinder, "
            f"asset/, Apache-2.0) by biasrepro.biasfinder.original_lists; do not edit.\n"
            f"Source file {path.name}, sha256 {sha256_file(path)}.")


def _write(path: Path, comment: str, columns: list[str], rows: Iterable[Iterable[str]]) -> None:
    out = io.StringIO()
    for line in comment.splitlines():
        out.write(f"# {line}".rstrip() + "\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    Path(path).write_text(out.getvalue(), encoding="utf-8")


def convert(files: Mapping[str, Path], *, pronouns: Path,
            out: Mapping[str, Path]) -> dict[str, int]:
    """Write the original lists in the project's formats to ``out`` (keys ``pronouns``,
    ``gender_nouns``, ``occupations``: the hand-written lists' files; ``names``,
    ``country_names``: the name lists). ``pronouns`` is the pronoun table written out (the
    original's pronouns are hard-coded, so the project's table is used). Call inside
    ``io.atomic_outputs``. Returns the size of each list."""
    from biasrepro.biasfinder.names import read_country_names, read_names
    from biasrepro.biasfinder.wordlists import (
        GENDERS,
        read_gender_nouns,
        read_occupations,
        read_pronouns,
    )

    lists = read_all(files)
    table = read_pronouns(Path(pronouns))
    _write(out["pronouns"],
           f"Pronouns by grammatical case (BiasFinder's own are hard-coded), from "
           f"{Path(pronouns).name}, sha256 {sha256_file(pronouns)}.",
           ["gender", "case", "form"],
           [(g, case, form) for g in GENDERS for case, form in table[g].items()])
    _write(out["gender_nouns"],
           header("gender_nouns", files["gender_nouns"], "BiasFinder's gender nouns "
                  "(<gaw>), masculine -> male, feminine -> female; row i of each column "
                  "form a pair."), ["male", "female"], lists["gender_nouns"])
    _write(out["occupations"],
           header("occupations", files["occupations"], "BiasFinder's occupations "
                  "(<occupation>) as written; the article is derived from the word."),
           ["article", "occupation"], lists["occupations"])
    names = lists["names"]
    _write(out["names"],
           header("male_names", files["male_names"], "BiasFinder's <name> fillers, "
                  "title-cased; rank is the file order."
                  if not is_v1(files["male_names"]) else
                  f"BiasFinder's <name> fillers as its v1 code drew them: shuffled with "
                  f"pandas sample(frac=1, random_state={V1_SEED}), the first {V1_NAMES}, "
                  "title-cased; rank is the drawn order.")
           + f"\nFemale names: {files['female_names'].name}, sha256 "
             f"{sha256_file(files['female_names'])}.",
           ["gender", "rank", "name"],
           [(g, str(i), n) for g in ("male", "female") for i, n in enumerate(names[g])])
    _write(out["country_names"],
           header("male_countries", files["male_countries"], "BiasFinder's country-of-origin "
                  "fillers: one male and one female name per country.")
           + f"\nFemale names: {files['female_countries'].name}, sha256 "
             f"{sha256_file(files['female_countries'])}.",
           ["country", "male", "female"], lists["country_names"])
    # read back with the project's readers: what the later steps will see
    read_gender_nouns(Path(out["gender_nouns"]))
    read_occupations(Path(out["occupations"]))
    read_names(Path(out["names"]))
    read_country_names(Path(out["country_names"]))
    return {"occupations": len(lists["occupations"]),
            "gender_nouns": len(lists["gender_nouns"]),
            "names_per_gender": len(names["male"]),
            "countries": len(lists["country_names"])}
