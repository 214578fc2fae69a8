"""The transcript widget on its own: thinking blocks, highlighting, figures."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from app.ui.chat.chat_transcript import Transcript


def test_thinking_is_folded_and_unfolds(qtbot: QtBot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.add_user("Why?")
    view.start_assistant("speculative")
    view.add_pieces(
        ["<think>", "Let me", " think", "</think>", "Because", " so."], [0, 1, 0, 0, 1, 0]
    )
    message = view.messages[-1]
    assert message.thinking_text == "Let me think" and message.text == "Because so."
    assert message.draft_tokens == 2
    assert "Let me" not in view.toPlainText()  # folded while streaming
    view.finish(
        {"tokens": 6, "tok_s": 100.0, "acceptance": 0.5, "mean_accepted_length": 2.0}, "stop_token"
    )
    assert "Thinking (2 tokens)" in view.toPlainText()
    assert "Let me" not in view.toPlainText()
    view._on_anchor(QUrl("think:1"))  # the user clicks the fold
    assert "Let me think" in view.toPlainText()
    assert "6 tokens · 100.0 tok/s · acceptance 0.50 · mean accepted length 2.00" in (
        view.toPlainText()
    )
    view._on_anchor(QUrl("think:1"))
    assert "Let me" not in view.toPlainText()


def test_highlight_marks_exactly_the_drafted_tokens(qtbot: QtBot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.start_assistant("speculative")
    view.add_pieces(["a", "b", "c"], [1, 0, 1])
    view.finish({"tokens": 3}, "max_tokens")
    html = view.toHtml()
    assert html.count("background-color:#ffe8a3") == 2
    view.set_highlight(False)
    assert "#ffe8a3" not in view.toHtml()


def test_each_message_starts_on_its_own_line_while_streaming(qtbot: QtBot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.add_user("Hi?")
    view.start_assistant("speculative")
    view.add_pieces(["Hello", " there"], [0, 1])
    # Each heading holds its links (Copy; Regenerate on the last finished reply).
    assert view.toPlainText() == "You  Copy\nHi?\nAssistant\nHello there"
    view.finish({"tokens": 2}, "stop_token")
    assert view.toPlainText().endswith(
        "Assistant  Copy · Regenerate\nHello there\n2 tokens · speculative"
    )
    view.add_user("Again")
    view.start_assistant("plain")
    assert view.toPlainText().endswith("2 tokens · speculative\nYou  Copy\nAgain\nAssistant\n")


def test_the_answer_and_its_figures_are_not_indented_after_unfolded_thinking(
    qtbot: QtBot,
) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.start_assistant("speculative")
    view.add_pieces(["<think>", "Hm", "</think>", "Yes."], [0, 0, 0, 0])
    view.finish({"tokens": 2, "prefill_seconds": 0.12, "prefill_tok_s": 850.0}, "stop_token")
    view._on_anchor(QUrl("think:0"))  # unfold
    margins = {}
    block = view.document().begin()
    while block.isValid():
        margins[block.text()] = block.blockFormat().leftMargin()
        block = block.next()
    assert margins["Hm"] > 0  # the thinking is set in
    answer = next(text for text in margins if text.startswith("Yes."))
    assert "TTFT 120 ms · prefill 850 tok/s" in answer  # the figures, in the answer's block
    assert margins[answer] == 0


def _tip_at(view: Transcript, text: str) -> str:
    """The tooltip Qt shows over `text` in the transcript (its character format's)."""
    found = view.document().find(text)
    assert not found.isNull(), text
    cursor = view.textCursor()
    cursor.setPosition(found.selectionStart() + 1)
    return cursor.charFormat().toolTip()


def test_each_acceptance_figure_says_what_it_counts(qtbot: QtBot) -> None:
    """ "acceptance 0.41 · accepted when checked 0.63" said nothing of why they differ:
    each has a tooltip naming its counts (the same accepted tokens over every drafted
    token, and over the positions the target checked)."""
    view = Transcript()
    qtbot.addWidget(view)
    view.start_assistant("speculative")
    view.add_pieces(["Hi"], [1])
    stats = {
        "tokens": 130,
        "acceptance": 0.41,
        "accepted": 123,
        "drafted": 300,
        "position_reached": [100, 60, 35],
        "checked_acceptance": 0.63,
        "expected_acceptance": 0.6,
    }
    view.finish(stats, "max_tokens")
    assert "acceptance 0.41 · accepted when checked 0.63 (expected 0.60)" in view.toPlainText()
    plain = _tip_at(view, "acceptance 0.41")
    assert plain.startswith("Acceptance: drafted tokens the target accepted over every drafted")
    assert "(123 of 300)" in plain
    checked = _tip_at(view, "accepted when checked 0.63")
    assert "over the draft positions it checked (123 of 195" in checked
    assert "Expected:" in checked


def _reply(view: Transcript, words: int, tokens: int) -> None:
    view.start_assistant("speculative")
    view.add_pieces(["<think>", "Hm", " hm", "</think>"], [0, 1, 0, 0])
    view.add_pieces([f" word{i}" for i in range(words)], [i % 3 for i in range(words)])
    view.finish({"tokens": tokens}, "max_tokens")


def test_a_reply_that_ends_is_drawn_again_alone(qtbot: QtBot) -> None:
    """Its end folds its thinking and adds its figures and links; the replies before it
    keep their text as laid out (redrawing them all took 15-71 ms at 1-6 long replies),
    and the transcript reads as a full redraw draws it."""
    view = Transcript()
    qtbot.addWidget(view)
    view.add_user("First?")
    _reply(view, 400, 401)
    view.add_user("Second?")
    begins = view.document().characterCount() - 1  # where the next reply's text goes
    view.start_assistant("speculative")
    view.add_pieces(["<think>", "Hm", " hm", "</think>", "Short", " reply."], [0, 0, 0, 0, 1, 0])
    changed: list[int] = []
    view.document().contentsChange.connect(lambda at, _out, _in: changed.append(at))
    view.finish({"tokens": 3}, "stop_token")
    assert changed and min(changed) >= begins
    shown = view.toPlainText()
    assert shown.endswith(
        "Assistant  Copy · Regenerate\n▸ Thinking (2 tokens)\nShort reply.\n3 tokens · speculative"
    )
    # The earlier reply is no longer the last: it lost its Regenerate link.
    assert "Assistant  Copy\n▸ Thinking (2 tokens)\n word0 word1" in shown
    assert view.toHtml().count("regenerate:") == 1
    view.render_all()
    assert view.toPlainText() == shown


def test_a_phone_line_for_an_earlier_reply_goes_under_it(qtbot: QtBot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.add_user("First?")
    _reply(view, 5, 6)
    first = view.messages[-1]
    view.add_user("Second?")
    _reply(view, 3, 4)
    view.add_phone_line(first, "On Pixel 8: about 14.0 tok/s", "a forecast")
    shown = view.toPlainText()
    assert "6 tokens · speculative\nOn Pixel 8: about 14.0 tok/s\nYou  Copy\nSecond?" in shown
    view.render_all()
    assert view.toPlainText() == shown


def test_a_reply_stays_where_it_is_when_it_ends(qtbot: QtBot) -> None:
    """Its lines were paragraphs while streaming (with a paragraph's spacing each) and
    closed up when it ended: the text jumped under the reader's eyes."""
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(600, 600)
    view.show()  # laid out on screen: where each line is drawn
    view.add_user("Three lines?")
    view.start_assistant("speculative")
    view.add_pieces(["One.\nTwo", ".\n\nThree", "."], [0, 1, 0])

    def top(text: str) -> int:
        found = view.document().find(text)
        assert not found.isNull(), text
        return view.cursorRect(found).top()

    streamed = [top(line) for line in ("One.", "Two.", "Three.")]
    assert 0 < streamed[0] < streamed[1] < streamed[2]
    view.finish({"tokens": 3}, "stop_token")
    assert [top(line) for line in ("One.", "Two.", "Three.")] == streamed
    shown = view.toPlainText()
    view.render_all()
    assert view.toPlainText() == shown
    assert [top(line) for line in ("One.", "Two.", "Three.")] == streamed


def test_thinking_after_the_text_is_folded_when_the_reply_ends(qtbot: QtBot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.add_user("Hm?")
    view.start_assistant("speculative")
    view.add_pieces(["Well", "<think>", "Hidden", "</think>", " then."], [0, 0, 1, 0, 1])
    view.finish({"tokens": 4}, "stop_token")
    shown = view.toPlainText()
    assert shown.endswith(
        "Assistant  Copy · Regenerate\n▸ Thinking (1 tokens)\nWell then.\n4 tokens · speculative"
    )
    view.render_all()
    assert view.toPlainText() == shown
