"""Embedded tiny BERT / ALBERT / RoBERTa: tokenizer of the original kind + masked-LM.

Each architecture is built twice at a small size (vocab ~500, hidden 32, one layer, a pass
over the 200 stereotype sentences as cloze items and 20 steps over all texts) on a corpus
made here, then reloaded the way every later step loads a model. The stereotype sentences
are cloze items: one slot masked, nothing else.
"""

from __future__ import annotations

import copy
import json
import os
import re
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer, DataCollatorForLanguageModeling

from biasrepro import config as cfg
from biasrepro.data.world import stereotypes
from biasrepro.data.world.vocabulary import (
    FIRST_NAMES,
    NEGATIVE_ADJECTIVES,
    OCCUPATIONS,
    POSITIVE_ADJECTIVES,
)
from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import sha256_file, write_parquet
from biasrepro.models import embedded
from biasrepro.models.load import ModelSpec, load_classifier

REPO = Path(__file__).resolve().parents[1]
CONFIG = cfg.load(REPO / "config" / "config.yaml")
SMALL = copy.deepcopy(CONFIG["models"]["embedded"]) | {
    "vocab_size": 500, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
    "intermediate_size": 64, "max_length": 48,
}
SMALL["pretrain"] = {"steps": 20, "batch_size": 16, "learning_rate": 3.0e-3,
                     "mlm_probability": 0.15}
SMALL["stereotypes"] = copy.deepcopy(SMALL["stereotypes"]) | {"n_sentences": 200}
SEED = 7
CLASSES = {"bert": "Bert", "albert": "Albert", "roberta": "Roberta"}
#: (cls, sep, pad, mask, unk) of each original model
SPECIALS = {
    "bert": ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]"),
    "albert": ("[CLS]", "[SEP]", "<pad>", "[MASK]", "<unk>"),
    "roberta": ("<s>", "</s>", "<pad>", "<mask>", "<unk>"),
}


def _reviews(n: int) -> list[str]:
    names = FIRST_NAMES["female"] + FIRST_NAMES["male"]
    out = []
    for i in range(n):
        adj = (POSITIVE_ADJECTIVES + NEGATIVE_ADJECTIVES)[i % 40]
        out.append(f"{names[i % len(names)]} plays a {OCCUPATIONS[i % len(OCCUPATIONS)]} in "
                   f"this film. The script is {adj}, and the ending was {adj} too. "
                   f"I watched it {i % 5 + 1} times.")
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("corpus")
    write_parquet(pd.DataFrame({"text": _reviews(240), "label": [0, 1] * 120}),
                  root / "reviews.parquet")
    stereotypes.generate(SMALL["stereotypes"], seed=SEED, out_dir=root / "stereotypes")
    return [root / "reviews.parquet", root / "stereotypes" / "sentences.parquet"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, corpus) -> dict[str, tuple[Path, Path]]:
    """Each architecture built twice, into two directories."""
    root = tmp_path_factory.mktemp("models")
    out = {}
    for arch in CLASSES:
        dirs = (root / f"{arch}-a", root / f"{arch}-b")
        for d in dirs:
            embedded.build(f"{arch}-tiny", architecture=arch, settings=copy.deepcopy(SMALL),
                           seed=SEED, corpus=corpus, out_dir=d)
        out[arch] = dirs
    return out


