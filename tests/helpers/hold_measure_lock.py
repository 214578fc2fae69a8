"""Hold DraftDeck's measurement lock in a process of its own until stdin closes:
`python -m tests.helpers.hold_measure_lock WHAT` prints "held" once it has it."""

from __future__ import annotations

import sys

from app.core.measure.measure_lock import measuring


def main() -> None:
    with measuring(sys.argv[1]):
        print("held", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
