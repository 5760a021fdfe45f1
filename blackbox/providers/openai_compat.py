"""What OpenAI-compatible servers add to Chat Completions, and the one rule that keeps or drops it.

Ollama, vLLM, LM Studio, OpenRouter, Groq, DeepSeek and LiteLLM's proxy answer `openai.OpenAI(base_url=...)`
in OpenAI's chat format with fields of their own (docs/format.md, "OpenAI-compatible servers"):

- a request field that changes what the model may answer (sampling, decoding, reasoning, structured output,
  which model or which host serves it) is kept as a param under the camelCase of its name (`SERVER_PARAMS`);
  one about transport, accounting, caching, logging or ids (`DROPPED_FIELDS`) is dropped, as OpenAI's own
  `user`, `metadata` and `store` are, and so is any field named in neither table (the original's rule);
- a response's reasoning text (`REASONING_FIELDS`: DeepSeek's `reasoning_content`, OpenRouter's, Groq's and
  Ollama's `reasoning`) is treated like thinking: never part of the answer, kept aside in the output's
  `thoughts` as `{"text", "field"}` so a replayed response hands it back in the field it came in; the same
  fields in a request's history are dropped like thinking blocks;
- accounting and routing facts of a response (`usage.cost`, OpenRouter's `provider`, Groq's `x_groq`, vLLM's
  `stop_reason`, `native_finish_reason`) are dropped with the rest of the usage; what would not replay
  faithfully (Groq's server-side `executed_tools`) is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackbox.providers.neutral import unsupported

__all__ = ["DROPPED_FIELDS", "REASONING_FIELDS", "SERVER_PARAMS", "put_thoughts", "refuse_server_tools",
           "thoughts_of"]

#: Request fields of OpenAI-compatible servers that change what the model answers → their neutral name.
SERVER_PARAMS: Mapping[str, str] = {
    # sampling (vLLM, Ollama, LM Studio, OpenRouter, LiteLLM, Groq)
    "top_k": "topK",
    "min_p": "minP",
    "top_a": "topA",
    "typical_p": "typicalP",
    "repetition_penalty": "repetitionPenalty",
    "repeat_penalty": "repeatPenalty",
    "length_penalty": "lengthPenalty",
    "min_tokens": "minTokens",
    "ignore_eos": "ignoreEos",
    "stop_token_ids": "stopTokenIds",
    "bad_words": "badWords",
    "allowed_token_ids": "allowedTokenIds",
    "best_of": "bestOf",
    "use_beam_search": "useBeamSearch",
    "include_stop_str_in_output": "includeStopStrInOutput",
    "skip_special_tokens": "skipSpecialTokens",
    "spaces_between_special_tokens": "spacesBetweenSpecialTokens",
    "truncate_prompt_tokens": "truncatePromptTokens",
    # structured output and chat templates (vLLM)
    "guided_json": "guidedJson",
    "guided_regex": "guidedRegex",
    "guided_choice": "guidedChoice",
    "guided_grammar": "guidedGrammar",
    "guided_decoding_backend": "guidedDecodingBackend",
    "structured_outputs": "structuredOutputs",
    "chat_template": "chatTemplate",
    "chat_template_kwargs": "chatTemplateKwargs",
    "add_generation_prompt": "addGenerationPrompt",
    "continue_final_message": "continueFinalMessage",
    "documents": "documents",
    # model options and reasoning (Ollama, OpenRouter, Groq, DeepSeek)
    "options": "options",
    "think": "think",
    "reasoning": "reasoning",
    "reasoning_format": "reasoningFormat",
    "include_reasoning": "includeReasoning",
    "thinking": "thinking",
    # which model or host answers (OpenRouter, LiteLLM)
    "provider": "providerPreferences",
    "models": "models",
    "route": "route",
    "transforms": "transforms",
    "plugins": "plugins",
    "fallbacks": "fallbacks",
    "mock_response": "mockResponse",
}

#: Request fields the rule drops (transport, accounting, caching, logging, ids), named for the docs and the
#: tests that hold the rule; a field in neither table is dropped all the same.
DROPPED_FIELDS: frozenset[str] = frozenset({
    "stream", "stream_options", "user", "metadata", "store", "service_tier", "prompt_cache_key",
    "safety_identifier",
    "keep_alive", "ttl", "draft_model",  # Ollama, LM Studio: how long the model stays loaded, speculative decoding
    "usage",  # OpenRouter: {"include": true} adds the cost to the usage, which is dropped anyway
    "request_id", "priority", "cache_salt", "kv_transfer_params", "return_tokens_as_token_ids",  # vLLM
    "tags", "num_retries", "timeout", "caching", "cache", "trace_id", "session_id", "litellm_session_id",
    "user_api_key", "api_key", "api_base",  # LiteLLM's proxy (a key in the body never reaches a cassette)
})

#: Message fields that carry a reasoning model's thinking as text, in the order they are looked for.
REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning")


def thoughts_of(message: Mapping[str, Any], fields: tuple[str, ...] = REASONING_FIELDS) -> list[dict[str, Any]]:
    """A response message's reasoning (in `fields`, a provider's `reasoning_fields`) as the output's `thoughts`
    (`{"text", "field"}`; empty text skipped).

    A field holding something other than text (OpenRouter's structured `reasoning_details` is another field
    and is not kept) is refused: replay could not hand it back."""
    thoughts: list[dict[str, Any]] = []
    for field in fields:
        value = message.get(field)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise unsupported(f"a {field} that is not text", "this response cannot be replayed faithfully")
        thoughts.append({"text": value, "field": field})
    return thoughts


def put_thoughts(message: dict[str, Any], output: Mapping[str, Any],
                 fields: tuple[str, ...] = REASONING_FIELDS) -> None:
    """Hand a recorded output's reasoning back in the fields (of `fields`) it came in (a replayed response)."""
    for thought in output.get("thoughts") or ():
        if isinstance(thought, dict) and thought.get("field") in fields \
                and isinstance(thought.get("text"), str):
            message[thought["field"]] = message.get(thought["field"], "") + thought["text"]


def refuse_server_tools(message: Mapping[str, Any]) -> None:
    """Tools a server ran itself (Groq's compound models) leave results replay cannot reproduce."""
    if message.get("executed_tools"):
        raise unsupported("a response with server-side tool runs (executed_tools)",
                          "use a model without built-in tools and expose them as function tools the agent runs")
