"""Write the coding-agent session fixtures of tests/fixtures/import/ (run it again after changing them).

The files take the record shapes Claude Code, Codex CLI and Gemini CLI write (envelopes, item types, ids,
event lines, telemetry); the content is our own.  Three of them are one task done by each agent ("the VAT
test fails: fix it"), so they can be diffed across agents; the long Codex rollout compacts its history half
way; the Gemini log re-appends messages as the CLI does and rewinds.

Each fixture's expected cassette (`<name>.expected.json`) is written from the same session told as a plain
story (`tests/import_rules.Story`: what was said, called and returned, and when) by the import rules of
docs/format.md (`tests/import_rules.expected_cassette`), never by an importer: the import tests compare each
importer's cassette with it, and check that these files are what the stories give.

Run: `python scripts/agent_fixtures.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from blackbox.format.writing import dumps  # noqa: E402
from tests.import_rules import Call, Compacted, Said, Story, Turn, expected_cassette, ms  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "import"
#: The tool descriptions the rules give each agent's observed tools (docs/format.md: hashed, exact words).
CLAUDE_TOOLS = "Observed in Claude Code transcript; original definition unavailable."
CODEX_TOOLS = "Observed in Codex CLI rollout; original definition unavailable."
GEMINI_TOOLS = "Observed in Gemini CLI session; original definition unavailable."
PROMPT = "The VAT test in tests/test_tax.py fails. Find out why and fix it."
CWD = "/home/dev/shop"
FAILING = ("F.\n=== FAILURES ===\ntest_apply_vat: assert apply_vat(100) == 120.0 (got 119.0)\n"
           "1 failed, 1 passed in 0.04s\n")
PASSING = "..\n2 passed in 0.03s\n"
TAX_PY = "RATE = 0.19\n\n\ndef apply_vat(net: float) -> float:\n    return round(net * (1 + RATE), 2)\n"
ANSWER = ("The VAT rate in tax.py was 0.19 while the test (and the shop's country) uses 20%. I set RATE = 0.20; "
          "both tax tests pass now.")


class Clock:
    def __init__(self, start: str = "2026-11-30T09:15:00") -> None:
        from datetime import datetime

        self.now = datetime.fromisoformat(start)

    def tick(self, ms: int = 1200) -> str:
        from datetime import timedelta

        self.now += timedelta(milliseconds=ms)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


class Fixture:
    """One transcript's records, the story they tell, and the trace id and start time of its expected cassette."""

    def __init__(self, name: str, lines: list[Any], story: Story, trace_id: str, created_at: int) -> None:
        self.name, self.lines, self.story, self.trace_id, self.created_at = name, lines, story, trace_id, created_at

    def transcript(self) -> bytes:
        text = "\n".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in self.lines) + "\n"
        return text.encode("utf-8")

    def expected(self) -> bytes:
        return dumps(expected_cassette(self.story, self.trace_id, self.created_at))

    def write(self) -> None:
        (OUT / self.name).write_bytes(self.transcript())
        (OUT / self.name.replace(".jsonl", ".expected.json")).write_bytes(self.expected())


# ---------------------------------------------------------------------------------------------------------
# Claude Code


