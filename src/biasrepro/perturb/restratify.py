"""Re-stratification: synthetic positives until each identity group is balanced (§6.4).

The toxicity paper removes selection bias from the Civil Comments training split by adding
slightly altered copies of each identity group's toxic (positive) comments, made with
nlpaug's contextual word-embedding substitution, until the groups' class representations are
balanced (Figure 3, right). :func:`restratify` raises each group's positive ratio to
``target_ratio`` with the fewest synthetic rows; :func:`make_augmenter` builds the seeded
word augmenter it uses:

* ``contextual``: ``nlpaug.augmenter.word.ContextualWordEmbsAug`` with a local masked LM.
  nlpaug 1.1.11 supports BERT and RoBERTa masked LMs, not ALBERT. Its model cache is keyed
  by the directory's base name, so the model is always reloaded (``force_reload``);
* ``random``: ``RandomWordAug(action="swap")``, which needs no model or data download (unlike
  nlpaug's WordNet, embedding and spelling augmenters): adjacent words change places. A
  stand-in for runs without a masked LM, not the paper's method.

Identity words are nlpaug ``stopwords``, never chosen for substitution, so a synthetic row
stays about its group. :func:`restratify` checks each augmentation all the same: one that is
empty, unchanged or lost a protected word of its source is redone with fresh randomness up
to :data:`RETRIES` times; after that the synthetic row keeps its source's text and is counted
as ``unchanged``.

Texts are the cleaned comments of §4.1 (lowercase, punctuation spaced). The masked LM's
decoder glues punctuation back to words ("idiots ." → "idiots."), so every augmented text
is cleaned again with :func:`biasrepro.data.text.clean_comments` to have the form of the
originals.

nlpaug 1.1.11 needs three repairs, made here:

* a protected word is put back as one vocabulary token, so one that is not in the
  vocabulary (RoBERTa's sentence-initial "she", a word BERT splits into pieces) comes back
  as the unknown token: :meth:`Augmenter._restore` puts the words back;
* special tokens ([UNK], [SEP], ``<s>``...) are not excluded as substitutes: they are
  skipped like subwords;
* its RoBERTa wrapper keeps only the predictions of the last model batch, so texts go to
  nlpaug :data:`CONTEXTUAL_BATCH` (its model batch size) at a time.

Left as it is: nlpaug's masked-LM forward pass attends to the padding of its batch, so a
text's substitutes depend on the other texts of its batch (fixed here, so still seeded).
"""

from __future__ import annotations

import logging
import math
import random
import re
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.data.text import clean_comments
from biasrepro.errors import ConfigError, DataError, ModelError
from biasrepro.io import read_json

log = logging.getLogger(__name__)

#: nlpaug model type of each supported ``config.json`` ``model_type``
CONTEXTUAL_MODEL_TYPES = {"bert": "bert", "roberta": "roberta"}
AUGMENTERS = ("contextual", "random")
#: how many more times an empty, unchanged or identity-losing augmentation is redone
RETRIES = 3
#: texts per augmenter call
BATCH_SIZE = 256
#: texts per nlpaug ``augment`` call of the contextual augmenter (and its model batch size)
CONTEXTUAL_BATCH = 32
REQUIRED_COLUMNS = ("id", "text", "label", "signature")
#: which rows are a group's members (``perturbation.restratify.select``): ``single_identity``,
#: rows whose ``signature`` is the group alone; ``identity_label``, every row labelled with it
#: (a row about two groups counts, and is a source of synthetic positives, in both)
SELECTIONS = ("single_identity", "identity_label")


@contextmanager
def _seeded(seed: int, torch_too: bool) -> Iterator[None]:
    """Seed Python's, NumPy's (and torch's) global generators; restore them afterwards."""
    py_state, np_state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed)
    try:
        if torch_too:
            import torch

            devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
            with torch.random.fork_rng(devices=devices):
                torch.manual_seed(seed)
                yield
        else:
            yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


