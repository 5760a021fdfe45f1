"""docs/architecture.md's recipe "add an exporter", done as a contributor would, on a copy of the package in a
temporary folder (no tracked file is edited): one new module and its entry in `exporters/registry`, nothing
else touched; the copy's `blackbox export` then lists it, runs it with `--to`, and asks each exporter what it
needs (the throwaway needs no OpenTelemetry, `otlp` does)."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.test_export_otlp import rich_cassette

SOURCE = Path(__file__).resolve().parent.parent / "blackbox"

THROWAWAY = '''"""`--to span-lines`: each span's name and attributes as one JSON line (a throwaway exporter)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from blackbox.exporters.base import Exporter, Target
from blackbox.exporters.spans import SpanData


class SpanLines(Exporter):
    name = "span-lines"
    description = "each span as one JSON line"
    needs_out = True

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        assert target.out is not None
        lines = [json.dumps({"name": span.name, "attributes": span.attributes}) for b in batches for span in b]
        target.out.write_text("".join(line + "\\n" for line in lines))
'''

HIDE_OTEL = ("import sys\nfor name in ('opentelemetry', 'opentelemetry.sdk', 'opentelemetry.exporter'):\n"
             "    sys.modules[name] = None\n")


def _registered(registry: str) -> str:
    """The registry with the throwaway's entry: its import, and its line in EXPORTERS."""
    imports, sep, rest = registry.partition("\n\n__all__")
    listed, close, tail = rest.rpartition(")}")
    assert sep and close, "the registry's shape changed: update this recipe test and docs/architecture.md"
    return (f"{imports}\nfrom blackbox.exporters.span_lines import SpanLines{sep}{listed}    SpanLines(),\n"
            f"{close}{tail}")


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(SOURCE, root / "blackbox", ignore=shutil.ignore_patterns("__pycache__"))
    exporters = root / "blackbox" / "exporters"
    (exporters / "span_lines.py").write_text(THROWAWAY)
    registry = exporters / "registry.py"
    registry.write_text(_registered(registry.read_text()))
    return root


def _changed(a: Path, b: Path) -> list[str]:
    """Files that differ or exist on one side only, below two folders (compared byte for byte)."""
    compare = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out = compare.left_only + compare.right_only
    out += [name for name in compare.common_files if not filecmp.cmp(a / name, b / name, shallow=False)]
    for sub in compare.common_dirs:
        out += [f"{sub}/{path}" for path in _changed(a / sub, b / sub)]
    return sorted(out)


def _blackbox(root: Path, *args: object, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """The copy's CLI (its folder first on the path, ahead of the installed package)."""
    code = f"{prelude}import sys\nfrom blackbox.cli import _typer_main\n_typer_main(sys.argv[1:])\n"
    env = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=root, timeout=600)


def test_an_exporter_is_one_module_and_its_registry_entry(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert _changed(SOURCE, root / "blackbox") == ["exporters/registry.py", "exporters/span_lines.py"]
    registry = (root / "blackbox" / "exporters" / "registry.py").read_text().splitlines()
    original = (SOURCE / "exporters" / "registry.py").read_text().splitlines()
    assert len(registry) - len(original) == 2 and set(original) <= set(registry)
    where = subprocess.run([sys.executable, "-c", "import blackbox; print(blackbox.__file__)"], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, timeout=600)
    assert where.stdout.strip() == str(root / "blackbox" / "__init__.py")

    rich_cassette(tmp_path / "run.json")
    helped = _blackbox(root, "export", "--help")
    assert "span-lines: each span as one JSON line." in helped.stdout
    assert "The target: otlp, otlp-json, span-lines." in helped.stdout
    done = _blackbox(root, "export", tmp_path / "nope.json", "--to", "nope")
    assert done.returncode == 2 and "--to must be one of otlp, otlp-json, span-lines" in done.stderr

    # usable from `--to`, with the CLI's checks read from its facts, and without the otel extra it never needs
    done = _blackbox(root, "export", tmp_path / "run.json", "--to", "span-lines", "--out", tmp_path / "lines.jsonl",
                     "--content", prelude=HIDE_OTEL)
    assert done.returncode == 0, done.stderr
    assert "Exported 1 cassette(s)" in done.stdout and "(span-lines): 1 trace(s), 5 spans" in done.stdout
    lines = [json.loads(line) for line in (tmp_path / "lines.jsonl").read_text().splitlines()]
    assert [line["name"] for line in lines] == ["invoke_agent", "chat claude-sonnet-4-6", "execute_tool get_weather",
                                                "execute_tool forecast", "chat claude-sonnet-4-6"]
    assert json.loads(lines[2]["attributes"]["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    done = _blackbox(root, "export", tmp_path / "run.json", "--to", "span-lines")
    assert done.returncode == 2 and "--to span-lines writes a file: --out FILE is needed" in done.stderr
    done = _blackbox(root, "export", tmp_path / "run.json", "--to", "span-lines", "--out", tmp_path / "x.jsonl",
                     "--endpoint", "http://127.0.0.1:9/v1/traces")
    assert done.returncode == 2 and "are for a network target (otlp); --to span-lines sends nothing" in done.stderr
    # the exporter that needs the extra is the one refused without it, before any file is read
    done = _blackbox(root, "export", tmp_path / "run.json", "--endpoint", "http://127.0.0.1:9/v1/traces",
                     prelude=HIDE_OTEL)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "--to otlp needs the otel extra" in done.stderr
