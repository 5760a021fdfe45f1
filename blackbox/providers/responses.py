"""The OpenAI Responses API (`/responses`) as a `blackbox.providers.Provider`.

The translation itself lives in `providers.openai_responses` (pure functions); this is its registry entry,
with the Responses event stream (`providers.responses_stream`) as its stream codec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from blackbox.payloads import ModelInput, ModelOutput
from blackbox.providers import openai_responses, responses_stream
from blackbox.providers.neutral import CallIds
from blackbox.providers.stream import StreamCodec

__all__ = ["PROVIDER"]

#: Top-level request controls and their neutral `params` names (`text.*` and `reasoning.*` are read from
#: their objects by the codec).
KEPT_PARAMS: Mapping[str, str] = dict(openai_responses.PARAMS)


class Responses:
    """Responses API requests and responses, unstreamed and streamed; errors take OpenAI's error shape."""

    name = "responses"
    kept_params = KEPT_PARAMS
    stream: StreamCodec = responses_stream.CODEC

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        return cast(ModelInput, openai_responses.normalize_request(body, ids))

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        return cast(ModelOutput, openai_responses.normalize_response(body, ids))

    def synthesize_response(self, output: ModelOutput, *, step_index: int, timestamp_ms: int,
                            model: str | None) -> dict[str, Any]:
        return openai_responses.synthesize_response(dict(output), step_index=step_index,
                                                    timestamp_ms=timestamp_ms, model=model)

    def error_body(self, message: str) -> dict[str, Any]:
        return openai_responses.error_body(message)

    def is_stream(self, body: dict[str, Any]) -> bool:
        return openai_responses.is_stream_request(body)


PROVIDER = Responses()
