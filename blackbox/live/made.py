"""What made a cassette: the unhashed top-level `made` field (docs/format.md, "Origin"), stamped when a file is
written by a recording, a fork or a what-if.

The versions are those of the SDKs and frameworks the process has loaded (an agent that never imported
LangChain did not run on it), so a drift report can say which SDK a run was recorded with.  Reading an
installed distribution's version is a file read per package, done once per cassette written.
"""

from __future__ import annotations

import functools
import sys
import time
from importlib import metadata
from typing import Any

import msgspec

from blackbox.apis import API_FACTS
from blackbox.format.origin import Made

__all__ = ["PACKAGES", "made_now", "made_of"]

#: The module an agent imports → the distributions that may have installed it (the first one installed wins):
#: each API's SDK (`apis`), then the frameworks and HTTP stacks on top of them.
PACKAGES: dict[str, tuple[str, ...]] = {
    **{api.sdk[0]: (api.sdk[1],) for api in API_FACTS if api.sdk is not None},
    "agents": ("openai-agents",),
    "pydantic_ai": ("pydantic-ai-slim", "pydantic-ai"),
    "langchain": ("langchain",),
    "langchain_core": ("langchain-core",),
    "langgraph": ("langgraph",),
    "langchain_anthropic": ("langchain-anthropic",),
    "langchain_openai": ("langchain-openai",),
    "langchain_google_genai": ("langchain-google-genai",),
    "mcp": ("mcp",),
    "fastmcp": ("fastmcp", "fastmcp-slim"),
    "httpx": ("httpx",),
    "httpx2": ("httpx2",),
}


@functools.cache  # read once: parsing a package's metadata took 4 ms, per fork in a 1,000-branch sweep
def _version(distributions: tuple[str, ...]) -> tuple[str, str] | None:
    for name in distributions:
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def made_now(at: int | None = None) -> Made:
    """`Made` for a file written now (or `at`, milliseconds since the epoch) by this process."""
    from blackbox import __version__

    packages = dict(found for module, names in PACKAGES.items()
                    if module in sys.modules and (found := _version(names)) is not None)
    python = ".".join(str(part) for part in sys.version_info[:3])
    return Made(int(time.time() * 1000) if at is None else at, __version__, python, packages or None)


def made_of(value: Any) -> Made | None:
    """A `made` read back from a journal's header; None when absent or not of its shape (it is only a label)."""
    try:
        return None if value is None else msgspec.convert(value, Made)
    except msgspec.ValidationError:
        return None
