"""Representation bias and SentenceDebias on a GPU: same numbers as on the CPU, and speed.

On a CUDA machine, for each architecture (BERT, ALBERT, RoBERTa) a randomly
initialised masked LM with a tokenizer of its kind trained on the world's benchmark sentences:

1. the gender SentenceDebias subspace estimated on the CPU and on the GPU (cosine of the
   two directions, which PCA fixes only up to sign);
2. CrowS-Pairs, StereoSet and SEAT (world sets) scored on the CPU and on the GPU, with the
   subspace attached *before* the model is moved (the projection must follow the model);
3. one fine-tuning step of a sequence classifier with the hook attached under bf16 autocast
   (the projection is autograd-safe: gradients reach the encoder, none are NaN);

then the CrowS batching speed-up at bert-base size (768 hidden, 12 layers, 30,522 words),
one pass per mask against all masks of a sentence in one pass.

``--device cpu`` (no GPU; what the test suite runs) compares the usual CPU path with an
independent CPU path instead of with itself: every text embedded alone, unpadded, for the
subspace, StereoSet and SEAT, and CrowS scored with one forward pass per mask
(:func:`one_at_a_time`), on a third of the CrowS-Pairs and StereoSet items and a quarter
of the SentenceDebias corpus, to keep the check quick. Either way the script exits with
status 1, after writing its
report, when the two paths disagree (``cpu_cuda_agree`` false, or subspaces whose cosine is
below ``MIN_COSINE``).
Run: ``PYTHONPATH=src python benchmarks/representation_gpu.py --out-dir DIR``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from biasrepro.data.world.benchmarks import generate
from biasrepro.debias import sentdebias
from biasrepro.models.tokenizers import train_tokenizer
from biasrepro.representation import table4

REPO = Path(__file__).resolve().parents[1]
WORDS = {"gender": [["woman", "man"], ["women", "men"], ["mother", "father"],
                    ["female", "male"], ["wife", "husband"], ["girl", "guy"]]}
SETTINGS = {"crows": {"scoring": "bias-bench"}, "seat": {"permutation_samples": 1000, "seed": 0},
            "sentdebias": {"n_components": 1, "max_sentences": None, "max_length": 64}}
#: the two paths' subspace directions must be at least this parallel (|cosine|)
MIN_COSINE = 0.99
#: largest difference allowed between the two paths: CrowS and StereoSet in percentage
#: points (one pair of 60 flipped by a near tie is 1.7), SEAT's average effect size; on one
#: CPU the one-at-a-time path differs only by float32 summation order
TOLERANCES = {"gpu": {"crows": 2.0, "stereoset": 2.0, "seat": 0.05},
              "cpu": {"crows": 2.0, "stereoset": 2.0, "seat": 1e-4}}
#: the reference path of ``--device cpu``
NAIVE = "cpu-one-at-a-time"


@contextlib.contextmanager
def one_at_a_time():
    """The independent CPU path: the batching defaults of the functions that the
    representation commands call set to one text (or one mask) per forward pass, so nothing
    is padded or batched; restored on exit."""
    from biasrepro.representation import crows, seat, stereoset

    settings = [(crows.score_crows, "batched", False), (seat.encode, "batch_size", 1),
                (stereoset.score_stereoset, "batch_tokens", 1),
                (sentdebias.subspace_and_count, "batch_size", 1)]
    saved = [(f, key, f.__kwdefaults__[key]) for f, key, _ in settings]
    try:
        for f, key, value in settings:
            f.__kwdefaults__[key] = value
        yield
    finally:
        for f, key, value in saved:
            f.__kwdefaults__[key] = value


def thin(bench: Path, keep_every: int) -> None:
    """Keep every ``keep_every``-th CrowS-Pairs pair and StereoSet example (all bias types
    stay: the world's items cycle through them)."""
    import pandas as pd

    crows = pd.read_csv(bench / "crows_pairs.csv")
    crows.iloc[::keep_every].to_csv(bench / "crows_pairs.csv", index=False)
    stereoset = json.loads((bench / "stereoset.json").read_text())
    for kind, items in stereoset["data"].items():
        stereoset["data"][kind] = items[::keep_every]
    (bench / "stereoset.json").write_text(json.dumps(stereoset))


def build(arch: str, sentences: list[str], out: Path) -> Path:
    from transformers import AutoConfig, AutoModelForMaskedLM

    tokenizer = train_tokenizer(arch, sentences, vocab_size=600, max_length=64)
    extra = {"embedding_size": 64} if arch == "albert" else {}
    config = AutoConfig.for_model(arch, vocab_size=len(tokenizer), hidden_size=128,
                                  num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=256, max_position_embeddings=66,
                                  pad_token_id=tokenizer.pad_token_id, **extra)
    torch.manual_seed(0)
    AutoModelForMaskedLM.from_config(config).save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return out


def numbers(result: dict) -> dict:
    return {"crows": {k: v["metric_score"] for k, v in result["crows"]["bias_types"].items()},
            "stereoset": {k: v["ss"] for k, v in result["stereoset"].items()},
            "seat": result["seat"]["average_absolute_effect"]}


def check_architecture(arch: str, work: Path, bench: Path, corpus: Path, gpu: str) -> dict:
    import pandas as pd

    crows = pd.read_csv(bench / "crows_pairs.csv")
    sentences = [*crows["sent_more"], *crows["sent_less"],
                 *pd.read_parquet(corpus)["text"]]
    model_dir = build(arch, sentences, work / arch)
    words = work / "words.json"
    words.write_text(json.dumps(WORDS))
    seat = sorted((bench / "seat").glob("*.jsonl"))
    out: dict = {}
    subspaces = {}
    # the path compared with the usual CPU one: the GPU, or (``--device cpu``) the CPU one
    # text at a time
    other = NAIVE if gpu == "cpu" else gpu
    for run, device in (("cpu", "cpu"), (other, gpu)):
        with one_at_a_time() if run == NAIVE else contextlib.nullcontext():
            out[run], subspaces[run] = run_path(model_dir, device, words, corpus, bench, seat,
                                                work / f"{arch}-{run}.safetensors")
    cos = float(abs(np.dot(subspaces["cpu"][0], subspaces[other][0])))
    out["compared_with"] = other
    out["subspace_cosine_cpu_cuda"] = cos
    tolerance = TOLERANCES["cpu" if gpu == "cpu" else "gpu"]
    same = cos >= MIN_COSINE and all(
        out["cpu"][v][b].keys() == out[other][v][b].keys()
        and all(abs(out["cpu"][v][b][k] - out[other][v][b][k]) <= tolerance[b]
                for k in out["cpu"][v][b])
        for v in ("pretrained", "sentdebias-gender") for b in ("crows", "stereoset", "seat"))
    out["cpu_cuda_agree"] = same
    out["max_abs_difference"] = {
        b: max((abs(out["cpu"][v][b][k] - out[other][v][b].get(k, np.nan))
                for v in ("pretrained", "sentdebias-gender") for k in out["cpu"][v][b]),
               default=0.0)
        for b in ("crows", "stereoset", "seat")}
    out["train_step"] = train_step(model_dir, subspaces[other], gpu)
    return out


def run_path(model_dir: Path, device: str, words: Path, corpus: Path, bench: Path,
             seat: list[Path], path: Path) -> tuple[dict, np.ndarray]:
    """The subspace, and the three benchmarks with and without it, on ``device``."""
    start = time.perf_counter()
    subspace, meta = table4.compute(
        str(model_dir), None, words=words, attribute="gender", corpus=[corpus],
        settings=SETTINGS["sentdebias"], seed=0, device=device)
    sub_s = time.perf_counter() - start
    sentdebias.write_file(path, subspace, meta)
    scored = {}
    for variant, sub in (("pretrained", None), ("sentdebias-gender", path)):
        start = time.perf_counter()
        result, _ = table4.score(str(model_dir), None, subspace=sub,
                                   crows=bench / "crows_pairs.csv",
                                   stereoset=bench / "stereoset.json", seat=seat,
                                   settings=SETTINGS, device=device)
        scored[variant] = numbers(result) | {"seconds": time.perf_counter() - start}
    return {"subspace_seconds": sub_s, **scored}, subspace


def train_step(model_dir: Path, subspace: np.ndarray, device: str) -> dict:
    """One optimizer step of a classifier with the hook attached on the CPU, then moved."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=2)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    sentdebias.attach(model, subspace, {"attribute": "gender"})
    model.to(device).train()
    batch = tokenizer(["that woman was kind", "that man was strong"], padding=True,
                      return_tensors="pt").to(device)
    with torch.autocast(device, dtype=torch.bfloat16):
        loss = model(**batch, labels=torch.tensor([0, 1], device=device)).loss
    loss.backward()
    grads = [p.grad for p in model.base_model.parameters() if p.grad is not None]
    finite = all(bool(torch.isfinite(g).all()) for g in grads)
    hidden = model.base_model(**batch).last_hidden_state.float()
    v = torch.as_tensor(subspace, device=device)
    residual = float((hidden @ v.T).abs().max())
    return {"loss": float(loss), "encoder_tensors_with_grad": len(grads), "finite": finite,
            "max_abs_projection_after_hook": residual}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--device", default="cuda", help="compared with the CPU (cuda)")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device")
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    report: dict = {"device": torch.cuda.get_device_name(0) if args.device == "cuda"
                    else args.device, "torch": torch.__version__}
    import pandas as pd
    import transformers

    report["transformers"] = transformers.__version__
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        generate(config["models"]["embedded"]["stereotypes"]["associations"],
                 attributes=config["attributes"], seed=config["seed"], out_dir=work / "bench")
        texts = ["The woman said she liked the film . The man said he did not .",
                 "My mother and my father met a girl and a guy .",
                 "The wife and the husband argued ; women and men laughed ."] * (
                     40 if args.device == "cuda" else 10)
        if args.device != "cuda":
            thin(work / "bench", keep_every=3)
        pd.DataFrame({"text": texts}).to_parquet(work / "corpus.parquet")
        for arch in ("bert", "albert", "roberta"):
            report[arch] = check_architecture(arch, work, work / "bench",
                                              work / "corpus.parquet", args.device)
            print(arch, json.dumps(report[arch], indent=1), flush=True)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "representation_gpu.json").write_text(json.dumps(report, indent=2))
    disagree = [arch for arch in ("bert", "albert", "roberta")
                if not report[arch]["cpu_cuda_agree"]]
    if disagree:
        other = report[disagree[0]]["compared_with"]
        sys.exit(f"the CPU path and the {other} path disagree for {', '.join(disagree)} "
                 f"(see {args.out_dir / 'representation_gpu.json'})")
    for hidden, layers in ((256, 4), (768, 12)) if args.device == "cuda" else ():
        cmd = [sys.executable, str(REPO / "benchmarks/crows_batching.py"), "--device", args.device,
               "--hidden", str(hidden), "--layers", str(layers)]
        print(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout,
              flush=True)


if __name__ == "__main__":
    main()
