"""A pronoun resolver learned from public gold coreference data (GAP and LitBank).

The rule backend (:mod:`biasrepro.nlp.coref`) ranks a pronoun's antecedents by hand-set
salience. This module learns the ranking instead: for a gendered third-person pronoun and a
candidate person mention, :func:`pair_features` describes the pair on the spaCy parse, and a
gradient-boosted tree classifier (scikit-learn's ``HistGradientBoostingClassifier``) gives the
probability that the candidate is the pronoun's antecedent. The features:

* distance: sentences and tokens between them, whether the candidate comes after the pronoun
  (cataphora), whether it is the closest candidate;
* grammatical role: the dependency label of each, syntactic parallelism (both subjects, both
  objects, both possessives), whether the candidate is its main clause's subject or the
  subject of the verb the pronoun hangs from;
* Hobbs' tree search in the pronoun's sentence (:func:`biasrepro.nlp.syntax.hobbs_rank`) and
  binding (an object pronoun never refers to its clause's subject);
* agreement: the candidate's first-name gender (gender-guesser) against the pronoun's;
* what the candidate is: a proper noun, a PERSON entity, a place, nation, group or firm
  (the parser's entity type), a known first name;
* salience: how often the candidate's name recurs, whether this is its first mention, where
  in the text it first appears, and how many other persons, same-gender persons and
  same-gender pronouns stand between the two;
* the pair's differences from the best competing candidate on the same pronoun.

Training data (:func:`train`): GAP's development split (Webster et al., TACL 2018; two
labelled candidate names per pronoun) and LitBank's coreference (Bamman et al., LREC 2020;
every gendered pronoun with a person chain against the proper-name mentions of its own and
the three sentences before, persons and places alike, labelled by chain). GAP's validation
split is kept for scoring and its test split is never read. Training is deterministic: the
classifier is seeded and early stopping is off, so the same data give a byte-identical model.

The resolver is an artifact (:meth:`Resolver.save`): ``resolver.pkl`` and ``card.json`` with
the data files' sha256, the features, the settings, the scikit-learn and spaCy versions and
the scores; :meth:`Resolver.load` refuses a model whose bytes do not match its card or that
was made by another scikit-learn version.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import pickle
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from biasrepro import layout
from biasrepro.errors import DataError, ModelError
from biasrepro.nlp.syntax import clause_mates, hobbs_rank, name_gender

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

    from biasrepro.nlp.gap import GapExample, GapScores
    from biasrepro.nlp.litbank import LitbankDoc

log = logging.getLogger(__name__)

#: the artifact's format; a change of features or file layout raises it
VERSION = 1
MODEL_FILE, CARD_FILE = layout.RESOLVER_FILES
PRONOUN_GENDER = {**dict.fromkeys(("he", "him", "his", "himself"), "male"),
                  **dict.fromkeys(("she", "her", "hers", "herself"), "female")}
SUBJECTS = frozenset({"nsubj", "nsubjpass"})
OBJECTS = frozenset({"dobj", "iobj", "dative"})
#: dependency labels of the candidate's head, and of the pronoun, one-hot
CANDIDATE_DEPS = ("nsubj", "nsubjpass", "dobj", "pobj", "poss", "appos", "attr", "compound",
                  "conj", "ROOT")
PRONOUN_DEPS = ("nsubj", "nsubjpass", "dobj", "pobj", "poss")
#: entity types of a candidate that names no person (a place, a nation, a group, a firm)
PLACE_OR_GROUP = frozenset({"GPE", "LOC", "FAC", "NORP", "ORG"})
#: features compared with the best competing candidate of the same pronoun
RELATIVE = ("tok_dist", "sent_dist", "name_count", "main_subject", "parallel", "hobbs_level",
            "first_position")
#: LitBank candidates: proper-name person mentions this many sentences back at most
LITBANK_WINDOW = 3
#: the decision threshold is chosen from these by cross-validation on GAP development
THRESHOLDS = tuple(round(0.2 + 0.05 * k, 2) for k in range(9))


def _role(dep: str) -> str:
    if dep in SUBJECTS:
        return "subject"
    if dep in OBJECTS:
        return "object"
    return {"poss": "possessive", "pobj": "pobj"}.get(dep, "other")


class DocInfo:
    """What every pair of one document shares: sentence numbers, PERSON entities, name
    counts (computed once per document)."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self.sentence = [0] * len(doc)
        for k, sent in enumerate(doc.sents):
            self.sentence[sent.start:sent.end] = [k] * len(sent)
        self.persons = [(e.start, e.end, name_gender(e[0].text)) for e in doc.ents
                        if e.label_ == "PERSON"]
        self.counts: dict[str, int] = {}
        self.first: dict[str, int] = {}
        for tok in doc:
            self.counts[tok.text] = self.counts.get(tok.text, 0) + 1
            self.first.setdefault(tok.text, tok.i)
        self.pronouns = [(t.i, PRONOUN_GENDER.get(t.lower_)) for t in doc
                         if t.lower_ in PRONOUN_GENDER]