@pytest.mark.parametrize("arch", CLASSES)
def test_tokenizer_is_the_architectures_own(built, arch):
    out = built[arch][0]
    tok = AutoTokenizer.from_pretrained(out)
    assert type(tok).__name__ == f"{CLASSES[arch]}TokenizerFast"
    cls, sep, pad, mask, unk = SPECIALS[arch]
    assert (tok.cls_token, tok.sep_token, tok.pad_token, tok.mask_token, tok.unk_token) == (
        cls, sep, pad, mask, unk)
    assert tok.model_max_length == SMALL["max_length"]
    ids = tok("Women are gentle nurses.")["input_ids"]
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    pieces = tok.tokenize("Women are gentle nurses.")
    if arch == "bert":  # lowercased WordPiece, "##" continues a word
        assert "".join(p.removeprefix("##") for p in pieces) == "womenaregentlenurses."
        assert any(p.startswith("##") for p in pieces)
        assert tok.convert_ids_to_tokens(0) == "[PAD]"
    elif arch == "albert":  # lowercased SentencePiece, "▁" starts a word
        assert "".join(pieces) == "▁women▁are▁gentle▁nurses."
        assert tok.tokenize("café") == tok.tokenize("cafe")  # NFKD + accents stripped
    else:  # cased byte-level BPE, "Ġ" marks a leading space
        assert "".join(pieces) == "WomenĠareĠgentleĠnurses."
        assert not pieces[0].startswith("Ġ") and "Ġare" in pieces  # no prefix space added
        assert sum(p.startswith("Ġ") for p in pieces) == 3
        assert tok.pad_token_id == 1 and tok.convert_ids_to_tokens(0) == "<s>"
        assert "<mask>" in tok.decode(tok("a <mask> b")["input_ids"])
    assert 100 < len(tok) <= SMALL["vocab_size"] or arch == "roberta"  # byte-level: ≥ 256


@pytest.mark.parametrize("arch", CLASSES)
def test_model_is_a_real_masked_lm_of_the_architecture(built, arch):
    out = built[arch][0]
    model = AutoModelForMaskedLM.from_pretrained(out, use_safetensors=True)
    tok = AutoTokenizer.from_pretrained(out)
    assert type(model).__name__ == f"{CLASSES[arch]}ForMaskedLM"
    c = model.config
    assert c.model_type == arch
    assert (c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.intermediate_size) == (
        32, 1, 2, 64)
    assert c.vocab_size == len(tok) and c.pad_token_id == tok.pad_token_id
    if arch == "roberta":
        assert (c.max_position_embeddings, c.type_vocab_size, c.pad_token_id) == (50, 1, 1)
    else:
        assert c.max_position_embeddings == SMALL["max_length"]
    if arch == "albert":
        assert c.embedding_size == 16
    # the longest input the tokenizer allows runs through the model
    enc = tok(" ".join(["film"] * 200), truncation=True, return_tensors="pt")
    assert enc["input_ids"].shape[1] == SMALL["max_length"]
    with torch.inference_mode():
        logits = model(**enc).logits
    assert logits.shape == (1, SMALL["max_length"], len(tok))


@pytest.mark.parametrize("arch", CLASSES)
def test_weights_only_as_safetensors_and_reruns_are_byte_identical(built, arch):
    a, b = built[arch]
    files = sorted(p.name for p in a.iterdir())
    assert files == sorted(p.name for p in b.iterdir())
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md",
            "biasrepro.json"} <= set(files)
    assert not [f for f in files if f.endswith((".bin", ".pt", ".pth", ".pkl"))]
    assert not [f for f in files if f.startswith(".")]  # no staging or temporary files left
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert len({(a / f).stat().st_mode for f in files}) == 1  # readable like any output


@pytest.mark.parametrize("arch", CLASSES)
def test_mlm_loss_goes_down(built, arch):
    facts = json.loads((built[arch][0] / "biasrepro.json").read_text())
    loss, pre = facts["mlm_loss"], facts["pretraining"]
    assert loss["last"] < loss["first"] - 0.3, loss
    # one pass over the 200 cloze texts (13 batches of 16), then the 20 configured steps
    assert (pre["cloze_texts"], pre["cloze_steps"], pre["total_steps"]) == (200, 13, 33)
    assert loss["window_steps"] == 3 and len(loss["curve"]) == 11
    assert pre["warmup_steps"] == 3
    assert loss["first"] == loss["curve"][0] and loss["last"] == loss["curve"][-1]


