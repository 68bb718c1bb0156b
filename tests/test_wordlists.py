"""The hand-written word lists in ``wordlists/`` and their reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from biasrepro.biasfinder import placeholders, wordlists
from biasrepro.errors import DataError

LISTS = wordlists.load()


def test_shipped_lists_have_the_papers_sizes_and_a_header() -> None:
    assert len(LISTS.gender_nouns) == 11                      # the paper's 11 pairs
    assert len(LISTS.occupations) >= 79                       # the paper's 79 occupations
    for gender in wordlists.GENDERS:
        assert set(LISTS.pronouns[gender]) == set(wordlists.PRONOUN_CASES)
    assert LISTS.pronouns["female"]["poss"] == "hers"
    assert LISTS.pronouns["female"]["obj"] == LISTS.pronouns["female"]["det"] == "her"
    for name in ("pronouns", "gender_nouns", "occupations"):
        first = (wordlists.WORDLISTS_DIR / f"{name}.csv").read_text().splitlines()[0]
        assert first.startswith("# "), name


def test_occupations_are_gender_neutral_and_their_articles_agree() -> None:
    gendered = ("man", "woman", "men", "ess", "wife", "boy", "girl", "lady")
    for article, occupation in LISTS.occupations:
        head = occupation.split()[-1]
        assert not head.endswith(gendered) or head in {"chairperson"}, occupation
        assert article == placeholders.article(occupation.split()[0]), occupation
        assert not LISTS.gender_of_noun(head)


def test_lookups_ignore_letter_case() -> None:
    assert LISTS.gender_of_pronoun("HERSELF") == "female"
    assert LISTS.gender_of_pronoun("His") == "male"
    assert LISTS.gender_of_noun("Aunt") == "female"
    assert LISTS.gender_of_noun("uncle") == "male"
    assert LISTS.gender_of_pronoun("they") is None and LISTS.gender_of_noun("actor") is None


def _copy_lists(tmp_path: Path) -> Path:
    for name in ("pronouns", "gender_nouns", "occupations"):
        src = wordlists.WORDLISTS_DIR / f"{name}.csv"
        (tmp_path / src.name).write_text(src.read_text())
    return tmp_path


@pytest.mark.parametrize(("file", "old", "new", "message"), [
    ("pronouns.csv", "female,poss,hers", "female,poss,", "row 9, column 'form'"),
    ("pronouns.csv", "male,refl,himself", "male,self,himself", "unknown case 'self'"),
    ("pronouns.csv", "female,refl,herself\n", "", r"no female pronoun for case\(s\) refl"),
    ("gender_nouns.csv", "uncle,aunt", "uncle,man", "'man' is listed as both"),
    ("gender_nouns.csv", "dad,mom", "dad,girl", "duplicate entry 'girl'"),
    ("occupations.csv", "an,engineer", "a,engineer", None),
    ("occupations.csv", "a,nurse", "the,nurse", "article must be 'a' or 'an'"),
    ("occupations.csv", "article,occupation", "article,job", "occupation"),
])
def test_bad_lists_name_the_file_row_and_column(tmp_path: Path, file: str, old: str, new: str,
                                                message: str | None) -> None:
    d = _copy_lists(tmp_path)
    text = (d / file).read_text()
    assert old in text
    (d / file).write_text(text.replace(old, new, 1))
    if message is None:          # a wrong but well-formed article is the user's choice
        assert ("a", "engineer") in wordlists.load(directory=d).occupations
        return
    with pytest.raises(DataError, match=message) as e:
        wordlists.load(directory=d)
    assert file in str(e.value)


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="word list not found"):
        wordlists.load(directory=tmp_path)
