"""Phone results the user recorded: plain and speculative tok/s at a draft length, as
TokForge shows them after a run on the phone, kept per phone (its adb model name).

Each result keeps the pair it was run with (names, folders, a stamp of their model
files and the bytes their weights read per token) and the forecast DraftDeck made for
it just before it was recorded, so a list of results shows how far the forecasts were
off. They make that phone's profile (phone_profiles.py). Kept in DraftDeck's data
folder (`phone_results.json`), merged under a lock (json_store.py), at most
MAX_PER_PHONE per phone (the oldest go first).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeGuard

from app.core.infra.errors import UsageError
from app.core.infra.paths import app_dirs
from app.core.measure.json_store import read_store, update_store

STORE_VERSION = 1
STORE_NAME = "phone_results.json"
MAX_PER_PHONE = 200
MAX_TOK_S = 100_000.0  # above this a figure is a typing slip, not a phone


@dataclass(frozen=True)
class PackRef:
    name: str  # the pack folder's name
    path: str  # its folder, resolved, when recorded
    stamp: str  # pair_acceptance.model_stamp of it then ("" when it was not here)
    bytes: int | None  # weights read per token (None: not known)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "stamp": self.stamp, "bytes": self.bytes}

    @classmethod
    def from_json(cls, data: Any) -> PackRef | None:
        if not isinstance(data, dict):
            return None
        name, path, stamp, size = (data.get(k) for k in ("name", "path", "stamp", "bytes"))
        if not (isinstance(name, str) and isinstance(path, str) and isinstance(stamp, str)):
            return None
        ok_size = isinstance(size, int) and not isinstance(size, bool) and size > 0
        return cls(name, path, stamp, size if ok_size else None)


@dataclass(frozen=True)
class RecordedForecast:
    """The forecast made for a result just before it was recorded."""

    device: str  # the profile it came from
    spec_tok_s: float
    uplift: float
    uplift_low: float
    uplift_high: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: Any) -> RecordedForecast | None:
        if not isinstance(data, dict) or not isinstance(data.get("device"), str):
            return None
        numbers = []
        for key in ("spec_tok_s", "uplift", "uplift_low", "uplift_high"):
            value = data.get(key)
            if not _number(value):
                return None
            numbers.append(float(value))
        return cls(data["device"], *numbers)


@dataclass(frozen=True)
class PhoneResult:
    id: str
    phone: str  # the phone's adb model name
    target: PackRef
    draft: PackRef
    plain_tok_s: float
    spec_tok_s: float
    draft_length: int
    date: str  # ISO 8601, UTC
    forecast: RecordedForecast | None  # made just before recording; None: none could be
    phone_ram: int = 0  # the phone's RAM (MemTotal) when it was attached; 0: not known

    @property
    def uplift(self) -> float:
        return self.spec_tok_s / self.plain_tok_s - 1.0

    @property
    def forecast_error(self) -> float | None:
        """(forecast - measured) / measured speculative tok/s: +0.10 means the forecast
        said 10 % faster than the phone was."""
        if self.forecast is None:
            return None
        return self.forecast.spec_tok_s / self.spec_tok_s - 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phone": self.phone,
            "target": self.target.to_json(),
            "draft": self.draft.to_json(),
            "plain_tok_s": self.plain_tok_s,
            "spec_tok_s": self.spec_tok_s,
            "draft_length": self.draft_length,
            "uplift": self.uplift,
            "date": self.date,
            "forecast": self.forecast.to_json() if self.forecast else None,
            "forecast_error": self.forecast_error,
            "phone_ram": self.phone_ram,
        }

    @classmethod
    def from_json(cls, data: Any) -> PhoneResult | None:
        """A stored result; None when it is not one (a hand-edited file)."""
        if not isinstance(data, dict):
            return None
        target, draft = PackRef.from_json(data.get("target")), PackRef.from_json(data.get("draft"))
        ident, phone, date = data.get("id"), data.get("phone"), data.get("date")
        plain, spec, d = data.get("plain_tok_s"), data.get("spec_tok_s"), data.get("draft_length")
        if target is None or draft is None:
            return None
        if not all(isinstance(x, str) for x in (ident, phone, date)):
            return None
        try:
            check_figures(plain, spec, d)
        except UsageError:
            return None
        assert _number(plain) and _number(spec) and isinstance(d, int)  # checked above
        return cls(
            str(ident),
            str(phone),
            target,
            draft,
            float(plain),
            float(spec),
            int(d),
            str(date),
            RecordedForecast.from_json(data.get("forecast")),
            _ram(data.get("phone_ram")),
        )


def _ram(x: Any) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) and x > 0 else 0


def _number(x: Any) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def check_figures(plain: Any, spec: Any, d: Any) -> None:
    """Refuse figures no phone gives (a UsageError saying which)."""
    for what, value in (("plain tok/s", plain), ("speculative tok/s", spec)):
        if not _number(value) or not 0 < value <= MAX_TOK_S:
            raise UsageError(f"{what} must be a number above 0, not {value!r}")
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 16:
        raise UsageError(f"the draft length must be a whole number from 1 to 16, not {d!r}")


def store_path() -> Path:
    return app_dirs().data / STORE_NAME


def _phones(data: dict[str, Any]) -> dict[str, Any]:
    phones = data.get("phones")
    return phones if isinstance(phones, dict) else {}


def list_results(phone: str | None = None) -> list[PhoneResult]:
    """Recorded results, oldest first (of one phone, or of all)."""
    out: list[PhoneResult] = []
    for name, items in _phones(read_store(store_path())).items():
        if (phone is not None and name != phone) or not isinstance(items, list):
            continue
        out.extend(r for r in map(PhoneResult.from_json, items) if r is not None)
    return sorted(out, key=lambda r: r.date)


def phones() -> list[str]:
    """Phones with recorded results, the most recently recorded first."""
    latest: dict[str, str] = {}
    for r in list_results():
        latest[r.phone] = max(latest.get(r.phone, ""), r.date)
    return sorted(latest, key=lambda p: latest[p], reverse=True)


def add_result(
    phone: str,
    target: PackRef,
    draft: PackRef,
    plain_tok_s: float,
    spec_tok_s: float,
    draft_length: int,
    forecast: RecordedForecast | None = None,
    date: str | None = None,
    phone_ram: int = 0,
) -> PhoneResult:
    phone = phone.strip()
    if not phone:
        raise UsageError("the phone's model name is empty")
    check_figures(plain_tok_s, spec_tok_s, draft_length)
    result = PhoneResult(
        f"{int(time.time()):x}{os.urandom(3).hex()}",
        phone,
        target,
        draft,
        float(plain_tok_s),
        float(spec_tok_s),
        draft_length,
        date or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        forecast,
        _ram(phone_ram),
    )

    def change(data: dict[str, Any]) -> None:
        all_phones = data.get("phones")
        if not isinstance(all_phones, dict):
            all_phones = data["phones"] = {}
        items = all_phones.get(phone)
        if not isinstance(items, list):
            items = all_phones[phone] = []
        items.append(result.to_json())
        del items[: max(0, len(items) - MAX_PER_PHONE)]
        data["version"] = STORE_VERSION

    update_store(store_path(), change)
    return result


def delete_result(result_id: str) -> PhoneResult | None:
    """Delete a result by its id; the result deleted, None when there was none."""

    def change(data: dict[str, Any]) -> PhoneResult | None:
        for items in _phones(data).values():
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                if isinstance(item, dict) and item.get("id") == result_id:
                    del items[i]
                    return PhoneResult.from_json(item)
        return None

    return update_store(store_path(), change)
