"""GPU check: fine-tune a base-size model, score 100k texts, report speed.

One prepared script for a machine with a GPU: it builds a randomly initialised BERT of
bert-base size (hidden 768, 12 layers, 12 heads) with the project's WordPiece tokenizer
trained on the planted-bias world's reviews, fine-tunes it for sentiment through
:func:`biasrepro.models.finetune.finetune` (the workflow's code path: Trainer, bf16/fp16 on
the GPU) for a few hundred steps, then scores 100,000 distinct review variants with
:func:`biasrepro.models.predict.predict_proba`, and prints samples/s and peak GPU memory
(also written as JSON with ``--out``). Random weights are fine: speed and memory do not
depend on them. ``--small`` shrinks everything so the script itself can be tested on a CPU.

    python benchmarks/gpu_check.py --out gpu_check.json
    python benchmarks/gpu_check.py --calibrate profiles/slurm/calibration.yaml --gpu-class h200

``--calibrate FILE`` also times single steps of randomly initialised BERT-, ALBERT- and
RoBERTa-base models (their Hub configurations' sizes) on synthetic token ids: a training
step at the toxicity setting (32 x 61 tokens) and BiasFinder's (32 x 128, 8 x 512), a
scoring batch of ``biasrepro predict`` (65,536 padded tokens at 64 and 512 tokens a text)
and a SentenceDebias embedding batch (32 x 90), each as fp32 eager, bf16 autocast, with
fused AdamW (training) and with ``torch.compile`` (the first architecture only). It fits the
plan's lines (one for training steps, one for inference batches;
:mod:`biasrepro.calibration`) to the variant the workflow runs (bf16 autocast and fused
AdamW on a GPU), adds what the workflow's own loops cost per step beyond the bare one (the
fine-tune and scoring runs above), measures ``--pack`` jobs training at once against one
alone (and whether their weights match), and writes the GPU class's entry into FILE with
the device name and the date. Every timed step is also printed as a ratio to its FLOP floor
(its FLOPs at the class's datasheet peak).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import yaml
from transformers import (
    AlbertConfig,
    AutoModel,
    AutoModelForSequenceClassification,
    BertConfig,
    BertForSequenceClassification,
    RobertaConfig,
)

from biasrepro import calibration
from biasrepro.data.world import reviews
from biasrepro.data.world.vocabulary import FIRST_NAMES
from biasrepro.models.finetune import finetune
from biasrepro.models.load import ModelSpec
from biasrepro.models.predict import score_texts
from biasrepro.models.tokenizers import train_tokenizer

REPO = Path(__file__).resolve().parents[1]
BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
        "intermediate_size": 3072}
SMALL = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
         "intermediate_size": 64}


#: the shapes timed (rows x tokens): training at the toxicity paper's setting and
#: BiasFinder's two, a scoring batch of CUDA_BATCH_TOKENS at two lengths, SentenceDebias
TRAIN_SHAPES = {"toxicity": (32, 61), "bert4doc": (32, 128), "tse": (8, 512)}
INFER_SHAPES = {"score_64": (1024, 64), "score_512": (128, 512), "sentdebias": (32, 90)}
#: ``--small``: sizes whose step times still grow clearly with their FLOPs on a CPU
SMALL_STEPS = {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
               "intermediate_size": 512}
SMALL_TRAIN_SHAPES = {"toxicity": (4, 16), "bert4doc": (8, 64), "tse": (8, 128)}
SMALL_INFER_SHAPES = {"score_64": (16, 16), "score_512": (32, 128), "sentdebias": (8, 24)}
#: variant -> (bf16 autocast, fused AdamW, torch.compile)
TRAIN_VARIANTS = {"fp32": (False, False, False), "bf16": (True, False, False),
                  "bf16_fused": (True, True, False), "bf16_fused_compile": (True, True, True)}
INFER_VARIANTS = {"fp32": (False, False, False), "bf16": (True, False, False),
                  "bf16_compile": (True, False, True)}


def arch_config(arch: str, sizes: dict[str, int]) -> tuple[object, int]:
    """A base-size configuration of ``arch`` (the Hub models' sizes) and its compute
    parameters N = L * (4 H^2 + 2 H I), as the plan counts them."""
    common = {"num_labels": 2, **sizes}
    if arch == "bert":
        config = BertConfig(vocab_size=30522, **common)
    elif arch == "albert":  # albert-base-v2: a 128-wide factorised embedding, one shared layer
        config = AlbertConfig(vocab_size=30000, embedding_size=min(128, sizes["hidden_size"]),
                              hidden_act="gelu_new", **common)
    else:
        config = RobertaConfig(vocab_size=50265, max_position_embeddings=514,
                               type_vocab_size=1, pad_token_id=1, **common)
    h, i = sizes["hidden_size"], sizes["intermediate_size"]
    return config, sizes["num_hidden_layers"] * (4 * h * h + 2 * h * i)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_steps(steps, device: torch.device, repeats: int) -> list[float]:
    """The least seconds of each of ``steps`` (warmed up already) over ``repeats`` rounds.
    A round calls every step once, so a slow spell on the machine (other work only ever
    adds time) falls on all of them alike instead of on whichever step it overlaps; the
    minimum is each step's own time."""
    best = [float("inf")] * len(steps)
    for _ in range(repeats):
        for i, step in enumerate(steps):
            start = time.perf_counter()
            step()
            _sync(device)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def _inputs(config, rows: int, tokens: int, device: torch.device, seed: int):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, config.vocab_size, (rows, tokens), generator=g).to(device)
    labels = torch.randint(0, 2, (rows,), generator=g).to(device)
    return ids, torch.ones_like(ids), labels