def pair_features(info: DocInfo, candidate: Span, pronoun: Token) -> dict[str, float]:
    """The features of (``candidate``, ``pronoun``) without the relative ones."""
    doc, c = info.doc, candidate.root
    gender = PRONOUN_GENDER.get(pronoun.lower_)
    f: dict[str, float] = {}
    sd = info.sentence[pronoun.i] - info.sentence[c.i]
    f["sent_dist"] = float(max(-3, min(sd, 6)))
    f["same_sentence"] = float(sd == 0)
    f["tok_dist"] = (pronoun.i - c.i) / 20
    f["cataphora"] = float(candidate.start > pronoun.i)
    for dep in CANDIDATE_DEPS:
        f[f"c_{dep}"] = float(c.dep_ == dep)
    for dep in PRONOUN_DEPS:
        f[f"p_{dep}"] = float(pronoun.dep_ == dep)
    f["parallel"] = float(_role(c.dep_) == _role(pronoun.dep_) != "other")
    f["main_subject"] = float(c.dep_ in SUBJECTS and c.head.dep_ == "ROOT")
    f["p_main_subject"] = float(pronoun.dep_ in SUBJECTS and pronoun.head.dep_ == "ROOT")
    f["sentence_initial"] = float(candidate.start == candidate.sent.start)
    named = name_gender(candidate[0].text)
    f["gender_match"] = float(named is not None and named == gender)
    f["gender_mismatch"] = float(named is not None and named != gender)
    f["first_name_known"] = float(named is not None)
    f["ent_person"] = float(c.ent_type_ == "PERSON")
    f["ent_place_or_group"] = float(c.ent_type_ in PLACE_OR_GROUP)
    f["ent_other"] = float(c.ent_type_ not in ("", "PERSON", *PLACE_OR_GROUP))
    f["proper"] = float(c.pos_ == "PROPN")
    last = candidate[-1].text
    f["name_count"] = float(min(info.counts.get(last, 1), 6))
    first = info.first.get(last, candidate[-1].i)
    f["first_mention"] = float(first == candidate[-1].i)
    f["first_position"] = first / max(len(doc), 1)
    lo, hi = sorted((candidate.end, pronoun.i))
    between = [(s, e, g) for s, e, g in info.persons if lo <= s and e <= hi]
    f["persons_between"] = float(min(len(between), 5))
    f["same_gender_between"] = float(min(sum(g == gender for _, _, g in between), 4))
    if sd == 0 and candidate.start < pronoun.i:
        level, depth, _ = hobbs_rank(c, pronoun)
        f["hobbs_level"], f["hobbs_depth"] = float(min(level, 8)), float(min(depth, 8))
    else:
        f["hobbs_level"] = f["hobbs_depth"] = -1.0
    f["binding"] = float(sd == 0 and clause_mates(c, pronoun))
    f["parenthesised"] = float(
        any(t.text == "(" for t in doc[max(0, candidate.start - 3):candidate.start])
        and any(t.text == ")" for t in doc[candidate.end:candidate.end + 3]))
    f["p_possessive"] = float(pronoun.lower_ in ("his", "her") and pronoun.dep_ == "poss")
    f["p_reflexive"] = float(pronoun.lower_ in ("himself", "herself"))
    f["pronoun_between"] = float(any(lo <= i < hi and g == gender for i, g in info.pronouns))
    f["first_sentence"] = float(info.sentence[c.i] == 0)
    f["possessor"] = float(c.dep_ == "poss" or (candidate.end < len(doc)
                                                and doc[candidate.end].tag_ == "POS"))
    f["length"] = float(len(candidate))
    f["subject_of_pronoun_head"] = float(
        any(ch.i == c.i and ch.dep_ in SUBJECTS for ch in pronoun.head.children))
    return f


