"""The Pair page's memory line: what the pair needs under its saved recipes, and
whether this computer has it now (the engine refuses a pair that does not fit)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from app.core.infra.errors import FileError
from app.core.measure.ram_estimate import FITS, TIGHT, TOO_BIG, assess_memory
from app.core.pack.context_window import pair_window
from app.core.pack.library import PackEntry
from app.core.recipe.files import run_recipes
from app.ui.base.labels import wrap_to_width
from app.ui.pair.forecast_state import PhoneMemory

# A mark for the memory estimate: words and a symbol, never colour alone. The colour is
# the style sheet's, by the label's "level" property (resources/style.qss).
UNKNOWN = "unknown"  # the estimate could not be made
MARKS = {TIGHT: "⚠ ", TOO_BIG: "✕ ", UNKNOWN: "⚠ "}
WORSE = (FITS, UNKNOWN, TIGHT, TOO_BIG)  # the label's colour is its worse line's
HERE = "On this computer"


def here_words(message: str) -> str:
    """ram_estimate's words for this computer, saying so ("Memory: this pair needs…"
    -> "On this computer: this pair needs…"): the phone's line follows."""
    if message.startswith("Memory: "):
        return f"{HERE}: {message.removeprefix('Memory: ')}"
    return f"{HERE}, {message[:1].lower()}{message[1:]}"


class MemoryEstimate(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._here: tuple[str, str] | None = None  # (level, words) for this computer
        self._phone = PhoneMemory("", "")  # the chosen phone's line, when its RAM is known
        self.setObjectName("memoryEstimate")
        wrap_to_width(self)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._tip = (
            "Estimated from the weight files, the recipes saved for this pair (memory "
            "low keeps weights as stored, normal makes MNN hold them as fp32) and a KV "
            "cache for the pair's context window: the smaller of the two models' windows, "
            "each the recipe's max_all_tokens (MNN's default 2,048) or the positions the "
            "model was trained for, whichever is less. On the phone: the packs' own "
            "recipes (never this computer's settings) against the phone's RAM."
        )
        self.setToolTip(self._tip)

    def show_pair(self, target: PackEntry | None, draft: PackEntry | None) -> None:
        """The estimate for this pair; hidden when either is missing or unreadable."""
        if target is None or draft is None or target.info is None or draft.info is None:
            self._here = None
            self.hide()
            return
        try:
            _, fit = assess_memory(target.info, draft.info, worker_running=False)
            target_run, draft_run = run_recipes(target.info.path, draft.info.path)
        except FileError as exc:  # a recipe broken since the library was read
            self._show_text(UNKNOWN, f"Memory cannot be estimated: {exc.path}: {exc.problem}")
            return
        window = pair_window(
            target.info.context.under(target_run), draft.info.context.under(draft_run)
        )
        self._show_text(
            fit.level, f"{here_words(fit.message)} Context window: {window.describe()}."
        )

    def show_phone(self, phone: PhoneMemory) -> None:
        """The chosen phone's line under this computer's ("" text: none)."""
        self._phone = phone
        self.setToolTip(f"{self._tip}\n\n{phone.tip}" if phone.tip else self._tip)
        if self._here is not None:
            self._render()

    def _show_text(self, level: str, message: str) -> None:
        self._here = (level, message)
        self._render()

    def _render(self) -> None:
        assert self._here is not None
        level, message = self._here
        lines = [MARKS.get(level, "") + message]
        if self._phone.text:
            lines.append(MARKS.get(self._phone.level, "") + self._phone.text)
            level = max(level, self._phone.level or FITS, key=WORSE.index)
        self.setText("\n".join(lines))
        self.setProperty("level", level)
        self.style().unpolish(self)  # a property the style sheet reads: its colour anew
        self.style().polish(self)
        self.show()
