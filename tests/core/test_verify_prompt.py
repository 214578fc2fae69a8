"""The chat prompt check's verdicts (verify_prompt.py) on the pack's chat format as
bundle.py reads it: a lost template or a dropped system message differs and is said;
a bos that only MNN leaves out is a note, not a difference. The tokenizer here is one
id per character, so the ids say exactly what the text says."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.pack.chat_format import DEFAULT_TEMPLATES, MNN_DEFAULTS, chat_format
from app.core.packmaking.verify_prompt import SourcePrompt, check_prompt
from app.core.packmaking.verify_texts import PROMPT_CONVERSATION

LLAMA_TEMPLATE = (
    "{{- bos_token }}{%- for message in messages %}"
    "{{- '<h>' + message['role'] + '</h>' + message['content'] + '<e>' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<h>assistant</h>' }}{%- endif %}"
)


def encode(text: str) -> list[int]:
    return [ord(c) for c in text]


def decode(ids: Sequence[int]) -> str:
    return "".join(chr(i) for i in ids)


def source_prompt(bos: str = "") -> SourcePrompt:
    text = bos + "".join(f"<h>{m['role']}</h>{m['content']}<e>" for m in PROMPT_CONVERSATION)
    text += "<h>assistant</h>"
    return SourcePrompt(text, tuple(encode(text)), bos)


def test_a_pack_with_the_sources_template_renders_its_prompt() -> None:
    chat = chat_format({"jinja": {"chat_template": LLAMA_TEMPLATE}}, None)
    check = check_prompt(source_prompt(), chat, encode, decode)
    assert check.compared and check.difference == "" and check.note == ""
    assert check.pack == source_prompt().text


def test_a_pack_that_lost_its_template_differs_and_says_mnns_defaults_stand_in() -> None:
    chat = chat_format({}, None)  # no jinja, no prompt templates: MNN's ChatML defaults
    assert chat.source == MNN_DEFAULTS
    check = check_prompt(source_prompt(), chat, encode, decode)
    assert check.difference.startswith("Chat prompt:")
    assert "(MNN defaults)" in check.difference and "MNN's defaults stand in" in check.difference
    assert check.pack.startswith(DEFAULT_TEMPLATES["system"].split("%s")[0])


def test_a_template_that_drops_the_system_message_differs_where_it_starts() -> None:
    dropping = LLAMA_TEMPLATE.replace(
        "for message in messages", "for message in messages if message['role'] != 'system'"
    )
    check = check_prompt(
        source_prompt(), chat_format({"jinja": {"chat_template": dropping}}, None), encode, decode
    )
    assert "after '<h>': the source has 'system</h>Yo', the pack 'user</h>Hell'" in check.difference
    assert "MNN's defaults" not in check.difference


def test_a_bos_only_mnn_leaves_out_is_a_note_not_a_difference() -> None:
    # MNN renders bos_token empty; this tokenizer adds no bos of its own.
    chat = chat_format({"jinja": {"chat_template": LLAMA_TEMPLATE}}, None)
    check = check_prompt(source_prompt(bos="<s>"), chat, encode, decode)
    assert check.difference == ""
    assert "starts with <s>, which MNN renders empty" in check.note


def test_a_source_without_a_template_is_not_compared() -> None:
    chat = chat_format({}, None)
    check = check_prompt("the source has no chat template", chat, encode, decode)
    assert not check.compared and check.difference == ""
    assert check.summary() == "chat prompt: not compared (the source has no chat template)"


def test_a_pack_template_that_refuses_the_conversation_differs_saying_why() -> None:
    refusing = "{{ raise_exception('System role not supported') }}"
    chat = chat_format({"jinja": {"chat_template": refusing}}, None)
    check = check_prompt(source_prompt(), chat, encode, decode)
    assert check.difference.startswith("Chat prompt: the pack's chat template could not be")
    assert "System role not supported" in check.difference
