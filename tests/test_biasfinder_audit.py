"""The template audit sheet (``biasrepro biasfinder audit``): sampling, highlights, escaping,
mutant pairs, determinism, errors, and the command line.

Templates tables are written by hand here: each original is a review and its template the same
text with one person's mentions replaced, as the template generators write them.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from fixtures.fill_lists import COUNTRIES, NAMES, OCCUPATIONS, small_wordlists

from biasrepro.biasfinder import placeholders
from biasrepro.biasfinder.audit import audit, audit_html, filled_spans, write_audit
from biasrepro.biasfinder.mutants import generate_mutants
from biasrepro.biasfinder.templates import COLUMNS
from biasrepro.biasfinder.wordlists import Wordlists
from biasrepro.cli import main
from biasrepro.errors import ConfigError, DataError

# (characteristic, original, template, original class)
GENDER = [
    ("gender", "Marta Quinn plays a retired teacher, and she is superb. Quinn carries every "
               "scene; the camera adores her.",
     "<Name> plays a retired teacher, and <pro-subj> is superb. <Name> carries every scene; "
     "the camera adores <pro-obj>.", "female"),
    ("gender", "<script>alert('x')</script> Tobias Grant is great & he knows it.",
     "<script>alert('x')</script> <Name> is great & <pro-subj> knows it.", "male"),
    ("gender", "That old man is the heart of the story. I could watch him for hours.",
     "That old <gaw> is the heart of the story. I could watch <pro-obj> for hours.", "male"),
]
OCCUPATION = [
    ("occupation", "An architect mumbles through the film; the architect's speech falls flat.",
     "<A> <occupation> mumbles through the film; the <occupation>'s speech falls flat.",
     "architect"),
]
COUNTRY = [
    ("country", "I liked Lena. Lena said she would come back.",
     "I liked <female>. <female> said she would come back.", "female"),
]


def table(rows: list[tuple[str, str, str, str]], start: int = 0) -> pd.DataFrame:
    return pd.DataFrame({
        "template_id": [f"{c}-{start + i:05d}" for i, (c, *_) in enumerate(rows)],
        "characteristic": [r[0] for r in rows],
        "doc_id": [f"{start + i:05d}" for i in range(len(rows))],
        "label": [i % 2 for i in range(len(rows))],
        "original": [r[1] for r in rows],
        "template": [r[2] for r in rows],
        "original_class": [r[3] for r in rows],
        "placeholders": [",".join(placeholders.keys(r[2])) for r in rows],
    })[list(COLUMNS)]


def many_gender(n: int) -> pd.DataFrame:
    rows = [("gender", f"Review {i}: Amara Stone was fine in it, and she smiled a lot.",
             f"Review {i}: <Name> was fine in it, and <pro-subj> smiled a lot.", "female")
            for i in range(n)]
    return table(rows, start=100)


@pytest.fixture(scope="module")
def wl() -> Wordlists:
    return small_wordlists()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Templates tables and name lists on disk, as the CLI takes them."""
    out = {"gender": tmp_path / "gender.parquet", "occupation": tmp_path / "occ.parquet",
           "country": tmp_path / "country.parquet", "many": tmp_path / "many.parquet",
           "names": tmp_path / "names.csv", "countries": tmp_path / "countries.csv"}
    table(GENDER).to_parquet(out["gender"])
    table(OCCUPATION).to_parquet(out["occupation"])
    table(COUNTRY).to_parquet(out["country"])
    many_gender(30).to_parquet(out["many"])
    out["names"].write_text("gender,name\n" + "".join(
        f"{g},{n}\n" for g in ("male", "female") for n in NAMES[g]), encoding="utf-8")
    out["countries"].write_text("country,male,female\n" + "".join(
        f"{c},{m},{f}\n" for c, m, f in COUNTRIES), encoding="utf-8")
    return out


def plain(body: str) -> str:
    """The text a browser shows for an escaped, marked-up block."""
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def marks(body: str) -> list[tuple[str, str, str]]:
    """(class, title, shown text) of each ``<mark>`` in ``body``, unescaped."""
    return [(c, html.unescape(t), html.unescape(s)) for c, t, s in
            re.findall(r'<mark class="([^"]+)" title="([^"]*)">(.*?)</mark>', body)]


