"""Seed variance: the training-to-metrics matrix's tables across fine-tuning seeds.

Neither paper reports how much its numbers move with the fine-tuning seed, yet a BERT-size
model's fairness gaps move by more than many of the differences the papers interpret. With
several ``seeds`` (config) every fine-tuning, score and table is made once per seed; this
module gathers them:

- per table (each task's gaps, group metrics, Borkan AUCs, SenseScores and correlations;
  classification metrics; BiasFinder's Table 4; the cross-study's correlations and toxicity
  BTCs), every measured cell's mean, sample standard
  deviation (n - 1; empty for one seed), minimum, maximum and the value of each seed;
- the papers' qualitative claims (:data:`CLAIMS`), each checked once per seed and model,
  with the share of seeds in which it holds.

Nothing here is recomputed from predictions: the per-seed tables are read as written.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasrepro.errors import DataError
from biasrepro.fairness import gate

if TYPE_CHECKING:  # pandas and numpy load when a table is read: the workflow imports this
    import pandas as pd

#: per study table: its file beside the fairness report, the columns that name a cell and
#: the measured columns
STUDY_TABLES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "gaps": ("gaps.csv", ("model", "method", "fairness_set", "attribute", "metric"),
             ("value",)),
    "group_metrics": ("group_metrics.csv", ("model", "method", "fairness_set", "group"),
                      ("fpr", "tpr", "auc")),
    "borkan": ("borkan.csv", ("model", "method", "fairness_set", "identity"),
               ("subgroup_auc", "bpsn_auc", "bnsp_auc")),
    "sensescore": ("sensescore.csv", ("model", "method", "attribute", "g", "g_hat"),
                   ("sense_score", "mean_difference", "sense_score_factual")),
    "correlations": ("correlations.csv", ("group", "model", "fairness_set", "x", "y"),
                     ("rho",)),
}
CLASSIFICATION = (("task", "model", "method", "set"), ("accuracy", "f1", "roc_auc"))
BIASFINDER = (("model", "method", "characteristic"),
              ("btc", "btc_rate", "aligned_btc_rate", "templates_with_btc"))
#: the cross-study's tables: its correlations.csv and the toxicity BTCs beside it
CROSS_STUDY: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "correlations": ("correlations.csv", ("task", "fairness_set", "attribute", "x", "y"),
                     ("rho",)),
    "toxicity_btc": ("toxicity_btc.csv", ("model", "method", "attribute"),
                     ("btc", "btc_rate")),
}
#: the columns of every gathered table after its key columns
STAT_COLUMNS = ("measure", "seeds", "mean", "sd", "min", "max")
CLAIM_COLUMNS = ("claim", "source", "statement", "model", "seeds", "holds_in", "share",
                 "per_seed", "note")
GAPS = ("FPR_gap", "TPR_gap", "AUC_gap")
PERTURBED = "downstream-perturbed-data"


@dataclass
class Replicate:
    """One seed's result files (each optional)."""

    seed: int
    toxicity: Path | None = None
    sentiment: Path | None = None
    biasfinder: Path | None = None
    classification: Path | None = None
    cross_study: Path | None = None


PerSeed = Path | Sequence[Path] | None


def per_seed(paths: PerSeed, n: int, option: str) -> list[Path | None]:
    """One file per seed (``None`` for each when the option was not given), or a
    ConfigError naming the option."""
    from biasrepro.errors import ConfigError

    if paths is None:
        return [None] * n
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if len(paths) != n:
        raise ConfigError(f"--{option.replace('_', '-')}: give one file per seed ({n}), "
                          f"got {len(paths)}")
    return [Path(p) for p in paths]


def _csv(path: Path, required: Sequence[str]) -> pd.DataFrame:
    from biasrepro.io import read_csv

    return read_csv(path, required, na_values=[""])


def _classification(path: Path) -> pd.DataFrame:
    from biasrepro.io import read_table

    keys, measures = CLASSIFICATION
    frame = read_table(path, required=(*keys, *measures), what="classification records",
                       allow_empty=True)
    return frame.infer_objects().reset_index(drop=True)


