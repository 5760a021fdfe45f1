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
from blackbox.format.inert import inert, inert_lines

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


def _part(part: Any, unfold: bool) -> Content:
    if not isinstance(part, dict):
        return _fold(pretty_json(part), unfold)
    kind = part.get("type")
    name = inert(str(part.get("toolName", "?")))
    call_id = inert(str(part.get("toolCallId", "")))
    if kind == "text":
        return _fold(str(part.get("text", "")), unfold)
    if kind == "tool_use":
        head = Content.assemble(("→ call ", "bold $text-warning"), (name, "bold"), (f"  {call_id}", "$text-muted"))
        return head + "\n" + _indent(_fold(compact_json(part.get("toolInput")), unfold))
    if kind == "tool_result" and "error" in part:
        head = Content.assemble(("← error ", "bold $text-error"), (name, "bold"), (f"  {call_id}", "$text-muted"))
        return head + "\n" + _indent(Content.styled(inert_lines(str(part.get("error"))), "$text-error"))
    if kind == "tool_result":
        head = Content.assemble(("← result ", "bold $text-success"), (name, "bold"), (f"  {call_id}", "$text-muted"))
        return head + "\n" + _indent(_fold(_readable(part.get("result")), unfold))
    return _fold(pretty_json(part), unfold)


def _message(message: Any, unfold: bool) -> Content:
    if not isinstance(message, dict):
        return _fold(pretty_json(message), unfold)
    role = inert(str(message.get("role", "?")))
    head = Content.styled(role, ROLE_STYLES.get(role, "bold"))
    content = message.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    body = Content("\n").join(_indent(_part(part, unfold)) for part in parts)
    return head + "\n" + body


def conversation_content(payload: Any, unfold: bool = False) -> Content:
    """The whole request as readable text: model and params, system prompt, messages, tool names."""
    if not isinstance(payload, dict):
        return Content.styled("This step is not a model request.", "$text-muted")
    blocks: list[Content] = []
    facts = [f"model {inert(payload['model'])}" if isinstance(payload.get("model"), str) else ""]
    if isinstance(payload.get("params"), dict):
        facts.append(inert(compact_json(payload["params"])))
    if any(facts):
        blocks.append(Content.styled("  ".join(f for f in facts if f), "$text-muted"))
    if isinstance(payload.get("systemPrompt"), str):
        blocks.append(Content.styled("system", ROLE_STYLES["system"]) + "\n"
                      + _indent(_fold(payload["systemPrompt"], unfold)))
    messages = payload.get("messages")
    for message in messages if isinstance(messages, list) else []:
        blocks.append(_message(message, unfold))
    tools = payload.get("tools")
    if isinstance(tools, list) and tools:
        names = ", ".join(str(t.get("name", "?")) if isinstance(t, dict) else "?" for t in tools)
        blocks.append(Content.styled(f"tools: {inert(names)}", "$text-muted"))
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
        self._payload: Any = None

    def compose(self) -> ComposeResult:
        yield Static(id="conversation-text")

    def show(self, payload: Any) -> None:
        self._payload = payload
        self.query_one("#conversation-text", Static).update(conversation_content(payload, self.unfold))
        self.scroll_home(animate=False)

    def show_content(self, content: Content) -> None:
        """Something already readable (an MCP result's content blocks) in place of a conversation."""
        self._payload = None
        self.query_one("#conversation-text", Static).update(content)
        self.scroll_home(animate=False)

    def toggle_fold(self) -> None:
        self.unfold = not self.unfold
        self.query_one("#conversation-text", Static).update(conversation_content(self._payload, self.unfold))
