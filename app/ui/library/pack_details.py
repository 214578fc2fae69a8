"""The detail panel: everything read from the selected bundle, as selectable text."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from PySide6.QtWidgets import QTextBrowser, QWidget

from app.core.infra.units import format_bytes
from app.core.pack.export_check import ExportVerdict, SavedExportCheck
from app.core.pack.library import PackEntry
from app.ui.base.scheme import colours, scheme


def _ids(ids: tuple[int, ...]) -> str:
    return " ".join(map(str, ids)) or "none"


def export_check_html(check: SavedExportCheck | None) -> str:
    """The pack's export check: verified with its figures, or not with what differs (in
    the warning colour); nothing for a pack that was never checked."""
    if check is None:
        return ""
    if check.verified:
        return f"<p><b>{escape(check.headline())}</b></p>"
    warn = f"style='color:{colours().error}'"
    if check.verdict == ExportVerdict.UNREADABLE:
        return f"<p {warn}><b>Export check unreadable:</b> {escape(check.problem)}<br>" + (
            f"<b>File:</b> {escape(str(check.file))}</p>"
        )
    differs = "".join(f"<li>{escape(reason)}</li>" for reason in check.reasons)
    return f"<p {warn}><b>Export not verified:</b> {escape(check.figures())}.</p>" + (
        f"<p><b>What differs:</b></p><ul>{differs}</ul>" if differs else ""
    )


def details_html(entry: PackEntry) -> str:
    head = f"<h3>{escape(entry.name)}</h3>"
    where = "linked folder (kept where it is)" if entry.by_reference else "library folder"
    if entry.info is None:
        error = entry.error
        problem = escape(error.problem) if error else "unknown problem"
        file = escape(str(error.path)) if error else ""
        return (
            f"{head}<p><b>Status: cannot be used.</b></p>"
            f"<p><b>Problem:</b> {problem}<br><b>File:</b> {file}</p>"
            f"<p><b>Location:</b> {escape(str(entry.path))} ({where})</p>"
        )
    info = entry.info
    tok = info.tokenizer
    attention = info.attention + (
        ", graph has LinearAttention ops" if info.linear_attention else ""
    )
    rows = [
        ("Status", "OK"),
        ("Suited for", info.role),
        ("Model type", info.family_words),
        ("Attention", attention),
        ("Hidden size", str(info.hidden_size)),
        ("Layers", str(info.layers)),
        ("Vocabulary rows", f"{info.vocab_size:,}" if info.vocab_size is not None else "unknown"),
        ("Quantization", info.quantization),
        ("Context window", info.context.describe()),
        ("Parameters (est.)", f"{info.params_estimate / 1e6:,.1f} M"),
        ("Tokenizer", f"{tok.file} ({tok.type}, {format_bytes(tok.size_bytes)})"),
        ("Tokenizer sha256", tok.sha256),
        ("Special ids", _ids(tok.special_ids)),
        ("Stop ids", _ids(tok.stop_ids)),
        ("Prefix ids", _ids(tok.prefix_ids)),
        (
            "Chat template",
            f"{info.chat.source}, sha256 {info.chat.sha256}"
            + (f"; {info.chat.problem}" if info.chat.problem else ""),
        ),
        *([("Turn markers", bare.message)] if (bare := info.turn_markers) else []),
        ("Visual parts", "yes" if info.visual else "no"),
        ("Recipe files", ", ".join(info.recipe_files) or "none"),
        ("Size on disk", format_bytes(info.size_bytes)),
        ("Location", f"{info.path} ({where})"),
        *info.export_format.rows(),
    ]
    table = "".join(f"<tr><td><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>" for k, v in rows)
    files = "".join(
        f"<tr><td>{escape(f.name)}</td><td align='right'>{format_bytes(f.size)}</td></tr>"
        for f in info.files
    )
    return (
        f"{head}{export_check_html(entry.export_check)}"
        f"<table cellspacing='0' cellpadding='3'>{table}</table>"
        f"<h4>Files</h4><table cellspacing='0' cellpadding='2'>{files}</table>"
    )


class PackDetails(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("details")
        self.setOpenLinks(False)
        self._html: Callable[[], str] = lambda: ""  # what is shown, made in today's colours
        scheme().changed.connect(self._redraw)
        self.show_entry(None)

    def _show(self, html: Callable[[], str]) -> None:
        self._html = html
        self._redraw()

    def _redraw(self) -> None:
        self.setHtml(self._html())

    def show_empty_library(self, root: Path) -> None:
        self._show(
            lambda: (
                "<h3>No packs yet</h3>"
                "<p>Drop a pack folder or a zipped pack anywhere on this window, or use "
                "<b>File → Add Folder…</b> (kept where it is) or <b>File → Import Zip…</b> "
                "(unpacked into the library).</p>"
                f"<p>Library folder: {escape(str(root))}</p>"
            )
        )

    def show_entry(self, entry: PackEntry | None) -> None:
        if entry is None:
            self._show(lambda: "<p>Select a pack to see what was read from its bundle.</p>")
        else:
            self._show(lambda: details_html(entry))