def _tables(rep: Replicate) -> dict[str, tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...]]]:
    """Each table of one replicate: (frame, key columns, measured columns)."""
    out = {}
    for task in ("toxicity", "sentiment"):
        report = getattr(rep, task)
        if report is None:
            continue
        for name, (file, keys, measures) in STUDY_TABLES.items():
            path = Path(report).parent / file
            out[f"{task}_{name}"] = (_csv(path, (*keys, *measures)), keys, measures)
    if rep.classification is not None:
        out["classification"] = (_classification(Path(rep.classification)), *CLASSIFICATION)
    if rep.biasfinder is not None:
        keys, measures = BIASFINDER
        out["biasfinder"] = (_csv(Path(rep.biasfinder), (*keys, *measures)), keys, measures)
    if rep.cross_study is not None:
        for name, (file, keys, measures) in CROSS_STUDY.items():
            path = Path(rep.cross_study).parent / file
            out[f"cross_study_{name}"] = (_csv(path, (*keys, *measures)), keys, measures)
    return out


def _long(frame: pd.DataFrame, keys: Sequence[str], measures: Sequence[str],
          seed: int, where: str) -> pd.DataFrame:
    import pandas as pd
    dup = frame.duplicated(list(keys), keep=False)
    if dup.any():
        row = frame[dup].iloc[0]
        raise DataError(f"two rows for {', '.join(f'{k}={row[k]}' for k in keys)}", file=where)
    long = frame[[*keys, *measures]].melt(id_vars=list(keys), var_name="measure",
                                          value_name="_value")
    long["_value"] = pd.to_numeric(long["_value"], errors="coerce")
    long["seed"] = seed
    return long


def gather(replicates: Sequence[Replicate]) -> dict[str, pd.DataFrame]:
    """Per table, one row per cell and measure: mean, sd, min, max and each seed's value.

    Every replicate must hold the same tables; a cell that one seed lacks is counted over the
    seeds that have it (``seeds``), and NaN values (a gap undefined for that seed) are left
    out of the statistics likewise.
    """
    import numpy as np
    import pandas as pd
    if not replicates:
        raise DataError("no replicate given")
    seeds = [r.seed for r in replicates]
    if len(set(seeds)) != len(seeds):
        raise DataError(f"seeds given twice: {seeds}")
    per_seed = [_tables(r) for r in replicates]
    names = list(per_seed[0])
    for rep, tables in zip(replicates, per_seed, strict=True):
        if list(tables) != names:
            raise DataError(f"seed {rep.seed} has the tables {sorted(tables)}, the first seed "
                            f"{sorted(names)}")
    out = {}
    for name in names:
        _, keys, measures = per_seed[0][name]
        long = pd.concat([_long(t[name][0], keys, measures, r.seed, f"{name} of seed {r.seed}")
                          for r, t in zip(replicates, per_seed, strict=True)],
                         ignore_index=True)
        # only the cells some seed has, in first-seen order (a pivot over the key columns'
        # cross product would add every combination no table holds)
        index = [*keys, "measure"]
        wide = long.set_index([*index, "seed"])["_value"].unstack("seed")
        cells = long[list(keys)].drop_duplicates().itertuples(index=False, name=None)
        present = set(wide.index)
        order = [(*cell, m) for cell in cells for m in measures if (*cell, m) in present]
        wide = wide.reindex(index=pd.MultiIndex.from_tuples(order, names=index),
                            columns=seeds)
        values = wide.to_numpy(dtype=float)
        n = np.sum(~np.isnan(values), axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, np.nansum(values, axis=1) / np.maximum(n, 1), np.nan)
            centred = np.where(np.isnan(values), 0.0, values - mean[:, None])
            sd = np.where(n > 1, np.sqrt((centred ** 2).sum(axis=1) / np.maximum(n - 1, 1)),
                          np.nan)
        lo = np.where(n > 0, np.nanmin(np.where(np.isnan(values), np.inf, values), axis=1),
                      np.nan)
        hi = np.where(n > 0, np.nanmax(np.where(np.isnan(values), -np.inf, values), axis=1),
                      np.nan)
        table = wide.index.to_frame(index=False)
        table["seeds"], table["mean"], table["sd"] = n, mean, sd
        table["min"], table["max"] = lo, hi
        for j, seed in enumerate(seeds):
            table[f"seed_{seed}"] = values[:, j]
        out[name] = table
    return out


