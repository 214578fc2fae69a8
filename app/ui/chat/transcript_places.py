"""Where each message stands in the transcript's document, and the edits a reply's end
makes there in place (the text before it keeps its layout).

A message's heading begins with a character named after the message (an HTML anchor
name, not a link: nothing to click), so it is found again after any edit before it; a
message runs to the paragraph before the next one's heading."""

from __future__ import annotations

from PySide6.QtGui import QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

MESSAGE_GAP = 12  # px above a message: Qt's own margin for <p>, as a full redraw has
# A streamed reply's paragraphs, one a line: no margins (a full redraw's <br>), and not
# the heading's spacing (each line took it, and the reply closed up at its end).
TEXT_LINE = QTextBlockFormat()
TEXT_LINE.setTopMargin(0)
TEXT_LINE.setBottomMargin(0)


def anchor(index: int) -> str:
    """The name the message's heading begins with."""
    return f"message-{index}"


def named(index: int) -> str:
    """HTML that names the text after it as message `index`'s start."""
    return f"<a name='{anchor(index)}'></a>"


def message_span(document: QTextDocument, index: int) -> QTextCursor | None:
    """A cursor selecting the message's text, from its heading's first character to the
    end of the paragraph before the next message's heading; None if not found. Looked
    for from the end: the messages edited are the last ones."""
    start = end = None
    block = document.lastBlock()
    while block.isValid() and start is None:
        names = block.begin().fragment().charFormat().anchorNames() if block.length() > 1 else []
        if anchor(index) in names:
            start = block.position()
        elif anchor(index + 1) in names:
            end = block.position() - 1  # the paragraph break before it stays
        block = block.previous()
    if start is None:
        return None
    cursor = QTextCursor(document)
    cursor.setPosition(start)
    if end is None:
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
    else:
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    return cursor


def insert_message(cursor: QTextCursor, html: str, plain: QTextCharFormat) -> None:
    """A message's HTML at the cursor, in a paragraph of its own."""
    if cursor.block().length() > 1:
        # insertHtml continues the last paragraph: a new message would start on the
        # previous one's last line ("Hi?Assistant").
        spaced = QTextBlockFormat()
        spaced.setTopMargin(MESSAGE_GAP)
        cursor.insertBlock(spaced, plain)
    cursor.insertHtml(html)


def replace_heading(document: QTextDocument, index: int, html: str) -> bool:
    """The message's heading paragraph drawn anew from `html`; False if not found."""
    span = message_span(document, index)
    if span is None:
        return False
    span.setPosition(span.selectionStart())
    span.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    span.insertHtml(html)
    return True


def add_line(document: QTextDocument, index: int, html: str, plain: QTextCharFormat) -> bool:
    """A line at the end of the message, a paragraph of its own (added to the last one,
    a long reply's one paragraph would be laid out again whole); False if not found."""
    span = message_span(document, index)
    if span is None:
        return False
    span.setPosition(span.selectionEnd())
    span.insertBlock(TEXT_LINE, plain)
    span.insertHtml(html)
    return True


def add_to_heading(document: QTextDocument, index: int, html: str) -> bool:
    """`html` at the end of the message's heading paragraph; False if not found."""
    span = message_span(document, index)
    if span is None:
        return False
    span.setPosition(span.selectionStart())
    span.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    span.insertHtml(html)
    return True
