"""The Make Pack dialog's last step: prove the export against its source
(app/engine/client/export_verify.py) on an engine worker of its own, record the result
beside the pack (export_check.json) and in its model card, and show the figures.

A worker of its own: the window's engine holds the chat's pair, which a check must not
unload. Cancel stops the torch side (its process group) and kills this worker.
"""

from __future__ import annotations

import html
import math
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.infra.errors import FileError
from app.core.pack.export_check import agreement_text
from app.core.packmaking.card import CardFacts
from app.core.packmaking.export_env import ExportEnv
from app.core.packmaking.export_process import StreamedProcess
from app.core.packmaking.make import write_card_only
from app.core.packmaking.verify_result import FAITHFUL_FLOOR, ExportCheck, save_check
from app.engine.client.engine_client import EngineClient
from app.engine.client.export_verify import verify_export
from app.ui.base import background
from app.ui.base.labels import WARNING_COLOUR
from app.ui.packmaking.job_dialog import Messenger, problem_words


def check_html(check: ExportCheck) -> str:
    """The verdict, the two figures per memory setting, and what differs."""
    colour = "" if check.verified else f' style="color:{WARNING_COLOUR}"'
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
        self._lines = Messenger()
        self._lines.line.connect(self.progress)

    def running(self) -> bool:
        return background.is_running(self, "verify")

    def start(self, env: ExportEnv, pack: Path, source: Path) -> None:
        with self._lock:
            self._process, self._client, self._cancelled = StreamedProcess(), None, False
        process, say = self._process, self._lines.line.emit

        def work() -> tuple[ExportCheck, str]:
            with EngineClient() as client:
                with self._lock:
                    self._client = client
                self._stop_if_cancelled()
                check = verify_export(client, env, pack, source, say, process=process)
            self._stop_if_cancelled()  # a kill that came while the worker started did nothing
            return check, record(pack, check)

        background.run(
            self,
            "verify",
            work,
            on_done=lambda answer: self._on_done(pack, *answer),
            on_error=lambda error: self._on_error(pack, error),
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

    def _on_done(self, pack: Path, check: ExportCheck, problem: str) -> None:
        if self._cancelled:  # cancelled as the check ended: the user's word holds
            self._on_error(pack, _Cancelled())
        else:
            self.finished.emit(pack, check_html(check), problem, check.verified)

    def _on_error(self, pack: Path, error: Exception) -> None:
        if self._cancelled:
            self.finished.emit(pack, "", "Verification cancelled.", False)
        elif isinstance(error, FileError):
            self.finished.emit(pack, "", problem_words(error), False)
        else:
            self.finished.emit(pack, "", f"The check could not run: {error}", False)


class _Cancelled(Exception):
    """The user cancelled the verification."""
