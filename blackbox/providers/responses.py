"""The OpenAI Responses API (`/responses`) as a provider.

The translation of what an SDK sends and receives lives in `providers.openai_responses` (pure functions); this
is its provider class, with the Responses event stream (`providers.responses_stream`) as its stream codec and
`build_request`, the what-if's direction (a neutral `model_input` back to a stateless Responses request).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from blackbox.apis import facts
from blackbox.format.payloads import ModelInput, ModelOutput
from blackbox.format.tokens import Tokens
from blackbox.providers import openai_responses, origins, responses_stream
from blackbox.providers import token_counts as counts
from blackbox.providers.base import CodecProvider
from blackbox.providers.neutral import CallIds, compact_json
from blackbox.providers.outgoing import kept, messages_of, parts, result_text, tools_of

__all__ = ["PROVIDER", "Responses", "build_request"]

#: Top-level request controls and their neutral `params` names (`text.*` and `reasoning.*` are read from
#: their objects by the codec).
KEPT_PARAMS: Mapping[str, str] = dict(openai_responses.PARAMS)
_NESTED = (("text", (("format", "responseFormat"), ("verbosity", "verbosity"))),
           ("reasoning", (("effort", "reasoningEffort"), ("summary", "reasoningSummary"))))


class Responses(CodecProvider):
    """Responses API requests and responses, unstreamed and streamed; errors take OpenAI's error shape."""

    name = "responses"
    label = "OpenAI Responses"
    api = facts("openai")
    suffix = "/responses"
    kept_params = KEPT_PARAMS
    stream = responses_stream.CODEC
    infers = False  # a GPT model name means Chat Completions unless the run says Responses
    call_slots = staticmethod(origins.responses_slots)

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        return cast(ModelInput, openai_responses.normalize_request(body, ids, self.kept_params))

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        return cast(ModelOutput, openai_responses.normalize_response(body, ids))

    def token_counts(self, body: dict[str, Any]) -> Tokens | None:
        return counts.responses(body)

    def synthesize_response(self, output: ModelOutput, *, step_index: int, timestamp_ms: int,
                            model: str | None) -> dict[str, Any]:
        return openai_responses.synthesize_response(dict(output), step_index=step_index,
                                                    timestamp_ms=timestamp_ms, model=model)

    def error_body(self, message: str) -> dict[str, Any]:
        return openai_responses.error_body(message)

    def is_stream(self, body: dict[str, Any]) -> bool:
        return openai_responses.is_stream_request(body)

    def build_request(self, model_input: Mapping[str, Any]) -> dict[str, Any]:
        """A stateless Responses request (the whole conversation in `input`) for a neutral `model_input`."""
        items: list[dict[str, Any]] = []
        for role, message in messages_of(model_input):
            content = parts(message.get("content"))
            text = "\n\n".join(p["text"] for p in content if p.get("type") == "text" and isinstance(p.get("text"), str))
            if text or not content:
                items.append({"role": role, "content": text})
            for part in content:
                if part.get("type") == "tool_use":
                    items.append({"type": "function_call", "call_id": part.get("toolCallId"),
                                  "name": part.get("toolName"), "arguments": compact_json(part.get("toolInput") or {})})
                elif part.get("type") == "tool_result":
                    items.append({"type": "function_call_output", "call_id": part.get("toolCallId"),
                                  "output": result_text(part)})
        body: dict[str, Any] = {"model": model_input.get("model"), "input": items}
        if isinstance(model_input.get("systemPrompt"), str):
            body["instructions"] = model_input["systemPrompt"]
        body.update(kept(model_input, self.sent_fields))
        found = model_input.get("params")
        params: Mapping[str, Any] = found if isinstance(found, dict) else {}
        for field, keys in _NESTED:
            nested = {key: params[neutral] for key, neutral in keys if params.get(neutral) is not None}
            if nested:
                body[field] = nested
        tools = [{"type": "function", "name": name, "description": description, "parameters": schema}
                 for name, description, schema in tools_of(model_input)]
        if tools:
            body["tools"] = tools
        return body


PROVIDER = Responses()
build_request = PROVIDER.build_request  # the what-if's direction, as a function
