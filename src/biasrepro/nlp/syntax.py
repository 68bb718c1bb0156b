"""Facts of the dependency parse that the rule backend (:mod:`biasrepro.nlp.coref`) and the
learned resolver (:mod:`biasrepro.nlp.resolver`) both read: a first name's gender
(gender-guesser), a name without accents, Hobbs' tree search within a sentence, and binding
between clause mates.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.tokens import Token

#: dependency labels of a subject
SUBJECTS = frozenset({"nsubj", "nsubjpass"})
#: gender-guesser's answers mapped to a gender (andy and unknown give none)
GUESSED = {"male": "male", "mostly_male": "male", "female": "female", "mostly_female": "female"}


def fold(word: str) -> str:
    """``word`` without accents, as a name may be written either way ("Almodóvar",
    "Almodovar")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word)
                   if not unicodedata.combining(c))


@cache
def _detector() -> Any:
    from gender_guesser.detector import Detector

    return Detector(case_sensitive=False)


def name_gender(first_name: str, *, strict: bool = False) -> str | None:
    """``male``/``female`` when gender-guesser calls the first name (mostly) one gender;
    with ``strict``, only when it calls it one gender ("Toni" is mostly male: None)."""
    answer = _detector().get_gender(first_name)
    if strict and answer.startswith("mostly"):
        return None
    return GUESSED.get(answer)


def hobbs_rank(candidate: Token, pronoun: Token) -> tuple[int, int, int]:
    """Where Hobbs' tree search meets ``candidate`` when it climbs from ``pronoun`` within
    one sentence: the first ancestor of the pronoun whose subtree holds the candidate
    (nearer first), then the candidate's depth below it (breadth first), then its position
    (left to right). "He mumbles through the role of an architect and his speech ..."
    proposes "He" before "architect"."""
    for level, node in enumerate(pronoun.ancestors):
        if node.left_edge.i <= candidate.i <= node.right_edge.i:
            depth, tok = 0, candidate
            while tok.i != node.i and tok.head.i != tok.i:
                depth, tok = depth + 1, tok.head
            return (level, depth, candidate.i)
    return (len(list(pronoun.ancestors)) + 1, 0, candidate.i)


def clause_head(tok: Token) -> Token:
    """The verb whose subject binds ``tok``: its own, or for a clause without a subject
    ("shoots him, believing him to be ...", "wants to love him") the one it hangs from."""
    while tok.pos_ not in ("VERB", "AUX") and tok.head.i != tok.i:
        tok = tok.head
    while (tok.dep_ in ("advcl", "xcomp", "acl") and tok.head.i != tok.i
           and not any(c.dep_ in SUBJECTS for c in tok.children)):
        tok = tok.head
    return tok


#: relative pronouns, which stand for the noun their clause modifies
RELATIVES = frozenset({"who", "whom", "that", "which"})
#: the argument positions binding is about (a possessive "his" may be its clause's subject)
ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "iobj", "dative", "pobj"})


def relative(clause: Token, deps: frozenset[str] | set[str]) -> Token | None:
    """The relative pronoun of a relative clause in one of the positions ``deps``."""
    if clause.dep_ != "relcl":
        return None
    return next((c for c in clause.children if c.lower_ in RELATIVES and c.dep_ in deps),
                None)


def relative_subject(noun: Token, pronoun: Token) -> Token | None:
    """The subject relative pronoun standing for ``noun`` in a relative clause of it that
    holds ``pronoun`` ("a performer [who bonds ... his art]"), for Hobbs' search, which
    meets that subject before the objects of the clause."""
    for clause in (c for c in noun.children if c.dep_ == "relcl"):
        if clause.left_edge.i <= pronoun.i <= clause.right_edge.i:
            return relative(clause, SUBJECTS)
    return None


def clause_mates(candidate: Token, pronoun: Token) -> bool:
    """Binding: an object pronoun (not a reflexive, not a possessive) cannot refer to the
    subject of its own clause ("Nobody comes close to her", "the director should thank
    her"); in a relative clause, a pronoun argument cannot refer to the noun whose relative
    pronoun is another argument of that clause ("a boss who hates him", "a planter whom
    she barely knows")."""
    clause = clause_head(pronoun)
    if (pronoun.dep_ in ("dobj", "iobj", "dative", "pobj")
            and candidate.dep_ in SUBJECTS and candidate.head == clause):
        return True
    return (pronoun.dep_ in ARGUMENTS and clause.head == candidate
            and relative(clause, ARGUMENTS - {pronoun.dep_}) is not None)
