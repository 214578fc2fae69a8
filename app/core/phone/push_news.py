"""What a push's change of state means to someone watching the phone lane: what to tell
them, and which folder on the phone it changed (so a listing of it is read again)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from app.core.infra.units import counted
from app.core.phone.push import CANCELLED, DONE, FAILED, FINISHED, PUSHING, PushStatus


@dataclass(frozen=True)
class PushNews:
    text: str
    problem: bool  # a failure: said longer than a message


def push_news(status: PushStatus, phone: str) -> PushNews | None:
    """What a push that reached `status.state` says (None: its queue row says enough);
    `phone` is what the user calls the phone."""
    what = f"recipes of {status.pack}" if status.recipe_only else status.pack
    if status.state == DONE:
        text = (
            f"{status.pack} is on {phone}: {counted(len(status.pushed), 'file')} pushed, "
            f"{len(status.skipped)} already there, all verified"
        )
        if status.link and status.link_ok:
            text += f"; its config.json names the draft at {status.link}"
        # A tight fit or a draft missing on the phone is said at length, not in passing.
        return PushNews(
            " ".join([text + ".", *status.notes]) if status.notes else text, bool(status.notes)
        )
    if status.state == CANCELLED:  # replaces "Pushing …", which is no longer true
        return PushNews(f"Push of {what} to {phone} cancelled: {status.error}", False)
    if status.state == FAILED:
        return PushNews(f"Push of {what} to {phone} failed: {status.error}", True)
    return None


def changed_folder(status: PushStatus) -> tuple[str, str] | None:
    """(serial, root) of the phone folder a push changed on reaching `status.state`: a
    pack push makes its .partial folder when it starts sending and installs (or leaves)
    it when it ends; recipes alone change it only at the end."""
    if status.state in FINISHED or (status.state == PUSHING and not status.recipe_only):
        return status.serial, posixpath.dirname(status.dest)
    return None
