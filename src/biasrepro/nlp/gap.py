"""Coreference backends scored on GAP (Webster et al., TACL 2018), as GAP's own scorer does.

GAP pairs an ambiguous gendered pronoun with two names from a Wikipedia snippet; each name
is labelled as the pronoun's antecedent or not (both may be FALSE: "Neither"). BiasFinder's
gender templates start from coreference clusters, so a backend that resolves feminine
pronouns worse than masculine ones makes templates come disproportionately from reviews
about men; GAP measures exactly that.

* :func:`read_gap` reads a GAP TSV (``ID Text Pronoun Pronoun-offset A A-offset A-coref B
  B-offset B-coref URL``; offsets are character offsets into Text) and refuses bad rows with
  a :class:`~biasrepro.errors.DataError` naming the file, the data row, the ID and the column.
* :func:`score` is the core: examples and one ``(A, B)`` decision per example give the
  counts and scores of ``gap_scorer.py``. Each of A and B is one binary decision (gold TRUE
  and predicted TRUE: a true positive; FALSE/TRUE: false positive; TRUE/FALSE: false
  negative; FALSE/FALSE: true negative; a missing decision, None, counts as a false negative
  whatever the gold label, as the official scorer counts a missing system row); the counts
  are kept overall and per pronoun gender; precision, recall and F1 (in percent, 0 when
  undefined) are those of the positive decisions; the bias B is F1 feminine / F1 masculine
  (None when either is 0) and O is the overall F1. So an example of "Neither" counts only
  through its false positives.
* :func:`predict_from_clusters` reads the decisions off a backend's clusters
  (:mod:`biasrepro.nlp.coref`): a name is the predicted antecedent when one cluster holds a
  mention overlapping the pronoun and another of its mentions overlapping the name.
* :func:`evaluate` parses the texts, runs a cluster backend (``clusters(docs)``) or calls any
  ``predict(examples) -> [(bool, bool), ...]`` (a resolver that scores the given candidate
  pairs), and scores; :func:`write_report` writes ``gap_scores.json`` and ``gap_scores.md``
  with GAP's published test-set baselines (``published/gap.csv``) beside.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from biasrepro.errors import DataError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

log = logging.getLogger(__name__)

#: the columns of a GAP file, in order (URL may be missing: it is not scored)
COLUMNS = ("ID", "Text", "Pronoun", "Pronoun-offset", "A", "A-offset", "A-coref", "B",
           "B-offset", "B-coref", "URL")
REQUIRED = COLUMNS[:-1]
MASCULINE, FEMININE, OVERALL = "masculine", "feminine", "overall"
#: the pronoun -> its gender; GAP's own list (constants.py) lacks the reflexives
PRONOUN_GENDER = {**dict.fromkeys(("he", "him", "his", "himself"), MASCULINE),
                  **dict.fromkeys(("she", "her", "hers", "herself"), FEMININE)}
PUBLISHED = Path(__file__).resolve().parents[3] / "published" / "gap.csv"
PUBLISHED_COLUMNS = ("paper", "table_id", "row", "column", "value", "unit", "source", "note")
#: the published table's metric columns, in display order
METRICS = ("M", "F", "B", "O")
JSON_NAME, MD_NAME = "gap_scores.json", "gap_scores.md"

Span = tuple[int, int]
Prediction = tuple[bool | None, bool | None]


@dataclass(frozen=True)
class GapExample:
    """One GAP row: a pronoun and two candidate names, each with its character offset."""

    id: str
    text: str
    pronoun: str
    pronoun_offset: int
    a: str
    a_offset: int
    a_coref: bool
    b: str
    b_offset: int
    b_coref: bool
    url: str = ""

    @property
    def gender(self) -> str:
        """``masculine`` or ``feminine``, from the pronoun (checked by :func:`read_gap`)."""
        return PRONOUN_GENDER[self.pronoun.lower()]

    @property
    def pronoun_span(self) -> Span:
        return self.pronoun_offset, self.pronoun_offset + len(self.pronoun)

    @property
    def a_span(self) -> Span:
        return self.a_offset, self.a_offset + len(self.a)

    @property
    def b_span(self) -> Span:
        return self.b_offset, self.b_offset + len(self.b)


# -- reading --------------------------------------------------------------------------------


def _offset(value: str, *, file: Path, row: int, column: str, where: str) -> int:
    text = value.strip()
    if not text.lstrip("-").isdigit():
        raise DataError(f"offset {value!r} is not an integer{where}", file=file, row=row,
                        column=column)
    number = int(text)
    if number < 0:
        raise DataError(f"offset {number} is negative{where}", file=file, row=row,
                        column=column)
    return number


def _coref(value: str, *, file: Path, row: int, column: str, where: str) -> bool:
    label = value.strip().upper()
    if label not in ("TRUE", "FALSE"):
        raise DataError(f"expected TRUE or FALSE, not {value!r}{where}", file=file, row=row,
                        column=column)
    return label == "TRUE"


def _located(text: str, value: str, offset: int, *, file: Path, row: int, column: str,
             where: str) -> None:
    """``value`` must be non-empty and be what ``text`` holds at ``offset``."""
    if not value:
        raise DataError(f"empty value{where}", file=file, row=row, column=column)
    found = text[offset:offset + len(value)]
    if found != value:
        shown = found if len(found) <= 40 else found[:37] + "..."
        raise DataError(f"the text at offset {offset} is {shown!r}, not {value!r}{where}",
                        file=file, row=row, column=f"{column}-offset")


def read_gap(path: str | Path) -> list[GapExample]:
    """The examples of a GAP TSV, every field checked.

    Refused, each with one DataError naming the file, the 1-based data row (header not
    counted), the example's ID and the column: a missing column, an empty file or one without
    data rows, an empty or repeated ID, empty text, an offset that is not a non-negative
    integer, a pronoun or name that the text does not hold at its offset, a coref label other
    than TRUE/FALSE (any letter case), a pronoun that is not he/him/his/himself or
    she/her/hers/herself (any letter case).
    """
    from biasrepro.io import read_table

    path = Path(path)
    frame = read_table(path, required=REQUIRED, delimiter="\t", what="GAP file")
    seen: dict[str, int] = {}
    out = []
    for row, rec in zip(frame.index, frame.to_dict("records"), strict=True):
        example_id = str(rec["ID"]).strip()
        if not example_id:
            raise DataError("empty ID", file=path, row=row, column="ID")
        if example_id in seen:
            raise DataError(f"ID {example_id!r} repeated (first in row {seen[example_id]})",
                            file=path, row=row, column="ID")
        seen[example_id] = row
        where = f" (ID {example_id})"
        text = str(rec["Text"])
        if not text.strip():
            raise DataError(f"text is empty{where}", file=path, row=row, column="Text")
        values: dict[str, Any] = {}
        for column in ("Pronoun", "A", "B"):
            value = str(rec[column])
            offset = _offset(str(rec[f"{column}-offset"]), file=path, row=row,
                             column=f"{column}-offset", where=where)
            _located(text, value, offset, file=path, row=row, column=column, where=where)
            values[column] = (value, offset)
        pronoun = values["Pronoun"][0]
        if pronoun.lower() not in PRONOUN_GENDER:
            raise DataError(f"pronoun {pronoun!r} is not a masculine (he, him, his, himself) "
                            f"or feminine (she, her, hers, herself) pronoun{where}",
                            file=path, row=row, column="Pronoun")
        out.append(GapExample(
            id=example_id, text=text, pronoun=pronoun, pronoun_offset=values["Pronoun"][1],
            a=values["A"][0], a_offset=values["A"][1],
            a_coref=_coref(str(rec["A-coref"]), file=path, row=row, column="A-coref",
                           where=where),
            b=values["B"][0], b_offset=values["B"][1],
            b_coref=_coref(str(rec["B-coref"]), file=path, row=row, column="B-coref",
                           where=where),
            url=str(rec.get("URL") or "")))
    return out


# -- scoring --------------------------------------------------------------------------------


@dataclass
class Counts:
    """Binary decisions of one group, scored as GAP does (percent, 0 when undefined)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, gold: bool, predicted: bool | None) -> None:
        if predicted is None or (gold and not predicted):
            self.fn += 1
        elif gold:
            self.tp += 1
        elif predicted:
            self.fp += 1
        else:
            self.tn += 1

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float:
        return 100.0 * self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass
