"""Tuning: which recipe settings to measure, and what the measurements say.

A sweep is the cartesian product of the chosen values. Each setting is measured with
interleaved plain/speculative pairs over a few fixed prompts (app/engine/client/tune_runner.py)
and summarised like `draftdeck bench`: uplift is the median of within-pair ratios, so a
noisy machine's drift cancels, and it carries the 95 % interval of that median
(`uplift_low`, `uplift_high`: distribution-free, from order statistics; see
app/core/measure/intervals.py). Speculation "pays off" only when that interval's lower end is
above 1.

Plain decoding depends only on the target's settings, so the plain runs of every row
that shares them are pooled into one baseline (`baseline_tok_s`, the same for those
rows). The uplift is not that baseline divided into `spec_tok_s`: it is the median of
the per-pair ratios, and is labelled so.

The best is the setting with the highest uplift (among those that pay off, if any do),
unless others are equal to it within
noise (each one's median lies inside the other's 95 % interval, and they pay off
alike): then the cheapest of those (shortest draft, fewest threads) is named and the
tie is said. Merely overlapping intervals are too lax a test for a tie (two intervals
can overlap while their medians differ clearly); they only mark the leading candidates
that are measured again (`leading`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from app.core.infra.jsonfile import atomic_write_json, atomic_write_text, read_json_object
from app.core.infra.paths import app_dirs
from app.core.measure.intervals import MedianInterval, overlaps
from app.core.measure.metrics import break_even_acceptance
from app.core.pack.files import DRAFT_RECIPE, installed_source
from app.core.recipe.files import TARGET_CONFIG, read_recipe, run_recipes
from app.core.recipe.schema import FIELDS, physical_cores

TUNE_SCHEMA_VERSION = 2
# Swept setting fields -> (which recipe, key). Only fields a plan sweeps are applied.
RECIPE_KEYS = {
    "draft_length": ("target", "draft_predict_length"),
    "draft_threads": ("draft", "thread_num"),
    "draft_precision": ("draft", "precision"),
    "draft_memory": ("draft", "memory"),
    "target_threads": ("target", "thread_num"),
}
_PLAN_FIELDS = {
    "draft_length": "draft_lengths",
    "draft_threads": "draft_threads",
    "draft_precision": "draft_precisions",
    "draft_memory": "draft_memories",
    "target_threads": "target_threads",
}

DEFAULT_PROMPTS = (
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "def fibonacci(n):\n    # Return the n-th Fibonacci number iteratively.\n",
    "Question: Why is the sky blue? Answer in three sentences.",
)


@dataclass(frozen=True)
class Setting:
    draft_length: int
    draft_threads: int
    draft_precision: str
    draft_memory: str
    target_threads: int

    def label(self) -> str:
        return (
            f"d={self.draft_length} draft {self.draft_threads}t {self.draft_precision}/"
            f"{self.draft_memory} target {self.target_threads}t"
        )

    def target_key(self) -> tuple[int]:
        """What plain decoding depends on (the target's settings; nothing of the draft)."""
        return (self.target_threads,)

    def cost(self) -> tuple[int, int, int]:
        """Orders equal-within-noise settings: shorter draft, fewer threads first."""
        return (
            self.draft_length,
            self.draft_threads + self.target_threads,
            self.draft_threads,
        )

    def target_config(self) -> dict[str, Any]:
        return {"draft_predict_length": self.draft_length, "thread_num": self.target_threads}

    def draft_config(self) -> dict[str, Any]:
        return {
            "thread_num": self.draft_threads,
            "precision": self.draft_precision,
            "memory": self.draft_memory,
        }


@dataclass(frozen=True)
class SweepPlan:
    draft_lengths: tuple[int, ...] = (1, 2, 3, 4)
    draft_threads: tuple[int, ...] = (1,)
    draft_precisions: tuple[str, ...] = ("low",)
    draft_memories: tuple[str, ...] = ("low",)
    target_threads: tuple[int, ...] = (1,)
    prompts: tuple[str, ...] = DEFAULT_PROMPTS
    tokens: int = 96
    repeats: int = 1  # the fewest rounds (one pair per prompt each) a setting gets
    # A run repeats its generation until it has decoded this long (set from the warm-up).
    min_run_seconds: float = 0.5
    # More rounds until the uplift's 95 % interval is within +-this fraction of it…
    target_half_width: float = 0.05
    # …or this many seconds were spent on the setting, or max_repeats rounds ran.
    budget_seconds: float = 20.0
    max_repeats: int = 12

    def settings(self) -> list[Setting]:
        return [
            Setting(*values)
            for values in itertools.product(
                self.draft_lengths,
                self.draft_threads,
                self.draft_precisions,
                self.draft_memories,
                self.target_threads,
            )
        ]

    @property
    def min_rounds(self) -> int:
        """Rounds before stopping is considered: enough pairs for a 95 % interval."""
        return max(self.repeats, -(-MIN_PAIRS // max(len(self.prompts), 1)))

    @property
    def pairs_per_setting(self) -> int:
        """Pairs each setting gets at least (more while its interval is wide)."""
        return self.min_rounds * len(self.prompts)

    def swept_fields(self) -> tuple[str, ...]:
        """The Setting fields this plan varies; only these are ever applied."""
        return tuple(f for f, plan in _PLAN_FIELDS.items() if len(set(getattr(self, plan))) > 1)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SweepPlan:
        fields = cls.__dataclass_fields__
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in fields
        }
        return cls(**values)


def runs_dir() -> Path:
    """Where saved tuning runs live (JSON + CSV), so the Tune page can reopen them."""
    return app_dirs().data / "tune-runs"


def new_run_path(draft: Path) -> Path:
    """Where a run of this draft, starting now, is saved by default."""
    return runs_dir() / f"{time.strftime('%Y%m%d-%H%M%S')}-{draft.name}.json"


@dataclass
class SettingResult:
    setting: Setting
    summary: dict[str, Any]  # the `draftdeck bench --json` keys

    @property
    def uplift(self) -> float:
        return float(self.summary.get("uplift") or 0.0)

    @property
    def interval(self) -> MedianInterval:
        """The uplift's 95 % interval (a saved run from before intervals: its spread)."""
        s = self.summary
        spread = s.get("uplift_spread") or [self.uplift, self.uplift]
        low = s.get("uplift_low", spread[0])
        high = s.get("uplift_high", spread[1])
        level = s.get("uplift_interval_level")
        return MedianInterval(
            self.uplift,
            float(low if low is not None else self.uplift),
            float(high if high is not None else self.uplift),
            float(level) if level is not None else 0.0,
            len(s.get("pair_ratios") or []) or int(s.get("runs") or 0),
        )

    @property
    def pays_off(self) -> bool:
        return self.interval.excludes(1.0)

    def row(self, pooled_baseline: float | None = None, pooled_runs: int = 0) -> dict[str, Any]:
        """The figures shown and saved; `pooled_baseline` is the plain tok/s of every row
        sharing this target setting (pooled_baselines), else this row's own."""
        s = self.summary
        c = s.get("cost_ratio")
        interval = self.interval
        own_runs = len(s.get("baseline_runs_tok_s") or []) or int(s.get("runs") or 0)
        return {
            **asdict(self.setting),
            "spec_tok_s": s.get("spec_tok_s"),
            "baseline_tok_s": pooled_baseline if pooled_baseline else s.get("baseline_tok_s"),
            "baseline_runs": pooled_runs if pooled_baseline else own_runs,
            "uplift": s.get("uplift"),
            "uplift_low": interval.low if s.get("uplift") is not None else None,
            "uplift_high": interval.high if s.get("uplift") is not None else None,
            "uplift_interval_level": s.get("uplift_interval_level"),
            "pairs": interval.n,
            "repeats": s.get("repeats"),
            "interval_target_met": s.get("interval_target_met"),
            "seconds": s.get("seconds"),
            "spec_cv": s.get("spec_cv"),
            "baseline_cv": s.get("baseline_cv"),
            "remeasured": bool(s.get("remeasured")),
            "acceptance": s.get("acceptance"),
            "mean_accepted_length": s.get("mean_accepted_length"),
            "cost_ratio": c,
            "predicted_speedup": s.get("predicted_speedup"),
            "break_even_acceptance": (
                break_even_acceptance(self.setting.draft_length, c) if c else None
            ),
            "lossless": s.get("lossless"),
            "verify_agreement": (s.get("verify_agreement") or {}).get("agreement"),
        }


MIN_PAIRS = 6  # the fewest pairs whose ratios give a 95 % interval for their median


def pooled_baselines(results: list[SettingResult]) -> dict[tuple[int], tuple[float, int]]:
    """Per target setting: the median plain tok/s of all plain runs of the rows sharing
    it, and how many runs that is."""
    runs: dict[tuple[int], list[float]] = {}
    for r in results:
        rates = r.summary.get("baseline_runs_tok_s")
        if rates is None and r.summary.get("baseline_tok_s"):
            rates = [r.summary["baseline_tok_s"]]  # a run saved before pooling
        runs.setdefault(r.setting.target_key(), []).extend(rates or [])
    return {key: (statistics.median(v), len(v)) for key, v in runs.items() if v}


def rows(results: list[SettingResult]) -> list[dict[str, Any]]:
    """Every result's row, each with its target setting's pooled baseline."""
    pooled = pooled_baselines(results)
    out = []
    for r in results:
        baseline, n = pooled.get(r.setting.target_key(), (None, 0))
        out.append(r.row(baseline, n))
    return out


def _top(results: list[SettingResult]) -> SettingResult | None:
    return max(results, key=lambda r: r.uplift, default=None)


def _same_within_noise(a: MedianInterval, b: MedianInterval) -> bool:
    return a.low <= b.median <= a.high and b.low <= a.median <= b.high


def equal_within_noise(results: list[SettingResult]) -> list[SettingResult]:
    """The highest-uplift setting and every other one the noise cannot tell from it:
    each median inside the other's interval, paying off (or not) alike. Cheapest first.
    When any setting pays off (interval above 1), only those compete: a higher median
    whose interval reaches below 1 does not outrank a setting that surely gains."""
    paying = [r for r in results if r.pays_off]
    results = paying or results
    top = _top(results)
    if top is None:
        return []
    tied = [
        r
        for r in results
        if r is top or (_same_within_noise(r.interval, top.interval) and r.pays_off == top.pays_off)
    ]
    return sorted(tied, key=lambda r: (r.setting.cost(), -r.uplift))


def leading(results: list[SettingResult]) -> list[SettingResult]:
    """Candidates to re-measure before naming a best: the top one and all whose
    interval overlaps its interval."""
    top = _top(results)
    if top is None:
        return []
    return [r for r in results if r is top or overlaps(r.interval, top.interval)]


def best_result(results: list[SettingResult]) -> SettingResult | None:
    """The cheapest of the settings equal within noise to the highest uplift."""
    tied = equal_within_noise(results)
    return tied[0] if tied else None


def pays_off(results: list[SettingResult]) -> bool:
    """The best's 95 % interval lies above 1."""
    best = best_result(results)
    return best is not None and best.pays_off


def _interval_text(result: SettingResult) -> str:
    i = result.interval
    level = "95 %" if i.met_level else f"{i.level:.0%} (too few pairs for 95 %)"
    return f"{level} interval {i.low:.2f}-{i.high:.2f}x"


def _tie_text(results: list[SettingResult]) -> str:
    tied = equal_within_noise(results)
    if len(tied) < 2:
        return ""
    others = ", ".join(f"d={r.setting.draft_length}" for r in tied[1:])
    return (
        f" {others} measured the same within noise; the cheaper "
        f"(shorter draft, fewer threads) is named."
    )


def verdict_sentence(results: list[SettingResult]) -> str:
    """What to tell the user, honestly."""
    best = best_result(results)
    if best is None:
        return "Nothing was measured."
    row = best.row()
    if pays_off(results):
        return (
            f"Speculation pays off: best {best.setting.label()} runs {best.uplift:.2f}x "
            f"plain decoding ({_interval_text(best)}, above 1; "
            f"acceptance {row['acceptance']:.2f})." + _tie_text(results) + _verify_limit(best)
        )
    c, acceptance = row["cost_ratio"], row["acceptance"]
    need = row["break_even_acceptance"]
    if c is not None and c >= 0.9:
        why = (
            f"the draft costs about as much as the target (c = {c:.2f}), so even perfect "
            "acceptance cannot win"
        )
    elif need is not None and acceptance is not None and acceptance < need:
        why = (
            f"acceptance {acceptance:.2f} is below the {need:.2f} needed to gain anything "
            f"at c = {c:.2f}"
        )
    elif best.uplift > 1.0:
        why = "no setting beat plain decoding by more than the noise"
    else:
        why = "no setting beat plain decoding"
    return (
        f"Speculation does not pay for this pair: {why}. Best uplift {best.uplift:.2f}x "
        f"({_interval_text(best)}, not above 1)." + _verify_limit(best)
    )


def _verify_limit(result: SettingResult) -> str:
    """A sentence when the recipe's verify, not the draft, holds acceptance down."""
    if result.summary.get("acceptance_limited_by_verify"):
        return " " + str(result.summary["verify_note"])
    return ""


def host_facts() -> dict[str, Any]:
    """What a result depends on, recorded with it."""
    try:
        mnn_version = metadata.version("mnn")
    except metadata.PackageNotFoundError:
        mnn_version = None
    return {
        "cpu": _cpu_model(),
        "physical_cores": physical_cores(),
        "logical_cores": psutil.cpu_count(logical=True),
        "ram_bytes": psutil.virtual_memory().total,
        "os": platform.platform(),
        "python": platform.python_version(),
        "mnn": mnn_version,
    }


def _cpu_model() -> str:
    """The CPU's name as the OS reports it ("AMD Ryzen 7 7840U …", "Apple M2 Pro")."""
    if sys.platform == "darwin":
        name = _darwin_cpu_model()
    elif sys.platform == "win32":
        name = _windows_cpu_model()
    else:
        name = _linux_cpu_model()
    return name or platform.processor() or platform.machine()


def _linux_cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return ""


def _darwin_cpu_model() -> str:
    # An app started from the Finder may not have /usr/sbin on its PATH.
    sysctl = "/usr/sbin/sysctl" if Path("/usr/sbin/sysctl").exists() else "sysctl"
    try:
        done = subprocess.run(
            [sysctl, "-n", "machdep.cpu.brand_string"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _windows_cpu_model() -> str:
    if sys.platform == "win32":  # winreg exists only there
        import winreg

        key_path = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0"
        try:
            with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, key_path) as key:
                value, _kind = winreg.QueryValueEx(key, "ProcessorNameString")
        except OSError:
            return ""
        return str(value).strip()
    return ""


@dataclass
class TuneRun:
    target: str
    draft: str
    plan: SweepPlan
    results: list[SettingResult] = field(default_factory=list)
    host: dict[str, Any] = field(default_factory=dict)
    packs: dict[str, Any] = field(default_factory=dict)  # source revisions, recipes
    started: str = ""
    cancelled: bool = False
    # Set when the pair cannot gain on this MNN and was measured anyway (forced).
    cannot_pay: str | None = None

    @property
    def pays_off(self) -> bool:
        return self.cannot_pay is None and pays_off(self.results)

    def verdict(self) -> str:
        """The verdict sentence; for a pair that cannot gain, why, before any figure."""
        best = best_result(self.results)
        if self.cannot_pay is None or best is None:
            return verdict_sentence(self.results)
        reason = self.cannot_pay[:1].upper() + self.cannot_pay[1:]
        return (
            f"{reason}. Rejected draft tokens cannot be taken out of the target's state, "
            "so it is verified one token at a time; the measured uplift (best "
            f"{best.uplift:.2f}x) is not a recipe to apply."
        )

    def to_json(self) -> dict[str, Any]:
        best = best_result(self.results)
        return {
            "schema": TUNE_SCHEMA_VERSION,
            "target": self.target,
            "draft": self.draft,
            "plan": self.plan.to_json(),
            "host": self.host,
            "packs": self.packs,
            "started": self.started,
            "cancelled": self.cancelled,
            "results": [
                {**row, "summary": r.summary}
                for row, r in zip(rows(self.results), self.results, strict=True)
            ],
            "best": (
                {**rows(self.results)[self.results.index(best)], "label": best.setting.label()}
                if best
                else None
            ),
            "equal_within_noise": [r.setting.label() for r in equal_within_noise(self.results)],
            "pays_off": self.pays_off,
            "verdict": self.verdict(),
            "cannot_pay": self.cannot_pay,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TuneRun:
        setting_keys = Setting.__dataclass_fields__
        return cls(
            target=data["target"],
            draft=data["draft"],
            plan=SweepPlan.from_json(data["plan"]),
            results=[
                SettingResult(Setting(**{k: r[k] for k in setting_keys}), r["summary"])
                for r in data["results"]
            ],
            host=data.get("host", {}),
            packs=data.get("packs", {}),
            started=data.get("started", ""),
            cancelled=bool(data.get("cancelled")),
            cannot_pay=data.get("cannot_pay"),
        )

    def csv_text(self) -> str:
        out = io.StringIO()
        table = rows(self.results)
        if table:
            writer = csv.DictWriter(out, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
        return out.getvalue()

    def save(self, path: Path) -> None:
        """`path` (JSON) plus the same results as CSV beside it."""
        atomic_write_json(path, self.to_json(), indent=2)
        atomic_write_text(path.with_suffix(".csv"), self.csv_text())

    @classmethod
    def load(cls, path: Path) -> TuneRun:
        return cls.from_json(read_json_object(path))


def recipe_defaults(target: Path, draft: Path, cores: int | None = None) -> dict[str, Any]:
    """The current recipe's values for the swept keys (MNN's defaults where unset; the
    draft's recipe over its config.json, as the engine loads it). Thread counts stay
    within the physical cores: llmexport writes 4, and on a 2-core machine the extra
    threads only compete."""
    t, d = run_recipes(target, draft)
    limit = cores or physical_cores()

    def get(data: dict[str, Any], key: str) -> Any:
        return data.get(key, FIELDS[key].default)

    return {
        "draft_length": int(get(t, "draft_predict_length")),
        "draft_threads": min(int(get(d, "thread_num")), limit),
        "draft_precision": str(get(d, "precision")),
        "draft_memory": str(get(d, "memory")),
        "target_threads": min(int(get(t, "thread_num")), limit),
    }


def plan_for(kind: str, defaults: dict[str, Any], cores: int | None = None) -> SweepPlan:
    """ "quick": draft length 1-4, everything else as the recipe has it. "thorough": draft
    length 1-8, threads up to the cores, both precisions and memory modes, two repeats."""
    keep: dict[str, Any] = {
        "draft_threads": (defaults["draft_threads"],),
        "draft_precisions": (defaults["draft_precision"],),
        "draft_memories": (defaults["draft_memory"],),
        "target_threads": (defaults["target_threads"],),
    }
    if kind == "quick":
        return SweepPlan(draft_lengths=(1, 2, 3, 4), **keep)
    threads = tuple(range(1, (cores or physical_cores()) + 1))
    return SweepPlan(
        draft_lengths=tuple(range(1, 9)),
        draft_threads=threads,
        draft_precisions=("low", "high"),
        draft_memories=("low", "normal"),
        target_threads=threads,
        repeats=2,
    )


def pack_facts(target: Path, draft: Path) -> dict[str, Any]:
    facts = {}
    for role, path, recipe in (("target", target, TARGET_CONFIG), ("draft", draft, DRAFT_RECIPE)):
        source = installed_source(path) or {}
        facts[role] = {
            "path": str(path),
            "repo": source.get("repo"),
            "revision": source.get("revision"),
            "recipe": read_recipe(path / recipe),
        }
    return facts
