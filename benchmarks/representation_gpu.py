"""Representation bias and SentenceDebias on a GPU: same numbers as on the CPU, and speed.

Issue #6 on a CUDA machine. For each architecture (BERT, ALBERT, RoBERTa) a randomly
initialised masked LM with a tokenizer of its kind trained on the world's benchmark sentences:

1. the gender SentenceDebias subspace estimated on the CPU and on the GPU (cosine of the
   two directions, which PCA fixes only up to sign);
2. CrowS-Pairs, StereoSet and SEAT (world sets) scored on the CPU and on the GPU, with the
   subspace attached *before* the model is moved (the projection must follow the model);
3. one fine-tuning step of a sequence classifier with the hook attached under bf16 autocast
   (the projection is autograd-safe: gradients reach the encoder, none are NaN);

then the CrowS batching speed-up at bert-base size (768 hidden, 12 layers, 30,522 words),
one pass per mask against all masks of a sentence in one pass.
Run: ``PYTHONPATH=src python benchmarks/representation_gpu.py --out-dir DIR``.
"""

from __future__ import annotations

import argparse
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
from biasrepro.representation import commands

REPO = Path(__file__).resolve().parents[1]
WORDS = {"gender": [["woman", "man"], ["women", "men"], ["mother", "father"],
                    ["female", "male"], ["wife", "husband"], ["girl", "guy"]]}
SETTINGS = {"crows": {"scoring": "bias-bench"}, "seat": {"permutation_samples": 1000, "seed": 0},
            "sentdebias": {"n_components": 1, "max_sentences": None, "max_length": 64}}


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
    for device in ("cpu", gpu):
        start = time.perf_counter()
        subspaces[device], meta = commands.compute(
            str(model_dir), None, words=words, attribute="gender", corpus=[corpus],
            settings=SETTINGS["sentdebias"], seed=0, device=device)
        sub_s = time.perf_counter() - start
        path = work / f"{arch}-{device}.safetensors"
        sentdebias.write_file(path, subspaces[device], meta)
        scored = {}
        for variant, sub in (("pretrained", None), ("sentdebias-gender", path)):
            start = time.perf_counter()
            result, _ = commands.score(str(model_dir), None, subspace=sub,
                                       crows=bench / "crows_pairs.csv",
                                       stereoset=bench / "stereoset.json", seat=seat,
                                       settings=SETTINGS, device=device)
            scored[variant] = numbers(result) | {"seconds": time.perf_counter() - start}
        out[device] = {"subspace_seconds": sub_s, **scored}
    cos = float(abs(np.dot(subspaces["cpu"][0], subspaces[gpu][0])))
    out["subspace_cosine_cpu_cuda"] = cos
    same = all(
        out["cpu"][v][b].keys() == out[gpu][v][b].keys()
        and all(abs(out["cpu"][v][b][k] - out[gpu][v][b][k]) <= (0.05 if b == "seat"
                                                                     else 2.0)
                for k in out["cpu"][v][b])
        for v in ("pretrained", "sentdebias-gender") for b in ("crows", "stereoset", "seat"))
    out["cpu_cuda_agree"] = same
    out["train_step"] = train_step(model_dir, subspaces[gpu], gpu)
    return out


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
                 "The wife and the husband argued ; women and men laughed ."] * 40
        pd.DataFrame({"text": texts}).to_parquet(work / "corpus.parquet")
        for arch in ("bert", "albert", "roberta"):
            report[arch] = check_architecture(arch, work, work / "bench",
                                              work / "corpus.parquet", args.device)
            print(arch, json.dumps(report[arch], indent=1), flush=True)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "representation_gpu.json").write_text(json.dumps(report, indent=2))
    for hidden, layers in ((256, 4), (768, 12)) if args.device == "cuda" else ():
        cmd = [sys.executable, str(REPO / "benchmarks/crows_batching.py"), "--device", args.device,
               "--hidden", str(hidden), "--layers", str(layers)]
        print(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout,
              flush=True)


if __name__ == "__main__":
    main()
