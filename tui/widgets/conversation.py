"""A `model_input` as a conversation: the system prompt, each message by role, tool calls and results.

Long text is folded to a few lines (`z` unfolds everything); tool inputs and results are shown as JSON.
Every string is made inert first: a message may hold escape sequences that a terminal would obey.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from blackbox.format.canonical import decode_json
from blackbox.format.cassette import Step
from blackbox.format.inert import inert, inert_lines
from blackbox.format.typed import (
    UNSET,
    MessageView,
    ModelInputView,
    Odd,
    PartView,
    TextPartView,
    ToolUsePartView,
)

from ..run import compact_json, pretty_json

__all__ = ["ConversationView", "conversation_content"]

FOLD_LINES = 8
ROLE_STYLES = {"user": "bold $text-primary", "assistant": "bold $text-accent", "system": "bold $text-secondary"}


def _fold(text: str, unfold: bool) -> Content:
    text = inert_lines(text)
    lines = text.split("\n")
    if unfold or len(lines) <= FOLD_LINES:
        return Content(text)
    hidden = len(lines) - FOLD_LINES
    return Content("\n".join(lines[:FOLD_LINES])) + Content.styled(
        f"\n… {hidden} more line{'s' if hidden != 1 else ''} (z unfolds)", "italic $text-muted"
    )


def _readable(value: Any) -> str:
    """A result as text: a string holding JSON (as SDK tool results often are) is shown as that JSON."""
    if isinstance(value, str):
        try:
            decoded = decode_json(value)
        except ValueError:
            return value
        return str(pretty_json(decoded)) if isinstance(decoded, dict | list) else value
    return str(pretty_json(value))


def _indent(content: Content, prefix: str = "  ") -> Content:
    return Content("\n").join(Content(prefix) + line for line in content.split("\n"))


def _part(part: PartView, unfold: bool) -> Content:
    if isinstance(part, TextPartView):
        return _fold(part.text, unfold)
    name, call_id = inert(part.toolName), inert(part.toolCallId)
    if isinstance(part, ToolUsePartView):
        head = Content.assemble(("→ call ", "bold $text-warning"), (name, "bold"), (f"  {call_id}", "$text-muted"))
        return head + "\n" + _indent(_fold(compact_json(part.toolInput), unfold))
    if part.error is not UNSET:
        head = Content.assemble(("← error ", "bold $text-error"), (name, "bold"), (f"  {call_id}", "$text-muted"))
        return head + "\n" + _indent(Content.styled(inert_lines(str(part.error)), "$text-error"))
    head = Content.assemble(("← result ", "bold $text-success"), (name, "bold"), (f"  {call_id}", "$text-muted"))
    return head + "\n" + _indent(_fold(_readable(None if part.result is UNSET else part.result), unfold))


def _message(message: MessageView, unfold: bool) -> Content:
    role = inert(message.role)
    head = Content.styled(role, ROLE_STYLES.get(role, "bold"))
    parts = [TextPartView(message.content)] if isinstance(message.content, str) else message.content
    body = Content("\n").join(_indent(_part(part, unfold)) for part in parts)
    return head + "\n" + body


def conversation_content(step: Step | None, unfold: bool = False) -> Content:
    """The whole request as readable text: model and params, system prompt, messages, tool names; a request
    whose payload does not fit its shape says where and shows its JSON."""
    found = step.view() if step is not None and step.type == "model_input" else None
    if found is None:
        return Content.styled("This step is not a model request.", "$text-muted")
    if not isinstance(found, ModelInputView):
        why = found.why if isinstance(found, Odd) else "it is not a model request"
        return (Content.styled(f"? This request {inert(why)}; its JSON as recorded:", "$text-warning") + "\n\n"
                + _fold(pretty_json(step.payload if step is not None else None), unfold))
    blocks: list[Content] = []
    facts = [f"model {inert(found.model)}" if isinstance(found.model, str) else ""]
    if found.params is not UNSET:
        facts.append(inert(compact_json(found.params)))
    if any(facts):
        blocks.append(Content.styled("  ".join(f for f in facts if f), "$text-muted"))
    if found.systemPrompt is not UNSET:
        blocks.append(Content.styled("system", ROLE_STYLES["system"]) + "\n"
                      + _indent(_fold(found.systemPrompt, unfold)))
    blocks.extend(_message(message, unfold) for message in found.messages)
    if found.tools:
        blocks.append(Content.styled(f"tools: {inert(', '.join(tool.name for tool in found.tools))}", "$text-muted"))
    return Content("\n\n").join(blocks)


class ConversationView(VerticalScroll):
    """Scrollable conversation of one model request."""

    DEFAULT_CSS = """
    ConversationView {
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unfold = False
        self._step: Step | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="conversation-text")

    def show(self, step: Step | None) -> None:
        """A model request's step (any other step, or None, says it is not one)."""
        self._step = step
        self.query_one("#conversation-text", Static).update(conversation_content(step, self.unfold))
        self.scroll_home(animate=False)

    def show_content(self, content: Content) -> None:
        """Something already readable (an MCP result's content blocks) in place of a conversation."""
        self._step = None
        self.query_one("#conversation-text", Static).update(content)
        self.scroll_home(animate=False)

    def toggle_fold(self) -> None:
        self.unfold = not self.unfold
        self.query_one("#conversation-text", Static).update(conversation_content(self._step, self.unfold))
