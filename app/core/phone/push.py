"""Push a pack (or just its recipes) to a phone, verified, resumable, never half-installed.

A whole pack is copied into `<dest>.partial/` and renamed to `<dest>` only when every
file's sha256 on the phone matches the local one, so an app scanning the folder never
sees half a pack. Files already on the phone with the right sha256 (in `<dest>` or in
a `<dest>.partial` left by an interrupted push) are not sent again: pushing again after
a pulled cable resumes, inside a large file too (large_files). Recipe files go next to
the pack under a hidden name and are renamed over the old ones once verified. Only
folders DraftDeck made are changed, and in them only the files it put there (see
pack_marker).
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.core.infra.errors import DraftDeckError, PhoneError
from app.core.infra.job_queue import TrackedJob
from app.core.infra.transfer_stats import TransferFigures, disk_margin
from app.core.infra.units import format_bytes
from app.core.infra.words import Word
from app.core.pack.files import CONFIG
from app.core.pack.sendable import SendableFile
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Adb, Phone
from app.core.phone.destinations import PARTIAL, pack_path
from app.core.phone.large_files import LARGE_FILE, Resume, find_resumes, send_large, temp_copy
from app.core.phone.local_files import local_sha256, pack_files
from app.core.phone.pack_marker import TEMP_SUFFIX, claim, merge_into, write_marker
from app.core.phone.pair_link import with_phone_config
from app.core.phone.pair_push import FindPack, PairRequest, after_push, draft_lost, plan_push
from app.core.phone.phone_memory import EstimateModel
from app.core.phone.sync_send import PushCancelled, send_file

log = logging.getLogger("draftdeck.phone")


class PushState(Word):
    QUEUED = "queued"
    CHECKING = "checking"
    PUSHING = "pushing"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Module names for the states, as the pages and tests import them.
QUEUED, CHECKING, PUSHING = PushState.QUEUED, PushState.CHECKING, PushState.PUSHING
DONE, FAILED, CANCELLED = PushState.DONE, PushState.FAILED, PushState.CANCELLED
FINISHED = (DONE, FAILED, CANCELLED)
STOPPED = "Stopped. Verified files stay on the phone; pushing again resumes."


@dataclass(frozen=True)
class PushStatus(TransferFigures):
    pack: str
    serial: str
    dest: str
    recipe_only: bool
    state: PushState = QUEUED
    done_bytes: int = 0
    total_bytes: int = 0  # what has to be sent (skipped files and kept starts not counted)
    resumed_bytes: int = 0  # of files cut short earlier, what was on the phone intact
    files_total: int = 0
    current_file: str = ""
    file_done: int = 0
    file_size: int = 0
    speed: float = 0.0
    error: str = ""
    error_code: str = ""
    pushed: tuple[str, ...] = field(default=())
    skipped: tuple[str, ...] = field(default=())
    verified: tuple[str, ...] = field(default=())
    seconds: float = 0.0
    link: str = ""  # the draft_config_path the phone's config.json names ("" for none)
    link_ok: bool | None = None  # it is a file on the phone (None: not checked, no link)
    memory: str = ""  # the phone's RAM against what the pack (or pair) needs
    notes: tuple[str, ...] = field(default=())  # warnings: tight memory, a missing draft

    @property
    def fraction(self) -> float:
        # A push with nothing to send (all verified already) is complete, not at 0 %.
        return 1.0 if self.state == DONE else super().fraction

    def to_json(self) -> dict[str, object]:
        return {
            "pack": self.pack,
            "serial": self.serial,
            "dest": self.dest,
            "recipe_only": self.recipe_only,
            "state": self.state,
            "pushed": list(self.pushed),
            "skipped": list(self.skipped),
            "verified": list(self.verified),
            "bytes": self.done_bytes,
            "resumed_bytes": self.resumed_bytes,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "draft_config_path": self.link or None,
            "link_resolves": self.link_ok,
            "memory": self.memory,
            "notes": list(self.notes),
        }


class PushJob(TrackedJob[PushStatus]):
    finished_states = FINISHED

    def __init__(
        self,
        adb: Adb,
        serial: str,
        pack: Path,
        root: str,
        recipe_only: bool = False,
        margin: Callable[[int], int] = disk_margin,
        draft: Path | None = None,
        partner: Path | None = None,
        estimate: EstimateModel | None = None,
        find_pack: FindPack | None = None,
        after: PushJob | None = None,
    ) -> None:
        """`draft`: the draft pack this target's config.json on the phone names (pushed
        before it, or there already); `partner`: the target this draft is pushed with
        (its memory counts too); `estimate`: one model's memory need (no check without);
        `find_pack`: a library pack by name (the draft a kept link names); `after`: the
        push of the draft, which must have arrived for this one to go."""
        self.adb = adb
        self.pack = pack
        self.root = root
        self.draft = draft
        self.pair = PairRequest(draft, partner, estimate, find_pack)
        self.after = after
        self._margin = margin
        self._stop = False
        self._phone: Phone | None = None
        super().__init__(
            PushStatus(pack.name, serial, posixpath.join(root, pack.name), recipe_only)
        )

    # -- control and observation (any thread) -------------------------------------------

    def cancel(self) -> None:
        self._stop = True
        phone = self._phone
        if phone is not None:  # do not wait for a long command on the phone to end
            phone.abort()

    pause = cancel  # a stopped push resumes when started again

    def restart(self) -> None:
        self._stop = False
        self._meter.reset()
        with self._lock:
            s = self._status
            self._status = PushStatus(s.pack, s.serial, s.dest, s.recipe_only)

    def _cancelled(self) -> bool:
        return self._stop

    # -- the work (one worker thread) ------------------------------------------------------

    def run(self) -> PushStatus:
        """Check, push, verify, install. Never raises: the status says what happened."""
        started = time.monotonic()
        final: dict[str, object]
        try:
            self._run()
        except PushCancelled:
            final = {"state": CANCELLED, "error": STOPPED}
        except PhoneError as exc:
            if self._stop:  # the connection was closed by cancel()
                final = {"state": CANCELLED, "error": STOPPED}
            else:
                # Info, not a warning: the queue row or the command tells the user, and
                # the log keeps the adb address for a bug report.
                serial = self.status().serial
                where = f"{self.adb.name_of(serial)} ({serial})"
                log.info("push of %s to %s failed: %s", self.pack, where, exc)
                final = {"state": FAILED, "error": self._explain(exc), "error_code": exc.code}
        except DraftDeckError as exc:
            final = {"state": FAILED, "error": str(exc), "error_code": "error"}
        except Exception as exc:  # a local file vanished, a bug: a stuck "pushing" row is worse
            log.exception("push of %s failed", self.pack)
            final = {
                "state": FAILED,
                "error": f"{type(exc).__name__}: {exc}",
                "error_code": "error",
            }
        else:
            final = {"state": DONE, "current_file": ""}
        # One update, so watchers see the final state once, complete.
        self._set(**final, speed=0.0, seconds=time.monotonic() - started)
        return self.status()

    def _explain(self, exc: PhoneError) -> str:
        status = self.status()
        if exc.code != "disconnected" or status.state != PUSHING:
            return exc.message
        done = len(status.verified)
        return (
            f"{exc.message} {done} of {status.files_total} files are on the phone and "
            "verified; plug it back in and push again to copy the rest."
        )

    def _check_cancel(self) -> None:
        if self._stop:
            raise PushCancelled(self.pack.name)

    def _run(self) -> None:
        self._check_cancel()  # cancelled while it waited in the queue
        first = self.after.status() if self.after is not None else None
        if first is not None and first.state != DONE:  # a target never names a lost draft
            raise draft_lost(first.pack, first.error or first.state)
        status = self.status()
        phone = self._phone = self.adb.phone(status.serial)
        self._check_cancel()  # cancelled while the phone was being reached
        files = pack_files(self.pack, status.recipe_only)
        dest = pack_path(self.root, self.pack.name)
        self._set(state=CHECKING, files_total=len(files), dest=dest)
        plan = plan_push(phone, self.pack, self.root, dest, self.pair)
        memory = plan.fit.message if plan.fit is not None else ""
        self._set(link=plan.names or "", memory=memory, notes=plan.notes)
        with with_phone_config(files, self.pack, plan.link) as sent:
            if status.recipe_only:
                self._push_recipes(phone, sent, dest)
            else:
                self._push_pack(phone, sent, dest)
        link_ok, notes = after_push(phone, plan)
        self._set(link_ok=link_ok, notes=(*plan.notes, *notes))

    def _already_there(
        self, phone: Phone, files: Sequence[SendableFile], folders: list[str]
    ) -> list[set[str]]:
        """For each folder, the files whose copy there has the local sha256 (one
        sha256sum on the phone for all). Only files the phone has are hashed here; the
        others are hashed on the way out."""
        paths = [posixpath.join(folder, f.rel) for folder in folders for f in files]
        remote = fs.sha256_of(phone, paths)
        found: list[set[str]] = [set() for _ in folders]
        for item in files:
            theirs = [remote.get(posixpath.join(folder, item.rel)) for folder in folders]
            if any(theirs):
                self._set(current_file=item.rel)
                mine = local_sha256(item, self._cancelled)
                for same, sha in zip(found, theirs, strict=True):
                    if sha == mine:
                        same.add(item.rel)
        return found

    def _push_pack(self, phone: Phone, files: Sequence[SendableFile], dest: str) -> None:
        partial = dest + PARTIAL
        in_dest, in_partial = self._already_there(phone, files, [dest, partial])
        present = fs.existing(phone, [dest, partial])
        dest_exists, partial_exists = dest in present, partial in present
        # Refused before anything changes: a folder of that name that is not ours.
        ours_dest = claim(phone, dest, in_dest) if dest_exists else frozenset()
        ours_partial = claim(phone, partial, in_partial) if partial_exists else frozenset()
        rels = {f.rel for f in files}
        todo = [f for f in files if f.rel not in in_dest | in_partial]
        resumes = find_resumes(phone, partial, todo, self._cancelled) if partial_exists else {}
        kept = sum(r.offset for r in resumes.values())
        if not todo and dest_exists and len(in_dest) == len(files):
            if partial_exists:
                fs.remove_tree(phone, partial)  # a stale attempt of ours; the pack is complete
            self._tidy(phone, dest, files, ours_dest - rels, check=False)
            write_marker(phone, dest, self.pack.name, rels)
            everything = tuple(f.rel for f in files)
            self._set(skipped=everything, verified=everything)
            return
        needed = sum(f.size for f in todo) - kept
        free = fs.free_bytes(phone, self.root, create=True)
        if free < needed + self._margin(needed):
            raise PhoneError(
                f"Not enough space on {phone.name} in {self.root}: the pack needs "
                f"{format_bytes(needed)} (plus {format_bytes(self._margin(needed))} to spare) "
                f"and {format_bytes(free)} is free. Free some space and push again.",
                "no_space",
            )
        self._check_cancel()  # the last moment a cancel leaves the installed pack alone
        if dest_exists and not partial_exists:  # the pack is "being updated" from here on
            fs.move(phone, dest, partial)  # its marker comes along
        fs.make_dirs(
            phone, [partial, *(posixpath.dirname(posixpath.join(partial, f.rel)) for f in todo)]
        )
        # Everything either folder's marker listed stays ours to delete later.
        ours = ours_dest | ours_partial | rels
        write_marker(phone, partial, self.pack.name, ours)
        if dest_exists and partial_exists:
            merge_into(phone, dest, partial, in_dest - in_partial, ours_dest)
        in_partial |= in_dest
        verified = tuple(f.rel for f in files if f.rel in in_partial)
        self._set(
            state=PUSHING,
            total_bytes=needed,
            resumed_bytes=kept,
            skipped=verified,
            verified=verified,
        )
        for item in todo:
            # Inside .partial a file may take its name before the check: the folder is
            # not installed until every file passed (one round trip less per file).
            final = posixpath.join(partial, item.rel)
            self._send_verified(phone, item, final, early=True, resume=resumes.get(item.rel))
        self._tidy(phone, partial, files, ours - rels, check=True)
        write_marker(phone, partial, self.pack.name, rels)
        fs.move(phone, partial, dest)

    def _push_recipes(self, phone: Phone, files: Sequence[SendableFile], dest: str) -> None:
        if not fs.existing(phone, [posixpath.join(dest, CONFIG)]):
            raise PhoneError(
                f"{self.pack.name} is not on {phone.name} in {self.root}: push the whole "
                "pack once, then recipes alone.",
                "not_on_phone",
            )
        [same] = self._already_there(phone, files, [dest])
        ours = claim(phone, dest, ())  # a recipe is never written into someone else's folder
        todo = [f for f in files if f.rel not in same]
        skipped = tuple(f.rel for f in files if f.rel in same)
        self._set(
            state=PUSHING,
            total_bytes=sum(f.size for f in todo),
            skipped=skipped,
            verified=skipped,
        )
        for item in todo:
            self._send_verified(phone, item, posixpath.join(dest, item.rel))
        if not ours.issuperset(f.rel for f in todo):
            write_marker(phone, dest, self.pack.name, ours | {f.rel for f in todo})

    def _send_verified(
        self,
        phone: Phone,
        item: SendableFile,
        final: str,
        early: bool = False,
        resume: Resume | None = None,
    ) -> None:
        """Send under a hidden name, verify, and rename into place: the real name never
        holds half a file. A large file goes on from where `resume` says its copy was
        cut. With `early`, the rename goes in the same shell command as the hash and a
        bad copy is removed from its final name."""
        start = resume.offset if resume else 0
        self._set(current_file=item.rel, file_done=start, file_size=item.size)
        if item.size >= LARGE_FILE:
            remote, sha = send_large(
                phone, item, final, resume, self._margin, self._on_bytes, self._cancelled
            )
        else:
            remote = temp_copy(final)
            sha = send_file(phone, item, remote, self._on_bytes, self._cancelled)
        then = f"mv {fs.quote(remote)} {fs.quote(final)}" if early else ""
        got = fs.sha256_of(phone, [remote], then=then).get(remote)
        if got != sha:
            phone.shell(f"rm -f {fs.quote(final if early else remote)}")
            raise PhoneError(
                f"{item.rel} did not arrive intact on {phone.name} (sha256 "
                f"{(got or 'missing')[:12]}… instead of {sha[:12]}…). Push again; if it "
                "keeps failing, try another cable or USB port.",
                "verify_failed",
            )
        if not early:
            fs.move(phone, remote, final)
        with self._lock:
            s = self._status
            self._status = replace(
                s, pushed=(*s.pushed, item.rel), verified=(*s.verified, item.rel)
            )

    def _tidy(
        self,
        phone: Phone,
        folder: str,
        files: Sequence[SendableFile],
        stale: frozenset[str] | set[str],
        check: bool,
    ) -> None:
        """The phone's copy becomes exactly the pack: files of an older version (`stale`,
        listed by our marker) and our temporary copies go; files the user put there stay.
        With `check`, just before the rename: every file is there with its size (another
        app, or a delete, may have removed files verified earlier)."""
        entries = fs.list_dir(phone, folder)
        wanted = {f.rel.split("/", 1)[0] for f in files}
        old = {rel.split("/", 1)[0] for rel in stale} - wanted
        for entry in entries:
            if entry.name in old or entry.name.endswith(TEMP_SUFFIX):
                fs.remove_tree(phone, posixpath.join(folder, entry.name))
        if not check:
            return
        listing = {e.name: e.size for e in entries if not e.is_dir}
        missing = [f.rel for f in files if "/" not in f.rel and listing.get(f.rel) != f.size]
        if missing:
            raise PhoneError(
                f"{', '.join(missing)} went missing from {folder} on {phone.name} during "
                "the push; push again to copy them.",
                "verify_failed",
            )