def with_relative(rows: Sequence[dict[str, float]]) -> list[dict[str, float]]:
    """Each candidate's features plus its differences from the best other candidate of the
    same pronoun (the largest value of each :data:`RELATIVE` feature; itself when alone)."""
    out = []
    for k, row in enumerate(rows):
        others = [o for j, o in enumerate(rows) if j != k]
        full = dict(row)
        for key in RELATIVE:
            full[f"rel_{key}"] = row[key] - (max(o[key] for o in others) if others
                                             else row[key])
        full["closest"] = float(all(abs(row["tok_dist"]) < abs(o["tok_dist"])
                                    for o in others))
        out.append(full)
    return out


FEATURES: tuple[str, ...] = ()  # filled below from a sample pair: one home, the function


@dataclass
class Pairs:
    """Training or scoring pairs: one row per (pronoun, candidate)."""

    rows: list[dict[str, float]] = field(default_factory=list)
    labels: list[bool] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)  # one per pronoun
    genders: list[str] = field(default_factory=list)  # the pronoun's: male/female

    def add(self, rows: list[dict[str, float]], labels: Sequence[bool], group: str,
            gender: str) -> None:
        self.rows += rows
        self.labels += list(labels)
        self.groups += [group] * len(rows)
        self.genders += [gender] * len(rows)

    def matrix(self) -> np.ndarray:
        return np.array([[r[name] for name in feature_names()] for r in self.rows],
                        dtype=np.float64).reshape(len(self.rows), len(feature_names()))


def feature_names() -> tuple[str, ...]:
    """The features in the model's column order."""
    return FEATURES


def _span(doc: Doc, start: int, end: int, *, what: str, example: str) -> Span:
    span = doc.char_span(start, end, alignment_mode="expand")
    if span is None or len(span) == 0:
        raise DataError(f"{example}: the {what} at characters {start}-{end} covers no token")
    return span


def gap_pairs(examples: Sequence[GapExample], docs: Sequence[Doc]) -> Pairs:
    """Two rows per GAP example (A, then B), labelled by A-coref and B-coref."""
    pairs = Pairs()
    for ex, doc in zip(examples, docs, strict=True):
        info = DocInfo(doc)
        pronoun = _span(doc, *ex.pronoun_span, what="pronoun", example=ex.id)[0]
        a = _span(doc, *ex.a_span, what="name A", example=ex.id)
        b = _span(doc, *ex.b_span, what="name B", example=ex.id)
        rows = with_relative([pair_features(info, a, pronoun), pair_features(info, b, pronoun)])
        pairs.add(rows, [ex.a_coref, ex.b_coref], ex.id,
                  PRONOUN_GENDER.get(pronoun.lower_, "male"))
    return pairs


def litbank_pairs(documents: Sequence[LitbankDoc], docs: Sequence[Doc],
                  window: int = LITBANK_WINDOW) -> Pairs:
    """For each gendered pronoun mention in a person chain, its candidates: the proper-name
    mentions (persons, and places, organisations, vehicles, which are never a gendered
    pronoun's antecedent) within ``window`` sentences before it (or later in its own
    sentence), labelled by whether they are in its chain; pronouns with fewer than two
    candidates are left out (nothing to choose)."""
    pairs = Pairs()
    for lb, doc in zip(documents, docs, strict=True):
        info = DocInfo(doc)
        names = [m for m in lb.mentions if m.kind == "PROP"]
        for m in lb.mentions:
            gender = PRONOUN_GENDER.get(doc[m.start].lower_)
            if m.kind != "PRON" or m.end - m.start != 1 or gender is None:
                continue
            chain = lb.chains.get(m.id)
            if chain is None:
                continue
            pronoun = doc[m.start]
            candidates = [n for n in names
                          if 0 <= info.sentence[m.start] - info.sentence[n.start] <= window
                          and not n.start <= m.start < n.end]
            if len(candidates) < 2:
                continue
            rows = with_relative([pair_features(info, doc[n.start:n.end], pronoun)
                                  for n in candidates])
            pairs.add(rows, [lb.chains.get(n.id) == chain for n in candidates],
                      f"{lb.name}:{m.id}", gender)
    return pairs


