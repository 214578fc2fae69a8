"""tests/slow_tests.txt names tests that exist: a renamed or removed test would silently
join the fast tier's run (or leave the list stale)."""

from __future__ import annotations

import re

from tests.conftest import SLOW_TESTS
from tests.helpers.paths import ROOT
from tests.helpers.script_modules import load_script

slow_tests = load_script(ROOT / "scripts" / "slow_tests.py").slow_tests


def test_every_listed_slow_test_exists() -> None:
    missing = []
    for node in sorted(SLOW_TESTS):
        path, name = node.split("::", 1)
        function = re.sub(r"\[.*\]$", "", name.split("::")[-1])
        source = ROOT / path
        if not source.is_file() or f"def {function}(" not in source.read_text(encoding="utf-8"):
            missing.append(node)
    assert not missing, f"tests/slow_tests.txt names tests that are gone: {missing}"


def test_the_list_is_made_from_the_durations_pytest_prints() -> None:
    durations = """
============================= slowest durations =============================
0.60s call     tests/a.py::test_one
0.50s setup    tests/a.py::test_one
0.20s teardown tests/a.py::test_one
0.90s call     tests/b.py::test_two[x-1]
3.00s call     tests/c.py::Test::test_three
"""
    assert slow_tests(durations, 1.0) == ["tests/a.py::test_one", "tests/c.py::Test::test_three"]