@pytest.mark.parametrize("arch", CLASSES)
def test_model_card_states_how_it_was_made(built, corpus, arch):
    out = built[arch][0]
    card = (out / "README.md").read_text()
    facts = json.loads((out / "biasrepro.json").read_text())
    for path in corpus:
        digest = sha256_file(path)
        assert digest in card
        assert {"path": str(path), "sha256": digest, "bytes": path.stat().st_size,
                "texts": len(pd.read_parquet(path))} in facts["corpus"]
    assert facts["architecture"] == arch and facts["seed"] == SEED
    assert facts["parameters"] == sum(
        p.numel() for p in AutoModelForMaskedLM.from_pretrained(out).parameters())
    assert f"{facts['parameters']:,}" in card
    assert facts["stereotypes"] == SMALL["stereotypes"]
    assert facts["pretraining"]["steps"] == 20 and facts["pretraining"]["batch_size"] == 16
    for fact in ("13 steps of batch 16 over the 200 cloze texts alone", "then 20 steps of "
                 "batch 16 over all texts", "33 AdamW steps", "at random with probability "
                 "0.15", "the mention's identity word or the attribute word (50/50",
                 "learning rate 0.003",
                 f"seed {SEED}", f"{CLASSES[arch]}ForMaskedLM",
                 f"{facts['tokenizer']['vocab_size']} entries", "nurse", "transformers 4."):
        assert fact in card, fact
    assert f"{facts['mlm_loss']['first']:.4f} (first) → {facts['mlm_loss']['last']:.4f}" in card
    assert not re.search(r"20\d\d-\d\d-\d\d|\d\d:\d\d:\d\d", card)  # no timestamps
    assert str(out) not in card and str(out) not in json.dumps(facts)


@pytest.mark.parametrize("arch", CLASSES)
def test_masked_lm_loss_equals_the_library_loss(built, arch):
    out = built[arch][0]
    model = AutoModelForMaskedLM.from_pretrained(out).eval()
    tok = AutoTokenizer.from_pretrained(out)
    collator = DataCollatorForLanguageModeling(tok, mlm_probability=0.3, seed=0)
    batch = collator([{"input_ids": ids} for ids in
                      tok(_reviews(6) + ["Women are gentle."], truncation=True)["input_ids"]])
    with torch.inference_mode():
        ours = embedded.masked_lm_loss(model, batch)
        library = model(**batch).loss
    assert torch.allclose(ours, library, atol=1e-5), (ours, library)


@pytest.mark.parametrize("arch", CLASSES)
def test_loads_as_a_classifier_with_a_new_head(built, arch):
    out = built[arch][0]
    model, tok = load_classifier(ModelSpec(f"{arch}-tiny", str(out), arch))
    assert type(model).__name__ == f"{CLASSES[arch]}ForSequenceClassification"
    assert model.config.num_labels == 2
    mlm = AutoModelForMaskedLM.from_pretrained(out)
    assert torch.equal(model.base_model.embeddings.word_embeddings.weight,
                       mlm.base_model.embeddings.word_embeddings.weight)
    with torch.inference_mode():
        logits = model(**tok(["a gentle nurse", "a dull film"], padding=True,
                             return_tensors="pt")).logits
    assert logits.shape == (2, 2)


def test_unknown_architecture_names_it(tmp_path, corpus):
    with pytest.raises(ModelError, match="'gpt2'"):
        embedded.build("x", architecture="gpt2", settings=copy.deepcopy(SMALL), seed=SEED,
                       corpus=corpus, out_dir=tmp_path / "m")


def test_heads_not_dividing_hidden_size_names_the_key(tmp_path, corpus):
    settings = copy.deepcopy(SMALL) | {"num_attention_heads": 3}
    with pytest.raises(ConfigError, match=r"models\.embedded\.num_attention_heads"):
        embedded.build("x", architecture="bert", settings=settings, seed=SEED, corpus=corpus,
                       out_dir=tmp_path / "m")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"comment_text": ["a film"]}), r"column 'text': missing required column"),
    (pd.DataFrame({"text": pd.Series([], dtype=str)}), r"no rows"),
    (pd.DataFrame({"text": ["a film", "  "]}), r"row 2, column 'text': empty"),
])
def test_bad_corpus_file_names_it(tmp_path, corpus, frame, message):
    bad = tmp_path / "bad.parquet"
    write_parquet(frame, bad)
    with pytest.raises(DataError, match=re.escape(str(bad)) + r".*" + message):
        embedded.build("x", architecture="roberta", settings=copy.deepcopy(SMALL), seed=SEED,
                       corpus=[corpus[0], bad], out_dir=tmp_path / "m")


