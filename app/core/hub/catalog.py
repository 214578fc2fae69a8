"""The catalog: curated repos (resources/catalog.json), live collection listings cached
for offline use, and repos the user typed."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypedDict

from app.core.hub.hub_api import HubConfig, collection_repos
from app.core.infra.errors import FileError
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.infra.paths import app_dirs
from app.core.infra.resources import read_text


@dataclass(frozen=True)
class CatalogEntry:
    repo_id: str
    role: str  # "draft", "target" or "unknown"
    family: str
    summary: str
    source: str  # "curated", "collection: <title>" or "added"

    def to_json(self) -> dict[str, str]:
        return {
            "repo": self.repo_id,
            "role": self.role,
            "family": self.family,
            "summary": self.summary,
            "source": self.source,
        }


@dataclass(frozen=True)
class Catalog:
    entries: tuple[CatalogEntry, ...]
    live_fetched_at: float | None  # when the collections were last listed

    def age_seconds(self, now: float | None = None) -> float | None:
        if self.live_fetched_at is None:
            return None
        return (now or time.time()) - self.live_fetched_at


class _CuratedRepo(TypedDict):
    repo: str
    role: str
    family: str
    summary: str


class _CuratedCollection(TypedDict):
    title: str
    slug: str


class _Curated(TypedDict):
    """resources/catalog.json, which ships with the app."""

    repos: list[_CuratedRepo]
    collections: list[_CuratedCollection]


@cache
def _curated() -> _Curated:
    data: _Curated = json.loads(read_text("catalog.json"))
    return data


def cache_path() -> Path:
    return app_dirs().cache / "catalog-live.json"


def load_catalog(extra_repos: list[str] | None = None) -> Catalog:
    """Curated entries, then cached collection items, then repos the user added."""
    curated = _curated()
    entries = [
        CatalogEntry(r["repo"], r["role"], r["family"], r["summary"], "curated")
        for r in curated["repos"]
    ]
    seen = {e.repo_id for e in entries}
    fetched_at: float | None = None
    try:
        cached = read_json_object(cache_path())
        fetched_at = float(cached.get("fetched_at", 0)) or None
        for title, repos in cached.get("collections", {}).items():
            for repo in repos:
                if isinstance(repo, str) and repo not in seen:
                    seen.add(repo)
                    entries.append(
                        CatalogEntry(
                            repo, _guess_role(repo), _guess_family(repo), "", f"collection: {title}"
                        )
                    )
    except (FileError, TypeError, ValueError, AttributeError):
        pass  # no cache yet, or an unreadable one: the curated list still works offline
    for repo in extra_repos or []:
        if repo not in seen:
            seen.add(repo)
            entries.append(CatalogEntry(repo, _guess_role(repo), _guess_family(repo), "", "added"))
    return Catalog(tuple(entries), fetched_at)


def refresh_live(config: HubConfig) -> Catalog:
    """List the curated collections on the Hub and cache the result."""
    listed: dict[str, list[str]] = {}
    for collection in _curated()["collections"]:
        listed[collection["title"]] = collection_repos(
            config, collection["slug"], collection["title"]
        )
    atomic_write_json(cache_path(), {"fetched_at": time.time(), "collections": listed}, indent=2)
    return load_catalog()


def _guess_role(repo: str) -> str:
    name = repo.lower()
    if "draft" in name or "acceleration" in name:
        return "draft"
    return "unknown"


def _guess_family(repo: str) -> str:
    name = repo.lower()
    if "qwen3.5" in name or "qwen3_5" in name:
        return "qwen3_5"
    if "qwen3" in name:
        return "qwen3"
    return "unknown"
