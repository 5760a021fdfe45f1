"""verify (docs/format.md, "Verify"): four checks in order — schema_version, hash_chain, provider_neutrality,
replayability.

The first failure stops the rest (they are reported as skipped).  A path that is not a readable version-2
cassette (not JSON, truncated, version 1, missing fields, NaN) fails the schema_version check with the load
error as its detail, as the TypeScript Blackbox reports it.

Speed: the hash chain canonicalizes every step once; neutrality reuses those bytes for a cheap prefilter
(the credential literals and key values, which count everywhere), looks for the provider-only literals in the
payload's small non-user-data skeleton, and walks a payload precisely only when one of them is found.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from blackbox.errors import CassetteError
from blackbox.format import secrets
from blackbox.format.canonical import canonical_bytes, nesting_headroom
from blackbox.format.cassette import SCHEMA_VERSION, Cassette, Step, load, paused_gc, steps_break
from blackbox.format.firstdiff import join_path
from blackbox.format.lazy import TOO_DEEP_RAW, LazyCassette, load_lazy
from blackbox.format.marks import count_in_bytes, rewritten_from
from blackbox.format.outcome import outcome, payload_problem, summarize_step

__all__ = ["CHECKS", "CheckResult", "VerifyReport", "neutrality_problem", "unloadable_report", "verify"]

CheckName = Literal["schema_version", "hash_chain", "provider_neutrality", "replayability"]
CHECKS: tuple[CheckName, ...] = ("schema_version", "hash_chain", "provider_neutrality", "replayability")

ADVICE: dict[str, str] = {
    "schema_version": "re-record the run with this version of Blackbox; there is no migration",
    "hash_chain": "the file changed after it was recorded; re-record the run or restore the original file "
                  "(never hand-edit a cassette)",
    "provider_neutrality": "remove the leaked field at its source (the recorder, importer or tool that wrote "
                           "it) and re-record; never hand-edit a cassette",
    "replayability": "re-record the run; a completed run must end with its run_completed step",
    "expected_hash": "this is not the cassette that was pinned: restore the pinned file, or, if this recording "
                     "is the new reference, update the expected hash",
}


UNREADABLE = ("the file cannot be read as a cassette (damaged, cut short, or another kind of file): restore it "
              "from a copy or re-record the run")


class CheckResult(msgspec.Struct, frozen=True):
    """One row of the report: the check, pass/fail/skip, the step it concerns, and a detail."""

    name: str
    status: Literal["pass", "fail", "skip"]
    step: int | None = None
    detail: str = ""


class VerifyReport(msgspec.Struct):
    """The outcome of verify: one `CheckResult` per check, in order."""

    id: str | None
    path: str | None
    steps: int
    checks: list[CheckResult]
    # The last step's hash when the chain holds: it commits to every step before it, so CI can pin a cassette
    # with `verify --expect-hash`.  None for an empty cassette or a broken chain.
    final_hash: str | None = None
    # What a redaction policy left (docs/format.md, "Redaction"): the values each rule redacted, counted from
    # their marks, and the cassette `blackbox redact` rewrote this one from.  Never the values.
    redacted: dict[str, int] | None = None
    rewritten_from: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return all(c.status == "pass" for c in self.checks)

    @property
    def failure(self) -> CheckResult | None:
        return next((c for c in self.checks if c.status == "fail"), None)

    @property
    def advice(self) -> str:
        failure = self.failure
        if failure is None:
            return ""
        if failure.name == "schema_version" and "version" not in (failure.detail or ""):
            return UNREADABLE  # the file did not load at all: no version to migrate from
        return ADVICE[failure.name]

    def to_dict(self) -> dict[str, Any]:
        failure = self.failure
        return {
            "ok": self.ok,
            "id": self.id,
            "path": self.path,
            "steps": self.steps,
            "finalHash": self.final_hash,
            "checks": [msgspec.structs.asdict(c) for c in self.checks],
            "failure": None if failure is None else {**msgspec.structs.asdict(failure), "advice": self.advice},
            **({"redaction": {"redacted": self.redacted, "rewrittenFrom": self.rewritten_from}}
               if self.redacted or self.rewritten_from else {}),
        }


# ---------------------------------------------------------------------------------------------------------
# Neutrality


# Every pattern of docs/format.md, "Verify" contains one of these literals.  Provider ids, flagged keys and the
# variable names
# only count outside user data, so they are looked for in the payload's skeleton (its keys and the strings
# outside user data, a small part of its bytes); credentials count everywhere, so they are looked for in the
# step's canonical bytes, as are the environment's key values.
_SKELETON_LITERALS: tuple[str, ...] = (
    "_API_KEY", "usage", "_reason", "stop_sequence", "system_fingerprint",
    "toolu_", "msg_", "call_", "chatcmpl-", "resp_",
)
_CREDENTIAL_LITERALS: tuple[str, ...] = ("sk-", "Bearer")
_USER_DATA_KEYS = secrets.USER_DATA_KEYS
_CONTAINERS = (dict, list)
_SEPARATOR = "\x00"  # joins skeleton strings; no literal contains it, so none can match across two strings


def _skeleton(value: Any, out: list[str]) -> None:
    """Append the keys and strings of `value` that lie outside user data (docs/format.md, "Verify") to `out`."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(key)
            if key in _USER_DATA_KEYS:
                continue
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, _CONTAINERS):
                _skeleton(item, out)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, _CONTAINERS):
                _skeleton(item, out)
    elif isinstance(value, str):
        out.append(value)


