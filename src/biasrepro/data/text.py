"""Text cleaning as the two papers describe it.

* Reviews (BiasFinder on IMDB): HTML tags become a space and entities are decoded. Unlike
  BiasFinder's ``preprocessText`` (``re.sub('<.*?>', '', text)``), a tag never glues the words
  on either side of it together: ``"film.<br /><br />The"`` becomes ``"film. The"``.
* Comments (toxicity paper §4.1, following Elsafoury et al. 2021): remove URLs and non-ASCII
  characters, lowercase, expand contractions, put a space between words and punctuation.

The comment cleaner runs on whole ``pandas`` Series (Civil Comments has ~2M rows). Its
regular expressions use explicit ASCII classes so they mean the same under Python's ``re``
and the RE2 engine that Arrow-backed string columns use.
"""

from __future__ import annotations

import html
import re

import contractions
import pandas as pd

#: an HTML tag: ``<br />``, ``<i>``, ``</p>``, ``<a href="...">``; "a < b" is not a tag
HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
#: a named or numeric character reference: ``&amp;``, ``&#39;``, ``&#x27;``
HTML_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);")

_URL = r"(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\.)[^ ]+"
_NON_ASCII = r"[^\x00-\x7f]+"
# ASCII punctuation except the apostrophe (possessives: "the mayor's") and the hyphen
# (compounds: "well-known"), which stay inside their words.
_PUNCTUATION = r"""([!"#$%&()*+,./:;<=>?@\[\\\]^_`{|}~])"""
_ASCII_SPACE = r"[ \t\n\r\f\v]+"


def normalize_whitespace(text: str) -> str:
    """Collapse every run of (Unicode) whitespace to one space and strip both ends."""
    return " ".join(text.split())


def clean_review(text: str) -> str:
    """A raw IMDB review as clean text: tags → a space, entities decoded, whitespace normalized.

    Tags are removed before entities are decoded, so an escaped ``&lt;b&gt;`` stays the
    literal text ``<b>``.
    """
    return normalize_whitespace(html.unescape(HTML_TAG.sub(" ", text)))


def clean_comments(texts: pd.Series) -> pd.Series:
    """Clean comment texts as the toxicity paper §4.1 lists, in its order.

    1. whitespace normalized first, so a non-breaking space still separates two words;
    2. URLs (``http://``, ``https://``, ``www.``) removed up to the next space;
    3. non-ASCII characters removed (emoji, typographic quotes) after NFKD decomposition, so
       an accented letter keeps its base letter ("café" → "cafe"), as in Elsafoury et al.'s
       cleaning code;
    4. lowercased;
    5. contractions expanded with the ``contractions`` library ("can't" → "cannot",
       "they'd've" → "they would have"; slang such as "ima" is left alone);
    6. a space put on both sides of each punctuation mark ("hi, you!" → "hi , you !"),
       except apostrophes and hyphens ("the mayor's", "well-known");
    7. whitespace normalized again.

    A text may become empty (a comment that was only a link or emoji); callers drop those.
    """
    out = texts.astype(str).map(normalize_whitespace)
    out = out.str.replace(_URL, " ", regex=True)
    out = out.str.normalize("NFKD").str.replace(_NON_ASCII, "", regex=True)
    out = out.str.lower()
    out = out.map(lambda t: contractions.fix(t, slang=False))
    out = out.str.replace(_PUNCTUATION, r" \1 ", regex=True)
    out = out.str.replace(_ASCII_SPACE, " ", regex=True).str.strip()
    return out