class GapScores:
    """GAP's scorecard: counts and P/R/F1 overall and per pronoun gender, B and O."""

    overall: Counts = field(default_factory=Counts)
    masculine: Counts = field(default_factory=Counts)
    feminine: Counts = field(default_factory=Counts)
    #: examples scored, in all and per gender
    n: int = 0
    n_masculine: int = 0
    n_feminine: int = 0

    @property
    def m(self) -> float:
        return self.masculine.f1

    @property
    def f(self) -> float:
        return self.feminine.f1

    @property
    def o(self) -> float:
        return self.overall.f1

    @property
    def bias(self) -> float | None:
        """F1 feminine / F1 masculine; None (GAP prints '-') when either is 0."""
        return self.f / self.m if self.m and self.f else None

    def group(self, name: str) -> Counts:
        return {OVERALL: self.overall, MASCULINE: self.masculine, FEMININE: self.feminine}[name]

    def as_dict(self) -> dict[str, Any]:
        return {"M": self.m, "F": self.f, "B": self.bias, "O": self.o, "n": self.n,
                "n_masculine": self.n_masculine, "n_feminine": self.n_feminine,
                OVERALL: self.overall.as_dict(), MASCULINE: self.masculine.as_dict(),
                FEMININE: self.feminine.as_dict()}

    def line(self) -> str:
        """One line: M, F, B and O as GAP's scorecard rounds them."""
        bias = "-" if self.bias is None else f"{self.bias:.2f}"
        return f"M {self.m:.1f}  F {self.f:.1f}  B {bias}  O {self.o:.1f}  (n={self.n})"