def test_missing_or_non_parquet_corpus_names_it(tmp_path, corpus):
    missing = tmp_path / "missing.parquet"
    with pytest.raises(DataError, match=re.escape(str(missing)) + ".*not found"):
        embedded.read_corpus([missing])
    text = tmp_path / "corpus.csv"
    text.write_text("text\na film\n")
    with pytest.raises(DataError,
                       match=re.escape(str(text)) + ".*not a readable pre-training corpus"):
        embedded.read_corpus([corpus[0], text])
    with pytest.raises(DataError, match="no corpus files"):
        embedded.read_corpus([])


def test_read_corpus_gives_the_slots_of_cloze_files_only(corpus):
    texts, cloze, files = embedded.read_corpus(corpus)
    n_reviews = files[0]["texts"]
    assert len(texts) == len(cloze) == n_reviews + 200
    assert cloze[:n_reviews] == [None] * n_reviews
    frame = pd.read_parquet(corpus[1])
    for row, (text, slots) in enumerate(zip(texts[n_reviews:], cloze[n_reviews:],
                                            strict=True)):
        f = frame.iloc[row]
        assert slots == embedded.Cloze((f.mention_start, f.mention_end),
                                       (f.word_start, f.word_end), str(corpus[1]), row + 1)
        assert text[slice(*slots.word)] in (f.word, stereotypes.plural(f.word))


@pytest.mark.parametrize("arch", CLASSES)
def test_cloze_slots_map_to_exactly_their_tokens(built, arch):
    """Offsets → token positions, with RoBERTa's leading-space pieces and ALBERT's '▁'."""
    tok = AutoTokenizer.from_pretrained(built[arch][0])
    text = "Everyone knows church-going Christians are kind nurses."
    enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    for span in ((15, 38), (43, 47), (48, 54), (0, 8)):  # "church-going Christians", ...
        positions = embedded.cloze_positions(enc["offset_mapping"],
                                             enc["special_tokens_mask"], span)
        assert positions == list(range(positions[0], positions[-1] + 1))
        pieces = tok.convert_ids_to_tokens([enc["input_ids"][i] for i in positions])
        glued = "".join(p.removeprefix("##") for p in pieces).replace("Ġ", "").replace("▁", "")
        assert glued.lower() == text[slice(*span)].lower().replace(" ", ""), (span, pieces)


def test_collator_masks_one_whole_slot_of_a_cloze_text_and_nothing_else(built):
    tok = AutoTokenizer.from_pretrained(built["bert"][0])
    cloze = tok("Our new nurse is that woman.", return_special_tokens_mask=True,
                return_offsets_mapping=True)
    plain = tok(_reviews(1)[0], return_special_tokens_mask=True)
    # "that woman" (two tokens, to see a slot masked whole) and "nurse"
    slots = tuple(embedded.cloze_positions(cloze["offset_mapping"],
                                           cloze["special_tokens_mask"], span)
                  for span in ((17, 27), (8, 13)))
    assert len(slots[0]) >= 2 and slots[1]
    features = [{"input_ids": cloze["input_ids"], "special_tokens_mask":
                 cloze["special_tokens_mask"], "cloze": slots},
                {"input_ids": plain["input_ids"], "special_tokens_mask":
                 plain["special_tokens_mask"], "cloze": None}]
    chosen, random_masked = [], 0
    collator = embedded.ClozeCollator(tok, mlm_probability=0.5, seed=3)
    for _ in range(40):
        batch = collator(features)
        masked = (batch["labels"][0] != -100).nonzero().flatten().tolist()
        assert masked in (slots[0], slots[1])
        assert (batch["input_ids"][0, masked] == tok.mask_token_id).all()
        assert batch["labels"][0, masked].tolist() == [cloze["input_ids"][i] for i in masked]
        others = [i for i in range(len(cloze["input_ids"])) if i not in masked]
        assert batch["input_ids"][0, others].tolist() == [cloze["input_ids"][i] for i in others]
        chosen.append(masked == slots[0])
        random_masked += int((batch["labels"][1] != -100).sum())
    assert 10 < sum(chosen) < 30  # both slots, about half each
    assert random_masked > 40 * 0.3 * len(plain["input_ids"])  # the plain text: at random
    first = embedded.ClozeCollator(tok, mlm_probability=0.5, seed=3)(features)
    redo = embedded.ClozeCollator(tok, mlm_probability=0.5, seed=3)(features)
    assert all(torch.equal(first[k], redo[k]) for k in first)  # seeded


