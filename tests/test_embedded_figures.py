"""The docs' embedded-default figures come from a run, never from a hand: the committed page
was generated with today's configuration, every figure the docs link to is on it, the
generator reads the small profile's run and refuses a missing result, and (opt-in, about
8 minutes on 2 cores) a fresh default run gives the committed page byte for byte:

    BIASREPRO_EMBEDDED=1 .venv/bin/python -m pytest -m embedded tests/test_embedded_figures.py
"""

from __future__ import annotations

import os
import re
import shutil

import pytest
from conftest import REPO, copy_checkout, snakemake

from biasrepro import config
from biasrepro.analysis import embedded_figures
from biasrepro.errors import DataError

PAGE = REPO / "docs" / embedded_figures.PAGE
LINK = re.compile(r"embedded-default\.md#([a-z0-9-]+)")


def _keys(text: str) -> list[str]:
    return re.findall(r'<a id="([a-z0-9-]+)"></a>', text)


def test_the_page_was_generated_with_todays_configuration() -> None:
    """A change to config/config.yaml moves the embedded figures: regenerate the page (the
    command is at its top) before this passes again."""
    sha = config.config_sha256(config.load(REPO / "config" / "config.yaml"))
    assert embedded_figures.page_sha256(PAGE.read_text()) == sha


def test_every_figure_the_docs_link_to_is_on_the_page() -> None:
    keys = set(_keys(PAGE.read_text()))
    linked = {(p.name, k) for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
              for k in LINK.findall(p.read_text())}
    assert linked, "the docs quote no figure of the page"
    assert {(name, k) for name, k in linked if k not in keys} == set()


@pytest.mark.slow
def test_the_generator_reads_a_run_and_gives_every_figure(small_run, tmp_path) -> None:
    out = tmp_path / "page.md"
    figs = embedded_figures.write_page(small_run / "results", out, config_sha256="0" * 64,
                                       config_files=["config/config.yaml"])
    assert [f.key for f in figs] == _keys(out.read_text())
    # the small profile runs fewer methods: a subset of the default's figures, each read
    small = _keys(out.read_text())
    assert set(small) <= set(_keys(PAGE.read_text()))
    assert {"controls", "eq4-sides", "training-rows", "btc-rates", "btc-class-effects"} <= \
        set(small)
    assert all(f.value and f.source.startswith("results/") for f in figs)
    assert embedded_figures.page_sha256(out.read_text()) == "0" * 64


def test_a_missing_result_is_named_and_nothing_is_written(tmp_path) -> None:
    (tmp_path / "results").mkdir()
    out = tmp_path / "page.md"
    with pytest.raises(DataError, match="controls.csv"):
        embedded_figures.write_page(tmp_path / "results", out, config_sha256="x",
                                    config_files=["c.yaml"])
    assert not out.exists()


@pytest.mark.embedded
@pytest.mark.skipif(not os.environ.get("BIASREPRO_EMBEDDED"),
                    reason="reruns the embedded default (~8 min): set BIASREPRO_EMBEDDED=1")
def test_a_fresh_default_run_gives_the_committed_page(tmp_path) -> None:
    repo = copy_checkout(tmp_path / "repo")
    shutil.rmtree(repo / "results", ignore_errors=True)
    snakemake(["--cores", "all"], cwd=repo)
    out = tmp_path / "page.md"
    embedded_figures.write_page(repo / "results", out,
                                config_sha256=embedded_figures.page_sha256(PAGE.read_text()),
                                config_files=["config/config.yaml"])
    assert out.read_text() == PAGE.read_text()
