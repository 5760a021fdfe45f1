"""What a cassette says of its own making, as `inspect`, `list`, `drift` and the pytest plugin show it: when
and with what it was made (the unhashed `made`), its age, and the models that answered its calls where the
provider answered with another than the one requested (each model_output's unhashed `origin.model` against the
`model` of the request before it).  docs/format.md, "Origin".

Pure reading: of a request only its `model` is read (a lazily loaded step's straight from its JSON text, no
message decoded), so `list` stays about as fast over a folder of long runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import msgspec

from blackbox.format.origin import Made, Origin

__all__ = ["ModelPair", "answering_models", "made_at", "made_dict", "made_text", "models_dicts"]


class _Step(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def origin(self) -> Origin | None: ...

    @property
    def payload(self) -> Any: ...  # decoded, or undecoded JSON (`msgspec.Raw`, a lazily loaded step)


class _Model(msgspec.Struct):
    model: Any = None


_MODEL = msgspec.json.Decoder(_Model)


def _requested(payload: Any) -> str | None:
    """A `model_input`'s `model` when it is a string."""
    if isinstance(payload, msgspec.Raw):
        try:
            found = _MODEL.decode(payload).model
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None  # not an object (a payload too deep to read), or text msgspec cannot read
    else:
        found = payload.get("model") if isinstance(payload, dict) else None
    return found if isinstance(found, str) else None


class ModelPair(msgspec.Struct, frozen=True):
    """One (requested, answered) model pair of a run and how many of its calls it was; `answered` is None for
    calls whose output kept no origin (a cassette made before Blackbox kept it, an import, a scripted reply)."""

    requested: str | None
    answered: str | None
    calls: int

    @property
    def differs(self) -> bool:
        """The provider named another model than the request did (a dated snapshot of an alias, a fallback)."""
        return self.answered is not None and self.answered != self.requested


def answering_models(steps: Iterable[_Step]) -> list[ModelPair]:
    """Each (requested, answered) pair of the run's model calls, in the order first seen, with its count."""
    counts: dict[tuple[str | None, str | None], int] = {}
    requested: str | None = None
    for step in steps:
        if step.type == "model_input":
            requested = _requested(step.payload)
        elif step.type == "model_output":
            answered = step.origin.model if step.origin is not None else None
            counts[(requested, answered)] = counts.get((requested, answered), 0) + 1
    return [ModelPair(req, ans, n) for (req, ans), n in counts.items()]


def models_dicts(pairs: list[ModelPair]) -> list[dict[str, Any]]:
    """The pairs as `--json` writes them."""
    return [{"requested": p.requested, "answered": p.answered, "calls": p.calls, "differs": p.differs}
            for p in pairs]


def made_at(made: Made | None, created_at: float) -> float:
    """When the cassette was made (milliseconds since the epoch): `made.at`, else its `createdAt` (a cassette
    written before Blackbox kept `made`, or by the TypeScript Blackbox)."""
    return made.at if made is not None else created_at


def made_text(made: Made) -> str:
    """`blackbox 0.1.0 · Python 3.12.3 · anthropic 0.40.0, httpx 0.28.1`: with what the file was made (not
    when: the caller prints the time its own way)."""
    parts = []
    if made.blackbox:
        parts.append(f"blackbox {made.blackbox}")
    if made.python:
        parts.append(f"Python {made.python}")
    if made.packages:
        parts.append(", ".join(f"{name} {version}" for name, version in sorted(made.packages.items())))
    return " · ".join(parts) or "(no versions kept)"


def made_dict(made: Made | None) -> dict[str, Any] | None:
    """`made` as `--json` writes it (the file's own field, unchanged)."""
    return None if made is None else msgspec.to_builtins(made)
