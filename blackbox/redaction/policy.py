"""The redaction policy: where it is, what it says, and one clear line when it is wrong.

A policy is `[tool.blackbox.redact]` in the project's `pyproject.toml` (the nearest one at or above the
working folder), or a TOML file named by `--policy` / `BLACKBOX_POLICY` holding the same table at its top
(or a `pyproject.toml`).  Its rules are checked in order (docs/format.md, "Redaction"):

    detectors = ["email", "card"]      # the built-in detectors to apply everywhere (default: all of them)
    key-file = ".blackbox/redact.key"  # optional, relative to the policy file
    [[rules]]                          # [[tool.blackbox.redact.rules]] in pyproject.toml
    name = "customer-id"               # lower case, digits, hyphens
    action = "mask"                    # drop | mask | keep
    tool = "lookup_*"                  # where: a tool's arguments and results (a glob) ...
    path = "customer.id"               # ... a JSON path (below the tool, or from the step type) ...
    header = "x-internal-token"        # ... an object member by name, any case (an HTTP header a tool saw)
    pattern = "CUST-[0-9]{6}"          # what: a regular expression, or `detector = "email"`; neither: the value
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from blackbox.errors import UsageError
from blackbox.format.marks import RULE_NAME
from blackbox.redaction.detectors import DETECTORS, Detector

__all__ = ["ACTIONS", "Policy", "PolicyError", "Rule", "find_pyproject", "parse_path", "policy_from_file",
           "policy_from_table"]

Action = Literal["drop", "mask", "keep"]
ACTIONS: tuple[str, ...] = ("drop", "mask", "keep")
Segment = str | int  # a key, an index, "*" (any key or index) or "**" (any depth)
_RULE_FIELDS = frozenset({"name", "action", "path", "tool", "header", "detector", "pattern"})
_TOP_FIELDS = frozenset({"detectors", "key-file", "rules"})
_PATH_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[(\*|\d+)\]")


class PolicyError(UsageError):
    """The policy file cannot be used: one line naming the file, the rule and the field."""


@dataclass(frozen=True)
class Rule:
    """One rule: where it looks (path, tool, header; none = everywhere), what it finds (a detector, a pattern;
    none = the whole value there) and what it does."""

    name: str
    action: Action
    path: tuple[Segment, ...] | None = None
    tool: str | None = None
    header: str | None = None
    detector: Detector | None = None
    pattern: re.Pattern[str] | None = None

    @property
    def whole(self) -> bool:
        """A rule without a "what" acts on the whole value where it looks."""
        return self.detector is None and self.pattern is None

    @property
    def scoped(self) -> bool:
        return self.path is not None or self.tool is not None or self.header is not None

    def tool_matches(self, name: object) -> bool:
        return self.tool is None or (isinstance(name, str) and fnmatchcase(name, self.tool))

    def finder(self) -> Detector | re.Pattern[str] | None:
        return self.detector if self.detector is not None else self.pattern


@dataclass(frozen=True)
class Policy:
    """A checked policy: its rules in order (the named ones, then the detectors), where it came from, and a
    digest that names it in the cassettes it made."""

    rules: tuple[Rule, ...]
    source: str
    key_file: Path | None = None
    digest: str = field(default="")

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rules]


def parse_path(text: str) -> tuple[Segment, ...]:
    """`messages[*].content`, `tool_result.result.**.email` → segments; ValueError when it is not a path."""
    segments: list[Segment] = []
    pos = 0
    while pos < len(text):
        m = _PATH_TOKEN.match(text, pos)
        if m is None or m.end() == pos or (pos == 0 and text.startswith(".")):
            raise ValueError(f"cannot read it at character {pos + 1}")
        key, index = m.group(1), m.group(2)
        segments.append(key if key is not None else ("*" if index == "*" else int(index)))
        pos = m.end()
    if not segments:
        raise ValueError("it is empty")
    return tuple(segments)


def _fail(source: str, where: str, what: str) -> PolicyError:
    return PolicyError(f"policy {source}: {where}: {what}; see docs/format.md#redaction")


def _rule(source: str, i: int, raw: Any) -> Rule:
    where = f"rule {i + 1}"
    if not isinstance(raw, dict):
        raise _fail(source, where, "a rule must be a table ([[rules]])")
    name = raw.get("name")
    if isinstance(name, str) and RULE_NAME.fullmatch(name):
        where = f"rule {i + 1} ({name})"
    for key in raw:
        if key not in _RULE_FIELDS:
            raise _fail(source, where, f"unknown field `{key}`; a rule has {', '.join(sorted(_RULE_FIELDS))}")
    if not isinstance(name, str) or not RULE_NAME.fullmatch(name):
        raise _fail(source, where, "`name` must be 1-40 of a-z, 0-9 and -, starting with a letter")
    if raw.get("action") not in ACTIONS:
        raise _fail(source, where, "`action` must be drop, mask or keep")
    for key in ("path", "tool", "header", "detector", "pattern"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key]):
            raise _fail(source, where, f"`{key}` must be a non-empty string")
    if "detector" in raw and "pattern" in raw:
        raise _fail(source, where, "give `detector` or `pattern`, not both")
    detector = None
    if "detector" in raw:
        detector = DETECTORS.get(raw["detector"])
        if detector is None:
            raise _fail(source, where, f"`detector` must be one of {', '.join(DETECTORS)}")
    pattern = None
    if "pattern" in raw:
        try:
            pattern = re.compile(raw["pattern"])
        except re.error as exc:
            raise _fail(source, where, f"`pattern` is not a regular expression ({exc.msg} at {exc.pos})") from None
        if pattern.fullmatch(""):
            raise _fail(source, where, "`pattern` matches the empty string; make it match something")
    path = None
    if "path" in raw:
        try:
            path = parse_path(raw["path"])
        except ValueError as exc:
            raise _fail(source, where, f"`path` is not a JSON path ({exc}); write e.g. tool_result.result.email "
                        "or messages[*].content") from None
    if raw["action"] != "keep" and detector is None and pattern is None and path is None and "tool" not in raw \
            and "header" not in raw:
        raise _fail(source, where, "a rule that redacts whole values needs a `path`, `tool` or `header`")
    return Rule(name, raw["action"], path, raw.get("tool"), raw["header"].lower() if "header" in raw else None,
                detector, pattern)


def policy_from_table(table: Any, source: str, base: Path | None = None) -> Policy:
    """Check a policy table (TOML decoded) and build the policy; `PolicyError` naming the rule and the field."""
    if not isinstance(table, dict):
        raise _fail(source, "[redact]", "the policy must be a table")
    for key in table:
        if key not in _TOP_FIELDS:
            raise _fail(source, "the policy", f"unknown field `{key}`; a policy has {', '.join(sorted(_TOP_FIELDS))}")
    rules_raw = table.get("rules", [])
    if not isinstance(rules_raw, list):
        raise _fail(source, "the policy", "`rules` must be an array of tables ([[rules]])")
    rules = [_rule(source, i, raw) for i, raw in enumerate(rules_raw)]
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        if rule.name in seen:
            raise _fail(source, f"rule {i + 1} ({rule.name})", "`name` is used by an earlier rule; names must differ")
        seen.add(rule.name)
    detectors = table.get("detectors", list(DETECTORS))
    if not isinstance(detectors, list) or not all(isinstance(d, str) for d in detectors):
        raise _fail(source, "the policy", "`detectors` must be a list of detector names")
    for name in detectors:
        if name not in DETECTORS:
            raise _fail(source, "the policy", f"`detectors` names an unknown detector; use {', '.join(DETECTORS)}")
    rules += [Rule(name, "mask", detector=DETECTORS[name]) for name in dict.fromkeys(detectors) if name not in seen]
    key_file = table.get("key-file")
    if key_file is not None and (not isinstance(key_file, str) or not key_file):
        raise _fail(source, "the policy", "`key-file` must be a path (relative to the policy file)")
    key_path = None if key_file is None else (base or Path.cwd()) / key_file
    return Policy(tuple(rules), source, key_path, _digest(table))


def _digest(table: dict[str, Any]) -> str:
    """16 hex digits naming the policy's content (not its place), written into the cassettes it made."""
    import json  # the digest only needs a stable text of the table

    return hashlib.sha256(json.dumps(table, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _read_toml(path: Path, shown: str) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PolicyError(f"policy {shown}: no such file; give the path of a TOML policy file") from None
    except IsADirectoryError:
        raise PolicyError(f"policy {shown}: is a directory; give the path of a TOML policy file") from None
    except OSError as exc:
        raise PolicyError(f"policy {shown}: cannot read it: {exc.strerror or exc}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PolicyError(f"policy {shown}: not UTF-8 text; save it as UTF-8 TOML") from None
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"line (\d+), column (\d+)", str(exc))
        where = f"line {at[1]}, column {at[2]}" if at else "its syntax"
        raise PolicyError(f"policy {shown}: not valid TOML at {where}; fix that line") from None


def _pyproject_table(doc: dict[str, Any]) -> Any:
    tool = doc.get("tool")
    blackbox = tool.get("blackbox") if isinstance(tool, dict) else None
    return blackbox.get("redact") if isinstance(blackbox, dict) else None


def policy_from_file(path: str | Path) -> Policy:
    """The policy in a TOML file: `[tool.blackbox.redact]` when it is a pyproject.toml, else its top level."""
    p = Path(path)
    doc = _read_toml(p, str(p))
    if p.name == "pyproject.toml" or "tool" in doc:
        table = _pyproject_table(doc)
        if table is None:
            raise PolicyError(f"policy {p}: has no [tool.blackbox.redact] table; add one or name a policy file")
        return policy_from_table(table, f"{p} [tool.blackbox.redact]", p.parent)
    return policy_from_table(doc, str(p), p.parent)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a `[tool.blackbox.redact]` table; the search
    stops at the first pyproject.toml (the project's root) or a `.git` folder."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):  # ours if it names the table: then
                text = pyproject.read_bytes() if pyproject.is_file() else b""  # the loader says what is wrong
                return pyproject if b"blackbox.redact" in text else None
            return pyproject if _pyproject_table(doc) is not None else None
        if (candidate / ".git").exists():
            return None
    return None
