"""Adaptive drafting vs fixed draft lengths vs plain decoding, as ratios in one run.

Each pair is loaded once per configuration (plain; fixed d = 1..D; adaptive up to D),
all kept loaded, and every round decodes the same mixed prompts (prose, code, Chinese,
a chat turn) with each configuration in an order that alternates round by round. A
configuration's figure is its decode tok/s over all measured rounds (at least --rounds,
and until each configuration decoded --seconds): tokens over
seconds, so adaptive drafting's probes count wherever they fall (a median of rounds
would leave out the rounds that probe). The adaptive controller lives as long as its
loaded pair, as in Chat: it learns over the warm-up round and keeps learning. The best
fixed length is chosen on the even rounds and compared with adaptive drafting on the
odd ones (chosen and compared on the same rounds, the best of lengths within noise of
each other reads faster than it is).

Floors, quiet / with `--load 4` (four processes burning CPU in random 0.1-1.5 s bursts
beside the run, a busy desktop's load: bursty_load.py):

- bench pair (benchmarks/.cache/pair):  adaptive / best fixed      1.0 (aim 1.1) / 0.95
- the fixtures' fast pair (12-layer target, 2-layer draft), the Chat benchmark's:
                                          adaptive / best fixed      0.95 / 0.95
- pairs that do not pay (fixtures' noisy and independent drafts; the bench target as
   its own draft, as costly as its target): adaptive / plain         0.95 / 0.9
- an identical draft (fixture), which cannot pay: standing aside,
                                          adaptive / plain           0.95 / 0.95
- the controller's own cost per round vs the bench target's plain step  below 0.02

    make bench-pair                      # once: builds .venv-fixtures and the pair
    .venv/bin/python benchmarks/adaptive.py [--rounds 8] [--seconds 8] [--tokens 96] [-D 6]
        [--only noisy identical] [--load 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.measure.drafting_control import DraftingControl  # noqa: E402
from app.core.measure.step_times import RoundMeasure  # noqa: E402
from app.core.recipe.drafting_settings import DraftingSettings  # noqa: E402
from app.engine.protocol import Generate, Mode  # noqa: E402
from app.engine.worker.server import claim_stdout  # noqa: E402
from app.engine.worker.session import Session  # noqa: E402
from benchmarks.bursty_load import BurstyLoad  # noqa: E402

PAIR = ROOT / "benchmarks" / ".cache" / "pair"
FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
PROMPTS = (
    "Write a short story about a lighthouse keeper who befriends a storm.",
    "def merge_sorted(a: list[int], b: list[int]) -> list[int]:\n    # merge two sorted lists",
    "请用三句话介绍一下长城的历史。",
    "Thanks! Now can you summarise what we talked about in two sentences?",
)
FIXED, ADAPTIVE = DraftingSettings(adaptive=False), DraftingSettings(adaptive=True)
PLAIN = "plain"
# Per pair: the figure its floor is on, and the floor quiet and under bursty load.
FLOORS: dict[str, tuple[str, float, float]] = {
    "bench": ("adaptive_vs_best_fixed", 1.0, 0.95),
    "fast": ("adaptive_vs_best_fixed", 0.95, 0.95),
    "noisy": ("adaptive_vs_plain", 0.95, 0.9),
    "independent": ("adaptive_vs_plain", 0.95, 0.9),
    "as-costly": ("adaptive_vs_plain", 0.95, 0.9),
    "identical": ("adaptive_vs_plain", 0.95, 0.95),
}


@dataclass
class Config:
    name: str
    session: Session
    mode: Mode
    drafting: DraftingSettings | None
    runs: list[tuple[int, float]] = field(default_factory=list)  # per round: tokens, s

    @property
    def seconds(self) -> float:
        return sum(took for _, took in self.runs)

    def rate(self, half: int | None = None) -> float:
        """Tokens over seconds of every measured round, or of the even (0) or odd (1)."""
        runs = self.runs if half is None else self.runs[half::2]
        return sum(n for n, _ in runs) / sum(took for _, took in runs)

    def decode(self, prompt: str, tokens: int) -> tuple[int, float]:
        """Decode tokens and seconds of one prompt's reply."""
        self.session.reset()
        request = Generate(
            prompt=prompt,
            max_tokens=tokens,
            mode=self.mode,
            ignore_stop=True,
            drafting=self.drafting,
        )
        stats = self.session.generate(request, lambda event: None, lambda: False).stats
        return stats.tokens - stats.first_tokens, stats.decode_seconds


def run_round(configs: list[Config], tokens: int, r: int) -> None:
    """Round `r`: each prompt decoded by every configuration in turn, the order reversed
    prompt by prompt, so the configurations run side by side in time: a burst of another
    process's load lands on several of them, not on one configuration's whole round."""
    produced = {c.name: 0 for c in configs}
    seconds = {c.name: 0.0 for c in configs}
    for i, prompt in enumerate(PROMPTS):
        for config in configs if (r * len(PROMPTS) + i) % 2 == 0 else reversed(configs):
            n, took = config.decode(prompt, tokens)
            produced[config.name] += n
            seconds[config.name] += took
    for config in configs:
        config.runs.append((produced[config.name], seconds[config.name]))


def _configs(target: Path, draft: Path, longest: int) -> list[Config]:
    recipe = {"memory": "normal", "precision": "low", "thread_num": 1}

    def loaded(d: int) -> Session:
        session = Session()
        session.load(str(target), str(draft), dict(recipe), dict(recipe), d)
        return session

    configs = [Config(PLAIN, loaded(1), Mode.PLAIN, None)]
    configs += [Config(f"d={d}", loaded(d), Mode.SPECULATIVE, FIXED) for d in range(1, longest + 1)]
    configs.append(Config("adaptive", loaded(longest), Mode.SPECULATIVE, ADAPTIVE))
    return configs