def train_stepper(config, shape, device, variant, seed):
    """A function doing one training step of a fresh model at ``shape``, and the model."""
    amp, fused, compiled = TRAIN_VARIANTS[variant]
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config).to(device).train()
    forward = torch.compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=fused, foreach=None if fused
                            else True)
    ids, mask, labels = _inputs(config, *shape, device, seed)

    def step() -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = forward(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, model


def infer_stepper(config, shape, device, variant, seed, kind):
    """One inference batch: class probabilities (scoring) or mean-pooled hidden states
    (SentenceDebias)."""
    amp, _, compiled = INFER_VARIANTS[variant]
    torch.manual_seed(seed)
    cls = AutoModel if kind == "sentdebias" else AutoModelForSequenceClassification
    model = cls.from_config(config).to(device).eval()
    forward = torch.compile(model) if compiled else model
    ids, mask, _ = _inputs(config, *shape, device, seed)

    def step() -> None:
        with torch.inference_mode(), torch.autocast(device.type, dtype=torch.bfloat16,
                                                    enabled=amp):
            out = forward(input_ids=ids, attention_mask=mask)
            if kind == "sentdebias":
                out.last_hidden_state.float().mean(1).cpu()
            else:
                out.logits.float().softmax(-1).cpu()

    return step


def workflow_variants(device: torch.device) -> tuple[str, str]:
    """The (training, inference) variant the workflow runs on ``device``: bf16 autocast and
    fused AdamW on a GPU (models/finetune.py, models/predict.py), fp32 on a CPU."""
    return ("bf16_fused", "bf16") if device.type == "cuda" else ("fp32", "fp32")


def time_points(args, device: torch.device, peak: float | None) -> list[dict]:
    """Every timed step: model, kind, shape, variant, FLOPs, seconds, ratio to the FLOP
    floor and peak device memory."""
    sizes = SMALL_STEPS if args.small else BASE
    train_shapes = SMALL_TRAIN_SHAPES if args.small else TRAIN_SHAPES
    infer_shapes = SMALL_INFER_SHAPES if args.small else INFER_SHAPES
    compile_ok = device.type == "cuda" or args.compile
    points = []
    for arch in args.archs:
        config, params = arch_config(arch, sizes)
        groups = [("train", variant, train_shapes) for variant in TRAIN_VARIANTS]
        groups += [("infer", variant, infer_shapes) for variant in INFER_VARIANTS]
        for kind, variant, shapes in groups:
            # torch.compile compiles once per model and shape (most of its time): the first
            # architecture shows whether it helps
            if variant.endswith("compile") and (not compile_ok or arch != args.archs[0]):
                continue
            # one variant's shapes are timed together, in rounds (the line is fitted
            # through them); each model's peak memory is taken while it is built and
            # warmed up, over what the models before it hold
            warmup = args.warmup * (3 if variant.endswith("compile") else 1)
            steps, peaks = [], []
            for name, shape in shapes.items():
                if device.type == "cuda":
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
                    held = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                if kind == "train":
                    step, _ = train_stepper(config, shape, device, variant, args.seed)
                else:
                    step = infer_stepper(config, shape, device, variant, args.seed, name)
                for _ in range(warmup):
                    step()
                _sync(device)
                peaks.append(round((torch.cuda.max_memory_allocated() - held) / 2**20)
                             if device.type == "cuda" else None)
                steps.append(step)
            times = time_steps(steps, device, args.repeats)
            for (name, (rows, tokens)), seconds, peak_mib in zip(shapes.items(), times, peaks,
                                                                 strict=True):
                flops = (6 if kind == "train" else 2) * params * rows * tokens
                point = {"model": arch, "kind": kind, "shape": name, "rows": rows,
                         "tokens": tokens, "variant": variant, "flops": flops,
                         "seconds": round(seconds, 6),
                         "flop_floor_ratio": round(seconds / (flops / peak), 2) if peak else None,
                         "peak_mib": peak_mib}
                points.append(point)
                print(f"  {arch:7} {kind:5} {name:10} {rows:5} x {tokens:3} {variant:18} "
                      f"{seconds * 1000:9.2f} ms  {flops / seconds / 1e12:8.2f} TFLOP/s"
                      + (f"  x{point['flop_floor_ratio']} the FLOP floor" if peak else ""),
                      flush=True)
            del steps, step  # (the models go before the next group is measured)
    return points


def _pack_worker(args_tuple) -> tuple[float, str]:
    """One packed job: ``steps`` training steps of the workflow's variant at the toxicity
    shape, started together with the others (``barrier``); its seconds and weights' digest."""
    sizes, arch, shape, variant, steps, seed, barrier, deterministic = args_tuple
    if deterministic:  # (cuBLAS needs its workspace fixed before CUDA starts; an op
        # without a deterministic kernel warns instead of stopping the measurement)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    config, _ = arch_config(arch, sizes)
    step, model = train_stepper(config, shape, device, variant, seed)
    step()  # warm up (the first step allocates and picks kernels); counted in the digest
    _sync(device)
    barrier.wait()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().float().cpu().numpy().tobytes())
    return seconds, digest.hexdigest()


