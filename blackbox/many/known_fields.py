"""The response fields each API documents as optional and that replay's synthesized response does not always
hold (or holds where the API may leave them out): the part of the provider's known response schema the drift
baseline adds to the recording's shape (docs/format.md, "Drift").

Present in a live answer, such a field is no *added* field; absent, no *removed* one; present with another
type than listed, a *type change* all the same.  Paths are `blackbox.many.shapes`' (`$.usage.service_tier`,
`$.choices[].message.refusal`).  Data only; a table per API family, keyed by the provider's registry name.
"""

from __future__ import annotations

__all__ = ["OPTIONAL_FIELDS", "optional_fields"]

_ANTHROPIC: dict[str, set[str]] = {
    "$.usage.cache_creation_input_tokens": {"number", "null"},
    "$.usage.cache_read_input_tokens": {"number", "null"},
    "$.usage.cache_creation": {"object", "null"},
    "$.usage.service_tier": {"string", "null"},
    "$.usage.server_tool_use": {"object", "null"},
    "$.container": {"object", "null"},
    "$.content[type=text].citations": {"array", "null"},
}
_CHAT: dict[str, set[str]] = {
    "$.service_tier": {"string", "null"},
    "$.system_fingerprint": {"string", "null"},
    "$.usage.prompt_tokens_details": {"object", "null"},
    "$.usage.completion_tokens_details": {"object", "null"},
    "$.choices[].message.refusal": {"string", "null"},
    "$.choices[].message.annotations": {"array"},
    "$.prompt_filter_results": {"array"},  # Azure's content filter
    "$.choices[].content_filter_results": {"object"},
}
_RESPONSES: dict[str, set[str]] = {
    "$.error": {"object", "null"},
    "$.incomplete_details": {"object", "null"},
    "$.store": {"boolean"},
    "$.background": {"boolean", "null"},
    "$.instructions": {"string", "array", "null"},
    "$.max_output_tokens": {"number", "null"},
    "$.previous_response_id": {"string", "null"},
    "$.reasoning": {"object", "null"},
    "$.service_tier": {"string", "null"},
    "$.temperature": {"number", "null"},
    "$.top_p": {"number", "null"},
    "$.text": {"object"},
    "$.truncation": {"string", "null"},
    "$.user": {"string", "null"},
    "$.output[type=message].content[type=output_text].logprobs": {"array"},
}
_GEMINI: dict[str, set[str]] = {
    "$.candidates[].safetyRatings": {"array"},
    "$.candidates[].citationMetadata": {"object"},
    "$.candidates[].avgLogprobs": {"number"},
    "$.candidates[].content.parts[].functionCall.id": {"string"},
    "$.usageMetadata.promptTokensDetails": {"array"},
    "$.usageMetadata.candidatesTokensDetails": {"array"},
    "$.usageMetadata.thoughtsTokenCount": {"number"},
    "$.createTime": {"string"},
}

#: Registry name → its optional fields (Azure's deployments speak Chat Completions or Responses).
OPTIONAL_FIELDS: dict[str, dict[str, set[str]]] = {
    "anthropic": _ANTHROPIC, "openai": _CHAT, "azure": _CHAT, "responses": _RESPONSES,
    "azure-responses": _RESPONSES, "gemini": _GEMINI,
}


def optional_fields(provider: str) -> dict[str, set[str]]:
    """The optional fields of `provider`'s answers (none known: an empty table, every difference reported)."""
    return OPTIONAL_FIELDS.get(provider, {})
