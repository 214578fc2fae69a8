"""A library big enough to freeze the window, read the way that does not: the library
scanned and its pairs judged on worker threads, the matrix answering from what was
judged, a second visit to an unchanged library reading and judging nothing.

Counted, never timed: which thread read each bundle and judged each pair, how many
bundles were read and pairs judged, how often a verdict was looked into."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from app.core.infra.settings import load_settings
from app.core.pack import compat, library
from app.core.pack.bundle import read_bundle
from app.core.pack.pair_table import PairTable, PairTables
from app.core.pack.verdict import Verdict
from app.ui.base.fitted_table import MEASURED_ROWS, READABLE, FittedTable
from app.ui.library.library_model import COLUMNS, ENTRY_ROLE, LibraryModel
from app.ui.pair.draft_list import RankNoteDelegate
from app.ui.pair.pair_matrix import PAIR_ROLE, Index, PairMatrixModel
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import open_window

Copy = Callable[..., Path]
PACKS = ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target", "fast-draft")
ROLES = (
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.BackgroundRole,
    Qt.ItemDataRole.ForegroundRole,
    Qt.ItemDataRole.DecorationRole,
    Qt.ItemDataRole.FontRole,
    PAIR_ROLE,
)


class Calls:
    """Calls to a function: the threads they ran on, and their arguments."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.args: list[tuple[Any, ...]] = []

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.threads.append(threading.current_thread())
            self.args.append(args)
            return fn(*args, **kwargs)

        return counted

    def on_gui_thread(self) -> int:
        return sum(t is threading.main_thread() for t in self.threads)

    def pairs_on_gui_thread(self) -> set[tuple[Path, Path]]:
        return {
            (args[0].path, args[1].path)
            for thread, args in zip(self.threads, self.args, strict=True)
            if thread is threading.main_thread()
        }

    def clear(self) -> None:
        self.threads.clear()
        self.args.clear()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Calls:
    calls = Calls()
    monkeypatch.setattr(library, "read_bundle", calls.wrap(read_bundle))
    return calls