def _skeleton_hit(payload: Any) -> bool:
    """`_skeleton_suspicious` of one payload; a non-string key counts as a hit (walked precisely)."""
    try:
        return _skeleton_suspicious([payload])
    except TypeError:
        return True


def _skeleton_suspicious(payloads: list[Any]) -> bool:
    """Whether the skeletons of `payloads` hold a provider-only literal (`TypeError` for a non-string key)."""
    out: list[str] = []
    for payload in payloads:
        _skeleton(payload, out)
    text = _SEPARATOR.join(out)
    return any(literal in text for literal in _SKELETON_LITERALS)


# The payloads the replayability check reads after the chain pass: tool names and the terminal step.
_KEPT_TYPES = frozenset({"tool_call", "metadata"})


class _Scanner:
    """Finds the first neutrality problem; literal prefilters decide which payloads are walked precisely.

    While the hash chain is checked, each step's canonical bytes are searched for the literals that count
    everywhere; afterwards the skeletons of all payloads are joined and searched once for the provider-only
    literals, per step only if one is there.  Only the steps that either search flags are walked, in order.

    With `release` (a cassette verify loaded itself, so nobody else holds it), the skeleton is searched and
    the step summarized during the chain pass, and a payload no later check needs is dropped at once: freeing
    it while its objects are still in the CPU's cache costs a fraction of freeing the whole cassette at the
    end (bench/README.md).
    """

    def __init__(self, keys: list[str], *, release: bool = False) -> None:
        self.keys = keys
        self.release = release
        self.anywhere = tuple(literal.encode() for literal in _CREDENTIAL_LITERALS) \
            + tuple(canonical_bytes(k)[1:-1] for k in keys)
        self.flagged: list[int] = []
        self.problem: tuple[int | None, str] | None = None
        self.summary_error: BaseException | None = None
        self.summary_problem: tuple[int, str] | None = None

    def on_step(self, step: Step, data: bytes) -> None:
        """Note a step whose canonical bytes hold a credential literal or a key value."""
        suspect = any(literal in data for literal in self.anywhere)
        if self.release:
            suspect = suspect or _skeleton_hit(step.payload)
            self._summarize(step)
            if not suspect and step.type not in _KEPT_TYPES:
                step.payload = None
        if suspect:
            self.flagged.append(step.index)

    def _summarize(self, step: Step) -> None:
        if self.summary_problem is None:
            found = payload_problem(step)
            self.summary_problem = None if found is None else (step.index, found)
        if self.summary_error is None:
            try:
                summarize_step(step)
            except Exception as exc:  # a malformed payload: replayability reports it
                self.summary_error = exc

    def payloads(self, steps: list[Step]) -> None:
        """Walk precisely the steps either prefilter flags; the first problem in step order wins."""
        suspects = set(self.flagged)
        try:
            if not self.release and _skeleton_suspicious([step.payload for step in steps]):
                suspects.update(i for i, step in enumerate(steps) if _skeleton_suspicious([step.payload]))
        except TypeError:  # a key that is not a string (an in-memory cassette): walk everything precisely
            suspects = set(range(len(steps)))
        for i in sorted(suspects):
            found = neutrality_problem(steps[i].payload, self.keys, path="payload")
            if found is not None:
                self.problem = (i, found)
                return

    def top_level(self, cassette: Cassette) -> None:
        """The strings outside payloads that a cassette holds: its ids and the step ids."""
        named = [("id", cassette.id), ("parentId", cassette.parentId),
                 ("forkedFromStepId", cassette.forkedFromStepId)]
        for field, value in named:
            found = _string_problem(value, False, self.keys) if isinstance(value, str) else None
            if found is not None:
                self.problem = (None, f"{field}: {found}")
                return
        self._unhashed(cassette)
        if self.problem is not None:
            return
        ids = _SEPARATOR.join(step.id for step in cassette.steps if isinstance(step.id, str))
        if not any(literal in ids for literal in (*_SKELETON_LITERALS, *_CREDENTIAL_LITERALS, *self.keys)):
            return
        for step in cassette.steps:
            found = _string_problem(step.id, False, self.keys) if isinstance(step.id, str) else None
            if found is not None:
                self.problem = (step.index, f"steps[{step.index}].id: {found}")
                return


    def _unhashed(self, cassette: Cassette) -> None:
        """`made` and each step's `origin` (unhashed, "Origin"), walked as the original walks every field of a file."""
        steps = ((step.index, f"steps[{step.index}].origin", step.origin) for step in cassette.steps)
        fields = [(None, "made", cassette.made), *steps]
        for index, path, value in fields:
            found = None if value is None else neutrality_problem(_plain(value), self.keys, path=path)
            if found is not None:
                self.problem = (index, found)
                return


