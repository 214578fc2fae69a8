"""Settings shared by several windows and commands, from other versions, or unusable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.infra.errors import WriteFailedError
from app.core.infra.jsonfile import JSON_SIZE_LIMIT
from app.core.infra.settings import SETTINGS_VERSION, load_settings, save_settings, settings_path
from app.ui.shell.application import create_main_window
from tests.helpers.read_only import read_only_folder
from tests.helpers.unprivileged import run_unprivileged


def _disk(path: Path) -> dict[str, object]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def test_two_windows_keep_each_others_changes(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    first, second = load_settings(path), load_settings(path)
    first.references.append("/packs/a")
    first.pair_target = "/packs/a"
    save_settings(first, path)
    second.references.append("/packs/b")
    second.extra_repos.append("org/b")
    second.window_geometry = "geometry-2"
    save_settings(second, path)  # closes last: used to drop /packs/a and the pair

    merged = load_settings(path)
    assert merged.references == ["/packs/a", "/packs/b"]
    assert merged.pair_target == "/packs/a"
    assert merged.extra_repos == ["org/b"]
    assert merged.window_geometry == "geometry-2"


def test_removals_and_later_changes_of_others_survive(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    setup = load_settings(path)
    setup.references += ["/packs/a", "/packs/b"]
    save_settings(setup, path)
    first, second = load_settings(path), load_settings(path)
    first.references.remove("/packs/a")
    save_settings(first, path)
    second.pair_draft = "/packs/b"
    save_settings(second, path)
    assert load_settings(path).references == ["/packs/b"]  # second did not bring /packs/a back

    other = load_settings(path)
    other.pair_draft = "/packs/c"
    save_settings(other, path)
    first.window_state = "state"
    save_settings(first, path)  # first never changed pair_draft: other's value stays
    assert load_settings(path).pair_draft == "/packs/c"


_ADD_AND_SAVE = """
import sys
from pathlib import Path
from app.core.infra.settings import load_settings, save_settings
path, name = Path(sys.argv[1]), sys.argv[2]
for i in range(15):
    settings = load_settings(path)
    settings.references.append(f"/packs/{name}-{i}")
    save_settings(settings, path)