def _classifier(seed: int) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, max_leaf_nodes=15,
                                          early_stopping=False, random_state=seed)


def decide(probabilities: np.ndarray, threshold: float) -> list[tuple[bool, bool]]:
    """GAP decisions from the A/B probabilities (rows in pairs): a name is the antecedent
    when its probability reaches ``threshold`` and is the larger of the two (A on a tie);
    at most one name per pronoun, as in GAP's gold labels."""
    out = []
    for pa, pb in zip(probabilities[0::2], probabilities[1::2], strict=True):
        out.append((bool(pa >= threshold and pa >= pb), bool(pb >= threshold and pb > pa)))
    return out


def _fit(gap: Pairs, litbank: Pairs | None, litbank_weight: float, seed: int) -> Any:
    x = gap.matrix()
    y = np.array(gap.labels, dtype=bool)
    weight = np.ones(len(y))
    if litbank is not None and litbank.rows and litbank_weight > 0:
        x = np.vstack([x, litbank.matrix()])
        y = np.concatenate([y, np.array(litbank.labels, dtype=bool)])
        weight = np.concatenate([weight, np.full(len(litbank.rows), litbank_weight)])
    if len(set(y.tolist())) < 2:
        raise DataError("the training pairs hold one label only: nothing to learn")
    return _classifier(seed).fit(x, y, sample_weight=weight)


def _subset(pairs: Pairs, groups: set[str]) -> Pairs:
    out = Pairs()
    for k, g in enumerate(pairs.groups):
        if g in groups:
            out.rows.append(pairs.rows[k])
            out.labels.append(pairs.labels[k])
            out.groups.append(g)
            out.genders.append(pairs.genders[k])
    return out


