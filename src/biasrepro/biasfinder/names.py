"""Generated first-name lists for BiasFinder's ``<name>``, ``<male>`` and ``<female>`` fillers.

BiasFinder fills ``<name>`` with N male and N female names used by one gender only (§4,
N = 30) and the country-of-origin placeholders with one male and one female name unique to
each of 26 countries (§5). The paper drew them from GenderComputer; this project builds
them from a declared, installed source instead: ``nam_dict.txt``, Jörg Michael's first-name
dictionary (GNU Free Documentation License 1.2) as shipped by gender-guesser.

Against the original's name defects (biasfinder-original.md §7.5) a name is kept only if it
is a whole single name (no ``+`` compound), letters only, at least three letters, not a
common English word, pronoun, gender noun or country word (:func:`reserved_words`), and it
keeps the file's own capitalisation ("McKenzie", never ``.title()``'s "Mckenzie").
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path

import numpy as np
import pandas as pd
from gender_guesser.detector import Detector

from biasrepro.data.world import vocabulary
from biasrepro.errors import ConfigError, DataError, shown
from biasrepro.io import atomic_outputs, read_list, read_text

log = logging.getLogger(__name__)

GENDERS = ("male", "female")
#: nam_dict.txt's gender codes: M/F one gender; 1M/1F "first part of a name, else mostly";
#: ?M/?F unisex, mostly one gender; ? unisex
CODES = frozenset({"M", "1M", "?M", "F", "1F", "?F", "?"})
_SINGLE_CODE = {"male": "M", "female": "F"}
#: the 55 frequency columns, in file order (gender-guesser's own list)
COLUMNS: tuple[str, ...] = tuple(Detector.COUNTRIES)
#: each column's country as a reader would name it; None for columns that are not a
#: country. East Frisia is a region of Germany and counts as Germany; the "india" column
#: covers India and Sri Lanka.
COUNTRY_OF_COLUMN: dict[str, str | None] = {
    "great_britain": "Great Britain", "ireland": "Ireland", "usa": "USA", "italy": "Italy",
    "malta": "Malta", "portugal": "Portugal", "spain": "Spain", "france": "France",
    "belgium": "Belgium", "luxembourg": "Luxembourg", "the_netherlands": "Netherlands",
    "east_frisia": "Germany", "germany": "Germany", "austria": "Austria",
    "swiss": "Switzerland", "iceland": "Iceland", "denmark": "Denmark", "norway": "Norway",
    "sweden": "Sweden", "finland": "Finland", "estonia": "Estonia", "latvia": "Latvia",
    "lithuania": "Lithuania", "poland": "Poland", "czech_republic": "Czech Republic",
    "slovakia": "Slovakia", "hungary": "Hungary", "romania": "Romania",
    "bulgaria": "Bulgaria", "bosniaand": "Bosnia and Herzegovina", "croatia": "Croatia",
    "kosovo": "Kosovo", "macedonia": "North Macedonia", "montenegro": "Montenegro",
    "serbia": "Serbia", "slovenia": "Slovenia", "albania": "Albania", "greece": "Greece",
    "russia": "Russia", "belarus": "Belarus", "moldova": "Moldova", "ukraine": "Ukraine",
    "armenia": "Armenia", "azerbaijan": "Azerbaijan", "georgia": "Georgia",
    "the_stans": None,  # Kazakhstan, Kyrgyzstan, Tajikistan, Turkmenistan, Uzbekistan
    "turkey": "Turkey", "arabia": None,  # Arabia/Persia
    "israel": "Israel", "china": "China", "india": "India", "japan": "Japan",
    "korea": "Korea", "vietnam": "Vietnam", "other_countries": None,
}
COUNTRIES: tuple[str, ...] = tuple(dict.fromkeys(c for c in COUNTRY_OF_COLUMN.values() if c))
#: each country's world region: the subregions of the UN statistics division's M49
#: standard; the country set is spread over them (:func:`spread_over_regions`)
REGIONS: dict[str, tuple[str, ...]] = {
    "Northern America": ("USA",),
    "Northern Europe": ("Great Britain", "Ireland", "Iceland", "Denmark", "Norway", "Sweden",
                        "Finland", "Estonia", "Latvia", "Lithuania"),
    "Western Europe": ("France", "Belgium", "Luxembourg", "Netherlands", "Germany",
                       "Austria", "Switzerland"),
    "Southern Europe": ("Italy", "Malta", "Portugal", "Spain", "Greece", "Albania",
                        "Bosnia and Herzegovina", "Croatia", "Kosovo", "North Macedonia",
                        "Montenegro", "Serbia", "Slovenia"),
    "Eastern Europe": ("Poland", "Czech Republic", "Slovakia", "Hungary", "Romania",
                       "Bulgaria", "Russia", "Belarus", "Moldova", "Ukraine"),
    "Western Asia": ("Armenia", "Azerbaijan", "Georgia", "Turkey", "Israel"),
    "Southern Asia": ("India",),
    "Eastern Asia": ("China", "Japan", "Korea"),
    "South-eastern Asia": ("Vietnam",),
}
REGION_OF_COUNTRY: dict[str, str] = {c: r for r, cs in REGIONS.items() for c in cs}
#: where a name occurs: its countries, plus the non-country columns under their own names
#: (a name found there is not unique to any country)
_REGION_OF_COLUMN = {col: COUNTRY_OF_COLUMN[col] or col for col in COLUMNS}
_REGIONS = tuple(dict.fromkeys(_REGION_OF_COLUMN.values()))

_FIRST_FREQ, _END_FREQ = 30, 30 + len(COLUMNS)  # 0-based columns of the frequency digits
_FREQ_VALUE = np.full(256, 255, dtype=np.uint8)
for _value, _char in enumerate(" 123456789ABCD"):
    _FREQ_VALUE[ord(_char)] = _value
MAX_FREQUENCY = 13

#: common English words that nam_dict.txt also lists as first names, found by looking up
#: every name of the USA pool (frequency >= 3) and of the unique-per-country pools
#: (frequency >= 3) in WordNet and keeping the words a reader would take for a word. "Grace",
#: "Hope" or "Mark" are fine names, but a filled "Grace" or "Mark" can read as the noun,
#: verb or adjective, and the original's lists had such words ("men", "Vide").
COMMON_WORDS = frozenset("""
    alien alter amber angel ant anti april art ascension august autumn baby bilge bill
    bishop bliss bob bore brook buck bud buster candy carry cash chad chance charity chase
    cherry chip clay cliff colt crystal daisy dale dare dawn dean deep destiny diamond dick
    dime don drew duke earnest ebony ergo eve even faith fanny fern ferry forest frank gay
    gene gentian ginger glen glory grace grant hale hamlet harmony hazel heather hero hilly
    holly homer honey hope hunter ideal iris ivy jack jade jasmine jay jet jetty jewel job
    joy june king lance liberty lily love major mark marks mason mat max mayo melody mercy
    merit mica mike miles mist misty mite mitre myrtle nato nick nil nimrod olive opal paddy
    pat patience patty paw pearl peep penny pile poppy porter price prince prudence rain
    randy rattan ray rich river rob robin rock rod romans rose rosemary rota ruby rusty
    sally sandy savannah saviour sham sierra sky slave sonny star sterling stole stone storm
    sue summer sunny tanner tome uzi valve veer vibe victor victoriana violet wade ward will
    willy winter wolf woody