class Augmenter:
    """A seeded nlpaug word augmenter: ``augmenter(texts)`` gives one new text per text.

    The ``n``-th call draws its randomness from ``(seed, n)``, so a new augmenter with the
    same settings and seed repeats the outputs of the same sequence of calls. A text that
    could not be augmented comes back as ``""``: an empty input, or (``masked_lm``) an
    output holding a special token of the model that :meth:`_restore` cannot account for
    (the source had characters the model does not know).
    """

    def __init__(self, aug: Any, settings: Mapping[str, Any], seed: int, *,
                 masked_lm: bool = False, stopwords: Sequence[str] = ()) -> None:
        self._aug = aug
        self._stopwords = tuple(stopwords)
        self.settings = dict(settings)
        self.seed = seed
        self.calls = 0
        self._masked_lm = masked_lm
        if masked_lm:
            # the class names it; nlpaug's Bert/Roberta get_unknown_token() gives None
            self._unknown = aug.model.UNKNOWN_TOKEN
            self._specials = tuple(aug.model.get_tokenizer().all_special_tokens)

    def _protect(self, batch: Sequence[str]) -> None:
        """Give nlpaug only the protected words that occur in ``batch``: its stop-word regex
        has one look-around group per word, so hundreds of words cost ~30 ms per text."""
        present = [w for w in self._stopwords if any(w in text for text in batch)]
        if present:
            self._aug._build_stop_words(present)
        else:
            self._aug.stopword_reg = None

    def __call__(self, texts: list[str]) -> list[str]:
        self.calls += 1
        todo = [i for i, t in enumerate(texts) if t.strip()]
        out = [""] * len(texts)
        if not todo:
            return out
        call_seed = int(np.random.SeedSequence([self.seed, self.calls]).generate_state(1)[0])
        inputs = [texts[i] for i in todo]
        step = CONTEXTUAL_BATCH if self._masked_lm else len(inputs)
        augmented = []
        with _seeded(call_seed, torch_too=self._masked_lm):
            for start in range(0, len(inputs), step):
                batch = inputs[start:start + step]
                if self._masked_lm:
                    self._protect(batch)
                augmented += self._aug.augment(batch)
        if len(augmented) != len(todo):
            raise RuntimeError(f"nlpaug returned {len(augmented)} texts for {len(todo)}")
        if self._masked_lm:
            augmented = [self._restore(src, raw) for src, raw in zip(inputs, augmented,
                                                                     strict=True)]
            augmented = ["" if any(s in t for s in self._specials) else t for t in augmented]
        cleaned = clean_comments(pd.Series(augmented, dtype=object)).tolist()
        for i, text in zip(todo, cleaned, strict=True):
            out[i] = text
        return out

    def _restore(self, source: str, raw: str) -> str:
        """Put back the protected words that came back as the unknown token.

        nlpaug (1.1.11) hides each protected word of ``source`` behind the unknown token,
        then puts the word back as one vocabulary token: one that is not in the vocabulary
        (RoBERTa's sentence-initial "she", a word BERT splits into pieces) decodes to the
        unknown token. Those are replaced, in text order, by the words; when the count does
        not match (the source had unknown characters too) the unknown tokens stay.
        """
        if self._unknown not in raw:
            return raw
        stopwords = self._aug.stopword_reg
        tokenizer = self._aug.model.get_tokenizer()
        unknown_id = tokenizer.convert_tokens_to_ids(self._unknown)
        lost = [] if stopwords is None else [
            m.group() for m in stopwords.finditer(f" {source} ")
            if tokenizer.convert_tokens_to_ids(m.group()) == unknown_id]
        parts = raw.split(self._unknown)
        if len(parts) != len(lost) + 1:
            return raw
        return "".join(p + w for p, w in zip(parts, [*lost, ""], strict=True))


def _protected_tokens(words: Collection[str]) -> list[str]:
    """Single lowercase words of ``words`` (phrases split on whitespace), sorted."""
    return sorted({w for phrase in words for w in phrase.lower().split()})


