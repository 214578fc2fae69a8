"""Downloads when the server or the disk misbehaves, and what an update keeps.

Each fault happens for real: the local Hub stand-in drops connections, serves files of
the wrong length, and the disk refuses writes through a file-size limit on the process.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.install import staging_dir
from app.core.hub.job import DONE, FAILED, DownloadJob
from app.core.hub.transfer import CHUNK, RETRIES, download_file
from app.core.infra.errors import HubError
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.files import BEFORE_UPDATE_SUFFIX, DRAFT_RECIPE
from app.core.pack.library import Library
from app.core.recipe.files import RecipeDocument, original_text, reset_to_original
from tests.conftest import DRAFT_REPO
from tests.helpers.cli import APP
from tests.hub_server import FakeHub

Fixture = Callable[[str], Path]
BIG = "someone/big-pack-MNN"
WEIGHT = "llm.mnn.weight"
BIG_SIZE = 7 * CHUNK + 4321  # more chunks than a download retries in a row


@pytest.fixture
def library(draftdeck_home: Path) -> Path:
    return load_settings().library_path()


@pytest.fixture
def big(hub: FakeHub) -> bytes:
    weight = random.Random(11).randbytes(BIG_SIZE)
    hub.add_repo(BIG, {"config.json": b'{"llm_model": "llm.mnn"}', WEIGHT: weight})
    return weight


def _config(hub: FakeHub) -> HubConfig:
    return HubConfig(endpoint=hub.endpoint, token=False)


def _part(library: Path, repo: str = BIG) -> Path:
    return staging_dir(library, repo) / "files" / (WEIGHT + ".part")


def _installed(library: Path) -> list[str]:
    return [p.name for p in Library(load_settings(), save_settings).scan()]


def test_a_connection_that_drops_at_once_every_time_gives_up_and_keeps_what_it_had(
    hub: FakeHub, library: Path, big: bytes
) -> None:
    hub.always_drop_after_bytes[WEIGHT] = 0  # headers, then the line goes dead
    job = DownloadJob(BIG, library, _config(hub))
    status = job.run()
    assert status.state == FAILED
    assert "connection keeps failing" in status.error and "resume" in status.error
    tries = [path for _m, path, _r in hub.requests if path.endswith(WEIGHT)]
    assert len(tries) > 1  # it did retry before giving up
    assert _installed(library) == []
    assert staging_dir(library, BIG).exists()  # kept, so a later run resumes
    hub.always_drop_after_bytes.clear()
    job.restart()
    assert job.run().state == DONE


def test_drops_that_still_make_progress_never_give_up(
    hub: FakeHub, library: Path, big: bytes
) -> None:
    # Every answer breaks off after 1.5 chunks (one whole chunk is kept each time): more
    # attempts than the retry limit, but each one brings bytes, so it goes on to the end.
    hub.always_drop_after_bytes[WEIGHT] = CHUNK + CHUNK // 2
    assert BIG_SIZE // CHUNK > RETRIES + 1
    status = DownloadJob(BIG, library, _config(hub)).run()
    assert status.state == DONE, status.error
    assert (Path(status.path) / WEIGHT).read_bytes() == big
    assert status.done_bytes == status.total_bytes


@pytest.mark.parametrize("delta", [-1000, 1000])
def test_a_file_of_another_length_than_listed_is_discarded(
    hub: FakeHub, library: Path, big: bytes, delta: int
) -> None:
    hub.served_size[WEIGHT] = BIG_SIZE + delta
    status = DownloadJob(BIG, library, _config(hub)).run()
    assert status.state == FAILED
    assert f"but the Hub lists {BIG_SIZE}" in status.error and WEIGHT in status.error
    assert not _part(library).exists()
    assert _installed(library) == []


def test_a_server_that_sends_endlessly_is_cut_off_at_the_listed_size(
    hub: FakeHub, library: Path, big: bytes
) -> None:
    hub.served_size[WEIGHT] = 4 * BIG_SIZE  # a file that would fill the disk
    plan = fetch_plan(_config(hub), BIG)
    item = next(f for f in plan.files if f.path == WEIGHT)
    written: list[int] = []
    part = library / "x.part"
    with pytest.raises(HubError, match="the Hub lists") as caught:
        download_file(_config(hub), BIG, plan.revision, item, part, written.append, lambda: False)
    assert caught.value.code == "size_mismatch"
    assert sum(written) <= BIG_SIZE and not part.exists()


def test_an_oversized_part_file_is_started_over_and_progress_adds_up(
    hub: FakeHub, library: Path, big: bytes
) -> None:
    hub.corrupt.add(WEIGHT)
    job = DownloadJob(BIG, library, _config(hub))
    assert job.run().state == FAILED  # the staging folder of this revision stays
    _part(library).write_bytes(b"\xff" * (BIG_SIZE + 5000))  # longer than the file
    hub.corrupt.clear()
    job.restart()
    status = job.run()
    assert status.state == DONE, status.error
    assert (Path(status.path) / WEIGHT).read_bytes() == big
    assert status.done_bytes == status.total_bytes  # the oversized part counted nothing


@pytest.mark.skipif(sys.platform == "win32", reason="file-size limits are POSIX")
def test_a_disk_that_refuses_writes_is_a_message_and_the_download_resumes(
    hub: FakeHub, library: Path, big: bytes
) -> None:
    import resource

    def small_files_only() -> None:
        # Writes past 1.5 chunks fail with EFBIG (Python ignores SIGXFSZ), as a full
        # disk or a quota would fail them: a real refusal by the kernel.
        resource.setrlimit(resource.RLIMIT_FSIZE, (CHUNK + CHUNK // 2, resource.RLIM_INFINITY))

    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    proc = subprocess.run(
        [*APP, "download", BIG],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=small_files_only,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "could not write" in proc.stderr and WEIGHT in proc.stderr
    assert _installed(library) == []
    kept = _part(library).stat().st_size
    assert 0 < kept <= CHUNK + CHUNK // 2
    served = hub.bytes_served[WEIGHT]
    again = subprocess.run(
        [*APP, "download", BIG, "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert (library / "big-pack-MNN" / WEIGHT).read_bytes() == big
    assert hub.bytes_served[WEIGHT] - served <= BIG_SIZE - kept + CHUNK  # it resumed


def _edit_recipe(pack: Path, **changes: object) -> dict[str, object]:
    document = RecipeDocument.load(pack / DRAFT_RECIPE)
    data = {**document.data, **changes}
    document.save(data)
    return data


def _new_revision(hub: FakeHub, fixture_bundle: Fixture, **replace: bytes) -> None:
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    hub.add_repo(DRAFT_REPO, {**files, "README.md": b"v2\n", **replace})


def test_an_update_keeps_recipe_edits_it_does_not_touch(
    hub: FakeHub, library: Path, fixture_bundle: Fixture
) -> None:
    pack = Path(DownloadJob(DRAFT_REPO, library, _config(hub)).run().path)
    shipped = (pack / DRAFT_RECIPE).read_text()
    mine = _edit_recipe(pack, thread_num=1)
    (pack / "my-notes.txt").write_text("what I tried\n")
    _new_revision(hub, fixture_bundle)
    status = DownloadJob(DRAFT_REPO, library, _config(hub)).run()
    assert status.state == DONE, status.error
    assert (pack / "README.md").read_text() == "v2\n"
    assert json.loads((pack / DRAFT_RECIPE).read_text()) == mine
    assert (pack / "my-notes.txt").read_text() == "what I tried\n"
    assert (pack / (DRAFT_RECIPE + ".bak")).read_text() == shipped  # the save's backup
    assert any("your edits are kept" in note for note in status.notes)
    # Reset still brings back what the pack ships.
    assert original_text(pack / DRAFT_RECIPE) == shipped
    assert reset_to_original(pack / DRAFT_RECIPE)
    assert (pack / DRAFT_RECIPE).read_text() == shipped
    assert not any(p.name.startswith((".replaced-", ".kept-")) for p in library.iterdir())


def test_an_update_that_changes_an_edited_recipe_keeps_the_users_copy_beside_it(
    hub: FakeHub, library: Path, fixture_bundle: Fixture, tmp_path: Path
) -> None:
    pack = Path(DownloadJob(DRAFT_REPO, library, _config(hub)).run().path)
    # Edited in another program: DraftDeck kept no original, the install record tells.
    recipe = pack / DRAFT_RECIPE
    mine = recipe.read_text().replace("{", '{\n    "my_key": 1,', 1)
    recipe.write_text(mine)
    upstream = b'{\n    "backend_type": "cpu",\n    "thread_num": 2\n}\n'
    _new_revision(hub, fixture_bundle, **{DRAFT_RECIPE: upstream})
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    proc = subprocess.run(
        [*APP, "download", DRAFT_REPO, "--json"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert recipe.read_bytes() == upstream
    assert (pack / (DRAFT_RECIPE + BEFORE_UPDATE_SUFFIX)).read_text() == mine
    notes = json.loads(proc.stdout.strip().splitlines()[-1])["notes"]
    assert notes == [
        f"{DRAFT_RECIPE}: the update changes this file; "
        f"your edited copy is {DRAFT_RECIPE}{BEFORE_UPDATE_SUFFIX}"
    ]
    assert notes[0] in proc.stderr  # said to the user, not only in the JSON