""".split())
#: gendered nouns and forms of address beyond the lexicon's pairs (a name must not be one)
GENDER_WORDS = frozenset("""
    actor actress aunt auntie baron baroness belle bloke boy bride bro brother chap count
    countess dad daddy dame duchess dude duke earl emperor empress father fiance fiancee
    gal gentleman girl gramps grandma granny grandpa groom guy heir heiress heroine
    hostess husband junior king lad lady lass lord ma madam madame mama man master miss
    mister mistress mom mommy monk mother mum mummy nephew niece nun pa papa prince
    princess queen sir sis sister son tsar tsarina uncle waitress widow widower wife woman
""".split())
#: continents and other names of countries that the file also lists as first names (the
#: countries' English names are reserved through COUNTRIES and the lexicon)
PLACE_WORDS = frozenset({"africa", "albion", "america", "asia", "europa", "italia"})


@functools.cache
def reserved_words() -> frozenset[str]:
    """Lowercase words a generated name must not be.

    spaCy's English stop words (which include the pronouns and "may", "even", "his", all
    listed as names in nam_dict.txt), :data:`COMMON_WORDS`, :data:`GENDER_WORDS`,
    :data:`PLACE_WORDS`, the words of :data:`COUNTRIES` and of the synthetic world's lexicon
    (pronouns, gender nouns, occupations, countries and demonyms, sentiment and film words,
    identity words).
    """
    from spacy.lang.en.stop_words import STOP_WORDS  # spaCy loads in seconds: only when asked

    phrases: list[str] = [*STOP_WORDS, *COMMON_WORDS, *GENDER_WORDS, *PLACE_WORDS,
                          *COUNTRIES]
    phrases += [w for forms in vocabulary.PRONOUNS.values() for w in forms.values()]
    phrases += [w for pair in vocabulary.GENDER_NOUNS for w in pair]
    phrases += [*vocabulary.OCCUPATIONS, *vocabulary.OCCUPATION_ADJECTIVES, *vocabulary.RELATIONS]
    phrases += [*vocabulary.COUNTRIES, *vocabulary.COUNTRIES.values()]
    phrases += [*vocabulary.POSITIVE_ADJECTIVES, *vocabulary.NEGATIVE_ADJECTIVES,
                *vocabulary.POSITIVE_ADVERBS, *vocabulary.NEGATIVE_ADVERBS, *vocabulary.GENRES,
                *vocabulary.FILM_ASPECTS, *vocabulary.INSULTS, *vocabulary.INSULT_ADJECTIVES]
    phrases += [p for forms in vocabulary.IDENTITY_WORDS.values() for ps in forms.values()
                for p in ps]
    return frozenset(w for p in phrases for w in re.findall(r"[^\W\d_]+", p.lower()))


# -- the name file --------------------------------------------------------------------------

def nam_dict_path() -> Path:
    """The installed gender-guesser's ``gender_guesser/data/nam_dict.txt``."""
    path = Path(str(resources.files("gender_guesser").joinpath("data", "nam_dict.txt")))
    if not path.is_file():
        raise DataError("gender-guesser's name dictionary is not installed", file=path)
    return path


