"""The walls of docs/architecture.md, checked over the source: which wing (folder of `blackbox/`) may import which.

`if TYPE_CHECKING:` imports never run and do not count.  The walls (wings, providers, transport) and the cycle
check count every other import, function-local ones and dynamic ones (`importlib.import_module("literal")`,
`__import__("literal")`, and the name tables a lazy loader imports from, `NAME_TABLES`) too; the UI check counts
the imports that run when a module is imported (a function-local import is how the core defers Textual).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "blackbox"

#: The wings, lowest first: a module imports only its own wing, the ground floor (the modules at the top of
#: `blackbox/`) and wings of a lower rank.  A new folder must be given its place here.
RANKS = {"format": 1, "providers": 2, "redaction": 2, "live": 3, "importers": 3, "exporters": 3, "fork": 4, "mcp": 4,
         "plugin": 5, "demo": 5, "many": 5, "cli": 6}
#: The doors upward: the session picks the fork engine when the mode is `fork`, and brings in MCP when `bb.mcp`
#: is called.
DOORS = {("blackbox.live.session", "blackbox.fork.engine"), ("blackbox.live.session", "blackbox.mcp")}
#: Lazy loaders that import a module by a name from a table (a dict literal of the module): the package, the
#: table's name, and how a value of it names a module.  Every module so named is an edge of the loader.
NAME_TABLES = {"blackbox": ("_WHERE", "{}"), "blackbox.cli": ("_MODULES", "blackbox.cli.{}")}
#: Dynamic imports of a name computed at run time that never reach Blackbox's own modules, and why.
OUTSIDE = {
    "blackbox.exporters.base": "an exporter's `modules`, its extra's packages (test_exporters_need_outside_modules)",
    "blackbox.plugin.net_patches": "`_optional`: the HTTP libraries the guard patches",
    "blackbox.live.transport": "`http_module`: httpx or httpx2, checked against those two names",
    "blackbox.many.unseen": "`live-readonly:TOOL=module:function`: the user's own tools, named on the command line",
}
#: Wings that talk to providers only through the `Provider` interface and `blackbox.apis`: none of their modules
#: may name an API, so that a new provider is its codec modules, one `apis` entry and one registry line.
PROVIDER_BLIND = {"live", "fork", "plugin"}
#: And two modules of other wings: the key scanner (it derives from `apis`) and the what-if command.
#: (`format.agentview` names coding agents, among them the Gemini CLI, not an API.)
ALSO_BLIND = {"blackbox.format.secrets", "blackbox.cli.whatif"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _dynamic(call: ast.Call) -> str | None:
    """`x` of `importlib.import_module(x)`, `import_module(x)` or `__import__(x)`: the literal, "" when `x` is
    computed, None for any other call."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("import_module", "__import__") or not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not (
            name == "import_module" and len(call.args) > 1):  # a relative name needs its package
        return first.value
    return ""


def _imports(tree: ast.AST, *, everywhere: bool, dynamic: bool = True) -> set[str]:
    """Absolute module names imported; `everywhere=False` keeps only those run at import time; `dynamic` adds
    the literal names imported through `import_module` / `__import__` (a computed name is `""`)."""
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
            elif dynamic and isinstance(child, ast.Call) and (named := _dynamic(child)) is not None:
                found.add(named)
            visit(child, top)

    visit(tree, True)
    return found


MODULES = {_module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in sorted(ROOT.rglob("*.py"))}