def claude_code() -> Fixture:
    clock = Clock()
    session = "7d3c1f2e-5a44-4b8e-9a0d-2f6b8c1e9a31"
    lines: list[Any] = []
    parent: list[str | None] = [None]
    count = [0]

    def envelope(kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        count[0] += 1
        uuid = f"{count[0]:08d}-1111-4222-8333-444455556666"
        line = {"parentUuid": parent[0], "isSidechain": False, "userType": "external", "cwd": CWD,
                "sessionId": session, "version": "2.0.31", "gitBranch": "main", "type": kind,
                "message": message, "uuid": uuid, "timestamp": clock.tick(), **extra}
        parent[0] = uuid
        return line

    def assistant(mid: str, block: dict[str, Any]) -> dict[str, Any]:
        return envelope("assistant", {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [block], "stop_reason": None,
                                      "usage": {"input_tokens": 12, "output_tokens": 40}}, requestId=f"req_{mid}")

    def result(tool_id: str, content: str, is_error: bool = False) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        return envelope("user", {"role": "user", "content": [block]},
                        toolUseResult={"stdout": content, "stderr": "", "interrupted": False})

    story = Story(CLAUDE_TOOLS, "\n")

    def turn(mid: str, *blocks: dict[str, Any]) -> Turn:
        """The lines of one model turn (one per block, as Claude Code writes them); thinking is dropped."""
        first = None
        for block in blocks:
            lines.append(assistant(mid, block))
            first = first or lines[-1]
        assert first is not None
        told = Turn(ms(first["timestamp"]), [b["text"] for b in blocks if b["type"] == "text"])
        story.items.append(told)
        return told

    def answered(told: Turn, tool_id: str, content: str, is_error: bool = False) -> None:
        """The result line of the turn's call `tool_id`: the story's call gets its result (an error: its text)."""
        lines.append(result(tool_id, content, is_error))
        block = next(b for line in lines if line.get("type") == "assistant" for b in line["message"]["content"]
                     if b.get("id") == tool_id)
        told.calls.append(Call(block["name"], block["input"], content, ms(lines[-1]["timestamp"]), is_error))

    def use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}

    lines.append({"type": "summary", "summary": "Fix VAT rate", "leafUuid": "x"})
    lines.append(envelope("user", {"role": "user", "content": PROMPT}))
    story.items.append(Said(PROMPT))
    created_at = ms(lines[-1]["timestamp"])
    told = turn("msg_01A", {"type": "thinking", "thinking": "Run the tests first.", "signature": "c2ln"},
                {"type": "text", "text": "I'll run the failing test first."},
                use("toolu_01Run", "Bash", {"command": "pytest -q tests/test_tax.py",
                                            "description": "Run the tax tests"}))
    answered(told, "toolu_01Run", "Exit code 1\n" + FAILING.rstrip("\n"), is_error=True)
    told = turn("msg_01B", use("toolu_01Read", "Read", {"file_path": f"{CWD}/tax.py"}))
    answered(told, "toolu_01Read", "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(TAX_PY.splitlines(), start=1)))
    told = turn("msg_01C", use("toolu_01Edit", "Edit", {"file_path": f"{CWD}/tax.py", "old_string": "RATE = 0.19",
                                                        "new_string": "RATE = 0.20"}))
    answered(told, "toolu_01Edit", f"The file {CWD}/tax.py has been updated. Here's the result of running `cat -n` "
                                   "on a snippet of the edited file:\n     1\tRATE = 0.20")
    told = turn("msg_01D", use("toolu_01Again", "Bash", {"command": "pytest -q tests/test_tax.py",
                                                         "description": "Run the tax tests again"}))
    answered(told, "toolu_01Again", PASSING.rstrip("\n"))
    turn("msg_01E", {"type": "text", "text": ANSWER})
    return Fixture("claude-code-tax.jsonl", lines, story, "claude-code-tax", created_at)


# ---------------------------------------------------------------------------------------------------------
# Codex CLI


class Rollout:
    """A Codex rollout being written, and its story: consecutive assistant-side items (reasoning, messages,
    calls) are one model turn, at its first item's time; an input-side item (a user message, a tool's output,
    a compaction, a new turn context) ends it."""

    def __init__(self, session: str, start: str) -> None:
        self.clock = Clock(start)
        self.lines: list[Any] = []
        self.session = session
        self.calls = 0
        self.story = Story(CODEX_TOOLS, "\n\n")
        self.turn: Turn | None = None
        self.model: str | None = None
        self.asked: dict[str, tuple[Turn, str, Any]] = {}  # call id → its turn, tool and input
        self.created_at = 0

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": self.clock.tick(350), "type": kind, "payload": payload})

    def at(self) -> int:
        return ms(self.lines[-1]["timestamp"])

    def assistant_side(self) -> Turn:
        if self.turn is None:
            self.turn = Turn(self.at(), model=self.model)
            self.story.items.append(self.turn)
        return self.turn

    def called(self, call_id: str, name: str, tool_input: Any) -> None:
        self.asked[call_id] = (self.assistant_side(), name, tool_input)

    def answered(self, call_id: str, value: Any) -> None:
        self.turn = None
        turn, name, tool_input = self.asked[call_id]
        turn.calls.append(Call(name, tool_input, value, self.at()))

    def meta(self) -> None:
        self.record("session_meta", {"id": self.session, "timestamp": self.clock.tick(1), "cwd": CWD,
                                     "originator": "codex_cli_rs", "cli_version": "0.63.0", "instructions": None,
                                     "source": "cli", "model_provider": "openai",
                                     "git": {"commit_hash": "4be1c0a", "branch": "main"}})
        self.created_at = self.at()  # the start: the first record's time
        # Codex's own preamble, written as a user message: not the user's, so not in the story.
        self.record("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n  <cwd>" + CWD + "</cwd>\n  <approval_policy>"
                                           "on-request</approval_policy>\n  <sandbox_mode>workspace-write"
                                           "</sandbox_mode>\n  <shell>bash</shell>\n</environment_context>"}]})
        self.turn = None

    def user(self, text: str) -> None:
        self.record("turn_context", {"cwd": CWD, "approval_policy": "on-request",
                                     "sandbox_policy": {"mode": "workspace-write", "network_access": False},
                                     "model": "gpt-5-codex", "effort": "medium", "summary": "auto"})
        self.model, self.turn = "gpt-5-codex", None
        self.record("response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": text}]})
        self.story.items.append(Said(text))
        self.record("event_msg", {"type": "user_message", "message": text, "images": []})
        self.record("event_msg", {"type": "task_started", "model_context_window": 272000})

    def reasoning(self, summary: str) -> None:
        self.record("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}],
                                      "content": None, "encrypted_content": "gAAAAABp" + "x" * 24})
        self.assistant_side()  # dropped like thinking, but part of the turn
        self.record("event_msg", {"type": "agent_reasoning", "text": summary})

    def say(self, text: str) -> None:
        self.record("response_item", {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": text}]})
        self.assistant_side().texts.append(text)
        self.record("event_msg", {"type": "agent_message", "message": text})

    def call_id(self) -> str:
        self.calls += 1
        return f"call_{self.calls:04d}" + "Q7xK2mVb9TnR4sLpWc8dZ"[: 20]

    def shell(self, command: str, output: str, code: int = 0) -> None:
        call = self.call_id()
        arguments = {"command": ["bash", "-lc", command], "workdir": CWD, "timeout_ms": 120000}
        self.record("response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps(arguments),
                                      "call_id": call})
        self.called(call, "shell", arguments)  # JSON arguments: the parsed value
        self.record("event_msg", {"type": "exec_command_end", "call_id": call, "stdout": output, "stderr": "",
                                  "exit_code": code, "duration": {"secs": 0, "nanos": 41000000}})
        result = {"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.0}}
        self.record("response_item", {"type": "function_call_output", "call_id": call,
                                      "output": json.dumps(result, separators=(",", ":"))})
        self.answered(call, result)  # output JSON text: the parsed value
        self.tokens()

    def patch(self, path: str, old: str, new: str) -> None:
        call = self.call_id()
        body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
        self.record("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call,
                                      "name": "apply_patch", "input": body})
        self.called(call, "apply_patch", body)  # a custom tool's input: the string itself
        self.record("event_msg", {"type": "patch_apply_end", "call_id": call, "stdout": f"M {path}\n",
                                  "stderr": "", "success": True})
        result = {"output": f"Success. Updated the following files:\nM {path}\n",
                  "metadata": {"exit_code": 0, "duration_seconds": 0.0}}
        self.record("response_item", {"type": "custom_tool_call_output", "call_id": call,
                                      "output": json.dumps(result, separators=(",", ":"))})
        self.answered(call, result)
        self.tokens()

    def tokens(self) -> None:
        self.record("event_msg", {"type": "token_count", "info": {"total_token_usage": {
            "input_tokens": 4000 + 90 * self.calls, "cached_input_tokens": 3000, "output_tokens": 60 * self.calls,
            "reasoning_output_tokens": 20, "total_tokens": 4100 + 150 * self.calls}}, "rate_limits": None})

    def done(self, text: str) -> None:
        self.say(text)
        self.record("event_msg", {"type": "task_complete", "last_agent_message": text})


def codex_tax() -> Fixture:
    rollout = Rollout("019acb41-7e2a-7c11-9d6e-0b1f5e7a2c90", "2026-11-30T10:02:00")
    rollout.meta()
    rollout.user(PROMPT)
    rollout.reasoning("**Running the failing test**")
    rollout.shell("pytest -q tests/test_tax.py", FAILING, code=1)
    rollout.reasoning("**Reading tax.py**")
    rollout.shell("cat tax.py", TAX_PY)
    rollout.patch("tax.py", "RATE = 0.19", "RATE = 0.20")
    rollout.shell("pytest -q tests/test_tax.py", PASSING)
    rollout.done(ANSWER)
    return Fixture("codex-tax.jsonl", rollout.lines, rollout.story, "codex-tax", rollout.created_at)


def codex_long() -> Fixture:
    """A long rollout: 3 user turns, 48 tool rounds, one compaction half way, and records a reader does not
    know (a new record type, a web search item) that must be skipped and counted."""
    rollout = Rollout("019acb77-1b0d-7f42-8e51-6c2d9a4b7e13", "2026-11-30T14:20:00")
    rollout.meta()
    modules = [f"shop/{name}.py" for name in ("cart", "tax", "pricing", "orders", "stock", "invoice", "coupons",
                                              "shipping")]
    kept: list[dict[str, Any]] = []
    for turn, prompt in enumerate(("Add type hints to every public function in shop/.",
                                   "Now run mypy and fix what it reports.",
                                   "Summarise what changed, file by file.")):
        rollout.user(prompt)
        if turn == 2:
            rollout.done("cart.py, tax.py, pricing.py, orders.py, stock.py, invoice.py, coupons.py and shipping.py "
                         "gained type hints on their public functions; mypy --strict shop/ is clean.")
            break
        for round_ in range(24):
            module = modules[round_ % len(modules)]
            if round_ == 3 and turn == 0:
                rollout.record("world_state", {"cwd": CWD, "open_files": [module]})  # unknown to the reader
                rollout.record("response_item", {"type": "web_search_call", "status": "completed",
                                                 "action": {"type": "search", "query": "PEP 604 union syntax"}})
            rollout.reasoning(f"**Looking at {module}**")
            if round_ % 3 == 2:
                rollout.patch(module, f"def f{round_}(x):", f"def f{round_}(x: int) -> int:")
            elif round_ % 3 == 1:
                rollout.shell(f"mypy {module}", f"{module}:{round_ + 3}: error: Function is missing a type "
                              "annotation\nFound 1 error in 1 file (checked 1 source file)\n", code=1)
            else:
                rollout.shell(f"sed -n '1,40p' {module}", f"def f{round_}(x):\n    return x * {round_}\n")
        if turn == 0:
            rollout.say("Type hints are in; mypy still has to run.")
            rollout.record("event_msg", {"type": "task_complete", "last_agent_message": "Type hints are in."})
            kept = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}]
            summary = ("Added type hints to the public functions of the eight modules in shop/; each module was "
                       "read with sed, checked with mypy and patched.")
            kept.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]})
            rollout.record("event_msg", {"type": "context_compacted"})
            rollout.record("compacted", {"message": summary, "replacement_history": kept})
            rollout.turn = None  # the history from here on: the kept user messages, as neutral messages
            rollout.story.items.append(Compacted([{"role": "user", "content": prompt},
                                                  {"role": "user", "content": summary}]))
    return Fixture("codex-long-compacted.jsonl", rollout.lines, rollout.story, "codex-long", rollout.created_at)


