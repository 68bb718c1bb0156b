"""Cleaning as the papers describe it (BiasFinder IMDB; toxicity paper §4.1)."""

import pandas as pd
import pytest

from biasrepro.data.text import clean_comments, clean_review, normalize_whitespace


def test_review_tags_become_a_space_never_gluing_words():
    assert clean_review("A fine film.<br /><br />The end.") == "A fine film. The end."
    assert clean_review("Loud<br/>and<BR>long") == "Loud and long"
    assert clean_review("<i>Tense</i>, <b>taut</b> work") == "Tense , taut work"


def test_review_entities_are_decoded_after_tags_are_removed():
    assert clean_review("Tom &amp; Jerry &quot;live&quot;") == 'Tom & Jerry "live"'
    # an escaped tag is text, not markup: it survives as literal characters
    assert clean_review("write &lt;br&gt; to break") == "write <br> to break"


def test_review_comparison_signs_are_not_tags():
    assert clean_review("a rating < 3 and > 1") == "a rating < 3 and > 1"
    assert clean_review("I <3 this film") == "I <3 this film"


def test_review_keeps_case_punctuation_and_unicode():
    assert clean_review("  Zoë's   café,\tSUPERB!\n") == "Zoë's café, SUPERB!"


def test_normalize_whitespace_handles_unicode_spaces():
    assert normalize_whitespace("a\u00a0b\u2003 c\n") == "a b c"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("See https://example.org/x?y=1 now", "see now"),
        ("see www.example.org/page, then", "see then"),
        ("It's HTTP://EXAMPLE.ORG ok", "it is ok"),
        ("I can't and you won't", "i cannot and you will not"),
        ("They'd've gone", "they would have gone"),
        ("the mayor's plan", "the mayor's plan"),
        ("Wait,what?!", "wait , what ? !"),
        ('He said "no"; fine.', 'he said " no " ; fine .'),
        ("a well-known fact", "a well-known fact"),
        ("Café naïve", "cafe naive"),
        ("emoji 😀 gone", "emoji gone"),
        ("two\u00a0words", "two words"),
        ("  lots \t of\n\nspace ", "lots of space"),
        ("https://only.a/link", ""),
    ],
)
def test_comment_cleaning_steps(raw, clean):
    assert clean_comments(pd.Series([raw])).tolist() == [clean]


def test_comment_cleaning_is_the_same_for_object_and_arrow_strings():
    texts = ["It's Zoë's café, isn't it?", "www.x.org/y Hi!", "a\u00a0b — c"]
    as_object = clean_comments(pd.Series(texts, dtype=object))
    as_arrow = clean_comments(pd.Series(texts, dtype="string[pyarrow]"))
    assert as_object.tolist() == as_arrow.tolist()
    assert as_object.tolist() == ["it is zoe's cafe , is not it ?", "hi !", "a b c"]
