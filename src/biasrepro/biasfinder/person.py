"""The review's one person: the person-cluster filter of BiasFinder Algorithms 1 and 3.

The filter (Algorithm 1 line 4, Algorithm 3 line 4; §4, §5) classifies every coreference
mention as a person name, a gendered pronoun, a gender-noun phrase, an ungendered person noun
or something else (:func:`classify`), and keeps a document only when exactly one cluster
refers to a person and all of that cluster's mentions do (the original's
``len(person_coreferences) == 1``). Precision first: :func:`screen` refuses a review whenever
its person is not certainly one person (a name that reads as a title, a nameless cluster
beside a named person, overlapping or nested mentions such as fastcoref's long spans) and
says why; :func:`left_over` finds the person's name words left outside the cluster. The
gender and country engines both build on it; ``docs/biasfinder-templates.md`` lists the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from biasrepro.biasfinder.placeholders import PLACEHOLDER, placeholder
from biasrepro.nlp.coref import clusters_of, said_to_be_person
from biasrepro.nlp.syntax import SUBJECTS, fold, name_gender

if TYPE_CHECKING:
    from collections.abc import Callable

    from spacy.tokens import Doc, Span, Token

    from biasrepro.biasfinder.wordlists import Wordlists

NAME, PRONOUN, NOUN, PERSON, OTHER = "name", "pronoun", "noun", "person", "other"

#: Titles before a name that carry a gender; a gender template cannot swap them.
GENDERED_TITLES = {
    "mr": "male", "mister": "male", "sir": "male", "lord": "male",
    "mrs": "female", "ms": "female", "miss": "female", "madam": "female", "lady": "female",
    "dame": "female",
}
#: Titles before a name that carry no gender; they stay in the text before the placeholder.
NEUTRAL_TITLES = frozenset({"dr", "doctor", "prof", "professor"})

_TITLES = frozenset({*GENDERED_TITLES, *NEUTRAL_TITLES})
_LINKS = frozenset({"or", "and", "/", "nor"})
_ARTICLES = frozenset({"a", "an"})
_NAME_LIKE_ENTS = frozenset({"", "ORG", "PRODUCT", "WORK_OF_ART"})
_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})
#: words after a name that belong to it ("Lon Chaney Jr.")
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
#: nouns for a work: a name that is one of these, or modifies one, is a title, not a person
WORK_NOUNS = frozenset({
    "film", "movie", "picture", "flick", "show", "series", "serial", "sitcom", "episode",
    "season", "sequel", "prequel", "remake", "franchise", "saga", "trilogy", "book", "novel",
    "story", "comic", "manga", "anime", "cartoon", "documentary", "play", "musical", "opera",
    "song", "album", "soundtrack", "game", "programme", "program", "miniseries", "version",
    "feature", "production", "classic", "masterpiece", "title", "company", "studio", "band",
    "choir", "team", "channel", "network"})
#: determiners that make a capitalised word a common noun or a title ("your Nanny")
_NAME_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "my", "your", "our", "their",
                               "his", "her", "its"})
_QUOTES = frozenset({'"', "'", "\u201c", "\u201d", "\u2018", "\u2019"})


@dataclass(frozen=True)
class Mention:
    """One classified coreference mention.

    ``target`` is the character span a placeholder replaces (the name without title or
    possessive 's, the pronoun, the gender noun; the whole mention for "other"); ``key`` is
    the gender placeholder key for it ("name", "pro-subj", ..., "gaw"; "" for "other");
    ``article`` is the span of "a"/"an" directly before a gender noun; ``gender`` comes from
    a pronoun, a gender noun or, for a name, a gendered title before it ("Mr.").
    """

    start: int
    end: int
    kind: str
    gender: str | None
    target: tuple[int, int]
    key: str
    article: tuple[int, int] | None = None


def _title(token: Token) -> str:
    return token.lower_.rstrip(".")


def _pronoun_case(token: Token, gender: str, wordlists: Wordlists) -> str | None:
    """The pronoun's case: the form decides when it is unambiguous (he, him, hers, himself),
    the parse decides between det/poss ("his") and obj/det ("her")."""
    forms = wordlists.pronouns[gender]
    cases = [c for c, form in forms.items() if form == token.lower_]
    if len(cases) == 1:
        return cases[0]
    morph = token.morph
    if "Yes" in morph.get("Reflex"):
        parsed = "refl"
    elif "Nom" in morph.get("Case"):
        parsed = "subj"
    elif "Yes" in morph.get("Poss") or token.tag_ == "PRP$":
        attached = (token.dep_ == "poss" and token.head.i > token.i
                    and token.head.pos_ in _NOMINAL)
        parsed = "det" if attached else "poss"
    elif "Acc" in morph.get("Case"):
        parsed = "obj"
        if token.head.i > token.i and token.head.pos_ in ("NOUN", "PROPN"):
            return None  # tagged an object but attached to a noun after it: unsure
    else:
        return None
    return parsed if parsed in cases else None


def generic_pronoun(token: Token, gender: str, wordlists: Wordlists) -> bool:
    """A pronoun paired with one of the other gender, "his or her", "he/she", "he (or
    she)", "s/he": nobody in particular."""
    doc = token.doc
    if token.i + 2 < len(doc) and doc[token.i + 1].text == "/" and token.lower_ == "s":
        return True
    for step in (1, -1):
        i, seen_link = token.i + step, False
        while 0 <= i < len(doc) and abs(i - token.i) <= 3:
            word = doc[i].lower_
            if word in _LINKS or word in ("(", ")"):
                seen_link = seen_link or word in _LINKS
            elif seen_link and wordlists.gender_of_pronoun(doc[i].text) not in (None, gender):
                return True
            else:
                break
            i += step
    return "/" in token.text or token.lower_ in ("s/he", "(s)he")


