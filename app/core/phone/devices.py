"""Which phones are attached, what they are, and what to do about the ones that are
not ready. Hot-plug is debounced: a replugged phone flaps between offline, absent and
device for a moment, and a list that jumps with it is unreadable."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from app.core.infra.errors import PhoneError
from app.core.phone.adb import GUIDANCE, READY, Adb

SETTLE_SECONDS = 1.0
DESCRIBE_TIMEOUT = 10.0  # a hung phone must not stall the device list


@dataclass(frozen=True)
class DeviceInfo:
    serial: str
    state: str
    model: str = ""
    android: str = ""
    abi: str = ""
    ram_bytes: int = 0

    @property
    def ready(self) -> bool:
        return self.state == READY

    @property
    def guidance(self) -> str:
        return "" if self.ready else GUIDANCE.get(self.state, f"The phone is {self.state}.")

    @property
    def title(self) -> str:
        return self.model or self.serial

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "guidance": self.guidance}


def parse_getprop(text: str) -> dict[str, str]:
    return dict(re.findall(r"^\[([^\]]+)\]: \[([^\]]*)\]", text, re.MULTILINE))


def parse_meminfo_total(text: str) -> int:
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else 0


def describe(adb: Adb, serial: str) -> DeviceInfo:
    """Model, Android version, ABI and RAM of a phone just listed as ready."""
    out = adb.attach(serial).shell("getprop; cat /proc/meminfo", DESCRIBE_TIMEOUT).out
    props = parse_getprop(out)
    return DeviceInfo(
        serial,
        READY,
        model=props.get("ro.product.model", ""),
        android=props.get("ro.build.version.release", ""),
        abi=props.get("ro.product.cpu.abi", ""),
        ram_bytes=parse_meminfo_total(out),
    )


class DeviceLister:
    """Lists devices; the details of a ready phone are asked once and remembered."""

    def __init__(self, adb: Adb) -> None:
        self.adb = adb
        self._details: dict[str, DeviceInfo] = {}

    def list(self) -> list[DeviceInfo]:
        found: list[DeviceInfo] = []
        for raw in self.adb.devices():
            state = raw.state
            if state != READY:
                self._details.pop(raw.serial, None)
                found.append(DeviceInfo(raw.serial, state, model=raw.tags.get("model", "")))
                continue
            info = self._details.get(raw.serial)
            if info is None:
                try:
                    info = describe(self.adb, raw.serial)
                except PhoneError:  # gone, or not answering yet: listed bare, asked again
                    info = DeviceInfo(raw.serial, READY, model=raw.tags.get("model", ""))
                else:
                    self._details[raw.serial] = info
            found.append(info)
        self.adb.names.update({d.serial: d.model for d in found if d.model})
        return sorted(found, key=lambda d: (not d.ready, d.title.lower(), d.serial))


class Debouncer:
    """Passes a device's change on once it held for `settle` seconds.

    The first listing is taken as it is; after that, a serial that appears, changes
    state or disappears is reported only when the new state was seen continuously
    for `settle` seconds (times come from the caller, so this is testable)."""

    def __init__(self, settle: float = SETTLE_SECONDS) -> None:
        self.settle = settle
        self._stable: dict[str, DeviceInfo] | None = None
        self._pending: dict[str, tuple[DeviceInfo | None, float]] = {}

    def update(self, devices: list[DeviceInfo], now: float) -> list[DeviceInfo]:
        seen = {d.serial: d for d in devices}
        if self._stable is None:
            self._stable = dict(seen)
            return list(devices)
        for serial in set(seen) | set(self._stable):
            new, old = seen.get(serial), self._stable.get(serial)
            if _same(new, old):
                self._pending.pop(serial, None)
                if new is not None:  # details may fill in without a state change
                    self._stable[serial] = new
                continue
            pending = self._pending.get(serial)
            if pending is None or not _same(pending[0], new):
                self._pending[serial] = (new, now)
            elif now - pending[1] >= self.settle:
                del self._pending[serial]
                if new is None:
                    del self._stable[serial]
                else:
                    self._stable[serial] = new
        order = {d.serial: i for i, d in enumerate(devices)}
        return sorted(self._stable.values(), key=lambda d: order.get(d.serial, len(order)))

    def settling(self) -> bool:
        return bool(self._pending)


def _same(a: DeviceInfo | None, b: DeviceInfo | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.state == b.state
