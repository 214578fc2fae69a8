"""The Tune page's Apply Best and Undo Apply, with why Apply Best is off beside them.

The reason used to sit in a one-line tooltip that ran off the window, or at the end of
the verdict behind "More"; it is in the page now, next to the button, and is worked out
again whenever the page is shown: a recipe edited on the Recipes page makes the run's
comparison with "the current recipe" stale (tune_apply.stale_reason), and the note says so.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QPushButton, QWidget

from app.core.infra.errors import DraftDeckError
from app.core.measure.tune_apply import BestChanges, Snapshot, applicable, refusal_now, restore
from app.core.measure.tune_run import TuneRun
from app.ui.base.dialogs import ask, show_error
from app.ui.base.labels import wrap_to_width
from app.ui.tune import tune_phone
from app.ui.tune.tune_phone import PhoneShown

APPLY_KEYS = QKeySequence("Ctrl+Shift+A")
# A line's room even when empty; a longer reason's height is held while a run goes on
# (tune_page), so that nothing under the note moves when one starts.
NOTE_LINES = 1


def button_key(page: QWidget, keys: QKeySequence, what: str, button: QPushButton) -> None:
    """`keys` press `button` while `page` has the focus and the button is on (a key
    never does what the page has off); `what` is what Help's key list says."""
    action = QAction(button.text(), page)
    action.setShortcut(keys)
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.setStatusTip(what)
    action.triggered.connect(lambda: button.click() if button.isEnabled() else None)
    page.addAction(action)


def keys_text(keys: QKeySequence) -> str:
    """A shortcut as this platform writes it ("Ctrl+Shift+A", "⇧⌘A")."""
    return keys.toString(QKeySequence.SequenceFormat.NativeText)


class ApplyBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run: TuneRun | None = None
        self._undo: Snapshot | None = None
        self.confirm_box: QMessageBox | None = None
        self._phone: tuple[tuple[Path, Path], PhoneShown] | None = None
        self.note = wrap_to_width(QLabel())
        self.note.setObjectName("pageHint")
        self.note.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.note.setMinimumHeight(NOTE_LINES * self.note.fontMetrics().lineSpacing())
        self.apply_button = QPushButton("Apply Best")
        self.apply_button.setToolTip(
            f"Shows what it will change, then writes it ({keys_text(APPLY_KEYS)})"
        )
        self.undo_button = QPushButton("Undo Apply")
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.apply_button)
        layout.addWidget(self.undo_button)
        self.apply_button.clicked.connect(self.apply_best)
        self.undo_button.clicked.connect(self.undo_apply)
        self.show_idle()

    def _say(self, text: str) -> None:
        self.note.setText(text)

    def show_idle(self) -> None:
        """No run shown: what Apply Best will do once one is."""
        self.run = None
        self._undo = None
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        self._say(
            f"Apply Best ({keys_text(APPLY_KEYS)}) is off until a sweep has run; it shows "
            "what it would change first."
        )

    def show_running(self) -> None:
        self.run = None
        self._undo = None
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        self._say("Apply Best is off while the sweep runs.")

    def show_run(self, run: TuneRun) -> None:
        """A finished or reopened run: Apply Best on, or why it is off."""
        self.run = run
        self._undo = None
        self.undo_button.setEnabled(False)
        self.refresh()

    def refresh(self) -> None:
        """Work out again whether the shown run may be applied to the recipes as they
        are now (they may have been edited on the Recipes page meanwhile)."""
        run = self.run
        if run is None:
            return
        best, refusal = self.applicable(run)
        self.apply_button.setEnabled(best is not None)
        if best is None:
            self._say(f"Apply Best is off: {refusal}.")
            return
        listed = "; ".join(c.text() for c in best.changes)
        if refusal is not None:  # the forecast's length for the phone alone
            self._say(f"Apply Best writes only {best.label()}: {listed}. Not here: {refusal}.")
            return
        what = best.label()
        self._say(f"Apply Best writes {what}: {listed}." if listed else f"Apply Best: {what}.")

    def refusal(self, run: TuneRun) -> str | None:
        """Why the run's best is not applied here (None: it may be applied)."""
        return refusal_now(run)

    def set_phone(self, pair: tuple[Path, Path], phone: PhoneShown) -> None:
        """The forecast on the window's phone for `pair`, worked out by the page off the
        GUI thread; the note is worked out again with it."""
        self._phone = (pair, phone)
        self.refresh()

    def applicable(
        self, run: TuneRun, ask_now: bool = False
    ) -> tuple[BestChanges | None, str | None]:
        """What Apply Best writes (tune_apply.applicable), the phone recipe's draft
        length chosen by the forecast for the window's phone (the Pair page's). Until
        the page has worked the forecast out, none is used, unless `ask_now` (a click on
        Apply Best): then it is worked out here."""
        pair = (Path(run.target), Path(run.draft))
        phone = self._phone[1] if self._phone and self._phone[0] == pair else None
        if phone is None and ask_now:
            phone = tune_phone.work_out(*pair)
        if phone is None or phone.forecast is None:
            return applicable(run)
        return applicable(run, phone.device, phone.forecast)

    def apply_best(self) -> None:
        """Show the changes (where, file, key: old → new, why); on consent, write them."""
        run = self.run
        if run is None or not run.results:
            return
        best, refusal = self.applicable(run, ask_now=True)
        if best is None:
            self._say(f"Not applied: {refusal}.")
            return
        if not best.changes:
            self._say("Nothing to change: the recipes already have these values.")
            return
        listing = "\n".join(c.text() for c in best.changes)
        note = f"\n\n{best.phone_note()}" if best.phone_note() else ""
        if refusal is not None:
            note += f"\n\nNothing else is applied: {refusal}."
        self.confirm_box = ask(
            self,
            "Apply Best",
            f"Apply {best.label()}? These keys change:\n\n{listing}{note}",
            "Apply",
            lambda: self._apply(best),
        )

    def _apply(self, best: BestChanges) -> None:
        try:
            self._undo = best.apply()
        except DraftDeckError as exc:
            show_error(self, "Could not apply", str(exc))
            return
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(True)
        self._say(f"Applied {best.label()}: {best.used_by()}.")

    def undo_apply(self) -> None:
        if self._undo is not None:
            restore(self._undo)
            self._undo = None
            self.undo_button.setEnabled(False)
            self.refresh()
            self._say(f"Undone: the files are back as they were. {self.note.text()}")