def _table(name: str) -> set[str]:
    """The modules a lazy loader's name table names (`NAME_TABLES`), read from its dict literal."""
    if name not in NAME_TABLES:
        return set()
    table, form = NAME_TABLES[name]
    for node in ast.walk(MODULES[name]):
        if not isinstance(node, ast.Assign | ast.AnnAssign) or not isinstance(node.value, ast.Dict):
            continue
        targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
        if any(isinstance(t, ast.Name) and t.id == table for t in targets):
            return {form.format(v.value) for v in node.value.values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    raise AssertionError(f"{name} has no dict literal {table}: update NAME_TABLES")


def _project_imports(name: str, *, everywhere: bool) -> set[str]:
    """The project's modules `name` imports (a `from pkg import sub` names the submodule; a module's own parent
    packages run before it anyway, so they are not edges); with `everywhere`, those its name table names."""
    named = _imports(MODULES[name], everywhere=everywhere) | (_table(name) if everywhere else set())
    return {m for m in named if m in MODULES and m != name and not name.startswith(m + ".")}


def _wing(module: str) -> str:
    """`blackbox.providers.anthropic` → `providers`; a module at the top of `blackbox/` → `ground`; the package
    itself (the public API, built on the wings) → `api`."""
    parts = module.split(".")
    if len(parts) == 1:
        return "api"
    return parts[1] if (ROOT / parts[1]).is_dir() else "ground"


def _in(wing: str) -> list[str]:
    return sorted(name for name in MODULES if _wing(name) == wing)


def test_the_walker_sees_imports() -> None:
    assert "blackbox.live.transport" in _project_imports("blackbox.live.session", everywhere=False)
    assert "blackbox.live.calls" in _project_imports("blackbox.live.transport", everywhere=False)
    assert _wing("blackbox.format.verify") == "format" and _wing("blackbox.errors") == "ground"
    assert _wing("blackbox.providers") == "providers" and _wing("blackbox") == "api"


def test_the_walker_sees_dynamic_imports() -> None:
    tree = ast.parse("import importlib\nfrom importlib import import_module\n"
                     "def f(x):\n    importlib.import_module('blackbox.a')\n    import_module('blackbox.b')\n"
                     "    __import__('blackbox.c')\n    importlib.import_module(x)\n"
                     "    importlib.import_module('.d', 'blackbox')\n")
    assert _imports(tree, everywhere=True) >= {"blackbox.a", "blackbox.b", "blackbox.c", ""}
    assert "blackbox.a" not in _imports(tree, everywhere=False)
    assert "blackbox.cli.run" in _project_imports("blackbox.cli", everywhere=True)  # the command table
    assert "blackbox.live.session" in _project_imports("blackbox", everywhere=True)  # the public names


def test_every_computed_dynamic_import_is_known() -> None:
    """An import of a name computed at run time is a lazy loader's table (`NAME_TABLES`) or reaches only
    outside packages (`OUTSIDE`): the walls and the cycle check see every edge between Blackbox's modules."""
    computed = {name for name, tree in MODULES.items() if "" in _imports(tree, everywhere=True)}
    assert computed == set(NAME_TABLES) | set(OUTSIDE), (
        f"import_module of a computed name in {sorted(computed - set(NAME_TABLES) - set(OUTSIDE))}: import the "
        "module by its literal name, or declare the loader in NAME_TABLES or OUTSIDE")


def test_exporters_need_outside_modules() -> None:
    from blackbox.exporters.registry import EXPORTERS

    for exporter in EXPORTERS.values():
        assert not [m for m in exporter.modules if m.split(".")[0] == "blackbox"], exporter.name


def test_every_folder_is_a_ranked_wing() -> None:
    folders = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert folders == set(RANKS), f"give each wing its rank in RANKS: {sorted(folders ^ set(RANKS))}"


def test_the_ground_floor_imports_nothing_of_blackbox() -> None:
    ground = _in("ground")
    assert "blackbox.errors" in ground and "blackbox.wire" in ground
    for name in ground:
        if name == "blackbox.__main__":  # `python -m blackbox`: the command line's entry, not a floor
            continue
        assert not _project_imports(name, everywhere=True), f"{name} is at the top of blackbox/: it imports nothing"


@pytest.mark.parametrize("wing", sorted(RANKS))
def test_a_wing_imports_only_wings_below_it(wing: str) -> None:
    for name in _in(wing):
        up = {m for m in _project_imports(name, everywhere=True)
              if _wing(m) not in (wing, "ground") and (_wing(m) == "api" or RANKS[_wing(m)] >= RANKS[wing])
              and (name, m) not in DOORS}
        if wing in ("plugin", "cli"):  # built on the public API, as a user's code is
            up -= {"blackbox"}
        assert not up, f"{name} ({wing}) imports {sorted(up)}: a wing imports only the wings below it"


def test_the_format_wing_stands_alone() -> None:
    """The readers never import the live wing, the fork family, the providers or the plugin."""
    for name in _in("format"):
        bad = {m for m in _project_imports(name, everywhere=True) if _wing(m) not in ("format", "ground")}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_only_the_providers_and_the_facts_table_name_an_api() -> None:
    import blackbox.apis
    import blackbox.providers

    names = {p.name for p in blackbox.providers.PROVIDERS} | {a.name for a in blackbox.apis.API_FACTS}
    blind = [name for name in MODULES if _wing(name) in PROVIDER_BLIND] + sorted(ALSO_BLIND)
    assert "blackbox.live.session" in blind
    for module in blind:
        named = {node.value for node in ast.walk(MODULES[module]) if isinstance(node, ast.Constant)
                 and node.value in names}
        assert not named, f"{module} names the APIs {sorted(named)}: ask the provider registry instead"


def test_transport_knows_only_calls() -> None:
    assert _project_imports("blackbox.live.transport", everywhere=True) <= {"blackbox.live.calls"}


def test_the_tee_knows_only_calls_and_the_stream_interface() -> None:
    assert _project_imports("blackbox.live.tee", everywhere=True) <= {"blackbox.live.calls",
                                                                      "blackbox.providers.stream"}


def test_the_core_never_imports_the_ui() -> None:
    for name, tree in MODULES.items():
        ui = {m for m in _imports(tree, everywhere=False) if m.split(".")[0] in ("blackbox_tui", "textual", "tui")}
        assert not ui, f"{name} imports the UI at import time: {sorted(ui)}"


def test_no_import_cycles() -> None:
    """Over every import that may run: at import time, in a function, dynamic, and the lazy loaders' tables
    (a cycle through a function-local import is still two modules that need each other)."""
    graph = {name: _project_imports(name, everywhere=True) for name in MODULES}
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
    """The core and the UI (`tui/`) alike."""
    files = [*ROOT.rglob("*.py"), *(ROOT.parent / "tui").rglob("*.py")]
    long = {str(p.relative_to(ROOT.parent)): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert not long, f"modules over 500 lines: {long}"


def test_session_stays_small() -> None:
    assert len((ROOT / "live" / "session.py").read_text(encoding="utf-8").splitlines()) <= 300
