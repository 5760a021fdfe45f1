"""What if this tool had returned something else?  Blackbox continues the conversation itself, no agent needed.

From a `tool_result` step N of a cassette: steps 0…N-1 are copied verbatim, step N gets the new value, the rest
of that turn's tool steps are served from the cassette, and then Blackbox plays the agent's part.  Each model
request is the recorded history with the new value in place (the parent's next request, its tool result
replaced), then that history grown by each reply and its tool results.  A reply comes from a `ModelSource`:
the provider's API (`LiveModel`: the provider named or inferred from the recorded `model`, the key from the
environment) or replies written beforehand (`ScriptedModel`).  When the model calls a tool with the same name
and input as a recorded call, the recorded result is served; otherwise `tool_results` answers (a file of
results, a person in the UI) or the run stops there and the fork ends incomplete.

The outcome is an ordinary fork cassette (`parentId`, `forkedFromStepId`, the prefix's hashes unchanged) that
verifies and diffs like one an agent recorded.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from blackbox.apis import ApiFacts
from blackbox.errors import BlackboxError, SessionError, UsageError
from blackbox.fork.client import RETRIED, retry_after, shared_client
from blackbox.fork.plan import check_fork_point, fork_chain
from blackbox.format.canonical import canonical_bytes
from blackbox.format.cassette import Cassette, Step, StepChain, rechain
from blackbox.format.origin import Origin
from blackbox.format.outcome import turn_end, turn_start
from blackbox.format.secrets import KeySearch
from blackbox.format.tokens import Tokens
from blackbox.format.typed import UNSET, ModelInputView, ToolCallView, ToolResultView, calls_in
from blackbox.format.writing import dumps
from blackbox.importers.registry import imported_provider
from blackbox.live.made import made_now
from blackbox.live.redaction import ACTIVE, chosen
from blackbox.providers import PROVIDERS, Provider, by_name, for_model
from blackbox.providers.neutral import CallIds, calls_of
from blackbox.providers.outgoing import result_text

if TYPE_CHECKING:
    import httpx

__all__ = [
    "NO_RESULT",
    "LiveModel",
    "ModelSource",
    "RateLimited",
    "ScriptedModel",
    "WhatIfError",
    "api_key",
    "base_url",
    "choose_provider",
    "recorded_api",
    "recorded_model",
    "recorded_provider",
    "what_if",
]

MAX_MODEL_CALLS = 40  # a continuation that keeps calling tools stops here, incomplete
NO_RESULT = object()  # what a `tool_results` answer returns to stop the run at this call
class WhatIfError(BlackboxError):
    """The continuation cannot go on (the API refused, a reply is malformed); the message says what to do."""


class RateLimited(WhatIfError):
    """The API asked to slow down (429) or is overloaded (503): `retry_after` is the wait it asked for, in
    seconds (None: it named none).  `blackbox.many.pool` retries the job after that wait."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelSource(Protocol):
    """Answers one neutral `model_input` with a neutral `model_output` (ids `call-N` from `ids`)."""

    def reply(self, model_input: dict[str, Any], ids: CallIds) -> dict[str, Any]: ...