def _decision(value: Any, *, example: str, which: str) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # numpy bools too
        return bool(value)
    raise DataError(f"prediction {which} for example {example} is {value!r}, not a bool "
                    "(or None for no decision)")


def score(examples: Sequence[GapExample], predictions: Sequence[Prediction]) -> GapScores:
    """GAP's scores of one ``(A, B)`` decision per example (True: the name is the pronoun's
    antecedent; None: no decision, a false negative)."""
    if len(predictions) != len(examples):
        raise DataError(f"{len(predictions)} predictions for {len(examples)} GAP examples")
    out = GapScores()
    for example, pair in zip(examples, predictions, strict=True):
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise DataError(f"prediction for example {example.id} is {pair!r}, not a pair "
                            "(A, B)") from None
        a = _decision(a, example=example.id, which="A")
        b = _decision(b, example=example.id, which="B")
        gender = example.gender
        out.n += 1
        if gender == MASCULINE:
            out.n_masculine += 1
        else:
            out.n_feminine += 1
        for counts in (out.overall, out.group(gender)):
            counts.add(example.a_coref, a)
            counts.add(example.b_coref, b)
    return out


# -- predicting from clusters ---------------------------------------------------------------


def overlaps(x: Span, y: Span) -> bool:
    """Whether two character ranges (end exclusive) share a character; touching ones do not."""
    return x[0] < y[1] and y[0] < x[1]


def _linked(clusters: Sequence[Sequence[Span]], pronoun: Span, name: Span) -> bool:
    for cluster in clusters:
        spans = [(int(s), int(e)) for s, e in cluster]
        if any(overlaps(p, pronoun) and overlaps(n, name)
               for p in spans for n in spans if p != n):
            return True
    return False


def predict_from_clusters(example: GapExample, clusters: Sequence[Sequence[Span]]
                          ) -> tuple[bool, bool]:
    """Whether A and B are the pronoun's antecedent by the clusters of ``example.text``: a
    name is when one cluster holds a mention overlapping the pronoun's characters and another
    mention overlapping the name's (one mention covering both, "her sister Mary", does not
    make "her" Mary)."""
    pronoun = example.pronoun_span
    return (_linked(clusters, pronoun, example.a_span),
            _linked(clusters, pronoun, example.b_span))


class ClusterBackend(Protocol):
    """What :mod:`biasrepro.nlp.coref`'s backends offer."""

    name: str

    def clusters(self, docs: Sequence[Doc]) -> list[list[list[Span]]]: ...


Predictor = Callable[[Sequence[GapExample]], Sequence[Prediction]]