def bench_pair(
    target: Path, draft: Path, longest: int, rounds: int, tokens: int, seconds: float
) -> dict[str, Any]:
    configs = _configs(target, draft, longest)
    run_round(configs, tokens, 0)  # warm-up; the adaptive controller learns here too
    for config in configs:
        config.runs.clear()
    r = 0
    # At least `rounds` rounds, and until each configuration decoded `seconds`: a
    # fixture pair decodes a round in 40 ms, where a probe of adaptive drafting every
    # 2,000 tokens falls in one round of five or none, and a hiccup weighs a lot.
    while r < rounds or r % 2 or min(c.seconds for c in configs) < seconds:
        run_round(configs, tokens, r)
        r += 1
    rates = {c.name: c.rate() for c in configs}
    # The best fixed length is chosen on the even rounds and compared on the odd ones:
    # the best of six lengths within noise of each other, chosen and compared on the
    # same rounds, reads a few percent faster than it is.
    by_name = {c.name: c for c in configs}
    fixed = [c for c in configs if c.name.startswith("d=")]
    best = max(fixed, key=lambda c: c.rate(0)).name
    adaptive = by_name["adaptive"]
    control = adaptive.session.control
    for config in configs:
        config.session.unload()
    return {
        "tok_s": rates,
        "best_fixed": best,
        "adaptive_vs_best_fixed": adaptive.rate(1) / by_name[best].rate(1),
        "adaptive_vs_plain": rates["adaptive"] / rates[PLAIN],
        "best_fixed_vs_plain": rates[best] / rates[PLAIN],
        "asides": control.asides if control else 0,
        "rounds": r,
    }


def controller_cost(plain_step_seconds: float, longest: int, rounds: int = 20000) -> float:
    """Seconds the controller takes per round (plan, take and more per token, record)
    over one plain decode step of the bench target."""
    control = DraftingControl(longest)
    started = time.perf_counter()
    for i in range(rounds):
        cap = control.plan()
        taken = 0
        for position in range(cap):
            if not control.take(position, 0.3 + 0.6 * ((i + position) % 7) / 7):
                break
            taken += 1
            if not control.more(position):
                break
        accepted = min(taken, i % (taken + 1)) if taken else 0
        control.record(RoundMeasure(taken, accepted, accepted + 1, 0.005, 0.004 * taken, taken))
    per_round = (time.perf_counter() - started) / rounds
    return per_round / plain_step_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=96, help="tokens per prompt")
    parser.add_argument(
        "--seconds", type=float, default=8.0, help="decode seconds each configuration gets at least"
    )
    parser.add_argument("-D", type=int, default=6, help="the longest draft length")
    parser.add_argument("--only", nargs="*", help="these pairs only (bench, noisy, ...)")
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        help="processes beside the run burning CPU in random 0.1-1.5 s bursts (a busy desktop)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (PAIR / "target" / "llm.mnn").is_file():
        sys.exit(f"no bench pair in {PAIR}: run `make bench-pair` first")
    out = claim_stdout()  # MNN prints to C stdout in this process
    started = time.perf_counter()
    pairs = {
        "bench": (PAIR / "target", PAIR / "draft"),
        "noisy": (FIXTURES / "qwen3-target", FIXTURES / "qwen3-draft-noisy"),
        "independent": (FIXTURES / "qwen3-target", FIXTURES / "qwen3-draft-independent"),
        "as-costly": (PAIR / "target", PAIR / "target"),
        "identical": (FIXTURES / "qwen3-target", FIXTURES / "qwen3-draft-identical"),
        "fast": (FIXTURES / "fast-target", FIXTURES / "fast-draft"),
    }
    result: dict[str, Any] = {}
    if args.only:
        pairs = {name: pair for name, pair in pairs.items() if name in args.only}
    load = BurstyLoad(args.load)
    with load:
        for name, (target, draft) in pairs.items():
            result[name] = bench_pair(target, draft, args.D, args.rounds, args.tokens, args.seconds)
            print(f"{name}: {json.dumps(result[name])}", file=sys.stderr, flush=True)
    result["load"] = load.describe()
    if "bench" in result:
        plain_step = 1.0 / result["bench"]["tok_s"][PLAIN]
        result["controller_cost"] = controller_cost(plain_step, args.D)
    result["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(result, indent=2), file=out)
        return 0
    print(f"this computer: {result['load']}", file=out)
    for name, (figure, quiet, loaded) in FLOORS.items():
        if name not in result:
            continue
        pair = result[name]
        floor = loaded if args.load else quiet
        words = figure.replace("_vs_", " / ").replace("_", " ")
        print(
            f"{name}: {words} {pair[figure]:.3f}   floor {floor} "
            f"({'met' if pair[figure] >= floor else 'NOT MET'}); best fixed ({pair['best_fixed']}) "
            f"/ plain {pair['best_fixed_vs_plain']:.3f}, stepped aside {pair['asides']} times "
            f"in {pair['rounds']} rounds",
            file=out,
        )
    if "controller_cost" in result:
        print(
            f"controller per round / plain step: {result['controller_cost']:.4f}   below 0.02",
            file=out,
        )
    for name in pairs:
        rates = ", ".join(f"{k} {v:.0f}" for k, v in result[name]["tok_s"].items())
        print(f"   {name} tok/s: {rates}", file=out)
    print(f"({result['seconds']:.0f} s)", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
