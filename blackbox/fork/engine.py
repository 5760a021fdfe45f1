"""Fork mode: replay the parent until the agent runs the tool whose result is step N, then record a new branch
from there, continued by the real API (`live`) or by scripted replies (`script`).

`ForkEngine` is the session's engine in fork mode and owns its switch from replaying to recording.  The
session asks it what a wrapped tool run is — served from the parent (calls before the fork
point), the fork point itself (the agent gets the new value), or a real run (the fork turn's later calls and
everything after) — and, after the fork point, what a model call is answered with.  `blackbox.fork.plan` validates
the plan and builds the copied prefix; this module keeps the state of one run.

The branch (a `Recorder` over the copied prefix) starts when the agent first runs a tool of the fork turn at or
after the fork point; the fork point is *reached* when the agent runs the call whose result is step N.  A run
that ends before that writes nothing.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from blackbox.errors import BlackboxUnsupportedError, ReplayDivergenceError, SessionError, UsageError
from blackbox.fork.plan import check_fork_point, check_out_path, fork_chain, load_script
from blackbox.format.cassette import Cassette, Step
from blackbox.format.outcome import TOOL_STEPS, turn_end, turn_start
from blackbox.format.payloads import ModelInput, ModelOutput, ToolCall
from blackbox.format.secrets import Secrets
from blackbox.format.typed import (
    UNSET,
    FinalAnswerView,
    ModelInputView,
    ToolCallsView,
    ToolCallView,
    ToolResultView,
    View,
    view,
    view_of,
)
from blackbox.format.whole_floats import restore_floats
from blackbox.live.calls import ModelCall, Reply
from blackbox.live.engines import Ending, Recording, Replaying, RunSummary, answer, load_replayable, now_ms
from blackbox.live.recorder import Recorder, ToolSlot
from blackbox.live.redaction import active_redactor
from blackbox.live.replayer import Replayer, ToolClaim, divergence
from blackbox.live.settings import Mode, Settings, session_names
from blackbox.providers import Provider
from blackbox.providers.neutral import CallIds

__all__ = ["ForkEngine", "thinking_refusal", "uses_thinking"]

def _thinks(model_input: Any) -> bool:
    request = view_of("model_input", model_input)
    params = request.params if isinstance(request, ModelInputView) else None
    thinking = params.get("thinking") if isinstance(params, dict) else None
    return thinking is not None and not (isinstance(thinking, dict) and thinking.get("type") == "disabled")


def uses_thinking(cassette: Cassette) -> bool:
    """Whether the run asked for thinking (`params.thinking` in a recorded request) that its cassette cannot
    hand back to a live API: no recorded output keeps its thoughts (Anthropic's thinking blocks are never stored;
    Gemini's thoughts and signatures and a compatible server's reasoning text are)."""
    return any(step.type == "model_input" and _thinks(step.payload) for step in cassette.steps) \
        and not _keeps_thoughts(cassette)


def _keeps_thoughts(cassette: Cassette) -> bool:
    return any(step.type == "model_output" and isinstance(found := view(step), FinalAnswerView | ToolCallsView)
               and (found.thoughts or found.signatures) for step in cassette.steps)


def _call_id(found: View) -> str:
    """A tool step's call id, "" when it has none (or does not fit its shape)."""
    return found.toolCallId if isinstance(found, ToolCallView | ToolResultView) else ""


def thinking_refusal() -> BlackboxUnsupportedError:
    return BlackboxUnsupportedError(
        "fork --live of an agent using extended thinking is not supported yet: the API needs the thinking "
        "blocks back and cassettes do not store them; continue the fork with --script replies.json")


def _check_turn_order(steps: list[Step], start: int, at: int) -> None:
    """Every call whose tool_call step is copied must have its result copied too (the call order layout)."""
    end = turn_end(steps, at)
    result_at = {_call_id(view(s)): s.index for s in steps[start:end] if s.type == "tool_result"}
    for step in steps[start:at]:
        later = result_at.get(_call_id(view(step))) if step.type == "tool_call" else None
        if step.type == "tool_call" and later is not None and later > at:
            raise BlackboxUnsupportedError(
                f"forking at step {at} is not supported yet: the call at step {step.index} has its result "
                f"after the fork point (step {later}); fork at a tool_result whose turn is in call order")


