"""``biasrepro plan``: a configuration's job matrix and its estimated GPU-hours (issue #8, item 4).

The jobs are Snakemake's own: the DAG that ``snakemake -n --forceall --configfile FILE`` shows,
built in-process (:mod:`snakemake.api`, nothing downloaded or run) with ``compute.gpus``
forced to 1, as on a GPU cluster, whatever this machine has. A GPU job is one whose ``gpu``
resource is then above 0; CPU jobs are counted with 0 GPU-hours.

Cost model of a GPU job, in GPU-seconds (every number in ``workflow/profiles/slurm/costs.yaml``,
each with its source or marked as an assumption)::

    seconds = job_s + runs * run_s + sum over works of max(k*N*T / (peak*mfu), batches*floor)

* a *work* is one pass of a model over data on the GPU: training (k = 6, forward and backward)
  or inference (k = 2) of a model with N compute parameters (non-embedding parameters every
  token passes through, plus the masked-LM head where every position is projected onto the
  vocabulary) over T tokens in ``batches`` batches; ``floor`` (train_step_s, infer_batch_s) is
  the least a batch takes, since small batches are bound by kernel launches, not FLOPs;
* T = texts x tokens per text (x epochs): a batch in random order is padded to its longest
  text (the data set's ``batch_tokens``), a length-sorted one (``biasrepro predict``) costs
  each text's own length (``tokens``); both capped at the job's max_length;
* runs: the models a job loads; a fine-tuning job trains every method of its task x model in
  one process, a scoring job loads each method's model in turn;
* peak: the GPU class's dense bf16 FLOP/s; mfu: the share of it the FLOPs reach.

What each rule's works are is :meth:`CostModel.works`. The texts come from the configuration
(splits, methods, epochs, batch sizes, max lengths, max_templates, max_sentences) and, where it
does not state them, from costs.yaml's data set sizes. Upper bounds where the workflow may do
less: every configured epoch (early stopping can only shorten it), every mutant (identical
model inputs are scored once). Not modelled: CPU work inside a GPU job (spaCy, SEAT
permutations) beyond job_s, queueing, data transfers.
"""

from __future__ import annotations

import csv
import io
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasrepro import config as cfg
from biasrepro import snakedag
from biasrepro.errors import BiasreproError, ConfigError
from biasrepro.models import training

COSTS = Path("workflow/profiles/slurm/costs.yaml")
COLUMNS = ("rule", "jobs", "gpu_jobs", "gpu_hours")
FORMATS = ("md", "csv")
#: the configuration override that makes every GPU-family job ask for one GPU
ONE_GPU = {"compute": {"gpus": 1}}
#: the data set each task trains and is tested on (workflow/rules/common.smk TASK_DATA)
TASK_DATASET = {"sentiment": "imdb", "toxicity": "civil_comments"}


@dataclass(frozen=True)
class Job:
    """One Snakemake job as the plan needs it."""

    rule: str
    wildcards: Mapping[str, str]
    output: Sequence[str]
    #: names of its named inputs (``validation``: a fine-tuning validation file)
    inputs: frozenset[str]
    gpus: int
    #: longest chain of jobs before it in the DAG
    level: int
    #: a fine-tuning job's validation file of each run, in output order (``none``: the run
    #: holds out ``eval_fraction`` of its training data); empty for other jobs
    validation: tuple[str, ...] = ()


@dataclass(frozen=True)
class Work:
    """A pass of a model over data on the GPU: training or inference of a model with ``params``
    compute parameters over ``tokens`` tokens in ``batches`` batches."""

    train: bool
    params: float
    tokens: float
    batches: int


def dag_jobs(configfile: Path, repo: Path) -> tuple[list[Job], dict[str, Any]]:
    """The jobs of the workflow in ``repo`` for ``configfile`` (forceall, one GPU per GPU
    job) and the configuration Snakemake resolved (:func:`biasrepro.snakedag.dag_jobs`)."""
    return snakedag.dag_jobs(configfile, repo, lambda j, level: Job(
        rule=j.rule.name, wildcards=dict(j.wildcards), output=[str(o) for o in j.output],
        inputs=frozenset(j.input.keys()), gpus=int(j.resources.get("gpu", 0)), level=level,
        validation=_run_values(dict(j.params.items()).get("runs"), "--validation",
                               len(j.output)),
    ), config=ONE_GPU)