# -- the papers' qualitative claims -----------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A qualitative claim of a paper, checked per seed and model by ``check``: True, False,
    or None where this run lacks what it needs."""

    id: str
    source: str
    statement: str
    check: Callable[[Mapping[str, pd.DataFrame], str], bool | None]


def below_floor(tables: Mapping[str, pd.DataFrame]) -> set[tuple[str, str]]:
    """The toxicity ``(model, method)`` pairs the model-works gate failed: no claim is
    judged on them."""
    return gate.failed(tables.get("toxicity_gaps"))


def _mean_gap(tables: Mapping[str, pd.DataFrame], model: str, method: str,
              metrics: Sequence[str], attributes: Sequence[str] | None = None) -> float | None:
    """A method's balanced-set gap of ``metrics``, averaged over attributes (§5.2 on);
    None for a model below the model-works floor."""
    import pandas as pd
    gaps = tables.get("toxicity_gaps")
    if gaps is None or (model, method) in below_floor(tables):
        return None
    sel = gaps[(gaps["model"] == model) & (gaps["method"] == method)
               & (gaps["fairness_set"] == "balanced") & (gaps["metric"].isin(metrics))]
    if attributes is not None:
        sel = sel[sel["attribute"].isin(attributes)]
    values = pd.to_numeric(sel["value"], errors="coerce").dropna()
    return float(values.mean()) if len(values) else None


def _lower(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a < b


def _lowers(method: str, metrics: Sequence[str], than: str = "baseline"):
    def check(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
        return _lower(_mean_gap(tables, model, method, metrics),
                      _mean_gap(tables, model, than, metrics))
    return check


def _downstream_beats_upstream(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
    """Perturbed data against each attribute's upstream SentenceDebias, on that attribute."""
    gaps = tables.get("toxicity_gaps")
    if gaps is None:
        return None
    results = []
    for method in sorted(set(gaps["method"])):
        parts = method.split("-")
        if method.startswith("upstream-sentDebias-") and len(parts) == 3:
            attr = parts[2]
            results.append(_lower(_mean_gap(tables, model, PERTURBED, GAPS, [attr]),
                                  _mean_gap(tables, model, method, GAPS, [attr])))
    results = [r for r in results if r is not None]
    return all(results) if results else None


