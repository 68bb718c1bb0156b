"""Occupation templates (BiasFinder §5, Algorithm 2; issue #4 item 3).

The original found occupations as CoreNLP ``TITLE`` entities and edited the sentence with an
unescaped regular expression (biasfinder-original.md §2 "Occupation", pitfalls §7.7). Here an
occupation is an occurrence of a phrase of the project's gender-neutral occupation lexicon
(``wordlists.occupations``), matched token by token on the spaCy parse (by lowercase form and,
to find plurals, by lemma), so "editor" never matches inside "editorial" nor "pilot" inside
"autopilot". A *mention* is an occurrence that

- forms a noun phrase headed by its last token, a singular common noun (POS ``NOUN``, tag
  ``NN``), because the fillers are singular (pitfall §7.3);
- is not a modifier inside a larger compound ("the teacher training"), is not glued to a
  neighbour by a hyphen ("teacher-turned-writer"), and is not part of a name: not inside a
  named entity and neither it nor its determiner is capitalised in mid-sentence ("saw The
  Machinist", a film title).

An occupation that also occurs as a plural noun (tag ``NNS``) or as a title before a name
("pilot Sam Green") is not templated: those occurrences could not be replaced consistently
with the others. Like the original, which required a ``PERSON``
mention in the sentence, at least one mention must sit in a sentence that mentions a person:
a ``PERSON`` entity or a gendered personal pronoun (he, she, him, her, his, hers, himself,
herself), so that the occupation probably describes someone in the text.

Each templated occupation yields one template per document (``templates="each_distinct"``,
as the original code did; ``"first"`` keeps only the first, as §5 of the paper describes), in
which *every* mention is rewritten (so coreferent mentions agree; other occupations stay verbatim):

- left modifiers of the head inside its noun phrase (``amod``, ``compound``, ``nmod``,
  ``nummod``, ``advmod``, ``npadvmod``, with their subtrees and the punctuation among them)
  that follow the determiner or possessor are deleted with the whitespace after them ("a
  brilliant young surgeon" -> "a surgeon"; Algorithm 2 ``removeAdjective``); determiners and
  possessors ("the", "his", "Maria's") and right dependents (prepositional phrases, relative
  clauses) stay. An occupation with a mention whose noun phrase the parse split ("An old,
  tired farmer" with "An old" attached to the verb) or whose article cannot be made to agree
  is not templated;
- an indefinite article "a"/"an" of the head, now directly before it, becomes ``<a>``;
- the occupation becomes ``<occupation>``, ``<Occupation>`` at the start of a sentence (also
  when the deleted modifiers leave it there) and ``<OCCUPATION>`` when written in capitals.

When coreference clusters are stored in ``doc.user_data["biasrepro"]["coref"]``, an
occupation whose mention is coreferent with a mention of a *different* lexicon occupation
("the surgeon ... the doctor") is not templated: rewriting one of them would describe one
person with two unrelated jobs.
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

from biasrepro.biasfinder import placeholders
from biasrepro.biasfinder.placeholders import Candidate
from biasrepro.biasfinder.wordlists import Wordlists
from biasrepro.nlp.coref import clusters_of

#: left dependents of the occupation's head that are deleted with their subtrees
REMOVED_DEPS = frozenset({"amod", "compound", "nmod", "nummod", "advmod", "npadvmod"})
#: left dependents that close the modifier zone (kept verbatim)
DETERMINER_DEPS = frozenset({"det", "poss", "predet"})
#: dependency labels of a noun that only modifies another noun
MODIFIER_DEPS = frozenset({"compound", "nmod"})

#: how many templates a review gives: one per distinct occupation, or the first one only
OCCUPATION_TEMPLATES = ("each_distinct", "first")

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


def _occurrences(doc: Doc, wordlists: Wordlists) -> list[Span]:
    """Non-overlapping lexicon occurrences (longest first), labelled with the occupation."""
    occupations = tuple(occ for _, occ in wordlists.occupations)
    by_lower, by_lemma = _matchers(doc.vocab, doc.lang_, occupations)
    return filter_spans([*by_lower(doc, as_spans=True), *by_lemma(doc, as_spans=True)])


def _is_phrase(span: Span) -> bool:
    """The occurrence is a noun phrase headed by its last token (all others attach inside)."""
    head = span[-1]
    return all(t.head.i in range(span.start, span.end) and t.head.i != t.i
               for t in span[:-1]) and head.head.i not in range(span.start, span.end - 1)


def _in_name(span: Span) -> bool:
    """Inside a named entity, or it or its determiner capitalised (not all-caps) in
    mid-sentence: "The Machinist", "(The machinist, Secret Window)"."""
    def capitalised(tok: Token) -> bool:
        return tok.text[:1].isupper() and not tok.is_sent_start and not tok.text.isupper()

    dets = [c for c in span[-1].lefts if c.dep_ == "det"]
    return bool(span[0].ent_type_) or any(capitalised(t) for t in (span[0], *dets))


def _hyphenated(span: Span) -> bool:
    """Glued to a neighbour by a hyphen: "editor-in-chief", "teacher-turned-writer"."""
    doc = span.doc
    before = doc[span.start - 1] if span.start > 0 else None
    after = doc[span.end] if span.end < len(doc) else None
    return (before is not None and before.text == "-" and not before.whitespace_) or (
        after is not None and after.text == "-" and not span[-1].whitespace_)


def _mentions_person(sent: Span, wordlists: Wordlists) -> bool:
    return any(ent.label_ == "PERSON" for ent in sent.ents) or any(
        t.pos_ == "PRON" and wordlists.gender_of_pronoun(t.text) is not None for t in sent)


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

    A mis-parsed noun phrase ("An old, tired farmer" with "An" and "old" attached to the verb)
    would leave an adjective, or an article of the old word, before the new occupation.
    """
    doc, stop = span.doc, span.sent.start

    def kept_before(i: int) -> int:
        while i >= stop and i in gone:
            i -= 1
        return i

    i = kept_before(span.start - 1)
    if i >= stop and doc[i].text == ",":
        i = kept_before(i - 1)
    if i < stop:
        return False
    return doc[i].pos_ == "ADJ" or (doc[i].lower_ in ("a", "an") and doc[i] != article)