def cards(page: str) -> dict[str, dict]:
    """Per template id: the original, template and mutant blocks of its card."""
    out = {}
    for tid, card in re.findall(r'<section class="card" id="([^"]+)">(.*?)</section>', page,
                                flags=re.S):
        original = re.search(r'Original review</p>(?:<p class="warn">.*?</p>)?'
                             r'<p class="text">(.*?)</p>', card, flags=re.S)
        template = re.search(r'Template</p><p class="text">(.*?)</p>', card, flags=re.S)
        mutants = re.findall(r'Mutant<span class="cls">(.*?)</span></p>'
                             r'<p class="text">(.*?)</p>', card, flags=re.S)
        out[html.unescape(tid)] = {"original": original.group(1),
                                   "template": template.group(1),
                                   "mutants": [(html.unescape(c), b) for c, b in mutants]}
    return out


def render(wl: Wordlists, *tables: pd.DataFrame, n: int = 20, seed: int = 0) -> str:
    return audit_html([(f"t{i}.parquet", t) for i, t in enumerate(tables)], wl, n=n, seed=seed)


def test_highlights_are_exactly_the_replaced_text_and_the_filled_values(wl) -> None:
    templates = pd.concat([table(GENDER), table(OCCUPATION), table(COUNTRY)],
                          ignore_index=True)
    page = render(wl, templates)
    shown = cards(page)
    mutants = generate_mutants(templates, wl)
    assert set(shown) == set(templates["template_id"])
    for row in templates.itertuples():
        card = shown[row.template_id]
        # (a) the original, character for character, marked where the placeholders sit
        assert plain(card["original"]) == row.original
        spans = placeholders.replaced_spans(row.original, row.template)
        assert [s for _, _, s in marks(card["original"])] == [
            row.original[a:b] for a, b, _ in spans]
        assert [t for _, t, _ in marks(card["original"])] == [
            f"replaced by <{w}>" for _, _, w in spans]
        # (b) the template, its placeholders marked
        assert plain(card["template"]) == row.template
        assert [s for _, _, s in marks(card["template"])] == [
            f"<{w}>" for _, _, w in placeholders.find(row.template)]
        # (c) each mutant is one of the template's mutants; its marks are the filled values
        own = mutants[mutants["template_id"] == row.template_id]
        for cls, body in card["mutants"]:
            text = plain(body)
            match = own[(own["class"] == cls) & (own["text"] == text)]
            assert len(match) == 1, (cls, text)
            values = json.loads(match["values"].item())
            assert len(marks(body)) == len(placeholders.find(row.template))
            for _, title, value in marks(body):
                key = re.fullmatch(r"<([^>]+)> = (.*)", title, flags=re.S)
                assert key and key.group(2) == value
                if key.group(1).lower() != "a":
                    assert value.lower() == values[key.group(1).lower()].lower()
    # the article highlighted as such, agreeing with the occupation after it
    occ = shown["occupation-00000"]["mutants"]
    for _, body in occ:
        first = marks(body)[:2]
        assert first[0][0] == "k-a" and first[1][0] == "k-occupation"
        assert first[0][2] == placeholders.article(first[1][2]).capitalize()


def test_review_text_is_escaped(wl) -> None:
    page = render(wl, table(GENDER))
    assert "<script>" not in page and "alert(" in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "great &amp; " in page
    # nothing external: no scripts, no links to style sheets, no URLs fetched
    assert not re.search(r"<script|<link|src=|https?://", page)


def test_two_mutants_of_different_classes_per_template(wl) -> None:
    page = render(wl, table(GENDER), table(OCCUPATION, start=10), table(COUNTRY, start=20))
    for tid, card in cards(page).items():
        classes = [c for c, _ in card["mutants"]]
        assert len(classes) == 2 and classes[0] != classes[1], tid
        if tid.startswith("gender"):
            assert classes == ["male", "female"]
        elif tid.startswith("occupation"):
            assert set(classes) <= {occ for _, occ in OCCUPATIONS}
        else:
            assert set(classes) <= {c for c, _, _ in COUNTRIES}
    # gender: counterpart names (the same position in each gender's list)
    card = cards(page)["gender-00000"]
    names = [next(v for c, _, v in marks(b) if c == "k-name") for _, b in card["mutants"]]
    assert NAMES["male"].index(names[0]) == NAMES["female"].index(names[1])


