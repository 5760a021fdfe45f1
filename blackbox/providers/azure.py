"""Azure OpenAI: the Chat Completions and Responses wire formats at Azure's paths, keyed by `api-key`.

Azure speaks OpenAI's formats, so its providers are OpenAI's with Azure's facts: the resource's host, the
deployment paths (`/openai/deployments/{deployment}/chat/completions?api-version=…`) and the `/openai/v1/`
paths, the `api-key` header.  The deployment is the model: a request to a deployment path records the
deployment's name as its `model`.  A request Azure's facts do not single out (the `/openai/v1/` path on a host
that is not Azure's, with a bearer key) is OpenAI's format all the same, and the OpenAI providers record it
identically.
"""

from __future__ import annotations

import re
from typing import Any

from blackbox.apis import AZURE_API_VERSION, facts
from blackbox.providers.openai_chat import OpenAIChat
from blackbox.providers.responses import Responses
from blackbox.wire import Request

__all__ = ["AZURE_CHAT", "AZURE_RESPONSES", "AzureChat", "AzureResponses", "deployment", "is_azure"]

API_VERSION = AZURE_API_VERSION  # the what-if's `api-version` on a deployment path (the latest GA version)
_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com", ".azure-api.net")
_DEPLOYMENT = re.compile(r"/openai/deployments/([^/]+)/")


def deployment(path: str) -> str | None:
    """The deployment a request path names, if any."""
    found = _DEPLOYMENT.search(path)
    return found.group(1) if found else None


def is_azure(request: Request) -> bool:
    """Azure's facts: its hosts, a deployment path, an `api-version` query, or the `api-key` header."""
    return _azure_shape(request) or request.header("api-key") is not None


def _azure_shape(request: Request) -> bool:
    return (request.host.endswith(_HOSTS) or deployment(request.path) is not None
            or request.param("api-version") is not None)


def _azure_endpoint(base_url: str, model: str, tail: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/openai/v1"):
        return f"{base}{tail}"
    return f"{base}/openai/deployments/{model}{tail}?api-version={API_VERSION}"


class _Azure:
    """What both Azure providers add to OpenAI's: Azure's facts, its requests, its `api-key` header."""

    api = facts("azure")
    infers = False

    def matches(self, request: Request) -> bool:
        return super().matches(request) and is_azure(request)  # type: ignore[misc]

    def matches_shape(self, request: Request) -> bool | None:
        if not super().matches(request):  # type: ignore[misc]
            return False
        return True if _azure_shape(request) else None  # else the `api-key` header decides

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"api-key": key}


class AzureChat(_Azure, OpenAIChat):
    """Chat Completions on Azure OpenAI."""

    name = "azure"
    label = "Azure OpenAI Chat Completions"

    def body_of(self, request: Request) -> dict[str, Any]:
        body = super().body_of(request)
        name = deployment(request.path)
        if name is not None:
            body["model"] = name
        return body

    def endpoint(self, base_url: str, model: str) -> str:
        return _azure_endpoint(base_url, model, "/chat/completions")


class AzureResponses(_Azure, Responses):
    """The Responses API on Azure OpenAI (`/openai/responses`, `/openai/v1/responses`)."""

    name = "azure-responses"
    label = "Azure OpenAI Responses"

    def endpoint(self, base_url: str, model: str) -> str:
        base = base_url.rstrip("/")
        return f"{base}/responses" if base.endswith("/openai/v1") else f"{base}/openai/responses?api-version=preview"


AZURE_CHAT = AzureChat()
AZURE_RESPONSES = AzureResponses()
