"""BiasFinder's own word lists in their published formats (paper profile, `biasfinder.lists`).

Real-format checks read the copies in ../shared/realdata/biasfinder (skipped where absent) and
compare them with the sha256 and sizes the paper profile pins; the fixtures below are written
here in the same formats (header, unnamed index column, no-header occupation file), so the
parsing, conversion and error paths are checked everywhere.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, realdata

from biasrepro.biasfinder import mutants as M
from biasrepro.biasfinder import original_lists as O
from biasrepro.biasfinder import wordlists as W
from biasrepro.cli import main
from biasrepro.errors import DataError

FIXTURE = {
    "neutral-occupation.csv": "attendant\nengineer\nCEO\nconstruction worker\n"
                              "physician's assistant\nundertaker\n",
    "masculine-feminine-person.txt": "masculine,feminine\nboy,girl\ndaddy,mummy\n"
                                     "gentleman,lady\n",
    "male_names_only_USA.csv": "name\njonathan\nleroy\n",
    "female_names_only_USA.csv": "name\nbarbara\nemily\n",
    "unique_male_names_and_country.csv": ",name,country\n0,Jelander,Afghanistan\n"
                                         "1,Theoden,UK\n2,Eldridge,USA\n",
    "unique_female_names_and_country.csv": ",name,country\n0,Spogmai,Afghanistan\n"
                                           "1,Shontae,UK\n2,Lizzette,USA\n",
}


def write_fixture(d: Path, layout: str = "flat", **changed: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for role, rel in O.FILES.items():
        name = O.FILE_NAMES[role]
        path = d / (name if layout == "flat" else rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(changed.get(name, FIXTURE[name]), encoding="utf-8")
    return d


def convert(src: Path, out: Path) -> W.Wordlists:
    """Convert with the CLI, then load the result as the later steps do."""
    args = ["biasfinder", "import-lists", "--asset-dir", str(src), "--lists-out",
            str(out / "lists"), "--names-out", str(out / "names.csv"), "--countries-out",
            str(out / "countries.csv")]
    assert main(args) == 0
    return W.load(names=out / "names.csv", country_names=out / "countries.csv",
                  directory=out / "lists")


@pytest.mark.parametrize("layout", ["flat", "asset"])
def test_fixture_lists_convert_in_their_formats(tmp_path: Path, layout: str) -> None:
    lists = convert(write_fixture(tmp_path / "in", layout), tmp_path / "out")
    assert lists.occupations == (("an", "attendant"), ("an", "engineer"), ("a", "CEO"),
                                 ("a", "construction worker"), ("a", "physician's assistant"),
                                 ("an", "undertaker"))
    assert lists.gender_nouns == (("boy", "girl"), ("daddy", "mummy"), ("gentleman", "lady"))
    assert lists.names == {"male": ("Jonathan", "Leroy"), "female": ("Barbara", "Emily")}
    assert lists.country_names == (("Afghanistan", "Jelander", "Spogmai"),
                                   ("UK", "Theoden", "Shontae"), ("USA", "Eldridge", "Lizzette"))
    assert lists.pronouns == W.read_pronouns(W.WORDLISTS_DIR / "pronouns.csv")
    assert lists.gender_of_noun("Mummy") == "female"
    # each converted file names its source file and that file's sha256
    head = (tmp_path / "out" / "lists" / "occupations.csv").read_text(encoding="utf-8")
    digest = hashlib.sha256(FIXTURE["neutral-occupation.csv"].encode()).hexdigest()
    assert f"neutral-occupation.csv, sha256 {digest}" in head


def test_converted_lists_fill_mutants(tmp_path: Path) -> None:
    """Occupation fillers as written with agreeing articles; one name per country."""
    lists = convert(write_fixture(tmp_path / "in"), tmp_path / "out")
    templates = pd.DataFrame({
        "template_id": ["occupation-1", "country-2"], "characteristic": ["occupation", "country"],
        "label": [1, 0], "template": ["She hired <a> <occupation>.", "<Male> left home."],
        "original_class": ["engineer", "male"]})
    out = M.generate_mutants(templates, lists)
    occ = out[out["characteristic"] == "occupation"]
    assert occ["text"].tolist() == [
        "She hired an attendant.", "She hired an engineer.", "She hired a CEO.",
        "She hired a construction worker.", "She hired a physician's assistant.",
        "She hired an undertaker."]
    assert out.loc[out["characteristic"] == "country", "class"].tolist() == [
        "Afghanistan", "UK", "USA"]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("male_names_only_USA.csv", "Name\njonathan\n", "expected the header name"),
    ("female_names_only_USA.csv", "name\nbarbara\n", "2 male but 1 female names"),
    ("masculine-feminine-person.txt", "male,female\nboy,girl\n",
     "expected the header masculine,feminine"),
    ("masculine-feminine-person.txt", "masculine,feminine\nboy,girl\nboy,lady\n",
     "'boy' repeats row 1"),
    ("neutral-occupation.csv", "attendant\nengineer,ceo\n", "2 fields, expected one"),
    ("neutral-occupation.csv", "Attendant\nattendant\n", "'attendant' repeats row 1"),
    ("unique_female_names_and_country.csv", ",name,country\n0,Spogmai,Afghanistan\n"
     "1,Shontae,UK\n", "country 'USA' has no name in unique_female"),
    ("unique_male_names_and_country.csv", "name,country\nJelander,Afghanistan\n",
     "expected the header ,name,country"),
])
def test_malformed_lists_are_refused(tmp_path: Path, name: str, text: str,
                                     message: str) -> None:
    src = write_fixture(tmp_path / "in", **{name: text})
    with pytest.raises(DataError, match=message):
        O.read_all(O.locate(src))


def test_missing_or_foreign_files_are_named(tmp_path: Path) -> None:
    src = write_fixture(tmp_path / "in")
    (src / "neutral-occupation.csv").unlink()
    with pytest.raises(DataError, match="neutral-occupation.csv not found"):
        O.locate(src)
    with pytest.raises(DataError, match="missing: neutral-occupation.csv"):
        O.by_name(src.iterdir())
    with pytest.raises(DataError, match="not one of BiasFinder's word lists"):
        O.by_name([*src.iterdir(), tmp_path / "occupations.csv"])


# -- the real files ---------------------------------------------------------------------------


V1 = "131797020b88086d4ae13a30256dd9e62aec52ee"
D6 = "d6d54246f35b866c20f259e55365d1dbf2d1ab11"


def _lists(name: str) -> list[dict]:
    data = yaml.safe_load((REPO / "config" / name).read_text(encoding="utf-8"))
    return data["datasets"]["biasfinder_lists"]["files"]


def test_the_paper_profile_pins_v1s_lists_and_the_overlay_d6d5424s() -> None:
    """The paper profile downloads the v1 code's six files (commit 1317970, whose names are
    drawn); config/biasfinder_lists_d6d5424.yaml the TSE version's (USA names)."""
    v1 = _lists("paper.yaml")
    rel = {**O.FILES, **O.V1_FILES}
    assert sorted(f["name"] for f in v1) == sorted(
        [*(O.FILE_NAMES[r] for r in O.FILES if r not in O.V1_FILES),
         *(Path(p).name for p in O.V1_FILES.values())])
    by_name = {Path(p).name: p for p in rel.values()}
    for f in v1:
        assert f["url"] == (f"https://raw.githubusercontent.com/soarsmu/BiasFinder/{V1}/asset/"
                            + by_name[f["name"]])
        assert len(f["sha256"]) == 64 and f["size"] > 0
    d6 = _lists("biasfinder_lists_d6d5424.yaml")
    assert sorted(f["name"] for f in d6) == sorted(O.FILE_NAMES.values())
    # the occupations and gender nouns did not change between the two commits
    same = {f["name"]: f["sha256"] for f in d6}
    for f in v1:
        if f["name"] in ("neutral-occupation.csv", "masculine-feminine-person.txt"):
            assert f["sha256"] == same[f["name"]]
        elif f["name"].startswith("unique_"):
            assert f["sha256"] != same[f["name"]]  # 27 countries in v1, 25 at d6d5424
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text(encoding="utf-8"))
    assert paper["biasfinder"]["lists"] == "original"
    assert paper["biasfinder"]["occupation"] == {"templates": "first", "film_credits": "keep"}


