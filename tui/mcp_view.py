"""MCP tool steps as people read them: which server a tool came from, and a result's content blocks.

A reading of the steps, never a change to them: the server is the `mcp.server` field of a call Blackbox
recorded, the `mcp:<server>:<method>` name of a protocol request, or the `mcp__<server>__<tool>` name Claude Code
gives an MCP tool (imports keep that name as it was).  Everything shown is made inert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blackbox.format.inert import inert, inert_lines
from blackbox.format.writing import pretty_json

if TYPE_CHECKING:
    from textual.content import Content

__all__ = ["mcp_content", "mcp_origin", "with_origin"]


def mcp_origin(payload: Any) -> tuple[str, str] | None:
    """(server, tool or method) of an MCP tool step, or None for any other step."""
    if not isinstance(payload, dict) or not isinstance(payload.get("toolName"), str):
        return None
    name: str = payload["toolName"]
    extra = payload.get("mcp")
    if isinstance(extra, dict) and isinstance(extra.get("server"), str):
        return extra["server"], name
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


def _block(block: Any) -> Content:
    from textual.content import Content

    if not isinstance(block, dict):
        return Content(inert_lines(pretty_json(block)))
    kind = block.get("type")
    if kind == "text":
        return Content(inert_lines(str(block.get("text", ""))))
    if kind in ("image", "audio"):
        size = len(block.get("data", "")) if isinstance(block.get("data"), str) else 0
        return Content.styled(f"[{kind} {inert(str(block.get('mimeType', '?')))}, {size} base64 characters]",
                              "$text-muted")
    if kind == "resource_link":
        return Content.styled(f"→ {inert(str(block.get('uri', '?')))}  {inert(str(block.get('name', '')))}",
                              "$text-accent")
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        head = Content.styled(f"resource {inert(str(resource.get('uri', '?')))}", "$text-accent")
        body = resource.get("text")
        return head + ("\n" + Content(inert_lines(str(body))) if isinstance(body, str) else Content(""))
    return Content(inert_lines(pretty_json(block)))


def mcp_content(payload: Any) -> Content | None:
    """An MCP result step's content blocks readably (text as text, structured content as JSON), or None."""
    from textual.content import Content

    if not isinstance(payload, dict):
        return None
    found = payload.get("mcp")
    extra: dict[str, Any] = found if isinstance(found, dict) else {}
    result = payload.get("result") if isinstance(payload.get("result"), dict) else extra.get("result")
    parts: list[Content] = []
    if "error" in payload:
        parts.append(Content.styled(f"error: {inert_lines(str(payload['error']))}", "bold $text-error"))
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        parts.extend(_block(block) for block in result["content"])
        if "structuredContent" in result:
            parts.append(Content.styled("structured content", "$text-muted") + "\n"
                         + Content(inert_lines(pretty_json(result["structuredContent"]))))
    elif isinstance(result, dict):
        parts.append(Content(inert_lines(pretty_json(result))))
    for progress in extra.get("progress", []) if isinstance(extra.get("progress"), list) else []:
        parts.append(Content.styled(f"progress {inert(pretty_json(progress, indent=0))}", "$text-muted"))
    return Content("\n\n").join(parts) if parts else None