def _is_gendered(token: Token, wordlists: Wordlists) -> bool:
    return (wordlists.gender_of_pronoun(token.text) is not None
            or wordlists.gender_of_noun(token.text) is not None
            or _title(token) in GENDERED_TITLES)


def _is_name_token(token: Token, person_tokens: set[str]) -> bool:
    """Part of a PERSON entity, or a capitalised word that is part of one elsewhere in the
    text, or a capitalised proper noun that NER did not call a place, group, date or number
    (the small pipeline often misses or mislabels a lone first name)."""
    if token.ent_type_ == "PERSON":
        return True
    if not token.text[:1].isupper():
        return False
    return token.lower_ in person_tokens or (token.pos_ == "PROPN"
                                           and token.ent_type_ in _NAME_LIKE_ENTS)


def _other(span: Span) -> Mention:
    return Mention(span.start_char, span.end_char, OTHER, None,
                   (span.start_char, span.end_char), "")


def classify(span: Span, person_tokens: set[str], wordlists: Wordlists) -> Mention:
    """Classify one mention (a token-aligned span) as a name, pronoun, gender noun or other."""
    start, end = span.start_char, span.end_char
    tokens = list(span)
    if len(tokens) == 1 and (g := wordlists.gender_of_pronoun(tokens[0].text)):
        tok = tokens[0]
        case = _pronoun_case(tok, g, wordlists)
        after = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
        if (case is None or generic_pronoun(tok, g, wordlists)
                or (after is not None and after.tag_ == "POS")):  # "her's"
            return _other(span)
        return Mention(start, end, PRONOUN, g, (tok.idx, tok.idx + len(tok)), f"pro-{case}")

    root = span.root
    if (root.tag_ in ("NN", "NNP") and root.dep_ != "compound"  # not "the boy band"
            and (g := wordlists.gender_of_noun(root.text))
            and not (root.text[:1].isupper() and not root.is_sent_start)  # "DEVIL MAN"
            and not any(t.i != root.i and (_is_gendered(t, wordlists) or t.ent_type_ == "PERSON")
                        for t in tokens)):
        article = None
        before = root.i - 1
        if before >= max(span.start - 1, 0) and root.doc[before].lower_ in _ARTICLES:
            art = root.doc[before]
            article = (art.idx, art.idx + len(art))
        return Mention(start, end, NOUN, g, (root.idx, root.idx + len(root)), "gaw", article)

    known, person_gender = wordlists.person_noun(root.text)
    if known and person_gender is None and root.tag_ == "NN" and root.ent_type_ != "PERSON":
        return Mention(start, end, PERSON, None, (start, end), "")  # "the writer": kept
    if person_gender is not None:
        return _other(span)  # a gendered word that cannot be swapped here ("DEVIL MAN")
    while tokens and tokens[-1].tag_ == "POS":  # possessive 's stays outside the name
        tokens.pop()
    while tokens and (tokens[-1].is_punct or tokens[-1].lower_.rstrip(".") in _SUFFIXES):
        tokens.pop()
    while tokens and _title(tokens[0]) in _TITLES:
        tokens.pop(0)
    if not tokens or not all(_is_name_token(t, person_tokens) for t in tokens):
        return _other(span)
    # titles right before the name, inside the mention or not ("Mr." left out by a backend)
    genders: set[str | None] = set()
    i = tokens[0].i - 1
    while i >= 0 and _title(span.doc[i]) in _TITLES:
        genders.add(GENDERED_TITLES.get(_title(span.doc[i])))
        i -= 1
    genders.discard(None)
    if len(genders) > 1:
        return _other(span)
    doc = span.doc
    last = tokens[-1].i
    while (last + 1 < len(doc) and doc[last + 1].lower_.rstrip(".") in _SUFFIXES
           and doc[last + 1].text[:1].isupper()):
        last += 1  # "Lon Chaney Jr." is one name
    end_char = doc[last].idx + len(doc[last])
    if (doc[last].lower_ in _SUFFIXES and last + 1 < len(doc) and doc[last + 1].text == "."
            and doc[last + 1].idx == end_char):
        end_char += 1  # "Jr" "." split by the tokenizer
    nxt = doc[last + 1] if last + 1 < len(doc) else None
    if nxt is not None and nxt.text in ("'", "\u2019") and nxt.idx == end_char:
        return _other(span)  # "James' music": the possessive would not fit a new name
    article = None
    first = tokens[0]
    if first.i > 0 and doc[first.i - 1].lower_ in _ARTICLES:  # "a Tom Hanks fan"
        art = doc[first.i - 1]
        article = (art.idx, art.idx + len(art))
    target = (first.idx, end_char)
    return Mention(start, end, NAME, genders.pop() if genders else None, target, "name",
                   article)