def _plain(value: msgspec.Struct) -> Any:
    """A Struct as the JSON values the file holds (arrays as lists), for the walk."""
    return msgspec.json.decode(msgspec.json.encode(value))


def _string_problem(text: str, user_data: bool, keys: list[str]) -> str | None:
    if secrets.contains_key_value(text, keys):
        return "the value of an API key from the environment (<api-key-value>)"
    if user_data:
        patterns = secrets.REALISTIC_CREDENTIAL_PATTERNS
    else:
        patterns = secrets.PROVIDER_ID_PATTERNS + secrets.CREDENTIAL_PATTERNS
    for label, pattern in patterns:
        if pattern.search(text):
            return label
    return None


def neutrality_problem(value: Any, keys: list[str], path: str = "", user_data: bool = False) -> str | None:
    """`<path>: <what>` for the first provider-specific or secret thing in `value`, or None (docs/format.md,
    "Verify")."""
    if isinstance(value, str):
        found = _string_problem(value, user_data, keys)
        return None if found is None else f"{path or '(root)'}: {found}"
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = neutrality_problem(item, keys, join_path(path, i), user_data)
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            sub = join_path(path, key)
            if not user_data and key in secrets.FLAGGED_KEYS:
                return f"{sub}: the provider-specific key `{key}`"
            found = _string_problem(key, user_data, keys)
            if found is not None:
                return f"{sub}: a key holding {found}"
            found = neutrality_problem(item, keys, sub, user_data or key in secrets.USER_DATA_KEYS)
            if found is not None:
                return found
    return None


# ---------------------------------------------------------------------------------------------------------
# The checks