class ScriptedModel:
    """Replies written beforehand, in order (the `--script` format); running out is a clear error."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.used = 0

    def reply(self, model_input: dict[str, Any], ids: CallIds) -> dict[str, Any]:
        if self.used >= len(self.replies):
            raise WhatIfError(f"the scripted replies ran out after {self.used}: the model was asked again; add a "
                              'reply (e.g. {"type": "final_answer", "text": "…"}) or continue live')
        reply = copy.deepcopy(self.replies[self.used])
        self.used += 1
        if reply.get("type") not in ("tool_calls", "tool_call"):
            return reply
        calls = [{"toolCallId": ids.fresh(), "toolName": call.get("toolName"), "toolInput": call.get("toolInput", {})}
                 for call in calls_of(reply)]
        output: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if isinstance(reply.get("text"), str) and reply["text"]:
            output["text"] = reply["text"]
        return output


class LiveModel:
    """The provider's API over HTTP: the request built from the neutral payload by the provider, sent to its
    endpoint with its auth headers, the reply normalized back by the same provider."""

    def __init__(self, provider: Provider | str, *, env: Mapping[str, str] | None = None,
                 timeout: float = 120.0, client: httpx.Client | None = None) -> None:
        #: The HTTP client the requests go through: the caller's (a sweep's, closed when it is done) or the
        #: process's shared one; either way thread-safe and pooled, so concurrent continuations reuse connections.
        self.client = client
        self.provider = provider if not isinstance(provider, str) else _named(provider)
        self.key = api_key(self.provider.api, env)  # fails here, before anything is sent, when the key is missing
        self.url = base_url(self.provider.api, env)
        self.timeout = timeout
        self.last_tokens: Tokens | None = None  # the last reply's token counts, kept beside its output step
        #: The conversation's outputs so far (`what_if` sets them): what the API needs back that a model_input
        #: leaves out (Gemini's thought parts and signatures) comes from them.
        self.outputs: list[Mapping[str, Any]] = []
        self.last_origin: Origin | None = None  # and who answered it: the API, model and ids

    def reply(self, model_input: dict[str, Any], ids: CallIds) -> dict[str, Any]:
        import httpx  # deferred: `blackbox --help` and the UI's start do not pay for it

        provider = self.provider
        body = provider.continue_request(model_input, self.outputs)
        url = provider.endpoint(self.url, str(model_input.get("model") or ""))
        try:
            client = self.client if self.client is not None else shared_client()
            response = client.post(url, json=body, headers=provider.auth_headers(self.key), timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise WhatIfError(f"cannot reach the {provider.label} API at {self.url}: {type(exc).__name__}; check "
                              f"the network (or {provider.api.base_url_variable})") from None
        if response.status_code in RETRIED:
            raise RateLimited(f"the {provider.label} API answered {response.status_code}",
                              retry_after(response.headers))
        if response.status_code != 200:
            raise WhatIfError(f"the {provider.label} API answered {response.status_code}: "
                              f"{_api_message(response.text)}")
        try:
            data = response.json()
        except ValueError:
            raise WhatIfError(f"the {provider.label} API sent a reply that is not JSON") from None
        if not isinstance(data, dict):
            raise WhatIfError(f"the {provider.label} API sent a reply that is not a JSON object")
        output: dict[str, Any] = dict(provider.normalize_response(data, ids))
        self.last_tokens = provider.token_counts(data)
        self.last_origin = provider.origin(data)
        return output


def api_key(api: ApiFacts, env: Mapping[str, str] | None = None) -> str:
    """The API's key from the first of its variables that is set; a clear error naming them when none is."""
    source = os.environ if env is None else env
    for variable in api.key_variables:
        value = source.get(variable, "").strip()
        if value:
            return value
    names = " or ".join(api.key_variables)
    raise UsageError(f"{names} is not set: a live continuation sends the requests to the {api.label} API; export "
                     "the key, or continue from scripted replies instead")