def packing(args, device: torch.device) -> dict:
    """``args.pack`` processes training at once against one alone (spawned: CUDA needs it):
    the summed throughput's ratio, and whether every job's weights equal the alone run's
    (deterministic kernels on; the workflow's claim that a model does not depend on what
    shares its device)."""
    sizes = SMALL_STEPS if args.small else BASE
    shape = (SMALL_TRAIN_SHAPES if args.small else TRAIN_SHAPES)["toxicity"]
    variant = workflow_variants(device)[0]
    ctx = multiprocessing.get_context("spawn")
    results = {}
    for jobs in (1, args.pack):
        manager = ctx.Manager()
        barrier = manager.Barrier(jobs)
        with ctx.Pool(jobs) as pool:
            results[jobs] = pool.map(_pack_worker, [
                (sizes, "bert", shape, variant, args.pack_steps, args.seed, barrier, True)
                for _ in range(jobs)])
        manager.shutdown()
    (alone_s, alone_digest), = results[1]
    packed_s = max(s for s, _ in results[args.pack])
    ratio = (args.pack / packed_s) / (1 / alone_s)
    same = all(d == alone_digest for _, d in results[args.pack])
    print(f"packing: {args.pack} jobs x {args.pack_steps} steps in {packed_s:.2f} s, one alone "
          f"{alone_s:.2f} s: {ratio:.2f}x the throughput; weights identical to alone: {same}",
          flush=True)
    return {"jobs": args.pack, "throughput_ratio": round(ratio, 3), "identical_weights": same,
            "seconds_alone": round(alone_s, 3), "seconds_packed": round(packed_s, 3)}


def peak_flops(gpu_class: str | None) -> float | None:
    """The class's dense bf16 peak from the plan's cost model, or None."""
    if not gpu_class:
        return None
    from biasrepro.plan import COSTS, load_costs
    from biasrepro.plan import gpu_class as known

    costs = load_costs(REPO / COSTS)
    return float(costs["gpus"][known(costs, gpu_class)]["peak_flops"])