def _run_values(runs: Any, option: str, n: int) -> tuple[str, ...]:
    """The ``n`` per-run values of ``option`` in a fine-tuning job's ``runs`` parameter (the
    command-line options the workflow passes to ``biasrepro finetune``), or ``()``."""
    if not isinstance(runs, str):
        return ()
    args = shlex.split(runs)
    if option not in args:
        return ()
    i = args.index(option) + 1
    return tuple(args[i:i + n])


def load_costs(path: Path) -> dict[str, Any]:
    """The cost model YAML (``workflow/profiles/slurm/costs.yaml``)."""
    return cfg.read_mapping(path, "cost model file")


def gpu_class(costs: Mapping[str, Any], gpu: str, costs_path: Path = COSTS) -> str:
    """The costs.yaml name of GPU class ``gpu`` (any case), or an error naming the known ones."""
    classes = _key(costs, "gpus", where=str(costs_path))
    if gpu.lower() not in classes:
        raise BiasreproError(f"unknown GPU class {gpu!r} (known in {costs_path}: "
                             f"{', '.join(sorted(classes))})")
    return gpu.lower()


def _key(node: Any, *keys: str, where: str) -> Any:
    """``node[k1][k2]...``, or a ConfigError naming the missing dotted key in ``where``."""
    for i, k in enumerate(keys):
        if not isinstance(node, Mapping) or k not in node:
            raise ConfigError(f"{where}: missing key {'.'.join(keys[:i + 1])}")
        node = node[k]
    return node


