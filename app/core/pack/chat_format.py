"""How a pack turns a conversation into the prompt text its model was trained on.

Packs spell it in one of two ways:

- `jinja.chat_template` (and `jinja.eos`) in llm_config.json: MNN's exporter since 3.4
  and llmexport 0.0.5; `tokenizer.mtok` may carry the same template;
- MNN's exporter 3.1-3.3: `bos` plus `system_prompt_template`, `user_prompt_template`
  and `assistant_prompt_template`, each with one `%s` for the message's text. A
  conversation is bos, each message in its role's template, then the assistant
  template up to its `%s` (the exporter's own `build_prompt`).

MNN 3.6.1 no longer reads the second spelling: with no jinja template its
`apply_chat_template` joins the messages' texts with nothing between them, so a 2025
pack would chat with no turn markers at all. `engine_template()` gives such a pack a
jinja template that renders exactly what its prompt templates say; the engine sets it
in MNN's config, though it renders every prompt itself (`engine_prompt`).

Two packs use the same format when they render the same prompt for the same
conversation (`prompt_sha256`), however they spell it.

A jinja template is a stranger's program: it is only ever rendered under a budget
(template_budget.py), and one that fails there is that pack's `problem`, never an error
for whoever asked.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from app.core.pack.template_budget import TemplateFailed, TemplateRefused, render

log = logging.getLogger("draftdeck.pack")

UNRENDERABLE = "template could not be rendered"

JINJA, PROMPT_TEMPLATES, MNN_DEFAULTS = "jinja", "prompt templates", "MNN defaults"
ROLES = ("system", "user", "assistant")
TEMPLATE_KEYS = {role: f"{role}_prompt_template" for role in ROLES}
# MNN's llmconfig.hpp defaults, used when a pack names no format at all.
DEFAULT_TEMPLATES = {
    "system": "<|im_start|>system\n%s<|im_end|>\n",
    "user": "<|im_start|>user\n%s<|im_end|>\n",
    "assistant": "<|im_start|>assistant\n%s<|im_end|>\n",
}
SLOT = "%s"
# The conversation both spellings are rendered with to compare them: a system message
# (so templates with a default system prompt add none), a finished exchange, a question.
SAMPLE_CONVERSATION: tuple[Mapping[str, str], ...] = (
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi there."},
    {"role": "user", "content": "What is 2+2?"},
)


@dataclass(frozen=True)
class ChatFormat:
    source: str  # JINJA, PROMPT_TEMPLATES or MNN_DEFAULTS
    text: str  # the jinja template, or the templates joined as the pack spells them
    eos: str | None  # the end-of-turn marker (jinja.eos)
    bos: str
    templates: Mapping[str, str]  # by role; empty for JINJA

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, messages: Sequence[Mapping[str, str]] = SAMPLE_CONVERSATION) -> str:
        """The prompt for `messages` ending where the assistant's reply starts. Raises
        TemplateFailed (TemplateRefused: the template refuses these messages)."""
        return self._rendered(messages, self.bos)

    def engine_prompt(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The prompt MNN 3.6.1's apply_chat_template makes of `messages` (measured: it
        gives a jinja template an empty bos_token, whatever the pack says). Raises
        TemplateFailed like `render`."""
        return self._rendered(messages, "" if self.source == JINJA else self.bos)

    def _rendered(self, messages: Sequence[Mapping[str, str]], bos: str) -> str:
        if self.source == JINJA:
            return _render_jinja(self.text, bos, self.eos or "", messages)
        prompt = bos
        for message in messages:
            prompt += self.templates[message["role"]].replace(SLOT, message["content"], 1)
        return prompt + self.templates["assistant"].split(SLOT, 1)[0]

    @cached_property
    def prompt_sha256(self) -> str | None:
        """The sample conversation's prompt, hashed: equal means the same format; None
        when the template does not render it. Kept: every pair a pack is judged in asks
        (a jinja render each was 85 % of judging a pair, 0.8 ms)."""
        return self._sample[0]

    @cached_property
    def problem(self) -> str | None:
        """Why this pack cannot chat: "template could not be rendered: <why>"; None when
        the template renders, or only refuses the sample conversation (as Gemma's refuses
        a system message)."""
        return self._sample[1]

    @cached_property
    def _sample(self) -> tuple[str | None, str | None]:
        known = _FAILED_SAMPLES.get((self.text, self.bos, self.eos))
        if known is not None:
            return None, known
        try:
            return _digest(self.render()), None
        except TemplateRefused as exc:
            log.info("chat template refuses the sample conversation: %s", exc.why)
            return None, None
        except TemplateFailed as exc:
            log.info("chat template could not be rendered: %s", exc.why)
            problem = f"{UNRENDERABLE}: {exc.why}"
            _remember_failure((self.text, self.bos, self.eos), problem)
            return None, problem

    def engine_template(self) -> str | None:
        """A jinja template MNN renders like these prompt templates; None for JINJA (MNN
        reads that one itself)."""
        if self.source == JINJA:
            return None
        parts = [_literal(self.bos), "{% for message in messages %}"]
        for index, role in enumerate(ROLES):
            before, _, after = self.templates[role].partition(SLOT)
            keyword = "if" if index == 0 else "elif"
            parts.append(
                f"{{% {keyword} message['role'] == '{role}' %}}"
                f"{_literal(before)}{{{{ message['content'] }}}}{_literal(after)}"
            )
        prefix = self.templates["assistant"].split(SLOT, 1)[0]
        parts.append("{% endif %}{% endfor %}")
        parts.append(f"{{% if add_generation_prompt %}}{_literal(prefix)}{{% endif %}}")
        return "".join(parts)


