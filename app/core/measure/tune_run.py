"""A tuning run as saved: the plan, the results, and the host and packs they depend on.

Runs live in `runs_dir()` as JSON with the same rows as CSV beside it, so the Tune page
can reopen and compare them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from app.core.infra.errors import BadValueError
from app.core.infra.jsonfile import atomic_write_json, atomic_write_text, read_json_object
from app.core.infra.paths import app_dirs
from app.core.measure.intervals import TIMES
from app.core.measure.tune_plan import Setting, SweepPlan, sampling_text
from app.core.measure.tune_results import (
    SettingResult,
    best_result,
    equal_within_noise,
    pays_off,
    recipe_sampler_text,
    rows,
    verdict_sentence,
)
from app.core.pack.files import installed_source
from app.core.recipe.files import TARGET_CONFIG, draft_recipe_path, read_recipe
from app.core.recipe.schema import FIELDS, physical_cores

TUNE_SCHEMA_VERSION = 2


def runs_dir() -> Path:
    """Where saved tuning runs live (JSON + CSV), so the Tune page can reopen them."""
    return app_dirs().data / "tune-runs"


def new_run_path(draft: Path) -> Path:
    """Where a run of this draft, starting now, is saved by default."""
    return runs_dir() / f"{time.strftime('%Y%m%d-%H%M%S')}-{draft.name}.json"


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
    # The swept keys as the recipes ran at the start (tune_plan.recipe_defaults): what
    # the run's "current recipe" is, and what a later edit makes stale. None: a run
    # saved before it was kept.
    as_run: dict[str, Any] | None = None

    def applied_fields(self) -> tuple[str, ...]:
        """The Setting fields Apply Best writes: those measured other than as run."""
        return self.plan.set_fields(self.as_run)

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
            f"{best.uplift:.2f}{TIMES}) is not a recipe to apply."
        )

    def sampler_text(self) -> str:
        """Which sampler was measured (a run saved before sampling: greedy); greedy,
        whether the target's recipe verified exactly and how many settings' outputs
        differed from plain decoding."""
        recipe = (self.packs.get("target") or {}).get("recipe")
        memory = FIELDS["memory"].default
        exact = None if not isinstance(recipe, dict) else recipe.get("memory", memory) != "low"
        text = sampling_text(self.plan, recipe_sampler_text(self.results), exact)
        compared = [r.summary.get("lossless") for r in self.results]
        compared = [same for same in compared if same is not None]
        if self.plan.sample or not compared:
            return text
        differed = compared.count(False)
        if not differed:
            return f"{text} It equalled plain output in every pair of every setting."
        return f"{text} It differed in {differed} of {len(compared)} settings."

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
            "recipe_as_run": self.as_run,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TuneRun:
        setting_keys = Setting.__dataclass_fields__
        return cls(
            target=data["target"],
            draft=data["draft"],
            plan=SweepPlan.from_json(data["plan"]),
            results=[
                # A run saved before a field existed has its default (temperature).
                SettingResult(Setting(**{k: r[k] for k in setting_keys if k in r}), r["summary"])
                for r in data["results"]
            ],
            host=data.get("host", {}),
            packs=data.get("packs", {}),
            started=data.get("started", ""),
            cancelled=bool(data.get("cancelled")),
            cannot_pay=data.get("cannot_pay"),
            as_run=data.get("recipe_as_run"),
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
        """The run saved at `path`; a file that is not one (a field missing or of the
        wrong kind) raises BadValueError naming it, as unreadable JSON raises its own."""
        data = read_json_object(path)
        try:
            return cls.from_json(data)
        except KeyError as exc:
            problem = f"not a saved tuning run: “{exc.args[0]}” is missing"
            raise BadValueError(path, problem) from exc
        except (TypeError, ValueError, AttributeError) as exc:
            problem = "not a saved tuning run: a field holds the wrong kind of value"
            raise BadValueError(path, problem) from exc


def pack_facts(target: Path, draft: Path) -> dict[str, Any]:
    facts = {}
    recipes = (target / TARGET_CONFIG, draft_recipe_path(draft))  # what each ran with
    for role, path, recipe in (("target", target, recipes[0]), ("draft", draft, recipes[1])):
        source = installed_source(path) or {}
        facts[role] = {
            "path": str(path),
            "repo": source.get("repo"),
            "revision": source.get("revision"),
            "recipe": read_recipe(recipe),
        }
    return facts
