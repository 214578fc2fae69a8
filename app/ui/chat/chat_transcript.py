"""The chat transcript: messages as data, drawn into a text view.

Streaming text is appended at the end with a cursor (cheap, whatever the length), a
line a paragraph; a reply's end edits its heading and adds its figures in place
(transcript_places.py). A full redraw happens only when something earlier changes (a
thinking block is unfolded, highlighting is switched, turns are left out). Qwen3's
<think>…</think> is kept apart and shown folded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import groupby
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from app.core.measure.chat_record import MessageRecord, acceptance_parts
from app.ui.base.scheme import colours, scheme
from app.ui.chat import transcript_places as places

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
COPY, REGENERATE = "Copy", "Regenerate"
# Messages the engine left out to fit the context window stay on screen, greyed.
OUT_OF_CONTEXT = "not in context"
OUT_OF_CONTEXT_TIP = "no longer in context: left out to fit the context window"


@dataclass
class Message:
    role: str  # "user" or "assistant"
    answer: list[tuple[str, bool]] = field(default_factory=list)  # (text, from draft)
    thinking: list[tuple[str, bool]] = field(default_factory=list)
    in_thinking: bool = False
    thinking_open: bool = False
    stats: dict[str, Any] | None = None
    mode: str = ""
    stopped_by: str = ""
    # The phone forecast's line and tooltip under the figures (chat_forecast.py): shown,
    # not saved (it is the forecast of the moment, not a figure of the reply).
    phone_line: tuple[str, str] | None = None

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.answer)

    @property
    def thinking_text(self) -> str:
        return "".join(t for t, _ in self.thinking)

    @property
    def draft_tokens(self) -> int:
        return sum(flag for _, flag in self.answer) + sum(flag for _, flag in self.thinking)

    def record(self) -> MessageRecord:
        return MessageRecord(
            role=self.role,
            text=self.text,
            thinking=self.thinking_text,
            mode=self.mode,
            stopped_by=self.stopped_by,
            draft_tokens=self.draft_tokens,
            stats=self.stats,
        )


def figures_line(message: Message) -> str:
    return message.record().figures_line()


def figures_html(message: Message) -> str:
    """The figures line, its acceptance figures with tooltips saying what each counts."""
    line = escape(figures_line(message))
    for text, tip in acceptance_parts(message.stats or {}):
        shown = escape(text)
        line = line.replace(shown, f"<span title='{escape(tip, quote=True)}'>{shown}</span>", 1)
    return line


def _action_link(href: str, words: str) -> str:
    return f"<a href='{href}' style='color:{colours().hint}; text-decoration:none'>{words}</a>"


class Transcript(QTextBrowser):
    """Each message's heading has a Copy link (its answer text, without the thinking),
    and the last finished reply a Regenerate link (the page decides whether it may)."""

    regenerate_requested = Signal()
    copied = Signal(str)  # what was put on the clipboard, in words for the page to say

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.messages: list[Message] = []
        self.read_only = False  # another pair's conversation: nothing to regenerate
        self.out_of_context = 0  # the messages before this one were left out to fit
        self.highlight = True
        self._plain = QTextCharFormat()
        self._draft = QTextCharFormat()
        self._recolour()
        scheme().changed.connect(self._redraw_in_scheme)
        self._to_end = False
        self._drawn_out_of_context = 0  # the greying drawn (render_all draws the current)
        self.verticalScrollBar().rangeChanged.connect(self._on_range_changed)
        self.verticalScrollBar().actionTriggered.connect(self._on_scrolled_by_user)

    def _recolour(self) -> None:
        self._draft.setBackground(QColor(colours().draft))

    def _redraw_in_scheme(self) -> None:
        """The highlights (and greyed messages, links) are drawn in the colours of
        their time: draw them again in the scheme's."""
        self._recolour()
        self.render_all()

    # -- changes ---------------------------------------------------------------------------

    def add_user(self, text: str) -> None:
        self.messages.append(Message("user", [(text, False)]))
        index = len(self.messages) - 1
        if index and self.messages[index - 1].stats is not None:
            # No longer the last reply: no Regenerate.
            self._in_place(
                lambda doc: places.replace_heading(doc, index - 1, self._head(index - 1))
            )
        self._append_html(self._message_html(index))

    def start_assistant(self, mode: str) -> Message:
        message = Message("assistant", mode=mode)
        self.messages.append(message)
        self._append_html(self._heading(len(self.messages) - 1))
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertBlock(places.TEXT_LINE, self._plain)  # the heading is a paragraph
        return message

    def add_pieces(self, pieces: Sequence[str], flags: Sequence[int]) -> None:
        message = self.messages[-1]
        index = len(self.messages) - 1
        thinking = f"<br><a href='think:{index}'>▸ Thinking…</a>"  # in its heading
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        # One edit block: the paragraph is laid out once per batch, not once per token
        # (each insert re-laid out the whole paragraph: 11-13 ms a batch at 4,000 chars).
        cursor.beginEditBlock()
        for piece, flag in zip(pieces, flags, strict=False):
            marker = piece.strip()
            if marker == THINK_OPEN:
                message.in_thinking = True
                self._in_place(lambda doc: places.add_to_heading(doc, index, thinking))
                cursor.movePosition(QTextCursor.MoveOperation.End)
                continue
            if marker == THINK_CLOSE:
                message.in_thinking = False
                continue
            if message.in_thinking:
                message.thinking.append((piece, bool(flag)))
                continue
            message.answer.append((piece, bool(flag)))
            chars = self._draft if flag and self.highlight else self._plain
            for number, line in enumerate(piece.split("\n")):
                # A line a paragraph: each batch lays out the last ones, not the whole
                # reply (9-12 ms a batch at 3,000 tokens as one paragraph, about 1 ms).
                if number:
                    cursor.insertBlock(places.TEXT_LINE, chars)
                cursor.insertText(line, chars)
        cursor.endEditBlock()
        self.ensureCursorVisible()

    def finish(self, stats: dict[str, Any], stopped_by: str) -> None:
        message = self.messages[-1]
        message.stats, message.stopped_by = stats, stopped_by
        # Its heading gains its links and folds the thinking, its figures go under it;
        # the text stays as streamed (drawn again, the whole transcript took 15-71 ms at
        # 1-6 long replies, and this reply alone 20 ms at 3,000 tokens).
        index = len(self.messages) - 1
        figures = f"<span style='color:{colours().hint}'>{figures_html(message)}</span>"
        self._in_place(
            lambda doc: (
                places.replace_heading(doc, index, self._head(index))
                and places.add_line(doc, index, figures, self._plain)
            )
        )
        self.moveCursor(QTextCursor.MoveOperation.End)

    def add_phone_line(self, message: Message, line: str, tip: str) -> None:
        """The phone forecast under this reply's figures (if it is still shown)."""
        index = next((i for i, shown in enumerate(self.messages) if shown is message), None)
        if index is None:
            return
        message.phone_line = (line, tip)
        words, tip = (escape(part, quote=True) for part in message.phone_line)
        html = f"<i style='color:{colours().hint}' title='{tip}'>{words}</i>"
        self._in_place(lambda doc: places.add_line(doc, index, html, self._plain))

    def drop_last_reply(self) -> bool:
        """Take the last reply away, if it is finished (to write it again)."""
        if not self.messages or self.messages[-1].role != "assistant":
            return False
        if self.messages[-1].stats is None:
            return False
        self.messages.pop()
        self.render_all()
        return True

    def clear_chat(self) -> None:
        self.messages = []
        self.read_only = False
        self.out_of_context = self._drawn_out_of_context = 0
        self._to_end = False
        self.clear()

    def set_highlight(self, on: bool) -> None:
        self.highlight = on
        self.render_all()

    # -- drawing ---------------------------------------------------------------------------

    def _append_html(self, html: str) -> None:
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        places.insert_message(cursor, html, self._plain)
        self.ensureCursorVisible()

    def _spans(self, parts: list[tuple[str, bool]]) -> str:
        """The text, each run of drafted tokens in one highlighted span (a span a token
        made the HTML of a long reply several times longer to parse and lay out)."""
        out = []
        for drafted, run in groupby(parts, key=lambda part: part[1] and self.highlight):
            text = _html("".join(piece for piece, _ in run))
            out.append(
                f"<span style='background:{colours().draft}'>{text}</span>" if drafted else text
            )
        return "".join(out)

    def _head(self, index: int) -> str:
        """A reply's heading block: who wrote it, its links, its folded thinking's link."""
        message = self.messages[index]
        head = self._heading(index)
        if message.thinking or message.in_thinking:
            arrow = "▾" if message.thinking_open else "▸"
            count = len(message.thinking)
            head += f"<br><a href='think:{index}'>{arrow} Thinking ({count} tokens)</a>"
        return head

    def _message_html(self, index: int) -> str:
        message = self.messages[index]
        now = colours()
        # Greyed as a whole; drafted tokens keep their background.
        grey = f" color:{now.faint};" if index < self.out_of_context else ""
        if message.role == "user":
            return f"<p style='{grey}'>{self._heading(index)}<br>{_html(message.text)}</p>"
        # Heading, thinking and answer are blocks of their own: text after an unfolded
        # thinking block inside the same paragraph took its indent.
        thinking = ""
        if message.thinking_open and (message.thinking or message.in_thinking):
            thinking = (
                f"<div style='color:{now.hint}; margin-left:12px'>"
                f"{self._spans(message.thinking)}</div>"
            )
        body = self._spans(message.answer)
        if message.stats is not None:
            body += f"<br><span style='color:{now.hint}'>{figures_html(message)}</span>"
        if message.phone_line is not None:
            line, tip = (escape(part, quote=True) for part in message.phone_line)
            body += f"<br><i style='color:{now.hint}' title='{tip}'>{line}</i>"
        return (
            f"<p style='margin-bottom:0;{grey}'>{self._head(index)}</p>{thinking}"
            # Spaces as streamed (a code block's indent, the first token's space).
            f"<p style='margin-top:0; white-space:pre-wrap;{grey}'>{body}</p>"
        )

    def render_all(self) -> None:
        self.setHtml("".join(self._message_html(i) for i in range(len(self.messages))))
        self._drawn_out_of_context = self.out_of_context
        self.moveCursor(QTextCursor.MoveOperation.End)

    def _in_place(self, edit: Callable[[QTextDocument], bool]) -> None:
        """An edit of the document in place, or the whole transcript drawn again when
        greying changed (turns left out) or the edit found nothing to edit."""
        if self.out_of_context != self._drawn_out_of_context or not edit(self.document()):
            self.render_all()

    def show_end(self) -> None:
        """Scroll to the end (the last reply): a reopened conversation showed its first
        lines, as the text is laid out (and the scroll range set) after setHtml returns."""
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._to_end = True  # the range grows as the layout goes on: follow it once

    def _on_scrolled_by_user(self, _action: int) -> None:
        self._to_end = False

    def _on_range_changed(self, _low: int, high: int) -> None:
        if self._to_end:
            self.verticalScrollBar().setValue(high)

    def _heading(self, index: int) -> str:
        """Who wrote it, then its links: Copy, and Regenerate on the last reply."""
        message = self.messages[index]
        # The heading's first character is named after the message: where it starts,
        # found again after edits before it (a name, not a link: nothing to click).
        name = places.named(index)
        left_out = (
            f" · <span title='{OUT_OF_CONTEXT_TIP}'><i>{OUT_OF_CONTEXT}</i></span>"
            if index < self.out_of_context
            else ""
        )
        if message.role == "user":
            return f"{name}<b>You</b> &nbsp;{_action_link(f'copy:{index}', COPY)}{left_out}"
        if message.stats is None:  # still being written
            return f"{name}<b>Assistant</b>"
        links = _action_link(f"copy:{index}", COPY)
        if index == len(self.messages) - 1 and not self.read_only:
            links += f" · {_action_link('regenerate:', REGENERATE)}"
        return f"{name}<b>Assistant</b> &nbsp;{links}{left_out}"

    def copy_message(self, index: int) -> None:
        if 0 <= index < len(self.messages):
            message = self.messages[index]
            # A reply's text begins with the space its first token carries.
            QGuiApplication.clipboard().setText(message.text.strip())
            who = "your message" if message.role == "user" else "the reply"
            self.copied.emit(f"Copied {who} to the clipboard.")

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("copy:"):
            self.copy_message(int(text.split(":", 1)[1]))
            return
        if text == "regenerate:":
            self.regenerate_requested.emit()
            return
        if text.startswith("think:"):
            index = int(text.split(":", 1)[1])
            if 0 <= index < len(self.messages):
                self.messages[index].thinking_open = not self.messages[index].thinking_open
                self.render_all()


def _html(text: str) -> str:
    return escape(text).replace("\n", "<br>")