class CostModel:
    """GPU-seconds of a configuration's jobs on one GPU class (module docstring)."""

    def __init__(self, config: Mapping[str, Any], costs: Mapping[str, Any], gpu: str,
                 costs_path: Path = COSTS) -> None:
        self.config, self.costs, self.where = config, costs, str(costs_path)
        self.gpu = gpu_class(costs, gpu, costs_path)
        self.flops = float(self._cost("gpus", self.gpu, "peak_flops")) * float(
            self._cost("gpus", self.gpu, "mfu"))
        self.registry = config["models"]["registry"]
        self.methods = config["methods"]["registry"]

    def _cost(self, *keys: str) -> Any:
        return _key(self.costs, *keys, where=self.where)

    def data(self, name: str) -> Mapping[str, Any]:
        """costs.yaml's sizes of data set ``name`` for its configured source."""
        source = self.config["datasets"][name]["source"]
        return self._cost("datasets", name, "download" if source == "local" else source)

    def model(self, name: str) -> tuple[float, float]:
        """Compute parameters and masked-LM head parameters of a model (a registry name or a
        Hub id); embedded models from ``models.embedded``: L * (4*H^2 + 2*H*I) and H * V."""
        entry = self.registry.get(name, {})
        if entry.get("source") == "embedded":
            e = self.config["models"]["embedded"]
            h = e["hidden_size"]
            return (e["num_hidden_layers"] * (4 * h * h + 2 * h * e["intermediate_size"]),
                    h * e["vocab_size"])
        sizes = self._cost("models")
        for key in (entry.get("id"), name):
            if key in sizes:
                return float(sizes[key]["params"]), float(sizes[key]["mlm_head"])
        raise ConfigError(f"{self.where}: no compute size for model {name!r}; add "
                          f"models.{entry.get('id', name)} (params, mlm_head)")

    def training(self, task: str, model: str) -> dict[str, Any]:
        """The settings ``model`` fine-tunes with for ``task``, resolved as ``biasrepro
        finetune`` resolves them (named settings and registry overrides)."""
        trainings = self.config["models"]["training"]
        own = self.registry.get(model, {}).get("training", {}).get(task)
        return training.resolve(trainings[task], own, trainings.get("named", {}),
                                seed=self.config["seed"], task=task, model=model)

    def split_rows(self, task: str, split: str) -> float:
        """Rows of a split of the task's data set (Civil Comments: preprocess fractions)."""
        if task == "toxicity":
            pre = self.config["preprocess"]["civil_comments"]
            cc = self.data("civil_comments")
            keep = pre.get("splits", "all")
            rows = (cc["rows"] if keep == "all" or "source_rows" not in cc
                    else sum(cc["source_rows"][s] for s in keep))
            return rows * pre["split"][split]
        return float(self.data("imdb")[split])

    def training_rows(self, task: str, kind: str) -> float:
        """Rows of a task's training data of ``kind`` (methods.registry.*.data)."""
        if task == "toxicity":
            cc, train = self.data("civil_comments"), self.split_rows(task, "train")
            ratio = {"original": 1.0, **{k: cc[f"{k}_ratio"] for k in
                                         ("perturbed", "stratified", "perturbed_stratified")}}
            return train * ratio[kind]
        imdb = self.data("imdb")
        gendered = self.gendered_rows("train")
        return {"original": float(imdb["train"]), "gendered": gendered,
                "perturbed": gendered * imdb["perturbed_ratio"]}[kind]

    def gendered_rows(self, split: str) -> float:
        """Rows of an IMDB-gendered split (appendix): training and validation come from IMDB
        train's gendered reviews, test from IMDB test's, in the configured proportions, the
        scarcer half used in full (:func:`biasrepro.data.imdb_gendered.build`)."""
        imdb = self.data("imdb")
        f = self.config["preprocess"]["imdb_gendered"]["split"]
        total = min(imdb["train"] * imdb["gendered_share"] / (f["train"] + f["validation"]),
                    imdb["test"] * imdb["gendered_share"] / f["test"])
        return total * f[split]

    def validation_rows(self, task: str, path: str) -> float:
        """Rows of a fine-tuning validation file: IMDB-gendered's validation split or the
        task's own."""
        if Path(path).parent.name == "imdb_gendered":
            return self.gendered_rows("validation")
        return self.split_rows(task, "validation")

    def scored_rows(self, task: str, scored_set: str) -> tuple[float, float]:
        """(rows, tokens per row) of a set ``biasrepro predict`` scores (a prediction file's
        name: test, validation, fairness-original, fairness-balanced, imdb-gendered-test,
        imdb-gendered-perturbed-test)."""
        data = self.data(TASK_DATASET[task])
        if scored_set in ("test", "validation"):
            return self.split_rows(task, scored_set), data["tokens"]
        if scored_set.startswith("fairness-"):
            original, balanced = self.fairness_texts(task)
            return original if scored_set == "fairness-original" else balanced
        if scored_set == "imdb-gendered-test":
            return self.gendered_rows("test"), data["tokens"]
        if scored_set == "imdb-gendered-perturbed-test":
            return self.gendered_rows("test") * data["perturbed_ratio"], data["tokens"]
        raise BiasreproError(f"no size for the scored set {scored_set!r} "
                             "(add it to src/biasrepro/plan.py CostModel.scored_rows)")

    def fairness_texts(self, task: str) -> list[tuple[float, float]]:
        """(rows, tokens per row) of the task's original and balanced fairness sets."""
        if task == "toxicity":
            cc = self.data("civil_comments")
            original = self.split_rows(task, "test") * cc["fairness_share"]
            return [(original, cc["tokens"]), (original * cc["balanced_ratio"], cc["tokens"])]
        sst = self.data("sst")
        return [(sst["rows"], sst["tokens"]), (sst["rows"] * sst["balanced_ratio"], sst["tokens"])]

    # -- the works of each GPU rule ----------------------------------------------------------

    def works(self, job: Job) -> tuple[int, list[Work]]:
        """The models ``job`` loads and its passes over data on the GPU."""
        handlers = {
            "pretrain_embedded": self._pretrain,
            "biasfinder_parse": self._parse,
            "biasfinder_predict": self._biasfinder_predict,
            "restratify_training": self._restratify,
            "sentdebias_subspace": self._subspace,
            "sentdebias_downstream": self._downstream,
            "representation_score": self._representation,
        }
        rule = job.rule.removesuffix(cfg.SEED_RULE_SUFFIX)  # another seed's copy costs the same
        task = rule.partition("_")[2]
        if rule.startswith("finetune_") and task in TASK_DATASET:
            return self._finetune(job, task)
        if rule.startswith("predict_") and task in TASK_DATASET:
            return self._predict(job, task)
        if rule not in handlers:
            raise BiasreproError(f"no cost model for the GPU rule {job.rule!r} "
                                 "(add one to src/biasrepro/plan.py)")
        return handlers[rule](job)

    def _pretrain(self, job: Job) -> tuple[int, list[Work]]:
        """Masked-LM pre-training: the cloze pass over the stereotype sentences, then
        ``pretrain.steps`` steps, batches padded up to max_length."""
        e = self.config["models"]["embedded"]
        batch = e["pretrain"]["batch_size"]
        steps = math.ceil(e["stereotypes"]["n_sentences"] / batch) + e["pretrain"]["steps"]
        params, _ = self.model(job.wildcards["model"])
        return 1, [Work(True, params, steps * batch * e["max_length"], steps)]

    def _finetune(self, job: Job, task: str) -> tuple[int, list[Work]]:
        """Every method of the task x model (one output directory each): its epochs over its
        training data, and an evaluation on the validation file or held-out share once per
        epoch or every ``eval_steps`` steps (every configured one: early stopping can only
        end it sooner)."""
        model = job.wildcards["model"]
        params, _ = self.model(model)
        s = self.training(task, model)
        length = min(self.data(TASK_DATASET[task])["batch_tokens"], s["max_length"])
        epochs, batch = s["epochs"], s["batch_size"]
        works = []
        validation = job.validation or ("none",) * len(job.output)
        for method, val in zip((Path(o).name for o in job.output), validation, strict=True):
            rows = self.training_rows(task, self.methods[method]["data"])
            if val != "none":
                train, held = rows, self.validation_rows(task, val)
            else:
                held = rows * s["eval_fraction"]
                train = rows - held
            steps = math.ceil(train / batch) * epochs
            works.append(Work(True, params, train * length * epochs, steps))
            if held:
                evals = steps // s["eval_steps"] if s.get("eval_steps") else epochs
                works.append(Work(False, params, held * length * evals,
                                  math.ceil(held / batch) * evals))
        return len(job.output), works

    def _scoring(self, params: float, texts: Sequence[tuple[float, float]],
                 max_length: int) -> Work:
        """``biasrepro predict`` of (rows, tokens per row) texts: length-sorted batches of
        ``predict_tokens`` padded tokens."""
        tokens = sum(rows * min(per_row, max_length) for rows, per_row in texts)
        batch_tokens = self._cost("batching", "predict_tokens")
        return Work(False, params, tokens, math.ceil(tokens / batch_tokens))

    def _predict(self, job: Job, task: str) -> tuple[int, list[Work]]:
        """Each method's model scores every set of the job's outputs (the test split, the
        validation split where there is one, both fairness sets, IMDB-gendered's test sets)."""
        model = job.wildcards["model"]
        params, _ = self.model(model)
        texts = [self.scored_rows(task, s) for s in sorted({Path(o).stem for o in job.output})]
        methods = sorted({Path(o).parent.name for o in job.output})
        length = self.training(task, model)["max_length"]
        return len(methods), [self._scoring(params, texts, length) for _ in methods]

    def mutants(self, characteristic: str) -> float:
        """Mutants of one characteristic: mutants per template x templates (<= max_templates)."""
        bf = self.config["biasfinder"]
        sizes = self.data(bf["dataset"])["biasfinder"][characteristic]
        templates = sizes["templates"]
        if bf.get("max_templates") is not None:
            templates = min(templates, bf["max_templates"])
        return sizes["mutants"] / sizes["templates"] * templates

    def _biasfinder_predict(self, job: Job) -> tuple[int, list[Work]]:
        """Each tested method's sentiment model scores every characteristic's mutants."""
        model = job.wildcards["model"]
        params, _ = self.model(model)
        tokens = self.data(self.config["biasfinder"]["dataset"])["tokens"]
        texts = [(self.mutants(c), tokens)
                 for c in sorted({Path(o).stem for o in job.output})]
        methods = sorted({Path(o).parent.name for o in job.output})
        length = self.training("sentiment", model)["max_length"]
        return len(methods), [self._scoring(params, texts, length) for _ in methods]

    def _parse(self, job: Job) -> tuple[int, list[Work]]:
        """fastcoref over the BiasFinder corpus (whole reviews); spaCy runs on the CPU."""
        bf = self.config["biasfinder"]
        if bf["coref"]["backend"] != "fastcoref":
            return 0, []
        params, _ = self.model(bf["coref"]["model"])
        data = self.data(bf["dataset"])
        tokens = data[bf["split"]] * data["tokens"]
        batch_tokens = self._cost("batching", "coref_tokens")
        return 1, [Work(False, params, tokens, math.ceil(tokens / batch_tokens))]

    def _restratify(self, job: Job) -> tuple[int, list[Work]]:
        """nlpaug's contextual substitution: for every synthetic positive, one masked-LM pass
        per substituted word (aug_p of its words), in batches of ``nlpaug_rows`` texts."""
        r = self.config["perturbation"]["restratify"]
        if r["augmenter"] != "contextual":
            return 0, []
        params, head = self.model(r["model"])
        cc = self.data("civil_comments")
        synthetic = self.split_rows("toxicity", "train") * (cc["stratified_ratio"] - 1)
        passes = math.ceil(r["aug_p"] * cc["words"])
        if r.get("aug_max") is not None:
            passes = min(passes, r["aug_max"])
        length = min(cc["batch_tokens"], self._cost("batching", "nlpaug_max_tokens"))
        batches = math.ceil(synthetic / self._cost("batching", "nlpaug_rows")) * passes
        return 1, [Work(False, params + head, synthetic * passes * length, batches)]

    def _sentdebias(self, params: float, attributes: Sequence[str]) -> list[Work]:
        """Embedding each attribute's counterfactual sentences (tuples x tuple size), batches
        of ``sentdebias_rows`` padded to their longest (<= representation.sentdebias.max_length)."""
        corpus, words = self.data("sentdebias_corpus"), self.data("attribute_words")
        s = self.config["representation"]["sentdebias"]
        sentences = corpus["sentences"]
        if s.get("max_sentences") is not None:
            sentences = min(sentences, s["max_sentences"])
        length = min(corpus["batch_tokens"], s["max_length"])
        rows = self._cost("batching", "sentdebias_rows")
        works = []
        for a in attributes:
            texts = sentences * corpus["tuples_per_sentence"][a] * words["tuple_size"][a]
            works.append(Work(False, params, texts * length, math.ceil(texts / rows)))
        return works

    def _subspace(self, job: Job) -> tuple[int, list[Work]]:
        """Upstream SentenceDebias: one subspace per attribute file of the pretrained model."""
        params, _ = self.model(job.wildcards["model"])
        return 1, self._sentdebias(params, [Path(o).stem for o in job.output])

    def _downstream(self, job: Job) -> tuple[int, list[Work]]:
        """Downstream SentenceDebias: the fine-tuned model's subspace of one attribute."""
        params, _ = self.model(job.wildcards["model"])
        attribute = self.methods[job.wildcards["method"]]["sentdebias"]["attribute"]
        return 1, self._sentdebias(params, [attribute])

    def _representation(self, job: Job) -> tuple[int, list[Work]]:
        """CrowS-Pairs, StereoSet and SEAT of every variant (pretrained, each subspace):
        items x passes forward passes of tokens_per_pass tokens through the masked LM; a
        CrowS-Pairs sentence's masked copies make one batch, StereoSet's inputs fill batches of
        ``stereoset_tokens``, SEAT's sentences batches of ``seat_rows``."""
        params, head = self.model(job.wildcards["model"])
        variants = len({Path(o).parent.name for o in job.output})
        per_batch = {"crows_pairs": 1,
                     "stereoset": None,
                     "seat": self._cost("batching", "seat_rows")}
        works = []
        for bench, rows in per_batch.items():
            d = self.data(bench)
            passes = d["items"] * d["passes"] * variants
            tokens = passes * d["tokens_per_pass"]
            batches = (tokens / self._cost("batching", "stereoset_tokens") if rows is None
                       else passes / rows)
            works.append(Work(False, params + head, tokens, math.ceil(batches)))
        return 1, works

    # -- seconds -----------------------------------------------------------------------------

    def work_seconds(self, work: Work) -> float:
        k, floor = (6, "train_step_s") if work.train else (2, "infer_batch_s")
        return max(k * work.params * work.tokens / self.flops,
                   work.batches * float(self._cost("overheads", floor)))

    def seconds(self, job: Job) -> float:
        """GPU-seconds of ``job`` (0 for a CPU job)."""
        if job.gpus <= 0:
            return 0.0
        try:
            runs, works = self.works(job)
        except KeyError as e:
            raise ConfigError(f"{self.where}: a data set entry lacks the key {e} "
                              f"(rule {job.rule})") from None
        return (float(self._cost("overheads", "job_s"))
                + runs * float(self._cost("overheads", "run_s"))
                + sum(self.work_seconds(w) for w in works))


