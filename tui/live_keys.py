"""What a live fork from the UI needs: the provider a model's name belongs to, and whether its key is set."""

from __future__ import annotations

import os

from blackbox.providers import PROVIDERS, by_name, for_model

__all__ = ["key_problem", "provider_of"]


def key_problem(provider: str | None, env: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """Why a live continuation would fail at its first request for want of a key, or None."""
    found = by_name(provider) if provider else None
    apis = [found.api] if found is not None else [p.api for p in PROVIDERS]
    names = list(dict.fromkeys(name for api in apis for name in api.key_variables))
    if any(env.get(name, "").strip() for name in names):
        return None
    return f"{' or '.join(names)} is not set: a live run needs the API key in the environment"


def provider_of(model: str | None) -> str | None:
    """The provider name a model name belongs to, or None."""
    found = for_model(model)
    return found.name if found is not None else None
