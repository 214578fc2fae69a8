"""``python -m tests.fake_phone ROOT``: a fake phone in a process of its own."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.fake_phone.phone import FakePhone


def main() -> None:
    """Run a phone in its own process (benchmarks: no GIL shared with the code under
    test): prints its address, serves until stdin closes."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--throttle-mbps", type=float, default=0.0)
    args = parser.parse_args()
    with FakePhone(args.root) as phone:
        phone.throttle_bytes_per_s = args.throttle_mbps * 1e6 or None
        print(phone.address, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