def _model_type(model_dir: str | None) -> str:
    if model_dir is None:
        raise ConfigError("perturbation.restratify: augmenter 'contextual' needs a masked "
                          "language model directory")
    path = Path(model_dir) / "config.json"
    if not path.is_file():
        raise ModelError(f"{path}: no config.json: not a model directory")
    config = read_json(path)
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if model_type not in CONTEXTUAL_MODEL_TYPES:
        raise ConfigError(
            f"perturbation.restratify: the masked LM in {model_dir} is a {model_type!r} model; "
            f"nlpaug's contextual augmenter supports {', '.join(CONTEXTUAL_MODEL_TYPES)} "
            "(choose another model or augmenter 'random')")
    return CONTEXTUAL_MODEL_TYPES[model_type]


def make_augmenter(
    settings: Mapping[str, Any],
    *,
    model_dir: str | None,
    seed: int,
    protected: Collection[str] = (),
) -> Augmenter:
    """The augmenter of ``settings`` (``augmenter``, ``aug_p``, ``aug_max``, and ``top_k`` for
    contextual). ``aug_max`` caps the words changed per text (nlpaug's default is 10); absent
    or ``null``, ``aug_p`` alone decides.

    ``protected`` words (phrases are split into words) are never substituted, nor picked to
    swap (a neighbour's swap may still move them); they are passed in lowercase, capitalised
    and upper case, since nlpaug matches them case-sensitively.
    """
    kind = settings.get("augmenter")
    if kind not in AUGMENTERS:
        raise ConfigError(f"perturbation.restratify.augmenter: {kind!r} is not one of "
                          f"{', '.join(AUGMENTERS)}")
    aug_p = settings.get("aug_p")
    if isinstance(aug_p, bool) or not isinstance(aug_p, int | float) or not 0 < aug_p <= 1:
        raise ConfigError(f"perturbation.restratify.aug_p: {aug_p!r} is not in (0, 1]")
    aug_max = settings.get("aug_max")
    if aug_max is not None and (isinstance(aug_max, bool) or not isinstance(aug_max, int)
                                or aug_max < 1):
        raise ConfigError(f"perturbation.restratify.aug_max: {aug_max!r} is not a positive "
                          "integer or null")
    capped = {} if aug_max is None else {"aug_max": aug_max}
    words = _protected_tokens(protected)
    stopwords = sorted({v for w in words for v in (w, w.capitalize(), w.upper())}) or None

    import nlpaug.augmenter.word as naw

    if kind == "random":
        aug = naw.RandomWordAug(action="swap", aug_p=float(aug_p), aug_max=aug_max,
                                stopwords=stopwords, tokenizer=str.split,
                                reverse_tokenizer=" ".join)
        return Augmenter(aug, {"augmenter": kind, "aug_p": aug_p, **capped}, seed)
    top_k = settings.get("top_k")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ConfigError(f"perturbation.restratify.top_k: {top_k!r} is not a positive integer")
    model_type = _model_type(model_dir)
    import torch

    aug = naw.ContextualWordEmbsAug(
        model_path=str(model_dir), model_type=model_type, action="substitute", top_k=top_k,
        aug_p=float(aug_p), aug_max=aug_max, stopwords=stopwords, force_reload=True,
        batch_size=CONTEXTUAL_BATCH, device="cuda" if torch.cuda.is_available() else "cpu")
    # nlpaug 1.1.11 lets special tokens ([UNK], [SEP], <s>, ...) be substitutes
    specials, skip = set(aug.model.get_tokenizer().all_special_tokens), aug.model.is_skip_candidate
    aug.model.is_skip_candidate = lambda candidate: candidate in specials or skip(candidate)
    return Augmenter(aug, {"augmenter": kind, "aug_p": aug_p, "top_k": top_k, **capped,
                           "model_type": model_type}, seed, masked_lm=True,
                     stopwords=stopwords or ())