def person_cluster(doc: Doc, wordlists: Wordlists) -> list[Mention] | None:
    """The filter of Algorithms 1 and 3: the mentions of the one person cluster, or None
    (:func:`screen` says why)."""
    return screen(doc, wordlists)[0]


def screen(doc: Doc, wordlists: Wordlists) -> tuple[list[Mention] | None, str]:
    """The mentions of the one person in ``doc`` and ``""``, or None and the reason.

    A document is kept only when its person is certainly one person (precision first):

    * ``placeholder``: the text already contains placeholder syntax;
    * ``nobody``, ``people``: not exactly one cluster with a name, gendered pronoun or gender
      noun ("the writer" with its "he" is another person); a person named once with a
      role ("the director, Norman Jewison") is not a cluster, as a name named once is not;
    * ``unclear``: a mention of the cluster is none of those, or its case or span is
      unclear (a generic "he (or she)", "her's", "James'", overlapping mentions, a bracket
      inside a name), or a full
      name's first name is plainly of the other gender than its pronouns;
    * ``not a person``: a name of the cluster reads as a title: in quotes, with a
      determiner ("your Nanny"), beside or predicated of a work noun ("the film Haggard",
      "Haggard is one of the funniest movies"), followed by a number or "&"; or no name of
      the cluster has a person-name reading (tagged PERSON or a known first name);
    * ``another name``: a cluster without a name leaves a person name in the text whose
      gender is the cluster's or unknown, to whom its pronouns may refer.
    """
    if PLACEHOLDER.search(doc.text):
        return None, "placeholder"
    person_tokens = {t.lower_ for ent in doc.ents if ent.label_ == "PERSON" for t in ent}
    person_tokens |= {t.lower_ for t in doc if said_to_be_person(t, wordlists)}
    found: list[list[Mention]] = []
    for cluster in clusters_of(doc):
        mentions = []
        for s, e in sorted(cluster):
            span = doc.char_span(s, e, alignment_mode="expand")
            if span is None or not len(span):
                return None, "unclear"
            mentions.append(classify(span, person_tokens, wordlists))
        if any(m.kind in (NAME, PRONOUN, NOUN) for m in mentions):
            found.append(mentions)
    found = [c for c in found if not _named_once(c)]
    if not found:
        return None, "nobody"
    if len(found) > 1:
        return None, "people"
    mentions = found[0]
    if any(m.kind == OTHER for m in mentions):
        return None, "unclear"
    if any(a.end > b.start for a, b in pairwise(mentions)):
        return None, "unclear"
    if any(m.kind == NAME and _BRACKETS & set(doc.text[slice(*m.target)]) for m in mentions):
        return None, "unclear"  # "Muldaur(who": the tokenizer glued a bracket to the name
    if any(a.kind == b.kind == NAME and not doc.text[a.target[1]:b.target[0]].strip()
           for a, b in pairwise(mentions)):
        return None, "unclear"  # "BRITTANY" "SNOW" as two names: one would be filled twice
    if any(m.kind == PRONOUN and doc.text[m.start:m.end].istitle()
           and not _starts_sentence(doc, m) for m in mentions):
        return None, "not a person"  # "Away from Her": a pronoun in a title
    names = [m for m in mentions if m.kind == NAME]
    if _misgendered(doc, mentions):
        return None, "unclear"
    if names and (any(_title_like(doc, m) for m in names)
                  or not any(_person_name(doc, m, wordlists) for m in names)):
        return None, "not a person"
    if not names:
        genders = {m.gender for m in mentions if m.gender is not None}
        if any(g is None or g in genders for g in _other_names(doc, mentions, wordlists)):
            return None, "another name"
        if not any(m.kind in (NOUN, PERSON) for m in mentions[:1]):
            return None, "no antecedent"
    return mentions, ""


