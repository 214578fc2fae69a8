"""The phone-side check of the pack selected on the phone: its recipe keys that differ
from the library's (key: phone → library), whether the draft its config.json names is
on the phone, and the RAM its recipes need against the phone's; with a button that
pushes the library's recipes to bring it in line (the phone's draft link is kept)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.phone.phone_packs import PhonePack
from app.ui.base.labels import wrap_to_width

MATCH_TIP = (
    "Push the library's recipes of this pack to the phone, so its recipe keys are the "
    "library's (the draft the phone's config.json names stays named)"
)


class PhoneCheckPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = wrap_to_width(QLabel())
        self.label.setObjectName("phoneCheck")
        self.match_button = QPushButton("Push Recipes to Match")
        self.match_button.setToolTip(MATCH_TIP)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        row = QHBoxLayout()
        row.addWidget(self.match_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.show_pack(None)

    def show_pack(self, pack: PhonePack | None) -> None:
        """What the check found for `pack` (None: no pack selected)."""
        recipes = pack.recipes if pack is not None else None
        if pack is None:
            text = "Select a pack on the phone to see its recipes against the library's."
        elif recipes is None:
            text = f"{pack.name}: {pack.match} (no recipe check: not a library pack)."
        else:
            text = "\n".join([f"{pack.name} on the phone → in the library:", *recipes.lines()])
        self.label.setText(text)
        self.match_button.setEnabled(recipes is not None and not recipes.same)
