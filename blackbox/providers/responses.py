"""The OpenAI Responses API (`/responses`): routed, and for now refused before anything is sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from blackbox.payloads import ModelInput, ModelOutput
from blackbox.providers import openai_chat
from blackbox.providers.neutral import CallIds, unsupported, wants_stream

__all__ = ["PROVIDER"]


def _refuse() -> NoReturn:
    raise unsupported("the OpenAI Responses API (/responses)",
                      "use client.chat.completions.create(...) for recorded runs")


class Responses:
    """Every request is refused; errors take OpenAI's error shape."""

    name = "responses"
    kept_params: Mapping[str, str] = {}

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        _refuse()

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        _refuse()

    def synthesize_response(self, output: ModelOutput, *, step_index: int, timestamp_ms: int,
                            model: str | None) -> dict[str, Any]:
        _refuse()

    def error_body(self, message: str) -> dict[str, Any]:
        return openai_chat.error_body(message)

    def is_stream(self, body: dict[str, Any]) -> bool:
        return wants_stream(body)


PROVIDER = Responses()