@pytest.fixture
def judgements(monkeypatch: pytest.MonkeyPatch) -> Calls:
    calls = Calls()  # every pair is judged through it (pair_table.judge)
    monkeypatch.setattr(compat, "assess_either", calls.wrap(compat.assess_either))
    return calls


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The window opened on a library that already holds the packs (as at start-up)."""
    root = load_settings().library_path()
    for name in PACKS:
        bundle_copy(name, root / name)
    with open_window(qtbot) as win:
        yield win


def _visit_pair(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("pair")
    qtbot.waitUntil(lambda: not window.pair_page.loading())


def test_the_library_is_read_and_judged_off_the_gui_thread(
    qtbot: QtBot, reads: Calls, judgements: Calls, bundle_copy: Copy
) -> None:
    root = load_settings().library_path()
    for name in PACKS:
        bundle_copy(name, root / name)
    with open_window(qtbot) as window:
        page = window.library_page
        qtbot.waitUntil(lambda: page.model.rowCount() == len(PACKS))
        assert len(reads.threads) == len(PACKS)
        assert reads.on_gui_thread() == 0
        _visit_pair(qtbot, window)
        model = window.pair_page.matrix_model
        assert len(judgements.threads) >= len(model.targets) * len(model.drafts) > 1
        # The matrix is judged on a worker; on the GUI thread only the pair chosen, once
        # per page that shows its verdict (the card here, the Tune page's note).
        chosen = (window.selection.target, window.selection.draft)
        assert judgements.pairs_on_gui_thread() <= {chosen}
        assert judgements.on_gui_thread() <= 2
        assert reads.on_gui_thread() == 0


def test_the_matrix_answers_every_cell_without_judging(
    qtbot: QtBot,
    window: MainWindow,
    judgements: Calls,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _visit_pair(qtbot, window)
    model = window.pair_page.matrix_model
    looked_into = Calls()  # a verdict's reasons counted or filtered, cell by cell
    monkeypatch.setattr(Verdict, "of", looked_into.wrap(Verdict.of))
    judgements.clear()
    answers = [
        model.index(row, column).data(role)
        for row in range(model.rowCount())
        for column in range(model.columnCount())
        for role in ROLES
    ]
    assert len(answers) == len(model.targets) * len(model.drafts) * len(ROLES) > 0
    assert judgements.threads == [] and looked_into.threads == []
    texts = {model.index(r, c).data() for r in range(model.rowCount()) for c in range(2)}
    assert texts and all(t.split(" ", 1)[1] for t in texts)  # "✓ ok", "✕ blocked", …


def test_a_second_visit_to_an_unchanged_library_reads_and_judges_nothing(
    qtbot: QtBot, window: MainWindow, reads: Calls, judgements: Calls
) -> None:
    model = window.pair_page.matrix_model
    _visit_pair(qtbot, window)
    assert judgements.threads  # the first visit judged the pairs
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    reads.clear()
    judgements.clear()
    window.show_page("library")
    _visit_pair(qtbot, window)
    assert reads.threads == [] and judgements.threads == []
    assert resets == []  # the view keeps its place: nothing to redraw
    assert window.pair_page.current()[0] is not None

    # One pack changed: it alone is read again, and only its pairs judged again.
    root = window.library.root
    (root / "qwen35-draft" / "config_cpu.json").write_text("{oops")
    window.show_page("library")
    _visit_pair(qtbot, window)
    assert len(reads.threads) == 1 and reads.on_gui_thread() == 0
    changed = next(e for e in model.drafts if e.name == "qwen35-draft")
    assert not changed.ok
    its_pairs = [
        (t, d) for t in model.targets for d in model.drafts if changed.path in (t.path, d.path)
    ]
    assert len(judgements.threads) == len(its_pairs) < len(model.targets) * len(model.drafts)
    column = list(model.drafts).index(changed)
    assert model.index(0, column).data() == "✕ blocked"
    assert resets == [True]


class CountingLibraryModel(LibraryModel):
    def __init__(self) -> None:
        super().__init__()
        self.rows_asked: set[int] = set()
        self.calls = 0

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        self.calls += 1
        self.rows_asked.add(index.row())
        return super().data(index, role)


def test_a_long_library_list_is_measured_once_and_in_part(
    qtbot: QtBot, fixture_bundle: Callable[[str], Path]
) -> None:
    """Fitting the columns measures a window's worth of rows, once per change of rows:
    a resize of the window measures nothing again."""
    entry = library.read_entry(fixture_bundle("qwen3-target"), by_reference=False)
    model = CountingLibraryModel()
    model.set_entries([replace(entry, path=entry.path.with_name(f"p{i:03d}")) for i in range(300)])
    table = FittedTable(((COLUMNS.index("Path"), READABLE),))
    qtbot.addWidget(table)
    table.setModel(model)
    table.resize(900, 600)
    table.show()
    qtbot.waitExposed(table)
    qtbot.waitUntil(lambda: not table.measuring())
    assert max(model.rows_asked) < MEASURED_ROWS + 40  # the first rows and those in view
    model.calls = 0
    for width in (700, 1000, 800):
        table.resize(width, 600)
        table.fit_columns()
    painted_rows = table.rowAt(table.viewport().height() - 1) + 1 or model.rowCount()
    assert model.calls <= painted_rows * len(COLUMNS) * 20  # painting only, no measuring


def test_a_change_of_rows_sorts_once_and_measures_a_column_per_turn(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 packs landing on the Library page: each row's keys are worked out once for
    the sort (the proxy's sort asked each row's key about ten times, 3,000 calls into
    Python in one turn), and the columns are measured one per turn of the event loop
    (all nine in the turn of the change, before), then fitted; not while its page is
    hidden."""
    page = window.library_page
    qtbot.waitUntil(lambda: not page.loading() and not page.table.measuring())
    entry = page.model.data(page.model.index(0, 0), ENTRY_ROLE)
    entries = [replace(entry, path=entry.path.with_name(f"p{i:03d}")) for i in reversed(range(300))]
    cells, measured = Calls(), Calls()
    monkeypatch.setattr(page.model, "_row_cells", cells.wrap(page.model._row_cells))
    monkeypatch.setattr(
        page.table, "sizeHintForColumn", measured.wrap(page.table.sizeHintForColumn)
    )
    page.model.set_entries(entries)
    assert len(cells.args) <= len(entries)
    assert measured.args == []
    assert page.proxy.index(0, 0).data() == "p000"  # sorted by name all the same
    window.show_page("downloads")  # a hidden table waits for its page to be shown
    for _ in range(3 * len(COLUMNS)):  # turns enough to have measured every column
        QApplication.processEvents()
    assert measured.args == [] and page.table.measuring()
    window.show_page("library")
    per_turn = []
    while page.table.measuring():
        before = len(measured.args)
        QApplication.processEvents()
        per_turn.append(len(measured.args) - before)
    assert max(per_turn) == 1 and sum(per_turn) == len(COLUMNS)


class CountingMatrix(PairMatrixModel):
    def __init__(self, tables: PairTables) -> None:
        super().__init__(tables)
        self.header_calls = 0

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            self.header_calls += 1
        return super().headerData(section, orientation, role)


class CountingDelegate(RankNoteDelegate):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        self.calls += 1
        super().initStyleOption(option, index)


def test_a_table_lands_on_the_pair_page_without_measuring_every_name(
    qtbot: QtBot, window: MainWindow
) -> None:
    """The matrix's columns are sized from the names' text, with one section's size hint
    for the margins (a hint per section asked the model five roles per draft: 1,500
    calls for 300 drafts), the header's height is one section's (Qt's asks 200 sections
    at each reset and restyle) and the draft list's lines are measured when it opens,
    not each time it is filled."""
    page = window.pair_page
    matrix = CountingMatrix(page.matrix_model.tables)
    page.matrix_model = matrix
    page.matrix.setModel(matrix)
    delegate = CountingDelegate()
    page.draft_combo.setItemDelegate(delegate)
    landing: list[tuple[int, int]] = []
    show_table = page._show_table

    def counted(table: PairTable) -> None:
        matrix.header_calls = delegate.calls = 0
        show_table(table)
        landing.append((matrix.header_calls, delegate.calls))

    page._show_table = counted  # type: ignore[method-assign]
    _visit_pair(qtbot, window)
    assert len(landing) == 1 and page.draft_combo.count() > 0
    header = page.matrix.horizontalHeader()
    matrix.header_calls = 0
    header.sectionSizeHint(0)
    one_section = matrix.header_calls
    assert matrix.columnCount() > 1
    assert landing[0] == (landing[0][0], 0)  # no draft line measured
    # One section asked for the height at the reset, for the names' margins, and for
    # the height again when the memory line restyles the page.
    assert landing[0][0] <= 3 * one_section
    for column in range(matrix.columnCount()):  # and no name is cut
        assert header.sectionSize(column) >= header.sectionSizeHint(column)
