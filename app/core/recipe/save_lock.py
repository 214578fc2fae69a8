"""One save of a recipe at a time, across DraftDeck's processes and threads.

A save checks that the file is as it was opened, writes a temporary file beside the
recipe (and one beside its .bak), then replaces the file. Two saves at once (the window
and `draftdeck recipe set`) must neither remove the temporary file of the other while it
is being written (its replace then fails: "No such file or directory") nor write over a
change the other made after this one checked. So every save holds the recipe's lock
from its check to its last replace, and a temporary file seen while holding it belongs
to no save under way: a killed save's, which the next save removes.

The lock files live in DraftDeck's cache folder, one per recipe, never in the pack: a
pack added by reference is the user's folder (copies.py). The OS lets go of a lock with
its process (infra/file_lock.py), so a killed save holds none.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from app.core.infra.file_lock import exclusive_lock
from app.core.infra.paths import app_dirs

log = logging.getLogger("draftdeck.recipe")
LOCKS = "recipe-locks"  # in the cache folder

# The locks this thread holds, each with whether it was really taken: a save inside a
# held lock (`recipe set` reads, merges and saves under it) must not wait for itself.
_this_thread = threading.local()


def lock_path(recipe: Path) -> Path:
    """The lock file of `recipe`: one per recipe file, however the folder is named
    (the folder resolved, as the temporary files sit in the real one)."""
    key = os.path.normcase(str(recipe.parent.resolve() / recipe.name))
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return app_dirs().cache / LOCKS / f"{recipe.name}-{digest}.lock"


def _held() -> dict[Path, bool]:
    held: dict[Path, bool] | None = getattr(_this_thread, "held", None)
    if held is None:
        held = _this_thread.held = {}
    return held


@contextmanager
def saving(*recipes: Path) -> Iterator[bool]:
    """Hold the save locks of `recipes`, waiting for other savers; taken in one order,
    so two saves of the same files cannot wait for each other. Yields whether all are
    held: False when a lock file cannot be made (an unwritable cache folder); the save
    goes ahead then, but must leave temporary files alone."""
    held = _held()
    all_held = True
    with ExitStack() as stack:
        for lock in sorted({lock_path(recipe) for recipe in recipes}):
            if lock not in held:
                try:
                    stack.enter_context(exclusive_lock(lock))
                    held[lock] = True
                except OSError as exc:
                    log.warning("saving without the save lock %s: %s", lock, exc)
                    held[lock] = False
                stack.callback(held.pop, lock)
            all_held = all_held and held[lock]
        yield all_held
