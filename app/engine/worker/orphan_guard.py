"""The worker ends itself when the process that started it is gone.

A CLI killed with SIGKILL (or a crashed GUI) closes the worker's pipes but cannot stop it:
a worker busy in a long request would run on, orphaned, holding its memory. A daemon
thread polls the parent and leaves with os._exit, which needs no cooperation from the
busy main thread. pymnn holds the GIL during each native call (DESIGN.md), so the exit
comes at the end of the call under way; each is one forward, not a whole reply.
PR_SET_PDEATHSIG is not used: it fires when the *thread* that started the worker ends,
and the GUI starts it from pool threads that end when idle.
"""

from __future__ import annotations

import os
import threading
import time

import psutil

POLL_SECONDS = 0.5
ORPHANED_EXIT = 3  # the exit code of a worker whose parent was gone


def start_orphan_guard(poll_seconds: float = POLL_SECONDS) -> None:
    try:
        parent = psutil.Process(os.getppid())
    except psutil.Error:  # already gone before we looked
        os._exit(ORPHANED_EXIT)
    threading.Thread(
        target=_watch, args=(parent, poll_seconds), name="orphan-guard", daemon=True
    ).start()


def _watch(parent: psutil.Process, poll_seconds: float) -> None:
    while _alive(parent):
        time.sleep(poll_seconds)
    os._exit(ORPHANED_EXIT)


def _alive(parent: psutil.Process) -> bool:
    # is_running() compares the start time too: a reused pid is not our parent. A
    # killed parent not yet reaped is a zombie: gone as well.
    try:
        return parent.is_running() and parent.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
