"""SentenceDebias's corpus split as bias-bench does it: Wikipedia-2.5 lines lowercased and cut
by Punkt's English model (``nltk.sent_tokenize``), offline (toxicity paper §6.2)."""

from __future__ import annotations

import pytest

from biasrepro.debias.sentdebias import split_lines
from biasrepro.errors import ConfigError
from biasrepro.representation import table4

#: Wikipedia-style paragraphs, one per line as in Wikipedia-2.5, written for this test:
#: abbreviations, initials, numbers, quotes, ellipses and identity words
WIKI = [
    "The Treaty of Paris was signed on Sept. 3, 1783. It ended the American Revolutionary "
    "War. Dr. Franklin, Mr. Adams and Mr. Jay negotiated for the U.S. delegation.",
    "St. Petersburg was founded by Peter the Great in 1703. The city served as the capital "
    "of the Russian Empire until 1918, when the government moved to Moscow.",
    "She studied chemistry at the Univ. of Vienna (c. 1890) and later worked with Prof. "
    "Hahn. Her results, e.g. the half-life measurements, were published in vol. 12 of the "
    "journal.",
    "\"The river is navigable,\" he wrote. \"Ships of 500 tons reach the port.\" The report "
    "was read aloud in Parliament on 4 Jan. 1851.",
    "The album sold 2.5 million copies in the U.K. alone. In 1999 it was certified "
    "platinum... A remastered edition followed in 2009!",
    "The muslim community of the city built its first mosque in 1910. The jewish quarter, "
    "with two synagogues, lay to the east. Christian churches dominated the skyline.",
    "He was elected president of the society in 1921; his wife, a noted actress, chaired its "
    "theatre committee. The couple had two sons and a daughter.",
    "",
]


#: what bias-bench's loader makes of WIKI: nltk 3.9.1's PunktSentenceTokenizer with the
#: English model's parameters gave exactly these (checked once where nltk was installed; the
#: two nltk tests below repeat the check wherever nltk is present)
EXPECTED = [
    "the treaty of paris was signed on sept. 3, 1783. it ended the american revolutionary war.",
    "dr. franklin, mr. adams and mr. jay negotiated for the u.s. delegation.",
    "st. petersburg was founded by peter the great in 1703. the city served as the capital of "
    "the russian empire until 1918, when the government moved to moscow.",
    "she studied chemistry at the univ.",
    "of vienna (c. 1890) and later worked with prof. hahn.",
    "her results, e.g.",
    "the half-life measurements, were published in vol.",
    "12 of the journal.",
    "\"the river is navigable,\" he wrote.",
    "\"ships of 500 tons reach the port.\"",
    "the report was read aloud in parliament on 4 jan. 1851.",
    "the album sold 2.5 million copies in the u.k. alone.",
    "in 1999 it was certified platinum... a remastered edition followed in 2009!",
    "the muslim community of the city built its first mosque in 1910. the jewish quarter, with "
    "two synagogues, lay to the east.",
    "christian churches dominated the skyline.",
    "he was elected president of the society in 1921; his wife, a noted actress, chaired its "
    "theatre committee.",
    "the couple had two sons and a daughter.",
]


def test_punkt_splits_lowercased_lines_as_bias_bench_does() -> None:
    """Lowercasing first (as bias-bench does) changes Punkt's decisions: a period before a
    lowercase word ends a sentence only where the English model knows that word as a
    sentence starter ("the", "her", "christian") and the token before is no known
    abbreviation ("sept.", "dr.", "mr.", "u.s.", "st.", "jan." are; "univ.", "e.g." and
    "vol." are not); empty lines give nothing."""
    assert split_lines(WIKI, "punkt") == EXPECTED


def test_line_split_keeps_each_line() -> None:
    assert split_lines(["  One. Two.  ", "", "Three"], "line") == ["One. Two.", "Three"]
    with pytest.raises(ValueError, match="unknown sentence split"):
        split_lines(["x"], "spacy")


def test_corpus_reader_uses_the_configured_split(tmp_path) -> None:
    path = tmp_path / "wikipedia-2.5.txt"
    path.write_text("\n".join(WIKI) + "\n", encoding="utf-8")
    lines = table4.read_corpus([path], max_sentences=None, seed=0)
    assert lines == [w.strip() for w in WIKI if w.strip()]
    assert table4.read_corpus([path], max_sentences=None, seed=0,
                                sentence_split="punkt") == EXPECTED
    with pytest.raises(ConfigError, match="sentence_split"):
        table4.read_corpus([path], max_sentences=None, seed=0, sentence_split="nltk")


def test_agrees_with_nltk_sent_tokenize_where_its_punkt_data_is_installed() -> None:
    """bias-bench's own call, line by line, where nltk and its punkt data are available."""
    nltk = pytest.importorskip("nltk")
    try:
        nltk.sent_tokenize("One. Two.")
    except LookupError:
        pytest.skip("nltk's punkt data is not installed (nltk.download cannot run offline)")
    expected = [s.lower().strip() for line in WIKI for s in nltk.sent_tokenize(line.lower())]
    assert split_lines(WIKI, "punkt") == [s for s in expected if s] == EXPECTED


def test_agrees_with_nltks_punkt_algorithm_on_the_same_model() -> None:
    """Where nltk is installed (its data need not be): NLTK's own PunktSentenceTokenizer with
    the shipped English parameters splits every line, cased and lowercased, identically."""
    nltk_punkt = pytest.importorskip("nltk.tokenize.punkt")
    import punkt

    model = punkt.load_model("english")
    params = nltk_punkt.PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    for word, flags in dict(model.ortho_context).items():
        params.ortho_context[word] = flags
    reference = nltk_punkt.PunktSentenceTokenizer(params)
    ours = punkt.PunktSentenceTokenizer(model)
    for line in WIKI:
        for text in (line, line.lower()):
            assert ours.tokenize(text) == reference.tokenize(text)
