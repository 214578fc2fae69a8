"""The pack's export check on the command line: `draftdeck info` reports it (and --json),
`draftdeck publish` refuses a pack whose export was not verified unless --force, notes
one never checked, and tells its progress per file (as JSON lines with --json), against
the local Hub stand-in with the real huggingface_hub client in a child process."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.hub.publish import SMALL_FILE, UploadProgress, publish_plan
from app.core.pack.files import EXPORT_CHECK
from tests.helpers.cli import run_cli
from tests.helpers.export_checks import record_check
from tests.hub_server import DEFAULT_TOKEN, FakeHub

Copy = Callable[..., Path]
REPO = "maker/Qwen3-tiny-draft-MNN"


@pytest.fixture
def hub_env(hub: FakeHub) -> dict[str, str]:
    """The child publishes to the stand-in with its token, on the classic LFS path."""
    return {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": DEFAULT_TOKEN,
        "HF_HUB_DISABLE_XET": "1",
    }


def test_info_reports_the_export_check(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    never = run_cli("info", str(pack), check=True, timeout=120)
    assert "Export check    none (not checked against its source)" in never.stdout
    assert json.loads(run_cli("info", str(pack), "--json").stdout)["export_check"] is None

    record_check(pack, faithful=0.6, cost=0.5)
    failed = run_cli("info", str(pack), check=True, timeout=120)
    assert "Export check    Export not verified: Top-1 agreement" in failed.stdout
    data = json.loads(run_cli("info", str(pack), "--json").stdout)["export_check"]
    assert (data["verdict"], data["verified"], data["faithful"]) == (
        "export not verified",
        False,
        pytest.approx(0.6),
    )
    assert any("first differs after token 3" in r for r in data["reasons"])

    (pack / EXPORT_CHECK).write_text("{", encoding="utf-8")
    unreadable = run_cli("info", str(pack), "--json")
    assert unreadable.returncode == 0  # the pack still reads
    data = json.loads(unreadable.stdout)["export_check"]
    assert data["verdict"] == "export check unreadable" and data["file"] == str(pack / EXPORT_CHECK)


def test_publish_refuses_a_pack_not_verified_unless_forced(
    hub: FakeHub, hub_env: dict[str, str], bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    record_check(pack, faithful=0.6, cost=0.5)
    refused = run_cli("publish", str(pack), REPO, env=hub_env, timeout=120)
    assert refused.returncode == 1, refused.stderr
    assert "draftdeck: Export not verified: Top-1 agreement" in refused.stderr
    assert "Pass --force to publish it anyway." in refused.stderr
    assert "uploading" not in refused.stderr and REPO not in hub._repo_ids()

    forced = run_cli("publish", str(pack), REPO, "--force", env=hub_env, timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert "draftdeck: publishing anyway (--force): Export not verified" in forced.stderr
    assert hub.file(REPO, EXPORT_CHECK).content == (pack / EXPORT_CHECK).read_bytes()


def test_publish_notes_a_pack_never_checked_and_counts_the_files_sent(
    hub: FakeHub, hub_env: dict[str, str], bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    (pack / "weights-2.bin").write_bytes(os.urandom(SMALL_FILE))  # large: sent on its own
    plan = publish_plan(pack, REPO)
    done = run_cli("publish", str(pack), REPO, "--json", env=hub_env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "note: this pack's export was never checked" in done.stderr
    said = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    heard = [UploadProgress.from_json(data) for data in said]
    n = len(plan.files)
    # Before the small files (one request), before each large one, then before the
    # commit: files and bytes sent so far.
    assert [(p.files_done, p.current) for p in heard if p is not None] == [
        (0, f"{n - 1} small files"),
        (n - 1, "weights-2.bin"),
        (n, ""),
    ]
    assert all(p is not None and p.files == n for p in heard)
    last = heard[-1]
    assert last is not None and last.bytes_done == last.total_bytes == plan.total_bytes
    assert json.loads(done.stdout)["commit"] == hub.sha(REPO)  # stdout: the answer alone


def test_publish_says_its_progress_in_words_without_json(
    hub: FakeHub, hub_env: dict[str, str], bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    record_check(pack, faithful=1.0, cost=0.9)
    n = len(publish_plan(pack, REPO).files)
    done = run_cli("publish", str(pack), REPO, env=hub_env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "never checked" not in done.stderr and "not verified" not in done.stderr
    assert f"0 of {n} files sent (0 B of " in done.stderr
    assert f"{n} of {n} files sent" in done.stderr and "making the commit" in done.stderr
    assert not any(line.startswith("{") for line in done.stderr.splitlines())
