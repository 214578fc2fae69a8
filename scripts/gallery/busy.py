"""The busy states, in an order that keeps each one's set-up short: a library with
fixture packs and a broken one, then a blocked pair, a broken pair, an edited recipe,
a download, a reply being generated, a sweep, a push, then the Make Pack, Measure Pack
and Publish dialogs, and last what the third newcomer's walk-through changed."""

from __future__ import annotations

from time import monotonic

from gallery.chat import shoot_chat
from gallery.downloads import shoot_downloads
from gallery.library_pair import shoot_blocked_pair, shoot_broken_pair, shoot_library
from gallery.packmaking import shoot_make_pack, shoot_measure_pack, shoot_publish
from gallery.phone import shoot_phone
from gallery.recipes import shoot_recipes
from gallery.stage import Scene
from gallery.tune import shoot_tune
from gallery.walkthrough import shoot_walkthrough

BUILDERS = (
    shoot_library,
    shoot_blocked_pair,
    shoot_broken_pair,
    shoot_recipes,
    shoot_downloads,
    shoot_chat,
    shoot_tune,
    shoot_phone,
    shoot_make_pack,
    shoot_measure_pack,
    shoot_publish,
    shoot_walkthrough,
)


def builder_names() -> list[str]:
    return [build.__name__.removeprefix("shoot_") for build in BUILDERS]


def shoot_busy(scene: Scene, only: set[str] | None = None) -> None:
    """Every busy state, or only those named (`--shots`)."""
    for build in BUILDERS:
        if only is not None and build.__name__.removeprefix("shoot_") not in only:
            continue
        started = monotonic()
        build(scene)
        print(f"{build.__name__}: {monotonic() - started:.1f} s")
