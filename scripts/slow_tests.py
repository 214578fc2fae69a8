"""Write tests/slow_tests.txt from a timed run: the tests `make check` (the fast tier)
leaves out. A test is slow when its setup, call and teardown took SECONDS or more:

    .venv/bin/pytest -n 2 --durations=0 -q > durations.txt
    python scripts/slow_tests.py durations.txt [--seconds 1.0]

The list is data, not a verdict: `make test` runs every test; tests/conftest.py marks the
listed ones `slow`, so `pytest -m "not slow"` is the fast tier.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "slow_tests.txt"
DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+::\S+)$")
HEADER = """\
# Tests of {seconds:g} s or more (setup + call + teardown) in a timed run on a quiet 2-core
# machine: `make check` leaves them out (tests/conftest.py marks them slow), `make test`
# runs them. Made by scripts/slow_tests.py (its docstring says how).
"""


def slow_tests(durations: str, seconds: float) -> list[str]:
    """The node ids whose phases add up to `seconds` or more in pytest's --durations."""
    spent: defaultdict[str, float] = defaultdict(float)
    for line in durations.splitlines():
        found = DURATION.match(line.strip())
        if found:
            spent[found.group(3)] += float(found.group(1))
    return sorted(node for node, total in spent.items() if total >= seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("durations", type=Path, help="pytest's output with --durations=0")
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    nodes = slow_tests(args.durations.read_text(encoding="utf-8"), args.seconds)
    LIST.write_text(HEADER.format(seconds=args.seconds) + "".join(f"{n}\n" for n in nodes))
    print(f"{len(nodes)} slow tests in {LIST.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
