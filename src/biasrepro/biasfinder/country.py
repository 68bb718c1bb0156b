"""Country-of-origin templates (BiasFinder §5, Algorithm 3).

The document passes the same person-cluster filter as gender (:func:`person.person_cluster`).
The cluster must have a gendered pronoun, all its pronouns, gender nouns and gendered titles
must agree on one gender g ("inferGender"), and it must contain a person name. Every name
mention becomes ``<male>`` or ``<female>`` (by g; ``<MALE>`` for an all-caps name), filled
with one name per country; pronouns, gender nouns and titles stay verbatim, since the mutant
keeps the person's gender. A name word that also occurs outside the cluster rejects the
document (:func:`person.left_over`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from biasrepro.biasfinder.person import (
    NAME,
    PRONOUN,
    apply_edits,
    left_over,
    name_placeholder,
    person_cluster,
)
from biasrepro.biasfinder.placeholders import Candidate, placeholder

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from biasrepro.biasfinder.wordlists import Wordlists


def country_templates(doc: Doc, wordlists: Wordlists) -> list[Candidate]:
    """Algorithm 3: at most one country-of-origin template for ``doc``."""
    mentions = person_cluster(doc, wordlists)
    if mentions is None or not any(m.kind == PRONOUN for m in mentions):
        return []
    genders = {m.gender for m in mentions if m.gender is not None}
    names = [m for m in mentions if m.kind == NAME]
    if len(genders) != 1 or not names or left_over(doc, mentions, (NAME,)):
        return []
    g = genders.pop()
    text = doc.text
    edits = []
    for m in names:
        s, e = m.target
        edits.append((s, e, name_placeholder(g, text[s:e])))
        if m.article is not None:  # "a <male> fan" agrees with the name filled in
            a0, a1 = m.article
            edits.append((a0, a1, placeholder("a", text[a0:a1])))
    template = apply_edits(text, edits)
    return [] if template is None else [Candidate(template, g)]
