"""Counterfactual datasets: the balanced fairness set (§5.1) and the perturbed training set (§6.6).

* :func:`balanced_fairness_set`: every row of a fairness set about one group *g* of an
  attribute, followed by its counterfactual into each other group of the attribute, so each
  group holds the same source sentences and so the same positive ratio (the paper's 55,476
  rows with equal ratios per attribute). Rows in which no term of *g* could be replaced are
  dropped with their counterfactuals: kept, they would sit in one group only.
* :func:`perturbed_training_set`: a training set with, for each row about exactly one group
  *g* of an attribute, its counterfactual into each other group *h*, so every group appears
  in the same contexts ("for the identity of Black people, in addition to the subset of
  sentences that are targeted at Black people, we created perturbations from the sentences
  that are targeted at White and Asian identities"). The counterfactual moves *g*'s identity
  value to *h* (*g* becomes 0) and takes ``signature`` *h*. A table with a single group
  column instead of identity columns (IMDB-gendered: ``gender``) is handled with
  ``identity_column``. Which rows are perturbed is :data:`SELECTIONS` (config
  ``perturbation.select``): the single-identity rows above, or every row with an identity
  label of the attribute, or every row whose text names a group of the attribute, labelled
  or not (the paper counterfactualises "each sentence" of the training set).

Counterfactual ids are ``f"{source id}>{target group}"``; ``source_id`` and
``is_counterfactual`` say where each row came from. The output order is the input's, each
source row followed by its counterfactuals in the attribute's group order (Table 1,
marginalized first), so the same input gives the same output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.errors import ConfigError, DataError
from biasrepro.io import check_fractions
from biasrepro.perturb.identity_lexicon import GENDER, attribute_groups
from biasrepro.perturb.identity_swap import Swapper

Attributes = Mapping[str, Mapping[str, Sequence[str]]]
#: which training rows get counterfactuals (``perturbation.select``): ``single_identity``,
#: rows about exactly one configured identity (by label); ``identity_label``, every row with
#: a label at or above the threshold for a group of the attribute; ``identity_term``, every
#: row whose text holds a term of a group of the attribute, whatever its labels
SELECTIONS = ("single_identity", "identity_label", "identity_term")
BALANCED_COLUMNS = ("id", "text", "label", "identity", "attribute", "source_id",
                    "source_identity", "is_counterfactual")


def balanced_fairness_set(
    original: pd.DataFrame,
    swapper: Swapper,
    attributes: Attributes,
    *,
    identity_column: str = "identity",
    id_column: str = "id",
    label_column: str = "label",
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The balanced fairness set (§5.1) and its statistics.

    ``original`` has one row per text with its single group in ``identity_column`` (Civil
    Comments ``fairness_original``: ``identity``; the SST fairness set: ``gender``). Rows of a
    group in no attribute are dropped. Output columns: :data:`BALANCED_COLUMNS`. Statistics:
    ``{"original": {"n_rows", "n_source_rows", "groups"}, "balanced": {...}, "dropped":
    {"no_identity_term": {g: n}, "no_attribute": {g: n}}}`` where ``n_source_rows`` counts
    the rows of an attribute's group (original) or the source rows kept (balanced) and
    ``groups`` maps a group to ``{"n", "n_positive", "positive_ratio"}``.
    """
    groups = attribute_groups(attributes)
    _require(original, [id_column, "text", label_column, identity_column])
    ids = _ids(original, id_column)
    labels = _labels(original, label_column, ids)
    texts = _texts(original, ids)
    identity = original[identity_column].astype("string").fillna("<missing>").to_numpy(str)
    attribute_of = {g: a for a, gs in groups.items() for g in gs}

    kept = np.zeros(len(original), dtype=bool)
    swapped: dict[int, list[tuple[str, str]]] = {}
    no_term: dict[str, int] = {}
    for attr, gs in groups.items():
        for g in gs:
            rows = np.flatnonzero(identity == g)
            others, results, ok = _swap_all(swapper, texts[rows], attr, g, gs)
            no_term[g] = int((~ok).sum())
            kept[rows[ok]] = True
            for i in np.flatnonzero(ok):
                swapped[int(rows[i])] = [(h, r[i][0]) for h, r in zip(others, results,
                                                                       strict=True)]
    records = []
    for row in np.flatnonzero(kept):
        g = identity[row]
        attr = attribute_of[g]
        records.append((ids[row], texts[row], labels[row], g, attr, ids[row], g, False))
        for h, text in swapped[int(row)]:
            records.append((f"{ids[row]}>{h}", text, labels[row], h, attr, ids[row], g, True))
    out = pd.DataFrame.from_records(records, columns=list(BALANCED_COLUMNS))
    out = out.astype({"id": str, "text": str, "label": "int64", "identity": str,
                      "attribute": str, "source_id": str, "source_identity": str,
                      "is_counterfactual": bool})

    configured = [g for gs in groups.values() for g in gs]
    present = configured + sorted(set(identity) - set(configured))
    no_attribute = {g: int((identity == g).sum()) for g in present if g not in attribute_of}
    stats = {
        "original": {
            "n_rows": len(original),
            "n_source_rows": int(np.isin(identity, configured).sum()),
            "groups": {g: _group_stats(labels[identity == g]) for g in present},
        },
        "balanced": {
            "n_rows": len(out),
            "n_source_rows": int(kept.sum()),
            "groups": {g: _group_stats(out["label"].to_numpy()[out["identity"].to_numpy() == g])
                       for g in configured},
        },
        "dropped": {"no_identity_term": no_term,
                    "no_attribute": {g: n for g, n in no_attribute.items() if n}},
    }
    return out, stats