# ---------------------------------------------------------------------------------------------------------
# Gemini CLI


def gemini() -> Fixture:
    clock = Clock("2026-11-30T11:40:00")
    lines: list[Any] = [{"sessionId": "5b2e9c4a-0f1d-4e6b-a3c7-9d8e2f1a6b40", "projectHash": "c0ffee" * 10 + "beef",
                         "startTime": clock.tick(1), "lastUpdated": clock.tick(1), "kind": "main",
                         "directories": [CWD]}]
    story = Story(GEMINI_TOOLS, "\n")
    told: dict[str, Said | Turn] = {}  # message id → what it tells, in order (a rewind drops from one on)
    n = [0]

    def msg_id() -> str:
        n[0] += 1
        return f"a1b2c3d4-{n[0]:04d}-4e5f-8a9b-0c1d2e3f4a5b"

    def user(text: str) -> str:
        mid = msg_id()
        lines.append({"id": mid, "timestamp": clock.tick(), "type": "user", "content": [{"text": text}]})
        told[mid] = Said(text)
        return mid

    def gemini_turn(text: str, call: tuple[str, dict[str, Any], dict[str, Any]] | None, *,
                    result: bool = True) -> str:
        mid = msg_id()
        record: dict[str, Any] = {"id": mid, "timestamp": clock.tick(), "type": "gemini",
                                  "content": [{"text": text}] if text else [], "model": "gemini-2.5-pro",
                                  "thoughts": [{"subject": "Plan", "description": "check the tests",
                                                "timestamp": clock.tick(1)}],
                                  "tokens": {"input": 5100, "output": 48, "cached": 4000, "thoughts": 31, "tool": 0,
                                             "total": 5179}}
        turn = told[mid] = Turn(ms(record["timestamp"]), [text] if text else [], model="gemini-2.5-pro")
        if call is not None:
            name, args, response = call
            tool_id = f"{name}-{1764500000000 + n[0]}-{n[0]:x}e7"
            pending = {"id": tool_id, "name": name, "args": args, "status": "executing",
                       "timestamp": clock.tick(1), "displayName": name.replace("_", " ").title()}
            record["toolCalls"] = [pending]
            lines.append(json.loads(json.dumps(record)))  # written as the call starts …
            if result:  # … and re-appended whole with its result: the last record of an id wins
                done = {**pending, "status": "success", "timestamp": clock.tick(),
                        "result": [{"functionResponse": {"id": tool_id, "name": name, "response": response}}],
                        "resultDisplay": "done"}
                record["toolCalls"] = [done]
                lines.append(record)
                # `{output}` is the output (JSON text would be parsed; this is plain text), at the call's time
                turn.calls.append(Call(name, args, response["output"], ms(done["timestamp"])))
        else:
            lines.append(record)
        return mid

    def shell(command: str, output: str, code: int) -> dict[str, Any]:
        return {"output": f"Command: {command}\nDirectory: (root)\nOutput: {output.rstrip()}\nError: (none)\n"
                          f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242"}

    user(PROMPT)
    gemini_turn("I'll run the tax tests first.", ("run_shell_command", {"command": "pytest -q tests/test_tax.py",
                                                                        "description": "Run the tax tests"},
                                                  shell("pytest -q tests/test_tax.py", FAILING, 1)))
    lines.append({"id": msg_id(), "timestamp": clock.tick(), "type": "info", "content": "Checkpoint saved."})
    lines.append({"id": msg_id(), "timestamp": clock.tick(), "type": "gemini_thought_stream",
                  "content": "a message type the reader does not know"})  # skipped and counted
    gemini_turn("", ("read_file", {"absolute_path": f"{CWD}/tax.py"}, {"output": TAX_PY}))
    wrong = gemini_turn("", ("replace", {"file_path": f"{CWD}/tax.py", "old_string": "round(net * (1 + RATE), 2)",
                                         "new_string": "round(net * 1.2, 2)", "expected_replacements": 1},
                             {"output": f"Successfully modified file: {CWD}/tax.py (1 replacements)."}))
    lines.append({"$set": {"lastUpdated": clock.tick(1)}})
    # The user rewinds the hard-coded fix (/rewind): the message and everything after it go.
    lines.append({"$rewindTo": wrong})
    kept = list(told)[: list(told).index(wrong)]
    told = {mid: told[mid] for mid in kept}
    gemini_turn("", ("replace", {"file_path": f"{CWD}/tax.py", "old_string": "RATE = 0.19",
                                 "new_string": "RATE = 0.20", "expected_replacements": 1},
                     {"output": f"Successfully modified file: {CWD}/tax.py (1 replacements)."}))
    gemini_turn("", ("run_shell_command", {"command": "pytest -q tests/test_tax.py",
                                           "description": "Run the tax tests again"},
                     shell("pytest -q tests/test_tax.py", PASSING, 0)))
    gemini_turn(ANSWER, None)
    lines.append({"$set": {"lastUpdated": clock.tick(1), "summary": "Fixed the VAT rate"}})
    story.items = list(told.values())
    return Fixture("gemini-tax-rewind.jsonl", lines, story, "gemini-tax", ms(lines[0]["startTime"]))


def gemini_checkpoint() -> None:
    """A checkpoint written before an edit (`/restore` lists it): the API history, the pending tool call."""
    document = {
        "history": [{"type": "user", "text": PROMPT, "id": 1}],
        "clientHistory": [
            {"role": "user", "parts": [{"text": "This is the Gemini CLI. We are setting up the context for our chat.\n"
                                                "Today's date is Monday, November 30, 2026."}]},
            {"role": "model", "parts": [{"text": "Got it. Thanks for the context!"}]},
            {"role": "user", "parts": [{"text": PROMPT}]},
            {"role": "model", "parts": [{"text": "Checking the tests.", "thought": True},
                                        {"functionCall": {"id": "run_shell_command-1", "name": "run_shell_command",
                                                          "args": {"command": "pytest -q tests/test_tax.py"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "run_shell_command-1", "name": "run_shell_command",
                                                             "response": {"output": FAILING}}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "replace", "args": {
                "file_path": f"{CWD}/tax.py", "old_string": "RATE = 0.19", "new_string": "RATE = 0.20"}}}]},
        ],
        "toolCall": {"name": "replace", "args": {"file_path": f"{CWD}/tax.py", "old_string": "RATE = 0.19",
                                                 "new_string": "RATE = 0.20"}},
        "commitHash": "9f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6",
        "messageId": 3,
    }
    (OUT / "gemini-checkpoint.foreign.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def fixtures() -> list[Fixture]:
    """The coding-agent fixtures, their stories told (nothing written)."""
    return [claude_code(), codex_tax(), codex_long(), gemini()]


if __name__ == "__main__":
    for fixture in fixtures():
        fixture.write()
    gemini_checkpoint()
