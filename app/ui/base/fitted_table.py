"""Tables whose columns fit the window: each column as wide as its contents, and when
that is too wide, the columns named to give way shrink first (their text elided, the
full text in the tooltip) before the table scrolls sideways. A frozen-column table keeps
its first column in view while the others scroll (Qt's "frozen column" pattern: a
second view over the same model, showing only that column, laid over the first).
`ElideDelegate` elides one column its own way (the start of a path, the end of a
message)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
)
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

# The least width when a column gives way: its cells' width (only the header is elided).
CELLS = -1
# Or the widest of its cells' READABLE_ROLE texts: the part of each cell that must stay
# readable (a path's last folder, the file a message is about).
READABLE = -2
READABLE_ROLE = Qt.ItemDataRole.UserRole + 100
FLOOR = 48  # no column shrinks below this, whatever it holds
# Columns fit this many rows at most (a window's height of them, from the top shown),
# measured once per change of rows, not per resize: measuring a cell asks the model a
# dozen questions, and a library of 300 packs made every resize measure all 2,700
# cells (0.2-2 s on a busy 2-core machine).
MEASURED_ROWS = 40


def fitted_widths(
    natural: Sequence[int], cells: Sequence[int], room: int, give_way: Sequence[tuple[int, int]]
) -> list[int]:
    """Column widths within `room`: shrink the (column, least width or CELLS) pairs in
    order, each down to its least width, until the columns fit or none may shrink."""
    widths = list(natural)
    excess = sum(widths) - room
    for column, least in give_way:
        if excess <= 0:
            break
        floor = max(FLOOR, cells[column] if least == CELLS else least)
        cut = min(excess, max(0, widths[column] - floor))
        widths[column] -= cut
        excess -= cut
    return widths


class FittedTable(QTableView):
    """A table that refits its columns when it is resized or its rows change; the last
    column takes whatever room is left."""

    def __init__(self, give_way: Sequence[tuple[int, int]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.give_way = tuple(give_way)
        self.horizontalHeader().setStretchLastSection(True)
        self.horizontalHeader().setResizeContentsPrecision(MEASURED_ROWS)  # rows per column
        self._readable: dict[int, int] = {}  # READABLE widths until the rows change
        # After a change of rows, one measurement (a column's cells, or its READABLE
        # width) per turn of the event loop while the table is shown, then the columns
        # are fitted: all at once, a library of 300 packs held the GUI thread 45-100 ms
        # (9 columns of 40 rows, a dozen roles asked of each cell) on top of the model's
        # own reset. A hidden table waits: it would compete with the page now shown
        # (and its workers, for the GIL). Column -> (cells' width, natural width) so far,
        # until the rows change; a hidden column is measured once it is shown (Qt sizes a
        # hidden header section 0: kept, it squeezed a Tune header to "afti" when its
        # column came back at the next sweep).
        self._columns: dict[int, tuple[int, int]] = {}
        self._steps: list[Callable[[], object]] = []
        self._next_column = QTimer(self)
        self._next_column.setSingleShot(True)
        self._next_column.setInterval(0)
        self._next_column.timeout.connect(self._measure_next)

    def setModel(self, model: QAbstractItemModel | None) -> None:
        super().setModel(model)
        if model is not None:
            for signal in (model.modelReset, model.layoutChanged):
                signal.connect(self._on_rows_changed)
            model.rowsInserted.connect(self._on_rows_changed)
            model.rowsRemoved.connect(self._on_rows_changed)
            model.dataChanged.connect(self._forget_widths)
        self._on_rows_changed()

    def _forget_widths(self) -> None:
        self._readable.clear()
        self._columns.clear()

    def _on_rows_changed(self) -> None:
        self._forget_widths()
        model = self.model()
        self._steps = []
        for column in range(model.columnCount() if model is not None else 0):
            self._steps.append(partial(self._measure_column, column))
            if (column, READABLE) in self.give_way:
                self._steps.append(partial(self._readable_width, column))
        self._next_column.start()

    def measuring(self) -> bool:
        """Whether measurements are still to be taken after a change of rows, one per
        turn of the event loop while the table is shown (fitted after the last)."""
        return bool(self._steps)

    def _measure_next(self) -> None:
        if not self._steps or not self.isVisible():  # shown again: showEvent resumes
            return
        self._steps.pop(0)()
        if self._steps:
            self._next_column.start()
        else:
            self.fit_columns()

    def _measure_column(self, column: int) -> None:
        header = self.horizontalHeader()
        if header.isSectionHidden(column):
            return  # its header's hint would read 0: measured when shown (fit_columns)
        cells = self.sizeHintForColumn(column)
        self._columns[column] = cells, max(cells, header.sectionSizeHint(column))

    def fit_columns(self) -> None:
        """Fit the columns to the room there is; any column not measured yet is now."""
        model, header = self.model(), self.horizontalHeader()
        if model is None:
            return
        columns = range(model.columnCount())
        # A hidden column takes no room (its width would make the others give way).
        hidden = {c for c in columns if header.isSectionHidden(c)}
        unmeasured = [c for c in columns if c not in hidden and c not in self._columns]
        if unmeasured:
            self._steps.clear()
            for column in unmeasured:
                self._measure_column(column)
        natural = [0 if c in hidden else self._columns[c][1] for c in columns]
        cells = [0 if c in hidden else self._columns[c][0] for c in columns]
        give_way = [
            (column, self._readable_width(column) if least == READABLE else least)
            for column, least in self.give_way
            if column not in hidden
        ]
        widths = fitted_widths(natural, cells, self.viewport().width(), give_way)
        for column, width in enumerate(widths):
            if column not in hidden:
                header.resizeSection(column, width)

    def _readable_width(self, column: int) -> int:
        if column not in self._readable:
            self._readable[column] = self._measure_readable(column)
        return self._readable[column]

    def _measure_readable(self, column: int) -> int:
        model = self.model()
        advance = self.fontMetrics().horizontalAdvance
        widest = 0
        for row in range(min(model.rowCount(), MEASURED_ROWS)):
            index = model.index(row, column)
            text = index.data(READABLE_ROLE)
            if text:
                # The cell's own margins around its text, as its size hint counts them.
                margins = self.sizeHintForIndex(index).width() - advance(str(index.data()))
                widest = max(widest, advance(str(text)) + margins)
        # A character to spare: the grid line and Qt's eliding would cut the last one.
        return widest + self.fontMetrics().averageCharWidth() if widest else 0

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self.measuring():  # else fitted after the last measurement
            self.fit_columns()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._steps:
            self._next_column.start()


class ElideDelegate(QStyledItemDelegate):
    """Elides its column's text in its own mode (a view has one mode for all)."""

    def __init__(self, mode: Qt.TextElideMode, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.mode = mode

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = self.mode


class FrozenColumnTable(FittedTable):
    """A fitted table whose first column stays in view when the others scroll."""

    def __init__(self, give_way: Sequence[tuple[int, int]], parent: QWidget | None = None) -> None:
        super().__init__(give_way, parent)
        self.frozen = QTableView(self)
        self.frozen.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.frozen.verticalHeader().hide()
        self.frozen.setFrameShape(QFrame.Shape.NoFrame)
        self.frozen.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frozen.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frozen.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.horizontalHeader().sectionResized.connect(self._on_section_resized)
        self.horizontalHeader().geometriesChanged.connect(self._place_frozen)
        self.verticalHeader().sectionResized.connect(
            lambda row, _old, size: self.frozen.setRowHeight(row, size)
        )
        # Scrolling either view scrolls both: they show the same rows.
        self.frozen.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.verticalScrollBar().valueChanged.connect(self.frozen.verticalScrollBar().setValue)
        # Sorting by the frozen column goes through the table; both headers show the sort.
        self.frozen.horizontalHeader().setSectionsClickable(True)
        self.frozen.horizontalHeader().sectionClicked.connect(self._sort_by_first)
        self.horizontalHeader().sortIndicatorChanged.connect(
            lambda section, order: self.frozen.horizontalHeader().setSortIndicator(section, order)
        )

    def setModel(self, model: QAbstractItemModel | None) -> None:
        super().setModel(model)
        self.frozen.setModel(model)
        self.frozen.setSelectionModel(self.selectionModel())
        if model is not None:
            model.modelReset.connect(self._show_first_only)
        self._show_first_only()

    def _show_first_only(self) -> None:
        model = self.model()
        for column in range(model.columnCount() if model is not None else 0):
            self.frozen.setColumnHidden(column, column != 0)
        self.frozen.setColumnWidth(0, self.columnWidth(0))
        self.frozen.horizontalHeader().setSortIndicatorShown(self.isSortingEnabled())
        self._place_frozen()

    def _sort_by_first(self, column: int) -> None:
        header = self.horizontalHeader()
        if not self.isSortingEnabled() or column != 0:
            return
        first_ascending = (
            header.sortIndicatorSection() == 0
            and header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
        )
        order = Qt.SortOrder.DescendingOrder if first_ascending else Qt.SortOrder.AscendingOrder
        self.sortByColumn(0, order)

    def _on_section_resized(self, column: int, _old: int, size: int) -> None:
        if column == 0:
            self.frozen.setColumnWidth(0, size)
            self._place_frozen()

    def _place_frozen(self) -> None:
        # Same header height, or the frozen rows would not line up with the others.
        self.frozen.horizontalHeader().setFixedHeight(self.horizontalHeader().height())
        self.frozen.setGeometry(
            self.verticalHeader().width() + self.frameWidth(),
            self.frameWidth(),
            self.columnWidth(0),
            self.viewport().height() + self.horizontalHeader().height(),
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_frozen()