#: where a proper noun acts as someone who might be meant: "JJL being ...", "the star is
#: James Gandolfini", "Black invents ..."
_PERSON_ROLES = frozenset({"nsubj", "nsubjpass", "poss", "attr"})
#: entity types no one is: a proper noun tagged one of these is not a candidate
_NO_ONE = frozenset({"DATE", "TIME", "LANGUAGE", "NORP", "MONEY", "PERCENT", "QUANTITY",
                     "ORDINAL", "CARDINAL", "WORK_OF_ART", "EVENT", "LAW"})


def name_between(doc: Doc, mentions: list[Mention], gender: str) -> bool:
    """A proper noun of the cluster's ``gender`` or of none known, acting as a person (a subject,
    possessor or predicate; not a date, a title in capitals, a language...), between one of
    its pronouns and the mention before it ("Ben Affleck was believable, but the real star
    is James Gandolfini. He ..."): the pronoun may be theirs, and the small model's NER
    misses many such names ("Black", "JJL"). A gender template would swap that pronoun;
    a country template, which swaps names only, is not hurt."""
    own = {fold(t.lower_) for m in mentions if m.kind == NAME for t in name_tokens(doc, m)}
    for before, m in pairwise(mentions):
        if m.kind != PRONOUN:
            continue
        for tok in doc.char_span(before.end, m.start, alignment_mode="contract") or ():
            if (tok.pos_ != "PROPN" or tok.dep_ not in _PERSON_ROLES
                    or tok.ent_type_ in _NO_ONE or (tok.text.isupper() and len(tok) > 4)
                    or not tok.text[:1].isupper() or fold(tok.lower_) in own
                    or _title(tok) in _TITLES
                    or any(c.dep_ == "det" and c.lower_ in _NAME_DETERMINERS
                           for c in tok.children)):
                continue
            first = min([tok] + [c for c in tok.children if c.dep_ == "compound"],
                        key=lambda t: t.i)
            guessed = name_gender(first.text, strict=True) if first.i != tok.i else None
            if guessed in (None, gender):
                return True
    return False


def _misgendered(doc: Doc, mentions: list[Mention]) -> bool:
    """A full name whose first name is plainly of the other gender than the cluster's
    pronouns ("Will Smith ... her"): two people merged. One word may be a surname
    ("Dawson ... her"), so only names of two words or more are read."""
    genders = {m.gender for m in mentions if m.kind in (PRONOUN, NOUN)}
    for m in mentions:
        if m.kind != NAME or len(span := name_tokens(doc, m)) < 2:
            continue
        guessed = name_gender(span[0].text, strict=True)
        if guessed is not None and genders - {guessed}:
            return True
    return False