"""


def test_processes_saving_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    names = ["p0", "p1", "p2", "p3"]
    children = [
        subprocess.Popen([sys.executable, "-c", _ADD_AND_SAVE, str(path), name]) for name in names
    ]
    for child in children:
        assert child.wait(timeout=120) == 0
    expected = {f"/packs/{name}-{i}" for name in names for i in range(15)}
    assert set(load_settings(path).references) == expected


def test_newer_version_keeps_its_number_and_keys(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps({"version": 99, "library_dir": "/lib", "theme": {"dark": True}}),
        encoding="utf-8",
    )
    settings = load_settings(path)
    assert settings.library_dir == "/lib"
    settings.pair_target = "/packs/t"
    save_settings(settings, path)
    disk = _disk(path)
    assert disk["version"] == 99
    assert disk["theme"] == {"dark": True}
    assert disk["pair_target"] == "/packs/t"
    assert disk["library_dir"] == "/lib"


def test_unknown_keys_survive_a_save_even_if_the_file_went_away(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "future_key": [1, 2]}), encoding="utf-8")
    settings = load_settings(path)
    path.unlink()
    save_settings(settings, path)
    assert _disk(path) == {**_disk(path), "version": SETTINGS_VERSION, "future_key": [1, 2]}


def _assert_defaults_with_problem(path: Path) -> None:
    settings = load_settings(path)
    assert settings.references == [] and settings.library_dir == ""
    assert settings.load_problem is not None
    assert str(path) in settings.load_problem
    # Still saveable, and the unusable file was set aside, not overwritten.
    settings.pair_target = "/packs/t"
    save_settings(settings, path)
    assert load_settings(path).pair_target == "/packs/t"
    assert path.with_name(path.name + ".broken").exists()


_LOAD_IN_CHILD = """
import sys
from pathlib import Path
from app.core.infra.settings import load_settings
print(load_settings(Path(sys.argv[1])).load_problem)
"""


def _load_in_child(path: Path) -> str:
    # A separate process with a timeout: a FIFO used to block the open forever.
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_IN_CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_fifo_as_settings_does_not_hang(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    os.mkfifo(path)
    problem = _load_in_child(path)
    assert "named pipe" in problem and str(path) in problem
    assert path.with_name(path.name + ".broken").exists()


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_device_symlink_as_settings_does_not_hang(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.symlink_to("/dev/zero")
    problem = _load_in_child(path)
    assert "device" in problem and str(path) in problem
    assert path.with_name(path.name + ".broken").is_symlink()
    assert Path("/dev/zero").exists()  # the link was moved, not what it points to


def test_oversized_settings_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    with path.open("wb") as handle:
        handle.truncate(JSON_SIZE_LIMIT + 1)  # sparse: no disk space used
    _assert_defaults_with_problem(path)


def test_unreadable_settings_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    # A folder in place of the file gives a real OSError for root too (chmod 000 does not).
    path.mkdir()
    _assert_defaults_with_problem(path)


_DENIED_IN_CHILD = """
import sys
from pathlib import Path
from app.core.infra.settings import load_settings, save_settings
path = Path(sys.argv[1])
settings = load_settings(path)
print(settings.load_problem)
settings.pair_target = "/packs/t"
save_settings(settings, path)
print(load_settings(path).pair_target)
"""


def test_permission_denied_settings_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"version": 1}', encoding="utf-8")
    path.chmod(0)
    tmp_path.chmod(0o777)  # the unprivileged child sets the file aside and saves here
    proc = run_unprivileged(_DENIED_IN_CHILD, str(path))
    assert proc.returncode == 0, proc.stderr
    problem, saved = proc.stdout.splitlines()
    assert str(path) in problem and "ermission denied" in problem, problem
    assert saved == "/packs/t"
    assert path.with_name(path.name + ".broken").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_the_window_starts_on_a_fifo_settings_file_and_says_why(
    qtbot: QtBot, draftdeck_home: Path
) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    window = create_main_window()
    qtbot.addWidget(window)
    message = window.statusBar().currentMessage()
    assert "named pipe" in message and str(path) in message, message


def test_saving_into_a_read_only_folder_names_the_file(draftdeck_home: Path) -> None:
    draftdeck_home.mkdir(parents=True)
    settings = load_settings()
    settings.references.append("/somewhere/pack")
    with (
        read_only_folder(draftdeck_home),
        pytest.raises(WriteFailedError, match="settings not saved") as caught,
    ):
        save_settings(settings)
    assert caught.value.path == settings_path()
    assert settings.references == ["/somewhere/pack"]  # the session keeps its change


def test_the_window_works_on_a_read_only_data_folder_and_says_so(
    qtbot: QtBot, draftdeck_home: Path, fixture_bundle: Callable[[str], Path], tmp_path: Path
) -> None:
    draftdeck_home.mkdir(parents=True)
    pack = tmp_path / "my-pack"
    shutil.copytree(fixture_bundle("qwen3-draft-identical"), pack)
    with read_only_folder(draftdeck_home):
        window = create_main_window()
        qtbot.addWidget(window)
        said = window.statusBar().currentMessage()
        assert f"settings cannot be saved: {settings_path().parent}" in said, said
        assert "downloads and imported packs cannot be saved" in said, said
        # Adding a pack works for the session and says, without a dialog, that it is
        # not saved; the pair follows; closing does not raise.
        assert window.unsaved_label.isHidden()  # nothing unsaved yet
        window.library_page.add_paths([pack])
        assert [e.path for e in window.library.scan()] == [pack.resolve()]
        # A later message ("Added my-pack") may replace the problem's; the mark stays.
        assert window.unsaved_label.isVisibleTo(window)
        said = window.unsaved_label.toolTip()
        assert f"{settings_path()}: settings not saved" in said, said
        assert "until DraftDeck closes" in said
        window.selection.select(pack.resolve(), None)
        assert window.selection.target == pack.resolve()
        window.close()
    assert not settings_path().exists()
