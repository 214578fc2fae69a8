"""The busy states, in an order that keeps each one's set-up short: a library with
fixture packs and a broken one, then a blocked pair, a broken pair, an edited recipe,
a download, a reply being generated, a sweep, a push."""

from __future__ import annotations

from time import monotonic

from gallery.chat import shoot_chat
from gallery.downloads import shoot_downloads
from gallery.library_pair import shoot_blocked_pair, shoot_broken_pair, shoot_library
from gallery.phone import shoot_phone
from gallery.recipes import shoot_recipes
from gallery.stage import Scene
from gallery.tune import shoot_tune

BUILDERS = (
    shoot_library,
    shoot_blocked_pair,
    shoot_broken_pair,
    shoot_recipes,
    shoot_downloads,
    shoot_chat,
    shoot_tune,
    shoot_phone,
)


def shoot_busy(scene: Scene) -> None:
    for build in BUILDERS:
        started = monotonic()
        build(scene)
        print(f"{build.__name__}: {monotonic() - started:.1f} s")