def cross_validate(examples: Sequence[GapExample], gap: Pairs, litbank: Pairs | None, *,
                   folds: int, litbank_weight: float, seed: int
                   ) -> tuple[float, dict[str, GapScores]]:
    """``folds``-fold cross-validation on the GAP examples (LitBank in every training fold);
    the threshold of :data:`THRESHOLDS` with the best overall F1 on the held-out
    predictions, and the scores at each threshold."""
    from sklearn.model_selection import KFold

    from biasrepro.nlp.gap import score

    ids = [e.id for e in examples]
    held_out = np.zeros(len(gap.rows))
    position = {g: k for k, g in enumerate(ids)}
    for train_idx, test_idx in KFold(folds, shuffle=True, random_state=seed).split(ids):
        model = _fit(_subset(gap, {ids[k] for k in train_idx}), litbank, litbank_weight, seed)
        test = _subset(gap, {ids[k] for k in test_idx})
        probabilities = model.predict_proba(test.matrix())[:, 1]
        for k, g in enumerate(test.groups[0::2]):
            held_out[2 * position[g]:2 * position[g] + 2] = probabilities[2 * k:2 * k + 2]
    scores = {str(t): score(examples, decide(held_out, t)) for t in THRESHOLDS}
    best = max(THRESHOLDS, key=lambda t: (scores[str(t)].o, -abs(t - 0.5)))
    return best, scores


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Resolver:
    """A trained pronoun–candidate classifier, its decision threshold and its card."""

    model: Any
    threshold: float
    card: dict[str, Any]

    def probabilities(self, doc: Doc, candidates: Sequence[Span], pronoun: Token,
                      info: DocInfo | None = None) -> np.ndarray:
        """P(candidate is the pronoun's antecedent) for each candidate."""
        if not candidates:
            return np.zeros(0)
        info = info or DocInfo(doc)
        rows = with_relative([pair_features(info, c, pronoun) for c in candidates])
        pairs = Pairs(rows=rows)
        return self.model.predict_proba(pairs.matrix())[:, 1]

    def pronoun_probabilities(self, doc: Doc, requests: Sequence[tuple[
            Sequence[tuple[int, int]], int]]) -> list[list[float]]:
        """For each request (candidate token ranges, pronoun token index) of one document,
        the probability of each candidate; every pair scored in one call."""
        info = DocInfo(doc)
        pairs = Pairs()
        for candidates, pronoun in requests:
            pairs.rows += with_relative([pair_features(info, doc[s:e], doc[pronoun])
                                         for s, e in candidates])
        if not pairs.rows:
            return [[] for _ in requests]
        probabilities = iter(self.model.predict_proba(pairs.matrix())[:, 1].tolist())
        return [[next(probabilities) for _ in candidates] for candidates, _ in requests]

    def predict_gap(self, examples: Sequence[GapExample], docs: Sequence[Doc]
                    ) -> list[tuple[bool, bool]]:
        """GAP decisions on the given candidate names (GAP's task as defined)."""
        pairs = gap_pairs(examples, docs)
        return decide(self.model.predict_proba(pairs.matrix())[:, 1], self.threshold)

    def predictor(self, nlp: Language, batch_size: int = 64) -> Any:
        """A ``predict(examples)`` for :func:`biasrepro.nlp.gap.evaluate`."""
        def predict(examples: Sequence[GapExample]) -> list[tuple[bool, bool]]:
            docs = list(nlp.pipe([e.text for e in examples], batch_size=batch_size))
            return self.predict_gap(examples, docs)

        return predict

    def save(self, directory: str | Path) -> None:
        """``resolver.pkl`` and ``card.json``, both or neither (the card holds the model's
        sha256)."""
        from biasrepro.io import atomic_outputs

        directory = Path(directory)
        buffer = io.BytesIO()
        pickle.dump({"version": VERSION, "model": self.model, "threshold": self.threshold,
                     "features": list(feature_names())}, buffer, protocol=4)
        data = buffer.getvalue()
        card = dict(self.card, model_sha256=hashlib.sha256(data).hexdigest())
        with atomic_outputs(directory / MODEL_FILE, directory / CARD_FILE) as (model, meta):
            model.write_bytes(data)
            meta.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        self.card = card

    @classmethod
    def load(cls, directory: str | Path) -> Resolver:
        """The resolver saved in ``directory``; a clear error when it is missing, its bytes
        do not match its card, or it was made by another format or scikit-learn version."""
        import sklearn

        directory = Path(directory)
        model_path, card_path = directory / MODEL_FILE, directory / CARD_FILE
        for path in (model_path, card_path):
            if not path.is_file():
                raise ModelError(f"{directory}: not a trained resolver ({path.name} is "
                                 "missing; train one with `biasrepro coref train`)")
        try:
            card = json.loads(card_path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ModelError(f"{card_path}: not a readable card ({e})") from None
        if not isinstance(card, dict):
            raise ModelError(f"{card_path}: not a resolver card")
        if _sha256(model_path) != card.get("model_sha256"):
            raise ModelError(f"{model_path}: its sha256 does not match {CARD_FILE}'s "
                             "model_sha256 (a changed or damaged file); train it again")
        if card.get("version") != VERSION:
            raise ModelError(f"{directory}: a resolver of format {card.get('version')}, this "
                             f"code reads format {VERSION}; train it again")
        if card.get("sklearn") != sklearn.__version__:
            raise ModelError(f"{directory}: made with scikit-learn {card.get('sklearn')}, "
                             f"this environment has {sklearn.__version__}; train it again")
        stored = pickle.loads(model_path.read_bytes())  # noqa: S301 - sha256-checked above
        if stored.get("features") != list(feature_names()):
            raise ModelError(f"{directory}: trained on other features than this code "
                             "computes; train it again")
        return cls(stored["model"], float(stored["threshold"]), card)


def from_settings(settings: dict[str, Any] | None) -> Resolver | None:
    """The resolver the config key ``biasfinder.coref.resolver`` names: None when unset,
    the workflow's (:data:`biasrepro.layout.COREF_RESOLVER`) for ``trained``, else the
    folder given."""
    coref = (settings or {}).get("biasfinder.coref") or {}
    name = coref.get("resolver") if isinstance(coref, dict) else None
    if name is None:
        return None
    return Resolver.load(layout.COREF_RESOLVER if name == layout.TRAINED_RESOLVER else name)


def parse(texts: Sequence[str], nlp: Language, batch_size: int = 64) -> list[Doc]:
    return list(nlp.pipe(texts, batch_size=batch_size))


def train(gap_file: Path, litbank_dir: Path | None, nlp: Language, *, seed: int = 0,
          litbank_weight: float = 0.3, folds: int = 5,
          validation_file: Path | None = None) -> Resolver:
    """Train on GAP development (and LitBank, each of its pairs weighted ``litbank_weight``),
    choose the threshold by ``folds``-fold cross-validation on GAP development, refit on all
    of it, and score GAP validation when given (never trained on)."""
    import sklearn
    import spacy

    from biasrepro.nlp import gap as gap_module
    from biasrepro.nlp import litbank as litbank_module

    started = time.perf_counter()
    examples = gap_module.read_gap(gap_file)
    gap = gap_pairs(examples, parse([e.text for e in examples], nlp))
    litbank = None
    data: dict[str, Any] = {"gap_development": {"file": Path(gap_file).name,
                                                "sha256": _sha256(Path(gap_file)),
                                                "examples": len(examples),
                                                "pairs": len(gap.rows)}}
    if litbank_dir is not None:
        documents = litbank_module.read_litbank(litbank_dir)
        litbank = litbank_pairs(documents, [litbank_module.to_doc(d, nlp) for d in documents])
        data["litbank"] = {"folder": Path(litbank_dir).name,
                           "sha256": litbank_module.digest(litbank_dir),
                           "documents": len(documents), "pronouns": len(set(litbank.groups)),
                           "pairs": len(litbank.rows), "weight": litbank_weight}
    parsed = time.perf_counter()
    threshold, cv = cross_validate(examples, gap, litbank, folds=folds,
                                   litbank_weight=litbank_weight, seed=seed)
    model = _fit(gap, litbank, litbank_weight, seed)
    card: dict[str, Any] = {
        "version": VERSION, "seed": seed, "threshold": threshold, "folds": folds,
        "features": list(feature_names()), "classifier": "HistGradientBoostingClassifier "
        "(max_iter 300, learning_rate 0.05, max_leaf_nodes 15, no early stopping)",
        "sklearn": sklearn.__version__, "spacy": spacy.__version__,
        "spacy_pipeline": f"{nlp.meta.get('name')} {nlp.meta.get('version')}",
        "data": data,
        "scores": {"gap_development_cv": cv[str(threshold)].as_dict(),
                   "cv_by_threshold": {t: {"O": s.o, "B": s.bias} for t, s in cv.items()}},
    }
    resolver = Resolver(model, threshold, card)
    if validation_file is not None:
        held = gap_module.read_gap(validation_file)
        result = gap_module.score(held, resolver.predict_gap(
            held, parse([e.text for e in held], nlp)))
        card["data"]["gap_validation"] = {"file": Path(validation_file).name,
                                          "sha256": _sha256(Path(validation_file)),
                                          "examples": len(held)}
        card["scores"]["gap_validation"] = result.as_dict()
    log.info("resolver trained: parse %.1f s, cross-validation and fit %.1f s",
             parsed - started, time.perf_counter() - parsed)
    return resolver


def _feature_order() -> tuple[str, ...]:
    """The column order, read off the feature functions on a one-sentence parse-free
    document (no pipeline needed: a blank English vocabulary)."""
    import spacy
    from spacy.tokens import Doc as SpacyDoc

    doc = SpacyDoc(spacy.blank("en").vocab, words=["Ann", "said", "she", "left"],
                   sent_starts=[True, False, False, False])
    for tok in doc:
        tok.head = doc[1]
    info = DocInfo(doc)
    return tuple(with_relative([pair_features(info, doc[0:1], doc[2])])[0])


FEATURES = _feature_order()
