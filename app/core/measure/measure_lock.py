"""One measurement at a time, across DraftDeck's processes.

Two measurements at once slow each other: `draftdeck measure-pack` beside `draftdeck
tune` wrote a runtime_config.json whose figures were 72 % off. So every measurement
(tune, measure-pack, bench, the window's Tune page and Measure Pack) holds this lock
while it runs, and a second one is refused at once, naming the holder. The lock is the
OS's (infra/file_lock.py): it goes with its process, so a killed or crashed measurement
leaves none, and the record it left of itself is simply written over by the next.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import CodedError, FileError
from app.core.infra.file_lock import lock_if_free
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.infra.paths import app_dirs

log = logging.getLogger("draftdeck.measure")
LOCK_FILE = "measuring.lock"  # in the cache folder
HOLDER_FILE = "measuring.json"  # beside it: who holds it (Windows cannot read a locked byte)


@dataclass(frozen=True)
class Holder:
    pid: int
    since: float  # time.time() when it took the lock
    what: str  # "draftdeck tune", "the window's Tune page"

    def words(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid}, since {since}: {self.what}"


class MeasuringElsewhere(CodedError):
    code = "measuring_elsewhere"

    def __init__(self, holder: Holder | None) -> None:
        who = f" ({holder.words()})" if holder is not None else ""
        super().__init__(
            f"another DraftDeck is measuring{who}; two measurements at once slow each other "
            "and both figures would be wrong: start again when it has ended"
        )
        self.holder = holder


def lock_path() -> Path:
    return app_dirs().cache / LOCK_FILE


def _holder() -> Holder | None:
    """Who holds the lock, by the record it wrote (None: none readable yet)."""
    try:
        record = read_json_object(lock_path().with_name(HOLDER_FILE))
        return Holder(int(record["pid"]), float(record["since"]), str(record["what"]))
    except (FileError, KeyError, TypeError, ValueError):
        return None


@contextmanager
def measuring(what: str) -> Iterator[None]:
    """Hold the measurement lock while the block runs; MeasuringElsewhere at once when
    another holds it. A cache folder that cannot hold the lock lets the measurement go
    ahead unguarded (said in the log): else no measurement could ever run there."""
    record = lock_path().with_name(HOLDER_FILE)
    with ExitStack() as stack:
        try:
            taken = stack.enter_context(lock_if_free(lock_path()))
        except OSError as exc:
            log.warning("measuring without the measurement lock %s: %s", lock_path(), exc)
            yield
            return
        if not taken:
            raise MeasuringElsewhere(_holder())
        try:
            atomic_write_json(record, {"pid": os.getpid(), "since": time.time(), "what": what})
        except OSError as exc:
            log.warning("could not say who measures in %s: %s", record, exc)
        # Removed while still held: a record left behind would name a holder long gone.
        stack.callback(_forget, record)
        yield


def _forget(record: Path) -> None:
    try:
        record.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("could not remove %s: %s", record, exc)


def measuring_elsewhere() -> str:
    """Who else measures now, in words ("" when no one): checked before a start in the
    window, so it can say so before a model loads."""
    try:
        with lock_if_free(lock_path()) as taken:
            if taken:
                return ""
    except OSError:
        return ""
    holder = _holder()
    return "another DraftDeck is measuring" + (f" ({holder.words()})" if holder else "")
