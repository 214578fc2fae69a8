"""A pack's chat template is a stranger's program: each hostile one fails alone, with a
reason, within its budget; no read path (info, check, the library scan, the pair table)
breaks because of it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from app.core.infra.settings import Settings
from app.core.pack import chat_format as chat_format_module
from app.core.pack import template_budget
from app.core.pack.bundle import read_bundle
from app.core.pack.chat_format import JINJA, UNRENDERABLE, ChatFormat
from app.core.pack.compat import assess
from app.core.pack.library import Library
from app.core.pack.pair_table import PairTables
from app.core.pack.template_limits import MAX_SOURCE_CHARS
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
NESTED_LOOPS = "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}"
DOUBLING = (
    "{% set ns = namespace(x='ab') %}{% for i in range(100) %}{% set ns.x = EXPR %}"
    "{% endfor %}{{ ns.x }}"
)
HOSTILE = {
    "nested_loops": NESTED_LOOPS,
    "loops_with_no_output": NESTED_LOOPS.replace("x", ""),
    "division_by_zero": "{{ 1/0 }}",
    "self_recursive_macro": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
    "branching_macro": "{% macro m(n) %}{{ m(n+1) }}{{ m(n+1) }}{% endmacro %}{{ m(0) }}",
    "string_repeat": "{{ 'a' * 10**10 }}",
    "huge_center": "{{ 'a'|center(999999999) }}",
    "star_width": "{{ '%*d' % (999999999, 1) }}",
    "format_method_width": "{{ '{:>999999999}'.format(1) }}",
    "format_filter_width": '{{ "%999999999d"|format(1) }}',
    "ljust_method": "{{ 'a'.ljust(999999999) }}",
    "nested_ifs": "{%if 1%}" * 5000 + "x" + "{%endif%}" * 5000,
    "doubling_with_tilde": DOUBLING.replace("EXPR", "ns.x ~ ns.x"),
    "doubling_with_plus": DOUBLING.replace("EXPR", "ns.x + ns.x"),
    "replace_filter": DOUBLING.replace("EXPR", "ns.x|replace('a', 'aaaa')"),
    "replace_method": DOUBLING.replace("EXPR", "ns.x.replace('a', 'aaaa')"),
    "huge_power": "{{ (10**10) ** (10**10) }}",
    "recursive_loop": "{% for x in [1] recursive %}{% if loop.depth < 4 %}"
    "{{ loop(range(100000)) }}{% endif %}{% endfor %}",
    "tojson_indent": "{{ range(100000)|list|tojson(indent=10000) }}",
    "shared_lists": "{{ [[1] * 1000000] * 1000 }}",
    "join_separator": "{{ range(100000)|join('x' * 100000) }}",
    "too_long": "x" * (MAX_SOURCE_CHARS + 1),
}
# Each render runs in its own process, with a memory limit on Linux: a regression fails
# the test instead of hanging or swapping the suite.
SCRIPT = """
import json, resource, sys
if sys.platform.startswith("linux"):
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from app.core.pack.chat_format import JINJA, ChatFormat
fmt = ChatFormat(JINJA, sys.stdin.read(), "<|im_end|>", "", {})
print(json.dumps({"problem": fmt.problem, "digest": fmt.prompt_sha256}))
"""


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_template_fails_with_a_reason(name: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=HOSTILE[name],
        capture_output=True,
        text=True,
        timeout=120,  # a guard against a hang, not a speed limit
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["problem"].startswith(f"{UNRENDERABLE}: "), found
    assert found["digest"] is None


def test_a_template_that_refuses_the_sample_conversation_is_no_problem() -> None:
    """Gemma's refuses a system message: it works, just not for that conversation."""
    refusing = (
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
        "supported') }}{% endif %}{% for m in messages %}{{ m['content'] }}{% endfor %}"
    )
    fmt = ChatFormat(JINJA, refusing, None, "", {})
    assert fmt.problem is None and fmt.prompt_sha256 is None
    assert fmt.render(({"role": "user", "content": "Hi"},)) == "Hi"


def test_loop_controls_work_as_in_hugging_face() -> None:
    fmt = ChatFormat(
        JINJA, "{% for m in messages %}{{ m.content }}{% break %}{% endfor %}", None, "", {}
    )
    assert fmt.render(({"role": "user", "content": "a"}, {"role": "user", "content": "b"})) == "a"


