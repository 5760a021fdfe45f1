"""What each model API is, as data: where its key lives, its base URL, its model names, its provider-only fields.

The ground floor of the providers: `secrets` derives its key variables, key headers and id patterns from this
table, the launcher its placeholder keys, the providers their defaults.  A new API is one entry here (and its
codec): nothing else keeps a list of APIs.  Plain data, importing nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["API_FACTS", "AZURE_API_VERSION", "GATEWAY_KEY_HEADERS", "ApiFacts", "facts"]

#: Azure OpenAI's latest GA `api-version`: what a what-if sends on a deployment path, and replay's stand-in.
AZURE_API_VERSION = "2024-10-21"


@dataclass(frozen=True)
class ApiFacts:
    """One API family's facts.  Patterns are regular-expression source (compiled by `secrets`, ASCII)."""

    name: str  # anthropic | openai | gemini | azure
    label: str  # how messages name it
    key_variables: tuple[str, ...]  # the environment variables its SDKs read the key from, preferred first
    key_headers: tuple[str, ...] = ()  # request headers (lower case) an SDK sends the key in
    key_query: tuple[str, ...] = ()  # query parameters that may carry the key
    base_url_variable: str = ""  # the variable naming a proxy or test server
    default_base_url: str = ""  # "" when there is none (Azure: the resource's endpoint must be given)
    model_prefixes: tuple[str, ...] = ()  # model names of this API start so (lower case, after a '/' prefix)
    provider_fields: tuple[str, ...] = ()  # keys only a raw response of this API holds (verify flags them)
    id_patterns: tuple[tuple[str, str], ...] = ()  # (what it is, pattern): provider ids no cassette may hold
    #: The key variable every SDK of the API reads, which replay gives a placeholder when none is set ("": the
    #: first of `key_variables`).
    placeholder_variable: str = ""
    #: Settings (not keys) an SDK refuses to start without, and the stand-in replay gives each when unset: a
    #: replayed call never reaches them.
    start_settings: tuple[tuple[str, str], ...] = ()
    #: The official SDK's (module, distribution): whose version a cassette's `made` field names when it was loaded.
    sdk: tuple[str, str] | None = None


API_FACTS: tuple[ApiFacts, ...] = (
    ApiFacts(
        "anthropic", "Anthropic", ("ANTHROPIC_API_KEY",), ("x-api-key", "authorization"),
        base_url_variable="ANTHROPIC_BASE_URL", default_base_url="https://api.anthropic.com",
        model_prefixes=("claude",), provider_fields=("usage", "stop_reason", "stop_sequence"),
        id_patterns=(("an Anthropic tool-use id (toolu_…)", r"\btoolu_[A-Za-z0-9]*\d"),
                     ("an Anthropic message id (msg_…)", r"\bmsg_[A-Za-z0-9]*\d")), sdk=("anthropic", "anthropic")),
    ApiFacts(
        "openai", "OpenAI", ("OPENAI_API_KEY",), ("authorization",),
        base_url_variable="OPENAI_BASE_URL", default_base_url="https://api.openai.com/v1",
        model_prefixes=("gpt", "o1", "o3", "o4", "chatgpt", "text-", "davinci", "ft:gpt", "codex"),
        provider_fields=("usage", "finish_reason", "system_fingerprint"),
        id_patterns=(("an OpenAI call id (call_…)", r"\bcall_[A-Za-z0-9]{20,}"),
                     ("an OpenAI completion id (chatcmpl-…)", r"\bchatcmpl-[A-Za-z0-9]{8,}"),
                     ("an OpenAI response id (resp_…)", r"\bresp_[A-Za-z0-9]{16,}")), sdk=("openai", "openai")),
    ApiFacts(
        "azure", "Azure OpenAI", ("AZURE_OPENAI_API_KEY",), ("api-key", "authorization"),
        base_url_variable="AZURE_OPENAI_ENDPOINT",
        # `openai.AzureOpenAI()` and pydantic-ai's Azure provider refuse to start without a version and endpoint
        start_settings=(("OPENAI_API_VERSION", AZURE_API_VERSION),
                        ("AZURE_OPENAI_ENDPOINT", "https://blackbox-replay-placeholder.openai.azure.com"))),
    ApiFacts(
        "gemini", "Gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), ("x-goog-api-key",), ("key",),
        base_url_variable="GOOGLE_GEMINI_BASE_URL", default_base_url="https://generativelanguage.googleapis.com",
        model_prefixes=("gemini", "gemma", "learnlm"), provider_fields=("usageMetadata",),
        # google-genai, pydantic-ai and LangChain all read GOOGLE_API_KEY; google-genai warns when both are set
        placeholder_variable="GOOGLE_API_KEY", sdk=("google.genai", "google-genai")),
)

#: Headers that API gateways and proxies take a key in, whichever model API is behind them.
GATEWAY_KEY_HEADERS: tuple[str, ...] = (
    "x-portkey-api-key", "ocp-apim-subscription-key", "cf-aig-authorization", "helicone-auth",
    "x-litellm-api-key", "openrouter-api-key",
)


def facts(name: str) -> ApiFacts:
    """The entry named `name`; KeyError names the known ones."""
    for entry in API_FACTS:
        if entry.name == name:
            return entry
    raise KeyError(f"no API named {name!r}; known: {', '.join(e.name for e in API_FACTS)}")