def source_description(source: Path | None = None) -> str:
    """The source line of a generated list's header: the installed gender-guesser file
    (``source`` None or that file) with its version and licence, or another file's path."""
    if source is not None and Path(source).resolve() != nam_dict_path().resolve():
        return f"{source} (a file in the format of gender-guesser's nam_dict.txt)"
    version = metadata.version("gender-guesser")
    return (f"gender-guesser {version}, gender_guesser/data/nam_dict.txt (Joerg Michael's "
            "first-name dictionary, GNU Free Documentation License 1.2)")


def read_nam_dict(path: Path) -> pd.DataFrame:
    """One row per name entry of a ``nam_dict.txt`` file, in file order.

    Columns: ``line`` (1-based line number), ``code`` (M, 1M, ?M, F, 1F, ?F or ?), ``name``
    (as written, ``+`` joins the parts of a compound) and one int8 column per country
    column of :data:`COLUMNS` (0 = absent, 1 rare ... 13 extremely common). The file is
    fixed-width UTF-8: code in columns 0-1, name in 3-28, a sort mark in 29 and one
    hexadecimal digit per country in 30-84. Comment (``#``) and equivalence (``=``) lines
    are skipped. A malformed line raises DataError naming its line number as the row.
    """
    text = read_text(path)
    numbers: list[int] = []
    codes: list[str] = []
    names: list[str] = []
    digits: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip() or line[0] in "#=":
            continue
        code = line[:2].rstrip()
        if code not in CODES or line[2:3] != " ":
            raise DataError(f"unknown gender code {line[:3].strip()!r}; expected one of "
                            f"{', '.join(sorted(CODES))}", file=path, row=number)
        if len(line) < _END_FREQ:
            raise DataError(f"line has {len(line)} characters; the {len(COLUMNS)} country "
                            f"columns need {_END_FREQ}", file=path, row=number)
        name = line[3:29].strip()
        if not name or any(c.isspace() for c in name):
            raise DataError(f"name field {line[3:29]!r} is not one name", file=path,
                            row=number)
        if line[29] not in " +-" or line[_END_FREQ:].strip() not in ("", "$"):
            raise DataError("unexpected text outside the name and frequency columns",
                            file=path, row=number)
        numbers.append(number)
        codes.append(code)
        names.append(name)
        digits.append(line[_FIRST_FREQ:_END_FREQ])
    if not names:
        raise DataError("no name entries", file=path)
    # any non-ASCII character becomes "?", which is not a frequency digit
    flat = np.frombuffer("".join(digits).encode("ascii", "replace"), dtype=np.uint8)
    freq = _FREQ_VALUE[flat].reshape(len(names), len(COLUMNS))
    bad = np.argwhere(freq == 255)
    if len(bad):
        i, j = bad[0]
        raise DataError(f"frequency {digits[i][j]!r} is not blank, 1-9 or A-D", file=path,
                        row=numbers[i], column=COLUMNS[j])
    table = pd.DataFrame({"line": np.asarray(numbers, dtype=np.int64), "code": codes,
                          "name": names})
    return pd.concat([table, pd.DataFrame(freq.astype(np.int8), columns=list(COLUMNS))],
                     axis=1)


