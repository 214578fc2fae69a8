"""How quickly does a generation stop when asked? (floor: 200 ms)

The tests only check that a stop ends a generation as "cancelled"; how fast it does so
depends on the machine and is measured here, on the fixture qwen3 pair (noisy draft,
d = 3, one thread each), in two ways per run:
- engine: the worker process, from `cancel()` right after the first tokens to the final
  event arriving in the client;
- chat: the Chat page offscreen, from the Stop (Escape) in a streaming reply to the
  page being ready again.

    .venv/bin/python benchmarks/cancel_latency.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
RECIPE = {"memory": "normal", "thread_num": 1}
FLOOR_MS = 200.0


def _summary(name: str, millis: list[float]) -> str:
    ordered = sorted(millis)
    return (
        f"{name}: median {statistics.median(ordered):.1f} ms, max {ordered[-1]:.1f} ms "
        f"over {len(ordered)} stops   floor < {FLOOR_MS:.0f} ms "
        f"({'ok' if ordered[-1] < FLOOR_MS else 'OVER'})"
    )


def engine_stops(runs: int) -> list[float]:
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import Done, Generate, Load, Reset, Rounds

    millis = []
    with EngineClient() as client:
        client.run(
            Load(
                target=str(FIXTURES / "qwen3-target"),
                draft=str(FIXTURES / "qwen3-draft-noisy"),
                target_config=RECIPE,
                draft_config=RECIPE,
                draft_length=3,
            ),
            timeout=60,
        )
        for _ in range(runs):
            client.run(Reset())
            asked: list[float] = []

            def on_event(_event: Rounds, asked: list[float] = asked) -> None:
                if not asked:
                    asked.append(time.perf_counter())
                    client.cancel()

            request = client.send(
                Generate(prompt="Go on forever.", max_tokens=1000000, ignore_stop=True)
            )
            done = client.wait(request, on_event, timeout=120)
            assert isinstance(done, Done) and done.stopped_by == "cancelled", done
            millis.append((time.perf_counter() - asked[0]) * 1000)
    return millis


def chat_stops(runs: int) -> list[float]:
    from PySide6.QtWidgets import QApplication

    from app.ui.base.engine_bridge import GENERATING, READY
    from app.ui.shell.application import create_main_window
    from benchmarks.gui_probes import spin_until

    home = Path(tempfile.mkdtemp(prefix="draftdeck-cancel-bench-"))
    os.environ["DRAFTDECK_HOME"] = str(home)
    library = home / "data" / "packs"
    for name, recipe in (("qwen3-target", "config.json"), ("qwen3-draft-noisy", "config_cpu.json")):
        shutil.copytree(FIXTURES / name, library / name)
        path = library / name / recipe
        data = json.loads(path.read_text())
        data.update(RECIPE)
        path.write_text(json.dumps(data, indent=4))

    _app = QApplication.instance() or QApplication(sys.argv)  # kept alive for the run
    window = create_main_window()
    window.show()
    window.show_page("pair")
    window.pair_page.choose(library / "qwen3-target", library / "qwen3-draft-noisy")
    window.show_page("chat")
    page = window.chat_page
    page.max_tokens.setValue(20_000)

    spin_until(lambda: page.bridge.state == READY)
    millis = []
    for _ in range(runs):
        page.new_chat()
        spin_until(lambda: page.bridge.state == READY)
        page.input.setPlainText("Write forever.")
        page.send()
        spin_until(
            lambda: (
                page.bridge.state == GENERATING and len(page.transcript.messages[-1].answer) > 20
            )
        )
        started = time.perf_counter()
        page.stop()  # what Escape does
        spin_until(lambda: page.bridge.state == READY)
        millis.append((time.perf_counter() - started) * 1000)
    window.engine.shutdown()
    window._closing_anyway = True
    window.close()
    shutil.rmtree(home, ignore_errors=True)
    return millis


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(_summary("engine cancel", engine_stops(args.runs)))
    print(_summary("chat stop", chat_stops(args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
