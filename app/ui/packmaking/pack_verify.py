"""The Make Pack dialog's last step: prove the export against its source
(app/engine/client/export_verify.py) on an engine worker of its own, record the result
beside the pack (export_check.json) and in its model card, and show the figures. A check
that is cancelled or cannot run is recorded too, as not verified and why: the pack is
never moved into place as if it had not been checked.

A worker of its own: the window's engine holds the chat's pair, which a check must not
unload. Cancel stops the torch side (its process group) and kills this worker.
"""

from __future__ import annotations

import html
import math
import threading
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.infra.errors import FileError
from app.core.pack.export_check import agreement_text
from app.core.packmaking.card import CardFacts
from app.core.packmaking.export_env import ExportEnv
from app.core.packmaking.export_process import StreamedProcess
from app.core.packmaking.make import write_card_only
from app.core.packmaking.verify_result import (
    COULD_NOT_RUN,
    FAITHFUL_FLOOR,
    INTERRUPTED,
    ExportCheck,
    save_check,
    unfinished_check,
)
from app.engine.client.engine_client import EngineClient
from app.engine.client.export_verify import VerifyOptions, verify_export
from app.ui.base import background
from app.ui.base.scheme import colours
from app.ui.packmaking.job_dialog import problem_words


def check_html(check: ExportCheck) -> str:
    """The verdict, the two figures per memory setting, and what differs."""
    colour = "" if check.verified else f' style="color:{colours().error}"'
    rows = "".join(
        f"<tr><td>{html.escape(r.memory)}</td><td>{agreement_text(r.faithful)}</td>"
        f"<td>{agreement_text(r.cost)}</td>"
        f"<td>{_diff(r.max_abs_diff)}</td><td>{r.non_finite}</td></tr>"
        for r in check.runs
    )
    reasons = "".join(f"<li>{html.escape(reason)}</li>" for reason in check.reasons)
    return (
        f"<h3{colour}>{html.escape(check.verdict.capitalize())}</h3>"
        f"<p>{html.escape(check.quantization)}; checked in {check.seconds:.0f} s. "
        "<b>Export faithful</b>: top-1 agreement with the source quantized as the export "
        f"quantizes it (at least {FAITHFUL_FLOOR} at memory normal for a good export). "
        "<b>Quantization cost</b>: agreement with the source as it is.</p>"
        '<table cellpadding="4"><tr><th align="left">Memory</th><th>Export faithful</th>'
        "<th>Quantization cost</th><th>Largest logit difference</th>"
        f"<th>Non-finite positions</th></tr>{rows}</table>"
        + (f"<p><b>What differs</b></p><ul>{reasons}</ul>" if reasons else "")
    )


def _diff(value: float) -> str:
    return "not finite" if not math.isfinite(value) else f"{value:.3g}"


def record(pack: Path, check: ExportCheck) -> str:
    """export_check.json, then the model card (its verification section is read from
    export_check.json); a problem, or ""."""
    save_check(pack, check)
    try:
        write_card_only(pack, CardFacts(), force=False)
    except FileError as exc:
        return f"The model card was not written: {exc.problem}\nFile: {exc.path}"
    return ""


class VerifyStep(QObject):
    progress = Signal(str)
    # pack, the figures as HTML (or ""), what went wrong (or ""), whether it was verified
    finished = Signal(object, str, str, bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._process: StreamedProcess | None = None
        self._client: EngineClient | None = None
        self._cancelled = False

    def running(self) -> bool:
        return background.is_running(self, "verify")

    def start(
        self,
        env: ExportEnv,
        pack: Path,
        source: Path,
        trust_remote_code: bool = False,
        recorded_as: Path | None = None,
    ) -> None:
        """Check `pack` against `source` (whose own code runs only if trusted); the record
        names the pack `recorded_as` (where it moves next), if given."""
        with self._lock:
            self._process, self._client, self._cancelled = StreamedProcess(), None, False
        process, say = self._process, background.speaker(self, self.progress.emit)
        options = VerifyOptions(trust_remote_code=trust_remote_code)
        named = recorded_as or pack

        def work() -> tuple[ExportCheck, str]:
            with EngineClient() as client:
                with self._lock:
                    self._client = client
                self._stop_if_cancelled()
                check = verify_export(client, env, pack, source, say, options, process)
            self._stop_if_cancelled()  # a kill that came while the worker started did nothing
            return check, record(pack, replace(check, pack=str(named)))

        background.run(
            self,
            "verify",
            work,
            on_done=lambda answer: self._on_done(pack, answer[0], answer[1], named, source),
            on_error=lambda error: self._on_error(pack, error, named, source),
        )

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            process, client = self._process, self._client
        if process is not None:
            process.cancel()
        if client is not None:
            client.kill()  # the pack's side: a forced-logits run has no cancel of its own

    def _stop_if_cancelled(self) -> None:
        with self._lock:
            if self._cancelled:
                raise _Cancelled

    def _on_done(
        self, pack: Path, check: ExportCheck, problem: str, named: Path, source: Path
    ) -> None:
        if self._cancelled:  # cancelled as the check ended: the user's word holds
            self._on_error(pack, _Cancelled(), named, source)
        else:
            self.finished.emit(pack, check_html(check), problem, check.verified)

    def _on_error(self, pack: Path, error: Exception, named: Path, source: Path) -> None:
        if self._cancelled:
            words, why = "Verification cancelled.", INTERRUPTED  # recorded as interrupted
        elif isinstance(error, FileError):
            words, why = problem_words(error), COULD_NOT_RUN
        else:
            words, why = f"The check could not run: {error}", COULD_NOT_RUN
        try:
            save_check(pack, unfinished_check(named, source, why))
        except OSError as exc:
            words += f" (not recorded beside the pack: {exc})"
        self.finished.emit(pack, "", words, False)


class _Cancelled(Exception):
    """The user cancelled the verification."""