def _keys(names: pd.Series) -> pd.Series:
    """Case-folded lookup keys; a ``+`` compound stands for its joined, hyphenated and
    spaced forms (nam_dict.txt's convention), so one entry may give three keys."""
    folded = names.str.casefold()
    forms = folded.map(lambda n: sorted({n.replace("+", s) for s in ("", "-", " ")})
                       if "+" in n else [n])
    return forms.explode()


def single_gender_names(table: pd.DataFrame) -> dict[str, set[str]]:
    """Names every entry of which is ``M`` (male) or every entry ``F`` (female).

    BiasFinder §4 keeps names "used by only one gender globally": a name with any ``1M``,
    ``?M``, ``1F``, ``?F`` or ``?`` entry, or with entries of both genders, is in neither
    set, and spellings that differ only in letter case (LeRoy, Leroy) or are forms of a
    ``+`` compound share their entries. Compounds themselves are not returned.
    """
    keys = _keys(table["name"])
    codes = table["code"].loc[keys.index]
    per_key = pd.DataFrame({"key": keys.to_numpy(), "code": codes.to_numpy()}).groupby("key")
    kinds, first = per_key["code"].nunique(), per_key["code"].first()
    plain = table["name"][~table["name"].str.contains("+", regex=False)]
    key_of = plain.str.casefold()
    out = {}
    for gender, code in _SINGLE_CODE.items():
        ok = (kinds == 1) & (first == code)
        out[gender] = set(plain[key_of.map(ok).to_numpy(dtype=bool)])
    return out


def _region_frequencies(table: pd.DataFrame) -> pd.DataFrame:
    """Per table row, the highest frequency in each region (countries merged, see
    :data:`COUNTRY_OF_COLUMN`; non-country columns kept under their own names)."""
    return pd.DataFrame({region: table[[c for c in COLUMNS if _REGION_OF_COLUMN[c] == region]]
                         .max(axis=1) for region in _REGIONS}, index=table.index)


def _spellings(table: pd.DataFrame) -> pd.DataFrame:
    """One row per plain (non-compound) spelling: its highest frequency per region, its
    lookup key, the number of regions where any entry under that key occurs, and its
    ``gender`` (from :func:`single_gender_names`; "" for names of both or unsure gender)."""
    regions = _region_frequencies(table)
    keys = _keys(table["name"])
    present = regions.loc[keys.index].set_axis(keys.to_numpy()).groupby(level=0).max() > 0
    plain = ~table["name"].str.contains("+", regex=False)
    out = regions[plain].groupby(table["name"][plain]).max()
    out["key"] = out.index.str.casefold()
    out["regions"] = out["key"].map(present.sum(axis=1)).astype(np.int64)
    gender_of = {n: g for g, names in single_gender_names(table).items() for n in names}
    out["gender"] = [gender_of.get(n, "") for n in out.index]
    return out


