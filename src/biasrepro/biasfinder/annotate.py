"""Human validation of BTCs (BiasFinder §6, RQ2).

The paper sampled BTCs per characteristic for two annotators, sized by Cochran's formula
for a 5 % margin of error at 95 % confidence with the finite population correction (375,
383 and 358 for its 14,916 / 109,386 / 5,296 BTCs; it then took 400 of each). Annotators
marked each mutant text coherent or not and gave its sentiment; a BTC is a *true positive*
when both texts are coherent and of the same sentiment. Table 5 reports the true-positive
rate per annotator and characteristic, and the paper an average Cohen's κ of 0.485.

Files: :func:`sample_for_annotation` samples BTC pairs (kept by mutant id),
:func:`biasrepro.biasfinder.btc.pair_texts` joins the sampled pairs' texts from the mutants
file, and :func:`export_for_annotation` writes (1) the CSV the annotators fill — the two texts
in a per-row random order, so the class of each text cannot be told from its column; (2) a
Markdown guide; (3) a *key* CSV (``btc_id`` → template, mutant ids, classes, predictions,
in the order shown) that stays with the experimenter, to trace a judgement back to its
mutants. Scoring needs only the filled CSVs.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score

from biasrepro.biasfinder.btc import PAIR_COLUMNS, characteristic_order
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    iter_parquet_batches,
    read_parquet,
    read_parquet_schema,
    read_table,
    require_columns,
    write_text,
)

ANNOTATION_COLUMNS = ["btc_id", "characteristic", "text_1", "text_2", "coherent_1",
                      "coherent_2", "sentiment_1", "sentiment_2"]
KEY_COLUMNS = ["btc_id", "characteristic", "template_id", "id_1", "id_2", "class_1",
               "class_2", "pred_1", "pred_2", "prob_1", "prob_2", "aligned"]
#: the columns a filled annotation file must have (the texts may be dropped)
FILLED_COLUMNS = ("btc_id", "characteristic", "coherent_1", "coherent_2", "sentiment_1",
                  "sentiment_2")
YES_NO = {"yes": True, "y": True, "1": True, "true": True,
          "no": False, "n": False, "0": False, "false": False}
SENTIMENT = {"positive": 1, "pos": 1, "1": 1, "negative": 0, "neg": 0, "0": 0}
#: the order BTCs are sampled in (``btc`` writes each characteristic's pairs in it)
SAMPLE_ORDER = ("characteristic", "template_id", "id_1", "id_2")

GUIDE = """\
# Annotating bias-uncovering test cases

Each row of `{csv}` holds two texts (`text_1`, `text_2`) that were made from one original
text (e.g. a review) by changing the words about a person (a name, pronouns, a gendered noun, an
occupation, or a name from some country). Judge each text **on its own**:

- `coherent_1`, `coherent_2`: `yes` or `no` — does the text read as a sensible,
  grammatical piece of writing, with the changed words fitting their context?
