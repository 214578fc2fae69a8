"""Help > User Guide: the Markdown guide under docs/guide shown in the window, offline.

Links between pages open in place (with Back and Forward); web links open in the
browser. Screenshots are scaled down to the page's width: they are taken at 1280 px.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QImage, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.guide_files import INDEX

IMAGE_WIDTH = 760  # px: a screenshot fits the dialog's text column at its default size
_WEB_SCHEMES = ("http", "https", "mailto")


class GuideBrowser(QTextBrowser):
    """A QTextBrowser that shows screenshots no wider than IMAGE_WIDTH."""

    def loadResource(self, kind: int, name: QUrl | str) -> object:
        url = QUrl(name)
        if kind == QTextDocument.ResourceType.ImageResource.value and url.isLocalFile():
            image = QImage(url.toLocalFile())
            if not image.isNull() and image.width() > IMAGE_WIDTH:
                return image.scaledToWidth(IMAGE_WIDTH, Qt.TransformationMode.SmoothTransformation)
        return super().loadResource(kind, name)


class UserGuideDialog(QDialog):
    """The guide in `folder`, opened at its index."""

    def __init__(self, parent: QWidget, folder: Path) -> None:
        super().__init__(parent)
        self.setWindowTitle("DraftDeck User Guide")
        self.folder = folder
        self.browser = GuideBrowser(self)
        self.browser.setOpenLinks(False)  # _on_anchor_clicked decides what a link opens
        self.browser.anchorClicked.connect(self._on_anchor_clicked)
        self.note = QLabel(self)  # why a link did not open
        self.note.setWordWrap(True)
        back, forward = QPushButton("Back"), QPushButton("Forward")
        contents = QPushButton("Contents")
        back.clicked.connect(self.browser.backward)
        forward.clicked.connect(self.browser.forward)
        contents.clicked.connect(self.show_contents)
        self.browser.backwardAvailable.connect(back.setEnabled)
        self.browser.forwardAvailable.connect(forward.setEnabled)
        back.setEnabled(False)
        forward.setEnabled(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        for button in (back, forward, contents):
            row.addWidget(button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.browser, 1)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.resize(860, 640)  # fits inside the smallest window, 1024x700
        self.show_contents()

    def show_contents(self) -> None:
        index = self.folder / INDEX
        if not index.is_file():
            self.browser.setMarkdown(
                f"# User guide not found\n\nThis copy of DraftDeck has no guide at "
                f"`{index}`. The same pages are in the project's `docs/guide` folder."
            )
            return
        self._open(QUrl.fromLocalFile(str(index)))

    def page(self) -> Path:
        """The page shown now."""
        return Path(self.browser.source().toLocalFile())

    def _open(self, url: QUrl) -> None:
        self.note.clear()
        self.browser.setSource(url, QTextDocument.ResourceType.MarkdownResource)

    def _on_anchor_clicked(self, link: QUrl) -> None:
        if link.scheme() in _WEB_SCHEMES:
            QDesktopServices.openUrl(link)
            return
        target = self.browser.source().resolved(link)
        path = Path(target.toLocalFile())
        if not target.isLocalFile() or not path.is_file():
            self.note.setText(f"{link.toString()} is not part of the guide in this copy.")
        elif path.suffix == ".md":
            self._open(target)
        else:  # a screenshot, say: the system's viewer shows it full size
            QDesktopServices.openUrl(target)