def _clean(names: pd.Index, *, ascii_only: bool) -> np.ndarray:
    """Whole names of >= 3 letters (ASCII letters only if asked), not reserved words."""
    reserved = reserved_words()
    return np.array([len(n) >= 3 and n.isalpha() and (n.isascii() or not ascii_only)
                     and n.lower() not in reserved for n in names], dtype=bool)


def _one_spelling(freq: pd.Series, keys: pd.Series) -> pd.Series:
    """Keep each name's most frequent spelling (ties: the first in sorted order), sorted."""
    order = pd.DataFrame({"freq": freq, "key": keys}).rename_axis("name").reset_index()
    order = order.sort_values(["freq", "name"], ascending=[False, True], kind="stable")
    order = order.drop_duplicates("key").sort_values("name", kind="stable")
    return order.set_index("name")["freq"]


def _check_settings(*, seed: int, min_frequency: int, key: str) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed: expected a non-negative integer, got {seed!r}")
    if (not isinstance(min_frequency, int) or isinstance(min_frequency, bool)
            or not 1 <= min_frequency <= MAX_FREQUENCY):
        raise ConfigError(f"{key}: expected an integer from 1 (rare) to {MAX_FREQUENCY} "
                          f"(extremely common), got {min_frequency!r}")


# -- generation ------------------------------------------------------------------------------

def generate_names(path: Path, *, seed: int, n: int = 30, min_frequency: int = 6,
                   country: str | None = "USA") -> pd.DataFrame:
    """N male and N female names used by one gender only (BiasFinder §4, ``<name>``).

    Candidates: :func:`single_gender_names`, ASCII letters only, >= 3 letters, not a
    :func:`reserved_words` word, frequency >= ``min_frequency`` in ``country`` (one of
    :data:`COUNTRIES`; None: in any column), one spelling per name. ``n`` of each gender
    are drawn with ``numpy.random.default_rng([seed, gender index])`` from the candidates
    in sorted order. Columns ``gender``, ``rank``, ``name``; within a gender the names are
    ranked by frequency (most common first, then by name), so the aligned pair "name i of
    each gender" pairs names of similar frequency.
    """
    _check_settings(seed=seed, min_frequency=min_frequency, key="biasfinder.names.min_frequency")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ConfigError(f"biasfinder.names.n: expected a positive integer, got {n!r}")
    if country is not None and country not in COUNTRIES:
        raise ConfigError(f"biasfinder.names.country: unknown country {country!r}; expected "
                          f"one of {', '.join(COUNTRIES)}")
    spell = _spellings(read_nam_dict(path))
    freq = spell[country] if country is not None else spell[list(_REGIONS)].max(axis=1)
    eligible = (freq >= min_frequency).to_numpy() & _clean(spell.index, ascii_only=True)
    frames = []
    for index, gender in enumerate(GENDERS):
        mask = eligible & (spell["gender"] == gender).to_numpy()
        pool = _one_spelling(freq[mask], spell["key"][mask])
        if len(pool) < n:
            where = country or "any country"
            raise ConfigError(
                f"biasfinder.names.n: {n} {gender} names wanted, but only {len(pool)} "
                f"single-gender names reach frequency {min_frequency} in {where} (lower "
                "biasfinder.names.n or biasfinder.names.min_frequency)")
        rng = np.random.default_rng([seed, index])
        drawn = pool.iloc[np.sort(rng.choice(len(pool), size=n, replace=False))]
        ranked = drawn.rename_axis("name").reset_index().sort_values(
            ["freq", "name"], ascending=[False, True], kind="stable")
        frames.append(pd.DataFrame({"gender": gender, "rank": np.arange(n, dtype=np.int64),
                                    "name": ranked["name"].to_numpy()}))
    return pd.concat(frames, ignore_index=True)