def predict_with_backend(examples: Sequence[GapExample], backend: ClusterBackend,
                         nlp: Language, *, batch_size: int = 64) -> list[tuple[bool, bool]]:
    """Parse the texts with ``nlp.pipe``, cluster them with ``backend`` and read off the
    decisions."""
    docs = list(nlp.pipe([e.text for e in examples], batch_size=batch_size))
    clusters = backend.clusters(docs)
    if len(clusters) != len(docs):
        raise DataError(f"the {getattr(backend, 'name', 'coreference')} backend returned "
                        f"clusters for {len(clusters)} of {len(docs)} texts")
    return [predict_from_clusters(e, c) for e, c in zip(examples, clusters, strict=True)]


def evaluate(examples: Sequence[GapExample], backend: ClusterBackend | Predictor,
             nlp: Language | None = None, *, batch_size: int = 64) -> GapScores:
    """Score ``backend`` on ``examples``: a coreference backend (it has ``clusters``; the
    texts are parsed with ``nlp``), or any callable ``predict(examples)`` returning one
    ``(A, B)`` decision per example."""
    if hasattr(backend, "clusters"):
        if nlp is None:
            raise ValueError("a coreference backend needs the spaCy pipeline (nlp)")
        predictions: Sequence[Prediction] = predict_with_backend(
            examples, backend, nlp, batch_size=batch_size)  # type: ignore[arg-type]
    elif callable(backend):
        predictions = list(backend(examples))
    else:
        raise TypeError(f"not a coreference backend or a predictor: {backend!r}")
    return score(examples, predictions)


# -- published baselines and the report -----------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """One published system's M, F, B, O (a row group of ``published/gap.csv``)."""

    table_id: str
    system: str
    values: dict[str, float]
    source: str
    note: str


def read_published(path: str | Path = PUBLISHED) -> list[Baseline]:
    """The published GAP systems in file order, each with all of M, F, B and O."""
    from biasrepro.io import read_table

    path = Path(path)
    frame = read_table(path, required=PUBLISHED_COLUMNS, delimiter=",",
                       what="published GAP baselines")
    systems: dict[tuple[str, str], dict[str, Any]] = {}
    for row, rec in zip(frame.index, frame.to_dict("records"), strict=True):
        rec = {k: str(rec[k] or "").strip() for k in PUBLISHED_COLUMNS}
        for key in ("paper", "table_id", "row", "column", "value", "source"):
            if not rec[key]:
                raise DataError("empty value", file=path, row=row, column=key)
        if rec["column"] not in METRICS:
            raise DataError(f"unknown metric {rec['column']!r} (expected one of "
                            f"{', '.join(METRICS)})", file=path, row=row, column="column")
        try:
            value = float(rec["value"])
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise DataError(f"{rec['value']!r} is not a number", file=path, row=row,
                            column="value")
        source = re.sub(rf", column {re.escape(rec['column'])}$", "", rec["source"])
        system = systems.setdefault((rec["table_id"], rec["row"]),
                                    {"values": {}, "source": source, "notes": []})
        if rec["column"] in system["values"]:
            raise DataError(f"{rec['row']} {rec['column']} is published twice", file=path,
                            row=row)
        system["values"][rec["column"]] = value
        if rec["note"] and rec["note"] not in system["notes"]:
            system["notes"].append(rec["note"])
    out = []
    for (table_id, name), system in systems.items():
        missing = [m for m in METRICS if m not in system["values"]]
        if missing:
            raise DataError(f"{name} lacks {', '.join(missing)}", file=path)
        out.append(Baseline(table_id, name, system["values"], system["source"],
                            "; ".join(system["notes"])))
    return out