def key_problem(provider: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """Why a live run would fail at its first request for want of a key, or None: checked before anything
    starts (the UI's fork screen, `blackbox fork --live`), so the user is told of the key, not of the agent.
    `provider` None (the recorded model names none) accepts the key of any API."""
    source = os.environ if env is None else env
    found = by_name(provider) if provider else None
    apis = [found.api] if found is not None else [p.api for p in PROVIDERS]
    names = list(dict.fromkeys(name for api in apis for name in api.key_variables))
    if any(source.get(name, "").strip() for name in names):
        return None
    return f"{' or '.join(names)} is not set: a live run needs the API key in the environment"


def base_url(api: ApiFacts, env: Mapping[str, str] | None = None) -> str:
    """The API's base URL: its variable when set (a proxy, a test server), else its default."""
    source = os.environ if env is None else env
    value = source.get(api.base_url_variable, "").strip() if api.base_url_variable else ""
    if not (value or api.default_base_url):
        raise UsageError(f"{api.base_url_variable} is not set: the {api.label} API has no default address; "
                         "export your resource's endpoint")
    return (value or api.default_base_url).rstrip("/")


def _named(name: str) -> Provider:
    found = by_name(name)
    if found is None:
        raise UsageError(f"unknown provider {name!r}; choose one of {', '.join(p.name for p in PROVIDERS)}")
    return found


def _api_message(text: str) -> str:
    try:
        data = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text.strip()[:200] or "(no body)"
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message else text.strip()[:200]


def recorded_model(parent: Cassette) -> str | None:
    """The `model` of the parent's last request that names one."""
    for step in reversed(parent.steps):
        found = step.view() if step.type == "model_input" else None
        if isinstance(found, ModelInputView) and isinstance(found.model, str):
            return found.model
    return None


def recorded_api(parent: Cassette) -> Provider | None:
    """The API the run's last recorded model call went to: its output's unhashed `origin` (docs/format.md,
    "Origin"), which a cassette made before Blackbox kept it, or an import, does not have."""
    for step in reversed(parent.steps):
        if step.type == "model_output" and step.origin is not None and step.origin.api is not None:
            return by_name(step.origin.api)
    return None


def recorded_provider(parent: Cassette) -> Provider | None:
    """The provider a live continuation of the run talks to by default: the API it used, else the one its
    recorded model's name belongs to (None when neither says)."""
    return recorded_api(parent) or for_model(recorded_model(parent))


def choose_provider(parent: Cassette, provider: str | None, model_name: str | None = None) -> Provider:
    """`provider` if given, else the API the run used (its calls' `origin`) unless `model_name` belongs to
    another family, else the one the model named (or the recorded `model`) belongs to; a clear error when none
    says.  Without an origin a GPT model means Chat Completions unless `provider` says `responses`, or the run
    is an import of an agent whose API the importer names (`Importer.provider`: Codex CLI → Responses)."""
    if provider:
        return _named(provider)
    model = model_name or recorded_model(parent)
    used, named = recorded_api(parent), for_model(model_name)
    if used is not None and (named is None or named.api is used.api or not used.api.model_prefixes):
        return used  # the same family (an Azure deployment's name says none): the API the run used
    imported = by_name(imported_provider(parent.steps) or "")
    if imported is not None and model is not None:
        return imported  # an imported agent's own API (Codex: Responses), the model its session named
    guessed = for_model(model)
    if guessed is None:
        raise UsageError(f"cannot tell the provider from the model ({model or 'none recorded'}); choose one "
                         f"(--provider {'|'.join(p.name for p in PROVIDERS)}) or name the model (--model)")
    return guessed


def _key(name: Any, tool_input: Any) -> bytes:
    return canonical_bytes([name, tool_input])


CALL_FIELDS = ("toolCallId", "toolName", "toolInput")


def _recorded_results(parent: Cassette) -> tuple[dict[bytes, dict[str, Any]], dict[bytes, dict[str, Any]]]:
    """Each recorded (tool name, input) → the first result the run got for it (its `result` or `error`), and →
    what else its tool_call step said of it (an MCP call's `mcp`: which server), so a repeated call is answered
    and shown as the recorded one was."""
    inputs: dict[str, bytes] = {}
    found: dict[bytes, dict[str, Any]] = {}
    marks: dict[bytes, dict[str, Any]] = {}
    for step in parent.steps:
        if step.type not in ("tool_call", "tool_result"):
            continue
        seen = step.view()
        if isinstance(seen, ToolCallView):
            key = inputs[seen.toolCallId] = _key(seen.toolName, seen.toolInput)
            marks.setdefault(key, {k: v for k, v in step.payload.items() if k not in CALL_FIELDS})  # a dict: it fit
        elif isinstance(seen, ToolResultView) and seen.toolCallId in inputs:
            answer = {"result": seen.result, "error": seen.error}
            found.setdefault(inputs[seen.toolCallId], {k: v for k, v in answer.items() if v is not UNSET})
    return found, marks



def _with_new_value(model_input: Any, call_id: Any, value: Any) -> dict[str, Any] | None:
    """The recorded request with the forked call's result replaced by `value` (as text where it was text)."""
    if not isinstance(model_input, dict):
        return None
    request = copy.deepcopy(model_input)
    replaced = False
    for message in request.get("messages") or []:
        parts = message.get("content") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_result" and part.get("toolCallId") == call_id:
                was_text = isinstance(part.get("result", part.get("error")), str)
                part.pop("error", None)
                part["result"] = result_text({"result": value}) if was_text else value
                replaced = True
    return request if replaced else None


def _grown(request: dict[str, Any], output: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The next request: the history plus the model's turn and the tool results it got."""
    parts: list[dict[str, Any]] = []
    if output.get("text"):
        parts.append({"type": "text", "text": output["text"]})
    parts += [{"type": "tool_use", "toolCallId": c.get("toolCallId"), "toolName": c.get("toolName"),
               "toolInput": c.get("toolInput")} for c in calls_of(output)]
    grown = copy.deepcopy(request)
    grown["messages"] = [*grown.get("messages", []), {"role": "assistant", "content": parts},
                         {"role": "user", "content": [{"type": "tool_result", **r} for r in results]}]
    return grown


def _ids_after(steps: list[Step]) -> CallIds:
    """Fresh `call-N` ids start past every id the copied steps use."""
    ids = CallIds()
    for step in steps:
        for call in calls_in(step.view()) if step.type in ("model_output", "tool_call") else []:
            ids.bind(call.toolCallId, call.toolCallId)
    return ids


ToolAnswer = Callable[[dict[str, Any]], Any]


class _Continuation:
    """The fork being written: its chain, a clock that never runs backwards, and the recorded tool results."""

    def __init__(self, parent: Cassette, at: int, chain: StepChain, clock: Callable[[], int], redact: Any) -> None:
        self.parent, self.at, self.chain, self.clock, self.redact = parent, at, chain, clock, redact
        self.last = parent.steps[at].timestamp
        self.recorded, self.marks = _recorded_results(parent)
        self.made = made_now()  # when the continuation started (the wall clock), and with which versions

    def add(self, kind: str, payload: Any, timestamp: float | None = None, tokens: Tokens | None = None,
            origin: Origin | None = None) -> None:
        self.last = max(self.last, self.clock() if timestamp is None else timestamp)
        self.chain.append(kind, self.last, payload, tokens, origin)  # type: ignore[arg-type]

    def finish(self, reason: str) -> tuple[Cassette, str]:
        """The fork, refused (SessionError) when it holds an API key of the environment or a piece of one: the
        key check every writer of a cassette makes (a `--set` value, a live model's reply)."""
        parent = self.parent
        fork = self.chain.cassette(parent.createdAt, parent_id=parent.id, forked_from_step_id=parent.steps[self.at].id,
                                   made=self.made)
        where = KeySearch.of_environment().step_holding(fork, dumps(fork))
        if where is not None:
            raise SessionError(f"refusing to write the fork: {where} holds an API key from the environment (or a "
                               "piece of it, also split by spaces, line ends or escapes)")
        return fork, reason

    def answer(self, call: dict[str, Any], tool_results: ToolAnswer | None) -> dict[str, Any] | str:
        """Record the call and its result (the parent's for the same call, else `tool_results`'); the result
        step's body, or why the run stops here."""
        name, tool_input = call.get("toolName"), call.get("toolInput")
        seen = tool_input if self.redact is None else self.redact(
            "tool_call", {"toolName": name, "toolInput": tool_input}).get("toolInput")
        key = _key(name, seen)
        answer = self.recorded.get(key)
        made = copy.deepcopy(self.marks.get(key, {})) if answer is not None else {}
        self.add("tool_call", {"toolCallId": call.get("toolCallId"), "toolName": name, "toolInput": tool_input, **made})
        if answer is None:
            given = tool_results(call) if tool_results is not None else NO_RESULT
            if given is NO_RESULT:
                shown = canonical_bytes(tool_input).decode()
                return f"stopped at a call the parent never made: {name} {shown}; give its result to go on"
            answer = given if isinstance(given, dict) and set(given) == {"error"} else {"result": given}
        body = {"toolCallId": call.get("toolCallId"), "toolName": name, **answer}
        self.add("tool_result", body)
        return dict(body)


def _first_request(forked_step: Step, steps: list[Step], at: int, end: int, value: Any) -> dict[str, Any]:
    """The parent's request after the fork's turn with the new value in place, or one rebuilt from the turn."""
    forked = forked_step.view()
    call_id = forked.toolCallId if isinstance(forked, ToolResultView) else None
    request = None
    if end < len(steps) and steps[end].type == "model_input":
        request = _with_new_value(steps[end].payload, call_id, value)
    return request if request is not None else _rebuilt(steps, at, end, value)


def what_if(
    parent: Cassette,
    at: int,
    value: Any,
    model: ModelSource,
    *,
    trace_id: str,
    tool_results: ToolAnswer | None = None,
    model_name: str | None = None,
    progress: Callable[[str], None] | None = None,
    clock: Callable[[], int] = lambda: int(time.time() * 1000),
    redactor: Any = ACTIVE,
    ask_model: str | None = None,
) -> tuple[Cassette, str]:
    """Fork `parent` at tool_result `at` with `value` and continue without the agent.

    Returns the fork and why it stopped: `final answer`, `run ended`, or the reason it is incomplete.
    `tool_results(call)` answers a tool call the parent never made (return `NO_RESULT` to stop there; a dict
    with `error` is an error result, anything else the result).  `model_name` goes into requests that name no
    model (an imported Claude Code session records none); `ask_model` replaces the model every request names
    (a sweep's `--model`: the same conversation asked of another model)."""
    original = check_fork_point(parent, at)
    redact = chosen(redactor)  # the policy in force, unless the caller names one (None: none)
    if redact is not None:  # the parent as the policy lets it out: its prefix, its recorded results
        parent = msgspec.structs.replace(parent, steps=rechain(parent.steps, redact))
    run = _Continuation(parent, at, fork_chain(parent, at, value, trace_id, redact=redact), clock, redact)
    steps = parent.steps
    say = progress or (lambda _: None)
    end = turn_end(steps, at + 1)
    for step in steps[at + 1:end]:  # the same turn's other calls and results, as recorded
        run.add(step.type, copy.deepcopy(step.payload), step.timestamp)
    request = _first_request(original, steps, at, end, value)
    ids = _ids_after(run.chain.steps)
    for turn in range(MAX_MODEL_CALLS):
        if ask_model or (model_name and not request.get("model")):
            request["model"] = ask_model or model_name
        run.add("model_input", request)
        say(f"model call {turn + 1}…")
        if isinstance(model, LiveModel):
            model.outputs = [step.payload for step in run.chain.steps if step.type == "model_output"]
        output = model.reply(request, ids)
        run.add("model_output", output, tokens=model.last_tokens if isinstance(model, LiveModel) else None,
                origin=model.last_origin if isinstance(model, LiveModel) else None)
        calls = calls_of(output)
        if output.get("type") == "final_answer" or not calls:
            text = output.get("text") if isinstance(output.get("text"), str) else ""
            run.add("metadata", {"event": "run_completed", "status": "success", "result": text})
            return run.finish("final answer")
        results: list[dict[str, Any]] = []
        for call in calls:
            body = run.answer(call, tool_results)
            if isinstance(body, str):
                return run.finish(body)
            results.append(body)
        request = _grown(request, output, results)
    return run.finish(f"stopped after {MAX_MODEL_CALLS} model calls")


def _rebuilt(steps: list[Step], at: int, end: int, value: Any) -> dict[str, Any]:
    """When the parent has no request after the fork's turn: the turn's request, its output and the results."""
    start = turn_start(steps, at)
    if start < 2 or steps[start - 1].type != "model_output" or steps[start - 2].type != "model_input":
        raise UsageError(f"step {at} does not follow a recorded model request; fork at a tool result the model "
                         "asked for")
    request = steps[start - 2].payload
    output = steps[start - 1].payload
    if not isinstance(request, dict) or not isinstance(output, dict):
        raise UsageError(f"the request before step {at} is not an object; the cassette is malformed")
    results = []
    for step in steps[start:end]:
        if step.type == "tool_result" and isinstance(step.payload, dict):
            body = dict(step.payload)
            if step.index == at:
                body.pop("error", None)
                body["result"] = value
            results.append(body)
    return _grown(request, output, results)