def spread_over_regions(countries: Sequence[str], n: int, *, seed: int) -> list[str]:
    """``n`` of ``countries`` spread as evenly as they allow over the :data:`REGIONS`.

    Round robin over the regions (in :data:`REGIONS` order): each round takes one country
    from every region that has one left; when fewer countries are still wanted than regions
    have some left, the regions served in that last round are drawn at random. Within a
    region the order is a random permutation of its countries (sorted first). Both draws use
    ``numpy.random.default_rng([seed, len(COUNTRIES)])``, a stream apart from the
    per-country name draws. Sorted by country, ignoring letter case.
    """
    unknown = [c for c in countries if c not in REGION_OF_COUNTRY]
    if unknown:
        raise ConfigError(f"biasfinder.countries: no region for {', '.join(unknown)}")
    if n > len(countries):
        raise ConfigError(f"biasfinder.countries.n: {n} countries wanted, only "
                          f"{len(countries)} to choose from")
    rng = np.random.default_rng([seed, len(COUNTRIES)])
    queues = []
    for region in REGIONS:
        mine = sorted((c for c in set(countries) if REGION_OF_COUNTRY[c] == region),
                      key=str.casefold)
        if mine:
            queues.append([mine[i] for i in rng.permutation(len(mine))])
    chosen: list[str] = []
    while len(chosen) < n:
        live = [q for q in queues if q]
        need = n - len(chosen)
        if need < len(live):
            live = [live[i] for i in np.sort(rng.choice(len(live), size=need, replace=False))]
        chosen += [q.pop(0) for q in live]
    return sorted(chosen, key=str.casefold)


def generate_country_names(path: Path, *, seed: int, min_frequency: int = 4,
                           n: int | None = 26,
                           countries: Sequence[str] | None = None) -> pd.DataFrame:
    """One male and one female name per country, unique to that country (BiasFinder §5),
    for ``n`` countries spread over world regions.

    A country's candidates are the :func:`single_gender_names` with frequency >=
    ``min_frequency`` there and no entry (under any letter case) in any other column of the
    file, non-country columns included; letters only (the file's own accents are kept), >= 3
    letters, not a :func:`reserved_words` word, one spelling per name. One name of each
    gender is drawn with ``numpy.random.default_rng([seed, index in COUNTRIES])``, so a
    country's pick does not depend on which other countries are asked for. Countries that
    lack a name of either gender are dropped (logged); of the rest, ``n`` are kept by
    :func:`spread_over_regions` (None: all of them), and fewer than ``n`` left raises
    ConfigError. Columns ``country``, ``male``, ``female``, sorted by country (ignoring
    letter case).

    Countries with a pair at each ``min_frequency`` (of the file's 51 countries): 1: 48,
    2: 47, 3: 46, 4: 45 (the default; Austria, China, Korea, Luxembourg, Serbia and Vietnam
    have no unique pair), 5: 42, 6: 36, 7: 29. The file is mostly European, so even spread
    over regions most of them are.
    """
    key = "biasfinder.countries"
    _check_settings(seed=seed, min_frequency=min_frequency, key=f"{key}.min_frequency")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise ConfigError(f"{key}.n: expected a positive integer, got {n!r}")
    wanted = COUNTRIES if countries is None else tuple(countries)
    unknown = [c for c in wanted if c not in COUNTRIES]
    if unknown:
        raise ConfigError(f"{key}: unknown countries {', '.join(map(repr, unknown))}; "
                          f"expected names from {', '.join(COUNTRIES)}")
    spell = _spellings(read_nam_dict(path))
    spell = spell[(spell["regions"] == 1).to_numpy() & _clean(spell.index, ascii_only=False)]
    rows, dropped = [], []
    for country in sorted(set(wanted), key=str.casefold):
        here = spell[spell[country] >= min_frequency]
        picks = []
        rng = np.random.default_rng([seed, COUNTRIES.index(country)])
        for gender in GENDERS:
            mine = here[here["gender"] == gender]
            pool = _one_spelling(mine[country], mine["key"])
            if pool.empty:
                break
            picks.append(pool.index[rng.integers(len(pool))])
        if len(picks) == len(GENDERS):
            rows.append((country, *picks))
        else:
            dropped.append(country)
    if dropped:
        log.info("no unique male and female name at frequency >= %d: dropped %s",
                 min_frequency, ", ".join(dropped))
    if n is not None and len(rows) < n:
        raise ConfigError(
            f"{key}.n: {n} countries wanted, but only {len(rows)} "
            f"have a unique male and a unique female name at frequency >= {min_frequency} "
            f"(dropped: {', '.join(dropped) or 'none'}); lower {key}.min_frequency")
    if n is not None:
        keep = set(spread_over_regions([r[0] for r in rows], n, seed=seed))
        log.info("%d of %d countries kept, spread over regions: %s", n, len(rows),
                 ", ".join(sorted(keep, key=str.casefold)))
        rows = [r for r in rows if r[0] in keep]
    return pd.DataFrame(rows, columns=["country", *GENDERS])