def _starts_sentence(doc: Doc, m: Mention) -> bool:
    """A mention that opens a sentence, a quotation or a bracket: capitals there are no title."""
    tok = name_tokens(doc, m)[0]
    return tok.is_sent_start or tok.i == 0 or doc[tok.i - 1].is_punct or (
        doc[tok.i - 1].text in _QUOTES)


def _named_once(mentions: list[Mention]) -> bool:
    """One name and otherwise ungendered person nouns ("the actor, John Malkovich")."""
    return (sum(m.kind == NAME for m in mentions) == 1
            and all(m.kind in (NAME, PERSON) for m in mentions))


def name_tokens(doc: Doc, m: Mention) -> Span:
    span = doc.char_span(*m.target, alignment_mode="expand")
    assert span is not None
    return span


def _title_like(doc: Doc, m: Mention) -> bool:
    """Evidence that a name mention is a title, not a person (see :func:`screen`)."""
    text, (s, e) = doc.text, m.target
    span = name_tokens(doc, m)
    root, first, last = span.root, span[0], span[-1]
    quoted = (s > 0 and text[s - 1] in _QUOTES) or (
        e < len(text) and text[e] in _QUOTES and text[e:e + 2] not in ("'s", "\u2019s"))
    if quoted and name_gender(first.text) is None:  # "Haggard", not a nickname "Nicole"
        return True
    before = doc[first.i - 1] if first.i else None
    if before is not None and before.lower_ in _NAME_DETERMINERS and before.head == root:
        return True  # "your Nanny", "the Barney"
    if before is not None and before.lemma_.lower() in WORK_NOUNS and (
            before.head == root or root.head == before):
        return True  # "the film Haggard", "the movie Alice"
    after = doc[last.i + 1: last.i + 3]
    if len(after) and after[0].text[:1].isdigit():
        return True  # "Ranma 1/2", "Rocky 2"
    if text[e:e + 1] == "-" and text[e + 1:e + 2].isalpha():
        return True  # "Judy-ism", "Bond-style"
    if (len(after) and after[0].is_alpha and after[0].text[:1].isupper()
            and text[e:e + 1] == " " and not after[0].is_sent_start
            and after[0].pos_ == "PROPN"):
        return True  # "the Joseph Smith Memorial Building": part of a longer name
    if len(span) == 1 and root.tag_ == "JJ" and name_gender(root.text) is None:
        return True  # "Gritty and true", "a Lovecraftian feel"
    if (len(after) == 2 and after[0].text == "&" and after[1].text[:1].isupper()
            and name_gender(after[1].text) is None):
        return True  # "Barney & Friends"
    if root.dep_ == "appos" and root.head.lemma_.lower() in WORK_NOUNS:
        return True
    if (root.dep_ in ("compound", "nmod") and root.head.lemma_.lower() in WORK_NOUNS
            and name_gender(first.text) is None):
        return True  # "the Dragonball Z series", not "an Eddie Murphy classic"
    if any(c.dep_ in ("compound", "appos") and c.lemma_.lower() in WORK_NOUNS
           for c in root.children):
        return True
    if root.dep_ == "nsubj" and root.head.lemma_ == "be":
        for attr in (c for c in root.head.children if c.dep_ == "attr"):
            heads = [attr] + ([t for p in attr.children if p.lower_ == "of"
                               for t in p.children if t.dep_ == "pobj"]
                              if attr.lower_ == "one" else [])
            if any(t.lemma_.lower() in WORK_NOUNS for t in heads):
                return True  # "Haggard is one of the funniest movies"
    return False


def _person_name(doc: Doc, m: Mention, wordlists: Wordlists) -> bool:
    """A person-name reading: tagged PERSON, said to be a person ("the poet, Mishima"), or
    starting with a first name of known gender."""
    span = name_tokens(doc, m)
    return (any(t.ent_type_ == "PERSON" or said_to_be_person(t, wordlists) for t in span)
            or name_gender(span[0].text) is not None)


