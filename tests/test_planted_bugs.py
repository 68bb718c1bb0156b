"""scripts/planted_bugs.py: its bugs still fit the code, and one planted bug is caught."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "planted_bugs.py"


@pytest.fixture(scope="module")
def planted():
    spec = importlib.util.spec_from_file_location("planted_bugs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["planted_bugs"] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    yield module
    del sys.modules["planted_bugs"]


def test_every_bug_still_finds_its_anchor_and_changes_the_text(planted):
    """Each bug's anchor text is still in its file; once the code drifts this fails (and
    the script refuses to run), so a bug that no longer applies cannot pass as caught."""
    assert planted.missing_anchors() == []
    for bug in planted.BUGS:
        assert bug.old != bug.new and (REPO / bug.path).is_file(), bug.key
        assert (REPO / bug.tests[0]).is_file(), bug.key
    assert len({b.key for b in planted.BUGS}) == len(planted.BUGS)


def test_a_drifted_anchor_is_reported(planted):
    gone = planted.Bug("gone", "an anchor the file lacks", "src/biasrepro/metrics/dataset_bias.py",
                       "this text is not in the module", "x", ("tests/test_dataset_bias.py",))
    (line,) = planted.missing_anchors([gone])
    assert line.startswith("gone: src/biasrepro/metrics/dataset_bias.py no longer contains")


def test_a_planted_bug_is_caught_and_the_checkout_is_untouched():
    module = REPO / "src" / "biasrepro" / "metrics" / "dataset_bias.py"
    before = module.read_bytes()
    proc = subprocess.run([sys.executable, str(SCRIPT), "-k", "eq5_max"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("control    tests/test_dataset_bias.py:")
    assert lines[1].startswith("caught     eq5_max:") and "1 failed" in lines[1]
    assert lines[-1] == "1 of 1 planted bugs caught"
    assert module.read_bytes() == before


def test_an_unknown_key_is_an_error():
    proc = subprocess.run([sys.executable, str(SCRIPT), "-k", "no_such_bug"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no bug's key contains 'no_such_bug'" in proc.stderr


def test_a_harmless_change_is_not_caught(planted, tmp_path):
    """The verdict comes from the tests: a change that breaks nothing (a docstring) passes
    them and is reported as not caught."""
    harmless = planted.Bug("docstring", "a reworded docstring",
                           "src/biasrepro/metrics/dataset_bias.py",
                           '"""Eq. 4 per attribute;', '"""Eq. 4, per attribute;',
                           ("tests/test_dataset_bias.py",))
    assert planted.missing_anchors([harmless]) == []
    caught, summary = planted.plant(harmless, tmp_path)
    assert not caught and " passed" in summary and "failed" not in summary
