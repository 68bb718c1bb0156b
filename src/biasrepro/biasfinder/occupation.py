"""Occupation templates (BiasFinder §5, Algorithm 2).

The original took any CoreNLP ``TITLE`` entity in a sentence with a ``PERSON``
(biasfinder-original.md §2 "Occupation"). Here an occupation is found by a lexicon: the job
titles of ``wordlists.job_titles`` (generated from WordNet 3.0) and the fillers of
``wordlists.occupations``, matched token by token on the spaCy parse by lowercase form and
by lemma, so "editor" never matches inside "editorial". The fillers, what mutants insert,
stay ``wordlists.occupations``; ``original_class`` is the title as matched ("director").

A *mention* is an occurrence that

- forms a noun phrase headed by its last token, a singular common noun (tag ``NN``), because
  the fillers are singular (pitfall §7.3); a lexicon compound ("police officer") is one
  mention;
- is not a modifier inside a larger compound ("the teacher training"), is not glued to a
  neighbour by a hyphen ("teacher-turned-writer"), and is not part of a name: not inside a
  named entity and neither it nor its determiner is capitalised in mid-sentence ("saw The
  Machinist", a film title) — except a title directly before a ``PERSON`` name ("director
  Sam Green"), which is a mention ("<occupation> Sam Green"). A title before any other proper
  noun ("Agent Smith") blocks its occupation: "the agent" may be that person.

Plural occurrences ("the actors") are other people and are ignored. A title whose most
frequent WordNet sense is not the job (``dominant`` false: "star", "agent"; a filler always
counts) is templated only if one of its mentions shows it denotes a person: an appositive of
a ``PERSON`` ("Tom Hanks, the star of ..."), a predicate whose subject is a ``PERSON`` or
gendered pronoun ("she is an agent"), or a title before a ``PERSON`` name. Like the original,
at least one mention must sit in a sentence that mentions a person (a ``PERSON`` entity or a
gendered personal pronoun).

Each templated occupation yields one template per document (``templates="each_distinct"``,
as the original code did; ``"first"`` keeps only the first, as §5 of the paper describes), in
which *every* mention is rewritten (so coreferent mentions agree; other occupations stay verbatim):

- left modifiers of the head inside its noun phrase (``amod``, ``compound``, ``nmod``,
  ``advmod``, ``npadvmod``, with their subtrees and the punctuation among them) that follow
  the determiner, possessor or number are deleted ("a brilliant young surgeon" -> "a
  surgeon"; Algorithm 2 ``removeAdjective``); determiners, possessors, numbers ("one angry
  cop") and right dependents stay. An occupation with a mention whose noun phrase the parse
  split ("An old, tired farmer" with "An old" attached to the verb), whose deleted modifiers
  hold an article or half a quotation, or whose article cannot agree is not templated;
- an indefinite article "a"/"an" of the head, now directly before it, becomes ``<a>``;
- the occupation becomes ``<occupation>``, ``<Occupation>`` at the start of a sentence (also
  when the deleted modifiers leave it there) and ``<OCCUPATION>`` when written in capitals.

When coreference clusters are stored in ``doc.user_data["biasrepro"]["coref"]``, an
occupation whose mention is coreferent with a mention of a *different* occupation ("the
surgeon ... the doctor") is not templated: rewriting one would give one person two jobs.

A *film credit* (:func:`is_film_credit`) is a film-making role (:data:`FILM_ROLES`) naming
a credit of a film rather than a person in its story: "the director", "the film's star",
"director John Ford" — not "a director who falls in love" or "plays the director". The
paper's tool templated them (its Fig. 13 false positive); ``film_credits="drop"`` (config
``biasfinder.occupation.film_credits``) leaves an occupation with such a mention out.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

import spacy
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span, Token
from spacy.util import filter_spans
from spacy.vocab import Vocab

from biasrepro.biasfinder.placeholders import PLACEHOLDER, Candidate, placeholder
from biasrepro.biasfinder.wordlists import Wordlists
from biasrepro.nlp.coref import clusters_of

#: left dependents of the occupation's head that are deleted with their subtrees
REMOVED_DEPS = frozenset({"amod", "compound", "nmod", "advmod", "npadvmod"})
#: left dependents that close the modifier zone (kept verbatim: "one angry cop" -> "one
#: <occupation>", not "she was <occupation>")
DETERMINER_DEPS = frozenset({"det", "poss", "predet", "nummod"})
#: dependency labels of a noun that only modifies another noun
MODIFIER_DEPS = frozenset({"compound", "nmod"})

#: modifiers a clause may depend on ("the only director to ..."): never deleted
RANKING = frozenset({"first", "last", "only", "next", "second", "third", "sole", "lone"})
#: how many templates a review gives: one per distinct occupation, or the first one only
OCCUPATION_TEMPLATES = ("each_distinct", "first")
#: what becomes of an occupation with a film-credit mention (:func:`is_film_credit`): kept
#: as the paper's tool kept it, or dropped (its mutants would make no sense)
FILM_CREDITS = ("keep", "drop")

#: the film-making roles of the job-title lexicon (``wordlists/job_titles.csv``): used
#: definitely in a review ("the director", "its star") they name a credit of the film.
#: "cast", "crew" and "narrator" are no job titles (never a mention); "editor",
#: "photographer" and "designer" name newspaper, studio and fashion jobs as often as film
#: ones, and "author"/"novelist" the source's writer, so they stay out.
FILM_ROLES = frozenset({
    "director", "film director", "filmmaker", "film maker", "movie maker", "auteur",
    "producer", "film producer", "writer", "screenwriter", "scriptwriter", "scenarist",
    "cinematographer", "camera operator", "composer",
    "actor", "character actor", "star", "film star", "movie star", "co-star", "lead",
})
#: nouns for the work reviewed (or its script): "the film's director", "the star of the film";
#: not "show", which is as often a stage show in the story ("the producer of the show")
WORK_NOUNS = frozenset({
    "film", "movie", "picture", "flick", "series", "episode", "documentary",
    "feature", "production", "sequel", "remake", "adaptation", "version", "cartoon",
    "script", "screenplay",
})
#: determiners that make a role the film's own: "the director", "this writer", "its star"
CREDIT_DETERMINERS = frozenset({"the", "this", "that", "its"})
#: verbs of a clause that keeps a role a credit: "the actor who plays him", "the director
#: who made it"; any other clause ("the director who falls in love") makes it a character
CREDIT_VERBS = frozenset({
    "play", "make", "direct", "write", "produce", "shoot", "film", "star", "cast", "score",
    "compose", "helm", "adapt", "create",
})
#: verbs whose object is a role in the plot: "plays the director", "portrays the star"
ROLE_VERBS = frozenset({"play", "portray", "depict", "impersonate", "cast"})

Edit = tuple[int, int, str]  # character start, end (exclusive), replacement


@lru_cache(maxsize=4)
def _matchers(vocab: Vocab, lang: str,
              occupations: tuple[str, ...]) -> tuple[PhraseMatcher, PhraseMatcher]:
    """Phrase matchers for the lexicon by lowercase form and by lemma (which finds plurals),
    the phrases tokenised like the documents."""
    tokenizer = spacy.blank(lang, vocab=vocab)
    by_lower = PhraseMatcher(vocab, attr="LOWER")
    by_lemma = PhraseMatcher(vocab, attr="LEMMA")
    for occ in occupations:
        words = [t.lower_ for t in tokenizer.make_doc(occ)]
        by_lower.add(occ, [Doc(vocab, words=words)])
        by_lemma.add(occ, [Doc(vocab, words=words, lemmas=words)])
    return by_lower, by_lemma


def _lexicon(wordlists: Wordlists) -> tuple[str, ...]:
    """The job titles, then the fillers that are no title (as written: "CEO")."""
    fillers = tuple(occ for _, occ in wordlists.occupations
                    if occ.lower() not in wordlists.job_titles)
    return (*wordlists.job_titles, *fillers)


def _occurrences(doc: Doc, wordlists: Wordlists) -> list[Span]:
    """Non-overlapping lexicon occurrences (longest first), labelled with the title."""
    by_lower, by_lemma = _matchers(doc.vocab, doc.lang_, _lexicon(wordlists))
    return filter_spans([*by_lower(doc, as_spans=True), *by_lemma(doc, as_spans=True)])


def _person(tok: Token, wordlists: Wordlists) -> bool:
    """Part of a ``PERSON`` entity, or a gendered personal pronoun."""
    return tok.ent_type_ == "PERSON" or (
        tok.pos_ == "PRON" and wordlists.gender_of_pronoun(tok.text) is not None)


def _before_name(head: Token) -> bool:
    """A title directly before the ``PERSON`` name it modifies: "director Sam Green"."""
    doc = head.doc
    return (head.dep_ in MODIFIER_DEPS and head.head.pos_ == "PROPN"
            and head.head.ent_type_ == "PERSON" and head.i + 1 < len(doc)
            and doc[head.i + 1].ent_iob_ == "B" and doc[head.i + 1].ent_type_ == "PERSON"
            and not head.ent_type_)


def _beside(tok: Token, span: Span) -> bool:
    """Another title describing the same person as the mention: its appositive ("the
    director, an auteur"), or within three words of it with no "and"/"or" between ("chief of
    police", "fellow cop"); "the surgeon and the accountant" are two people."""
    head, doc = span[-1], span.doc
    if tok.i in range(span.start, span.end):
        return False
    if (tok.dep_ == "appos" and tok.head == head) or (head.dep_ == "appos" and head.head == tok):
        return True
    low, high = sorted((tok.i, head.i))
    return high - low <= 3 and not any(t.pos_ == "CCONJ" for t in doc[low + 1:high])


def _bare(span: Span) -> bool:
    """A singular mention without determiner or possessor that is no title before a name:
    "May is talented director", "without male escort"."""
    head = span[-1]
    return not _before_name(head) and not head.text[:1].isupper() and not any(
        c.dep_ in DETERMINER_DEPS or c.tag_ in ("CD", "PRP$") for c in head.lefts)


def _part_of_name(head: Token) -> bool:
    """A capitalised title inside a name: before a one-word name ("Agent Smith", a
    character's name) or in mid-sentence before any name ("Deputy Sheriff Andy Simpson")."""
    doc = head.doc
    after = doc[head.i + 1] if head.i + 1 < len(doc) else None
    if not head.text[:1].isupper() or after is None or after.pos_ != "PROPN":
        return False
    name = [t for t in doc[head.i + 1: head.i + 4] if t.pos_ == "PROPN"]
    if doc[head.i + len(name) + 1: head.i + len(name) + 2].text[:1].isupper():
        return True
    return len(name) == 1 or not head.is_sent_start


def _with_things(head: Token, wordlists: Wordlists) -> bool:
    """Coordinated with a noun that is no person: "judge, jury and executioner"."""
    return any(t.pos_ == "NOUN" and not wordlists.person_noun(t.text)[0]
               and not wordlists.is_job(t.lower_) and not wordlists.is_job(t.lemma_.lower())
               for t in head.conjuncts)


def _ranked(tok: Token) -> bool:
    """A superlative or ordinal among the deleted modifiers ("the best", "the first")."""
    return tok.tag_ in ("JJS", "RBS") or tok.ent_type_ == "ORDINAL" or tok.lower_ in RANKING


def _denotes_person(head: Token, wordlists: Wordlists) -> bool:
    """Syntactic evidence that the title names someone: an appositive of a ``PERSON`` ("Tom
    Hanks, the star"), a predicate of a ``PERSON`` or gendered pronoun ("she is a star",
    also a conjunct: "a writer and star"), or a title before a ``PERSON`` name."""
    if _before_name(head):
        return True
    if (head.dep_ == "appos" and head.head.ent_type_ == "PERSON") or any(
            c.dep_ == "appos" and c.ent_type_ == "PERSON" for c in head.children):
        return True
    first = head
    while first.dep_ == "conj" and first.head.pos_ == "NOUN":
        first = first.head
    return first.dep_ == "attr" and any(
        c.dep_ in ("nsubj", "nsubjpass") and _person(c, wordlists) for c in first.head.children)


def _is_phrase(span: Span) -> bool:
    """The occurrence is a noun phrase headed by its last token (all others attach inside)."""
    head = span[-1]
    return all(t.head.i in range(span.start, span.end) and t.head.i != t.i
               for t in span[:-1]) and head.head.i not in range(span.start, span.end - 1)


def _in_name(span: Span) -> bool:
    """Inside a named entity, or it or its determiner capitalised in mid-sentence ("The
    Machinist", "(The machinist, Secret Window)"), or in capitals in a sentence that is not
    ("THE MERCHANT OF FOUR SEASONS was ...")."""
    def capitalised(tok: Token) -> bool:
        return tok.text[:1].isupper() and not tok.is_sent_start and not tok.text.isupper()

    dets = [c for c in span[-1].lefts if c.dep_ == "det"]
    shouted = span.text.isupper() and any(c.islower() for c in span.sent.text)
    return (bool(span[0].ent_type_) or shouted
            or any(capitalised(t) for t in (span[0], *dets)))


def _hyphenated(span: Span) -> bool:
    """Glued to a neighbour by a hyphen: "editor-in-chief", "teacher-turned-writer"."""
    doc = span.doc
    before = doc[span.start - 1] if span.start > 0 else None
    after = doc[span.end] if span.end < len(doc) else None
    return (before is not None and before.text == "-" and not before.whitespace_) or (
        after is not None and after.text == "-" and not span[-1].whitespace_)


def _mentions_person(sent: Span, wordlists: Wordlists) -> bool:
    return any(ent.label_ == "PERSON" for ent in sent.ents) or any(
        _person(t, wordlists) for t in sent if t.pos_ == "PRON")


def _removed(span: Span) -> list[Token]:
    """Left modifiers of the head (with subtrees and the punctuation among them), in order."""
    head = span[-1]
    left = [c for c in head.lefts if c.i < span.start]
    last_det = max((c.i for c in left if c.dep_ in DETERMINER_DEPS), default=-1)
    removed: set[int] = set()
    for child in left:
        if child.dep_ in REMOVED_DEPS and child.i > last_det:
            removed.update(t.i for t in child.subtree)
    if removed:
        low = min(removed)
        removed.update(c.i for c in left if c.dep_ == "punct" and c.i > low)
    return [span.doc[i] for i in sorted(removed)]


def _stray_left(span: Span, gone: set[int], article: Token | None) -> bool:
    """Does a modifier the parse did not attach to the head remain before the mention?

    A mis-parsed noun phrase ("An old, tired farmer" with "An" and "old" attached to the verb;
    "the harried and desperate officer" with "harried and" left out) would leave an
    adjective, or an article of the old word, before the new occupation.
    """
    doc, stop = span.doc, span.sent.start

    def kept_before(i: int) -> int:
        while i >= stop and i in gone:
            i -= 1
        return i

    i = kept_before(span.start - 1)
    while i >= stop and (doc[i].text == "," or doc[i].pos_ == "CCONJ"):
        i = kept_before(i - 1)
    if i < stop:
        return False
    return doc[i].pos_ == "ADJ" or (doc[i].lower_ in ("a", "an") and doc[i] != article)


def _edits(span: Span) -> list[Edit] | None:
    """The edits turning one mention into placeholders; None when the article cannot agree."""
    doc = span.doc
    head = span[-1]
    removed = _removed(span)
    if any(t.pos_ == "DET" or (t.is_punct and t.text not in ",-") for t in removed):
        return None  # a mis-parse ("Final Draft - A writer"), or half a quote: 'the "other"
    gone = {t.i for t in removed}
    edits: list[Edit] = []
    for tok in removed:  # delete each run of removed tokens with the whitespace after it
        if tok.i - 1 not in gone:
            start = tok.idx
        if tok.i + 1 not in gone:
            edits.append((start, doc[tok.i + 1].idx, ""))
    first = span[0]
    like = first.text
    sent_start = first.sent.start
    if (removed and removed[0].i == sent_start and removed[0].text[:1].isupper()
            and all(i in gone for i in range(sent_start, first.i))):
        like = like[:1].upper() + like[1:]  # the occupation now starts its sentence
    article = next((c for c in head.lefts
                    if c.dep_ == "det" and c.lower_ in ("a", "an")), None)
    if article is not None:
        between = range(article.i + 1, first.i)
        if not all(i in gone for i in between):
            return None  # something other than a modifier separates article and noun
    if _stray_left(span, gone, article):
        return None
    if article is not None:
        edits.append((article.idx, article.idx + len(article), placeholder(
            "a", article.text)))
    edits.append((first.idx, span.end_char, placeholder("occupation", like)))
    return edits


def _work(tok: Token) -> bool:
    """A noun for the work reviewed, or a title: "the film", "the director of "Brazil""."""
    doc = tok.doc
    quoted = tok.left_edge.i > 0 and doc[tok.left_edge.i - 1].text in ('"', "'", "“", "‘")
    return (tok.lemma_.lower() in WORK_NOUNS or tok.lower_ in WORK_NOUNS
            or tok.ent_type_ == "WORK_OF_ART" or quoted)


def _of_work(head: Token) -> bool | None:
    """True for an "of" phrase naming the work ("the star of the film"), False for one naming
    anything else ("the director of the orphanage", "the writer of the letter"), None for
    none."""
    for prep in head.rights:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            objects = [c for c in prep.children if c.dep_ == "pobj"]
            return bool(objects) and all(_work(o) for o in objects)
    return None


def _actor_after(tok: Token) -> bool:
    """An actor's name (or "played by") in parentheses right after ``tok`` (after the whole
    name if it is one; a comma between is allowed): "the director (Tom Hanks)", "actor Paul
    Henderson, (Jon Pertwee)" are characters; "director Billy Wilder (Double Indemnity)" is
    not."""
    doc, i = tok.doc, tok.i + 1
    while tok.ent_type_ and i < len(doc) and doc[i].ent_iob_ == "I":
        i += 1
    if i < len(doc) and doc[i].text == ",":
        i += 1
    if i + 1 >= len(doc) or doc[i].text != "(":
        return False
    inside = doc[i + 1]
    return (inside.ent_iob_ == "B" and inside.ent_type_ == "PERSON") or inside.lemma_.lower() in (
        "play", "portray")


def _in_plot(root: Token, *, named: bool) -> bool:
    """Signs that a role (or a name with its title: ``named``) is a character of the story,
    not a credit: a role played ("plays the director", "as the director"); a name in
    parentheses after it ("the director (Tom Hanks)", "the director, Max (Tom Hanks)"); a
    passive clause ("the writer played by Tom Hanks"); and, for a role without a name, a
    clause about it that is no film-making ("the director who falls in love")."""
    if root.dep_ == "pobj" and root.head.lower_ == "as":
        return True
    if root.dep_ in ("dobj", "attr", "oprd") and root.head.lemma_.lower() in ROLE_VERBS:
        return True
    for clause in root.rights:
        if clause.dep_ in ("relcl", "acl"):
            if any(c.dep_ in ("auxpass", "agent") for c in clause.children):
                return True
            if not named and clause.lemma_.lower() not in CREDIT_VERBS:
                return True
    return _actor_after(root) or any(_actor_after(c) for c in root.rights if c.dep_ == "appos")


def is_film_credit(span: Span) -> bool:
    """Is this occupation mention a credit of the film, not a person in its story?

    The title must be a film-making role (:data:`FILM_ROLES`: "director", "star", "writer",
    ...), used in one of two ways, neither of which makes it a character (a role played,
    "plays the director", "as the director"; a name in parentheses after it, "the director
    (Tom Hanks)"; a passive clause, "the writer played by ..."):

    - definitely, after "the", "this", "that" or "its" or possessed by the work ("the
      film's director"), without a clause that is no film-making ("the director who falls in
      love" is a character; "the actor who plays him" a credit) and without an "of" phrase
      naming anything but the work ("the director of the orphanage"). A name in apposition
      ("the writer, Jack Torrance") may be a character's: then only a role anchored to the
      work is a credit ("Tom Hanks, the star of the film");
    - as a title directly before a person's name ("director John Ford", "the director
      Neil LaBute"), unless the name is a character's ("actor Paul Henderson (Jon Pertwee)",
      "writer Max, played by ...").

    Indefinite uses are not credits here ("a director who falls in love", "a great actor").
    ``span`` is a mention as :func:`occupation_templates` finds it (labelled with its title;
    an unlabelled span is looked up by its text); whether it denotes a person at all ("the
    star exploded") is the engine's test, not this one.
    """
    head = span[-1]
    if (span.label_ or span.text).lower() not in FILM_ROLES:
        return False
    if _before_name(head):
        return not _in_plot(head.head, named=True)
    dets = [c for c in head.lefts if c.i < span.start and c.dep_ in ("det", "poss")]
    anchored = any(c.dep_ == "poss" and (c.lower_ == "its" or _work(c)) for c in dets)
    definite = anchored or any(c.dep_ == "det" and c.lower_ in CREDIT_DETERMINERS
                               for c in dets)
    of_work = _of_work(head)
    if of_work is False or not definite or _in_plot(head, named=False):
        return False
    appos_name = any(c.dep_ == "appos" and c.ent_type_ == "PERSON" for c in head.rights) or (
        head.dep_ == "appos" and head.head.ent_type_ == "PERSON")
    return not appos_name or anchored or bool(of_work)


def _clusters_roots(doc: Doc) -> list[set[int]]:
    """The root token index of each coreference mention, per stored cluster."""
    clusters = clusters_of(doc) if "biasrepro" in doc.user_data else []
    roots = []
    for cluster in clusters:
        ids = set()
        for start, end in cluster:
            mention = doc.char_span(start, end, alignment_mode="expand")
            if mention is not None and len(mention):
                ids.add(mention.root.i)
        roots.append(ids)
    return roots


def _apply(text: str, edits: Iterable[Edit]) -> str | None:
    """Cut ``text`` at the edits right to left; None if two edits overlap."""
    ordered = sorted(edits)
    if any(start < end for (_, end, _), (start, _, _) in pairwise(ordered)):
        return None
    for start, end, new in reversed(ordered):
        text = text[:start] + new + text[end:]
    return text


def occupation_templates(doc: Doc, wordlists: Wordlists, *,
                         templates: str = "each_distinct",
                         film_credits: str = "drop") -> list[Candidate]:
    """Occupation templates of ``doc`` (Algorithm 2).

    ``templates`` is ``each_distinct`` (one template per occupation mentioned in the review,
    as the original code did) or ``first`` (§5: only the first occupation of the review forms
    a template; here the first, in text order, that can be templated). ``film_credits`` is
    ``drop`` (an occupation with a mention that is a credit of the film, :func:`is_film_credit`
    — "the director", "its star" — forms no template: "the nurse clearly loved this material"
    makes no sense; with ``first`` the next occupation is taken) or ``keep`` (as the paper's
    tool did). Candidates come in the order of each occupation's first mention;
    ``original_class`` is the title as matched (lower case, or a filler as written).
    Documents that already contain placeholder-like text give none.
    """
    if templates not in OCCUPATION_TEMPLATES:
        raise ValueError(f"biasfinder.occupation.templates must be one of "
                         f"{', '.join(OCCUPATION_TEMPLATES)}, not {templates!r}")
    if film_credits not in FILM_CREDITS:
        raise ValueError(f"biasfinder.occupation.film_credits must be one of "
                         f"{', '.join(FILM_CREDITS)}, not {film_credits!r}")
    if PLACEHOLDER.search(doc.text):
        return []
    mentions: dict[str, list[Span]] = {}
    blocked: set[str] = set()  # occupations with a mention that cannot be replaced
    evidenced: set[str] = set()  # occupations with a mention that surely names a person
    head_of: dict[int, str] = {}  # head token index -> occupation, for coreference checks
    occurrences = _occurrences(doc, wordlists)
    for span in occurrences:
        occ = doc.vocab.strings[span.label]
        head = span[-1]
        if _part_of_name(head) or _with_things(head, wordlists):
            blocked.add(occ)  # "Agent Smith", "Deputy Sheriff Andy"; "judge, jury and ..."
            continue
        if _before_name(head) and not _in_name(span):
            if not _is_phrase(span) or _hyphenated(span):
                blocked.add(occ)
                continue
        elif head.dep_ in MODIFIER_DEPS and head.head.pos_ == "PROPN":
            blocked.add(occ)  # part of a name ("Agent Smith"), or before a non-person's
            continue
        elif (head.pos_ != "NOUN" or head.dep_ in MODIFIER_DEPS or not _is_phrase(span)
                or _hyphenated(span) or _in_name(span)):
            continue
        head_of[head.i] = occ
        if head.tag_ in ("NN", "NNP"):  # NNP: a title before a name, capitalised first
            mentions.setdefault(occ, []).append(span)
            if _denotes_person(head, wordlists):
                evidenced.add(occ)
    clusters = _clusters_roots(doc)
    singular = [(doc.vocab.strings[o.label], o[-1]) for o in occurrences
                if o[-1].tag_ in ("NN", "NNP")]
    out = []
    for occ, spans in mentions.items():
        if occ in blocked or not any(_mentions_person(s.sent, wordlists) for s in spans):
            continue
        if any(other != occ and _beside(tok, s) for other, tok in singular for s in spans):
            continue  # "the director, an auteur": the other title would keep the job
        if any(_bare(s) for s in spans):
            continue  # "without male escort": a new job needs its article
        if not (wordlists.job_titles.get(occ, True) or occ in wordlists.fillers
                or occ in evidenced):
            continue  # "the star of the sky": not surely a person
        heads = {s[-1].i for s in spans}
        if any(head_of.get(i, occ) != occ for roots in clusters if roots & heads
               for i in roots):
            continue
        if any(_ranked(t) for s in spans for t in _removed(s)):
            continue  # "the first director to ...": the clause needs the deleted word
        if film_credits == "drop" and any(is_film_credit(s) for s in spans):
            continue  # "the director": every mention is rewritten, the credit with the rest
        edits = [_edits(s) for s in spans]
        if any(e is None for e in edits):
            continue
        template = _apply(doc.text, (e for es in edits if es for e in es))
        if template is not None:
            out.append(Candidate(template=template, original_class=occ))
            if templates == "first":
                break
    return out
