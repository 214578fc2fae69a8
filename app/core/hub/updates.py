"""Is an installed pack older than its repo on the Hub?"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.hub.hub_api import HubConfig, latest_revision
from app.core.pack.files import installed_source


@dataclass(frozen=True)
class UpdateInfo:
    repo_id: str
    installed: str
    latest: str

    @property
    def available(self) -> bool:
        return self.installed != self.latest


def check_update(config: HubConfig, pack: Path) -> UpdateInfo | None:
    """None for packs DraftDeck did not download (nothing to compare with)."""
    source = installed_source(pack)
    if not source or not isinstance(source.get("repo"), str):
        return None
    latest = latest_revision(config, source["repo"])
    return UpdateInfo(source["repo"], str(source.get("revision", "")), latest)