def perturbed_training_set(
    train: pd.DataFrame,
    swapper: Swapper,
    attributes: Attributes,
    *,
    identities: Sequence[str],
    identity_threshold: float,
    identity_column: str | None = None,
    select: str = "single_identity",
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The training set plus counterfactuals of its identity rows (§6.6), and statistics.

    ``select`` (:data:`SELECTIONS`) other than ``single_identity`` goes to
    :func:`_perturb_every_mention`; what follows describes ``single_identity``.

    By default a row's group is its ``signature`` (the identities of ``identities`` at or
    above ``identity_threshold``, joined by "+") and a row is a member of *g* for the
    statistics when ``train[g] >= identity_threshold``. With ``identity_column`` (a table
    without identity columns, such as IMDB-gendered's ``gender``) the group and the
    membership come from that column, and ``identities``/``identity_threshold`` are not used.
    A row gets counterfactuals when its group belongs to an attribute and every direction
    replaced at least one term. All columns are copied (``text_raw``, if present, stays the
    source's); added: ``source_id`` and ``is_counterfactual``. Statistics: ``{"before":
    {"n_rows", "groups"}, "after": {...}, "counterfactuals": {attribute: n},
    "no_identity_term": {g: n}}``, ``groups`` as in :func:`balanced_fairness_set`.
    """
    groups = attribute_groups(attributes)
    if select not in SELECTIONS:
        raise ConfigError(f"perturbation.select: {select!r} is not one of "
                          f"{', '.join(SELECTIONS)}")
    if select != "single_identity" and identity_column is not None:
        raise ConfigError(f"perturbation.select: {select!r} needs identity columns; a table "
                          f"with one group column ({identity_column!r}) is single_identity")
    if identity_column is None:
        missing = [g for gs in groups.values() for g in gs if g not in identities]
        if missing:
            raise ConfigError(f"attribute group {missing[0]!r} is not in 'identities'")
        _require(train, ["id", "text", "label", "signature", *identities])
        check_fractions(train, identities)
        group_of = train["signature"].astype("string").fillna("").to_numpy(str)
        stat_groups = list(identities)
        if select != "single_identity":
            return _perturb_every_mention(train, swapper, groups, identities=identities,
                                          threshold=identity_threshold, select=select)
    else:
        _require(train, ["id", "text", "label", identity_column])
        group_of = train[identity_column].astype("string").fillna("").to_numpy(str)
        stat_groups = [g for gs in groups.values() for g in gs]
    texts, base = _source_rows(train)
    frames = [base.assign(_row=np.arange(len(train)), _rank=0)]
    n_cf = {attr: 0 for attr in groups}
    no_term: dict[str, int] = {}
    for attr, gs in groups.items():
        for g in gs:
            rows = np.flatnonzero(group_of == g)
            others, results, ok = _swap_all(swapper, texts[rows], attr, g, gs)
            no_term[g] = int((~ok).sum())
            for h, r in zip(others, results, strict=True):
                cf = base.iloc[rows[ok]].copy()
                cf["text"] = [text for (text, _), good in zip(r, ok, strict=True) if good]
                cf["id"] = cf["source_id"] + f">{h}"
                cf["is_counterfactual"] = True
                if identity_column is None:
                    cf[h] = cf[g]
                    cf[g] = 0.0
                    cf["signature"] = h
                else:
                    cf[identity_column] = h
                frames.append(cf.assign(_row=rows[ok], _rank=1 + gs.index(h)))
                n_cf[attr] += len(cf)
    out = _in_source_order(frames)

    def summary(frame: pd.DataFrame) -> dict[str, Any]:
        y = frame["label"].to_numpy()
        return {"n_rows": len(frame), "groups": {
            g: _group_stats(y[_members(frame, g, identity_column, identity_threshold)])
            for g in stat_groups}}

    stats = {"before": summary(train), "after": summary(out), "counterfactuals": n_cf,
             "no_identity_term": no_term}
    return out, stats


def _perturb_every_mention(train: pd.DataFrame, swapper: Swapper,
                           groups: Mapping[str, tuple[str, ...]], *, identities: Sequence[str],
                           threshold: float, select: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Counterfactuals of every row about one or more groups of an attribute (§6.6).

    A row's groups *G* in an attribute are those it has a label for (``identity_label``:
    value >= ``threshold``) or whose terms its text holds (``identity_term``); a row may be in
    several attributes. For each other group *h* of the attribute (every group, when *G* has
    two or more), the counterfactual replaces the terms of every group of *G* but *h* by
    *h*'s, as the paper describes ("replacing any references to White or Asian identity names
    with Black identity names"). Gender is AugLy's full swap, one counterfactual per row with
    the male and female values exchanged. A counterfactual gets the highest value of *G* and
    *h* in *h* and 0 in the rest of *G*; ``signature`` is recomputed. A row gets none for the
    attribute unless every one of them replaced a term. Output order: each source row, then
    its counterfactuals by attribute and group order. Statistics as the single-identity case,
    plus ``select`` and ``selected`` (rows selected per attribute).
    """
    texts, base = _source_rows(train)
    values = train[list(identities)].to_numpy(dtype="float64")
    column = {g: identities.index(g) for g in identities}
    frames = [base.assign(_row=np.arange(len(train)), _rank=0)]
    n_cf: dict[str, int] = {}
    selected: dict[str, int] = {}
    no_term: dict[str, int] = {}
    for a, (attr, gs) in enumerate(groups.items()):
        member = _membership(texts, values, column, swapper, attr, gs, threshold, select)
        chosen = member.any(axis=1)
        selected[attr] = int(chosen.sum())
        targets, ok = _targets(texts, member, swapper, attr, gs)
        for j, g in enumerate(gs):
            no_term[g] = int((member[:, j] & chosen & ~ok).sum())
        n_cf[attr] = 0
        for h, (rows, new_texts) in targets.items():
            keep = ok[rows]
            rows, new_texts = rows[keep], [t for t, k in zip(new_texts, keep, strict=True) if k]
            if not len(rows):
                continue
            cf = base.iloc[rows].copy()
            cf["text"] = new_texts
            cf["id"] = cf["source_id"] + f">{h}"
            cf["is_counterfactual"] = True
            moved = values[rows][:, [column[g] for g in gs]]
            if attr == GENDER:  # the full swap exchanges the two groups' values
                cf[list(gs)] = moved[:, ::-1]
            else:
                in_g = member[rows]
                top = np.where(in_g | (np.array(gs) == h), np.nan_to_num(moved, nan=-1.0),
                               -1.0).max(axis=1)
                for j, g in enumerate(gs):
                    if g == h:
                        cf[g] = np.where(top >= 0, top, moved[:, j])
                    else:
                        cf[g] = np.where(in_g[:, j], 0.0, moved[:, j])
            cf["signature"] = _signature(cf, identities, threshold)
            rank = 1 + a * (max(map(len, groups.values())) + 1) + gs.index(h)
            frames.append(cf.assign(_row=rows, _rank=rank))
            n_cf[attr] += len(cf)
    out = _in_source_order(frames)

    def summary(frame: pd.DataFrame) -> dict[str, Any]:
        y = frame["label"].to_numpy()
        return {"n_rows": len(frame), "groups": {
            g: _group_stats(y[_members(frame, g, None, threshold)]) for g in identities}}

    stats = {"select": select, "selected": selected, "before": summary(train),
             "after": summary(out), "counterfactuals": n_cf, "no_identity_term": no_term}
    return out, stats


def _source_rows(train: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """The checked texts of a training table, and the table as the source rows of a
    perturbed set: checked ids and labels, ``source_id`` = ``id``, not counterfactual."""
    ids = _ids(train, "id")
    labels = _labels(train, "label", ids)
    texts = _texts(train, ids)
    base = train.copy()
    base["id"] = ids
    base["label"] = labels
    base["source_id"] = ids
    base["is_counterfactual"] = False
    return texts, base


def _in_source_order(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The source rows and their counterfactuals as one table: each source row (``_row``)
    followed by its counterfactuals in ``_rank`` order; the two ordering columns dropped."""
    return (pd.concat(frames, ignore_index=True)
            .sort_values(["_row", "_rank"], kind="stable")
            .drop(columns=["_row", "_rank"])
            .reset_index(drop=True))


def _membership(texts: np.ndarray, values: np.ndarray, column: Mapping[str, int],
                swapper: Swapper, attribute: str, groups: Sequence[str], threshold: float,
                select: str) -> np.ndarray:
    """rows x groups: whether a row is about each group (by label, or by a term in its text;
    for gender by a word of the full swap, the side read from the labels when both or
    neither say so)."""
    by_label = np.stack([np.nan_to_num(values[:, column[g]], nan=0.0) >= threshold
                         for g in groups], axis=1)
    if select == "identity_label":
        return by_label
    if attribute == GENDER:
        named = np.array([n > 0 for _, n in swapper.swap_many(texts, attribute, groups[0],
                                                              groups[1])], dtype=bool)
        side = by_label.copy()
        # a gendered word but no label: the row is about the group the words name; which one
        # needs no deciding, since the one full swap is its counterfactual either way
        side[named & ~by_label.any(axis=1), 0] = True
        return side & named[:, None]
    out = np.zeros((len(texts), len(groups)), dtype=bool)
    for j, g in enumerate(groups):
        other = next(h for h in groups if h != g)
        out[:, j] = [n > 0 for _, n in swapper.swap_many(texts, attribute, g, other)]
    return out


def _targets(texts: np.ndarray, member: np.ndarray, swapper: Swapper, attribute: str,
             groups: Sequence[str]
             ) -> tuple[dict[str, tuple[np.ndarray, list[str]]], np.ndarray]:
    """Per target group: the rows that get a counterfactual into it and their texts; and per
    row whether every counterfactual it needs replaced at least one term."""
    ok = np.ones(len(texts), dtype=bool)
    out: dict[str, tuple[np.ndarray, list[str]]] = {}
    if attribute == GENDER:
        rows = np.flatnonzero(member.any(axis=1))
        swapped = swapper.swap_many(texts[rows], attribute, groups[0], groups[1])
        ok[rows] = [n > 0 for _, n in swapped]
        first = member[rows].argmax(axis=1)       # the target: the other side of the first group
        for j, h in enumerate(groups):
            pick = first != j
            out[h] = (rows[pick], [t for (t, _), p in zip(swapped, pick, strict=True) if p])
        return out, ok
    for j, h in enumerate(groups):
        sources = member & (np.arange(len(groups)) != j)
        rows = np.flatnonzero(sources.any(axis=1))
        new = texts[rows].copy()
        replaced = np.zeros(len(rows), dtype=np.int64)
        for k, g in enumerate(groups):
            if k == j:
                continue
            idx = np.flatnonzero(sources[rows, k])
            if not len(idx):
                continue
            for i, (t, n) in zip(idx, swapper.swap_many(new[idx], attribute, g, h), strict=True):
                new[i] = t
                replaced[i] += n
        ok[rows[replaced == 0]] = False
        out[h] = (rows, list(new))
    return out, ok


def _signature(frame: pd.DataFrame, identities: Sequence[str], threshold: float) -> np.ndarray:
    """``"+".join(sorted identities at or above the threshold)``, or ``"none"``."""
    members = frame[list(identities)].fillna(0.0).to_numpy() >= threshold
    names = sorted(range(len(identities)), key=lambda i: identities[i])
    return np.array(["+".join(identities[i] for i in names if row[i]) or "none"
                     for row in members], dtype=object)


def _swap_all(swapper: Swapper, texts: np.ndarray, attribute: str, source: str,
              groups: Sequence[str]
              ) -> tuple[list[str], list[list[tuple[str, int]]], np.ndarray]:
    """``texts`` swapped from ``source`` into each other group; ``ok``: every swap replaced
    something."""
    others = [h for h in groups if h != source]
    results = [swapper.swap_many(texts, attribute, source, h) for h in others]
    counts = np.array([[n for _, n in r] for r in results], dtype=np.int64)
    ok = counts.reshape(len(others), len(texts)).min(axis=0) > 0
    return others, results, ok


def _members(frame: pd.DataFrame, group: str, identity_column: str | None,
             threshold: float) -> np.ndarray:
    if identity_column is not None:
        return (frame[identity_column] == group).to_numpy(dtype=bool)
    return (frame[group] >= threshold).fillna(False).to_numpy(dtype=bool)


def _group_stats(labels: np.ndarray) -> dict[str, Any]:
    n, positive = len(labels), int((labels == 1).sum())
    return {"n": n, "n_positive": positive, "positive_ratio": positive / n if n else None}


def _require(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    for column in columns:
        if column not in frame.columns:
            found = ", ".join(repr(str(c)) for c in frame.columns)
            raise DataError(f"missing required column; columns found: {found}", column=column)


def _ids(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = frame[column]
    missing = values.isna().to_numpy()
    bad = missing | values.astype(str).duplicated().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        what = ("id is missing" if missing[row]
                else f"duplicate id {_plain(values.iloc[row])!r}")
        raise DataError(what, row=row + 1, column=column)
    return values.astype(str).to_numpy(dtype=object)


def _labels(frame: pd.DataFrame, column: str, ids: np.ndarray) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = ~values.isin([0, 1]).to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"label must be 0 or 1 (got {_plain(frame[column].iloc[row])!r}, id "
                        f"{ids[row]!r})", row=row + 1, column=column)
    return values.to_numpy(dtype="int64")


def _texts(frame: pd.DataFrame, ids: np.ndarray) -> np.ndarray:
    values = frame["text"]
    bad = ~values.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"text is not a string (got {_plain(values.iloc[row])!r}, id "
                        f"{ids[row]!r})",
                        row=row + 1, column="text")
    return values.to_numpy(dtype=object)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, for messages."""
    return value.item() if isinstance(value, np.generic) else value


def original_fairness_set(frame: pd.DataFrame, attributes: Mapping[str, Any], *,
                          identity_column: str, file: str) -> pd.DataFrame:
    """The rows whose group belongs to one of ``attributes``, in the balanced set's columns."""
    for column in ("id", "text", "label", identity_column):
        if column not in frame.columns:
            raise DataError("missing required column", file=file, column=column)
    attribute_of = {g: a for a, sides in attributes.items() for side in sides.values()
                    for g in side}
    group = frame[identity_column].astype(str)
    rows = frame[group.isin(attribute_of)]
    ids = rows["id"].astype(str)
    return pd.DataFrame({
        "id": ids, "text": rows["text"], "label": rows["label"].astype("int64"),
        "identity": group[rows.index], "attribute": group[rows.index].map(attribute_of),
        "source_id": ids, "source_identity": group[rows.index], "is_counterfactual": False,
    }).reset_index(drop=True)