def _other_names(doc: Doc, mentions: list[Mention], wordlists: Wordlists
                 ) -> list[str | None]:
    """The gender (None: unknown) of each person name outside the cluster's mentions and
    before its last one (a pronoun does not refer ahead to a name): PERSON entities named in
    full or by a first name, capitalised proper nouns that are first names of known gender
    or are said to be a person (:func:`~biasrepro.nlp.coref.said_to_be_person`) or act as
    one (a proper noun as a subject or possessor). A word in capitals of unknown gender
    ("MEMENTO") is not counted."""
    inside = [(m.start, m.end) for m in mentions]
    last = max(m.start for m in mentions)

    def outside(tok: Token) -> bool:
        return tok.idx < last and not any(s <= tok.idx < e for s, e in inside)

    out: list[str | None] = []
    seen: set[int] = set()
    for ent in doc.ents:
        if ent.label_ != "PERSON":
            continue
        words = [t for t in ent if t.text[:1].isupper() and not t.is_punct and outside(t)
                 and _title(t) not in _TITLES and t.tag_ != "POS"]
        if not words:
            continue
        seen.update(t.i for t in ent)
        title = doc[ent.start - 1] if ent.start else None
        if title is not None and _title(title) in GENDERED_TITLES:
            out.append(GENDERED_TITLES[_title(title)])
        elif len(words) > 1:
            out.append(name_gender(words[0].text))
        elif not words[0].text.isupper():  # not a title in capitals ("MEMENTO")
            out.append(None)  # one word may be a surname: "Dawson" is no man
    for tok in doc:
        if tok.i in seen or tok.pos_ != "PROPN" or not tok.text[:1].isupper() or not outside(
                tok):
            continue
        if any(c.dep_ == "det" and c.lower_ in _NAME_DETERMINERS for c in tok.children):
            continue  # "makes the old man into a Job": a figure, not someone named
        if name_gender(tok.text) is not None or said_to_be_person(tok, wordlists) or (
                tok.dep_ in ("nsubj", "nsubjpass", "poss") and not tok.text.isupper()):
            out.append(None)  # "Kubrick again puts his ...", "Almodovar's film"
    return out


#: nouns for a part an actor plays ("the role of Maya")
_ROLE_NOUNS = frozenset({"role", "part", "character", "portrayal", "turn"})
#: a name in brackets right after a name ("Ty (Columbus Short)"), and a name before a bracket
_BRACKETED_AFTER = re.compile(r"\s*,?\s*\(((?:[A-Z][\w.'-]*\s?){1,3})\)")
_BRACKETED_BEFORE = re.compile(r"[A-Z][\w.'-]*\s*\($")
_BRACKETS = frozenset("()[]{}")
#: verbs whose object is the part played ("plays Karen Blixen")
_PLAY_VERBS = frozenset({"play", "portray", "impersonate"})


def plays_a_named_part(doc: Doc, mentions: list[Mention]) -> bool:
    """Whether the person is said to play someone named — "Al Pacino stars as Tony Montana",
    "she plays Karen Blixen", "her role of Maya" — or is the part someone plays ("Dee Snider
    is wonderful as Captain Howdy"), or a name in brackets follows the person's name or the
    person's name is in brackets after another ("Ty (Columbus Short)", "Joey Trotta (Wil
    Wheaton)"). The part and its player are one person in two guises; a swap of one leaves
    the other's name and gender (a woman named in the mutant plays Tony Montana)."""
    inside = [m.target for m in mentions]

    def of_person(tok: Token) -> bool:
        return any(s <= tok.idx < e for s, e in inside)

    text = doc.text
    for m in mentions:
        if m.kind != NAME:
            continue
        s, e = m.target
        after = _BRACKETED_AFTER.match(text, e)
        if (after and after.group(1).split()[0].lower() not in _NAME_DETERMINERS) or (
                _BRACKETED_BEFORE.search(text, 0, s) and text[e:e + 1] == ")"):
            return True  # "Ty (Columbus Short)", "Joey Trotta (Wil Wheaton)"
        root = name_tokens(doc, m).root
        if _is_part(root) and any(t.pos_ == "PROPN" and not of_person(t)
                                  for t in _subjects(root.head)):
            return True  # "Dee Snider is wonderful as Captain Howdy": the person is the part
    for tok in doc:
        if (tok.pos_ != "PROPN" or tok.dep_ == "compound" or not tok.text[:1].isupper()
                or of_person(tok) or any(c.dep_ == "det" for c in tok.children)):
            continue  # "as the Party Crasher" names no one
        if _is_part(tok) and _said_of_person(tok.head, of_person):
            return True
    return False