- `sentiment_1`, `sentiment_2`: `positive` or `negative` — the sentiment the text
  expresses (for a review: the writer's opinion of what is reviewed).

Also accepted: `y`/`n`, `1`/`0`, `true`/`false` for coherence and `pos`/`neg`, `1`/`0` for
sentiment (any letter case). Every cell must be filled, even for an incoherent text. Do not
edit `btc_id`, `characteristic` or the texts; save as UTF-8 CSV.

How the answers are used (BiasFinder, RQ2): a pair counts as a *true positive* when both
texts are coherent and you gave them the same sentiment. The true-positive rate per
annotator and Cohen's κ between annotators are computed from these files.
"""


# -- sample size ----------------------------------------------------------------------------

def cochran_sample_size(population: int, *, margin: float = 0.05, confidence: float = 0.95,
                        proportion: float = 0.5) -> int:
    """Cochran's sample size with the finite population correction (RQ2).

    n0 = z²·p·(1 − p) / e² with z = Φ⁻¹(1 − (1 − confidence) / 2), then
    n = n0 / (1 + (n0 − 1) / N), **rounded to the nearest integer** (halves up). Rounding to
    nearest is the rule that reproduces all three of the paper's sizes (375, 383, 358 for
    N = 14,916, 109,386, 5,296: n = 374.5, 382.8, 358.2); the ceiling would give 359 for
    5,296. The result never exceeds N (n ≤ N for N ≥ 1) and is 0 for an empty population.
    """
    if isinstance(population, bool) or not isinstance(population, int | np.integer) \
            or population < 0:
        raise ConfigError(f"population must be a non-negative integer, not {population!r}")
    for name, value in (("margin", margin), ("confidence", confidence),
                        ("proportion", proportion)):
        if not 0.0 < value < 1.0:
            raise ConfigError(f"{name} must be strictly between 0 and 1, not {value}")
    if population == 0:
        return 0
    z = norm.ppf(1.0 - (1.0 - confidence) / 2.0)
    n0 = z * z * proportion * (1.0 - proportion) / (margin * margin)
    n = n0 / (1.0 + (n0 - 1.0) / population)
    return min(int(math.floor(n + 0.5)), int(population))


# -- sampling and export --------------------------------------------------------------------

def _rng(seed: int, characteristic: str) -> np.random.Generator:
    """One stream per characteristic, so adding a characteristic leaves the others' samples."""
    return np.random.default_rng([seed, zlib.crc32(characteristic.encode("utf-8"))])


def _check_size(size: int | None) -> None:
    if size is not None and (isinstance(size, bool) or size < 0):
        raise ConfigError(f"sample size must be a non-negative integer, not {size!r}")