def test_real_lists_match_the_d6d5424_pins() -> None:
    """The d6d5424 overlay downloads exactly the shared copies: every pinned size and sha256
    is that of the copy, and every URL names the file at that commit."""
    src = realdata("biasfinder")
    files = _lists("biasfinder_lists_d6d5424.yaml")
    role_of = {n: r for r, n in O.FILE_NAMES.items()}
    for f in files:
        data = (src / f["name"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (f["size"], f["sha256"])
        assert f["url"] == (f"https://raw.githubusercontent.com/soarsmu/BiasFinder/{D6}/asset/"
                            + O.FILES[role_of[f["name"]]])


def _all_country(d: Path, names: list[str]) -> None:
    """v1's name files in their format: header ``name``, lower case, one per line."""
    for gender in ("male", "female"):
        (d / f"{gender}_names_only_USA.csv").unlink(missing_ok=True)
        body = "".join(f"{n}{gender[0]}\n" for n in names)
        (d / f"{gender}_names_only.csv").write_text("name\n" + body, encoding="utf-8")


def test_v1_names_are_drawn_as_the_v1_code_drew_them(tmp_path: Path) -> None:
    """The v1 code (codes/gender/utils.py at 1317970) read the all-country file with pandas,
    shuffled it with sample(frac=1, random_state=123) and filled the first 30 title-cased:
    the same selection, and a pinned one (a pandas or NumPy change to the shuffle would change
    which names the paper profile fills)."""
    src = write_fixture(tmp_path / "in")
    _all_country(src, [f"nm{i:04d}" for i in range(500)])
    files = O.locate(src)
    assert files["male_names"].name == "male_names_only.csv"
    names = O.read_all(files)["names"]
    for gender in ("male", "female"):
        gc = pd.read_csv(src / f"{gender}_names_only.csv")  # the v1 code's own lines
        gc = gc.sample(frac=1, random_state=123)
        expected = [n.title() for n in gc["name"].tolist()[:30]]
        assert list(names[gender]) == expected
    assert names["male"][:3] == ("Nm0229M", "Nm0337M", "Nm0327M")
    loaded = convert(src, tmp_path / "out")
    assert list(loaded.names["male"][:3]) == ["Nm0229M", "Nm0337M", "Nm0327M"]
    header = (tmp_path / "out" / "names.csv").read_text().splitlines()[0]
    assert "random_state=123), the first 30" in header


def test_v1_and_d6d5424_name_files_are_not_mixed_and_the_usa_lists_win(tmp_path: Path) -> None:
    src = write_fixture(tmp_path / "in")
    _all_country(src, [f"nm{i:04d}" for i in range(40)])
    (src / "female_names_only_USA.csv").write_text(FIXTURE["female_names_only_USA.csv"])
    with pytest.raises(DataError, match="different versions"):
        O.read_all(O.by_name(p for p in src.iterdir() if p.name != "male_names_only_USA.csv"
                             and p.name != "female_names_only.csv"))
    # d6d5424's asset/ keeps an all-country file beside the USA lists: the USA lists are used
    asset = write_fixture(tmp_path / "asset", layout="asset")
    (asset / O.V1_FILES["male_names"]).write_text("name\nzzz\n", encoding="utf-8")
    assert O.locate(asset)["male_names"].name == "male_names_only_USA.csv"
    few = write_fixture(tmp_path / "few")
    _all_country(few, ["a", "b"])
    with pytest.raises(DataError, match="2 names, fewer than the 30 drawn"):
        O.read_all(O.locate(few))


def test_real_lists_parse_as_the_paper_describes(tmp_path: Path) -> None:
    lists = O.read_all(O.locate(realdata("biasfinder")))
    occupations = [o for _, o in lists["occupations"]]
    assert len(occupations) == 79 and occupations[:3] == ["attendant", "cashier", "teacher"]
    assert {"construction worker", "air traffic controller", "physician's assistant",
            "CEO"} <= set(occupations)
    articles = dict((o, a) for a, o in lists["occupations"])
    assert (articles["engineer"], articles["teacher"], articles["CEO"],
            articles["air traffic controller"]) == ("an", "a", "a", "an")
    assert len(lists["gender_nouns"]) == 11 and ("daddy", "mummy") in lists["gender_nouns"]
    names = lists["names"]
    assert (len(names["male"]), len(names["female"])) == (30, 30)
    assert (names["male"][0], names["female"][-1]) == ("Jonathan", "Emily")
    countries = [c for c, _, _ in lists["country_names"]]
    # the paper's text says 26 countries; the files at this commit hold 25 (the conference
    # version's 27 less Italy and Spain)
    assert len(countries) == 25 and not {"Italy", "Spain"} & set(countries)
    assert ("USA", "Eldridge", "Lizzette") in lists["country_names"]
    # converted and loaded as the workflow does
    out = tmp_path / "out"
    loaded = convert(realdata("biasfinder"), out)
    assert len(loaded.occupations) == 79 and len(loaded.country_names) == 25
    assert json.dumps(loaded.names["male"][:2]) == '["Jonathan", "Harry"]'


def test_pronoun_table_is_read_and_written_as_plain_csv(tmp_path: Path) -> None:
    """``--pronouns`` goes through the reader (gzip, byte-order mark) and is written as the
    project's plain CSV, not copied byte for byte."""
    import gzip

    src = write_fixture(tmp_path / "asset")
    plain = (REPO / "wordlists" / "pronouns.csv").read_bytes()
    (tmp_path / "pronouns.csv").write_bytes(gzip.compress(b"\xef\xbb\xbf" + plain))
    args = ["biasfinder", "import-lists", "--asset-dir", str(src), "--pronouns",
            str(tmp_path / "pronouns.csv"), "--lists-out", str(tmp_path / "out"),
            "--names-out", str(tmp_path / "n.csv"), "--countries-out", str(tmp_path / "c.csv")]
    assert main(args) == 0
    written = (tmp_path / "out" / "pronouns.csv").read_text(encoding="utf-8")
    assert written.startswith("# Pronouns by grammatical case") and "\r" not in written
    assert W.read_pronouns(tmp_path / "out" / "pronouns.csv") == W.read_pronouns(
        REPO / "wordlists" / "pronouns.csv")
