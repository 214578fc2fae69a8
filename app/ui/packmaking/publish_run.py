"""A publish from the window: `draftdeck publish DIR REPO --json` in a child process.

A child, not a thread: the Hub client's upload has no cancel, and a thread cannot be
stopped, so a Cancel that only stopped listening would let the commit land anyway.
Killing the child stops it whole; a Hub commit lands whole or not at all, so the repo
keeps its last complete commit. The child runs the same code as the command line
(app/core/hub/publish.py through app/cli/packmaking.py) and tells its progress as JSON
lines (`--json`); the Hub client's own terminal bars are turned off.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from app.core.hub.publish import Published, UploadProgress
from app.core.infra.errors import HubError
from app.core.packmaking.export_process import StreamedProcess

CLI_PREFIX = "draftdeck: "


def own_command() -> list[str]:
    """The `draftdeck` command of this very program: the frozen app, or python -m app."""
    if getattr(sys, "frozen", False):
        # On Windows this is the windowed draftdeck.exe, not the draftdeck-cli.exe twin:
        # its standard handles are the pipes StreamedProcess gives it, so its output
        # reaches us as the engine worker's does (the same executable, worker_command),
        # and no console window opens.
        return [sys.executable]
    return [sys.executable, "-m", "app"]


def publish_command(folder: Path, repo_id: str, private: bool, force: bool) -> list[str]:
    return [
        *own_command(),
        "publish",
        str(folder),
        repo_id,
        "--json",
        *(["--private"] if private else []),
        *(["--force"] if force else []),
    ]


def _json_line(line: str) -> object:
    """The JSON object on this line of the child's, or None."""
    if not line.startswith("{"):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def _published(data: object, private: bool) -> Published | None:
    """The child's --json answer, if `data` is it."""
    if not isinstance(data, dict) or not {"repo", "commit", "url"} <= data.keys():
        return None
    return Published(str(data["repo"]), str(data["commit"]), str(data["url"]), private)


def publish_in_child(
    process: StreamedProcess,
    folder: Path,
    repo_id: str,
    private: bool,
    force: bool,
    token_env: dict[str, str],
    on_line: Callable[[str], None],
    on_progress: Callable[[UploadProgress], None],
) -> Published:
    """Run the publish (`force`: even a pack whose export was not verified); the child's
    progress goes to `on_progress`, every other line it says to `on_line` (both on this
    thread). Raises ProcessCancelled after `process.cancel()`, HubError when it failed."""
    answer: list[Published] = []

    def heard(line: str) -> None:
        data = _json_line(line)
        published = _published(data, private)
        progress = UploadProgress.from_json(data)
        if published is not None:
            answer.append(published)
        elif progress is not None:
            on_progress(progress)
        else:
            on_line(line.removeprefix(CLI_PREFIX))

    env = {**os.environ, **token_env, "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    command = publish_command(folder, repo_id, private, force)
    result = process.run(command, env, folder, heard)
    if result.returncode == 0 and answer:
        return answer[0]
    said = [line for line in result.tail if line.startswith(CLI_PREFIX)]
    problem = said[-1].removeprefix(CLI_PREFIX) if said else "\n".join(result.tail[-5:])
    raise HubError(problem or f"draftdeck publish ended with code {result.returncode}")