class ForkEngine(Replaying, Recording):
    """One fork run: the parent's replayer up to the fork point, then the branch's recorder."""

    mode: Mode = "fork"

    def __init__(self, settings: Settings, trace_id: str, ids: CallIds,
                 secrets: Secrets) -> None:
        """`RecordEngine`'s arguments less `created_at`: a fork keeps its parent's."""
        assert settings.fork_at is not None and settings.out is not None
        parent = load_replayable(settings.cassette or "")
        self.parent = parent
        self.at = settings.fork_at
        self.value = settings.fork_set
        self.live = settings.continue_with == "live"
        self.script = settings.script
        self.out = settings.out
        try:  # the CLI's checks, whose messages name its flags: name the session's settings instead
            point = check_fork_point(parent, self.at)
            check_out_path(settings.out, settings.cassette or "", None if self.live else settings.script)
            self.replies = [] if self.live else load_script(settings.script or "")
        except UsageError as exc:
            raise UsageError(session_names(str(exc))) from None
        if self.live and uses_thinking(parent):
            raise thinking_refusal()
        self._turn_start = turn_start(parent.steps, self.at)
        _check_turn_order(parent.steps, self._turn_start, self.at)
        self._call_id = _call_id(view(point))
        # where the tool returned whole floats, the new value's numbers are floats too (`21` for a tool that
        # returned `21.0` is handed over as `21.0`, as replay rebuilds a typed result through its annotation)
        self.value = restore_floats(copy.deepcopy(self.value), point.origin.floats if point.origin else None,
                                    "/result")
        self._ids = ids
        self._trace_id = trace_id
        self._secrets = secrets
        self.redactor = active_redactor(settings.policy)
        self.replayer = Replayer(parent, ids, match=settings.match, redact=self.redactor)
        self.pace = settings.pace
        self.recorder: Recorder | None = None
        self.reached = False
        self._turn_open = True  # the fork turn may still run calls served from the parent
        self._replies_used = 0

    # -- the engine ---------------------------------------------------------------------------------

    @property
    def offline(self) -> bool:
        """Before the branch the run is a replay; a scripted branch never needs the network either."""
        return self.recorder is None or not self.live

    def steps(self) -> int:
        return self.replayer.consumed if self.recorder is None else len(self.recorder.steps)

    def model_call(self, provider: Provider, request: dict[str, Any], model_input: ModelInput) -> Reply | ModelCall:
        """Replayed before the branch; after it, checked, then sent to the network or answered from the script."""
        if self.recorder is None:
            return self._replayed(provider, request, model_input)
        self._check_model_call(model_input)
        if self.live:
            return ModelCall(provider, model_input, now_ms(), provider.is_stream(request), request=request)
        started = now_ms()
        output = self.scripted_output()
        arrived = now_ms()
        self.recorder.model_step(model_input, started, output, arrived)
        self._note_output(output)
        return answer(provider, output, len(self.recorder.steps) - 1, arrived, request, self._ids)

    def close(self, ending: Ending) -> RunSummary:
        if not self.reached:
            raise self.not_reached(ending.fatal)
        return self._write(ending, self.out)

    # -- wrapped tools ------------------------------------------------------------------------------

    def tool(self, name: str, tool_input: Any, at: int) -> ToolClaim | ToolSlot:
        """What this tool run is: a claim served from the parent or at the fork point, or a real run's slot."""
        if self.recorder is not None and not self._turn_open:
            return self.recorder.tool_started(name, tool_input, at)
        try:
            claim = self.replayer.claim_tool(name, tool_input)
        except ReplayDivergenceError:
            if self.recorder is None:
                raise  # before the branch a mismatch is a divergence
            return self.recorder.tool_started(name, tool_input, at)  # a call the parent never made
        if self._served(claim):
            return claim
        return self._branch_tool(self.recorder if self.recorder is not None else self._branch(), claim, tool_input, at)

    def _served(self, claim: ToolClaim) -> bool:
        """A call whose steps are all in the copied prefix answers from the parent."""
        return claim.result_index != self.at and claim.call_index < self.at

    def _branch_tool(self, recorder: Recorder, claim: ToolClaim, tool_input: Any, at: int) -> ToolClaim | ToolSlot:
        if claim.result_index == self.at:
            self.reached = True
            return ToolClaim(claim.call_id, claim.name, claim.call_index, self.at,
                             {"result": copy.deepcopy(self.value)})
        return recorder.tool_started(claim.name, tool_input, at, call_id=claim.call_id)

    def _branch(self) -> Recorder:
        """Start the new cassette: the parent's steps 0…N-1, then the new result at N."""
        steps = fork_chain(self.parent, self.at, self.value, self._trace_id, redact=self.redactor).steps
        for step in steps:
            if step.type in TOOL_STEPS and (call_id := _call_id(view(step))):
                self._ids.bind(call_id, call_id)  # fresh ids after the fork continue after the prefix's
        recorder = Recorder(self.out, self._trace_id, self.parent.createdAt, self._ids, secrets=self._secrets,
                            prefix=steps, parent_id=self.parent.id, forked_from_step_id=self.parent.steps[self.at].id,
                            redactor=self.redactor)
        self.recorder = recorder
        start = self._turn_start
        output = self.parent.steps[start - 1].payload if start and self.parent.steps[start - 1].type == \
            "model_output" else None
        copied = [s.payload for s in self.parent.steps[start:self.at]
                  if s.type == "tool_call" and isinstance(view(s), ToolCallView)]
        recorder.resume_turn(output, copied)
        return recorder

    # -- model calls after the branch started --------------------------------------------------------

    def _check_model_call(self, model_input: Any) -> None:
        """A model call once the branch exists: the agent must have run the fork point's tool first."""
        if not self.reached:
            call = next((s for s in self.parent.steps[self._turn_start:self.at] if s.type == "tool_call"
                         and _call_id(view(s)) == self._call_id), None)
            where = call.index if call is not None else self.at
            point = view(self.parent.steps[self.at])
            name = point.toolName if isinstance(point, ToolResultView) else "?"
            raise divergence(where, "tool_call", f"{name} (its result is the fork point, step {self.at})",
                             "a model call: the agent moved on without running it")
        self._turn_open = False
        if self.live and _thinks(model_input) and not _keeps_thoughts(self.parent):
            raise thinking_refusal()

    def scripted_output(self) -> ModelOutput:
        """The next scripted model output, its calls given fresh `call-N` ids."""
        if self._replies_used >= len(self.replies):
            k = self._replies_used + 1
            raise SessionError(f"the script has no reply left for model call {k} after the fork point (it holds "
                               f"{len(self.replies)}); add more replies to {self.script}")
        reply = self.replies[self._replies_used]
        self._replies_used += 1
        return self._with_ids(reply)

    def _fresh_call(self, call: ToolCallView) -> ToolCall:
        call_id = self._ids.fresh()
        self._ids.bind(call_id, call_id)  # the agent sends it back as the provider's id
        self._ids.note_name(call_id, call.toolName)
        return {"toolCallId": call_id, "toolName": call.toolName, "toolInput": {} if call.toolInput is None
                else copy.deepcopy(call.toolInput)}

    def _with_ids(self, reply: dict[str, Any]) -> ModelOutput:
        """A scripted reply (`plan.parse_script` checked its shape) as the output recorded, read typed."""
        if reply["type"] == "tool_call":  # a script's one call has no id yet: read as a tool_call step's
            call = view_of("tool_call", reply)
            assert isinstance(call, ToolCallView)
            return cast(ModelOutput, {"type": "tool_call", **self._fresh_call(call)})
        found = view_of("model_output", reply)
        if isinstance(found, FinalAnswerView):
            output: dict[str, Any] = {"type": "final_answer", "text": found.text}
            if found.stop in ("length", "refusal"):
                output["stop"] = found.stop
            return cast(ModelOutput, output)
        assert isinstance(found, ToolCallsView), found
        output = {"type": "tool_calls", "calls": [self._fresh_call(call) for call in found.calls]}
        if found.text is not UNSET and found.text:
            output["text"] = found.text
        if found.stop == "length":
            output["stop"] = "length"
        return cast(ModelOutput, output)

    # -- the end ------------------------------------------------------------------------------------

    def not_reached(self, cause: BaseException | None) -> ReplayDivergenceError:
        """The run ended before the fork point: nothing is written (the journal of a started branch goes)."""
        if self.recorder is not None:
            self.recorder.discard_journal()
        message = f"the run ended before the fork point (step {self.at})"
        step = self.at
        if cause is not None:
            message += f", so no fork was written: {cause}"
            cause_step = getattr(cause, "step", None)  # a divergence names where the replay stopped
            step = cause_step if cause_step is not None else step
        else:
            message += ("; the agent never ran the tool whose result is that step, so no fork was written; check "
                        "that the command replays the parent (blackbox replay <parent> -- <command>)")
        return ReplayDivergenceError(message, step=step)
