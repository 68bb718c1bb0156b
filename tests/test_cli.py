"""The command line: every subcommand has --help; expected failures are one line, exit 2."""

from __future__ import annotations

import subprocess

import pytest
from conftest import BIN

from biasrepro.cli import build_parser, main

SUBCOMMANDS = ["world", "download", "prepare", "summary", "pretrain", "finetune", "predict",
               "evaluate", "metrics-table", "config", "dvc-yaml", "dvc-record", "biasfinder",
               "coref", "perturb", "fairness", "representation", "analysis", "plan", "leakage"]


def test_parser_lists_every_subcommand() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted(SUBCOMMANDS)


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_each_subcommand_has_help(command: str) -> None:
    proc = subprocess.run([str(BIN / "biasrepro"), command, "--help"], capture_output=True,
                          text=True, check=True)
    assert proc.stdout.startswith("usage: biasrepro " + command)


def test_bad_config_is_one_error_line_and_exit_2(tmp_path, capsys) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("seed: -1\n")
    assert main(["config", "validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid configuration:")
    assert "config key 'seed'" in err


def test_settings_must_name_the_keys_a_step_needs(tmp_path, capsys) -> None:
    code = main(["world", "reviews", "--settings", '{"seed": 1}', "--out-dir", str(tmp_path)])
    assert code == 2
    assert "error: --settings lacks the key 'world.reviews'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
