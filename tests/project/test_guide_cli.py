"""The user guide's command-line page matches the command: how to run it from a checkout,
every command it has, and the defaults it shows; its reference page is what the parsers
say now."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

from app.cli.main import build_parser
from tests.helpers.paths import ROOT
from tests.helpers.script_modules import load_script, tasks_module

tasks = tasks_module()
CLI_PAGE = ROOT / "docs" / "guide" / "cli.md"


def _cli_page() -> str:
    return CLI_PAGE.read_text(encoding="utf-8")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: p for name, p in sub.choices.items() if name != "gui"}


def test_the_guide_says_how_to_run_the_command_from_a_checkout() -> None:
    section = _cli_page()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    # What `make run` leaves behind and starts: .venv/bin/draftdeck (VENV ?= .venv,
    # handed to scripts/tasks.py, whose run task starts the venv's draftdeck).
    assert re.search(r"^VENV \?= \.venv$", makefile, re.MULTILINE)
    assert re.search(r"^export DRAFTDECK_VENV := \$\(VENV\)$", makefile, re.MULTILINE)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("DRAFTDECK_VENV", raising=False)
        patch.delenv("DRAFTDECK_PYTHON", raising=False)
        patch.setattr(tasks, "WINDOWS", False)
        assert Path(tasks.tool("draftdeck")) == ROOT / ".venv" / "bin" / "draftdeck"
    assert 'run(tool("draftdeck"))' in inspect.getsource(tasks.app_run)
    assert "`.venv/bin/draftdeck`" in section
    assert "python -m app" in section


def test_the_guide_lists_every_command() -> None:
    page = _cli_page()
    missing = [name for name in _commands() if f"draftdeck {name}" not in page]
    assert not missing, f"{CLI_PAGE.name} never shows these commands: {missing}"


def test_the_guide_shows_the_real_defaults() -> None:
    """`[--runs 6]` in a usage line must be what the command does without the option."""
    block = _cli_page().split("```sh", 1)[1].split("```", 1)[0]
    usages = re.split(r"\n(?=draftdeck )", block)
    commands = _commands()
    checked = 0
    for usage in usages:
        name = usage.split()[1] if usage.startswith("draftdeck ") else ""
        if name not in commands:
            continue
        options = {a.option_strings[-1]: a for a in commands[name]._actions if a.option_strings}
        for option, shown in re.findall(r"\[(--?[a-z-]+) (\d+(?:\.\d+)?)\]", usage):
            default = options[option].default
            if default is None:  # -d 3: the engine's (MNN's) default, not the parser's
                continue
            assert float(shown) == float(default), f"{name} {option}: guide {shown}, is {default}"
            checked += 1
    assert checked >= 3  # bench --tokens/--runs/--min-run-seconds, generate --max-tokens


def test_the_reference_page_is_what_the_parsers_say() -> None:
    """docs/guide/cli-reference.md is written by scripts/cli_reference.py: a help text
    changed without running it would leave the guide saying something else."""
    script = load_script(Path("scripts/cli_reference.py"))
    written = script.PAGE.read_text(encoding="utf-8")
    assert written == script.render(), "run `python scripts/cli_reference.py`"
    for name in _commands():
        assert f"\n## draftdeck {name}\n" in written
    assert "`--block K`: quantization block" in written  # an option and its help


def _all_parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """The command and every command under it, with the words that name it."""
    found = [(words, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _all_parsers(sub, (*words, name))
    return found


def test_no_help_text_shows_a_doubled_percent_sign() -> None:
    """argparse %-formats an argument's help but not a description: a "%%" written in the
    wrong one reached `draftdeck tune --help` as "95 %% interval". What a user reads is
    checked, every command's help and the reference page, and a percent sign is there."""
    parsers = _all_parsers(build_parser())
    assert len(parsers) > 20
    shown = {" ".join(words): " ".join(p.format_help().split()) for words, p in parsers}
    doubled = [name for name, text in shown.items() if "%%" in text or "%(" in text]
    assert doubled == [], f"a doubled or unexpanded percent sign in: {doubled}"
    assert "95 % interval" in shown["tune"] and "95 % interval" in shown["bench"]
    page = load_script(Path("scripts/cli_reference.py")).render()
    assert "%%" not in page and "%(" not in page and "95 % interval" in page
