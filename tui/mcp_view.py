"""MCP tool steps as people read them: which server a tool came from, and a result's content blocks.

A reading of the steps, never a change to them: the server is the `mcp.server` field of a call Blackbox
recorded, the `mcp:<server>:<method>` name of a protocol request, or the `mcp__<server>__<tool>` name Claude Code
gives an MCP tool (imports keep that name as it was).  Everything shown is made inert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blackbox.format.cassette import Step
from blackbox.format.inert import inert, inert_lines
from blackbox.format.typed import (
    UNSET,
    McpAudioBlock,
    McpImageBlock,
    McpLinkBlock,
    McpResourceBlock,
    McpTextBlock,
    ToolCallView,
    ToolResultView,
    mcp_block,
    mcp_of,
    mcp_result,
)
from blackbox.format.writing import pretty_json

if TYPE_CHECKING:
    from textual.content import Content

__all__ = ["mcp_content", "mcp_origin", "with_origin"]


def mcp_origin(step: Step) -> tuple[str, str] | None:
    """(server, tool or method) of an MCP tool step, or None for any other step (or one whose payload does not
    fit its shape)."""
    found = step.view()
    if not isinstance(found, ToolCallView | ToolResultView):
        return None
    name = found.toolName
    extra = mcp_of(step.payload)
    if extra is not None and extra.server is not UNSET:
        return extra.server, name
    if name.startswith("mcp:") and name.count(":") >= 2:
        _, server, method = name.split(":", 2)
        return server, method
    if name.startswith("mcp__") and "__" in name[5:]:
        server, tool = name[5:].split("__", 1)
        if server and tool:
            return server, tool
    return None


def with_origin(summary: str, origin: tuple[str, str] | None) -> str:
    """A step's one-line summary with the MCP server it came from."""
    return summary if origin is None else f"{summary}  · MCP {origin[0]}"


def _block(value: Any) -> Content:
    """One content block readably; a kind this version does not know, or one that does not fit, as its JSON."""
    from textual.content import Content

    block = mcp_block(value)
    if isinstance(block, McpTextBlock):
        return Content(inert_lines(block.text))
    if isinstance(block, McpImageBlock | McpAudioBlock):
        kind = "image" if isinstance(block, McpImageBlock) else "audio"
        return Content.styled(f"[{kind} {inert(block.mimeType)}, {len(block.data)} base64 characters]",
                              "$text-muted")
    if isinstance(block, McpLinkBlock):
        return Content.styled(f"→ {inert(block.uri)}  {inert(block.name)}", "$text-accent")
    if isinstance(block, McpResourceBlock):
        head = Content.styled(f"resource {inert(block.resource.uri)}", "$text-accent")
        body = block.resource.text
        return head + ("\n" + Content(inert_lines(body)) if body is not UNSET else Content(""))
    return Content(inert_lines(pretty_json(value)))


def mcp_content(step: Step) -> Content | None:
    """An MCP result step's content blocks readably (text as text, structured content as JSON), or None (not
    a result, or one whose payload does not fit its shape: the JSON tab shows it as it is)."""
    from textual.content import Content

    found = step.view()
    if not isinstance(found, ToolResultView):
        return None
    extra = mcp_of(step.payload)
    value = found.result if found.result is not UNSET else (extra.result if extra is not None else UNSET)
    parts: list[Content] = []
    if found.failed:
        parts.append(Content.styled(f"error: {inert_lines(str(found.error))}", "bold $text-error"))
    result = mcp_result(value)
    if result is not None:
        parts.extend(_block(block) for block in result.content)
        if result.structuredContent is not UNSET:
            parts.append(Content.styled("structured content", "$text-muted") + "\n"
                         + Content(inert_lines(pretty_json(result.structuredContent))))
    elif value is not UNSET and value is not None:
        parts.append(Content(inert_lines(pretty_json(value))))
    for progress in extra.progress if extra is not None else []:
        parts.append(Content.styled(f"progress {inert(pretty_json(progress, indent=0))}", "$text-muted"))
    return Content("\n\n").join(parts) if parts else None
