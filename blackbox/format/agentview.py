"""A step as any coding agent would have taken it: what "the same step" means across agents (docs/format.md,
"Diff across agents").

Two agents given the same task never write the same payloads: their tools have other names and inputs
(Claude Code's `Bash` `{command}`, Codex's `shell` `{command: ["bash", "-lc", …]}`, Gemini CLI's
`run_shell_command`), their tools report in their own words, their requests carry their own tool lists and
system prompts, and their models phrase things differently.  So across agents a step is compared by what it
*did*: a request by the user's own words in it; a model output by its kind and the actions it asked for; a tool
call by its action (a shell command, a file read, a file edit, or any other tool by name and input); a result
by whether it failed and, for a shell command or another tool, its output text; the end by its status.
"""

from __future__ import annotations

import re
from typing import Any

from blackbox.format.canonical import canonical_bytes
from blackbox.format.typed import (
    UNSET,
    ModelInputView,
    Odd,
    RunCompletedView,
    RunFailedView,
    TextPartView,
    ToolCallView,
    ToolResultView,
    View,
    calls_in,
    view_of,
)

__all__ = ["action", "agent_of", "same_actions", "same_step"]

#: Where each agent keeps a shell command, a file to read and a file to edit in its tools' inputs.
SHELL = {"Bash": "command", "shell": "command", "shell_command": "command", "exec_command": "cmd",
         "local_shell": "command", "run_shell_command": "command"}