def _sense_lower(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
    import pandas as pd
    sense = tables.get("toxicity_sensescore")
    if sense is None:
        return None

    def mean(method: str) -> float | None:
        if (model, method) in below_floor(tables):
            return None
        v = pd.to_numeric(sense[(sense["model"] == model) & (sense["method"] == method)][
            "sense_score"], errors="coerce").dropna()
        return float(v.mean()) if len(v) else None
    return _lower(mean(PERTURBED), mean("baseline"))


def _balanced_agree(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
    import pandas as pd
    corr = tables.get("toxicity_correlations")
    if corr is None or model != "all":
        return None
    row = corr[(corr["group"] == "fairness_metrics") & (corr["model"] == "all")
               & (corr["fairness_set"] == "balanced") & (corr["x"] == "FPR_gap")
               & (corr["y"] == "TPR_gap")]
    rho = pd.to_numeric(row["rho"], errors="coerce").dropna()
    return bool(rho.iloc[0] > 0) if len(rho) else None


def _auc_lower(method_prefix: str):
    """Every ``method_prefix*`` toxicity method's test ROC-AUC below the baseline's."""
    def check(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
        cls = tables.get("classification")
        if cls is None:
            return None
        rows = cls[(cls["task"] == "toxicity") & (cls["model"] == model)
                   & (cls["set"] == "test")]
        auc = dict(zip(rows["method"], rows["roc_auc"], strict=True))
        methods = sorted(m for m in auc if m.startswith(method_prefix))
        if "baseline" not in auc or not methods:
            return None
        return all(auc[m] < auc["baseline"] for m in methods)
    return check


def _btc(tables: Mapping[str, pd.DataFrame], model: str, characteristic: str,
         measure: str = "btc") -> float | None:
    """The baseline model's BTC count (``btc``) or rate (``btc_rate``) of a characteristic."""
    import pandas as pd
    bf = tables.get("biasfinder")
    if bf is None:
        return None
    row = bf[(bf["model"] == model) & (bf["method"] == "baseline")
             & (bf["characteristic"] == characteristic)]
    v = pd.to_numeric(row[measure], errors="coerce").dropna()
    return float(v.iloc[0]) if len(v) else None


def _occupation_most(measure: str):
    def check(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
        occ = _btc(tables, model, "occupation", measure)
        others = [_btc(tables, model, c, measure) for c in ("gender", "country")]
        if occ is None or any(o is None for o in others):
            return None
        return all(occ > o for o in others)
    return check


def _gender_over_country(measure: str):
    def check(tables: Mapping[str, pd.DataFrame], model: str) -> bool | None:
        g, c = _btc(tables, model, "gender", measure), _btc(tables, model, "country", measure)
        return None if g is None or c is None else g > c
    return check


CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"perturbed-lowers-{m}", "toxicity §6.6, Table 10",
            f"fine-tuning on perturbed data lowers the balanced-set {m} (mean over attributes) "
            "below the baseline's", _lowers(PERTURBED, [m])) for m in GAPS),
    Claim("perturbed-beats-stratified", "toxicity §7.3",
          "perturbed data lowers the mean balanced-set gap more than re-stratified data",
          _lowers(PERTURBED, GAPS, than="downstream-stratified-data")),
    Claim("perturbed-beats-perturbed-stratified", "toxicity §7.3",
          "perturbed data lowers the mean balanced-set gap more than perturbed re-stratified "
          "data", _lowers(PERTURBED, GAPS, than="downstream-perturbed-stratified-data")),
    Claim("perturbed-stratified-beats-stratified", "toxicity §7.3",
          "perturbed re-stratified data lowers the mean balanced-set gap more than "
          "re-stratified data alone", _lowers("downstream-perturbed-stratified-data", GAPS,
                                              than="downstream-stratified-data")),
    Claim("downstream-sentdebias-costs-auc", "toxicity §6.6",
          "removing the subspace after fine-tuning (downstream SentenceDebias) lowers the "
          "test ROC-AUC below the baseline's", _auc_lower("downstream-sentDebias-")),
    Claim("downstream-beats-upstream", "toxicity §7.3",
          "perturbed data lowers each debiased attribute's mean gap more than upstream "
          "SentenceDebias of that attribute", _downstream_beats_upstream),
    Claim("perturbed-lowers-sensescore", "toxicity §10",
          "perturbed data lowers the SenseScore (Eq. 6, mean over attributes) below the "
          "baseline's", _sense_lower),
    Claim("balanced-gaps-agree", "toxicity §5.2",
          "on the balanced set FPR_gap and TPR_gap correlate positively over the baseline "
          "models and attributes", _balanced_agree),
    Claim("occupation-most-btcs", "BiasFinder Table 4",
          "occupation yields more BTCs than gender and country-of-origin (baseline model)",
          _occupation_most("btc")),
    Claim("occupation-highest-btc-rate", "BiasFinder Table 4 (rate)",
          "occupation's BTC rate (BTCs per mutant pair) is above gender's and "
          "country-of-origin's: the count claim read per pair, as occupation has many more "
          "classes (baseline model)", _occupation_most("btc_rate")),
    Claim("gender-more-btcs-than-country", "BiasFinder Table 4",
          "gender yields more BTCs than country-of-origin (baseline model)",
          _gender_over_country("btc")),
    Claim("gender-higher-btc-rate-than-country", "BiasFinder Table 4 (rate)",
          "gender's BTC rate is above country-of-origin's (baseline model)",
          _gender_over_country("btc_rate")),
)


def claims(replicates: Sequence[Replicate]) -> pd.DataFrame:
    """Each claim per model (``all`` for claims over every model): in how many seeds it holds
    among those where it could be checked."""
    import pandas as pd
    per_seed = [(r.seed, {name: frame for name, (frame, _, _) in _tables(r).items()})
                for r in replicates]
    models = sorted({m for _, tables in per_seed for t in tables.values()
                     if "model" in t.columns for m in t["model"].astype(str)} - {"all"})
    failed = set().union(*(below_floor(tables) for _, tables in per_seed))
    rows = []
    for claim in CLAIMS:
        for model in ["all", *models]:
            verdicts = [(seed, claim.check(tables, model)) for seed, tables in per_seed]
            checked = [(s, v) for s, v in verdicts if v is not None]
            gated = sorted({f"{m}/{me}" for m, me in failed if model in ("all", m)})
            gate = ("the model-works gate failed " + ", ".join(gated) + " (models.csv): "
                    "claims on them are not judged") if gated else ""
            if not checked and not gate:
                continue
            holds = sum(v for _, v in checked)
            notes = [f"not checkable in {len(verdicts) - len(checked)} seed(s)"
                     if len(checked) < len(verdicts) else "", gate]
            rows.append({"claim": claim.id, "source": claim.source,
                         "statement": claim.statement, "model": model,
                         "seeds": len(checked), "holds_in": holds,
                         "share": holds / len(checked) if checked else math.nan,
                         "per_seed": " ".join(f"{s}:{'yes' if v else 'no'}"
                                              for s, v in checked),
                         "note": "; ".join(n for n in notes if n)})
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def _fmt(x: float) -> str:
    import pandas as pd
    if pd.isna(x):
        return "–"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def markdown(tables: Mapping[str, pd.DataFrame], claim_table: pd.DataFrame,
             seeds: Sequence[int]) -> str:
    """The claims and, per table, its cells with the largest seed spread."""
    lines = ["# Across fine-tuning seeds", "",
             f"Seeds: {', '.join(map(str, seeds))}. Every table of the training-to-metrics "
             "matrix is gathered in `<table>.csv` beside this file: mean, sample sd (n − 1), "
             "min, max and each seed's value per cell. With one seed sd is empty.", ""]
    if len(seeds) == 1:
        lines += [f"**One fine-tuning seed ({seeds[0]}).** Each claim below was checked once: "
                  "it held or not for this seed, and nothing here says how often it would "
                  "hold for another. The seeds overlay (`--configfile config/seeds.yaml`) "
                  "runs three.", ""]
    lines += ["## The papers' claims", "",
              "| claim | source | model | holds in | statement | note |",
              "|---|---|---|---|---|---|"]
    for r in claim_table.itertuples():
        lines.append(f"| {r.claim} | {r.source} | {r.model} | {r.holds_in} of {r.seeds} "
                     f"seed{'' if r.seeds == 1 else 's'} | {r.statement} | {r.note} |")
    for name, table in tables.items():
        lines += ["", f"## {name}: the five widest seed ranges", ""]
        keys = [c for c in table.columns if c not in STAT_COLUMNS
                and not c.startswith("seed_")]
        spread = (table["max"] - table["min"]).fillna(-1)
        top = table.assign(_spread=spread).sort_values("_spread", ascending=False,
                                                       kind="stable").head(5)
        lines += ["| " + " | ".join(keys) + " | measure | mean ± sd | range |",
                  "|---" * (len(keys) + 3) + "|"]
        for _, r in top.iterrows():
            lines.append("| " + " | ".join(str(r[k]) for k in keys)
                         + f" | {r['measure']} | {_fmt(r['mean'])} ± {_fmt(r['sd'])} | "
                         f"{_fmt(r['min'])} – {_fmt(r['max'])} |")
    return "\n".join(lines) + "\n"


def output_names(replicate: Replicate) -> list[str]:
    """The files :func:`write_seed_tables` writes for replicates like ``replicate``."""
    names = []
    for task in ("toxicity", "sentiment"):
        if getattr(replicate, task) is not None:
            names += [f"{task}_{n}.csv" for n in STUDY_TABLES]
    if replicate.classification is not None:
        names.append("classification.csv")
    if replicate.biasfinder is not None:
        names.append("biasfinder.csv")
    if replicate.cross_study is not None:
        names += [f"cross_study_{n}.csv" for n in CROSS_STUDY]
    return [*names, "claims.csv", "seeds.md"]


def write_seed_tables(replicates: Sequence[Replicate], out_dir: Path) -> dict[str, Any]:
    """Write every gathered table, the claims and a Markdown summary (all files or none)."""
    from biasrepro.io import atomic_outputs, write_text

    tables = gather(replicates)
    claim_table = claims(replicates)
    names = output_names(replicates[0])
    texts = {f"{name}.csv": t.to_csv(index=False, lineterminator="\n")
             for name, t in tables.items()}
    texts["claims.csv"] = claim_table.to_csv(index=False, lineterminator="\n")
    texts["seeds.md"] = markdown(tables, claim_table, [r.seed for r in replicates])
    assert sorted(texts) == sorted(names), (sorted(texts), names)
    with atomic_outputs(*(Path(out_dir) / n for n in names)) as tmps:
        for name, tmp in zip(names, tmps, strict=True):
            write_text(texts[name], tmp)
    return {"tables": sorted(tables), "claims": len(claim_table)}
