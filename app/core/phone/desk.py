"""The phone desk: what the Phone page and `draftdeck devices/push/phone-packs` share.

It owns the adb connection (started on first use), the single lane of pushes (one
adb transfer at a time) and the rules both sides must agree on: which phone a
command means, what a pack argument names, that the same push is never queued
twice, that a pack being pushed is never deleted, and that recipes alone go only into
the pack already on the phone. Its calls that reach the phone block; the window runs
them off the GUI thread (polling the phones while its page is shown) and watches `queue`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import DraftDeckError, PhoneError
from app.core.infra.job_queue import JobQueue
from app.core.infra.settings import save_settings
from app.core.pack.bundle import BundleInfo
from app.core.pack.library import Library, PackEntry
from app.core.phone.adb import NO_DEVICES, Adb
from app.core.phone.destinations import (
    PARTIAL,
    Destination,
    all_destinations,
    check_root,
    default_root,
    pack_path,
)
from app.core.phone.devices import Debouncer, DeviceInfo, DeviceLister
from app.core.phone.phone_memory import EstimateModel
from app.core.phone.phone_packs import PhonePack, delete_pack, list_packs
from app.core.phone.push import PushJob
from app.core.phone.remote_fs import free_bytes


@dataclass(frozen=True)
class PhoneFolder:
    """What one destination folder on one phone holds."""

    serial: str
    root: str
    packs: list[PhonePack]
    free: int | None  # None: the folder does not exist yet (nothing pushed there)


class PhoneDesk:
    def __init__(
        self, library: Library, adb: Adb | None = None, estimate: EstimateModel | None = None
    ) -> None:
        """`estimate`: one model's memory need under a recipe (measure/ram_estimate's
        estimate_model, handed in by the window and the command line: phone code may
        not import measure); without it pushes do not check the phone's RAM."""
        self.library = library
        self.estimate = estimate
        self._adb = adb
        self._lister: DeviceLister | None = None
        self._debouncer = Debouncer()
        self._lock = threading.Lock()  # the duplicate check and the submit are one step
        self.queue: JobQueue[PushJob] = JobQueue(1, "adb")

    @property
    def adb(self) -> Adb:
        if self._adb is None:  # the port comes from the environment when first needed
            self._adb = Adb()
        return self._adb

    # -- phones -------------------------------------------------------------------------

    def devices(self) -> list[DeviceInfo]:
        """Attached phones, ready ones first (a ready phone's details are asked once)."""
        if self._lister is None:
            self._lister = DeviceLister(self.adb)
        return self._lister.list()

    def poll_devices(self) -> list[DeviceInfo]:
        """The phones as a window shows them, polled again and again: a change shows once it
        has lasted (adb flaps offline/absent/device on a replug). One poll at a time."""
        return self._debouncer.update(self.devices(), time.monotonic())

    def choose_device(self, serial: str | None) -> DeviceInfo:
        """The ready phone a command means: the one named, else the only one attached."""
        devices = self.devices()
        if serial:
            device = next((d for d in devices if d.serial == serial), None)
            if device is None:
                raise PhoneError(f"No phone {serial} is attached (see `draftdeck devices`).")
        else:
            ready = [d for d in devices if d.ready]
            if not devices:
                raise PhoneError(NO_DEVICES, "no_device")
            if not ready:
                raise PhoneError(f"{devices[0].serial}: {devices[0].guidance}", devices[0].state)
            if len(ready) > 1:
                names = ", ".join(d.serial for d in ready)
                raise PhoneError(
                    f"Several phones are attached ({names}): choose one with --serial."
                )
            device = ready[0]
        if not device.ready:
            raise PhoneError(f"{device.serial} is {device.state}: {device.guidance}", device.state)
        return device

    # -- destinations -------------------------------------------------------------------

    def destinations(self) -> list[Destination]:
        return all_destinations(self.library.settings.phone_destinations)

    @staticmethod
    def destination(text: str | None) -> str:
        """The folder a command names, checked; the first preset when none is named
        (an empty name is refused, not taken as "none")."""
        return default_root() if text is None else check_root(text)

    def add_destination(self, text: str) -> str:
        """List a folder the user typed among the destinations and make it the one the
        window shows. The checked folder; PhoneError if unusable, OSError if the settings
        could not be saved (they still hold it for this session)."""
        root = check_root(text)
        if root not in self.library.settings.phone_destinations:
            self.library.settings.phone_destinations.append(root)
        self.choose_destination(root)
        return root

    def choose_destination(self, root: str) -> None:
        """Make `root` the folder the window shows (OSError if not saved)."""
        self.library.settings.phone_root = root
        save_settings(self.library.settings)

    # -- packs --------------------------------------------------------------------------

    def library_packs(self, entries: Sequence[PackEntry] | None = None) -> dict[str, BundleInfo]:
        """The library's readable packs by name (of `entries`, else read now)."""
        read = self.library.scan() if entries is None else entries
        return {e.name: e.info for e in read if e.info is not None}

    def resolve_pack(self, text: str) -> Path:
        """A pack folder, or the name of a library pack, as the pack folder."""
        found = self.library.pack_named(text)
        if found is not None:
            return found
        raise PhoneError(f"{text} is neither a pack folder nor the name of a pack in the library.")

    def read_folder(
        self, serial: str, root: str, library: Mapping[str, BundleInfo] | None = None
    ) -> PhoneFolder:
        """The packs in `root` on the phone, compared with `library` (default: the
        library as it is now), and the free space there."""
        phone = self.adb.phone(serial)
        known = self.library_packs() if library is None else library
        packs = list_packs(phone, root, known, self.estimate)
        try:
            free: int | None = free_bytes(phone, root)
        except PhoneError:  # the folder does not exist yet: nothing pushed there
            free = None
        return PhoneFolder(serial, root, packs, free)

    # -- pushing ------------------------------------------------------------------------

    def push(
        self,
        serial: str,
        pack: Path,
        root: str,
        recipe_only: bool = False,
        draft: Path | None = None,
        partner: Path | None = None,
        after: PushJob | None = None,
    ) -> PushJob:
        """Queue a push; the same push (pack, phone, folder, recipes or all, the draft it
        links) already queued or running is returned instead of being queued twice.
        `draft`: the draft the target's config.json on the phone names (see pair_link);
        `partner`: the target a draft goes with (counted in the memory check); `after`:
        the draft's push, which must arrive first."""
        with self._lock:
            job = self._twin(serial, pack, root, recipe_only, draft)
            if job is None:
                job = PushJob(
                    self.adb,
                    serial,
                    pack,
                    root,
                    recipe_only,
                    draft=draft,
                    partner=partner,
                    estimate=self.estimate,
                    find_pack=self._library_pack,
                    after=after,
                )
                self.queue.submit(job)
            return job

    def push_pair(
        self, serial: str, target: Path, draft: Path, root: str, recipe_only: bool = False
    ) -> tuple[PushJob, PushJob]:
        """Push a draft, then its target linked to it (one lane: in that order, so the
        target's link resolves once it is installed; a target whose draft did not
        arrive is not pushed)."""
        first = self.push(serial, draft, root, recipe_only, partner=target)
        return first, self.push(serial, target, root, recipe_only, draft=draft, after=first)

    def _library_pack(self, name: str) -> Path | None:
        """A library pack of that name (a draft a kept link names), or None."""
        try:
            found = self.library.pack_named(name)
        except DraftDeckError:  # two packs of that name: which one is unknown
            return None
        return found if found is not None and found.name == name else None

    def retry(self, job: PushJob) -> PushJob:
        """Push a finished job again (files already verified on the phone are skipped);
        the twin already under way, if another push of the same took its place."""
        with self._lock:
            if not job.is_finished():
                return job
            s = job.status()
            twin = self._twin(s.serial, job.pack, job.root, s.recipe_only, job.draft)
            if twin is not None:
                return twin
            self.queue.submit(job)
            return job

    def _twin(
        self, serial: str, pack: Path, root: str, recipe_only: bool, draft: Path | None
    ) -> PushJob | None:
        for job in self.queue.jobs:
            s = job.status()
            if (
                not job.is_finished()
                and s.serial == serial
                and job.pack == pack
                and job.root == root
                and s.recipe_only == recipe_only
                and job.draft == draft
            ):
                return job
        return None

    def clear_finished(self) -> None:
        self.queue.forget([job for job in self.queue.jobs if job.is_finished()])

    def shutdown(self, timeout: float | None = None, stop_adb: bool = False) -> None:
        """Stop pushes (they resume next time: verified files are skipped); with
        `stop_adb` (the window quitting), also the adb server if we started it. The
        command line leaves it running, as adb itself does, for the next command."""
        self.queue.shutdown(timeout)
        if stop_adb and self._adb is not None:
            self._adb.stop_own_server()

    # -- deleting -----------------------------------------------------------------------

    def check_delete(self, serial: str, root: str, name: str) -> None:
        """PhoneError (code "in_use") if the pack `name` in `root` is being pushed:
        deleting it would pull the floor from under the push."""
        base = pack_path(root, name.removesuffix(PARTIAL))
        for job in self.queue.jobs:
            s = job.status()
            if (
                not job.is_finished()
                and s.serial == serial
                and s.dest.removesuffix(PARTIAL) == base
            ):
                raise PhoneError(
                    f"{name} is being pushed to {self.adb.name_of(serial)}. "
                    "Cancel that push first.",
                    "in_use",
                )

    def delete(self, serial: str, root: str, name: str) -> None:
        """Remove a pack (or an interrupted `.partial` one) from the phone, unless it is
        being pushed (checked again here: a push may have started since)."""
        self.check_delete(serial, root, name)
        delete_pack(self.adb.phone(serial), root, name)


def device_hint(devices: list[DeviceInfo], selected: DeviceInfo | None) -> str:
    """What to do before a phone can be used ("" when the selected one is ready)."""
    if not devices:
        return NO_DEVICES
    if selected is not None and not selected.ready:
        return f"{selected.title} is {selected.state}. {selected.guidance}"
    return ""


def recipes_refusal(device: DeviceInfo, pack: str, root: str, listed: PhoneFolder | None) -> str:
    """Why the recipes of the library's `pack` cannot go to `root` on `device` now ("" if
    they can): recipes alone are only ever written into the pack already there, so the
    folder's listing (`listed`, None before one was read) must hold it."""
    if listed is None or (listed.serial, listed.root) != (device.serial, root):
        return f"Reading {root} on {device.title}…"
    if not any(p.name == pack for p in listed.packs):
        return (
            f"{pack} is not on {device.title} in {root}: push the whole pack "
            "once, then its recipes alone."
        )
    return ""
