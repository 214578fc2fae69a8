"""Paths a user mistypes on the command line: an error naming the path, never a verdict."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.infra.errors import NotABundleError
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library

Fixture = Callable[[str], Path]


def test_check_on_a_mistyped_path_is_an_error_not_blocked(
    fixture_bundle: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "qwen3-taget"
    draft = str(fixture_bundle("qwen3-draft-noisy"))
    assert main(["check", str(missing), draft]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no "Blocked": the pair was never judged
    assert err == f"draftdeck: cannot read the target: {missing}: folder not found\n"


def test_check_json_lists_each_unreadable_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "config.json"
    a_file.write_text("{}")
    missing = tmp_path / "nowhere"
    assert main(["check", str(missing), str(a_file), "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert "verdict" not in out
    assert out["errors"] == [
        {
            "side": "target",
            "code": "not_a_bundle",
            "file": str(missing),
            "message": "folder not found",
        },
        {
            "side": "draft",
            "code": "not_a_bundle",
            "file": str(a_file),
            "message": "this is a file, not a pack folder",
        },
    ]


def test_info_on_a_file_says_it_is_a_file(
    fixture_bundle: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    config = fixture_bundle("qwen3-target") / "config.json"
    assert main(["info", str(config)]) == 1
    assert capsys.readouterr().err == f"draftdeck: {config}: this is a file, not a pack folder\n"


def test_adding_a_file_as_a_pack_folder_says_it_is_a_file(
    fixture_bundle: Fixture, draftdeck_home: Path
) -> None:
    config = fixture_bundle("qwen3-target") / "config.json"
    with pytest.raises(NotABundleError, match="this is a file, not a pack folder"):
        Library(load_settings(), save_settings).add_folder(config)
