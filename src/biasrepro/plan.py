"""``biasrepro plan``: a configuration's job matrix, its estimated GPU-hours and memory.

The jobs are Snakemake's own: the DAG that ``snakemake -n --forceall --configfile FILE`` shows,
built in-process (:mod:`snakemake.api`, nothing downloaded or run) with ``compute.gpus``
forced to 1, as on a GPU cluster, whatever this machine has. A GPU job is one whose ``gpu``
resource is then above 0; CPU jobs are counted with 0 GPU-hours.

Cost model of a GPU job, in GPU-seconds (every number in ``profiles/slurm/costs.yaml``,
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

Where the GPU class has a calibration (``profiles/slurm/calibration.yaml``, written by
``benchmarks/gpu_check.py --calibrate`` on that GPU; :mod:`biasrepro.calibration`), a work
takes ``batches * overhead_s + k*N*T / flops_per_s`` instead, with both numbers measured
(training and inference each their own), and the table says so.

What each rule's works are is :meth:`CostModel.works`. The texts come from the configuration
(splits, methods, epochs, batch sizes, max lengths, max_templates, max_sentences) and, where it
does not state them, from costs.yaml's data set sizes; BiasFinder's mutants from the configured
word lists (:meth:`CostModel.mutants_per_template`). A fine-tuning run with early stopping is a
range: *high* trains every configured epoch, *low* stops at the earliest evaluation early
stopping allows (``early_stopping_patience`` + 1 evaluations, every ``eval_steps`` steps or
every epoch: the first sets the best loss, then ``patience`` without improvement stop it);
every other job costs the same in both. Upper bounds where the workflow may do less: every
mutant (identical model inputs are scored once). Not modelled: CPU work inside a GPU job (spaCy,
SEAT permutations) beyond job_s, queueing, data transfers.

Memory (:meth:`CostModel.memory`, every number in costs.yaml's ``memory``): a job's peak host
memory (RSS), MB, as a process base (the rule's own peak on the embedded default, or an
import's) + the CUDA runtime's host memory where the job has a GPU + the weights of its model
(total parameters x 4 bytes to score, x 16 to train: weights, gradients and AdamW's moments,
which a checkpoint copies to the host) + activations where a model runs on the CPU + the data
it holds (rows, tokens, mutants, BTC pairs x bytes each, fitted to measured peaks). Each job's
estimate is checked against its ``mem_mb`` (its family's in ``compute.families``, the family
read from the rule's ``compute("FAMILY")`` in workflow/rules/): :func:`memory_warnings`.
"""

from __future__ import annotations

import csv
import functools
import io
import logging
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasrepro import calibration as cal
from biasrepro import config as cfg
from biasrepro import snakedag
from biasrepro.errors import BiasreproError, ConfigError
from biasrepro.layout import PERTURB_SOURCE
from biasrepro.models import training

log = logging.getLogger(__name__)

COSTS = Path("profiles/slurm/costs.yaml")
#: this checkout (src/biasrepro/plan.py -> the repository root)
REPO = Path(__file__).resolve().parents[2]
COLUMNS = ("rule", "jobs", "gpu_jobs", "gpu_hours_low", "gpu_hours_high", "family",
           "mem_est_mb", "mem_mb")
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
    #: its family (config ``compute.families``) and the memory it asks for (its resources)
    family: str = ""
    mem_mb: int = 0


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
        family=rule_family(j.rule.snakefile, _source_line(j.rule)),
        mem_mb=int(j.resources.get("mem_mb", 0)),
    ), config=ONE_GPU)


def _source_line(rule: Any) -> int:
    """The line of a rule's ``rule`` keyword in its file (Snakemake records the line of the
    Python it compiles the file to, and a map back)."""
    linemap = getattr(rule.workflow, "linemaps", {}).get(rule.snakefile, {})
    return int(linemap.get(rule.lineno, rule.lineno))


_COMPUTE = re.compile(r"""\bcompute\(\s*["'](\w+)["']""")
_RULE = re.compile(r"\s*rule\b")