def write_calibration(path: Path, entries: dict) -> None:
    """The calibration file, whole or not at all."""
    header = ("# Measured GPU speed for `biasrepro plan` (src/biasrepro/calibration.py), one "
              "entry per GPU class,\n# written by benchmarks/gpu_check.py --calibrate on that "
              "GPU (see each entry's command).\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(header + yaml.safe_dump(entries, sort_keys=False))
    tmp.replace(path)


#: the issue's targets on one H200: a toxicity epoch over 160K rows (s), packed throughput
#: (x one job), 1.1 M mutants scored (s), the paper profile's calibrated plan (GPU-hours)
TARGETS = {"toxicity_epoch_s": 120.0, "packed_throughput": 5.0, "mutants_scored_s": 300.0,
           "paper_plan_gpu_hours": 3.0}


def targets(args, key: str, measured: calibration.Calibration, entry: dict, figures: dict,
            peak: float | None) -> dict:
    """The measured figures the targets are stated in, each with its ratio to its FLOP
    floor where the GPU class's peak is known: a BERT-base toxicity epoch (160,000 rows,
    5,000 steps of 32 x 61 tokens, the workflow's Trainer step), the packed throughput,
    1.1 M mutants at the scoring run's rate (its texts and padding), and the paper
    profile's plan with this calibration."""
    _, params = arch_config("bert", SMALL_STEPS if args.small else BASE)
    steps, rows, tokens = 5000, 32, 61
    epoch_flops = 6 * params * steps * rows * tokens
    epoch_s = measured.train.seconds(epoch_flops, steps)
    per_text = figures["score_padded_tokens"] / figures["scored_texts"]
    mutants = 1_100_000
    scored_s = mutants / figures["score_texts_per_s"]
    scored_flops = 2 * params * per_text * mutants
    out = {"toxicity_epoch_s": round(epoch_s, 1),
           "toxicity_epoch_flop_floor_ratio": round(epoch_s / (epoch_flops / peak), 1)
           if peak else None,
           "mutants_scored_s": round(scored_s, 1),
           "mutants_scored_flop_floor_ratio": round(scored_s / (scored_flops / peak), 1)
           if peak else None,
           "packed_throughput": (entry.get("packing_check") or {}).get("throughput_ratio")}
    from biasrepro import plan
    from biasrepro.errors import BiasreproError

    try:
        rows_csv = plan.run(Path("config/paper.yaml"), gpu=key, fmt="csv",
                            calibration=args.calibrate, repo=REPO)
    except BiasreproError as e:  # not a costs.yaml GPU class (a CPU run without --gpu-class)
        print(f"paper plan: not costed ({e})", flush=True)
    else:
        total = next(r for r in rows_csv.splitlines() if r.startswith("total,")).split(",")
        out["paper_plan_gpu_hours"] = [float(total[3]), float(total[4])]
    for name, goal in TARGETS.items():
        value = out.get(name)
        shown = (f"{value[0]:.2f}-{value[1]:.2f}" if isinstance(value, list)
                 else "not measured" if value is None else f"{value:,.2f}")
        floor = out.get(name.replace("_s", "_flop_floor_ratio")) if name.endswith("_s") else None
        better = "at least" if name == "packed_throughput" else "at most"
        print(f"target {name}: {shown} ({better} {goal:g})"
              + (f", x{floor} its FLOP floor" if floor else ""), flush=True)
    return out


def calibrate(args, figures: dict, trainer: tuple[float, int, int],
              scoring: tuple[float, int, int]) -> None:
    """Time the steps, fit the plan's lines and write the GPU class's entry into
    ``args.calibrate`` (other classes' entries are kept). ``trainer``: seconds, steps and
    padded tokens of the workflow's fine-tuning beyond its fixed costs; ``scoring``: the
    same of its scoring run (batches for steps)."""
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    peak = peak_flops(args.gpu_class) if cuda else None
    points = time_points(args, device, peak)
    train_variant, infer_variant = workflow_variants(device)
    lines = {}
    for kind, variant in (("train", train_variant), ("infer", infer_variant)):
        chosen = [(p["flops"], p["seconds"]) for p in points
                  if p["kind"] == kind and p["variant"] == variant]
        lines[kind] = calibration.fit(chosen)
    # what the workflow's loops add per step beyond the bare step, at the same sizes
    _, params = arch_config("bert", SMALL if args.small else BASE)
    (train_s, train_steps, train_tokens), (score_s, batches, score_tokens) = trainer, scoring
    trainer_extra = max(0.0, (train_s - lines["train"].seconds(6 * params * train_tokens,
                                                               train_steps)) / train_steps)
    predict_extra = max(0.0, (score_s - lines["infer"].seconds(2 * params * score_tokens,
                                                               batches)) / batches)
    entry = {
        "device": figures["device"],
        "date": datetime.date.today().isoformat(),
        "torch": str(torch.__version__),
        "precision": "bf16" if cuda else "fp32",
        "train": {"overhead_s": lines["train"].overhead_s + trainer_extra,
                  "flops_per_s": lines["train"].flops_per_s,
                  "bare_overhead_s": lines["train"].overhead_s,
                  "trainer_extra_s": trainer_extra, "variant": train_variant},
        "infer": {"overhead_s": lines["infer"].overhead_s + predict_extra,
                  "flops_per_s": lines["infer"].flops_per_s,
                  "bare_overhead_s": lines["infer"].overhead_s,
                  "predict_extra_s": predict_extra, "variant": infer_variant},
        "points": points,
        "command": "python benchmarks/gpu_check.py " + " ".join(sys.argv[1:]),
    }
    if args.pack > 1:
        entry["packing_check"] = packing(args, device)
        entry["packing"] = {args.pack: entry["packing_check"]["throughput_ratio"]}
    key = args.gpu_class or ("cpu" if not cuda else figures["device"].lower().replace(" ", "_"))
    existing = {}
    if args.calibrate.is_file():
        existing = yaml.safe_load(args.calibrate.read_text()) or {}
    existing[key] = entry
    write_calibration(args.calibrate, existing)
    measured = calibration.parse(existing, key, args.calibrate)  # what the plan will read
    entry["targets"] = targets(args, key, measured, entry, figures, peak)
    write_calibration(args.calibrate, existing)
    print(f"calibration {key}: training {entry['train']['overhead_s'] * 1000:.2f} ms a step "
          f"(bare {lines['train'].overhead_s * 1000:.2f} + Trainer {trainer_extra * 1000:.2f}) "
          f"+ {lines['train'].flops_per_s / 1e12:.2f} TFLOP/s; inference "
          f"{entry['infer']['overhead_s'] * 1000:.2f} ms a batch + "
          f"{lines['infer'].flops_per_s / 1e12:.2f} TFLOP/s; wrote {args.calibrate}",
          flush=True)
    peaks = [p["peak_mib"] for p in points if p["peak_mib"] is not None]
    if peaks:
        train_peak = max(p["peak_mib"] for p in points if p["kind"] == "train")
        infer_peak = max(p["peak_mib"] for p in points if p["kind"] == "infer")
        print(f"device memory: training steps up to {train_peak} MiB, inference batches up to "
              f"{infer_peak} MiB (compute.families.train/score.gpu_free_mb hold these plus "
              "the CUDA context)", flush=True)


def padded_tokens(lengths: list[int], batch: int, epochs: int, seed: int) -> int:
    """The tokens of ``epochs`` epochs of batches padded to their longest, the texts in a
    seeded random order (the Trainer's own order is another, of the same statistics)."""
    rng = random.Random(seed)
    order = list(lengths)
    total = 0
    for _ in range(epochs):
        rng.shuffle(order)
        total += sum(max(order[i:i + batch]) * len(order[i:i + batch])
                     for i in range(0, len(order), batch))
    return total


def world_reviews(seed: int) -> dict[str, pd.DataFrame]:
    settings = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["world"]["reviews"]
    splits, _, _ = reviews.build(settings, seed=seed)
    return splits


def variants(texts: list[str], n: int, seed: int) -> list[str]:
    """``n`` distinct texts: reviews with a name and a counter appended (mutant-like)."""
    rng = random.Random(seed)
    names = [name for names in FIRST_NAMES.values() for name in names]
    return [f"{texts[i % len(texts)]} {rng.choice(names)} said so, take {i}." for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=5, help="5 epochs x 63 batches = 315 steps")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--score", type=int, default=100_000, help="texts to score")
    p.add_argument("--small", action="store_true", help="tiny sizes, to test on a CPU")
    p.add_argument("--seed", type=int, default=20231105)
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    p.add_argument("--calibrate", type=Path, default=None, metavar="FILE",
                   help="also time single steps and write the plan's calibration into FILE "
                   "(profiles/slurm/calibration.yaml)")
    p.add_argument("--gpu-class", default=None,
                   help="the calibration's GPU class, as costs.yaml names it (h200, a100, ...)")
    p.add_argument("--archs", nargs="+", default=["bert", "albert", "roberta"],
                   choices=["bert", "albert", "roberta"])
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before timing")
    p.add_argument("--repeats", type=int, default=20, help="timed steps (the least is kept)")
    p.add_argument("--compile", action="store_true",
                   help="also time torch.compile on a CPU (always on a GPU)")
    p.add_argument("--pack", type=int, default=8, help="jobs training at once (1: skip)")
    p.add_argument("--pack-steps", type=int, default=200)
    args = p.parse_args(argv)
    sizes = SMALL if args.small else BASE
    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    print(f"device: {device}; torch {torch.__version__}; sizes {sizes}", flush=True)

    splits = world_reviews(args.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tokenizer = train_tokenizer("bert", splits["train"]["text"].tolist(), vocab_size=8000,
                                    max_length=args.max_length)
        config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=args.max_length,
                            pad_token_id=tokenizer.pad_token_id, num_labels=2, **sizes)
        torch.manual_seed(args.seed)
        BertForSequenceClassification(config).save_pretrained(tmp / "base")
        tokenizer.save_pretrained(tmp / "base")
        splits["train"].to_parquet(tmp / "train.parquet")
        settings = {"seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size,
                    "learning_rate": 2e-5, "max_length": args.max_length, "warmup_steps": 0,
                    "weight_decay": 0.0, "early_stopping_patience": None,
                    "eval_fraction": 0.0, "truncation_side": "right"}
        tokenizer.model_max_length = args.max_length
        lengths = [len(ids) for ids in tokenizer(splits["train"]["text"].tolist(),
                                                 truncation=True)["input_ids"]]

        def fine_tune(epochs: int) -> tuple[float, int, int]:
            """Seconds, steps and (estimated) padded tokens of a fine-tune of ``epochs``."""
            start = time.perf_counter()
            finetune(ModelSpec("base", str(tmp / "base"), "bert"), task="sentiment",
                     train=tmp / "train.parquet", validation=None,
                     settings=settings | {"epochs": epochs}, out_dir=tmp / f"tuned{epochs}",
                     checkpoint_dir=tmp / f"checkpoints{epochs}")
            seconds = time.perf_counter() - start
            record = json.loads((tmp / f"tuned{epochs}" / "training.json").read_text())
            return seconds, record["training"]["steps"], padded_tokens(
                lengths, args.batch_size, epochs, args.seed)

        if cuda:
            torch.cuda.reset_peak_memory_stats()
        train_s, steps, batch_tokens = fine_tune(args.epochs)
        trained = len(splits["train"]) * args.epochs
        # one epoch too, for the calibration: the difference of the two runs is the
        # Trainer's per-step cost without the run's fixed costs (loading, tokenising, saving)
        short = fine_tune(1) if args.calibrate and args.epochs > 1 else None
        train_peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None

        texts = variants(splits["test"]["text"].tolist(), args.score, args.seed)
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        probs, stats = score_texts(str(tmp / f"tuned{args.epochs}"), texts, progress=True)
        score_peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None

    figures = {
        "device": device, "sizes": sizes, "train_examples": trained, "train_steps": steps,
        "train_seconds": round(train_s, 1), "train_samples_per_s": round(trained / train_s, 1),
        "train_peak_gib": train_peak, "scored_texts": len(texts),
        "score_seconds": round(stats.seconds, 1), "score_texts_per_s": round(stats.texts_per_s, 1),
        "score_peak_gib": score_peak, "mean_probability": float(probs.mean()),
        "score_batches": stats.batches, "score_padded_tokens": stats.padded_tokens,
    }
    if args.calibrate:
        if short is None:
            p.error("--calibrate needs --epochs 2 or more (the Trainer's per-step cost is "
                    "the difference of a one-epoch run and this one)")
        calibrate(args, figures, trainer=(train_s - short[0], steps - short[1],
                                          batch_tokens - short[2]),
                  scoring=(stats.seconds, stats.batches, stats.padded_tokens))
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