def _check(train: pd.DataFrame, identities: Sequence[str], target_ratio: float) -> None:
    if not 0 < target_ratio < 1:
        raise ConfigError(f"perturbation.restratify.target_ratio: {target_ratio!r} is not "
                          "in (0, 1)")
    if len(set(identities)) != len(identities):
        raise ConfigError(f"restratify: identities {list(identities)} repeat a group")
    for col in REQUIRED_COLUMNS:
        if col not in train.columns:
            raise DataError("column missing: re-stratification needs "
                            f"{', '.join(REQUIRED_COLUMNS)}", column=col)
    for col in ("source_id", "is_synthetic"):
        if col in train.columns:
            raise DataError("column already present: the data is already re-stratified",
                            column=col)
    dup = train["id"].duplicated().to_numpy()
    if dup.any():
        raise DataError("duplicate id", row=int(np.argmax(dup)) + 1, column="id")
    bad = ~train["label"].isin([0, 1]).to_numpy()
    if bad.any():
        value = train["label"].iloc[np.argmax(bad)]
        value = value.item() if isinstance(value, np.generic) else value  # 7, not np.int64(7)
        raise DataError(f"label {value!r} is not 0 or 1",
                        row=int(np.argmax(bad)) + 1, column="label")


def _ratio(n_pos: int, n: int) -> float | None:
    return n_pos / n if n else None


def needed(n: int, n_positive: int, target_ratio: float) -> int:
    """Fewest positives to add so that ``(n_positive + k) / (n + k) >= target_ratio``."""
    k = (target_ratio * n - n_positive) / (1 - target_ratio)
    return max(0, math.ceil(k - 1e-9))


