"""Summary of the prepared datasets: rows, label balance and per-identity counts.

These are the numbers the toxicity paper reports about its data (§4.1 sizes, the
per-identity counts and toxic ratios behind Figure 3, the SST set's shares in the
appendix), computed from the Parquet files the data stage wrote.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro.errors import DataError
from biasrepro.io import (
    atomic_outputs,
    dumps_json,
    markdown_table,
    read_parquet,
    require_columns,
    write_text,
)
from biasrepro.metrics.dataset_bias import group_counts, overamplification_bias, selection_bias

log = logging.getLogger(__name__)

CC_SPLITS = ("train", "validation", "test")


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    if not path.exists():
        raise DataError("prepared file is missing (run the data stage first)", file=path)
    df = read_parquet(path, what="prepared Parquet file")
    require_columns(list(df.columns), columns, file=path)
    return df


def _rate(n_pos: int, n: int) -> dict[str, Any]:
    return {"n": int(n), "positive": int(n_pos), "positive_ratio": (n_pos / n) if n else None}


def _identity_rates(df: pd.DataFrame, identities: list[str],
                    threshold: float) -> dict[str, dict[str, Any]]:
    """Per identity: rows at or above the threshold (multi-identity rows count for each)."""
    return {g: _rate(c["n_toxic"], c["n"])
            for g, c in group_counts(df, identities, threshold).items()}


def summarize(data_dir: Path, attributes: dict[str, dict[str, list[str]]],
              identities: list[str], identity_threshold: float) -> dict[str, Any]:
    """Collect the summary of ``data_dir`` (``results/data``) as a JSON-ready dict.

    Besides the counts it gives the training split's selection bias (Eq. 4) and
    overamplification bias (Eq. 5, max-normalized) per attribute (toxicity paper §6.3, §6.5).
    """
    out: dict[str, Any] = {"imdb": {}, "civil_comments": {}, "sst": {}}
    for split in ("train", "test"):
        df = _read(data_dir / "imdb" / f"{split}.parquet", ["label"])
        out["imdb"][split] = _rate(int(df["label"].sum()), len(df))
    cc = out["civil_comments"]
    cc["splits"], cc["identities"] = {}, {}
    for split in CC_SPLITS:
        df = _read(data_dir / "civil_comments" / f"{split}.parquet", ["label", *identities])
        cc["splits"][split] = _rate(int(df["label"].sum()), len(df))
        cc["identities"][split] = _identity_rates(df, identities, identity_threshold)
        if split == "train":
            counts = group_counts(df, identities, identity_threshold)
            cc["train_dataset_bias"] = {
                "selection": selection_bias(counts, attributes),
                "overamplification": overamplification_bias(counts, attributes),
            }
    fair = _read(data_dir / "civil_comments" / "fairness_original.parquet", ["label", "identity"])
    cc["fairness_original"] = {
        "all": _rate(int(fair["label"].sum()), len(fair)),
        "identities": {g: _rate(int(fair.loc[fair["identity"] == g, "label"].sum()),
                                int((fair["identity"] == g).sum())) for g in identities},
    }
    sst = _read(data_dir / "sst" / "fairness.parquet", ["label", "gender"])
    out["sst"] = {"all": _rate(int(sst["label"].sum()), len(sst)), "genders": {}}
    for gender in ("female", "male"):
        part = sst[sst["gender"] == gender]
        out["sst"]["genders"][gender] = {**_rate(int(part["label"].sum()), len(part)),
                                         "share": len(part) / len(sst) if len(sst) else None}
    out["attributes"] = attributes
    return out


def to_markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown tables (one per dataset)."""
    rows = [{"dataset": "imdb", "split": s, **v} for s, v in summary["imdb"].items()]
    rows += [{"dataset": "civil_comments", "split": s, **v}
             for s, v in summary["civil_comments"]["splits"].items()]
    rows += [{"dataset": "civil_comments", "split": "fairness_original",
              **summary["civil_comments"]["fairness_original"]["all"]}]
    rows += [{"dataset": "sst", "split": "fairness", **summary["sst"]["all"]}]
    cols = ["dataset", "split", "n", "positive", "positive_ratio"]
    parts = ["# Prepared data\n", "Positive = positive sentiment (IMDB, SST) or toxic "
             "(Civil Comments).\n", markdown_table(rows, cols)]

    ident_rows = []
    for attr, groups in summary["attributes"].items():
        for side in ("marginalized", "non_marginalized"):
            for g in groups[side]:
                row = {"attribute": attr, "group": g, "side": side}
                for split, counts in summary["civil_comments"]["identities"].items():
                    row[f"{split} n"] = counts[g]["n"]
                    row[f"{split} toxic ratio"] = counts[g]["positive_ratio"]
                fair = summary["civil_comments"]["fairness_original"]["identities"][g]
                row["fairness n"], row["fairness toxic ratio"] = fair["n"], fair["positive_ratio"]
                ident_rows.append(row)
    parts += ["\n## Civil Comments per identity\n",
              markdown_table(ident_rows, list(ident_rows[0]) if ident_rows else [])]
    bias = summary["civil_comments"]["train_dataset_bias"]
    bias_rows = [{"attribute": a, "selection (Eq. 4)": v,
                  "overamplification (Eq. 5)": bias["overamplification"][a]["raw"],
                  "overamplification, normalized": bias["overamplification"][a]["normalized"]}
                 for a, v in bias["selection"].items()]
    parts += ["\n## Civil Comments training split: dataset bias\n",
              markdown_table(bias_rows, list(bias_rows[0]) if bias_rows else [])]
    g_rows = [{"gender": g, **v} for g, v in summary["sst"]["genders"].items()]
    parts += ["\n## SST sentiment-fairness set per gender\n",
              markdown_table(g_rows, ["gender", "n", "share", "positive", "positive_ratio"])]
    return "".join(parts)


def write(data_dir: Path, *, attributes: dict[str, Any], identities: list[str],
          identity_threshold: float, out_json: Path, out_md: Path) -> None:
    summary = summarize(Path(data_dir), attributes, identities, identity_threshold)
    with atomic_outputs(out_json, out_md) as (tmp_json, tmp_md):
        write_text(dumps_json(summary), tmp_json)
        write_text(to_markdown(summary), tmp_md)
    log.info("wrote %s and %s", out_json, out_md)
