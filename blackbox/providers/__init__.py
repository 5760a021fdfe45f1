"""The providers: pure translations between each API's wire format and Blackbox's neutral payloads.

A provider does no I/O and keeps no state beyond the `CallIds` map handed to it, so a request is checked (and
refused if unsupported) before it is sent.  Each API is one object (a `base.CodecProvider`) holding every fact
and behaviour of it; `PROVIDERS` is the registry, and `route(request)` asks each in turn whether a request is
its model call.  The session and the what-if talk to every provider through `Provider` (that base) only, so
adding one is its module (a dialect of an API: a subclass with data) and a line in `PROVIDERS`, plus an entry in
`blackbox.apis` for an API with keys of its own (docs/architecture.md, "Adding an adapter").
"""

from __future__ import annotations

from typing import Any

from blackbox.errors import BlackboxUnsupportedError
from blackbox.providers import anthropic, azure, gemini, openai_chat, responses
from blackbox.providers.base import CodecProvider
from blackbox.providers.neutral import CallIds
from blackbox.wire import Request

__all__ = ["ANTHROPIC", "OPENAI_CHAT", "PROVIDERS", "RESPONSES", "CallIds", "Provider", "by_name", "for_model",
           "route", "unknown_request"]


#: Every provider is a `CodecProvider`: one class per API, its facts as class data.
Provider = CodecProvider


ANTHROPIC: Provider = anthropic.PROVIDER
OPENAI_CHAT: Provider = openai_chat.PROVIDER
RESPONSES: Provider = responses.PROVIDER
#: Every provider, asked in this order (the first that matches a request takes it: Azure before OpenAI; Gemini,
#: whose paths no other API shares, first: its no is one character test, the others' are not).
PROVIDERS: tuple[Provider, ...] = (gemini.PROVIDER, azure.AZURE_CHAT, azure.AZURE_RESPONSES, ANTHROPIC, OPENAI_CHAT,
                                   RESPONSES)


# (method, host, path, query) → the providers to ask on every request of that shape (their headers decide), then
# the provider its shape alone names (or None).
_Shape = tuple[str, str, str, bytes | tuple[tuple[str, str], ...]]
_PLANS: dict[_Shape, tuple[tuple[Provider, ...], Provider | None]] = {}
_PLANNED_FOR: list[tuple[Provider, ...]] = [PROVIDERS]  # the registry `_PLANS` was made from


def route(request: Request) -> Provider | None:
    """The provider whose model call `request` is, or None (not a model call Blackbox knows).  The same as
    asking each provider's `matches` in turn: what the request's shape decides is remembered per shape (an agent
    sends a few, on every call), and only the providers its headers may decide are asked again."""
    if PROVIDERS is not _PLANNED_FOR[0]:  # the registry was changed (a provider added): plan again
        _PLANS.clear()
        _PLANNED_FOR[0] = PROVIDERS
    shape = (request.method, request.host, request.path, request.shape_query)
    plan = _PLANS.get(shape)
    if plan is None:
        plan = _plan(request)
        if len(_PLANS) >= 512:
            _PLANS.clear()
        _PLANS[shape] = plan
    ask, decided = plan
    for provider in ask:
        if provider.matches(request):
            return provider
    return decided


def _plan(request: Request) -> tuple[tuple[Provider, ...], Provider | None]:
    ask: list[Provider] = []
    for provider in PROVIDERS:
        found = provider.matches_shape(request)
        if found is None:
            ask.append(provider)
        elif found:
            return tuple(ask), provider
    return tuple(ask), None


def by_name(name: str) -> Provider | None:
    """The provider registered as `name`."""
    return next((provider for provider in PROVIDERS if provider.name == name), None)


def for_model(model: Any) -> Provider | None:
    """The provider a model name belongs to (`claude-…` Anthropic, `gpt-…` OpenAI chat, …), or None."""
    if not isinstance(model, str):
        return None
    name = model.lower().rsplit("/", 1)[-1]
    return next((provider for provider in PROVIDERS
                 if provider.infers and name.startswith(provider.api.model_prefixes or ("\0",))), None)


#: Endpoints that keep a conversation on the provider's servers (path piece → what it is): refused with the advice
#: that fits them, not the general one (wrapping them as a tool would replay their answer but not their state).
SERVER_CONVERSATIONS: tuple[tuple[str, str], ...] = (
    ("/responses/compact", "server-side compaction (responses.compact, the Agents SDK's "
                           "OpenAIResponsesCompactionSession)"),
    ("/conversations", "OpenAI's Conversations API (client.conversations, the Agents SDK's "
                       "OpenAIConversationsSession)"),
    ("/v1/sessions", "a managed-agent session (client.beta.sessions), whose agent runs on the server"),
)


def unknown_request(request: Request, *, offline: bool) -> BlackboxUnsupportedError:
    """The refusal of a request no provider knows.  Never a silent hole: replay cannot answer it, and a
    recording that let it pass would hold a run that cannot replay, so record refuses it too (its query is
    never shown: it may carry a key)."""
    what = f"{request.method} {request.host}{request.path}"
    kept = next((name for piece, name in SERVER_CONVERSATIONS if piece in request.path), None)
    if kept is not None:
        return BlackboxUnsupportedError(
            f"{what}: {kept} keeps the conversation on the provider's servers, which no cassette can hold; keep the "
            "history in the agent (the Agents SDK's SQLiteSession, pydantic-ai's message_history) and send it whole")
    if offline:
        return BlackboxUnsupportedError(
            f"the request {what} would need the network, and replay (or a scripted fork) never uses it; only "
            f"model calls ({', '.join(sorted({p.label for p in PROVIDERS}))}) are answered")
    return BlackboxUnsupportedError(
        f"{what} is not a model call Blackbox records, and a recording that let it pass could not replay; make "
        "it with a client not built on bb.http_client() and wrap the function that makes it as a tool (bb.tool), "
        "so that replay serves its result")