def _is_part(tok: Token) -> bool:
    """``tok`` names a part played: "as Tony Montana", "the role of Maya", "plays Karen"."""
    head = tok.head
    return (tok.dep_ == "pobj" and (head.lower_ == "as" or (
        head.lower_ == "of" and head.head.lemma_.lower() in _ROLE_NOUNS))) or (
        tok.dep_ == "dobj" and head.lemma_.lower() in _PLAY_VERBS)


def _said_of_person(tok: Token, of_person: Callable[[Token], bool]) -> bool:
    """Whether the phrase above ``tok`` is about the person: a noun on the way up is theirs
    ("her role of Maya"), or the clause it hangs from has them as its subject ("Al Pacino
    turns in a performance as ...", "who plays ...")."""
    up = tok
    while True:
        if any(c.dep_ == "poss" and of_person(c) for c in up.children):
            return True
        if up.pos_ in ("VERB", "AUX") or up.head.i == up.i:
            break
        up = up.head
    return any(of_person(c) for c in _subjects(up))


def _subjects(tok: Token) -> list[Token]:
    """The subjects of the clause ``tok`` hangs from (a relative clause's: the noun it
    modifies, "Jorja Fox, who plays ...")."""
    while tok.pos_ not in ("VERB", "AUX") and tok.head.i != tok.i:
        tok = tok.head
    subjects = [c for c in tok.children if c.dep_ in SUBJECTS]
    if tok.dep_ == "relcl":
        subjects.append(tok.head)
    return subjects


def left_over(doc: Doc, mentions: list[Mention], kinds: tuple[str, ...]) -> bool:
    """Whether a word replaced in the cluster (for mentions of ``kinds``: a name's words,
    capitalised, or the gender noun, in any case and with a determiner or possessor) also
    occurs outside the replaced spans: likely the same person where coreference missed a
    mention ("Webb" after "Marcus Webb", "An uncle" before "The uncle"), which would survive
    unchanged in every mutant. A name
    word also counts written one letter off or with a bare possessive s ("Erick"/"Eric",
    "Husseins"), and so do the initials of a full name ("MJ") and the name in lower case
    where it acts as a name (a proper noun, a subject or possessor: "tony says")."""
    chosen = [m for m in mentions if m.kind in kinds]
    replaced = [m.target for m in chosen]
    words = {kind: {fold(t.lower_) for m in chosen if m.kind == kind
                    for t in doc.char_span(*m.target) or () if t.is_alpha}
             for kind in (NAME, NOUN)}
    initials = {"".join(t.text[0] for t in span).lower() for m in chosen if m.kind == NAME
                if len(span := doc.char_span(*m.target) or ()) > 1}
    for t in doc:
        if any(s <= t.idx < e for s, e in replaced):
            continue
        lower = fold(t.lower_)  # "Almodovar" after "Pedro Almodóvar"
        if lower in words[NOUN] and any(c.dep_ in ("det", "poss") for c in t.children):
            return True  # "An uncle" before "The uncle"; not "the nature of man"
        if t.text[:1].isupper() and (
                lower in words[NAME] or (t.text.isupper() and lower in initials)
                or any(_variant(lower, w) for w in words[NAME] if len(w) >= 4)):
            return True
        if lower in words[NAME] and (t.pos_ == "PROPN" or t.dep_ in (
                "nsubj", "nsubjpass", "poss")):
            return True  # "where tony says": the name in lower case
    return False


def _variant(word: str, name: str) -> bool:
    """``word`` is ``name`` with a bare possessive s, or one letter added, dropped or
    changed ("Husseins", "Erick", "Micheal" is not: two letters)."""
    if word == name + "s":
        return True
    if abs(len(word) - len(name)) > 1 or word == name or len(word) < 4:
        return False
    if len(word) == len(name):
        return sum(a != b for a, b in zip(word, name, strict=True)) == 1
    short, long_ = sorted((word, name), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str | None:
    """``text`` with each (start, end) span replaced, right to left; None if spans overlap."""
    edits = sorted(edits)
    if any(a[1] > b[0] for a, b in pairwise(edits)):
        return None
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text


def name_placeholder(key: str, surface: str) -> str:
    """A name placeholder: ``<KEY>`` for an all-caps name, else ``<key>`` (names fill as
    given, Title case)."""
    written = placeholder(key, surface)
    return written if written == f"<{key.upper()}>" else f"<{key}>"
