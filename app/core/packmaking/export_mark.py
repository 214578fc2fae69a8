"""The mark an export leaves in the folder it made (`.draftdeck-export.json`: the source,
the settings, the exporter and the files it wrote): what makes a file DraftDeck's own
to replace, both for a later export into the folder and for measure-pack's recipe."""

from __future__ import annotations

from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object

EXPORT_MARK = ".draftdeck-export.json"  # in every folder an export made: source, settings


def made_by_export(folder: Path) -> set[str] | None:
    """The file names an export wrote into `folder` (its mark), or None if none did."""
    try:
        mark = read_json_object(folder / EXPORT_MARK)
    except FileError:
        return None
    files = mark.get("files")
    return {str(f) for f in files} if isinstance(files, list) else None
