"""Placeholder syntax, letter case, filling and article agreement."""

from __future__ import annotations

import dataclasses

import pytest

from biasrepro.biasfinder import placeholders as ph
from biasrepro.biasfinder.placeholders import Candidate, article, fill, find, keys, placeholder


def test_find_reports_positions_and_keys_as_written() -> None:
    t = "<Name> met <a> <gaw>; <PRO-SUBJ> left."
    assert find(t) == [(0, 6, "Name"), (11, 14, "a"), (15, 20, "gaw"), (22, 32, "PRO-SUBJ")]
    assert keys(t) == ("a", "gaw", "name", "pro-subj")


@pytest.mark.parametrize("text", ["<br>", "<i>", "<p>", "<nAme>", "<Pro-Subj>", "< name >",
                                  "<names>", "<pro-he>", "a <b>bold</b> claim"])
def test_html_tags_and_unknown_or_mixed_case_keys_are_not_placeholders(text: str) -> None:
    assert find(text) == []
    assert ph.PLACEHOLDER.search(text) is None


@pytest.mark.parametrize("key", ph.KEYS)
def test_every_key_matches_in_all_three_cases(key: str) -> None:
    for written in (key, key[:1].upper() + key[1:], key.upper()):
        assert find(f"x <{written}> y") == [(2, 4 + len(key), written)]


def test_fill_applies_the_letter_case_of_the_key() -> None:
    values = {"pro-subj": "he", "name": "Omar", "gaw": "uncle"}
    assert fill("<pro-subj> and <Pro-subj> and <PRO-SUBJ>", values) == "he and He and HE"
    assert fill("<name>'s film, <NAME>!", values) == "Omar's film, OMAR!"
    assert fill("The <gaw>. <Gaw> left.", values) == "The uncle. Uncle left."


@pytest.mark.parametrize(("noun", "expected"), [
    ("uncle", "Later an uncle came. An uncle left. AN UNCLE"),
    ("boy", "Later a boy came. A boy left. A BOY"),
    ("aunt", "Later an aunt came. An aunt left. AN AUNT"),
])
def test_article_agrees_with_the_filled_word(noun: str, expected: str) -> None:
    t = "Later <a> <gaw> came. <A> <gaw> left. <A> <GAW>"
    assert fill(t, {"gaw": noun}) == expected


def test_article_is_resolved_from_literal_text_after_it() -> None:
    assert fill("<a> old <gaw>", {"gaw": "boy"}) == "an old boy"
    assert fill("<a> <occupation>'s job", {"occupation": "engineer"}) == "an engineer's job"


@pytest.mark.parametrize(("word", "expected"), [
    ("uncle", "an"), ("boy", "a"), ("engineer", "an"), ("honest", "an"), ("hour", "an"),
    ("heir", "an"), ("Honorable", "an"), ("university", "a"), ("unit", "a"), ("user", "a"),
    ("European", "a"), ("one", "a"), ("one-time", "a"), ("onerous", "an"),
    ("umbrella", "an"), ("hotel", "a"), ("old-fashioned", "an"),
])
def test_article_by_sound(word: str, expected: str) -> None:
    assert article(word) == expected


def test_missing_value_raises_key_error_naming_the_placeholder() -> None:
    with pytest.raises(KeyError, match="<Pro-obj>"):
        fill("I saw <Pro-obj>.", {"pro-subj": "he"})


@pytest.mark.parametrize("template", ["the end <a>", "<a>. Then", "<a> , boy"])
def test_article_without_a_following_word_is_refused(template: str) -> None:
    with pytest.raises(ValueError, match="not followed by a word"):
        fill(template, {})


def test_text_outside_placeholders_is_untouched() -> None:
    t = "  <name>'s  odd\tspacing ,and <pro-det>  dog \u2014 ok "
    out = fill(t, {"name": "Ines", "pro-det": "her"})
    assert out == "  Ines's  odd\tspacing ,and her  dog \u2014 ok "


@pytest.mark.parametrize(("surface", "expected"), [
    ("he", "<pro-subj>"), ("He", "<Pro-subj>"), ("HE", "<PRO-SUBJ>"), ("hE", "<pro-subj>"),
])
def test_placeholder_takes_the_case_of_the_replaced_word(surface: str, expected: str) -> None:
    assert placeholder("pro-subj", surface) == expected


def test_placeholder_for_articles_and_unknown_keys() -> None:
    assert placeholder("a", "A") == "<A>"
    assert placeholder("a", "an") == "<a>"
    assert placeholder("a", "AN") == "<A>"
    with pytest.raises(ValueError, match="unknown placeholder key"):
        placeholder("pro-he", "he")


def test_candidate_is_immutable() -> None:
    c = Candidate("<name> wins", "male")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.template = "x"  # type: ignore[misc]