def _sources(train: pd.DataFrame, member: np.ndarray, k: int, group: str,
             seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``k`` sources cycling over the group's positives in a seeded order, and
    each one's running number (1 on the first pass over the positives, 2 on the second...)."""
    positions = np.flatnonzero(member & (train["label"].to_numpy() == 1))
    positions = positions[np.argsort(train["id"].to_numpy()[positions], kind="stable")]
    if k and not len(positions):
        raise DataError(f"identity group {group!r} needs {k} synthetic positives but has no "
                        "positive rows to augment", column="label")
    rng = np.random.default_rng([seed, zlib.crc32(group.encode())])
    order = positions[rng.permutation(len(positions))]
    j = np.arange(k)
    if not k:
        return j, j
    return order[j % len(order)], j // len(order) + 1


def _augment_all(texts: list[str], augment: Callable[[list[str]], list[str]],
                 protected: re.Pattern[str] | None) -> tuple[list[str], list[bool], int]:
    """Augment ``texts`` in batches, redoing failures; return texts, which failed, redone."""
    def ok(src: str, new: str) -> bool:
        if not new.strip() or new == src:
            return False
        return protected is None or set(protected.findall(src)) <= set(protected.findall(new))

    out, failed, redone = [], [], 0
    for start in range(0, len(texts), BATCH_SIZE):
        batch = texts[start:start + BATCH_SIZE]
        new = list(augment(batch))
        todo = [i for i, t in enumerate(new) if not ok(batch[i], t)]
        for _ in range(RETRIES):
            if not todo:
                break
            redone += len(todo)
            again = augment([batch[i] for i in todo])
            for i, t in zip(todo, again, strict=True):
                new[i] = t
            todo = [i for i in todo if not ok(batch[i], new[i])]
        for i in todo:
            new[i] = batch[i]
        out += new
        left = set(todo)
        failed += [i in left for i in range(len(batch))]
    return out, failed, redone


def restratify(
    train: pd.DataFrame,
    *,
    identities: Sequence[str],
    augment: Callable[[list[str]], list[str]],
    target_ratio: float,
    seed: int,
    protected_words: Collection[str] = (),
    select: str = "single_identity",
    identity_threshold: float | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``train`` plus synthetic positives raising each group's positive ratio to the target.

    Group *g*'s rows are those whose ``signature`` is *g* (about exactly that identity), or
    with ``select="identity_label"`` every row whose *g* value is at least
    ``identity_threshold`` (a row about two groups counts in both, and a synthetic copy made
    for one raises the other's ratio as well, so those end a little above the target). A
    group of ``n`` rows with ``p`` positives gets ``k = max(0, ceil((t·n − p) / (1 − t)))``
    synthetic positives, augmented from its positives in a seeded order, cycling over them.
    A synthetic row copies every column of its source, with id ``"{id}~{i}"`` (its source's
    ``i``-th synthetic copy, counted over all groups) and the augmented text. Added columns:
    ``source_id`` (a row's own id for original rows) and ``is_synthetic``. The originals come
    first, then the synthetic rows, group by group in the order of ``identities``.
    """
    _check(train, identities, target_ratio)
    if select not in SELECTIONS:
        raise ConfigError(f"perturbation.restratify.select: {select!r} is not one of "
                          f"{', '.join(SELECTIONS)}")
    if select == "identity_label":
        if identity_threshold is None:
            raise ConfigError("perturbation.restratify.select identity_label needs the "
                              "identity threshold")
        for g in identities:
            if g not in train.columns:
                raise DataError("identity column missing (select identity_label)", column=g)
    words = _protected_tokens(protected_words)
    protected = (re.compile(r"(?<!\w)(" + "|".join(map(re.escape, words)) + r")(?!\w)",
                            re.IGNORECASE) if words else None)
    signature = train["signature"].astype(str).to_numpy()
    is_positive = train["label"].to_numpy() == 1
    sources, numbers, group_of, before = [], [], [], {}
    for g in identities:
        member = (signature == g if select == "single_identity" else
                  (pd.to_numeric(train[g], errors="coerce") >= identity_threshold)
                  .fillna(False).to_numpy(dtype=bool))
        n, p = int(member.sum()), int((member & is_positive).sum())
        k = needed(n, p, target_ratio)
        src, _ = _sources(train, member, k, g, seed)
        sources += src.tolist()
        group_of += [g] * k
        before[g] = {"n": n, "n_positive": p, "positive_ratio": _ratio(p, n)}

    # a source's i-th synthetic copy over all groups: with identity_label a row about two
    # groups is a source for both, and its copies must not share an id
    copies: dict[int, int] = {}
    for pos in sources:
        copies[pos] = copies.get(pos, 0) + 1
        numbers.append(copies[pos])
    synthetic = train.iloc[sources].copy()
    usable = synthetic["text"].map(lambda t: isinstance(t, str) and bool(t.strip())).to_numpy()
    if not usable.all():
        raise DataError("empty text: a source of synthetic positives needs text",
                        row=sources[int(np.argmin(usable))] + 1, column="text")
    texts, failed, redone = _augment_all(synthetic["text"].tolist(), augment, protected)
    synthetic["source_id"] = synthetic["id"]
    synthetic["id"] = [f"{i}~{n}" for i, n in zip(synthetic["id"], numbers, strict=True)]
    synthetic["text"] = texts
    synthetic["is_synthetic"] = True
    clash = synthetic["id"].isin(train["id"]).to_numpy()
    if clash.any():
        raise DataError(f"synthetic id {synthetic['id'].iloc[np.argmax(clash)]!r} is already "
                        "an id of the training data", column="id")
    original = train.assign(source_id=train["id"], is_synthetic=False)
    out = pd.concat([original, synthetic], ignore_index=True)

    groups = {}
    failed_arr, group_arr = np.array(failed, dtype=bool), np.array(group_of, dtype=object)
    for g in identities:
        k = int((group_arr == g).sum())
        n, p = before[g]["n"] + k, before[g]["n_positive"] + k
        if select == "identity_label":  # synthetic rows of other groups may be members too
            extra = (pd.to_numeric(synthetic[g], errors="coerce") >= identity_threshold
                     ).fillna(False).to_numpy(dtype=bool) & (group_arr != g)
            n, p = n + int(extra.sum()), p + int(extra.sum())
        groups[g] = {
            "before": before[g],
            "after": {"n": n, "n_positive": p, "positive_ratio": _ratio(p, n)},
            "synthetic": k,
            "unchanged": int((failed_arr & (group_arr == g)).sum()),
        }
        log.info("restratify %s: %d synthetic positives (%d unchanged), ratio %s -> %s", g, k,
                 groups[g]["unchanged"], before[g]["positive_ratio"],
                 groups[g]["after"]["positive_ratio"])
    stats = {
        **({} if select == "single_identity" else {"select": select}),
        "target_ratio": target_ratio,
        "augmenter": dict(getattr(augment, "settings", {})),
        "protected_words": words,
        "rows": {"original": len(train), "synthetic": len(synthetic), "total": len(out)},
        "retries": {"max": RETRIES, "redone": redone},
        "groups": groups,
    }
    return out, stats