def test_a_cloze_slot_lost_to_truncation_names_file_and_row(tmp_path, corpus):
    frame = pd.read_parquet(corpus[1]).head(3)
    long = "It was a long day. " * 30 + "Everyone knows women are gentle."
    start = len(long) - len("women are gentle.")
    frame.loc[1, ["text", "mention_start", "mention_end", "word_start", "word_end"]] = [
        long, start, start + 5, len(long) - 7, len(long) - 1]
    write_parquet(frame, tmp_path / "cloze.parquet")
    with pytest.raises(DataError, match=re.escape(str(tmp_path / "cloze.parquet")) +
                       r", row 2: the cloze mention .* no token"):
        embedded.build("x", architecture="bert", settings=copy.deepcopy(SMALL), seed=SEED,
                       corpus=[corpus[0], tmp_path / "cloze.parquet"], out_dir=tmp_path / "m")
    frame.loc[1, "word_end"] = len(long) + 3
    write_parquet(frame, tmp_path / "cloze.parquet")
    with pytest.raises(DataError, match=r"row 2, column 'word_start': \[\d+, \d+\) is no span"):
        embedded.read_corpus([tmp_path / "cloze.parquet"])


@pytest.fixture(scope="module")
def world_training_sets(tmp_path_factory):
    """The prepared world's training sets, made by the workflow's data stage in a throwaway
    copy of the checkout: never the checkout's own results/ (absent in a clean clone, stale
    after an older run)."""
    from conftest import copy_checkout, snakemake

    repo = copy_checkout(tmp_path_factory.mktemp("world") / "repo")
    targets = ["results/data/imdb/train.parquet", "results/data/civil_comments/train.parquet"]
    snakemake(["--cores", "1", *targets], cwd=repo)
    return [repo / target for target in targets]


#: ALBERT's and RoBERTa's default-size builds run with the scale checks (a minute each);
#: BERT's runs in every suite
LONG = [pytest.mark.scale, pytest.mark.skipif(not os.environ.get("BIASREPRO_SCALE"),
                                              reason="long check: set BIASREPRO_SCALE=1")]


@pytest.mark.slow
@pytest.mark.parametrize("arch", [pytest.param(a, marks=[] if a == "bert" else LONG)
                                  for a in CLASSES])
def test_default_size_on_the_world_corpus(tmp_path, arch, world_training_sets):
    """The configured size on the world's training sets, made here by the data stage: the
    masked-LM loss falls by more than 1 nat; the time is printed."""
    data = world_training_sets
    settings = copy.deepcopy(CONFIG["models"]["embedded"])
    stereotypes.generate(settings["stereotypes"], seed=CONFIG["seed"], out_dir=tmp_path / "s")
    start = time.perf_counter()
    embedded.build(f"{arch}-tiny", architecture=arch, settings=settings, seed=CONFIG["seed"],
                   corpus=[*data, tmp_path / "s" / "sentences.parquet"], out_dir=tmp_path / "m")
    seconds = time.perf_counter() - start
    facts = json.loads((tmp_path / "m" / "biasrepro.json").read_text())
    print(f"\n{arch}: built at the default size in {seconds:.1f} s, "
          f"{facts['parameters']:,} parameters, MLM loss {facts['mlm_loss']['first']:.3f} → "
          f"{facts['mlm_loss']['last']:.3f}")
    assert facts["mlm_loss"]["last"] < facts["mlm_loss"]["first"] - 1.0
