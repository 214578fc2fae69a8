"""The Pair page's phone part: the phone profile chooser, the forecast panel, the
acceptance measurement, and the phone's line in the memory estimate.

The page hands it the pair shown; it works the forecast and the phone's RAM out off the
GUI thread (forecast_state.py decides what to show) and renders the answers. The RAM
comes from an attached phone of that model when an adb server already runs (the Pair
page never starts one), else from what its recorded results stored.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.phone_profiles import choose_device
from app.core.pack.library import PackEntry
from app.core.phone.desk import PhoneDesk
from app.ui.base import background
from app.ui.base.labels import wrap_to_width
from app.ui.base.phone_profile import current_device
from app.ui.pair.acceptance_measure import AcceptanceMeasure
from app.ui.pair.forecast_panel import ForecastPanel
from app.ui.pair.forecast_state import (
    ForecastShown,
    PhoneMemory,
    known_phone_ram,
    phone_memory,
    work_out,
)
from app.ui.pair.pair_memory import MemoryEstimate

FORECAST_TASK, RAM_TASK, DEVICES_TASK = "forecast", "phone_ram", "devices"
CHOOSER_TIP = (
    "The phone the forecast and the memory check are about: phones you recorded results "
    "of (on the Phone page) first, then phones whose figures the packs' authors published."
)


class PairPhone(QWidget):
    def __init__(
        self, memory: MemoryEstimate, desk: PhoneDesk | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.memory = memory  # the page's memory line: the phone's figures go under it
        self.desk = desk
        self.pair: tuple[Path, Path] | None = None
        self.combo = QComboBox()
        self.combo.setObjectName("phoneProfile")
        self.combo.setToolTip(CHOOSER_TIP)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(18)
        self.combo.activated.connect(self._on_chosen)  # the user's choice, not a refill
        label = QLabel("Ph&one:")
        label.setBuddy(self.combo)
        note = wrap_to_width(
            QLabel("A forecast from the acceptance measured here and the phone's own speeds.")
        )
        note.setObjectName("pageHint")
        row = QHBoxLayout()
        row.addWidget(label)
        row.addWidget(self.combo)
        row.addWidget(note, 1)
        self.panel = ForecastPanel()
        self.measure = AcceptanceMeasure(parent=self)
        self.panel.measure_requested.connect(self.start_measure)
        self.panel.cancel_requested.connect(self.measure.cancel)
        self.measure.progressed.connect(self.panel.show_measuring)
        self.measure.finished.connect(self._on_measured)
        self.measure.failed.connect(self._on_measure_failed)
        self.measure.cancelled.connect(self._on_measure_cancelled)
        # The table first; the assumptions below it scroll when the page is short.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.panel)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(scroll, 1)
        self.reload_devices()

    # -- the chooser ------------------------------------------------------------------

    def device(self) -> str | None:
        name = self.combo.currentText()
        return name or None

    def reload_devices(self) -> None:
        """The profiles again (a result recorded on the Phone page adds one), then the
        forecast again (replies in Chat add to the acceptance)."""
        background.run(self, DEVICES_TASK, current_device, self._show_devices)

    def _show_devices(self, found: tuple[list[str], str | None]) -> None:
        names, chosen = found
        listed = [self.combo.itemText(i) for i in range(self.combo.count())]
        if listed == names and chosen == self.device():
            self._refresh()  # the tallies may have grown since (a reply in Chat)
            return
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItems(names)
        self.combo.setCurrentIndex(names.index(chosen) if chosen in names else -1)
        self.combo.blockSignals(False)
        self._refresh()

    def choose(self, name: str) -> None:
        """Choose this profile (as the user would)."""
        index = self.combo.findText(name)
        if index >= 0:
            self.combo.setCurrentIndex(index)
            self._on_chosen(index)

    def _on_chosen(self, _index: int) -> None:
        name = self.device()
        background.run(self, "choose", lambda: choose_device(name), lambda _r: None)
        self._refresh()

    # -- the pair ---------------------------------------------------------------------

    def show_pair(self, target: PackEntry | None, draft: PackEntry | None) -> None:
        if target is None or draft is None or target.info is None or draft.info is None:
            self.pair = None
            background.drop(self, FORECAST_TASK)
            background.drop(self, RAM_TASK)
            self.panel.show_forecast(
                ForecastShown(self.device(), reason="Choose a target and a draft.")
            )
            self.memory.show_phone(PhoneMemory("", ""))
            return
        self.pair = (target.path, draft.path)
        self._refresh()

    def _refresh(self) -> None:
        """Work out the forecast and the phone's memory line for the pair and phone shown."""
        if self.pair is None:
            return
        (target, draft), device, desk = self.pair, self.device(), self.desk
        background.run(
            self, FORECAST_TASK, lambda: work_out(target, draft, device), self.panel.show_forecast
        )

        def memory() -> PhoneMemory:
            phone, ram, where = known_phone_ram(desk, device)
            return phone_memory(target, draft, phone, ram, where)

        background.run(self, RAM_TASK, memory, self.memory.show_phone)

    # -- measuring --------------------------------------------------------------------

    def start_measure(self) -> None:
        if self.pair is not None and not self.measure.running:
            self.panel.say("")
            self.measure.start(*self.pair)

    def _on_measured(self, tokens: int) -> None:
        self.panel.show_measuring(None)
        self.panel.say(f"Measured {tokens:,} tokens of {self._measured_names()} on this computer.")
        self._refresh()

    def _measured_names(self) -> str:
        progress = self.measure.progress
        return progress.pair if progress is not None else "the pair"

    def _on_measure_failed(self, message: str) -> None:
        self.panel.show_measuring(None)
        self.panel.say(f"Not measured: {message}")
        self._refresh()  # the replies decoded before it failed count

    def _on_measure_cancelled(self) -> None:
        self.panel.show_measuring(None)
        self.panel.say("Measuring cancelled; the replies already decoded count.")
        self._refresh()

    def shutdown(self) -> None:
        self.measure.shutdown()
        background.close_owner(self)