def rule_family(snakefile: str | Path, lineno: int) -> str:
    """The family a rule's resources come from: the ``compute("FAMILY")`` of its definition
    (every rule of workflow/rules/ calls it once, in ``resources``), read from the rule's
    file between its first line and the next rule's; ``""`` for a rule without one."""
    lines = _lines(str(snakefile))[max(lineno - 1, 0):]
    for i, line in enumerate(lines):
        if i and _RULE.match(line):
            break
        found = _COMPUTE.search(line)
        if found:
            return found[1]
    return ""


@functools.cache
def _lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(encoding="utf-8").splitlines())
    except OSError:
        return ()


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
    """The cost model YAML (``profiles/slurm/costs.yaml``)."""
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
    """GPU-seconds and peak host memory of a configuration's jobs on one GPU class (module
    docstring)."""

    def __init__(self, config: Mapping[str, Any], costs: Mapping[str, Any], gpu: str,
                 costs_path: Path = COSTS, repo: Path = REPO,
                 calibration: cal.Calibration | None = None) -> None:
        self.config, self.costs, self.where, self.repo = config, costs, str(costs_path), repo
        self.calibration = calibration
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

    def training(self, task: str, model: str, method: str | None = None) -> dict[str, Any]:
        """The settings ``model`` fine-tunes with for ``task`` (and ``method``), resolved as
        ``biasrepro finetune`` resolves them (named settings, registry overrides, the
        method's own setting)."""
        trainings = self.config["models"]["training"]
        own = self.registry.get(model, {}).get("training", {}).get(task)
        choice = None if method is None else training.method_choice(self.methods, method, task)
        return training.resolve(trainings[task], own, trainings.get("named", {}),
                                seed=self.config["seed"], task=task, model=model,
                                method_choice=choice, method=method or "METHOD")

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
            ratio = {"original": 1.0, "perturbed": cc["perturbed_ratio"],
                     "stratified": cc["stratified_ratio"],
                     # the harness perturbs the re-stratified set (rule perturb_training);
                     # measured where it was (the world), else the product (costs.yaml)
                     "perturbed_stratified": cc.get(
                         "perturbed_stratified_ratio",
                         cc["stratified_ratio"] * cc["perturbed_ratio"])}
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

    def works(self, job: Job, low: bool = False) -> tuple[int, list[Work]]:
        """The models ``job`` loads and its passes over data on the GPU (``low``: fine-tuning
        stopped as early as early stopping allows)."""
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
            return self._finetune(job, task, low)
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

    def finetune_runs(self, job: Job, task: str) -> list[tuple[str, float, float]]:
        """(method, training rows, validation rows) of each run of a fine-tuning job: the
        validation file's rows, or ``eval_fraction`` of the training data held out."""
        validation = job.validation or ("none",) * len(job.output)
        runs = []
        for method, val in zip((Path(o).name for o in job.output), validation, strict=True):
            s = self.training(task, job.wildcards["model"], method)
            rows = self.training_rows(task, self.methods[method]["data"])
            if val != "none":
                runs.append((method, rows, self.validation_rows(task, val)))
            else:
                held = rows * s["eval_fraction"]
                runs.append((method, rows - held, held))
        return runs

    def _finetune(self, job: Job, task: str, low: bool = False) -> tuple[int, list[Work]]:
        """Every method of the task x model (one output directory each): its epochs over its
        training data, and an evaluation on the validation file or held-out share once per
        epoch or every ``eval_steps`` steps. ``low``: a run with early stopping stops at the
        earliest it can, after ``early_stopping_patience`` + 1 evaluations (the first sets
        the best loss; ``patience`` more without improvement stop it), if that is before
        its last step."""
        model = job.wildcards["model"]
        params, _ = self.model(model)
        works = []
        for method, train, held in self.finetune_runs(job, task):
            s = self.training(task, model, method)
            length = min(self.data(TASK_DATASET[task])["batch_tokens"], s["max_length"])
            epochs, batch = s["epochs"], s["batch_size"]
            patience = s.get("early_stopping_patience")
            per_epoch = math.ceil(train / batch)
            steps = per_epoch * epochs
            every = s.get("eval_steps") or per_epoch  # steps between evaluations
            evals, trained = steps // every, float(epochs)  # trained: epochs' worth of data
            if low and held and patience is not None and (patience + 1) * every < steps:
                evals = patience + 1
                steps = evals * every
                trained = steps / per_epoch
            works.append(Work(True, params, train * length * trained, steps))
            if held:
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

    def templates(self, characteristic: str) -> float:
        """Templates of one characteristic: costs.yaml's count, at most ``max_templates``."""
        bf = self.config["biasfinder"]
        templates = self.data(bf["dataset"])["biasfinder"][characteristic]["templates"]
        if bf.get("max_templates") is not None:
            templates = min(templates, bf["max_templates"])
        return float(templates)

    def mutants(self, characteristic: str) -> float:
        """Mutants of one characteristic: mutants per template x templates."""
        return self.mutants_per_template(characteristic) * self.templates(characteristic)

    def wordlist_sizes(self) -> dict[str, int]:
        """Sizes of the lists mutants are filled from (``biasfinder.lists``): BiasFinder's own
        files (``original``; costs.yaml ``biasfinder_lists``, not read offline) or the
        project's (``biasfinder.wordlists``' occupations and gender nouns, ``names.n`` names
        per gender and ``countries.n`` countries, as the workflow generates them)."""
        bf = self.config["biasfinder"]
        if bf.get("lists", "project") == "original":
            return dict(self._cost("biasfinder_lists", "original"))
        from biasrepro.biasfinder import wordlists

        folder = self.repo / bf["wordlists"]
        return {"occupations": len(wordlists.read_occupations(folder / "occupations.csv")),
                "gender_noun_pairs": len(wordlists.read_gender_nouns(
                    folder / "gender_nouns.csv")),
                "names": bf["names"]["n"], "countries": bf["countries"]["n"]}

    def mutants_per_template(self, characteristic: str) -> float:
        """Mutants of a template as :mod:`biasrepro.biasfinder.mutants` builds them: one per
        occupation; one per country; for gender, each of 2 classes fills a template's
        ``<name>`` with each of its names (the first ``max_names``) and its ``<gaw>`` with
        each noun pair, names x nouns where it has both, once where it has pronouns only;
        averaged over costs.yaml's templates by kind (``gender_kinds``)."""
        sizes = self.wordlist_sizes()
        if characteristic == "occupation":
            return float(sizes["occupations"])
        if characteristic == "country":
            return float(sizes["countries"])
        if characteristic != "gender":
            raise BiasreproError(f"no mutant count for the characteristic {characteristic!r}")
        bf = self.config["biasfinder"]
        names = sizes["names"]
        if bf.get("max_names") is not None:
            names = min(names, bf["max_names"])
        nouns = sizes["gender_noun_pairs"]
        fills = {"name": names, "name_noun": names * nouns, "noun": nouns, "pronoun": 1}
        kinds = self.data(bf["dataset"])["biasfinder"]["gender"]["gender_kinds"]
        return 2 * sum(n * fills[k] for k, n in kinds.items()) / sum(kinds.values())

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
        """Seconds of one work: measured (the calibration's line) or assumed (the larger of
        its FLOPs at ``mfu`` of the peak and its batches at the floor)."""
        k, floor = (6, "train_step_s") if work.train else (2, "infer_batch_s")
        flops = k * work.params * work.tokens
        if self.calibration is not None:
            return self.calibration.line(work.train).seconds(flops, work.batches)
        return max(flops / self.flops, work.batches * float(self._cost("overheads", floor)))

    def seconds(self, job: Job, low: bool = False) -> float:
        """GPU-seconds of ``job`` (0 for a CPU job); ``low``: with early stopping at its
        earliest."""
        if job.gpus <= 0:
            return 0.0
        try:
            runs, works = self.works(job, low)
        except KeyError as e:
            raise ConfigError(f"{self.where}: a data set entry lacks the key {e} "
                              f"(rule {job.rule})") from None
        return (float(self._cost("overheads", "job_s"))
                + runs * float(self._cost("overheads", "run_s"))
                + sum(self.work_seconds(w) for w in works))


    # -- memory ------------------------------------------------------------------------------

    def _mem(self, key: str) -> float:
        return float(self._cost("memory", key))

    def _world(self, rule: str) -> float:
        """The rule's measured peak on the embedded default (costs.yaml memory.world_rss_mb)."""
        measured = self._cost("memory", "world_rss_mb")
        rule = rule.removesuffix(cfg.SEED_RULE_SUFFIX)
        return float(measured.get(rule, measured["other"]))

    def model_size(self, name: str) -> dict[str, float]:
        """Total parameters, layers, hidden size and heads of a model (a registry name or a
        Hub id); embedded models from ``models.embedded``."""
        entry = self.registry.get(name, {})
        if entry.get("source") == "embedded":
            e = self.config["models"]["embedded"]
            h = e["hidden_size"]
            total = (e["vocab_size"] + e["max_length"]) * h + e["num_hidden_layers"] * (
                4 * h * h + 2 * h * e["intermediate_size"])
            return {"total": float(total), "layers": e["num_hidden_layers"], "hidden": h,
                    "heads": e["num_attention_heads"]}
        sizes = self._cost("models")
        for key in (entry.get("id"), name):
            if key in sizes and "total" in sizes[key]:
                return {k: float(sizes[key][k]) for k in ("total", "layers", "hidden", "heads")}
        raise ConfigError(f"{self.where}: no memory size for model {name!r}; add "
                          f"models.{entry.get('id', name)} (total, layers, hidden, heads)")

    def _weights_mb(self, name: str, train: bool, gpus: int, batch: int = 0,
                    length: int = 0) -> float:
        """A model's host memory: its parameters x bytes each, plus, on the CPU, activations
        of a batch (training: every layer's, kept for the backward pass; inference: one
        layer's at a time), s*b*h*(34 + 5*a*s/h) bytes per layer in 16 bits (Korthikanti
        et al. 2022, eq. 1), doubled for fp32."""
        m = self.model_size(name)
        mb = m["total"] * self._mem("train_bytes" if train else "infer_bytes") / 2**20
        if gpus <= 0 and batch and length:
            per_layer = 2 * length * batch * m["hidden"] * (
                34 + 5 * m["heads"] * length / m["hidden"])
            mb += per_layer * (m["layers"] if train else 1) / 2**20
        return mb

    def _base(self, rule: str, job: Job) -> float:
        """The rule's measured base plus the CUDA runtime's host memory for a GPU job."""
        return self._world(rule) + (self._mem("cuda_host_mb") if job.gpus > 0 else 0.0)

    def _text_kb(self, tokens: float) -> float:
        """KB of a text of ``tokens`` subword tokens, held ``text_copies`` times."""
        return self._mem("text_copies") * (tokens * self._mem("chars_per_token") + 57) / 1024

    def row_kb(self, task: str) -> float:
        """KB of a row of a task's data frames: a Civil Comments row as measured (costs.yaml
        civil_comments_row_kb), an IMDB review's longer text added."""
        cc = self.data("civil_comments")["tokens"]
        tokens = self.data(TASK_DATASET[task])["tokens"]
        return self._mem("civil_comments_row_kb") + self._text_kb(max(0.0, tokens - cc))

    def memory(self, job: Job) -> float:
        """Estimated peak host memory (RSS) of ``job`` in MB (module docstring)."""
        rule = job.rule.removesuffix(cfg.SEED_RULE_SUFFIX)
        task = rule.partition("_")[2]
        try:
            if rule.startswith("finetune_") and task in TASK_DATASET:
                return self._finetune_memory(job, task)
            if rule.startswith("predict_") and task in TASK_DATASET:
                model = job.wildcards["model"]
                sets = sorted({Path(o).stem for o in job.output})
                return self._predict_memory(job, model,
                                            [self.scored_rows(task, s) for s in sets],
                                            self.training(task, model)["max_length"],
                                            self._world("predict"))
            handler = getattr(self, f"_memory_{rule}", None)
            if handler is not None:
                return handler(job)
            return self._world(rule) + self._table_memory(job)
        except KeyError as e:
            raise ConfigError(f"{self.where}: a memory entry lacks the key {e} "
                              f"(rule {job.rule})") from None

    def _table_memory(self, job: Job) -> float:
        """Light jobs that hold a task's data (its training sets or both fairness sets):
        their rows x :meth:`row_kb`; others (tables, figures, downloads) nothing beyond
        their measured base."""
        rule, task = job.rule.removesuffix(cfg.SEED_RULE_SUFFIX), job.wildcards.get("task")
        if task not in TASK_DATASET:
            return 0.0
        if rule == "perturb_training":
            rows = self.training_rows(task, job.wildcards["kind"])
            if task == "sentiment":  # long reviews: their parsed tokens dominate
                source = PERTURB_SOURCE[task][job.wildcards["kind"]]
                return (rows * self.row_kb(task) / 1024
                        + self._swap_docs_mb(self.training_rows(task, source)))
        elif rule in ("leakage_check", "fairness_report"):  # every training set of the task
            kinds = {self.methods[m]["data"] for m in self.config["methods"]["tasks"][task]}
            rows = sum(self.training_rows(task, k) for k in kinds)
            if rule == "leakage_check" and task == "sentiment":  # and BiasFinder's mutants
                rows += sum(self.mutants(c) for c in self.config["biasfinder"]["characteristics"])
        elif rule == "fairness_sets":
            rows = sum(r for r, _ in self.fairness_texts(task))
        else:
            return 0.0
        return rows * self.row_kb(task) / 1024

    def _finetune_memory(self, job: Job, task: str) -> float:
        """Base + the model with gradients and AdamW state (+ activations on a CPU) + the
        largest run's training and validation texts, tokenised (token_bytes per token)."""
        model = job.wildcards["model"]
        s = self.training(task, model)
        data = self.data(TASK_DATASET[task])
        tokens = min(data["tokens"], s["max_length"])
        per_row = (tokens * self._mem("token_bytes") + self._text_kb(tokens) * 1024) / 2**20
        rows = max((train + held for _, train, held in self.finetune_runs(job, task)),
                   default=0.0)
        length = min(data["batch_tokens"], s["max_length"])
        return (self._base("finetune", job) + rows * per_row
                + self._weights_mb(model, True, job.gpus, s["batch_size"], length))

    def _memory_pretrain_embedded(self, job: Job) -> float:
        e = self.config["models"]["embedded"]
        return self._base(job.rule, job) + self._weights_mb(
            job.wildcards["model"], True, job.gpus, e["pretrain"]["batch_size"], e["max_length"])

    def _predict_memory(self, job: Job, model: str, texts: Sequence[tuple[float, float]],
                        max_length: int, base: float) -> float:
        """``biasrepro predict``: ``base`` (the rule's peak on the embedded default, which
        loads each method's model in turn; predict_base_mb for one tiny model), the weights, a
        chunk of up to predict's CHUNK_ROWS rows (fitted, plus its model inputs' tokens) and
        predict_row_bytes per row scored."""
        from_chunk = 65536  # models/predict.py CHUNK_ROWS (tests/test_plan.py checks it)
        rows = sum(r for r, _ in texts)
        held = min(rows, from_chunk)
        tokens = max((min(t, max_length) for _, t in texts), default=0)
        return (base + (self._mem("cuda_host_mb") if job.gpus > 0 else 0.0)
                + self._weights_mb(model, False, job.gpus)
                + self._mem("predict_chunk_mb") * held / from_chunk
                + held * tokens * self._mem("predict_token_bytes") / 2**20
                + rows * self._mem("predict_row_bytes") / 2**20)

    def _characteristics(self, job: Job) -> list[str]:
        return sorted({Path(o).name.split(".")[0] for o in job.output})

    def _memory_biasfinder_predict(self, job: Job) -> float:
        model = job.wildcards["model"]
        tokens = self.data(self.config["biasfinder"]["dataset"])["tokens"]
        return self._predict_memory(job, model,
                                    [(self.mutants(c), tokens) for c in self._characteristics(job)],
                                    self.training("sentiment", model)["max_length"],
                                    self._world(job.rule))

    def _corpus_tokens(self) -> float:
        bf = self.config["biasfinder"]
        data = self.data(bf["dataset"])
        return data[bf["split"]] * data["tokens"]

    def _memory_biasfinder_parse(self, job: Job) -> float:
        """spaCy (and a worker per further process) + every parsed Doc (parse_token_kb per
        token); with fastcoref, torch and the coreference model too (on the CPU, one batch
        of 16 segments of 512 tokens through one layer at a time)."""
        bf = self.config["biasfinder"]
        mb = (self._mem("spacy_mb") + self._corpus_tokens() * self._mem("parse_token_kb") / 1024
              + (bf["parse"].get("n_process", 1) - 1) * self._mem("spacy_worker_mb")
              + (self._mem("cuda_host_mb") if job.gpus > 0 else 0.0))
        if bf["coref"]["backend"] == "fastcoref":
            mb += self._mem("torch_mb") + self._weights_mb(bf["coref"]["model"], False,
                                                           job.gpus, 16, 512)
        return mb

    def _memory_biasfinder_templates(self, job: Job) -> float:
        return (self._mem("spacy_mb")
                + self._corpus_tokens() * self._mem("docbin_token_kb") / 1024)

    def _memory_biasfinder_mutants(self, job: Job) -> float:
        """A characteristic's mutants, all held (mutant_row_kb, measured on world reviews;
        longer reviews add their text)."""
        data = self.costs["datasets"]["imdb"]
        world = data["world"]["tokens"] if "world" in data else 0
        tokens = self.data(self.config["biasfinder"]["dataset"])["tokens"]
        per_row = self._mem("mutant_row_kb") + self._text_kb(max(0.0, tokens - world))
        mutants = sum(self.mutants(c) for c in self._characteristics(job))
        return self._world(job.rule) + mutants * per_row / 1024

    def _memory_biasfinder_btc(self, job: Job) -> float:
        """One characteristic at a time, its pairs streamed: the largest one's mutants."""
        mutants = max(self.mutants(c) for c in self.config["biasfinder"]["characteristics"])
        return self._mem("btc_base_mb") + mutants * self._mem("btc_row_kb") / 1024

    def _memory_restratify_training(self, job: Job) -> float:
        """The masked LM + the training split and its synthetic rows (Civil Comments rows)."""
        r = self.config["perturbation"]["restratify"]
        rows = self.training_rows("toxicity", "stratified")
        mb = self._base(job.rule, job) + rows * self.row_kb("toxicity") / 1024
        if r["augmenter"] == "contextual":
            length = min(self.data("civil_comments")["batch_tokens"],
                         self._cost("batching", "nlpaug_max_tokens"))
            mb += self._weights_mb(r["model"], False, job.gpus,
                                   self._cost("batching", "nlpaug_rows"), length)
        return mb

    def _sentdebias_memory(self, job: Job) -> float:
        """The encoder + one chunk of embedded counterfactual tuples (the corpus is streamed,
        so its size does not count)."""
        s = self.config["representation"]["sentdebias"]
        tuple_size = max(self.data("attribute_words")["tuple_size"].values())
        chunk = (self._mem("sentdebias_chunk_tuples") * tuple_size
                 * self.model_size(job.wildcards["model"])["hidden"] * 4
                 * self._mem("sentdebias_chunk_copies"))
        return (self._base(job.rule, job) + chunk / 2**20
                + self._weights_mb(job.wildcards["model"], False, job.gpus,
                                   self._cost("batching", "sentdebias_rows"), s["max_length"]))

    _memory_sentdebias_subspace = _sentdebias_memory
    _memory_sentdebias_downstream = _sentdebias_memory

    def _memory_representation_score(self, job: Job) -> float:
        return self._base(job.rule, job) + self._weights_mb(
            job.wildcards["model"], False, job.gpus, self._cost("batching", "seat_rows"), 64)

    def _memory_prepare_civil_comments(self, job: Job) -> float:
        """The kept rows (source splits kept, identity-annotated), civil_comments_row_kb each
        (fitted to the 2,000,000-row measurement)."""
        pre = self.config["preprocess"]["civil_comments"]
        cc = self.data("civil_comments")
        keep = pre.get("splits", "all")
        rows = (cc["rows"] if keep == "all" or "source_rows" not in cc
                else sum(cc["source_rows"][s] for s in keep))
        return self._world(job.rule) + rows * self._mem("civil_comments_row_kb") / 1024

    def _memory_prepare_imdb(self, job: Job) -> float:
        imdb = self.data("imdb")
        return self._world(job.rule) + (imdb["train"] + imdb["test"]) * self.row_kb(
            "sentiment") / 1024

    def _memory_imdb_gendered_perturbed_test(self, job: Job) -> float:
        rows = self.gendered_rows("test") * (1 + self.data("imdb")["perturbed_ratio"])
        return (self._world(job.rule) + rows * self.row_kb("sentiment") / 1024
                + self._swap_docs_mb(self.gendered_rows("test")))

    def _swap_docs_mb(self, reviews: float) -> float:
        """What swapping the identity terms of ``reviews`` IMDB reviews holds beyond their
        frames: their tagged tokens (swap_token_kb per token, fitted to the paper-scale dry
        run's two review swaps; a comment's few tokens are inside civil_comments_row_kb)."""
        return reviews * self.data("imdb")["tokens"] * self._mem("swap_token_kb") / 1024


