"""Is the window smooth while a chat streams thousands of tokens per second?

Drives the real Chat page offscreen on the fixture fast pair (12-layer target, 2-layer
draft) and measures, in one run:
- the main thread's event-loop stalls while generating and charting: a 5 ms timer's
  lateness, p99 and max (floors: p99 < 16 ms, max < 50 ms);
- the tok/s the chat reaches (tokens arriving at the window after the first batch, over
  the time since) vs the headless engine on the same pair and recipe, interleaved
  (floor 0.97).

    .venv/bin/python benchmarks/ui_latency.py [--tokens 3000] [--runs 3] [--fixed] [--load 4]

The floors hold on a quiet machine; `--load N` runs N processes beside it that burn CPU
in random 0.1-1.5 s bursts (bursty_load.py, a busy desktop) and says the same figures
under that load. The first line says which it was, with the load average before the run.
"""

from __future__ import annotations

import argparse
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
from benchmarks.bursty_load import BurstyLoad  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
RECIPE = {"memory": "normal", "thread_num": 1}
PROMPT = "Tell me a long story about a lighthouse keeper."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--fixed", action="store_true", help="fixed drafting (the default: adaptive drafting)"
    )
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        help="processes beside the run burning CPU in random 0.1-1.5 s bursts (a busy desktop)",
    )
    args = parser.parse_args()
    load = BurstyLoad(args.load)
    print(f"this computer: {load.describe()}; load average before the run {_load_average()}")
    with load:
        return _run(args)


def _load_average() -> str:
    """The 1-minute load average (other work on this machine), or 'unknown'."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):  # Windows has none
        return "unknown"


def _run(args: argparse.Namespace) -> int:
    home = Path(tempfile.mkdtemp(prefix="draftdeck-ui-bench-"))
    os.environ["DRAFTDECK_HOME"] = str(home)

    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.recipe.drafting_settings import DraftingSettings, write_drafting
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import ChatTurn, Generate, Load, Mode, Reset, Rounds
    from app.ui.base.engine_bridge import READY
    from app.ui.chat.chat_sampling import GREEDY_INDEX
    from app.ui.shell.application import create_main_window
    from benchmarks.gui_probes import spin_until

    library = home / "data" / "packs"
    for name, recipe in (("fast-target", "config.json"), ("fast-draft", "config_cpu.json")):
        shutil.copytree(FIXTURES / name, library / name)
        path = library / name / recipe
        import json

        data = json.loads(path.read_text())
        data.update(RECIPE)
        path.write_text(json.dumps(data, indent=4))
    # The draft pack's own drafting settings: the chat and the headless engine read them.
    write_drafting(library / "fast-draft", DraftingSettings(adaptive=not args.fixed))

    _app = QApplication(sys.argv)  # kept alive for the run
    window = create_main_window()
    window.resize(1280, 800)
    window.show()
    window.show_page("pair")
    window.pair_page.choose(library / "fast-target", library / "fast-draft")
    window.show_page("chat")
    page = window.chat_page
    page.max_tokens.setValue(args.tokens)
    # Greedy, as the headless side's request (no sampler): the same tokens, the same work.
    page.sampling.choice.setCurrentIndex(GREEDY_INDEX)

    spin_until(lambda: page.bridge.state == READY)

    lateness: list[float] = []
    clock = QElapsedTimer()
    tick = QTimer()
    tick.setInterval(5)
    last = [0.0]

    def on_tick() -> None:
        now = clock.nsecsElapsed() / 1e6
        if last[0]:
            lateness.append(max(now - last[0] - 5.0, 0.0))
        last[0] = now

    tick.timeout.connect(on_tick)

    run_max: list[float] = []  # each measured chat's longest block

    def chat_once() -> float:
        arrivals: list[tuple[float, int]] = []

        def on_rounds(event: Rounds) -> None:
            arrivals.append((time.perf_counter(), len(event.tokens)))

        page.bridge.rounds.connect(on_rounds)
        page.new_chat()
        spin_until(lambda: page.bridge.state == READY)
        page.input.setPlainText(PROMPT)
        clock.start()
        last[0] = 0.0
        before = len(lateness)
        tick.start()
        page.send()
        spin_until(
            lambda: page.bridge.state == READY and page.transcript.messages[-1].stats is not None
        )
        tick.stop()
        run_max.append(max(lateness[before:], default=0.0))
        page.bridge.rounds.disconnect(on_rounds)
        first = arrivals[0][0]
        return sum(n for _, n in arrivals[1:]) / (arrivals[-1][0] - first)

    headless = EngineClient()
    headless.run(
        Load(target=str(library / "fast-target"), draft=str(library / "fast-draft")), timeout=60
    )

    def headless_once() -> float:
        arrivals: list[tuple[float, int]] = []
        headless.run(Reset())
        headless.run(
            Generate(
                messages=(ChatTurn("user", PROMPT),),
                max_tokens=args.tokens,
                mode=Mode.SPECULATIVE,
            ),
            on_rounds=lambda e: arrivals.append((time.perf_counter(), len(e.tokens))),
        )
        return sum(n for _, n in arrivals[1:]) / (arrivals[-1][0] - arrivals[0][0])

    chat_once(), headless_once()  # warm-up
    lateness.clear()
    run_max.clear()
    ratios, chat_rates, bench_rates = [], [], []
    for i in range(args.runs):
        if i % 2 == 0:
            c, b = chat_once(), headless_once()
        else:
            b, c = headless_once(), chat_once()
        chat_rates.append(c)
        bench_rates.append(b)
        ratios.append(c / b)
    headless.close()
    window.engine.shutdown()
    window._closing_anyway = True
    window.close()
    shutil.rmtree(home, ignore_errors=True)

    lateness.sort()
    p99 = lateness[int(len(lateness) * 0.99)]
    print(
        f"event-loop lateness over {len(lateness)} ticks while streaming: "
        f"p50 {statistics.median(lateness):.2f} ms, p99 {p99:.2f} ms, "
        f"max {lateness[-1]:.2f} ms   floors: p99 < 16, max < 50"
    )
    print(f"longest block of each chat: {' '.join(f'{m:.1f}' for m in run_max)} ms")
    print(
        f"chat {statistics.median(chat_rates):.0f} tok/s vs headless "
        f"{statistics.median(bench_rates):.0f} tok/s: ratio {statistics.median(ratios):.3f} "
        f"(pairs: {' '.join(f'{r:.3f}' for r in ratios)})   floor 0.97"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