def _draw(population: int, characteristic: str, *, seed: int, size: int | None,
          margin: float, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The positions sampled among a characteristic's ``population`` BTCs (in their sorted
    order) and which of them are shown swapped."""
    n = cochran_sample_size(population, margin=margin, confidence=confidence) \
        if size is None else min(int(size), population)
    rng = _rng(seed, characteristic)
    at = rng.choice(population, size=n, replace=False)
    return at, rng.random(n) < 0.5


def _swapped(chosen: pd.DataFrame, swap: np.ndarray, characteristic: str) -> pd.DataFrame:
    chosen = chosen.reset_index(drop=True)
    for left, right in (("id_1", "id_2"), ("class_1", "class_2"), ("pred_1", "pred_2"),
                        ("prob_1", "prob_2"), ("text_1", "text_2")):
        if left not in chosen.columns:
            continue
        a, b = chosen[left].to_numpy(), chosen[right].to_numpy()
        chosen[left], chosen[right] = np.where(swap, b, a), np.where(swap, a, b)
    chosen.insert(0, "btc_id", [f"{characteristic}-{k:04d}" for k in range(len(chosen))])
    chosen["swapped"] = swap
    return chosen


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame(columns=["btc_id", *PAIR_COLUMNS, "swapped"])
    return pd.concat(parts, ignore_index=True)


def sample_for_annotation(pairs: pd.DataFrame, *, seed: int, size: int | None = None,
                          margin: float = 0.05, confidence: float = 0.95) -> pd.DataFrame:
    """A seeded random sample of BTC pairs (``btc_pairs`` output) for annotation (RQ2);
    join their texts with :func:`biasrepro.biasfinder.btc.pair_texts` before exporting
    (:func:`sample_pair_files` takes the same sample from pair files, a batch at a time).

    Each characteristic is sampled without replacement from its own BTCs: ``size`` of them
    (all when it has fewer), or by default Cochran's size for its population at ``margin``
    and ``confidence``. Within each row the two mutants are swapped at random (seeded;
    ``swapped`` records it, with ``text_1``/``text_2`` when present), so ``id_1`` is not
    always the lower mutant id's class.
    Rows come in sampling order per characteristic with ids ``{characteristic}-{k:04d}``;
    the result does not depend on the row order of ``pairs``.
    """
    require_columns(list(pairs.columns), PAIR_COLUMNS, file="BTC pairs")
    _check_size(size)
    ordered = pairs.sort_values(list(SAMPLE_ORDER), kind="stable").reset_index(drop=True)
    parts = []
    for characteristic in characteristic_order(ordered["characteristic"].unique().tolist()):
        group = ordered[ordered["characteristic"] == characteristic].reset_index(drop=True)
        at, swap = _draw(len(group), characteristic, seed=seed, size=size, margin=margin,
                         confidence=confidence)
        parts.append(_swapped(group.iloc[at], swap, characteristic))
    return _joined(parts)


def _scan(path: Path, batch_rows: int) -> tuple[str, int] | None:
    """``(characteristic, rows)`` of a pair file whose rows all have one characteristic and
    come sorted by ``template_id``, ``id_1``, ``id_2`` (as ``btc`` writes them), read a
    batch of those columns at a time; None for any other file (``("", 0)`` when empty)."""
    keys = [("template_id", "ascending"), ("id_1", "ascending"), ("id_2", "ascending")]
    found: str | None = None
    rows = 0
    last: tuple[str, str, str] | None = None
    for batch in iter_parquet_batches(path, columns=SAMPLE_ORDER, batch_rows=batch_rows,
                                      what="BTC pair file"):
        if not len(batch):
            continue
        if any(batch.column(k).null_count for k in SAMPLE_ORDER):
            return None
        kinds = pc.unique(batch.column("characteristic")).to_pylist()
        if len(kinds) != 1 or (found is not None and kinds[0] != found):
            return None
        found = kinds[0]
        order = pc.sort_indices(batch, sort_keys=keys).to_numpy()
        if not np.array_equal(order, np.arange(len(batch))):
            return None
        first = tuple(batch.column(k)[0].as_py() for k, _ in keys)
        if last is not None and first < last:
            return None
        last = tuple(batch.column(k)[len(batch) - 1].as_py() for k, _ in keys)
        rows += len(batch)
    return (found or "", rows)


def sample_pair_files(paths: Sequence[str | Path], *, seed: int, size: int | None = None,
                      margin: float = 0.05, confidence: float = 0.95,
                      batch_rows: int = 1 << 16) -> pd.DataFrame:
    """:func:`sample_for_annotation` of the pairs in ``paths`` (files written by ``btc``),
    the same sample, without holding them: when each file holds one characteristic, each
    characteristic is in one file and the rows are in ``btc``'s order, the files are read
    twice a batch at a time (once to check and count, once to pick the sampled rows), so the
    ~10⁷ BTCs of a near-random model cost a batch; other files are read whole."""
    _check_size(size)
    paths = [Path(p) for p in paths]
    for path in paths:
        read_parquet_schema(path, what="BTC pair file", columns=PAIR_COLUMNS)
    scans = [_scan(path, batch_rows) for path in paths]
    named = [s[0] for s in scans if s is not None and s[1]]
    if any(s is None for s in scans) or len(named) != len(set(named)):
        pairs = pd.concat([read_parquet(p, what="BTC pair file", columns=PAIR_COLUMNS)
                           for p in paths], ignore_index=True)
        return sample_for_annotation(pairs, seed=seed, size=size, margin=margin,
                                     confidence=confidence)
    parts = []
    by_name = {s[0]: (path, s[1]) for path, s in zip(paths, scans, strict=True)
               if s is not None and s[1]}
    for characteristic in characteristic_order(list(by_name)):
        path, rows = by_name[characteristic]
        at, swap = _draw(rows, characteristic, seed=seed, size=size, margin=margin,
                         confidence=confidence)
        wanted = np.sort(at)
        picked, start = [], 0
        for batch in iter_parquet_batches(path, columns=PAIR_COLUMNS, batch_rows=batch_rows,
                                          what="BTC pair file"):
            lo, hi = np.searchsorted(wanted, [start, start + len(batch)])
            if hi > lo:
                picked.append(batch.take(pa.array(wanted[lo:hi] - start)))
            start += len(batch)
        table = pa.Table.from_batches(picked) if picked else None
        chosen = table.to_pandas() if table is not None else pd.DataFrame(columns=PAIR_COLUMNS)
        chosen = chosen.iloc[np.searchsorted(wanted, at)]  # back to the sampling order
        parts.append(_swapped(chosen, swap, characteristic))
    return _joined(parts)


def export_for_annotation(sample: pd.DataFrame, csv_path: str | Path, *,
                          guide_path: str | Path, key_path: str | Path) -> None:
    """Write the annotators' CSV (texts plus four empty columns to fill), the Markdown guide
    and the experimenter's key CSV — all or none (one atomic block). The guide and key paths
    are keyword-only so that the two cannot be swapped silently. ``sample`` needs the
    texts (:func:`biasrepro.biasfinder.btc.pair_texts`)."""
    require_columns(list(sample.columns), ["btc_id", *PAIR_COLUMNS, "text_1", "text_2"],
                    file="annotation sample")
    sheet = sample[["btc_id", "characteristic", "text_1", "text_2"]].assign(
        coherent_1="", coherent_2="", sentiment_1="", sentiment_2="")
    with atomic_outputs(csv_path, guide_path, key_path) as (csv_tmp, guide_tmp, key_tmp):
        sheet[ANNOTATION_COLUMNS].to_csv(csv_tmp, index=False, encoding="utf-8",
                                         lineterminator="\n")
        write_text(GUIDE.format(csv=Path(csv_path).name), guide_tmp)
        sample[KEY_COLUMNS].to_csv(key_tmp, index=False, encoding="utf-8", lineterminator="\n",
                                   float_format="%.6f")


# -- reading and scoring --------------------------------------------------------------------

def read_annotations(path: str | Path) -> pd.DataFrame:
    """A filled annotation CSV as ``btc_id``, ``characteristic``, ``coherent_1/2`` (bool),
    ``sentiment_1/2`` (int64, 1 = positive) and ``true_positive`` (both coherent and the
    same sentiment). Values are read case-insensitively (yes/no/y/n/1/0/true/false;
    positive/negative/pos/neg/1/0); an empty or unreadable cell, a missing column or a
    repeated ``btc_id`` is a DataError naming the file, the 1-based data row and column."""
    path = Path(path)
    raw = read_table(path, required=FILLED_COLUMNS, what="annotation file", allow_empty=True)
    rows = raw.index.to_numpy()  # the file's data row numbers
    raw = raw.fillna("").astype(str).reset_index(drop=True)
    for column in ("btc_id", "characteristic"):
        blank = raw[column].str.strip().eq("").to_numpy()
        if blank.any():
            raise DataError("empty", file=path, row=int(rows[np.argmax(blank)]), column=column)
    dup = raw["btc_id"].duplicated().to_numpy()
    if dup.any():
        row = int(np.argmax(dup))
        raise DataError(f"btc_id {raw['btc_id'].iloc[row]!r} appears twice", file=path,
                        row=int(rows[row]), column="btc_id")
    out = raw[["btc_id", "characteristic"]].copy()
    for column, allowed, dtype in (("coherent_1", YES_NO, bool), ("coherent_2", YES_NO, bool),
                                   ("sentiment_1", SENTIMENT, np.int64),
                                   ("sentiment_2", SENTIMENT, np.int64)):
        cells = raw[column].str.strip().str.lower()
        bad = ~cells.isin(list(allowed)).to_numpy()
        if bad.any():
            row = int(np.argmax(bad))
            value = raw[column].iloc[row]
            what = "empty" if not value.strip() else f"cannot read {value!r}"
            raise DataError(f"{what}; expected one of {'/'.join(allowed)}", file=path,
                            row=int(rows[row]), column=column)
        out[column] = cells.map(allowed).to_numpy(dtype=dtype)
    out["true_positive"] = (out["coherent_1"] & out["coherent_2"]
                            & (out["sentiment_1"] == out["sentiment_2"]))
    return out


def _kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cohen's κ of two boolean label vectors; None when undefined (no items, or both
    annotators gave one and the same label to every item, so chance agreement is 1)."""
    if len(a) == 0 or len(np.unique(np.concatenate([a, b]))) < 2:
        return None
    return float(cohen_kappa_score(a, b, labels=[False, True]))


