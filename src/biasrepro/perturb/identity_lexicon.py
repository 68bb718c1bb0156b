"""The identity lexicon that counterfactuals are made from (toxicity paper §5.1 and §6.6).

``wordlists/identity_terms.csv`` (columns ``attribute,concept,group,term``) lists aligned
terms: the rows of one (attribute, concept) name the same thing for each group of the
attribute ("blacks"/"whites"/"asians", "church"/"mosque"/"synagogue"), so replacing each term
of one group with the aligned term of another turns a sentence about the first group into one
about the second. Only the configured groups (Table 1, config ``attributes``) are read; each
must have exactly one term per concept, and a term belongs to one concept of its attribute.
A concept whose term is the same for every group is a protected phrase ("white house"): the
swapper matches it like any term and leaves it as it is.

Gender follows the paper's tool instead, AugLy's gendered-words mapping (Papakipos & Bitton
2022; the JSON file at ``augly.utils.GENDERED_WORDS_MAPPING``): :meth:`IdentityLexicon.
gendered_words` returns that mapping with the lexicon's male/female pairs laid over it, so
the pairs both add words AugLy lacks ("actor"/"actress") and correct its entries
("sir" -> "madam", not "mademoiselle"), and with "hers" -> "his", which AugLy lacks. "her"
and "his" are not in it: each has two counterparts that depend on its part of speech
(:data:`AMBIGUOUS_PRONOUNS`), which the swapper decides from POS tags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from biasrepro.errors import ConfigError, DataError
from biasrepro.io import read_json, read_list

IDENTITY_TERMS = Path(__file__).resolve().parents[3] / "wordlists" / "identity_terms.csv"
COLUMNS = ("attribute", "concept", "group", "term")
SIDES = ("marginalized", "non_marginalized")
#: the attribute whose counterfactuals are AugLy's full gender swap, not aligned terms
GENDER = "gender"
GENDER_GROUPS = ("male", "female")
#: pronouns with two counterparts, by Penn tag: PRP$ is the possessive determiner ("her
#: book" -> "his book"), any other tag the object or independent form ("saw her" -> "saw
#: him", "it is his" -> "it is hers"). AugLy maps her -> him and his -> her whatever the tag.
AMBIGUOUS_PRONOUNS: dict[str, dict[str, str]] = {
    "her": {"PRP$": "his", "PRP": "him"},
    "his": {"PRP$": "her", "PRP": "hers"},
}
#: unambiguous pronoun forms AugLy lacks
PRONOUN_FIXES = {"hers": "his"}


def attribute_groups(attributes: Mapping[str, Mapping[str, Sequence[str]]]
                     ) -> dict[str, tuple[str, ...]]:
    """Each attribute's groups, marginalized first, in config order (Table 1).

    An attribute with fewer than two groups has no counterfactuals, and a group may belong
    to one attribute only; both are ConfigErrors.
    """
    out: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for attr, sides in attributes.items():
        groups = tuple(g for side in SIDES for g in (sides.get(side) or ()))
        if len(set(groups)) < 2:
            raise ConfigError(f"attributes.{attr}: a counterfactual needs at least two groups "
                              f"(got {list(groups)})")
        for g in groups:
            if g in seen:
                raise ConfigError(f"attributes.{attr}: group {g!r} is also in attribute "
                                  f"{seen[g]!r}")
            seen[g] = attr
        out[attr] = groups
    if GENDER in out and sorted(out[GENDER]) != sorted(GENDER_GROUPS):
        raise ConfigError(f"attributes.{GENDER}: the gender swap needs exactly the groups "
                          f"{' and '.join(GENDER_GROUPS)} (got {list(out[GENDER])})")
    return out


@dataclass(frozen=True)
class IdentityLexicon:
    """Aligned identity terms: ``terms[attribute][concept][group]`` is a lowercase term."""

    terms: Mapping[str, Mapping[str, Mapping[str, str]]]
    group_order: Mapping[str, tuple[str, ...]]

    @classmethod
    def load(cls, path: str | Path, attributes: Mapping[str, Mapping[str, Sequence[str]]]
             ) -> IdentityLexicon:
        """Read the lexicon CSV (``#`` lines are comments) for the configured ``attributes``.

        Rows of other attributes or groups are skipped. Rows are numbered as data rows
        (comment lines and the header not counted) in errors.
        """
        path = Path(path)
        groups = attribute_groups(attributes)
        df = _read(path)
        terms: dict[str, dict[str, dict[str, str]]] = {a: {} for a in groups}
        first_row: dict[tuple[str, str], int] = {}
        concept_of: dict[tuple[str, str], tuple[str, int]] = {}
        for row, attr, concept, group, term in df.itertuples(name=None):
            if attr not in groups or group not in groups[attr]:
                continue
            aligned = terms[attr].setdefault(concept, {})
            first_row.setdefault((attr, concept), row)
            if group in aligned:
                raise DataError(f"second {group} term for concept {concept!r}", file=path,
                                row=row, column="group")
            earlier = concept_of.get((attr, term))
            if earlier is not None and earlier[0] != concept:
                raise DataError(f"term {term!r} is also in concept {earlier[0]!r} (row "
                                f"{earlier[1]}); a term belongs to one concept", file=path,
                                row=row, column="term")
            concept_of[(attr, term)] = (concept, row)
            aligned[group] = term
        for attr, gs in groups.items():
            listed = {g for aligned in terms[attr].values() for g in aligned}
            for g in gs:
                if g not in listed:
                    raise DataError(f"no {attr} terms for configured group {g!r}", file=path,
                                    column="group")
            for concept, aligned in terms[attr].items():
                row = first_row[(attr, concept)]
                missing = [g for g in gs if g not in aligned]
                if missing:
                    raise DataError(f"{attr} concept {concept!r} has no term for group "
                                    f"{missing[0]!r}", file=path, row=row, column="group")
                distinct = set(aligned.values())
                if 1 < len(distinct) < len(aligned):
                    raise DataError(f"{attr} concept {concept!r}: two groups share a term; "
                                    "terms differ across groups or are all the same (a "
                                    "protected phrase)", file=path, row=row, column="term")
        return cls(terms=terms, group_order=groups)

    def groups(self, attribute: str) -> tuple[str, ...]:
        """The attribute's groups, marginalized first, in config order."""
        if attribute not in self.group_order:
            raise ConfigError(f"attribute {attribute!r} is not in the lexicon's attributes "
                              f"({', '.join(self.group_order)})")
        return self.group_order[attribute]

    def concepts(self, attribute: str) -> tuple[str, ...]:
        """The attribute's concepts in file order."""
        self.groups(attribute)
        return tuple(self.terms[attribute])

    def term(self, attribute: str, concept: str, group: str) -> str:
        """The group's term for a concept."""
        return self.terms[attribute][concept][group]

    def aligned(self, attribute: str, source: str, target: str) -> dict[str, str]:
        """``{source term: target term}`` over the attribute's concepts (protected phrases
        map to themselves)."""
        groups = self.groups(attribute)
        for g in (source, target):
            if g not in groups:
                raise ConfigError(f"{g!r} is not a group of attribute {attribute!r} "
                                  f"({', '.join(groups)})")
        return {a[source]: a[target] for a in self.terms[attribute].values()}

    @cached_property
    def _gendered(self) -> dict[str, str]:
        from augly.utils import GENDERED_WORDS_MAPPING  # the JSON file shipped with AugLy

        mapping = {k.lower(): v.lower() for k, v in read_json(GENDERED_WORDS_MAPPING).items()}
        for aligned in self.terms.get(GENDER, {}).values():
            male, female = (aligned[g] for g in GENDER_GROUPS)
            mapping[male], mapping[female] = female, male
        mapping.update(PRONOUN_FIXES)
        for word in AMBIGUOUS_PRONOUNS:
            mapping.pop(word, None)
        return mapping

    def gendered_words(self) -> dict[str, str]:
        """``{word: counterpart}`` for a full gender swap in both directions: AugLy's mapping,
        the lexicon's gender pairs over it, :data:`PRONOUN_FIXES`; without "her" and "his"
        (see :data:`AMBIGUOUS_PRONOUNS`)."""
        if GENDER not in self.group_order:
            raise ConfigError(f"attribute {GENDER!r} is not in the lexicon's attributes")
        return dict(self._gendered)

    def words(self) -> frozenset[str]:
        """The single words that carry identity: the words in which a concept's aligned terms
        differ ("jew" of "a jew", "african" of "african american"; protected phrases have
        none) and, when gender is configured, every word of the gender swap."""
        out: set[str] = set()
        for attr, concepts in self.terms.items():
            for aligned in concepts.values():
                split = [set(t.split()) for t in aligned.values()]
                shared = set.intersection(*split)
                out.update(w for s in split for w in s - shared)
            if attr == GENDER:
                pairs = [(k, v) for k, v in self.gendered_words().items() if k != v]
                out.update(w for pair in pairs for t in pair for w in t.split())
                out.update(w for forms in AMBIGUOUS_PRONOUNS.items()
                           for w in (forms[0], *forms[1].values()))
        return frozenset(out)


def _read(path: Path) -> pd.DataFrame:
    df = read_list(path, COLUMNS, what="identity lexicon")
    for row, term in df["term"].items():
        if term != " ".join(term.lower().split()):
            raise DataError(f"term {term!r} must be lowercase with single spaces",
                            file=path, row=row, column="term")
    return df
