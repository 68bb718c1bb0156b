"""LitBank coreference (Bamman, Lewke & Mansoor, LREC 2020) as spaCy documents with gold chains.

LitBank's ``coref/tsv/`` folder holds, per fiction excerpt, ``NAME.txt`` (one sentence a line,
tokens separated by single spaces) and ``NAME.ann`` (tab-separated lines; ``MENTION id
start_sentence start_token end_sentence end_token text entity_type PROP|NOM|PRON`` with
0-based positions and inclusive ends, and ``COREF mention_id chain`` putting a mention in a
chain; ``COP`` and ``APPOS`` links are not needed here). :func:`read_litbank` reads a folder
and refuses malformed lines with a :class:`~biasrepro.errors.DataError` naming the file, line
and field; :func:`to_doc` runs a spaCy pipeline on the gold tokenisation, so the learned
resolver (:mod:`biasrepro.nlp.resolver`) computes its features on the same kind of parse it
will see on reviews, with gold mentions mapped to token indices exactly.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from biasrepro.errors import DataError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

#: the mention kinds of LitBank's last MENTION field
KINDS = frozenset({"PROP", "NOM", "PRON"})


@dataclass(frozen=True)
class Mention:
    """A gold mention: tokens ``start`` to ``end`` (exclusive) of the whole excerpt."""

    id: str
    start: int
    end: int
    entity: str  # PER, LOC, FAC, GPE, ORG, VEH
    kind: str  # PROP, NOM, PRON


@dataclass(frozen=True)
class LitbankDoc:
    name: str
    sentences: tuple[tuple[str, ...], ...]
    mentions: tuple[Mention, ...]
    chains: dict[str, str]  # mention id -> chain name

    @property
    def words(self) -> list[str]:
        return [w for s in self.sentences for w in s]


def _read_sentences(path: Path) -> tuple[tuple[str, ...], ...]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read LitBank text ({e})", file=path) from None
    return tuple(tuple(w for w in line.split(" ") if w) for line in text.split("\n"))


def _read_doc(txt: Path) -> LitbankDoc:
    sentences = _read_sentences(txt)
    ann = txt.with_suffix(".ann")
    if not ann.is_file():
        raise DataError("LitBank text without its annotation file "
                        f"({ann.name} is missing)", file=txt)
    starts, total = [], 0
    for s in sentences:
        starts.append(total)
        total += len(s)
    mentions, chains = [], {}
    for line_no, line in enumerate(ann.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if fields[0] == "MENTION":
            if len(fields) < 9:
                raise DataError(f"a MENTION line needs 9 fields, got {len(fields)}",
                                file=ann, row=line_no)
            try:
                s1, t1, s2, t2 = (int(f) for f in fields[2:6])
            except ValueError:
                raise DataError("MENTION positions are not integers: "
                                f"{' '.join(fields[2:6])!r}", file=ann, row=line_no) from None
            if fields[8] not in KINDS:
                raise DataError(f"mention kind {fields[8]!r} is not PROP, NOM or PRON",
                                file=ann, row=line_no, column="kind")
            if not (0 <= s1 <= s2 < len(sentences) and 0 <= t1 < len(sentences[s1])
                    and 0 <= t2 < len(sentences[s2])):
                raise DataError(f"mention {fields[1]} ({s1}:{t1}-{s2}:{t2}) lies outside "
                                f"{txt.name}'s {len(sentences)} sentences", file=ann,
                                row=line_no)
            start, end = starts[s1] + t1, starts[s2] + t2 + 1
            if end <= start:
                raise DataError(f"mention {fields[1]} ends before it starts", file=ann,
                                row=line_no)
            mentions.append(Mention(fields[1], start, end, fields[7], fields[8]))
        elif fields[0] == "COREF":
            if len(fields) < 3:
                raise DataError("a COREF line needs a mention id and a chain", file=ann,
                                row=line_no)
            chains[fields[1]] = fields[2]
    known = {m.id for m in mentions}
    unknown = sorted(set(chains) - known)
    if unknown:
        raise DataError(f"COREF names mentions that have no MENTION line: "
                        f"{', '.join(unknown[:5])}", file=ann)
    return LitbankDoc(txt.stem, sentences, tuple(mentions), chains)


def read_litbank(directory: str | Path) -> list[LitbankDoc]:
    """Every ``*.txt``/``*.ann`` pair of ``directory``, sorted by name."""
    directory = Path(directory)
    texts = sorted(directory.glob("*.txt"))
    if not texts:
        raise DataError("no LitBank excerpts (*.txt with *.ann beside) in the folder",
                        file=directory)
    return [_read_doc(t) for t in texts]


def digest(directory: str | Path) -> str:
    """sha256 over the folder's ``.txt`` and ``.ann`` files (names and bytes), for cards."""
    h = hashlib.sha256()
    for path in sorted(Path(directory).glob("*.[ta][xn][tn]")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def to_doc(doc: LitbankDoc, nlp: Language) -> Doc:
    """Run ``nlp`` on LitBank's own tokens and sentences: token ``i`` of the result is word
    ``i`` of the excerpt, so gold mentions index it directly."""
    from spacy.tokens import Doc as SpacyDoc

    words = doc.words
    starts = [k == 0 for s in doc.sentences for k in range(len(s))]
    out = SpacyDoc(nlp.vocab, words=words, spaces=[True] * len(words), sent_starts=starts)
    for _, component in nlp.pipeline:
        out = component(out)
    return out
