"""The fake API's OpenAI-compatible dialects: the chat responses and streams of Ollama, vLLM, LM Studio,
OpenRouter, Groq, DeepSeek and LiteLLM's proxy, each with the fields that server adds (from its documentation),
written independently of Blackbox's codecs so the tests check one against the other.

A dialect's brain (`Dialect.brain()`) is a two-turn weather agent like `fakeapi.weather_brain`: first a
`get_weather` call for Paris (with the server's reasoning text), then an answer quoting the tool result.  A
request asking for a stream gets the server's chunk stream (its comments, its extra chunk fields, its way of
sending tool calls), an unstreamed one its JSON body.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakeapi import Reply, json_reply, last_tool_results, new_id

__all__ = ["DIALECTS", "Dialect", "chunk_stream"]


@dataclass(frozen=True)
class Dialect:
    """One server family's chat dialect, and what Blackbox keeps of the agent's server-specific fields."""

    name: str
    base_path: str  # below the fake's URL: where the server's `base_url` points
    model: str
    request_extra: dict[str, Any]  # what the agent sends in `extra_body`
    kept: dict[str, Any]  # the neutral params Blackbox keeps of it (the rest is dropped)
    reasoning_field: str | None = None  # the message field the server puts its reasoning text in
    top_extra: dict[str, Any] = field(default_factory=dict)  # top-level fields of every response (and chunk)
    usage_extra: dict[str, Any] = field(default_factory=dict)
    message_extra: dict[str, Any] = field(default_factory=dict)
    choice_extra: dict[str, Any] = field(default_factory=dict)
    call_id: str = "call_"  # how its tool-call ids start ("" for numeric ids)
    empty_content_with_calls: bool = False  # "" rather than null beside tool calls
    comments: tuple[str, ...] = ()  # SSE comment lines sent before the first chunk
    whole_tool_calls: bool = False  # a stream sends each tool call in one delta (Ollama)
    last_chunk_extra: dict[str, Any] = field(default_factory=dict)  # fields of the finish-reason chunk only
    usage_chunk: bool = False  # a usage chunk (no choices) before [DONE] even without stream_options

    def completion(self, *, content: str | None, calls: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
                   reasoning: str | None = None) -> dict[str, Any]:
        """An unstreamed `chat.completion` as this server sends it."""
        message: dict[str, Any] = {"role": "assistant", "content": content, **self.message_extra}
        if calls:
            message["tool_calls"] = [
                {"id": self._call_id(), "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for name, arguments in calls]
            if content is None and self.empty_content_with_calls:
                message["content"] = ""
        if reasoning is not None and self.reasoning_field is not None:
            message[self.reasoning_field] = reasoning
        return {
            "id": new_id("gen-" if self.name == "openrouter" else "chatcmpl-", 24),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop", **self.choice_extra}],
            "usage": {"prompt_tokens": 31, "completion_tokens": 9, "total_tokens": 40, **self.usage_extra},
            **self.top_extra,
        }

    def _call_id(self) -> str:
        if not self.call_id:
            return str(int(new_id("", 9).encode().hex(), 16) % 10**9)  # LM Studio: a number as a string
        return new_id(self.call_id, 24)

    def brain(self) -> Any:
        """The two-turn weather agent in this dialect (the answer depends only on the request)."""
        def answer(body: dict[str, Any]) -> Reply:
            turns = sum(1 for message in body.get("messages") or [] if message.get("role") == "assistant")
            if turns == 0:
                reply = self.completion(content=None, calls=[("get_weather", {"city": "Paris"})],
                                        reasoning="The user wants Paris: call get_weather.")
            else:
                reply = self.completion(content="Weather: " + "; ".join(last_tool_results(body)),
                                        reasoning="I have the forecast.")
            return chunk_stream(self, reply) if body.get("stream") else json_reply(reply)
        return answer


def chunk_stream(dialect: Dialect, body: dict[str, Any], *, error: dict[str, Any] | None = None,
                 not_json: bool = False) -> Reply:
    """`body` as `dialect`'s chunk stream: its comments, the reasoning and the content a few characters at a
    time, the tool calls, the finish-reason chunk (with the server's last-chunk fields), a usage chunk, `[DONE]`.
    `error` sends that chunk instead of the finish (OpenRouter's mid-stream error); `not_json` a frame that is
    not JSON after the first chunk."""
    top = {key: body[key] for key in ("id", "created", "model")}
    top.update({"object": "chat.completion.chunk", **dialect.top_extra})
    choice, message = body["choices"][0], body["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        data = {**top, **extra, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                             "finish_reason": finish}]}
        return "data: " + json.dumps(data, separators=(",", ":")) + "\n\n"

    lines = [f": {comment}\n\n" for comment in dialect.comments]
    lines.append(chunk({"role": "assistant", "content": ""}))
    if not_json:
        lines.append("data: {not json\n\n")
    reasoning = message.get(dialect.reasoning_field) if dialect.reasoning_field else None
    for piece in _pieces(reasoning or ""):
        lines.append(chunk({dialect.reasoning_field: piece, "content": None}))  # type: ignore[dict-item]
    for piece in _pieces(message.get("content") or ""):
        lines.append(chunk({"content": piece}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        if dialect.whole_tool_calls:
            lines.append(chunk({"tool_calls": [{"index": index, **call}]}))
            continue
        lines.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                            "function": {"name": function["name"], "arguments": ""}}]}))
        for piece in _pieces(function["arguments"]):
            lines.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if error is not None:
        lines.append(chunk({}, "error", error=error))
        return Reply(content_type="text/event-stream", chunks=[line.encode() for line in lines])
    lines.append(chunk({}, choice["finish_reason"], **dialect.last_chunk_extra))
    if dialect.usage_chunk:
        lines.append("data: " + json.dumps({**top, "choices": [], "usage": body["usage"]}) + "\n\n")
    lines.append("data: [DONE]\n\n")
    return Reply(content_type="text/event-stream", chunks=[line.encode() for line in lines])


def _pieces(text: str, size: int = 6) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


_USAGE_X_GROQ = {"queue_time": 0.02, "prompt_tokens": 31, "prompt_time": 0.001, "completion_tokens": 9,
                 "completion_time": 0.01, "total_tokens": 40, "total_time": 0.011}

DIALECTS: dict[str, Dialect] = {dialect.name: dialect for dialect in (
    Dialect(
        "openrouter", "/api/v1", "anthropic/claude-sonnet-4.5",
        request_extra={"provider": {"order": ["anthropic"], "allow_fallbacks": False}, "reasoning": {"effort": "high"},
                       "transforms": ["middle-out"], "top_k": 40, "usage": {"include": True}},
        kept={"providerPreferences": {"order": ["anthropic"], "allow_fallbacks": False},
              "reasoning": {"effort": "high"}, "transforms": ["middle-out"], "topK": 40},
        reasoning_field="reasoning", top_extra={"provider": "Anthropic"},
        usage_extra={"cost": 0.00123, "is_byok": False, "cost_details": {"upstream_inference_cost": None}},
        message_extra={"refusal": None, "reasoning_details": [
            {"type": "reasoning.text", "text": "…", "signature": "RXFzaWc=", "format": "anthropic-claude-v1",
             "index": 0}]},
        choice_extra={"native_finish_reason": "end_turn"},
        comments=("OPENROUTER PROCESSING", "OPENROUTER PROCESSING"), usage_chunk=True),
    Dialect(
        "groq", "/openai/v1", "qwen/qwen3-32b",
        request_extra={"reasoning_format": "parsed", "service_tier": "on_demand", "top_k": 20},
        kept={"reasoningFormat": "parsed", "topK": 20},
        reasoning_field="reasoning", top_extra={"x_groq": {"id": "req_01k0fakegroqid"}},
        usage_extra={"queue_time": 0.02, "prompt_time": 0.001, "completion_time": 0.01, "total_time": 0.011},
        last_chunk_extra={"x_groq": {"id": "req_01k0fakegroqid", "usage": _USAGE_X_GROQ}}),
    Dialect(
        "ollama", "/v1", "qwen3:8b",
        request_extra={"keep_alive": "5m", "options": {"num_ctx": 8192}, "top_k": 20, "reasoning_effort": "low"},
        kept={"options": {"num_ctx": 8192}, "topK": 20, "reasoningEffort": "low"},
        reasoning_field="reasoning", top_extra={"system_fingerprint": "fp_ollama"},
        empty_content_with_calls=True, whole_tool_calls=True),
    Dialect(
        "vllm", "/v1", "Qwen/Qwen3-8B",
        request_extra={"top_k": 20, "min_p": 0.05, "repetition_penalty": 1.05,
                       "chat_template_kwargs": {"enable_thinking": True}, "request_id": "run-17", "priority": 0,
                       "skip_special_tokens": True},
        kept={"topK": 20, "minP": 0.05, "repetitionPenalty": 1.05, "chatTemplateKwargs": {"enable_thinking": True},
              "skipSpecialTokens": True},
        reasoning_field="reasoning_content", top_extra={"prompt_logprobs": None, "kv_transfer_params": None},
        choice_extra={"stop_reason": None}, call_id="chatcmpl-tool-"),
    Dialect(
        "deepseek", "", "deepseek-reasoner",
        request_extra={"thinking": {"type": "enabled"}},
        kept={"thinking": {"type": "enabled"}},
        reasoning_field="reasoning_content", top_extra={"system_fingerprint": "fp_ffc7281d48_prod0820_fp8_kvcache"},
        usage_extra={"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 31,
                     "completion_tokens_details": {"reasoning_tokens": 6}},
        empty_content_with_calls=True, usage_chunk=True),
    Dialect(
        "lmstudio", "/v1", "qwen2.5-7b-instruct",
        request_extra={"ttl": 300, "draft_model": "qwen2.5-0.5b-instruct", "top_k": 40, "repeat_penalty": 1.1},
        kept={"topK": 40, "repeatPenalty": 1.1},
        top_extra={"system_fingerprint": "qwen2.5-7b-instruct", "stats": {}}, call_id=""),
    Dialect(
        "litellm", "/v1", "claude-sonnet",
        request_extra={"metadata": {"tags": ["eval"]}, "fallbacks": ["gpt-4o"], "num_retries": 2,
                       "user": "someone"},
        kept={"fallbacks": ["gpt-4o"]},
        reasoning_field="reasoning_content",
        message_extra={"thinking_blocks": [{"type": "thinking", "thinking": "…", "signature": "RXFzaWc="}],
                       "provider_specific_fields": {"citations": None}},
        usage_extra={"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}),
)}
