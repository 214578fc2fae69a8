"""Where things are, for tests in any folder under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent  # the checkout
HELPERS = TESTS / "helpers"
FIXTURES = TESTS / "fixtures" / "bundles"
