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
        if step.type != "model_input" or not isinstance(step.payload, dict):
            continue
        for tool in step.payload.get("tools") or []:
            description = tool.get("description") if isinstance(tool, dict) else None
            for label, name in _AGENTS:
                if isinstance(description, str) and description.startswith(f"Observed in {label} "):
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


def _action_of(call: dict[str, Any]) -> tuple[Any, ...]:
    return action(call.get("toolName"), call.get("toolInput"))


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


def _output(payload: dict[str, Any]) -> tuple[bool, str]:
    """(failed, output text) of a tool result in any agent's shape."""
    if "error" in payload:
        return True, str(payload["error"]).strip()
    value = payload.get("result")
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


def _user_words(payload: dict[str, Any]) -> list[str]:
    words = []
    for message in payload.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            words.append(content.strip())
        elif isinstance(content, list):
            texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
            words += [t.strip() for t in texts if isinstance(t, str) and t.strip()]
    return words


def _calls(payload: dict[str, Any]) -> list[dict[str, Any]]:
    if payload.get("type") == "tool_call":
        return [payload]
    calls = payload.get("calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def same_step(kind_a: str, a: Any, kind_b: str, b: Any) -> bool:
    """Whether two steps (types and payloads) did the same thing, whichever agents took them."""
    if kind_a != kind_b:
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        return canonical_bytes(a) == canonical_bytes(b)
    if kind_a == "model_input":
        return _user_words(a) == _user_words(b)
    if kind_a == "model_output":
        calls_a, calls_b = _calls(a), _calls(b)
        if bool(calls_a) != bool(calls_b):
            return False
        if not calls_a:
            return a.get("stop") == b.get("stop")  # the answers' words are the verdict's to compare
        return len(calls_a) == len(calls_b) and all(
            _same_action(_action_of(x), _action_of(y)) for x, y in zip(calls_a, calls_b, strict=True))
    if kind_a == "tool_call":
        return _same_action(_action_of(a), _action_of(b))
    if kind_a == "tool_result":
        (failed_a, text_a), (failed_b, text_b) = _output(a), _output(b)
        if failed_a != failed_b:
            return False
        kinds = {action(name, None)[0] for name in (a.get("toolName"), b.get("toolName"))}  # names: any JSON
        if len(kinds) == 1 and kinds <= {"read", "edit"}:
            return True  # both read (or edited) a file: each agent's tool reports it in its own words
        return failed_a or text_a == text_b
    if kind_a == "metadata":
        return (a.get("event"), a.get("status"), a.get("reason")) == (b.get("event"), b.get("status"), b.get("reason"))
    return canonical_bytes(a) == canonical_bytes(b)


def same_actions(calls_a: list[Any], calls_b: list[Any]) -> bool:
    """Whether two runs' tool calls (`tool_call` payloads, in order) are the same actions."""
    return len(calls_a) == len(calls_b) and all(
        isinstance(x, dict) and isinstance(y, dict) and _same_action(_action_of(x), _action_of(y))
        for x, y in zip(calls_a, calls_b, strict=True))
