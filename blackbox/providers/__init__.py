"""The providers: pure translations between each API's wire format and Blackbox's neutral payloads.

A provider does no I/O and keeps no state beyond the `CallIds` map handed to it, so a request is checked (and
refused if unsupported) before it is sent.  `route(path)` names the provider of a request path; the session
talks to every provider through `Provider` only, so adding one touches no session code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from blackbox.payloads import ModelInput, ModelOutput
from blackbox.providers import anthropic, openai_chat, responses
from blackbox.providers.neutral import CallIds
from blackbox.providers.stream import StreamCodec

__all__ = ["ANTHROPIC", "OPENAI_CHAT", "PROVIDERS", "RESPONSES", "CallIds", "Provider", "route"]


class Provider(Protocol):
    """One API (a request path) and its wire format."""

    name: str  # "anthropic" | "openai" | "responses"
    kept_params: Mapping[str, str]  # request field -> the neutral `params` name it is kept under
    stream: StreamCodec  # the API's event stream: assembles a recorded stream, synthesizes a replayed one

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        """The neutral `model_input` of a request; raises `BlackboxUnsupportedError` for what cannot be
        recorded and replayed faithfully (leaving `ids` as it was)."""
        ...

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        """The neutral `model_output` of an (unstreamed) response body."""
        ...

    def synthesize_response(self, output: ModelOutput, *, step_index: int, timestamp_ms: int,
                            model: str | None) -> dict[str, Any]:
        """The response body an SDK accepts for a recorded output (replay, scripted forks)."""
        ...

    def error_body(self, message: str) -> dict[str, Any]:
        """The API's HTTP 400 error body (the SDKs raise it without retrying)."""
        ...

    def is_stream(self, body: dict[str, Any]) -> bool:
        """Whether the request asks for a server-sent-event stream."""
        ...


ANTHROPIC: Provider = anthropic.PROVIDER
OPENAI_CHAT: Provider = openai_chat.PROVIDER
RESPONSES: Provider = responses.PROVIDER
PROVIDERS: tuple[Provider, ...] = (ANTHROPIC, OPENAI_CHAT, RESPONSES)


def route(path: str) -> Provider | None:
    """The provider a request path belongs to, or None (not a model call)."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/v1/messages"):
        return ANTHROPIC
    if path.endswith("/chat/completions"):
        return OPENAI_CHAT
    if path.endswith("/responses"):
        return RESPONSES
    return None