def test_characteristics_in_order_with_counts(wl) -> None:
    page = render(wl, table(COUNTRY, start=20), table(OCCUPATION, start=10), table(GENDER))
    starts = [page.index(f'<h2 id="{c}">') for c in ("gender", "occupation", "country")]
    assert starts == sorted(starts)
    assert "Gender: 3 of 3 templates" in page
    assert '<a href="#country">Country of origin</a></td><td>1</td><td>1</td>' in page
    # a characteristic absent from the inputs gets no section
    assert '<h2 id="occupation">' not in render(wl, table(GENDER))


def test_sample_is_seeded_uniform_and_all_when_fewer(wl) -> None:
    many = many_gender(30)
    first = render(wl, many, n=5, seed=1)
    assert first == render(wl, many, n=5, seed=1)
    ids = list(cards(first))
    assert len(ids) == 5 and ids == sorted(ids)
    assert "Gender: 5 of 30 templates" in first
    other = list(cards(render(wl, many, n=5, seed=2)))
    assert set(other) != set(ids)
    # n above the number of templates: every one of them
    everything = render(wl, many, n=100)
    assert list(cards(everything)) == sorted(many["template_id"])
    assert "Gender: 30 of 30 templates" in everything


def test_same_inputs_and_seed_give_the_same_bytes(files, tmp_path) -> None:
    kwargs = {"names": files["names"], "country_names": files["countries"], "n": 4}
    inputs = [files["many"], files["gender"], files["occupation"], files["country"]]
    audit(inputs, tmp_path / "a.html", seed=3, **kwargs)
    audit(inputs, tmp_path / "b.html", seed=3, **kwargs)
    audit(inputs, tmp_path / "c.html", seed=4, **kwargs)
    a = (tmp_path / "a.html").read_bytes()
    assert a == (tmp_path / "b.html").read_bytes()
    assert a != (tmp_path / "c.html").read_bytes()
    text = a.decode("utf-8")
    assert "Seed</th><td>3 " in text and str(files["names"]) in text
    assert "How to read this" in text and "One person." in text


def test_filled_spans_locate_every_value() -> None:
    template = "<A> <gaw> met <Name>; <NAME> left <pro-det> hat."
    values = {"gaw": "uncle", "name": "Omar", "pro-det": "his"}
    text, spans = filled_spans(template, values)
    assert text == placeholders.fill(template, values) == "An uncle met Omar; OMAR left his hat."
    assert [text[a:b] for a, b, _ in spans] == ["An", "uncle", "Omar", "OMAR", "his"]
    assert [w for _, _, w in spans] == ["A", "gaw", "Name", "NAME", "pro-det"]


def test_a_template_that_does_not_match_its_original_is_flagged(wl) -> None:
    bad = table(GENDER[:1])
    bad.loc[0, "original"] = "A different review altogether."
    page = render(wl, bad)
    assert "is not this text with spans replaced" in page
    assert plain(cards(page)["gender-00000"]["original"]) == "A different review altogether."


def test_missing_fill_lists_are_one_config_error(wl) -> None:
    bare = Wordlists(pronouns=wl.pronouns, gender_nouns=wl.gender_nouns,
                     occupations=wl.occupations)
    with pytest.raises(ConfigError) as e:
        render(bare, table(GENDER), table(COUNTRY, start=20))
    assert "--names" in str(e.value) and "--country-names" in str(e.value)
    # pronoun/gender-noun templates need no names
    assert list(cards(render(bare, table(GENDER[2:])))) == ["gender-00000"]


@pytest.mark.parametrize("n", [0, -1])
def test_bad_sample_size(wl, n: int) -> None:
    with pytest.raises(ConfigError, match="sample size"):
        render(wl, table(GENDER), n=n)


