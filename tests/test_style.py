"""Style: the code passes ruff (settings in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import BIN, REPO


def test_ruff_is_clean() -> None:
    ruff = BIN / "ruff" if (BIN / "ruff").exists() else shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    paths = [p for p in ("src", "tests", "benchmarks", "workflow/scripts") if (REPO / p).is_dir()]
    proc = subprocess.run([str(ruff), "check", *paths], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
