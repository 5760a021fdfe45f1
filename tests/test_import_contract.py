"""The walls of docs/architecture.md, checked over the source: who may import whom inside `blackbox/`.

`if TYPE_CHECKING:` imports never run and do not count.  The walls (readers, providers, transport) count every
other import, function-local ones too; the cycle and UI checks count the imports that run when a module is
imported (a function-local import is how the core defers Textual).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "blackbox"

READERS = {"canonical", "cassette", "lazy", "indexing", "writing", "verify", "diff", "firstdiff", "outcome", "inert",
           "expectations", "agentview"}
LIVE_WING = {"session", "transport", "calls", "recorder", "replayer", "forking", "engines", "launcher", "providers",
             "wrapping", "report", "tee", "journal"}
PROVIDER_MAY_IMPORT = {"providers", "payloads", "errors", "canonical", "apis", "wire", "tokens"}
#: Modules that talk to providers only through the `Provider` interface and `blackbox.apis`: none of them may
#: name an API, so that a new provider is its codec modules, one `apis` entry and one registry line.
PROVIDER_BLIND = {"session", "engines", "forking", "whatif", "secrets", "transport", "calls", "tee", "recorder",
                  "replayer", "launcher", "settings", "wrapping", "plugin_cassettes", "pytest_plugin", "cli.whatif"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, *, everywhere: bool) -> set[str]:
    """Absolute module names imported; `everywhere=False` keeps only those run at import time."""
    found: set[str] = set()

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and not everywhere:
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.add(child.module)
                found.update(f"{child.module}.{alias.name}" for alias in child.names)
            visit(child, top)

    visit(tree, True)
    return found


MODULES = {_module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in sorted(ROOT.rglob("*.py"))}


def _project_imports(name: str, *, everywhere: bool) -> set[str]:
    """The project's modules `name` imports (a `from pkg import sub` names the submodule; a module's own parent
    packages run before it anyway, so they are not edges)."""
    return {m for m in _imports(MODULES[name], everywhere=everywhere)
            if m in MODULES and m != name and not name.startswith(m + ".")}


def _top(module: str) -> str:
    """`blackbox.providers.anthropic` → `providers`; `blackbox.session` → `session`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_walker_sees_imports() -> None:
    assert "blackbox.transport" in _project_imports("blackbox.session", everywhere=False)
    assert "blackbox.calls" in _project_imports("blackbox.transport", everywhere=False)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_readers_never_import_the_live_wing(reader: str) -> None:
    name = f"blackbox.{reader}"
    bad = {m for m in _project_imports(name, everywhere=True) if _top(m) in LIVE_WING}
    assert not bad, f"{name} imports the live wing: {sorted(bad)}"


def test_providers_import_nothing_above_them() -> None:
    for name in MODULES:
        if _top(name) != "providers":
            continue
        bad = {m for m in _project_imports(name, everywhere=True) if _top(m) not in PROVIDER_MAY_IMPORT}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_the_ground_floor_imports_nothing_of_blackbox() -> None:
    assert not _project_imports("blackbox.apis", everywhere=True)
    assert not _project_imports("blackbox.wire", everywhere=True)


def test_only_the_providers_and_the_facts_table_name_an_api() -> None:
    import blackbox.apis
    import blackbox.providers

    names = {p.name for p in blackbox.providers.PROVIDERS} | {a.name for a in blackbox.apis.API_FACTS}
    for module in sorted(PROVIDER_BLIND):
        tree = MODULES[f"blackbox.{module}"]
        named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in names}
        assert not named, f"blackbox.{module} names the APIs {sorted(named)}: ask the provider registry instead"


def test_transport_knows_only_calls() -> None:
    assert _project_imports("blackbox.transport", everywhere=True) <= {"blackbox.calls"}


def test_the_tee_knows_only_calls_and_the_stream_interface() -> None:
    assert _project_imports("blackbox.tee", everywhere=True) <= {"blackbox.calls", "blackbox.providers.stream"}


def test_the_core_never_imports_the_ui() -> None:
    for name, tree in MODULES.items():
        ui = {m for m in _imports(tree, everywhere=False) if m.split(".")[0] in ("blackbox_tui", "textual", "tui")}
        assert not ui, f"{name} imports the UI at import time: {sorted(ui)}"


def test_no_import_cycles() -> None:
    graph = {name: _project_imports(name, everywhere=False) for name in MODULES}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt):], nxt]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_no_module_over_500_lines() -> None:
    long = {p.name: n for p in ROOT.rglob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert not long, f"modules over 500 lines: {long}"


def test_session_stays_small() -> None:
    assert len((ROOT / "session.py").read_text(encoding="utf-8").splitlines()) <= 300