@pytest.mark.parametrize("case", ["no-names", "names-file-missing", "not-templates",
                                  "same-file-twice", "duplicate-ids",
                                  "unknown-characteristic"])
def test_bad_input_is_one_error_and_no_page(files, tmp_path, case: str) -> None:
    out = tmp_path / "audit.html"
    out.write_text("an earlier run's page")
    names = files["names"]
    inputs = [files["gender"]]
    if case == "no-names":
        names, error, expected = None, ConfigError, "names list"
    elif case == "names-file-missing":
        names, error, expected = tmp_path / "nope.csv", DataError, "nope.csv"
    elif case == "not-templates":
        pd.DataFrame({"id": ["x#0000"], "text": ["hi"]}).to_parquet(tmp_path / "m.parquet")
        inputs, error, expected = [tmp_path / "m.parquet"], DataError, "m.parquet"
    elif case == "same-file-twice":
        inputs, error, expected = [files["gender"], files["gender"]], DataError, "given twice"
    elif case == "duplicate-ids":
        table(GENDER).to_parquet(tmp_path / "copy.parquet")
        inputs, error, expected = [files["gender"], tmp_path / "copy.parquet"], DataError, (
            "'gender-00000' appears twice")
    else:
        table(GENDER).assign(characteristic="race").to_parquet(tmp_path / "r.parquet")
        inputs, error, expected = [tmp_path / "r.parquet"], DataError, "unknown characteristic"
    with pytest.raises(error) as e:
        audit(inputs, out, names=names, country_names=files["countries"])
    assert expected in str(e.value)
    assert out.read_text() == "an earlier run's page"  # untouched
    assert not list(tmp_path.glob(".*tmp*"))


def test_write_audit_is_atomic(tmp_path) -> None:
    write_audit("<!DOCTYPE html>\n", tmp_path / "x" / "a.html")
    assert (tmp_path / "x" / "a.html").read_text() == "<!DOCTYPE html>\n"
    assert not list((tmp_path / "x").glob(".*tmp*"))


def test_cli(files, tmp_path, capsys) -> None:
    args = ["biasfinder", "audit", "--templates", str(files["many"]), str(files["gender"]),
            str(files["occupation"]), str(files["country"]), "--names", str(files["names"]),
            "--country-names", str(files["countries"]), "--n", "3"]
    assert main([*args, "--seed", "5", "--out", str(tmp_path / "seed.html")]) == 0
    # the seed defaults to the seed of --settings
    assert main([*args, "--settings", json.dumps({"seed": 5}),
                 "--out", str(tmp_path / "settings.html")]) == 0
    page = (tmp_path / "seed.html").read_bytes()
    assert page == (tmp_path / "settings.html").read_bytes()
    shown = cards(page.decode("utf-8"))
    assert sum(t.startswith("gender") for t in shown) == 3
    assert sum(t.startswith("occupation") for t in shown) == 1
    assert sum(t.startswith("country") for t in shown) == 1
    # and to 0 without either
    assert main([*args, "--out", str(tmp_path / "zero.html")]) == 0
    assert "Seed</th><td>0 " in (tmp_path / "zero.html").read_text()
    capsys.readouterr()
    # a missing fill list: one error line, exit status 2, no page
    missing = [a for a in args if a not in ("--names", str(files["names"]))]
    assert main([*missing, "--out", str(tmp_path / "none.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error: ")]
    assert len(errors) == 1 and err[-1] == errors[0] and "--names" in errors[0], err
    assert not (tmp_path / "none.html").exists()


def test_missing_template_id_is_named(files, tmp_path) -> None:
    """A null template id was a crash in the sample's mutant picking."""
    frame = pd.read_parquet(files["gender"])
    frame.loc[1, "template_id"] = None
    frame.to_parquet(files["gender"])
    with pytest.raises(DataError, match="id is missing") as e:
        audit([files["gender"]], tmp_path / "a.html", names=files["names"])
    assert (e.value.file, e.value.row, e.value.column) == (
        str(files["gender"]), 2, "template_id")
    assert not (tmp_path / "a.html").exists()