def memory_warnings(jobs: Sequence[Job], model: CostModel) -> list[str]:
    """One line per rule with a job whose estimated memory exceeds the memory it asks for
    (its family's ``mem_mb``): the rule, its largest estimate, the family and its limit."""
    worst: dict[str, tuple[float, Job]] = {}
    for job in jobs:
        if job.mem_mb <= 0:
            continue
        est = model.memory(job)
        if est > job.mem_mb and est > worst.get(job.rule, (0.0, job))[0]:
            worst[job.rule] = (est, job)
    return [f"warning: rule {rule} needs about {est:,.0f} MB, more than the {job.mem_mb:,} MB "
            f"of its family {job.family!r} (compute.families.{job.family}.mem_mb)"
            for rule, (est, job) in worst.items()]


def table(jobs: Sequence[Job], model: CostModel) -> list[dict[str, Any]]:
    """One row per rule (in DAG order: its first job's level, then name) and a total row:
    GPU-hours low (early stopping at its earliest) and high (every configured epoch), the
    rule's family, its largest job's estimated memory and the memory that job asks for."""
    rows: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for job in jobs:
        row = rows.setdefault(job.rule, {"rule": job.rule, "jobs": 0, "gpu_jobs": 0,
                                         "gpu_hours_low": 0.0, "gpu_hours_high": 0.0,
                                         "family": job.family, "mem_est_mb": 0.0,
                                         "mem_mb": job.mem_mb})
        first[job.rule] = min(first.get(job.rule, job.level), job.level)
        row["jobs"] += 1
        if job.gpus > 0:
            row["gpu_jobs"] += 1
            row["gpu_hours_low"] += model.seconds(job, low=True) / 3600
            row["gpu_hours_high"] += model.seconds(job) / 3600
        if job.mem_mb > 0:
            est = model.memory(job)
            if est > row["mem_est_mb"]:
                row["mem_est_mb"], row["mem_mb"] = est, job.mem_mb
    out = sorted(rows.values(), key=lambda r: (first[r["rule"]], r["rule"]))
    total = {"rule": "total", **{c: sum(r[c] for r in out) for c in COLUMNS[1:5]},
             "family": "", "mem_est_mb": max((r["mem_est_mb"] for r in out), default=0.0),
             "mem_mb": ""}
    out.append(total)
    return out