def _replayability(cassette: Cassette, scanner: _Scanner) -> CheckResult:
    """The run can be summarized and ends where it says it completed.  A releasing scanner summarized each
    step during the chain pass (and kept the tool_call and metadata payloads that `outcome` reads)."""
    steps = cassette.steps
    error = scanner.summary_error
    try:
        outcome(cassette)
        if not scanner.release:
            for step in steps:
                summarize_step(step)
    except Exception as exc:  # a malformed payload that the summaries cannot read
        error = exc
    if error is not None:
        return CheckResult("replayability", "fail", None, f"the run cannot be summarized ({type(error).__name__})")
    problem = scanner.summary_problem if scanner.release else next(
        ((step.index, found) for step in steps if (found := payload_problem(step)) is not None), None)
    if problem is not None:
        return CheckResult("replayability", "fail", problem[0], problem[1])
    last = len(steps) - 1
    for step in steps:
        p = step.payload
        if (step.type == "metadata" and isinstance(p, dict) and p.get("event") == "run_completed"
                and p.get("status") == "success" and step.index != last):
            return CheckResult("replayability", "fail", step.index,
                               f"step {step.index} marks the run completed but {last - step.index} step(s) "
                               "follow it")
    return CheckResult("replayability", "pass", None, outcome(cassette).describe())


