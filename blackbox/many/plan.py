"""What a sweep will run: its variants (each edit × each model, and the baseline), the branches (each variant
K times, each with its own seed and file), and, for a resume, what differs from the sweep a folder holds.

A variant's name is what the report shows and the branch file is named after: `baseline` (the recorded value,
the recorded model), a `--set @file.json`'s file stem (a short inline value itself, a long one `set-1`…),
`@model` appended when `--model` names one.  A branch's seed is derived from the sweep's seed, the variant and
the repeat, so the same command gives every branch the same seed again.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import msgspec

from blackbox.format.cassette import Cassette
from blackbox.format.typed import UNSET, ToolResultView
from blackbox.many.folder import Branch, Settings, Sweep, Variant

__all__ = ["BASELINE", "branch_file", "differs", "plan", "recorded_value", "seed_of", "variant_value"]

BASELINE = "baseline"
_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]+")


def seed_of(seed: int, variant: str, repeat: int) -> int:
    """The branch's seed: the same for the same sweep seed, variant and repeat, on every machine."""
    digest = hashlib.sha256(f"{seed}\0{variant}\0{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def branch_file(variant: str, repeat: int) -> str:
    """`branches/<variant>-<repeat>.json`, the variant's name made safe for a file name."""
    return f"branches/{_UNSAFE.sub('_', variant)[:80]}-{repeat + 1:03d}.json"


def recorded_value(parent: Cassette, at: int) -> Any:
    """The result the parent's tool_result `at` holds (its error text when it failed): the baseline's value."""
    found = parent.steps[at].view()
    if isinstance(found, ToolResultView):
        return found.result if found.result is not UNSET else found.error
    return None


def variant_value(variant: Variant, parent: Cassette, at: int) -> Any:
    return recorded_value(parent, at) if variant.value is msgspec.UNSET else variant.value


def _name(source: str, n: int, used: set[str]) -> str:
    if source.startswith("@"):
        base = Path(source[1:]).stem or f"set-{n}"
    else:  # an inline value names itself when it is short: `"hot"` → hot
        text = source.strip().strip('"').strip()
        base = text if text and len(text) <= 24 and not _UNSAFE.search(text) else f"set-{n}"
    name, k = base, 2
    while name in used or name == BASELINE:
        name, k = f"{base}-{k}", k + 1
    used.add(name)
    return name


def plan(settings: Settings, sets: list[tuple[str, Any]], baseline: bool = True) -> Sweep:
    """The sweep of `settings` with the `--set` values (each as written, and its parsed value): the baseline
    (when `baseline`) with the recorded model and with each `--model`, then each edit with each model (or the
    recorded one), every variant repeated `settings.repeat` times."""
    models: list[str | None] = list(settings.models) or [None]
    variants: list[Variant] = []
    if baseline:
        variants.append(Variant(name=BASELINE))
        variants += [Variant(name=f"{BASELINE}@{m}", model=m) for m in settings.models]
    used: set[str] = set()
    for n, (source, value) in enumerate(sets, 1):
        name = _name(source, n, used)
        variants += [Variant(name=name if m is None else f"{name}@{m}", value=value, model=m, source=source)
                     for m in models]
    branches = [Branch(variant=v.name, repeat=r, seed=seed_of(settings.seed, v.name, r),
                       file=branch_file(v.name, r)) for v in variants for r in range(settings.repeat)]
    return Sweep(settings=settings, variants=variants, branches=branches)


#: The settings a resume may change: how fast it runs, not what it runs.
_FREE = {"concurrency"}
_SHOWN = {"at": "--at", "repeat": "--repeat", "mode": "the continuation (--live, --script or an agent command)",
          "parentId": "the parent run", "parentHash": "the parent run", "source": "the parent's path",
          "provider": "--provider", "script": "--script", "scriptHash": "the --script file's content",
          "command": "the agent command", "expect": "the checks (--expect-…)", "prices": "the prices",
          "seed": "--seed", "models": "--model"}


def differs(old: Sweep, new: Sweep) -> str | None:
    """What differs between the sweep a folder holds and the one asked now (one phrase), or None."""
    for field in Settings.__struct_fields__:
        if field not in _FREE and getattr(old.settings, field) != getattr(new.settings, field):
            return f"{_SHOWN.get(field, field)} differs"
    if msgspec.json.encode(old.variants) != msgspec.json.encode(new.variants):
        return "the variants (--set values, --model, --no-baseline) differ"
    return None