# -- writing ---------------------------------------------------------------------------------

def names_header(*, n: int, seed: int, min_frequency: int, country: str | None,
                 source: Path | None = None) -> str:
    """The comment header of a :func:`generate_names` list: what it is, its source (default:
    the installed gender-guesser file) and licence, the selection rule and the settings."""
    where = country or "at least one column of the file"
    return (
        f"BiasFinder <name> fillers: {n} male and {n} female first names, each used by one "
        "gender only (BiasFinder section 4).\n"
        "Generated by biasrepro.biasfinder.names.generate_names; do not edit by hand.\n"
        f"Source: {source_description(source)}.\n"
        "Rule: every entry of the name (all letter cases) is coded M, or every one is coded "
        f"F; frequency >= {min_frequency} (1 rare ... 13 extremely common) in {where}; "
        "ASCII letters only, 3 or more; not a common English word, pronoun, gender noun or "
        "country word; one spelling per name.\n"
        f"Drawn with numpy default_rng([seed, gender index]); n = {n}, seed = {seed}, "
        f"min_frequency = {min_frequency}, country = {country}.\n"
        "rank: most frequent first within a gender; rank i of each gender form a pair."
    )


def country_names_header(*, seed: int, min_frequency: int, n: int | None = None,
                         source: Path | None = None) -> str:
    """The comment header of a :func:`generate_country_names` list (see :func:`names_header`)."""
    return (
        "BiasFinder country-of-origin fillers: one male and one female first name per "
        "country, each unique to that country and used by one gender only (BiasFinder "
        "section 5).\n"
        "Generated by biasrepro.biasfinder.names.generate_country_names; do not edit by "
        "hand.\n"
        f"Source: {source_description(source)}.\n"
        "Rule: every entry of the name (all letter cases) is coded M, or every one F; "
        f"frequency >= {min_frequency} (1 rare ... 13 extremely common) in the country and "
        "absent from every other column of the file (East Frisia counts as Germany; the "
        "India column also covers Sri Lanka); letters only, 3 or more; not a common English "
        "word, pronoun, gender noun or country word; one spelling per name.\n"
        f"Drawn with numpy default_rng([seed, country index]); seed = {seed}, "
        f"min_frequency = {min_frequency}."
        + ("" if n is None else f"\n{n} countries kept, spread round robin over the UN M49 "
           "subregions (biasrepro.biasfinder.names.spread_over_regions).")
    )


def _write_csv(df: pd.DataFrame, path: Path, header: str) -> None:
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    with atomic_outputs(path) as (tmp,):
        tmp.write_text(comments + df.to_csv(index=False, lineterminator="\n"),
                       encoding="utf-8")


def write_names(df: pd.DataFrame, path: Path, *, header: str) -> None:
    """Write a :func:`generate_names` table as CSV under ``header`` as ``#`` lines (see
    :func:`names_header`), atomically."""
    _write_csv(df[["gender", "rank", "name"]], Path(path), header)


def write_country_names(df: pd.DataFrame, path: Path, *, header: str) -> None:
    """Write a :func:`generate_country_names` table as CSV under ``header`` as ``#`` lines
    (see :func:`country_names_header`), atomically."""
    _write_csv(df[["country", *GENDERS]], Path(path), header)


