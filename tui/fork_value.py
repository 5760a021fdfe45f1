"""The value a fork starts from, as the fork form offers it for editing: the recorded result as JSON, or, for an MCP
tool result that holds one text block, that text itself — not a JSON string to edit inside the result's JSON —
written back into its block (the result's other blocks and fields kept) when the fork runs.

No Textual here: the form shows what this module gives and hands back what was typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blackbox.format.canonical import decode_json
from blackbox.format.cassette import Step
from blackbox.format.inert import inert
from blackbox.format.typed import UNSET, McpTextBlock, ToolResultView, mcp_block, mcp_result

from .run import pretty_json

__all__ = ["TextBlock", "initial_value", "text_block"]


def initial_value(step: Step) -> str:
    """The recorded result as editable JSON (an error result starts from its message, as a JSON string; a
    payload that does not fit a result's shape, from all of it)."""
    found = step.view()
    if not isinstance(found, ToolResultView):
        return str(pretty_json(step.payload))
    value = found.result if found.result is not UNSET else found.error
    return str(pretty_json(None if value is UNSET else value))


@dataclass(frozen=True)
class TextBlock:
    """An MCP `tools/call` result (`result`) whose content holds one text block, at `at`: its `text`."""

    result: dict[str, Any]
    at: int

    @property
    def text(self) -> str:
        return str(self.result["content"][self.at]["text"])

    def with_text(self, text: str) -> dict[str, Any]:
        """The result with `text` in its text block.  Structured content that was the old text's JSON follows
        the new text (a client checks one against the other for a tool with an output schema): the new text's
        JSON object, or none when the new text is not one."""
        content = list(self.result["content"])
        content[self.at] = {**content[self.at], "text": text}
        result = {**self.result, "content": content}
        if "structuredContent" in result and _json(self.text) == result["structuredContent"]:
            structured = _json(text)
            if isinstance(structured, dict):
                result["structuredContent"] = structured
            else:
                del result["structuredContent"]
        return result


_NOT_JSON: Any = object()


def _json(text: str) -> Any:
    try:
        return decode_json(text)
    except ValueError:
        return _NOT_JSON


def text_block(step_or_result: Step | Any) -> TextBlock | None:
    """The one text block of a tool result (a step, or a result value) shaped as an MCP `tools/call` result, or
    None: not such a result, an error, no text block or several, or a text holding a character a terminal would
    obey (then the JSON, which escapes it, is what can be edited)."""
    if isinstance(step_or_result, Step):
        found = step_or_result.view()
        if not isinstance(found, ToolResultView) or found.result is UNSET:
            return None
        value = found.result
    else:
        value = step_or_result
    shaped = mcp_result(value)
    if shaped is None or not isinstance(value, dict):
        return None
    texts = [i for i, block in enumerate(shaped.content) if isinstance(mcp_block(block), McpTextBlock)]
    if len(texts) != 1:
        return None
    found_block = TextBlock(value, texts[0])
    if any(c not in "\n\t" and inert(c) != c for c in found_block.text):
        return None
    return found_block