def _bias_sentence(result: GapScores) -> str:
    bias = result.bias
    if bias is None:
        return ("B is undefined here (an F1 of 0 for one gender); below 1 it would mean the "
                "backend resolves feminine pronouns worse, so BiasFinder's gender templates "
                "would come disproportionately from reviews about men.")
    if bias < 1:
        reading = (f"B = {bias:.2f} is below 1: this backend resolves feminine pronouns worse "
                   "than masculine ones, so BiasFinder's gender templates, which need the "
                   "pronouns resolved, would come disproportionately from reviews about men.")
    elif bias > 1:
        reading = (f"B = {bias:.2f} is above 1: this backend resolves masculine pronouns worse "
                   "than feminine ones, so BiasFinder's gender templates, which need the "
                   "pronouns resolved, would come disproportionately from reviews about "
                   "women (below 1 would mean the opposite, templates mostly from reviews "
                   "about men).")
    else:
        reading = (f"B = {bias:.2f}: both genders' pronouns are resolved equally well (below "
                   "1 would mean feminine pronouns are resolved worse, so BiasFinder's gender "
                   "templates would come disproportionately from reviews about men).")
    return reading


def _pct(value: float) -> str:
    return f"{value:.1f}"


def render_markdown(result: GapScores, backend_name: str, data_file: str,
                    baselines: Sequence[Baseline]) -> str:
    """The report as Markdown: our scores, the published test-set baselines, B read out."""
    bias = "-" if result.bias is None else f"{result.bias:.2f}"
    cells = [backend_name]
    for group in (MASCULINE, FEMININE, OVERALL):
        c = result.group(group)
        cells += [_pct(c.precision), _pct(c.recall), _pct(c.f1)]
    cells += [bias, str(result.n)]
    lines = [
        "# Coreference on GAP",
        "",
        f"Backend `{backend_name}` on `{data_file}`: {result.n} examples "
        f"({result.n_masculine} masculine, {result.n_feminine} feminine pronouns), "
        f"{2 * result.n} decisions (A and B). Precision, recall and F1 in percent over the "
        "positive decisions (a name is the pronoun's antecedent), as GAP's gap_scorer.py "
        "computes them; B = F1 feminine / F1 masculine; O = F1 overall.",
        "",
        "| backend | M P | M R | M F1 | F P | F R | F F1 | O P | O R | O F1 | B | n |",
        "|---|" + "---:|" * 11,
        "| " + " | ".join(cells) + " |",
        "",
        "| group | tp | fp | fn | tn |",
        "|---|---:|---:|---:|---:|",
    ]
    for group in (MASCULINE, FEMININE, OVERALL):
        c = result.group(group)
        lines.append(f"| {group} | {c.tp} | {c.fp} | {c.fn} | {c.tn} |")
    lines += ["", _bias_sentence(result), ""]
    if baselines:
        lines += [
            "## Published baselines (GAP test set)",
            "",
            "Webster et al. (2018) report these on GAP's *test* split; the row above is "
            f"scored on `{data_file}`, so the comparison is indicative only.",
            "",
            "| system | M | F | B | O | source | note |",
            "|---|---:|---:|---:|---:|---|---|",
        ]
        for b in baselines:
            v = b.values
            lines.append(f"| {b.system} | {v['M']:.1f} | {v['F']:.1f} | {v['B']:.2f} | "
                         f"{v['O']:.1f} | {b.source} | {b.note} |")
        lines.append("")
    return "\n".join(lines)


def write_report(result: GapScores, out_dir: str | Path, backend_name: str,
                 data_file: str | Path, *, baselines: Sequence[Baseline] | None = None
                 ) -> tuple[Path, Path]:
    """Write ``OUT/gap_scores.json`` and ``OUT/gap_scores.md`` together, atomically; the
    published baselines default to ``published/gap.csv``. Returns both paths."""
    from biasrepro.io import atomic_outputs, dumps_json, sha256_file, write_text

    if baselines is None:
        baselines = read_published()
    data_file = Path(data_file)
    sha256 = sha256_file(data_file) if data_file.is_file() else None
    doc = {"backend": backend_name, "data_file": str(data_file), "data_sha256": sha256,
           "scorer": "GAP gap_scorer.py semantics (percent; B = F/M, None when undefined)",
           "scores": result.as_dict(),
           "published_test_set": [{"table_id": b.table_id, "system": b.system, **b.values,
                                   "source": b.source, "note": b.note} for b in baselines]}
    out = Path(out_dir)
    paths = (out / JSON_NAME, out / MD_NAME)
    with atomic_outputs(*paths) as (tmp_json, tmp_md):
        write_text(dumps_json(doc), tmp_json)
        write_text(render_markdown(result, backend_name, str(data_file), baselines) + "\n",
                   tmp_md)
    return paths