def verify(
    cassette: Cassette | str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    extra_secrets: Iterable[str] = (),
    on_step: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    """Run the four checks in order.  `on_step(done, total)` reports progress every 256 steps.

    A path that cannot be loaded (not JSON, truncated, no or another `version`, a structure error) gives a
    report whose schema_version check fails with the load error's line, the others skipped: as the TypeScript Blackbox
    reports it, so a CI job reading `--json` always gets a report.

    A file is read lazily (payloads kept as undecoded bytes) and each payload decoded, hashed, scanned and
    dropped in turn, so the pass costs about one decode and one encode of the file and frees each payload while
    it is in the CPU's cache.  Anything unusual on the way (a payload the plain decoder refuses, a chain that
    does not hold) is judged again by the eager path, whose report is the reference."""
    if isinstance(cassette, Cassette):
        with paused_gc(), nesting_headroom():
            return _verify(cassette, None, False, env, extra_secrets, on_step)
    path = str(cassette)
    try:
        with paused_gc():
            lazy = load_lazy(Path(cassette), check_utf8=False)  # each payload's decode checks its UTF-8
            with nesting_headroom():
                report = _verify_lazy(lazy, path, env, extra_secrets, on_step)
            del lazy  # freed with the collector still paused
    except CassetteError as exc:
        return unloadable_report(path, secrets.mask_secrets(str(exc), env, extra_secrets))
    return report if report is not None else _verify_eager(path, env, extra_secrets, on_step)


def _verify_eager(path: str, env: Mapping[str, str] | None, extra_secrets: Iterable[str],
                  on_step: Callable[[int, int], None] | None) -> VerifyReport:
    """verify of a file loaded whole: the reference for every file the lazy pass leaves to it."""
    try:
        loaded = load(Path(path), js_floats=False)  # only hashed and scanned here: no float hook
    except CassetteError as exc:
        return unloadable_report(path, secrets.mask_secrets(str(exc), env, extra_secrets))
    with paused_gc(), nesting_headroom():
        return _verify(loaded, path, True, env, extra_secrets, on_step)


class _Unusual(Exception):
    """The lazy pass met what only the eager path judges exactly."""


_PLAIN = msgspec.json.Decoder()  # plain floats, as `load(js_floats=False)` decodes a payload


def _verify_lazy(lazy: LazyCassette, path: str, env: Mapping[str, str] | None, extra_secrets: Iterable[str],
                 on_step: Callable[[int, int], None] | None) -> VerifyReport | None:
    """`_verify` over the payloads decoded one at a time, or None when the eager path must judge the file."""
    holder = Cassette(lazy.version, lazy.id, lazy.createdAt, [], lazy.parentId, lazy.forkedFromStepId,
                      lazy.redaction, lazy.made)
    kept = holder.steps

    def decoded() -> Iterator[Step]:
        for s in lazy.steps:
            if s.payload is TOO_DEEP_RAW:  # its hash check fails: the eager path reports it
                raise _Unusual
            try:
                payload = _PLAIN.decode(s.payload)
            except (msgspec.DecodeError, RecursionError):  # not UTF-8, a lone surrogate, too deep: exactly
                raise _Unusual from None
            step = Step(s.id, s.index, s.type, s.timestamp, payload, s.prevHash, s.hash, origin=s.origin)
            kept.append(step)
            yield step

    try:
        report = _verify(holder, path, True, env, extra_secrets, on_step, steps=decoded(), total=len(lazy.steps))
    except _Unusual:
        return None
    chain = report.checks[1] if len(report.checks) > 1 else None
    return report if chain is not None and chain.status == "pass" else None


def unloadable_report(path: str | None, detail: str) -> VerifyReport:
    """The report of a file that cannot be loaded: schema_version fails with `detail`, the rest skipped."""
    checks = [CheckResult("schema_version", "fail", None, detail)]
    checks += [CheckResult(name, "skip", None, "skipped after an earlier failure") for name in CHECKS[1:]]
    return VerifyReport(id=None, path=path, steps=0, checks=checks)


def _verify(
    cassette: Cassette,
    path: str | None,
    owned: bool,
    env: Mapping[str, str] | None,
    extra_secrets: Iterable[str],
    on_step: Callable[[int, int], None] | None,
    *,
    steps: Iterable[Step] | None = None,
    total: int | None = None,
) -> VerifyReport:
    """The four checks; `steps` (with their `total`) feed the chain pass as they are decoded, filling
    `cassette.steps` on the way."""
    keys = secrets.key_values(env, extra_secrets)
    total = len(cassette.steps) if total is None else total
    checks: list[CheckResult] = []
    marks: Counter[str] = Counter()

    def mask(text: str) -> str:
        return secrets.mask_secrets(text, env, extra_secrets)

    if cassette.version != SCHEMA_VERSION:
        checks.append(CheckResult("schema_version", "fail", None,
                                  f"version {cassette.version}; only version {SCHEMA_VERSION} is supported"))
    else:
        checks.append(CheckResult("schema_version", "pass", None, f"version {SCHEMA_VERSION}"))
        scanner = _Scanner(keys, release=owned)

        def visit(step: Step, data: bytes) -> None:
            scanner.on_step(step, data)
            count_in_bytes(data, marks)
            if on_step is not None and (step.index % 256 == 255 or step.index == total - 1):
                on_step(step.index + 1, total)

        broken = steps_break(cassette.steps if steps is None else steps, on_step=visit)
        if broken is not None:
            checks.append(CheckResult("hash_chain", "fail", broken.index, broken.reason))
        else:
            checks.append(CheckResult("hash_chain", "pass", None, f"{total} step(s) linked"))
            scanner.payloads(cassette.steps)
            if scanner.problem is None:
                scanner.top_level(cassette)
            if scanner.problem is not None:
                step, detail = scanner.problem
                checks.append(CheckResult("provider_neutrality", "fail", step, mask(detail)))
            else:
                checks.append(CheckResult("provider_neutrality", "pass", None, "no provider data or secrets"))
                checks.append(_replayability(cassette, scanner))
    for name in CHECKS[len(checks):]:
        checks.append(CheckResult(name, "skip", None, "skipped after an earlier failure"))
    intact = len(checks) > 1 and checks[1].status == "pass"
    final = cassette.steps[-1].hash if intact and cassette.steps else None
    return VerifyReport(id=cassette.id, path=path, steps=total, checks=checks, final_hash=final,
                        redacted=dict(sorted(marks.items())) or None,
                        rewritten_from=rewritten_from(cassette.redaction))


HASH_FORMAT = re.compile(r"[0-9a-f]{64}")


def expect_hash(report: VerifyReport, expected: str) -> VerifyReport:
    """The report with one more row, `expected_hash`: does the cassette end in the pinned final hash?

    The chain check proves the steps agree with each other; only a pinned final hash proves they are the
    steps that were recorded (anyone can re-hash an edited chain).  `expected` is 64 hex digits."""
    expected = expected.lower()
    if report.failure is not None:
        row = CheckResult("expected_hash", "skip", None, "skipped after an earlier failure")
    elif report.final_hash is None:
        row = CheckResult("expected_hash", "fail", None, "the cassette has no steps, so no final hash to compare")
    elif report.final_hash != expected:
        row = CheckResult("expected_hash", "fail", report.steps - 1,
                          f"final hash {report.final_hash[:12]}… is not the expected {expected[:12]}…")
    else:
        row = CheckResult("expected_hash", "pass", None, f"final hash {expected[:12]}… as pinned")
    return msgspec.structs.replace(report, checks=[*report.checks, row])