READ = {"Read", "read_file", "view"}
EDIT = {"Edit", "MultiEdit", "Write", "NotebookEdit", "write_file", "replace", "edit", "apply_patch"}
_PATH_KEYS = ("file_path", "absolute_path", "path", "notebook_path")
_WRAPPERS = ({"bash", "/bin/bash", "/usr/bin/bash", "zsh", "/bin/zsh", "sh", "/bin/sh"}, {"-lc", "-c"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_CODEX_TEXT = re.compile(r"(?:Process exited with code|Exit code:) (-?\d+)\b.*?\nOutput:\n(.*)\Z", re.DOTALL)
_GEMINI_TEXT = re.compile(r"\AOutput: (.*?)\nError: .*?\nExit Code: (\S+)", re.DOTALL)
_AGENTS = (("Claude Code", "claude-code"), ("Codex CLI", "codex"), ("Gemini CLI", "gemini"))


def agent_of(steps: list[Any]) -> str | None:
    """The agent an imported cassette came from (its tools say `Observed in <agent> …`), or None."""
    for step in steps:
        found = step.view() if step.type == "model_input" else None
        if not isinstance(found, ModelInputView):
            continue
        for tool in found.tools:
            for label, name in _AGENTS:
                if tool.description.startswith(f"Observed in {label} "):
                    return name
        return None
    return None


def _command(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        if len(value) == 3 and value[0] in _WRAPPERS[0] and value[1] in _WRAPPERS[1]:
            return str(value[2]).strip()
        return " ".join(value).strip()
    return value.strip() if isinstance(value, str) else canonical_bytes(value).decode()


def action(name: Any, tool_input: Any) -> tuple[Any, ...]:
    """A tool call as an action: `("shell", command)`, `("read", path)`, `("edit", paths)` or
    `("tool", name, input)`."""
    fields = tool_input if isinstance(tool_input, dict) else {}
    if not isinstance(name, str):  # a damaged cassette's name: compared as JSON, never looked up
        return ("tool", canonical_bytes(name).decode(), canonical_bytes(tool_input).decode())
    if name in SHELL:
        return ("shell", _command(fields.get(SHELL[name], fields.get("command", tool_input))))
    if name in READ or name in EDIT:
        if name == "apply_patch":
            patch = tool_input if isinstance(tool_input, str) else fields.get("input", "")
            paths = tuple(sorted(_PATCH_FILE.findall(patch))) if isinstance(patch, str) else ()
        else:
            paths = tuple(str(fields[key]) for key in _PATH_KEYS if isinstance(fields.get(key), str))[:1]
        return ("read" if name in READ else "edit", paths)
    return ("tool", name, canonical_bytes(tool_input).decode())


def _action_of(call: ToolCallView) -> tuple[Any, ...]:
    return action(call.toolName, call.toolInput)


def _same_path(a: str, b: str) -> bool:
    """The same file: equal, or one path ends with the other at a `/` (absolute and relative spellings)."""
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _same_action(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] in ("read", "edit"):
        return len(a[1]) == len(b[1]) and all(_same_path(x, y) for x, y in zip(a[1], b[1], strict=True))
    return a == b


def _output(result: ToolResultView) -> tuple[bool, str]:
    """(failed, output text) of a tool result in any agent's shape."""
    if result.failed:
        return True, str(result.error).strip()
    value = None if result.result is UNSET else result.result
    if isinstance(value, dict) and isinstance(value.get("output"), str):  # Codex: {output, metadata{exit_code}}
        metadata = value.get("metadata")
        code = metadata.get("exit_code", 0) if isinstance(metadata, dict) else 0
        return code not in (0, None), value["output"].strip()
    if not isinstance(value, str):
        return False, canonical_bytes(value).decode()
    text = value.strip()
    if (codex := _CODEX_TEXT.search(text)) is not None:
        return codex.group(1) != "0", codex.group(2).strip()
    body = text.split("\n", 2)[2] if text.startswith("Command: ") and text.count("\n") >= 2 else ""
    if (gemini := _GEMINI_TEXT.match(body)) is not None:
        return gemini.group(2) not in ("0", "(none)"), gemini.group(1).strip()
    return False, text


def _user_words(request: ModelInputView) -> list[str]:
    words = []
    for message in request.messages:
        if message.role != "user":
            continue
        if isinstance(message.content, str):
            words.append(message.content.strip())
        else:
            words += [p.text.strip() for p in message.content if isinstance(p, TextPartView) and p.text.strip()]
    return words


def _ending(found: View) -> tuple[Any, ...]:
    if isinstance(found, RunFailedView):
        return ("run_failed", found.status, found.reason)
    return ("run_completed", found.status) if isinstance(found, RunCompletedView) else ()


def same_step(kind_a: str, a: Any, kind_b: str, b: Any) -> bool:
    """Whether two steps (types and payloads) did the same thing, whichever agents took them; a payload that
    does not fit its shape (`typed.Odd`) only as the same JSON."""
    if kind_a != kind_b:
        return False
    va, vb = view_of(kind_a, a), view_of(kind_b, b)
    if isinstance(va, Odd) or isinstance(vb, Odd):
        return canonical_bytes(a) == canonical_bytes(b)
    return _same_view(va, vb)


def _same_view(a: View, b: View) -> bool:
    if isinstance(a, ModelInputView) and isinstance(b, ModelInputView):
        return _user_words(a) == _user_words(b)
    if isinstance(a, ToolCallView) and isinstance(b, ToolCallView):
        return _same_action(_action_of(a), _action_of(b))
    if isinstance(a, ToolResultView) and isinstance(b, ToolResultView):
        (failed_a, text_a), (failed_b, text_b) = _output(a), _output(b)
        if failed_a != failed_b:
            return False
        kinds = {action(name, None)[0] for name in (a.toolName, b.toolName)}
        if len(kinds) == 1 and kinds <= {"read", "edit"}:
            return True  # both read (or edited) a file: each agent's tool reports it in its own words
        return failed_a or text_a == text_b
    if isinstance(a, RunCompletedView | RunFailedView):
        return _ending(a) == _ending(b)
    calls_a, calls_b = calls_in(a), calls_in(b)  # two model outputs
    if bool(calls_a) != bool(calls_b):
        return False
    if not calls_a:  # the answers' words are the verdict's to compare
        return getattr(a, "stop", UNSET) == getattr(b, "stop", UNSET)
    return len(calls_a) == len(calls_b) and all(
        _same_action(_action_of(x), _action_of(y)) for x, y in zip(calls_a, calls_b, strict=True))


def same_actions(calls_a: list[Any], calls_b: list[Any]) -> bool:
    """Whether two runs' tool calls (`tool_call` payloads, in order) are the same actions."""
    views_a, views_b = [view_of("tool_call", c) for c in calls_a], [view_of("tool_call", c) for c in calls_b]
    return len(views_a) == len(views_b) and all(
        isinstance(x, ToolCallView) and isinstance(y, ToolCallView) and _same_action(_action_of(x), _action_of(y))
        for x, y in zip(views_a, views_b, strict=True))
