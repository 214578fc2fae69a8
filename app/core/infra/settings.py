"""User settings as versioned JSON, written atomically.

A settings file that cannot be read is set aside (renamed with `.broken`) rather
than overwritten, so nothing the user wrote is lost, and defaults are used.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError, MissingFileError
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.infra.paths import app_dirs

log = logging.getLogger("draftdeck.settings")

SETTINGS_VERSION = 1


@dataclass
class Settings:
    library_dir: str = ""
    # Pack folders added by reference: they stay where the user keeps them.
    references: list[str] = field(default_factory=list)
    window_geometry: str = ""
    window_state: str = ""
    last_page: str = "library"
    # The pair Chat, Tune and Recipes work on (pack folder paths).
    pair_target: str = ""
    pair_draft: str = ""
    # Hub: a token for private or gated repos (HF_TOKEN is used when empty), and repos
    # the user added to the catalog.
    hub_token: str = ""
    extra_repos: list[str] = field(default_factory=list)
    # Phone: folders the user added as push destinations, and the one last used.
    phone_destinations: list[str] = field(default_factory=list)
    phone_root: str = ""

    def library_path(self) -> Path:
        return Path(self.library_dir) if self.library_dir else app_dirs().default_library

    def to_json(self) -> dict[str, Any]:
        return {"version": SETTINGS_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        known = {f.name: f for f in fields(cls)}
        defaults = cls()
        values: dict[str, Any] = {}
        for name in known:
            value = data.get(name, getattr(defaults, name))
            default = getattr(defaults, name)
            # A value of the wrong type is replaced by the default, not trusted.
            if isinstance(default, list):
                ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            else:
                ok = isinstance(value, type(default))
            values[name] = value if ok else default
        return cls(**values)


def settings_path() -> Path:
    return app_dirs().settings_file


def load_settings(path: Path | None = None) -> Settings:
    path = path or settings_path()
    try:
        data = read_json_object(path)
    except MissingFileError:
        return Settings()
    except FileError as exc:
        broken = path.with_suffix(path.suffix + ".broken")
        log.warning("settings unreadable (%s); kept as %s, using defaults", exc, broken)
        try:
            path.replace(broken)
        except OSError:
            log.exception("could not set aside %s", path)
        return Settings()
    version = data.get("version")
    if not isinstance(version, int) or version > SETTINGS_VERSION:
        log.warning("settings version %r is not understood; using what can be read", version)
    return Settings.from_json(data)


def save_settings(settings: Settings, path: Path | None = None) -> None:
    atomic_write_json(path or settings_path(), settings.to_json(), indent=2)
