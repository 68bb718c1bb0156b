"""BiasFinder in one call: a corpus and a sentiment model in, BTC rates and a report out.

:func:`run` goes through BiasFinder's steps (§3: parse and coreference, templates of each
characteristic, mutants, the model's predictions, bias-uncovering test cases) with the same
functions the workflow's commands call (:mod:`biasrepro.biasfinder.steps`). With an output
folder each intermediate is cached under ``OUT/cache`` by a content hash of everything it
depends on (the texts, the settings it reads, the word lists, this package's version), so a
second run into the same folder with another model re-uses the parse, templates and mutants,
and the report then compares the models. A model's predictions are cached too where the
model can be hashed (a local directory: its files; a Hub id: id and revision); a Python
callable is scored again each run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.config import optional
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import atomic_outputs, read_json, read_parquet, write_json, write_parquet

log = logging.getLogger(__name__)

#: the characteristics BiasFinder tests, in Table 4's order
CHARACTERISTICS = ("gender", "occupation", "country")
#: where a run keeps its cache and each model's results under its output folder
CACHE = "cache"
MODELS = "models"
REPORT = "report.html"
#: per characteristic and model: the summary of the BTCs with the rate's interval
SUMMARY_FILE = "summary.json"
#: bootstrap resamples (over templates) of each BTC rate's interval
RESAMPLES = 2000
CONFIDENCE = 0.95

PredictFn = Callable[[Sequence[str]], Any]


def _settings(settings: Mapping[str, Any] | str | Path | None) -> dict[str, Any]:
    """Settings as the commands take them: the project's configuration
    (``config/config.yaml``) with a YAML file merged over it, or a mapping of config keys
    (nested or dotted) as given."""
    from biasrepro import config as cfg

    if settings is not None and not isinstance(settings, str | Path):
        return dict(settings)
    base = cfg.REPO_ROOT / "config" / "config.yaml"
    if not base.is_file():
        raise ConfigError(f"the project's configuration is not at {base}: pass the "
                          "settings as a mapping of config keys")
    return {"__config__": cfg.load(base, *([settings] if settings is not None else []))}


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _dir_sha(path: Path) -> str:
    """A content hash of every file under ``path`` (names and bytes)."""
    return _sha([(str(p.relative_to(path)), _file_sha(p))
                 for p in sorted(path.rglob("*")) if p.is_file()])


def corpus_frame(corpus: str | Path | pd.DataFrame | Iterable[str], *, text_column: str = "text",
                 id_column: str = "id") -> pd.DataFrame:
    """The corpus as ``id``, ``text``, ``label``: a file (CSV/TSV/Parquet/JSONL with a text
    column), a DataFrame with one, or texts (ids are then the row numbers)."""
    from biasrepro.io import check_text
    from biasrepro.nlp.parse import read_corpus

    if isinstance(corpus, str | Path):
        return read_corpus(Path(corpus), text_column=text_column, id_column=id_column)
    if isinstance(corpus, pd.DataFrame):
        if text_column not in corpus.columns:
            raise DataError(f"the corpus has no {text_column!r} column (columns: "
                            f"{', '.join(map(str, corpus.columns))})")
        frame = corpus
        texts = frame[text_column]
        ids = (frame[id_column].astype(str) if id_column in frame.columns
               else pd.Series([f"{i:05d}" for i in range(len(frame))], index=frame.index))
        label = frame["label"] if "label" in frame.columns else -1
    else:
        texts = pd.Series(list(corpus), dtype=object)
        ids = pd.Series([f"{i:05d}" for i in range(len(texts))])
        label = -1
    check_text(texts.reset_index(drop=True), file="<corpus>", column=text_column)
    if ids.duplicated().any():
        raise DataError(f"repeated id {ids[ids.duplicated()].iloc[0]!r}", file="<corpus>",
                        column=id_column)
    return pd.DataFrame({"id": ids.to_numpy(), "text": texts.to_numpy(),
                         "label": label}).astype({"label": "int64"})


def _corpus_sha(frame: pd.DataFrame) -> str:
    h = hashlib.sha256()
    for i, text, label in zip(frame["id"], frame["text"], frame["label"], strict=True):
        h.update(json.dumps([str(i), text, int(label)]).encode())
    return h.hexdigest()


class _Cache:
    """Files under ``OUT/cache`` named by step and key; nothing when there is no folder."""

    def __init__(self, out: Path | None) -> None:
        self.root = None if out is None else Path(out) / CACHE
        self.hits: list[str] = []
        self.made: list[str] = []

    def path(self, name: str, key: str, suffix: str) -> Path | None:
        return None if self.root is None else self.root / f"{name}-{key[:16]}{suffix}"

    def get(self, name: str, key: str, suffix: str, make: Callable[[], Any],
            save: Callable[[Any, Path], None], load: Callable[[Path], Any]) -> Any:
        path = self.path(name, key, suffix)
        if path is not None and path.exists():
            self.hits.append(name)
            return load(path)
        value = make()
        self.made.append(name)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_outputs(path) as (tmp,):
                save(value, tmp)
        return value


@dataclass
class Model:
    """A model to score mutants with: its name in the report, what :func:`predict_proba`
    takes, and a content key for the predictions cache (None: not cached)."""

    name: str
    spec: Any
    key: str | None


def as_model(model: Any, *, name: str | None = None,
             registry: Mapping[str, Any] | None = None) -> Model:
    """A :class:`Model` from a local model directory, a Hub id, a name in ``registry``
    (``models.registry``) or a callable from texts to positive-class probabilities."""
    from biasrepro.models.load import resolve

    if callable(model) and not isinstance(model, str | Path):
        label = name or getattr(model, "__name__", None) or type(model).__name__
        return Model(label if label != "<lambda>" else "model", model, None)
    if not isinstance(model, str | Path):
        raise ConfigError(f"the model must be a directory, a Hub id, a registry name or a "
                          f"callable from texts to probabilities, not {type(model).__name__}")
    if registry and str(model) in registry:
        # a registered model is a base model: BiasFinder tests the workflow's sentiment model
        from biasrepro import layout
        from biasrepro.errors import ModelError

        tuned = Path(layout.finetuned_model_dir("sentiment", str(model), "baseline"))
        if not tuned.is_dir():
            raise ModelError(f"model {str(model)!r} is registered, but its fine-tuned "
                             f"sentiment model {tuned} is not there: run the workflow first "
                             "(snakemake --cores all), or give a model directory or Hub id")
        name, model = name or str(model), tuned
    spec = resolve(str(model), None)
    key = (_dir_sha(Path(spec.location)) if spec.is_local
           else _sha([spec.location, spec.revision]))
    return Model(name or str(model), spec, key)


def _safe(name: str) -> str:
    """A model name as a folder name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def rate_interval(counts: pd.DataFrame, *, seed: int, resamples: int = RESAMPLES,
                  confidence: float = CONFIDENCE) -> tuple[float, float] | tuple[None, None]:
    """A percentile bootstrap interval of a BTC rate (BTCs over possible pairs) resampling
    templates: a template's pairs share its mutants and are not independent trials."""
    btc = counts["btc"].to_numpy(np.float64)
    pairs = counts["possible_pairs"].to_numpy(np.float64)
    if len(btc) == 0 or pairs.sum() == 0:
        return None, None
    rng = np.random.default_rng(seed)
    n = len(btc)
    w = rng.multinomial(n, np.full(n, 1 / n), size=resamples).astype(np.float64)
    den = w @ pairs
    rates = np.divide(w @ btc, den, out=np.zeros(resamples), where=den > 0)
    low, high = np.percentile(rates, [100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2])
    return float(low), float(high)