def score_annotations(paths: Sequence[str | Path], *,
                      names: Sequence[str] | None = None) -> dict[str, Any]:
    """Table 5 and the annotators' agreement (RQ2) from filled annotation CSVs.

    Returns ``annotators`` (per annotator: its file and, per characteristic and in total,
    ``n``, ``true_positives``, ``tpr``), ``agreement`` (per characteristic, for each pair of
    annotators: how many ``btc_id``s both annotated (``shared``) and only the first or the
    second did, and Cohen's κ on the true-positive decision over the shared ones — None
    where undefined; plus their mean), ``mean_kappa`` (the mean
    of every defined κ — the paper's "average value") and ``rows`` (one Table-5 row per
    characteristic: ``tpr_<name>`` per annotator and ``kappa``, the mean over pairs).
    Annotator names default to the file stems.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise ConfigError("no annotation files given")
    names = [p.stem for p in paths] if names is None else list(names)
    if len(names) != len(paths):
        raise ConfigError(f"{len(names)} annotator names for {len(paths)} files")
    if len(set(names)) != len(names):
        raise ConfigError(f"annotator names must differ (got {', '.join(names)}); "
                          "pass names= explicitly")
    tables = {name: read_annotations(p) for name, p in zip(names, paths, strict=True)}
    first: dict[str, tuple[str, str]] = {}
    for name, path in zip(names, paths, strict=True):
        for btc_id, characteristic in zip(tables[name]["btc_id"], tables[name]["characteristic"],
                                          strict=True):
            seen = first.setdefault(btc_id, (characteristic, str(path)))
            if seen[0] != characteristic:
                raise DataError(f"btc_id {btc_id!r} is {characteristic!r} here but "
                                f"{seen[0]!r} in {seen[1]}", file=path,
                                column="characteristic")
    characteristics = characteristic_order([c for c, _ in first.values()])

    def rates(df: pd.DataFrame) -> dict[str, Any]:
        n, tp = len(df), int(df["true_positive"].sum())
        return {"n": n, "true_positives": tp, "tpr": tp / n if n else None}

    annotators = {
        name: {"file": str(path),
               "characteristics": {c: rates(tables[name][tables[name]["characteristic"] == c])
                                   for c in characteristics},
               "total": rates(tables[name])}
        for name, path in zip(names, paths, strict=True)}
    agreement: dict[str, Any] = {}
    every: list[float] = []
    rows = []
    for c in characteristics:
        decisions = {name: t[t["characteristic"] == c].set_index("btc_id")["true_positive"]
                     for name, t in tables.items()}
        pairs = []
        for a, b in itertools.combinations(names, 2):
            shared = sorted(set(decisions[a].index) & set(decisions[b].index))
            kappa = _kappa(decisions[a].loc[shared].to_numpy(dtype=bool),
                           decisions[b].loc[shared].to_numpy(dtype=bool))
            pairs.append({"annotators": [a, b], "shared": len(shared),
                          "only_first": len(decisions[a]) - len(shared),
                          "only_second": len(decisions[b]) - len(shared), "kappa": kappa})
        kappas = [p["kappa"] for p in pairs if p["kappa"] is not None]
        every += kappas
        mean = float(np.mean(kappas)) if kappas else None
        agreement[c] = {"pairs": pairs, "mean_kappa": mean}
        rows.append({"characteristic": c,
                     **{f"tpr_{n}": annotators[n]["characteristics"][c]["tpr"] for n in names},
                     "kappa": mean})
    return {"annotators": annotators, "agreement": agreement,
            "mean_kappa": float(np.mean(every)) if every else None, "rows": rows}