def _hostile_pack(bundle_copy: Copy, name: str, dest: Path, template: str) -> Path:
    pack = bundle_copy(name, dest)
    config = json.loads((pack / "llm_config.json").read_text())
    config["jinja"]["chat_template"] = template
    (pack / "llm_config.json").write_text(json.dumps(config))
    return pack


def test_a_failed_verdict_is_kept_for_the_next_reading(
    tmp_path: Path, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = _hostile_pack(bundle_copy, "qwen3-draft-noisy", tmp_path / "p", "{{ 1/0 }} kept?")
    renders: list[str] = []
    real = template_budget.render

    def counted(source: str, context: Mapping[str, Any]) -> str:
        renders.append(source)
        return real(source, context)

    monkeypatch.setattr(chat_format_module, "render", counted)
    for _ in range(3):
        assert read_bundle(pack).chat.problem == f"{UNRENDERABLE}: division by zero"
    assert len(renders) == 1


def test_pairs_with_a_hostile_pack_say_so(
    fixture_bundle: Callable[[str], Path], tmp_path: Path, bundle_copy: Copy
) -> None:
    target = read_bundle(fixture_bundle("qwen3-target"))
    draft = read_bundle(
        _hostile_pack(bundle_copy, "qwen3-draft-noisy", tmp_path / "d", "{{ 1/0 }}")
    )
    verdict = assess(target, draft)
    reason = next(r for r in verdict.reasons if r.code == "chat_template_unrenderable")
    assert reason.severity == "warning" and not verdict.blocked
    assert "draft pack d: template could not be rendered: division by zero" in reason.message
    hostile_target = read_bundle(
        _hostile_pack(bundle_copy, "qwen3-target", tmp_path / "t", "{{ 1/0 }}")
    )
    blocked = assess(hostile_target, read_bundle(fixture_bundle("qwen3-draft-noisy")))
    assert blocked.blocked
    assert any("template could not be rendered" in r.message for r in blocked.reasons)


def test_the_library_scan_and_pair_table_keep_the_other_packs(
    tmp_path: Path, bundle_copy: Copy
) -> None:
    root = tmp_path / "packs"
    for name in ("qwen3-target", "qwen3-draft-noisy"):
        bundle_copy(name, root / name)
    _hostile_pack(bundle_copy, "qwen3-target", root / "hostile", "{{ 1/0 }}")
    lib = Library(Settings(library_dir=str(root)), lambda _: None)
    entries = lib.scan()
    assert {e.path.name for e in entries} == {"qwen3-target", "qwen3-draft-noisy", "hostile"}
    table = PairTables().build(entries)
    assert table.best is not None and table.best[0].path.name == "qwen3-target"
    hostile = next(e for e in table.targets if e.path.name == "hostile")
    cell = table.cell(hostile, next(e for e in table.drafts if e.path.name == "qwen3-draft-noisy"))
    assert cell is not None and cell.level == "blocked"


def test_info_and_check_name_the_pack_and_its_template(
    fixture_bundle: Callable[[str], Path], tmp_path: Path, bundle_copy: Copy
) -> None:
    pack = _hostile_pack(bundle_copy, "qwen3-draft-noisy", tmp_path / "hostile-pack", NESTED_LOOPS)
    info = run_cli("info", str(pack), "--json", timeout=120)
    assert info.returncode == 0, info.stderr
    data = json.loads(info.stdout)
    assert data["name"] == "hostile-pack"
    assert data["chat_template_problem"].startswith(f"{UNRENDERABLE}: it takes more than")
    words = run_cli("info", str(pack), timeout=120)
    assert words.returncode == 0 and UNRENDERABLE in words.stdout
    check = run_cli("check", str(fixture_bundle("qwen3-target")), str(pack), timeout=120)
    assert check.returncode == 0, check.stderr  # only warnings: the draft's template is unused
    assert "hostile-pack" in check.stdout and UNRENDERABLE in check.stdout
    as_target = run_cli(
        "check", str(pack), str(fixture_bundle("qwen3-draft-noisy")), "--json", timeout=120
    )
    assert as_target.returncode == 1 and "Traceback" not in as_target.stderr  # blocked
    codes = {r["code"] for r in json.loads(as_target.stdout)["reasons"]}
    assert "chat_template_unrenderable" in codes