@dataclass
class Result:
    """What :func:`run` found: per characteristic the counts and BTC rate with its interval
    (:attr:`rates`), the BTC pairs with both mutants' ids, classes, probabilities and texts
    (:attr:`pairs`), the templates and mutants it tested, and where it wrote them."""

    rates: pd.DataFrame
    pairs: pd.DataFrame
    templates: dict[str, pd.DataFrame]
    mutants: dict[str, pd.DataFrame]
    #: per characteristic, the per-template counts (:func:`.btc.template_counts`)
    counts: dict[str, pd.DataFrame]
    #: the word lists the mutants were filled from
    lists: Any = None
    out: Path | None = None
    cache: dict[str, list[str]] = field(default_factory=dict)
    seed: int = 0
    #: texts in the corpus
    corpus: int = 0

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.rates["model"]))

    def summary(self) -> str:
        """The rates as a short text table."""
        lines = [f"BiasFinder on {self.corpus} texts: BTC rate per characteristic "
                 f"(95 % interval over templates)"]
        for model, rows in self.rates.groupby("model", sort=False):
            lines.append(f"{model}:")
            for r in rows.itertuples():
                if r.characteristic == "total":
                    continue
                rate = ("no pairs" if r.btc_rate is None or pd.isna(r.btc_rate) else
                        f"{r.btc_rate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]")
                lines.append(f"  {r.characteristic:<11} {r.templates:>5} templates "
                             f"{r.mutants:>7} mutants {r.btc:>7} BTCs  rate {rate}")
        return "\n".join(lines)

    def to_html(self, path: str | Path) -> Path:
        """Write the self-contained HTML report (:mod:`biasrepro.biasfinder.report`)."""
        from biasrepro.biasfinder.report import write

        return write(self, Path(path), models_in(self.out) if self.out else [])