def _edits(span: Span) -> list[Edit] | None:
    """The edits turning one mention into placeholders; None when the article cannot agree."""
    doc = span.doc
    head = span[-1]
    removed = _removed(span)
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
        edits.append((article.idx, article.idx + len(article), placeholders.placeholder(
            "a", article.text)))
    edits.append((first.idx, span.end_char, placeholders.placeholder("occupation", like)))
    return edits


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
                         templates: str = "each_distinct") -> list[Candidate]:
    """Occupation templates of ``doc`` (Algorithm 2).

    ``templates`` is ``each_distinct`` (one template per occupation of the lexicon mentioned
    in the review, as the original code did) or ``first`` (§5: only the first occupation of
    the review forms a template; here the first, in text order, that can be templated).
    Candidates come in the order of each occupation's first mention; ``original_class`` is
    the occupation as written in the lexicon. Documents that already contain
    placeholder-like text give none.
    """
    if templates not in OCCUPATION_TEMPLATES:
        raise ValueError(f"biasfinder.occupation.templates must be one of "
                         f"{', '.join(OCCUPATION_TEMPLATES)}, not {templates!r}")
    if placeholders.PLACEHOLDER.search(doc.text):
        return []
    mentions: dict[str, list[Span]] = {}
    blocked: set[str] = set()  # occupations with a mention that cannot be replaced
    head_of: dict[int, str] = {}  # head token index -> occupation, for coreference checks
    for span in _occurrences(doc, wordlists):
        occ = doc.vocab.strings[span.label]
        head = span[-1]
        if head.dep_ in MODIFIER_DEPS and head.head.pos_ == "PROPN":
            blocked.add(occ)  # a title before a name: "pilot Sam Green"
        if (head.pos_ != "NOUN" or head.dep_ in MODIFIER_DEPS or not _is_phrase(span)
                or _hyphenated(span) or _in_name(span)):
            continue
        head_of[head.i] = occ
        if head.tag_ == "NNS":
            blocked.add(occ)
        elif head.tag_ == "NN":
            mentions.setdefault(occ, []).append(span)
    clusters = _clusters_roots(doc)
    out = []
    for occ, spans in mentions.items():
        if occ in blocked or not any(_mentions_person(s.sent, wordlists) for s in spans):
            continue
        heads = {s[-1].i for s in spans}
        if any(head_of.get(i, occ) != occ for roots in clusters if roots & heads
               for i in roots):
            continue
        edits = [_edits(s) for s in spans]
        if any(e is None for e in edits):
            continue
        template = _apply(doc.text, (e for es in edits if es for e in es))
        if template is not None:
            out.append(Candidate(template=template, original_class=occ))
            if templates == "first":
                break
    return out