def table(jobs: Sequence[Job], model: CostModel) -> list[dict[str, Any]]:
    """One row per rule (in DAG order: its first job's level, then name) and a total row."""
    rows: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for job in jobs:
        row = rows.setdefault(job.rule, {"rule": job.rule, "jobs": 0, "gpu_jobs": 0,
                                         "gpu_hours": 0.0})
        first[job.rule] = min(first.get(job.rule, job.level), job.level)
        row["jobs"] += 1
        if job.gpus > 0:
            row["gpu_jobs"] += 1
            row["gpu_hours"] += model.seconds(job) / 3600
    out = sorted(rows.values(), key=lambda r: (first[r["rule"]], r["rule"]))
    out.append({"rule": "total", **{c: sum(r[c] for r in out) for c in COLUMNS[1:]}})
    return out


def render(rows: Sequence[dict[str, Any]], fmt: str, *, gpu: str, configfile: Path,
           costs: Path = COSTS) -> str:
    """The table as Markdown (with a line on what the estimate is) or CSV."""
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([r["rule"], r["jobs"], r["gpu_jobs"], f"{r['gpu_hours']:.4f}"]
                         for r in rows)
        return buf.getvalue()
    from biasrepro.io import markdown_table

    shown = [r | {"gpu_hours": f"{r['gpu_hours']:.2f}"} for r in rows]
    return (markdown_table(shown, COLUMNS) + f"\nJobs of `snakemake -n --forceall --configfile "
            f"{configfile}` with one GPU per GPU job; GPU-hours estimated for one {gpu} from "
            f"the cost model in {costs} (src/biasrepro/plan.py).\n")


def run(configfile: Path, *, gpu: str = "h200", fmt: str = "md", out: Path | None = None,
        costs: Path | None = None, repo: Path) -> str:
    """Build the plan of ``configfile`` for the checkout ``repo``, write it to ``out`` (or
    return it for stdout)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    costs_path = costs or repo / COSTS
    cost_data = load_costs(costs_path)
    gpu_class(cost_data, gpu, costs_path)  # before the DAG: a typo fails at once
    path = configfile if configfile.is_absolute() or configfile.exists() else repo / configfile
    jobs, config = dag_jobs(path.resolve(), repo)
    model = CostModel(config, cost_data, gpu, costs_path)
    text = render(table(jobs, model), fmt, gpu=model.gpu, configfile=configfile,
                  costs=costs or COSTS)
    if out is not None:
        from biasrepro.io import atomic_outputs, write_text

        with atomic_outputs(out) as (tmp,):
            write_text(text, tmp)
    return text
