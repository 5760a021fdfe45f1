"""verify of a file reads it lazily (each payload decoded, hashed, scanned and dropped in turn) and leaves
anything unusual to the eager path: its report must equal the eager path's for every input, the odd ones
above all (a lone surrogate, bytes that are not UTF-8, deep nesting, numbers JavaScript prints its own way,
a broken chain followed by a bad payload)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.format.cassette import StepChain, save
from blackbox.format.verify import _verify_eager, verify
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"
BASE = (TRACES / "fork-child.v2.json").read_bytes()


def _chained(payloads: list[object], tmp_path: Path, name: str) -> Path:
    chain = StepChain("lazy-check")
    for n, payload in enumerate(payloads):
        chain.append("tool_result" if n % 2 else "tool_call", 1000 + n, payload)
    path = tmp_path / name
    save(chain.cassette(0), path)
    return path


def _deep(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = {"a": [value]}
    return value


VARIANTS: dict[str, bytes] = {
    "a fixture": BASE,
    "a lone surrogate in a payload": BASE.replace(b'"search"', b'"se\\ud800arch"', 1),
    "a payload that is not UTF-8": BASE.replace(b"search", b"se\xffrch", 1),
    "a changed timestamp": BASE.replace(b'"timestamp": 1', b'"timestamp": 2', 1),
    "a broken chain, then bytes that are not UTF-8": BASE.replace(b'"timestamp": 1', b'"timestamp": 2', 1)
    .replace(b"Second deterministic", b"Second d\xffterministic"),
    "1e400 in a payload": BASE.replace(b'"search"', b"1e400", 1),
    "an index written 1.0": BASE.replace(b'"index": 1,', b'"index": 1.0,', 1),
    "duplicate keys": BASE.replace(b'"toolName": "search"', b'"toolName": "x", "toolName": "search"', 1),
    "a provider id in a payload": BASE.replace(b'"search"', b'"toolu_01AbCdEf"', 1),
    "a credential in user data": BASE.replace(b"weekend hotels", b"sk-ant-api03-abcdefghijklmnopqrstuvwx", 1),
    "not JSON": BASE[:300],
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_lazy_pass_reports_what_the_eager_path_reports(name: str, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(VARIANTS[name])
    assert verify(path) == _verify_eager(str(path), None, (), None)


@pytest.mark.parametrize("payloads", [
    [{"x": 1.0, "y": 1e16, "z": 1e21, "w": 1.5e-7, "v": -0.0, "big": 2**60}, {"result": 12345678901234567890}],
    [{"key": "a value with sk-ant-admin01-" + "x" * 40}, {"result": "ok"}],
    [_deep(300), {"result": "ok"}],
    [{"\U0001f600": 1, "\ue000": 2}, {"result": {"b": 1, "a": 2}}],
], ids=["numbers", "a credential", "deep", "astral keys"])
def test_the_lazy_pass_agrees_on_chained_payloads(payloads: list[object], tmp_path: Path) -> None:
    path = _chained(payloads, tmp_path, "run.json")
    assert verify(path) == _verify_eager(str(path), None, (), None)
    assert verify(path).ok == (payloads[0] != {"key": "a value with sk-ant-admin01-" + "x" * 40})


def test_a_key_from_the_environment_is_found_on_the_lazy_pass(tmp_path: Path) -> None:
    path = _chained([{"q": "weather"}, {"result": "the key is k-12345-secret"}], tmp_path, "run.json")
    env = {"ANTHROPIC_API_KEY": "k-12345-secret"}
    report = verify(path, env=env)
    assert report == _verify_eager(str(path), env, (), None)
    assert report.failure is not None and report.failure.name == "provider_neutrality"


@pytest.mark.parametrize("levels", [500, 990, 1500, 3000])
def test_deep_payloads_get_the_eager_verdict(levels: int, tmp_path: Path) -> None:
    deep = b'{"a": [' * levels + b'"leaf"' + b"]}" * levels
    path = tmp_path / "deep.json"
    path.write_bytes(BASE.replace(b'"search"', deep, 1))
    assert verify(path) == _verify_eager(str(path), None, (), None)
