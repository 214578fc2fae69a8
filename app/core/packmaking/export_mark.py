"""The mark an export leaves in every pack it makes (`.draftdeck-export.json`: the source
folder, the settings it exported with (bits, block, role), the exporter and the files it
wrote): what makes a file DraftDeck's own to replace (a later export into the folder,
measure-pack's recipe), and what the card and the verification read of the export.
Apart from the checks, which import the card's writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object

EXPORT_MARK = ".draftdeck-export.json"


def _mark(folder: Path) -> dict[str, Any] | None:
    try:
        return read_json_object(folder / EXPORT_MARK)
    except FileError:
        return None


def made_by_export(folder: Path) -> set[str] | None:
    """The file names an export wrote into `folder` (its mark), or None if none did."""
    mark = _mark(folder)
    files = mark.get("files") if mark is not None else None
    return {str(f) for f in files} if isinstance(files, list) else None


def recorded_settings(folder: Path) -> dict[str, Any]:
    """The settings the export of `folder` was made with ({} when DraftDeck did not
    export it, or the mark does not read)."""
    mark = _mark(folder)
    settings = mark.get("settings") if mark is not None else None
    return settings if isinstance(settings, dict) else {}
