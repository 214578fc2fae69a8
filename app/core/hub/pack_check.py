"""Does an installed pack still hold the files DraftDeck installed? Each file's size and
hash against the record written at install (`.draftdeck-source.json`), so it works
offline. A JSON file that differs is the user's edit (recipes are edited; an update
keeps such edits, carry_over.py), not damage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.hub.carry_over import shipped_files
from app.core.hub.transfer import matches_on_disk


@dataclass(frozen=True)
class PackCheck:
    names: tuple[str, ...]  # the files the install recorded
    missing: tuple[str, ...]
    damaged: tuple[str, ...]  # present, but not the Hub's bytes
    edited: tuple[str, ...]  # JSON files the user changed

    @property
    def files(self) -> int:
        return len(self.names)

    @property
    def intact(self) -> bool:
        return bool(self.files) and not self.missing and not self.damaged

    def summary(self) -> str:
        """One sentence for the user."""
        if not self.files:
            return "DraftDeck has no record of the files it installed here; Re-download it"
        if self.intact:
            text = f"All {self.files} files match the Hub's"
        else:
            problems = [
                f"{len(names)} {what}: {', '.join(names)}"
                for names, what in ((self.missing, "missing"), (self.damaged, "damaged"))
                if names
            ]
            text = "; ".join(problems) + "; Re-download fetches them again"
        if self.edited:
            text += f" ({', '.join(self.edited)}: your edits)"
        return text


def check_pack(pack: Path) -> PackCheck:
    """Check every file recorded at install (reads them all: blocks)."""
    shipped = shipped_files(pack)
    missing: list[str] = []
    damaged: list[str] = []
    edited: list[str] = []
    for name, item in sorted(shipped.items()):
        path = pack / name
        if not path.is_file():
            missing.append(name)
        elif not matches_on_disk(path, item):
            (edited if name.endswith(".json") else damaged).append(name)
    return PackCheck(tuple(sorted(shipped)), tuple(missing), tuple(damaged), tuple(edited))