def run(corpus: str | Path | pd.DataFrame | Iterable[str], model: Any, *,
        out: str | Path | None = None, model_name: str | None = None,
        characteristics: Sequence[str] = CHARACTERISTICS,
        settings: Mapping[str, Any] | str | Path | None = None,
        text_column: str = "text", id_column: str = "id",
        wordlists: str | Path | None = None, progress: bool = False) -> Result:
    """BiasFinder on ``corpus`` with ``model`` (see :func:`as_model`).

    ``settings``: a mapping of config keys (``seed``, ``biasfinder.*``) or a config YAML
    merged over the project's; default: the project's own. With ``out``, the intermediates
    are cached there, each model's tables written under ``out/models/NAME/`` and the report
    (every model run into ``out``, compared) to ``out/report.html``. Returns a
    :class:`Result`.
    """
    from biasrepro import __version__
    from biasrepro.biasfinder.btc import btc_pairs, join_predictions, pair_texts, write_btc
    from biasrepro.biasfinder.mutants import read_mutants, write_mutants
    from biasrepro.biasfinder.steps import (
        count_btc,
        mutant_options,
        parse_options,
        template_options,
        write_wordlists,
    )
    from biasrepro.biasfinder.steps import mutants as make_mutants
    from biasrepro.biasfinder.steps import parse as parse_corpus
    from biasrepro.biasfinder.steps import pipeline as spacy_pipeline
    from biasrepro.biasfinder.steps import templates as make_templates
    from biasrepro.biasfinder.steps import threshold as threshold_of
    from biasrepro.biasfinder.templates import read_templates, write_templates
    from biasrepro.biasfinder.wordlists import WORDLISTS_DIR
    from biasrepro.biasfinder.wordlists import load as load_wordlists
    from biasrepro.nlp.parse import load_docs, save_docs

    started = time.perf_counter()
    s = _settings(settings)
    unknown = [c for c in characteristics if c not in CHARACTERISTICS]
    if unknown or not characteristics:
        raise ConfigError(f"unknown characteristic {unknown[0]!r} (known: "
                          f"{', '.join(CHARACTERISTICS)})" if unknown else
                          "no characteristic to test")
    configured = optional(s, "biasfinder.wordlists", None)
    lists_dir = Path(wordlists) if wordlists is not None else (
        Path(configured) if configured is not None and Path(configured).is_dir()
        else WORDLISTS_DIR)
    frame = corpus_frame(corpus, text_column=text_column, id_column=id_column)
    the_model = as_model(model, name=model_name,
                         registry=optional(s, "models.registry", None))
    out_dir = Path(out) if out is not None else None
    cache = _Cache(out_dir)
    seed = optional(s, "seed", 0)
    version = __version__
    lists_key = _sha({p.name: _file_sha(p) for p in sorted(lists_dir.glob("*.csv"))})

    # person and country names: drawn from the name dictionary with the seed
    names_key = _sha([version, seed, optional(s, "biasfinder.names", None),
                      optional(s, "biasfinder.countries", None)])
    with tempfile.TemporaryDirectory(prefix="biasfinder-names-") as scratch:
        names_dir = cache.path("names", names_key, "") or Path(scratch)
        if (names_dir / "names.csv").exists() and (names_dir / "countries.csv").exists():
            cache.hits.append("names")
        else:
            with atomic_outputs(names_dir / "names.csv", names_dir / "countries.csv") as tmp:
                write_wordlists(s, *tmp)
            cache.made.append("names")
        lists = load_wordlists(names=names_dir / "names.csv",
                                   country_names=names_dir / "countries.csv",
                                   directory=lists_dir)

    # parse and coreference: the slow step, shared by every characteristic and model
    parse_key = _sha([version, _corpus_sha(frame), lists_key, parse_options(s)])
    nlp = spacy_pipeline(s)
    docs = cache.get("parse", parse_key, ".spacy",
                     lambda: parse_corpus(frame, s, lists_dir, nlp, progress=progress),
                     save_docs, lambda p: load_docs(p, nlp))

    templates: dict[str, pd.DataFrame] = {}
    muts: dict[str, pd.DataFrame] = {}
    mutant_keys: dict[str, str] = {}
    for c in characteristics:
        t_key = _sha([parse_key, c, template_options(s)])
        templates[c] = cache.get(f"templates-{c}", t_key, ".parquet",
                                 lambda c=c: make_templates(docs, c, lists, s),
                                 write_templates, read_templates)
        m_key = mutant_keys[c] = _sha([t_key, names_key, mutant_options(s)])
        muts[c] = cache.get(f"mutants-{c}", m_key, ".parquet",
                            lambda c=c: make_mutants(templates[c], lists, s,
                                                      source=f"templates of {c}"),
                            write_mutants, read_mutants)

    threshold = threshold_of(s)
    rows, pair_frames, all_counts = [], [], {}
    model_dir = None if out_dir is None else out_dir / MODELS / _safe(the_model.name)
    for c in characteristics:
        m = muts[c]
        if the_model.key is None or m.empty:
            scored = _score(m, the_model, threshold, progress)
        else:
            p_key = _sha([the_model.key, mutant_keys[c]])
            preds = cache.get(f"predictions-{_safe(the_model.name)}-{c}", p_key, ".parquet",
                              lambda m=m: _score(m, the_model, threshold, progress)[
                                  ["id", "prob", "pred", "input"]],
                              write_parquet, lambda p: read_parquet(p, what="predictions"))
            scored = join_predictions(m.drop(columns=["text"]), preds,
                                          threshold=threshold).assign(
                input=preds.set_index("id")["input"].reindex(m["id"]).to_numpy())
        counts, summary = count_btc(templates[c], m, scored, s, characteristic=c,
                                          model=the_model.name, method="given",
                                          groups=scored["input"].to_numpy())
        all_counts[c] = counts
        low, high = rate_interval(counts, seed=int(seed))
        for r in summary:
            if r["characteristic"] == c:
                rows.append({**r, "ci_low": low, "ci_high": high})
        pairs = btc_pairs(scored.drop(columns=["input", "text"], errors="ignore"))
        pair_frames.append(pair_texts(pairs, m))
        if model_dir is not None:
            write_btc(pairs, counts, summary, pairs_path=model_dir / f"btc-{c}.parquet",
                          counts_path=model_dir / f"counts-{c}.parquet",
                          summary_json=model_dir / f"summary-{c}.json")
    rates = pd.DataFrame(rows)
    pairs = pd.concat(pair_frames, ignore_index=True) if pair_frames else pd.DataFrame()
    result = Result(rates=rates, pairs=pairs, templates=templates, mutants=muts,
                    counts=all_counts, lists=lists, out=out_dir,
                    cache={"reused": cache.hits, "made": cache.made},
                    seed=int(seed), corpus=len(frame))
    if model_dir is not None:
        with atomic_outputs(model_dir / SUMMARY_FILE) as (tmp,):
            write_json({"model": the_model.name, "corpus": len(frame),
                        "rates": rates.replace({np.nan: None}).to_dict("records")}, tmp)
        result.to_html(out_dir / REPORT)
    log.info("BiasFinder run: %s on %d texts in %.1f s (cache: reused %s; made %s)",
             the_model.name, len(frame), time.perf_counter() - started,
             ", ".join(cache.hits) or "nothing", ", ".join(cache.made) or "nothing")
    return result


def _score(mutants: pd.DataFrame, model: Model, threshold: float,
           progress: bool) -> pd.DataFrame:
    from biasrepro.biasfinder.btc import score_mutants

    if mutants.empty:
        return mutants.assign(prob=np.zeros(0), pred=np.zeros(0, np.int64),
                              input=np.zeros(0, np.int64))
    return score_mutants(mutants, model.spec, threshold=threshold, progress=progress)


def models_in(out: Path) -> list[dict[str, Any]]:
    """The summaries of every model run into ``out`` (for the report's comparison)."""
    root = Path(out) / MODELS
    if not root.is_dir():
        return []
    return [{**read_json(p), "folder": str(p.parent)}
            for p in sorted(root.glob(f"*/{SUMMARY_FILE}"))]
