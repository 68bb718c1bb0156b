"""Configuration: both profiles validate; bad keys and values stop Snakemake with the key named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO, snakemake

from biasrepro import config
from biasrepro.errors import ConfigError


def _default() -> dict:
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


def test_both_profiles_and_the_small_profile_are_valid() -> None:
    config.load(REPO / "config/config.yaml")
    config.load(REPO / "config/paper.yaml")
    small = config.load(REPO / "config/config.yaml", REPO / ".test/config/config.yaml")
    assert small["world"]["reviews"]["n_train"] < _default()["world"]["reviews"]["n_train"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["world"]["reviews"].update(n_trian=5),
         "config key 'world.reviews.n_trian': unknown key"),
        (lambda c: c.update(sede=1), "config key 'sede': unknown key"),
        (lambda c: c["world"]["comments"]["ambiguous"]["toxic_share"].update(female=1.5),
         "config key 'world.comments.ambiguous.toxic_share.female': 1.5 is greater"),
        (lambda c: c["world"]["comments"]["ambiguous"].update(civil_shares=0.1),
         "config key 'world.comments.ambiguous.civil_shares': unknown key"),
        (lambda c: c["preprocess"]["civil_comments"].update(toxicity_threshold=1.5),
         "config key 'preprocess.civil_comments.toxicity_threshold': 1.5 is greater"),
        (lambda c: c["datasets"]["imdb"].update(source="kaggle"),
         "config key 'datasets.imdb.source'"),
        (lambda c: c["preprocess"]["civil_comments"]["split"].update(train=0.5),
         "config key 'preprocess.civil_comments.split': fractions sum to 1.1"),
        (lambda c: c["attributes"]["race"]["marginalized"].append("latino"),
         "config key 'attributes.race.marginalized': 'latino' is not in 'identities'"),
        (lambda c: c.pop("world"), "config key 'world.reviews': missing"),
        (lambda c: c["datasets"].update(civil_comments={
            "source": "download", "format": "zip",
            "files": [{"name": "a.zip", "url": "https://x/a.zip", "sha256": "0" * 64}]}),
         "config key 'datasets.civil_comments.member': missing"),
        (lambda c: c["datasets"].update(imdb={
            "source": "download", "format": "hf_parquet",
            "files": [{"name": "a.parquet", "url": "https://x/a", "sha256": "0" * 64}]}),
         "needs one train and one test file"),
        (lambda c: c["datasets"]["sst"].update(source="download", format="csv", files=[
            {"name": "s.csv", "url": "https://x/s.csv", "sha256": "ABC"}]),
         "config key 'datasets.sst.files.0.sha256'"),
        (lambda c: c["methods"]["registry"]["downstream-sentDebias-gender"]["sentdebias"]
         .update(base="downstream-perturbed-data"),
         "config key 'methods.registry.downstream-sentDebias-gender.sentdebias.base': "
         "'downstream-perturbed-data' trains on perturbed data"),
        (lambda c: c["methods"]["registry"]["downstream-sentDebias-gender"]["sentdebias"]
         .update(base="upstream-sentDebias-gender"),
         "'upstream-sentDebias-gender' has SentenceDebias itself"),
        (lambda c: c["methods"]["registry"]["upstream-sentDebias-race"]["sentdebias"]
         .update(base="baseline"),
         "config key 'methods.registry.upstream-sentDebias-race.sentdebias'"),
        (lambda c: c["methods"]["registry"]["downstream-sentDebias-race"]["sentdebias"]
         .pop("base"),
         "config key 'methods.registry.downstream-sentDebias-race.sentdebias.base': missing"),
        (lambda c: c["representation"].update(models=["bert-base"]),
         "config key 'representation.models': 'bert-base' is not in 'models.registry'"),
        (lambda c: c["datasets"]["stereoset"].update(source="download", format="csv", files=[
            {"name": "s.json", "url": "https://x/s.json", "sha256": "unpinned"}]),
         "config key 'datasets.stereoset.format': 'csv' is not a format for stereoset"),
        (lambda c: c["biasfinder"]["occupation"].update(film_credits="remove"),
         "config key 'biasfinder.occupation.film_credits': 'remove' is not one of "
         "['keep', 'drop']"),
        (lambda c: c["biasfinder"]["occupation"].update(film_credits=False),
         "config key 'biasfinder.occupation.film_credits': False is not one of"),
        (lambda c: c["biasfinder"]["occupation"].pop("film_credits"),
         "config key 'biasfinder.occupation.film_credits': missing"),
    ],
)
def test_bad_config_names_the_key(edit, message: str) -> None:
    cfg = _default()
    edit(cfg)
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.validate(cfg)


@pytest.mark.parametrize("setting", ["keep", "drop"])
def test_film_credits_takes_keep_or_drop(setting: str) -> None:
    cfg = _default()
    cfg["biasfinder"]["occupation"]["film_credits"] = setting
    config.validate(cfg)


def test_film_credits_defaults_drop_and_the_paper_profile_keeps_them() -> None:
    """The embedded default (and the small profile) drop film credits; the paper profile
    keeps them, as the paper's tool counted them."""
    small = config.load(REPO / "config/config.yaml", REPO / ".test/config/config.yaml")
    paper = config.load(REPO / "config/paper.yaml")
    assert _default()["biasfinder"]["occupation"]["film_credits"] == "drop"
    assert small["biasfinder"]["occupation"]["film_credits"] == "drop"
    assert paper["biasfinder"]["occupation"] == {"templates": "first", "film_credits": "keep"}


def test_snakemake_stops_at_load_naming_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("world:\n  comments:\n    n_backgrund: 3\n")
    proc = snakemake(["-n", "--configfile", str(bad)], cwd=REPO, check=False)
    assert proc.returncode != 0
    assert "config key 'world.comments.n_backgrund': unknown key" in proc.stdout + proc.stderr


def _dotted_keys(node: object, prefix: str = "") -> list[str]:
    if not isinstance(node, dict):
        return []
    keys = []
    for k, v in node.items():
        key = f"{prefix}{k}"
        keys.append(key)
        if k not in ("groups", "planted", "attributes", "registry", "associations",
                     "toxic_share", "sense_pairs"):
            # (open-ended maps are documented as such)
            keys += _dotted_keys(v, key + ".")
    return keys


def test_every_config_key_is_documented() -> None:
    doc = (REPO / "config/README.md").read_text()
    keys = set(_dotted_keys(_default())) | set(_dotted_keys(
        yaml.safe_load((REPO / "config/paper.yaml").read_text())))
    # per-task and per-family settings are documented once, as models.training.<task>.KEY
    # and compute.families.<family>.KEY
    keys = {re.sub(r"^models\.training\.(sentiment|toxicity|named\.[^.]+)\.",
                   "models.training.<task>.", k) for k in keys}
    keys = {re.sub(r"^models\.training\.named\.[^.]+$", "models.training.named", k)
            for k in keys}
    keys = {re.sub(r"^compute\.families\.\w+\.", "compute.families.<family>.", k) for k in keys}
    undocumented = sorted(k for k in keys if f"`{k}`" not in doc)
    assert not undocumented, f"config/README.md does not explain: {undocumented}"