# -- reading (generated or user-supplied lists) -----------------------------------------------

def _read_list(path: Path, required: Sequence[str],
               optional: Sequence[str] = ()) -> pd.DataFrame:
    """The ``required`` and present ``optional`` columns of a ``#``-commented CSV as stripped,
    non-empty strings, indexed by data row (header and comment lines not counted)."""
    return read_list(path, required, optional, what="name list")


def _check_new(name: str, row: int, column: str, seen: dict[str, tuple[int, str]],
               path: Path, what: str) -> None:
    """Refuse ``name`` (any letter case) if it was seen before; remember it otherwise."""
    key = name.casefold()
    if key in seen:
        first_row, first_column = seen[key]
        raise DataError(f"{name!r} {what} (row {first_row}, column '{first_column}')",
                        file=path, row=row, column=column)
    seen[key] = (row, column)


def read_names(path: Path) -> dict[str, tuple[str, ...]]:
    """Gender -> names from a ``gender,name`` CSV (``rank`` optional), as written by
    :func:`write_names` or supplied by a user.

    Both genders must have the same number of names (name i of each gender form an aligned
    pair); with a ``rank`` column the names are ordered by it, else by file order. Missing
    columns, empty cells, unknown genders, bad or repeated ranks, a name listed twice or
    under both genders raise DataError naming the file, row and column.
    """
    path = Path(path)
    df = _read_list(path, ["gender", "name"], optional=["rank"])
    bad = ~df["gender"].isin(GENDERS)
    if bad.any():
        row = bad.idxmax()
        raise DataError(f"unknown gender {df.at[row, 'gender']!r}; expected "
                        f"{' or '.join(GENDERS)}", file=path, row=row, column="gender")
    seen: dict[str, tuple[int, str]] = {}
    genders: dict[str, str] = {}
    for row, gender, name in zip(df.index, df["gender"], df["name"], strict=True):
        other = genders.get(name.casefold())
        what = "listed twice" if other in (None, gender) else f"is also listed as {other}"
        _check_new(name, row, "name", seen, path, what)
        genders[name.casefold()] = gender
    if "rank" in df.columns:
        rank = pd.to_numeric(df["rank"], errors="coerce")
        bad = rank.isna() | (rank != rank.round())
        if bad.any():
            row = bad.idxmax()
            raise DataError(f"rank {shown(df.at[row, 'rank'])} is not an integer", file=path,
                            row=row, column="rank")
        repeated = pd.Series(list(zip(df["gender"], rank, strict=True)),
                             index=df.index).duplicated()
        if repeated.any():
            row = repeated.idxmax()
            raise DataError(f"rank {df.at[row, 'rank']} repeats within {df.at[row, 'gender']}",
                            file=path, row=row, column="rank")
        df = df.assign(_rank=rank).sort_values(["_rank"], kind="stable")
    out = {g: tuple(df["name"][df["gender"] == g]) for g in GENDERS}
    counts = {g: len(v) for g, v in out.items()}
    if len(set(counts.values())) != 1:
        listed = ", ".join(f"{c} {g}" for g, c in counts.items())
        raise DataError(f"the genders need the same number of names (name i of each forms a "
                        f"pair), found {listed}", file=path, column="gender")
    return out


def read_country_names(path: Path) -> tuple[tuple[str, str, str], ...]:
    """``(country, male name, female name)`` rows from a ``country,male,female`` CSV, in file
    order. Missing columns, empty cells, a repeated country, or a name that appears twice
    anywhere in the file raise DataError naming the file, row and column."""
    path = Path(path)
    df = _read_list(path, ["country", *GENDERS])
    countries: dict[str, tuple[int, str]] = {}
    names: dict[str, tuple[int, str]] = {}
    for row, country, *picks in df.itertuples(index=True, name=None):
        _check_new(country, row, "country", countries, path, "is listed twice")
        for gender, name in zip(GENDERS, picks, strict=True):
            _check_new(name, row, gender, names, path, "already appears")
    return tuple((c, m, f) for c, m, f in df.itertuples(index=False, name=None))