def family_estimates(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The largest estimated memory of each family's jobs, MB (from :func:`table`)."""
    out: dict[str, float] = {}
    for r in rows:
        if r["family"]:
            out[r["family"]] = max(out.get(r["family"], 0.0), r["mem_est_mb"])
    return out


def speed_source(calibration: cal.Calibration | None, path: Path, gpu: str,
                 jobs_per_gpu: int = 1) -> str:
    """What the GPU-hours' per-batch costs are: measured (which GPU, when) or assumed; with
    the packing measured for ``jobs_per_gpu`` jobs sharing a device, where there is one."""
    if calibration is None:
        return (f"Per-batch costs are assumed (costs.yaml `overheads`, `mfu`): no calibration "
                f"for {gpu} in {path} (benchmarks/gpu_check.py --calibrate measures one).")
    text = (f"Per-batch costs are measured: {calibration.describe()} ({path}: training "
            f"{calibration.train.overhead_s * 1000:.2f} ms a step + "
            f"{calibration.train.flops_per_s / 1e12:.0f} TFLOP/s, inference "
            f"{calibration.infer.overhead_s * 1000:.2f} ms a batch + "
            f"{calibration.infer.flops_per_s / 1e12:.0f} TFLOP/s).")
    if jobs_per_gpu > 1:
        ratio = calibration.packing.get(jobs_per_gpu)
        text += (f" {jobs_per_gpu} jobs share a device (compute.jobs_per_gpu): " + (
            f"measured {ratio:.2f}x the throughput of one; the GPU jobs' wall time is about "
            f"the total / {ratio:.2f} per GPU." if ratio else
            "no packing throughput measured for that many; the total counts each job alone."))
    return text


def render(rows: Sequence[dict[str, Any]], fmt: str, *, gpu: str, configfile: Path,
           costs: Path = COSTS, warnings: Sequence[str] = (), speed: str = "") -> str:
    """The table as Markdown (with what the estimate is, and any memory warnings) or CSV."""
    def cells(r: Mapping[str, Any], digits: int) -> list[Any]:
        return [r["rule"], r["jobs"], r["gpu_jobs"], f"{r['gpu_hours_low']:.{digits}f}",
                f"{r['gpu_hours_high']:.{digits}f}", r["family"],
                f"{r['mem_est_mb']:.0f}" if r["mem_est_mb"] else "", r["mem_mb"] or ""]

    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(cells(r, 4) for r in rows)
        return buf.getvalue()
    from biasrepro.io import markdown_table

    shown = [dict(zip(COLUMNS, cells(r, 2), strict=True)) for r in rows]
    notes = "".join(f"\n{w}" for w in warnings)
    return (markdown_table(shown, COLUMNS) + f"\nJobs of `snakemake -n --forceall --configfile "
            f"{configfile}` with one GPU per GPU job; GPU-hours estimated for one {gpu} from "
            f"the cost model in {costs} (src/biasrepro/plan.py): low with early stopping at "
            f"its earliest, high with every configured epoch. mem_est_mb: the peak host memory "
            f"estimated for the rule's largest job; mem_mb: what that job asks for (its "
            f"family's compute.families mem_mb).{' ' + speed if speed else ''}\n"
            f"{notes.lstrip()}{chr(10) if notes else ''}")


def run(configfile: Path, *, gpu: str = "h200", fmt: str = "md", out: Path | None = None,
        costs: Path | None = None, calibration: Path | None = None, assumed: bool = False,
        repo: Path) -> str:
    """Build the plan of ``configfile`` for the checkout ``repo``, write it to ``out`` (or
    return it for stdout). ``calibration``: the calibration file (default
    ``profiles/slurm/calibration.yaml``); ``assumed``: ignore it."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    costs_path = costs or repo / COSTS
    cost_data = load_costs(costs_path)
    gpu_class(cost_data, gpu, costs_path)  # before the DAG: a typo fails at once
    calibration_path = calibration or repo / cal.CALIBRATION
    if calibration is not None and not calibration.is_file():
        raise ConfigError(f"{calibration}: calibration file not found")
    measured = None if assumed else cal.load(calibration_path, gpu_class(cost_data, gpu,
                                                                          costs_path))
    if measured is None and calibration is not None and not assumed:
        raise ConfigError(f"{calibration}: no calibration for GPU class {gpu!r} (run "
                          "benchmarks/gpu_check.py --calibrate on that GPU, or drop --calibration)")
    path = configfile if configfile.is_absolute() or configfile.exists() else repo / configfile
    jobs, config = dag_jobs(path.resolve(), repo)
    model = CostModel(config, cost_data, gpu, costs_path, repo=repo, calibration=measured)
    warnings = memory_warnings(jobs, model)
    for line in warnings:
        log.warning("%s", line.removeprefix("warning: "))
    speed = speed_source(measured, calibration or cal.CALIBRATION, model.gpu,
                         int(config["compute"]["jobs_per_gpu"]))
    text = render(table(jobs, model), fmt, gpu=model.gpu, configfile=configfile,
                  costs=costs or COSTS, warnings=warnings, speed=speed)
    if out is not None:
        from biasrepro.io import atomic_outputs, write_text

        with atomic_outputs(out) as (tmp,):
            write_text(text, tmp)
    return text
