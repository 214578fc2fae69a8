"""Tuning: which recipe settings to measure, and what the measurements say.

A sweep is the cartesian product of the chosen values. Each setting is measured with
interleaved plain/speculative pairs over a few fixed prompts (app/engine/tune_runner.py)
and summarised like `draftdeck bench`; uplift is the median of within-pair ratios, so a
noisy machine's drift cancels. Speculation "pays off" only when the best setting's
uplift stays above 1 by more than the machine's noise.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from app.core.hub.install import installed_source
from app.core.jsonfile import atomic_write_json, atomic_write_text, read_json_object
from app.core.metrics import break_even_acceptance
from app.core.paths import app_dirs
from app.core.recipe_file import DRAFT_RECIPE, TARGET_CONFIG, read_recipe, run_recipes
from app.core.recipe_schema import FIELDS, physical_cores

TUNE_SCHEMA_VERSION = 1
# Measured spread of uplift between identical runs on a 2-core machine: about 3 %.
PAYS_OFF_ABOVE = 1.03

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
    repeats: int = 1  # measured pairs per prompt and setting

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
    def pairs_per_setting(self) -> int:
        return self.repeats * len(self.prompts)

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

    def row(self) -> dict[str, Any]:
        s = self.summary
        c = s.get("cost_ratio")
        return {
            **asdict(self.setting),
            "spec_tok_s": s.get("spec_tok_s"),
            "baseline_tok_s": s.get("baseline_tok_s"),
            "uplift": s.get("uplift"),
            "uplift_low": (s.get("uplift_spread") or [None, None])[0],
            "uplift_high": (s.get("uplift_spread") or [None, None])[1],
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


def best_result(results: list[SettingResult]) -> SettingResult | None:
    return max(results, key=lambda r: r.uplift, default=None)


def pays_off(results: list[SettingResult]) -> bool:
    best = best_result(results)
    return best is not None and best.uplift > PAYS_OFF_ABOVE


def verdict_sentence(results: list[SettingResult]) -> str:
    """What to tell the user, honestly."""
    best = best_result(results)
    if best is None:
        return "Nothing was measured."
    row = best.row()
    if pays_off(results):
        return (
            f"Speculation pays off: best {best.setting.label()} runs {best.uplift:.2f}x "
            f"plain decoding (acceptance {row['acceptance']:.2f})." + _verify_limit(best)
        )
    c, acceptance = row["cost_ratio"], row["acceptance"]
    need = row["break_even_acceptance"]
    if c is not None and c >= 0.9:
        why = (
            f"the draft costs about as much as the target (c = {c:.2f}), so even perfect "
            "acceptance cannot win"
        )
    elif need is not None and acceptance is not None:
        why = (
            f"acceptance {acceptance:.2f} is below the {need:.2f} needed to gain anything "
            f"at c = {c:.2f}"
        )
    else:
        why = "no setting beat plain decoding"
    return (
        f"Speculation does not pay for this pair: {why}. Best uplift {best.uplift:.2f}x."
        + _verify_limit(best)
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
            "results": [{**r.row(), "summary": r.summary} for r in self.results],
            "best": {**best.row(), "label": best.setting.label()} if best else None,
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
        rows = [r.row() for r in self.results]
        if rows:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
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
