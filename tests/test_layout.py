"""``biasrepro.layout``: paths built and parsed by the same functions, the study matrix from
the method registry, and no rule or module keeping its own copy of a path it owns."""

from __future__ import annotations

import ast
import re
import sys

import pytest
from conftest import REPO

from biasrepro import config as cfg
from biasrepro import layout


@pytest.mark.parametrize("fset", layout.FAIRNESS_SETS)
def test_prediction_key_inverts_the_predictions_path(fset: str) -> None:
    path = layout.predictions_file("results/seeds/7", "toxicity", "bert-tiny", "baseline",
                                   layout.fairness_predictions_name(fset))
    assert path == ("results/seeds/7/predictions/toxicity/bert-tiny/baseline/"
                    f"fairness-{fset}.parquet")
    assert layout.prediction_key(path) == ("bert-tiny", "baseline", fset)


@pytest.mark.parametrize("path", ["a/b/test.parquet", "fairness-original.parquet",
                                  "m/x/fairness-other.parquet", "m/x/fairness-original.csv"])
def test_prediction_key_refuses_other_files(path: str) -> None:
    with pytest.raises(ValueError):
        layout.prediction_key(path)


def test_subspace_variants_parse_back() -> None:
    assert layout.representation_variants(["gender", "race"]) == [
        "pretrained", "sentdebias-gender", "sentdebias-race"]
    for attribute in ("gender", "religion"):
        assert layout.variant_attribute(layout.subspace_variant(attribute)) == attribute
    assert layout.variant_attribute(layout.PRETRAINED) is None


REGISTRY = {
    "baseline": {"data": "original"},
    "perturbed": {"data": "perturbed"},
    "up-g": {"data": "original",
             "sentdebias": {"stage": "upstream", "attribute": "gender"}},
    "down-r": {"data": "original",
               "sentdebias": {"stage": "downstream", "attribute": "race", "base": "baseline"}},
    "down-p": {"data": "original",
               "sentdebias": {"stage": "downstream", "attribute": "race", "base": "perturbed"}},
}


def test_the_study_matrix_by_hand() -> None:
    methods = list(REGISTRY)
    assert layout.downstream_methods(REGISTRY, methods) == ["down-p", "down-r"]
    assert layout.trained_methods(REGISTRY, methods) == ["baseline", "perturbed", "up-g"]
    # a task running only a downstream method still fine-tunes the method it starts from
    assert layout.finetune_methods(REGISTRY, ["down-p"]) == ["perturbed"]
    assert layout.finetune_methods(REGISTRY, ["up-g", "down-r"]) == ["baseline", "up-g"]
    assert layout.subspace_attributes(REGISTRY, methods, ["religion"]) == ["gender", "religion"]
    assert [layout.method_variant(REGISTRY, m) for m in ("baseline", "up-g", "down-r")] == [
        "pretrained", "sentdebias-gender", None]


@pytest.mark.parametrize("configfile", ["config/config.yaml", "config/paper.yaml"])
def test_every_configured_method_has_a_place_in_the_matrix(configfile: str) -> None:
    config = cfg.load(REPO / configfile)
    registry = config["methods"]["registry"]
    for task, methods in config["methods"]["tasks"].items():
        trained = layout.finetune_methods(registry, methods)
        for m in methods:
            sd = layout.sentdebias(registry, m)
            assert (m in trained) != bool(sd and sd["stage"] == "downstream"), m
            assert registry[m]["data"] in layout.TRAINING_DATA[task], m


def test_layout_is_standard_library_only() -> None:
    tree = ast.parse((REPO / "src/biasrepro/layout.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def _owned_paths() -> set[str]:
    """Every file path layout.py spells out."""
    out = set()
    for value in vars(layout).values():
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                stack += v.values()
            elif isinstance(v, str) and "/" in v and v.endswith((".parquet", ".csv")):
                out.add(v)
    return out


def test_no_rule_or_module_spells_out_a_path_layout_owns() -> None:
    owned = _owned_paths()
    assert len(owned) >= 15
    sources = [*sorted((REPO / "workflow/rules").glob("*.smk")),
               *(p for p in sorted((REPO / "src/biasrepro").rglob("*.py"))
                 if p.name != "layout.py")]
    found = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for literal in re.findall(r"""["']([^"'\n]+)["']""", text):
            if literal in owned or re.fullmatch(r"f?sentdebias-\{[a-z_\[\]'\"]+\}", literal):
                found.append(f"{path.relative_to(REPO)}: {literal}")
        found += [f"{path.relative_to(REPO)}: {m}"
                  for m in re.findall(r"resources/models/embedded/", text)]
    assert not found, "\n".join(found)
