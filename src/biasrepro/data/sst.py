"""The SST sentiment-fairness set (Gero et al. 2023), used in the toxicity paper's appendix.

The published CSV has a leading unnamed index column, a trailing empty column, mojibake
("BÃ©art") and rows whose ``sentence`` holds an unquoted comma, which shifts their later
fields one to the right (in the real file: ids 114, 231, 343 and 636). Such rows are
repaired by joining the surplus fields back into the sentence; mojibake is undone with
``ftfy.fix_encoding`` (which touches nothing else). The text keeps SST's tokenisation
("is n't", "-LRB-").

Binarisation: ``label = 1`` when the SST sentiment value is **strictly above 0.5**. On the
real file this gives the appendix's positive ratios, 0.61 for the 190 sentences about women
(117/190 = 0.616) and 0.50 for the 272 about men (136/272); ``>= 0.5`` would give 0.63 and
0.52.

Outputs in ``out_dir``: ``fairness.parquet`` with ``id`` (str, the leading index), ``text``,
``sentiment`` (float64), ``label`` (int64), ``gender`` ('female' from ``femm``, 'male' from
``masc``), ``A1``..``A3`` (int64, each annotator's 0/1 judgement that the sentiment targets
that gender) and ``agreement`` (int64, how many of the three said yes); and ``stats.json``
(n, share and positive ratio per gender; the ids of repaired and of mojibake-fixed rows).
"""

from __future__ import annotations

import logging
from pathlib import Path

import ftfy
import pandas as pd

from biasrepro.errors import DataError
from biasrepro.io import (
    atomic_outputs,
    check_delimiter,
    check_range,
    check_text,
    check_unique,
    iter_records,
    numeric,
    open_input,
    reject_rows,
    require_columns,
    require_file,
    write_json,
    write_parquet,
)

log = logging.getLogger(__name__)

GENDERS = {"femm": "female", "masc": "male"}
ANNOTATORS = ("A1", "A2", "A3")
REQUIRED = ("sentence", "label", "gender", *ANNOTATORS, "agreement")
POSITIVE_ABOVE = 0.5
INDEX_COLUMN = "(unnamed index)"  # how messages name the header's empty first column


def prepare(path: Path, *, out_dir: Path) -> None:
    """Read, repair and validate the SST fairness CSV; write ``fairness.parquet`` and stats.

    Reading happens inside the atomic block: on bad input nothing is written and an earlier
    run's outputs stay as they were.
    """
    path, out_dir = Path(path), Path(out_dir)
    with atomic_outputs(out_dir / "fairness.parquet", out_dir / "stats.json") as (table, js):
        out, stats = _build(path)
        write_parquet(out, table)
        write_json(stats, js)
    log.info("sst: %d sentences (%s); repaired rows %s -> %s", len(out),
             ", ".join(f"{g} {s['n']}" for g, s in stats["genders"].items()),
             stats["repaired_rows"], out_dir)


def _build(path: Path) -> tuple[pd.DataFrame, dict]:
    """The output table and statistics of the SST fairness CSV at ``path``."""
    df, repaired = _read(path)
    text = df["sentence"].map(ftfy.fix_encoding)  # mojibake only; quotes etc. stay as written
    fixed = df.loc[text != df["sentence"], "id"].tolist()
    sentiment = numeric(df["label"], file=path, column="label")
    check_range(sentiment, 0, 1, file=path, column="label", allow_missing=False)
    reject_rows(~df["gender"].isin(list(GENDERS)), df["gender"], "gender must be masc or femm",
                file=path, column="gender")
    judgements = {}
    for name in ANNOTATORS:
        judgements[name] = numeric(df[name], file=path, column=name)
        reject_rows(~judgements[name].isin([0, 1]), df[name], "must be 0 or 1", file=path,
                    column=name)
    agreement = numeric(df["agreement"], file=path, column="agreement")
    reject_rows(~agreement.isin([0, 1, 2, 3]), df["agreement"], "must be 0, 1, 2 or 3",
                file=path, column="agreement")

    out = pd.DataFrame({
        "id": df["id"],
        "text": text,
        "sentiment": sentiment,
        "label": (sentiment > POSITIVE_ABOVE).astype("int64"),
        "gender": df["gender"].map(GENDERS),
        "agreement": agreement.astype("int64"),
        **{name: judgements[name].astype("int64") for name in ANNOTATORS},
    }).reset_index(drop=True)
    stats = {
        "n": len(out),
        "binarisation": f"label = sentiment > {POSITIVE_ABOVE}",
        "genders": {
            g: {"n": len(rows), "share": len(rows) / len(out),
                "positive_ratio": float(rows["label"].mean())}
            for g, rows in out.groupby("gender", sort=True)
        },
        "repaired_rows": repaired,
        "mojibake_fixed_rows": fixed,
    }
    return out, stats


def _read(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The CSV as strings (index = 1-based data rows) and the ids of repaired rows."""
    require_file(path)
    with open_input(path) as f:
        records = list(iter_records(f, file=path, delimiter=","))
    header = records[0][1] if records else []
    if not header:
        raise DataError("file is empty", file=path)
    check_delimiter(header, file=path, delimiter=",", row=None)
    trailing = header[-1] == ""
    named = header[:-1] if trailing else header
    if named[0] != "":
        raise DataError("expected the leading unnamed index column (the header starts with "
                        f"{named[0]!r})", file=path, column=named[0])
    require_columns(named, REQUIRED, file=path)
    if len(records) == 1:
        raise DataError("the file holds a header but no data rows", file=path)
    at = named.index("sentence")
    rows, repaired = [], []
    for row, fields in records[1:]:
        if fields in ([], [""]):
            continue  # a blank line
        if trailing and len(fields) > len(named) and fields[-1] == "":
            fields = fields[:-1]
        extra = len(fields) - len(named)
        if extra < 0:
            raise DataError(f"expected {len(named)} fields, found {len(fields)}", file=path,
                            row=row, column=named[len(fields)])
        if extra:
            # an unquoted comma inside the sentence: join the pieces back together
            fields = [*fields[:at], ",".join(fields[at:at + extra + 1]),
                      *fields[at + extra + 1:]]
            repaired.append(fields[0])
            log.warning("%s, row %d: unquoted comma in 'sentence' repaired", path, row)
        rows.append(fields)
    df = pd.DataFrame(rows, columns=["id", *named[1:]], index=pd.RangeIndex(1, len(rows) + 1))
    reject_rows(df["id"].str.strip() == "", df["id"], "id is empty", file=path,
                column=INDEX_COLUMN)
    check_unique(df["id"], file=path, column=INDEX_COLUMN)
    check_text(df["sentence"], file=path, column="sentence")
    return df, repaired
