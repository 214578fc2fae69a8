"""Two packs of one name: each list tells them apart, the command line refuses to guess,
and a download that duplicates an installed pack says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.hub.downloads import Downloads
from app.core.hub.job import DONE
from app.core.infra.errors import UsageError
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.core.pack.pack_names import display_names
from tests.conftest import DRAFT_REPO
from tests.helpers.cli import run_cli
from tests.helpers.downloads import finish

Copy = Callable[..., Path]
NAME = "smol-draft-q4"
DOWNLOADED = "Qwen3-0.6B-kl-baseline-20k-MNN"  # the folder a download of DRAFT_REPO makes


@pytest.fixture
def twins(
    tmp_path: Path, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> tuple[Library, Path, Path]:
    """A library holding NAME in its folder and, linked from ~/x, another NAME."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    library = Library(load_settings(), save_settings)
    installed = bundle_copy("fast-draft", library.root / NAME)
    linked = bundle_copy("qwen3-draft-noisy", tmp_path / "home" / "x" / NAME)
    bundle_copy("fast-target", library.root / "fast-target")
    library.add_folder(linked)
    return library, installed, linked


def test_packs_of_one_name_are_told_apart_by_where_they_live(
    twins: tuple[Library, Path, Path],
) -> None:
    library, installed, linked = twins
    labels = display_names(library.scan())
    assert labels == {
        installed: f"{NAME} (library)",
        linked: f"{NAME} (linked: ~/x)",
        library.root / "fast-target": "fast-target",  # alone: its plain name
    }


def test_a_name_that_fits_two_packs_is_refused_naming_both(
    twins: tuple[Library, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    library, installed, linked = twins
    with pytest.raises(UsageError) as refused:
        library.pack_named(NAME)
    assert str(installed) in str(refused.value) and str(linked) in str(refused.value)
    # A folder, or the label the lists show, names one.
    assert library.pack_named(str(linked)) == linked
    assert library.pack_named(f"{NAME} (library)") == installed
    assert library.pack_named("fast-target") == library.root / "fast-target"

    # Every command taking a pack's name: exit 2, both folders, how to choose.
    assert main(["measure-pack", NAME, "--target", "fast-target"]) == 2
    said = capsys.readouterr().err
    assert f"'{NAME}' names 2 packs in the library" in said
    assert f"{installed}  (library)" in said and f"{linked}  (linked: ~/x)" in said
    assert "by its folder" in said


def test_push_refuses_an_ambiguous_name_before_looking_for_a_phone(
    twins: tuple[Library, Path, Path],
) -> None:
    _, installed, linked = twins
    done = run_cli("push", NAME, timeout=60)
    assert done.returncode == 2, done.stderr
    assert str(installed) in done.stderr and str(linked) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_download_that_duplicates_an_installed_pack_says_so(
    downloads: Downloads, bundle_copy: Copy, tmp_path: Path
) -> None:
    library = downloads.library
    # Linked before the download: a different pack of the name the download takes, and
    # the draft it serves under another name.
    other = bundle_copy("fast-draft", tmp_path / "elsewhere" / DOWNLOADED)
    copy = bundle_copy("qwen3-draft-noisy", tmp_path / "mine" / "my-copy")
    library.add_folder(other)
    library.add_folder(copy)
    job = downloads.start(DRAFT_REPO)
    assert finish(downloads, job) == DONE, job.status().error
    notes = job.status().notes
    assert notes == (  # in the Library's order
        f"it holds the same model files as “my-copy” ({copy}), already installed",
        f"a pack of this name was already installed (a different pack, {other}): the lists "
        f"show them as “{DOWNLOADED} (library)” and “{DOWNLOADED} (linked: {other.parent})”",
    )


def test_a_download_alone_in_the_library_has_no_such_note(downloads: Downloads) -> None:
    job = downloads.start(DRAFT_REPO)
    assert finish(downloads, job) == DONE, job.status().error
    assert job.status().notes == ()
