"""Generated name lists from gender-guesser's nam_dict.txt (BiasFinder §4, §5)."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from gender_guesser.detector import Detector

from biasrepro.biasfinder import names as N
from biasrepro.errors import ConfigError, DataError


def entry(code: str, name: str, freqs: dict[str, str] | None = None, mark: str = " ") -> str:
    """One nam_dict.txt line: code, name, sort mark, 55 frequency digits, " $"."""
    digits = [" "] * len(N.COLUMNS)
    for column, digit in (freqs or {}).items():
        digits[N.COLUMNS.index(column)] = digit
    return f"{code:<2} {name:<26}{mark}{''.join(digits)} $"


# a hand-written file: comments, an equivalence, a "?" unisex name, a "1M" name, a "+"
# compound whose joined form clashes with a female name, two case variants of one name with
# different codes, a name repeated with the "+" sort mark, and CRLF line ends
SMALL = [
    "# a comment line",
    entry("M", "Alwin", {"usa": "5", "germany": "3"}),
    entry("F", "Bettina", {"usa": "4", "italy": "A"}),
    "=  Al Alwin",
    entry("?", "Kim", {"usa": "6", "korea": "D"}),
    entry("1M", "Bertil", {"sweden": "7"}),
    entry("M", "Jun+Wei", {"china": "3"}),
    entry("F", "Junwei", {"usa": "2"}),
    entry("M", "LeRoy", {"usa": "5"}),
    entry("?M", "Leroy", {"usa": "3"}),
    entry("M", "Ådne", {"norway": "5"}),
    entry("M", "Ådne", {"norway": "5"}, mark="+"),
]


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "nam_dict.txt"
    path.write_bytes(("\r\n".join(SMALL) + "\r\n").encode("utf-8"))
    return path


def test_the_country_map_covers_every_column_of_gender_guesser():
    assert set(N.COUNTRY_OF_COLUMN) == set(Detector.COUNTRIES)
    assert len(N.COUNTRIES) == 51
    assert {"the_stans", "arabia", "other_countries"} == {
        c for c, name in N.COUNTRY_OF_COLUMN.items() if name is None}


def test_read_nam_dict_parses_the_fixed_width_format(small: Path):
    table = N.read_nam_dict(small)
    assert list(table.columns[:3]) == ["line", "code", "name"]
    assert list(table.columns[3:]) == list(Detector.COUNTRIES)
    assert list(table["name"]) == ["Alwin", "Bettina", "Kim", "Bertil", "Jun+Wei", "Junwei",
                                   "LeRoy", "Leroy", "Ådne", "Ådne"]
    assert list(table["line"]) == [2, 3, 5, 6, 7, 8, 9, 10, 11, 12]
    assert list(table["code"]) == ["M", "F", "?", "1M", "M", "F", "M", "?M", "M", "M"]
    bettina = table.iloc[1]
    assert (bettina["usa"], bettina["italy"], bettina["france"]) == (4, 10, 0)
    assert table.iloc[2]["korea"] == 13
    assert table[list(Detector.COUNTRIES)].to_numpy().sum() == 5 + 3 + 4 + 10 + 6 + 13 + 7 \
        + 3 + 2 + 5 + 3 + 5 + 5


def test_single_gender_rule(small: Path):
    got = N.single_gender_names(N.read_nam_dict(small))
    # Kim is unisex, Bertil is "1M", Junwei clashes with the male compound Jun+Wei, LeRoy
    # shares its entries with "?M" Leroy; compounds are never returned
    assert got == {"male": {"Alwin", "Ådne"}, "female": {"Bettina"}}


def test_installed_file_parses_like_gender_guesser_reads_it():
    table = N.read_nam_dict(N.nam_dict_path())
    assert len(table) > 45_000
    detector = Detector()
    for name in ("Alwin", "Bettina", "Keiko", "Pekka"):
        rows = table[table["name"] == name]
        values = detector.names[name]
        assert len(values) == 1  # one gender in gender-guesser's own reading
        digits = next(iter(values.values()))
        expected = [0 if c == " " else int(c, 16) for c in digits[: len(N.COLUMNS)]]
        assert rows[list(N.COLUMNS)].max().tolist() == expected


def lines_with(bad: str) -> list[str]:
    return [SMALL[1], bad, SMALL[2]]


@pytest.mark.parametrize(("bad", "column", "message"), [
    (entry("X", "Foo"), None, "unknown gender code"),
    (entry("M", "Foo")[:60], None, "characters"),
    (entry("M", "Foo", {"japan": "E"}), "japan", "frequency 'E'"),
    (entry("M", "Foo", {"usa": "é"}), "usa", "frequency 'é'"),
    (entry("M", "") , None, "not one name"),
    (entry("M", "Foo") + " extra", None, "outside"),
])
def test_read_nam_dict_names_the_bad_line(tmp_path: Path, bad: str, column, message):
    path = tmp_path / "nam_dict.txt"
    path.write_text("\n".join(lines_with(bad)) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as e:
        N.read_nam_dict(path)
    assert (e.value.file, e.value.row, e.value.column) == (str(path), 2, column)


def test_read_nam_dict_refuses_other_bad_files(tmp_path: Path):
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(("\n".join([SMALL[1], entry("F", "Zoë")]) + "\n").encode("latin-1"))
    with pytest.raises(DataError, match="UTF-8") as e:
        N.read_nam_dict(latin1)
    assert e.value.row == 2
    comments = tmp_path / "comments.txt"
    comments.write_text("# nothing\n=  Al Alwin\n", encoding="utf-8")
    with pytest.raises(DataError, match="no name entries"):
        N.read_nam_dict(comments)
    with pytest.raises(DataError, match="not found"):
        N.read_nam_dict(tmp_path / "missing.txt")


# -- generation on a synthetic file ----------------------------------------------------------

SYLLABLES = ("ka", "lo", "mi", "ru", "te", "vo", "zi", "ne")


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    """60 male and 60 female invented names with USA frequencies 1-9, plus unisex ones."""
    made = ("".join(p).capitalize() for p in itertools.product(SYLLABLES, repeat=3))
    lines = []
    for i, name in zip(range(150), made, strict=False):
        code = "M" if i < 60 else "F" if i < 120 else "?"
        lines.append(entry(code, name, {"usa": str(1 + i % 9), "poland": str(1 + i % 5)}))
    path = tmp_path / "nam_dict.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_generate_names_draws_n_per_gender_deterministically(synthetic: Path, tmp_path: Path):
    df = N.generate_names(synthetic, n=10, seed=3, min_frequency=2)
    assert list(df.columns) == ["gender", "rank", "name"]
    for gender in N.GENDERS:
        part = df[df["gender"] == gender]
        assert list(part["rank"]) == list(range(10))
    assert list(df["gender"]) == ["male"] * 10 + ["female"] * 10
    table = N.read_nam_dict(synthetic).set_index("name")
    freq = table.loc[df["name"], "usa"]
    assert (freq >= 2).all()
    for gender in N.GENDERS:  # most frequent first within a gender
        f = table.loc[df.loc[df["gender"] == gender, "name"], "usa"].to_numpy()
        assert (f[:-1] >= f[1:]).all()
    header = N.names_header(n=10, seed=3, min_frequency=2, country="USA", source=synthetic)
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    N.write_names(df, first, header=header)
    N.write_names(N.generate_names(synthetic, n=10, seed=3, min_frequency=2), second,
                  header=header)
    assert first.read_bytes() == second.read_bytes()
    assert f"Source: {synthetic} (a file in the format of" in first.read_text(encoding="utf-8")
    other = N.generate_names(synthetic, n=10, seed=4, min_frequency=2)
    assert set(other["name"]) != set(df["name"])


def test_generate_names_refuses_what_it_cannot_do(synthetic: Path):
    with pytest.raises(ConfigError, match="biasfinder.names.n") as e:
        N.generate_names(synthetic, n=55, seed=0, min_frequency=2)
    assert "male names wanted" in str(e.value)
    with pytest.raises(ConfigError, match="biasfinder.names.min_frequency"):
        N.generate_names(synthetic, n=5, seed=0, min_frequency=14)
    with pytest.raises(ConfigError, match="biasfinder.names.country"):
        N.generate_names(synthetic, n=5, seed=0, min_frequency=2, country="Atlantis")
    with pytest.raises(ConfigError, match="seed"):
        N.generate_names(synthetic, n=5, seed=-1, min_frequency=2)
    # any country: Poland's frequencies count too
    assert len(N.generate_names(synthetic, n=50, seed=0, min_frequency=1, country=None)) == 100


def test_country_names_need_a_unique_name_of_each_gender(small: Path, synthetic: Path):
    # in the small file only Norway has a unique male name and no country a unique pair
    with pytest.raises(ConfigError, match="biasfinder.countries.n") as e:
        N.generate_country_names(small, seed=0, min_frequency=1, n=1)
    assert "only 0" in str(e.value)
    # every synthetic name occurs in the USA and in Poland: unique to neither
    with pytest.raises(ConfigError, match="only 0"):
        N.generate_country_names(synthetic, seed=0, min_frequency=1, n=1)
    with pytest.raises(ConfigError, match="biasfinder.countries: unknown countries 'Narnia'"):
        N.generate_country_names(small, seed=0, countries=["Narnia"])


def test_spread_over_regions_is_round_robin_and_seeded():
    europe = list(N.REGIONS["Northern Europe"])
    chosen = N.spread_over_regions([*europe, "USA", "Japan"], 3, seed=0)
    assert {"USA", "Japan"} <= set(chosen) and len(set(chosen) & set(europe)) == 1
    assert chosen == sorted(chosen, key=str.casefold)
    # 4 regions hold countries, 6 wanted: every region gets one, two get a second
    pool = [*europe, *N.REGIONS["Eastern Europe"], "India", *N.REGIONS["Western Asia"]]
    picks = {seed: N.spread_over_regions(pool, 6, seed=seed) for seed in range(6)}
    for chosen in picks.values():
        per = Counter(N.REGION_OF_COUNTRY[c] for c in chosen)
        assert per["Southern Asia"] == 1 and sorted(per.values()) == [1, 1, 2, 2]
    assert picks[0] == N.spread_over_regions(pool, 6, seed=0)  # deterministic
    assert len({tuple(p) for p in picks.values()}) > 1  # and the seed matters
    with pytest.raises(ConfigError, match="7 countries wanted, only 6"):
        N.spread_over_regions(pool[:6], 7, seed=0)
    with pytest.raises(ConfigError, match="no region for Narnia"):
        N.spread_over_regions(["Narnia"], 1, seed=0)
    assert set(N.REGION_OF_COUNTRY) == set(N.COUNTRIES)  # every country has one region


def test_reserved_words_cover_pronouns_gender_nouns_and_common_words():
    reserved = N.reserved_words()
    assert {"he", "his", "her", "hers", "himself", "man", "woman", "uncle", "lady", "guy",
            "grace", "mark", "will", "may", "even", "men", "usa", "germany"} <= reserved
    assert not {"john", "mary", "keiko", "pekka"} & reserved


# -- the real file ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real() -> tuple[pd.DataFrame, pd.DataFrame]:
    path = N.nam_dict_path()
    return N.generate_names(path, seed=0), N.generate_country_names(path, seed=0)


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def test_real_names_are_clean_single_gender_names(real, detector: Detector):
    names, _ = real
    reserved = N.reserved_words()
    assert names.groupby("gender").size().to_dict() == {"male": 30, "female": 30}
    assert not set(names.loc[names["gender"] == "male", "name"].str.casefold()) & set(
        names.loc[names["gender"] == "female", "name"].str.casefold())
    for gender, name in zip(names["gender"], names["name"], strict=True):
        assert name.isascii() and name.isalpha() and len(name) >= 3
        assert name[0].isupper() and name.casefold() not in reserved
        assert set(detector.names[name]) == {gender}  # gender-guesser's reading agrees
        assert detector.get_gender(name, "usa") == gender


def test_real_country_names_are_unique_to_their_country(real, detector: Detector):
    _, countries = real
    assert len(countries) == 26
    assert list(countries["country"]) == sorted(countries["country"], key=str.casefold)
    assert {"USA", "Japan", "India", "Turkey"} <= set(countries["country"])
    cells = [*countries["male"], *countries["female"]]
    assert len({c.casefold() for c in cells}) == len(cells)  # no name twice anywhere
    for row in countries.itertuples(index=False):
        columns = {c for c, name in N.COUNTRY_OF_COLUMN.items() if name == row.country}
        for gender in N.GENDERS:
            name = getattr(row, gender)
            assert set(detector.names[name]) == {gender}
            digits = detector.names[name][gender]
            where = {N.COLUMNS[i] for i, d in enumerate(digits[: len(N.COLUMNS)]) if d != " "}
            assert where and where <= columns
            assert name.casefold() not in N.reserved_words()


def test_real_country_set_is_capped_and_spread_over_regions(real):
    """n countries of the 45 with a unique pair, as evenly over the regions as they allow;
    the names of a kept country do not depend on n."""
    _, capped = real
    everything = N.generate_country_names(N.nam_dict_path(), seed=0, n=None)
    assert len(everything) == 45  # the generator's default min_frequency, 4
    available = Counter(N.REGION_OF_COUNTRY[c] for c in everything["country"])
    kept = Counter(N.REGION_OF_COUNTRY[c] for c in capped["country"])
    assert set(kept) == set(available)  # every region with a pair is represented
    for region, k in kept.items():  # a region short of the others has nothing left
        assert all(k2 <= k + 1 for k2 in kept.values()) or k == available[region]
    europe = sum(k for r, k in kept.items() if r.endswith("Europe"))
    assert europe < 0.75 * len(capped) < sum(
        k for r, k in available.items() if r.endswith("Europe"))
    same = everything.set_index("country").loc[capped["country"]].reset_index()
    pd.testing.assert_frame_equal(same, capped.reset_index(drop=True))
    other = N.generate_country_names(N.nam_dict_path(), seed=1, n=26)
    assert len(other) == 26 and list(other["country"]) != list(capped["country"])


def test_written_lists_read_back(real, tmp_path: Path):
    names, countries = real
    path, cpath = tmp_path / "names.csv", tmp_path / "country_names.csv"
    N.write_names(names, path, header=N.names_header(n=30, seed=0, min_frequency=6,
                                                     country="USA"))
    N.write_country_names(countries, cpath, header=N.country_names_header(
        seed=0, min_frequency=4, source=N.nam_dict_path()))
    for written in (path, cpath):
        text = written.read_text(encoding="utf-8")
        assert text.startswith("# BiasFinder ")
        assert "gender-guesser 0.4.0" in text and "GNU Free Documentation License 1.2" in text
        assert "seed = 0" in text
    assert "min_frequency = 6" in path.read_text(encoding="utf-8")
    got = N.read_names(path)
    assert got == {g: tuple(names.loc[names["gender"] == g, "name"]) for g in N.GENDERS}
    assert N.read_country_names(cpath) == tuple(countries.itertuples(index=False, name=None))


# -- reading user-supplied lists ------------------------------------------------------------

@pytest.mark.parametrize(("text", "row", "column", "message"), [
    ("gender,nom\nmale,Tom\n", None, "name", "missing required column"),
    ("gender,name\nmale,Tom\nfemale,\n", 2, "name", "empty"),
    ("gender,name\nmale,Tom\nfemale,Ann\nmale,tom\nfemale,Eve\n", 3, "name", "listed twice"),
    ("# list\ngender,name\nmale,Tom\nfemale,TOM\n", 2, "name", "also listed as male"),
    ("gender,name\nmale,Tom\nwoman,Ann\n", 2, "gender", "unknown gender"),
    ("gender,name\nmale,Tom\nmale,Sam\nfemale,Ann\n", None, "gender", "same number"),
    ("gender,rank,name\nmale,0,Tom\nfemale,x,Ann\n", 2, "rank", "not an integer"),
    # the value as written, not a NumPy repr
    ("gender,rank,name\nmale,0,Tom\nfemale,1.5,Ann\n", 2, "rank", r"rank '?1\.5'? is not an"),
    ("gender,rank,name\nmale,0,Tom\nmale,0,Sam\nfemale,0,Ann\nfemale,1,Eve\n", 2, "rank",
     "repeats"),
    ("gender,name\n", None, None, "no data rows"),
])
def test_read_names_refuses_bad_lists(tmp_path: Path, text: str, row, column, message):
    path = tmp_path / "names.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message) as e:
        N.read_names(path)
    assert (e.value.file, e.value.row, e.value.column) == (str(path), row, column)


def test_read_names_orders_by_rank_and_keeps_names_like_nan(tmp_path: Path):
    path = tmp_path / "names.csv"
    path.write_text("# mine\ngender,rank,name\nfemale,1,Nan\nmale,1,Sam\nfemale,0,Ann\n"
                    "male,0,Tom\n", encoding="utf-8")
    assert N.read_names(path) == {"male": ("Tom", "Sam"), "female": ("Ann", "Nan")}


@pytest.mark.parametrize(("text", "row", "column", "message"), [
    ("country,male\nPeru,Juan\n", None, "female", "missing required column"),
    ("country,male,female\nPeru,Juan,\n", 1, "female", "empty"),
    ("country,male,female\nPeru,Juan,Rosa\nperu,Ivo,Eva\n", 2, "country", "listed twice"),
    ("country,male,female\nPeru,Juan,Rosa\nChile,Ivo,juan\n", 2, "female", "already appears"),
    ("country,male,female\nPeru,Juan,Juan\n", 1, "female", "already appears"),
])
def test_read_country_names_refuses_bad_lists(tmp_path: Path, text: str, row, column,
                                              message):
    path = tmp_path / "country_names.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message) as e:
        N.read_country_names(path)
    assert (e.value.file, e.value.row, e.value.column) == (str(path), row, column)
