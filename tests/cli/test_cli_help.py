"""Every command explains itself in --help, and `export`'s default block fits the model
it is given (the user guide's own example runs without --adjust)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.main import build_parser, main
from app.core.packmaking.export_env import EXPORT_ENV_VAR
from tests.helpers.smol_shape import smol_shaped_folder


def _parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under `parser` with the words that reach it (`recipe set`, say)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_command_has_a_description_and_every_argument_help() -> None:
    undescribed, unexplained = [], []
    for path, parser in _parsers(build_parser()):
        if path and not parser.description:
            undescribed.append(" ".join(path))
        for action in parser._actions:
            if not action.help or action.help == argparse.SUPPRESS:
                unexplained.append(f"{' '.join(path)} {action.option_strings or action.dest}")
    assert not undescribed, f"no description: {undescribed}"
    assert not unexplained, f"no help: {unexplained}"
    assert len(list(_parsers(build_parser()))) > 20  # the walk reached the commands


def test_publish_help_says_where_the_token_and_the_hub_come_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["publish", "--help"])
    said = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for words in ("HF_TOKEN", "hub_token", "`hf auth login`", "no --token option", "HF_ENDPOINT"):
        assert words in said


def test_the_commands_that_may_ask_document_yes() -> None:
    """export and verify-export ask before creating the export environment; with no
    terminal they say "pass --yes", so --yes must be in their help."""
    commands = dict(_parsers(build_parser()))
    for name in ("export", "verify-export"):
        (yes,) = [a for a in commands[(name,)]._actions if "--yes" in a.option_strings]
        assert yes.help is not None and "without asking" in yes.help


def _export(tmp_path: Path, *args: str) -> int:
    """`draftdeck export` of a SmolLM2-shaped folder (hidden 576) with no export
    environment and no terminal: it stops at the question it cannot ask."""
    source = smol_shaped_folder(tmp_path / "SmolLM2-135M")
    return main(["export", str(source), "--out", str(tmp_path / "out"), *args])


def test_the_default_block_fits_the_model_and_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(EXPORT_ENV_VAR, str(tmp_path / "no-env"))
    code = _export(tmp_path)
    err = capsys.readouterr().err
    assert "does not divide" not in err  # not refused: the checks passed
    assert "quantizing with block 64, the largest up to 128" in err
    assert code == 1 and "pass --yes" in err  # it got as far as the environment
    assert not (tmp_path / "out").exists()