def _literal(text: str) -> str:
    """Text as a jinja string expression: literal text beside tags is subject to
    trim_blocks/lstrip_blocks, a string expression never is."""
    if not text:
        return ""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return '{{ "' + escaped + '" }}'


def chat_format(llm_config: Mapping[str, Any], tokenizer_template: str | None) -> ChatFormat:
    """The pack's format: its jinja template (config first, as MNN merges them, then the
    tokenizer file's), else its prompt templates, else MNN's ChatML defaults."""
    jinja = llm_config.get("jinja")
    template = jinja.get("chat_template") if isinstance(jinja, Mapping) else None
    eos = jinja.get("eos") if isinstance(jinja, Mapping) else None
    bos = llm_config.get("bos")
    bos = bos if isinstance(bos, str) else ""
    if not isinstance(template, str) or not template:
        template = tokenizer_template
    if template:
        return ChatFormat(JINJA, template, eos if isinstance(eos, str) else None, bos, {})
    spelled = {
        role: value
        for role, key in TEMPLATE_KEYS.items()
        if isinstance(value := llm_config.get(key), str)
    }
    source = PROMPT_TEMPLATES if spelled else MNN_DEFAULTS
    templates = {role: spelled.get(role, DEFAULT_TEMPLATES[role]) for role in ROLES}
    # A template without a slot would drop the message: MNN read it as "role\ntext\n".
    templates = {
        role: value if SLOT in value else f"{role}\n{SLOT}\n" for role, value in templates.items()
    }
    text = bos + "".join(templates[role] for role in ROLES)
    end = templates["assistant"].partition(SLOT)[2].strip() or None
    return ChatFormat(source, text, end, bos, templates)


def jinja_setting(fmt: ChatFormat) -> dict[str, str] | None:
    """The `jinja` setting that makes MNN 3.6.1 render a pack's prompt templates; None
    when MNN already has a jinja template for it."""
    template = fmt.engine_template()
    if template is None:
        return None
    return {"chat_template": template, "eos": fmt.eos or ""}


def _digest(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


# Templates that failed the sample conversation, by (text, bos, eos): a hostile one
# costs its budget once, not once per read of its pack (a library rescan reads anew).
_FAILED_SAMPLES: dict[tuple[str, str, str | None], str] = {}
_FAILED_KEPT = 64


def _remember_failure(key: tuple[str, str, str | None], problem: str) -> None:
    if len(_FAILED_SAMPLES) >= _FAILED_KEPT:
        del _FAILED_SAMPLES[next(iter(_FAILED_SAMPLES))]
    _FAILED_SAMPLES[key] = problem


def _render_jinja(template: str, bos: str, eos: str, messages: Sequence[Mapping[str, str]]) -> str:
    return render(
        template,
        {
            "messages": [dict(m) for m in messages],
            "add_generation_prompt": True,
            "bos_token": bos,
            "eos_token": eos,
        },
    )
