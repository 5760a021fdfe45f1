"""The original's verdicts on inputs that JSON says are the same value, and on values nested as deep as the
loader accepts: verify judges them (through the library and the real command line), never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.errors import CassetteError
from blackbox.format.canonical import MAX_NESTING, TOO_DEEP, canonical_text, nesting_headroom, step_hash
from blackbox.format.cassette import chain_break, load, loads
from blackbox.format.verify import verify
from tests.conftest import FIXTURES
from tests.waiting import HANG_GUARD

TRACE = FIXTURES / "traces" / "success-tool-use.v2.json"


def rechain(doc: dict[str, Any]) -> dict[str, Any]:
    """Recompute every step's prevHash and hash, as a writer of these values would have."""
    prev = None
    for step in doc["steps"]:
        step["prevHash"] = prev
        step["hash"] = prev = step_hash(step["index"], step["type"], step["timestamp"], step["payload"], prev)
    return doc


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blackbox", *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_GUARD, env={"PATH": "", "NO_COLOR": "1"})


def test_index_written_as_an_integral_float_is_the_integer(tmp_path: Path) -> None:
    """`"index": 1.0` (Python's json.dumps of a float) is the integer 1: same hashes, verifies."""
    data = re.sub(rb'"index": (\d+)', rb'"index": \1.0', TRACE.read_bytes())
    assert b'"index": 1.0' in data
    cassette = loads(data)
    assert [s.index for s in cassette.steps] == list(range(15)) and type(cassette.steps[1].index) is int
    assert chain_break(cassette) is None and verify(cassette).ok
    path = tmp_path / "floats.json"
    path.write_bytes(data)
    done = cli("verify", path, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True, done.stdout + done.stderr


def test_a_non_integral_index_is_still_refused() -> None:
    data = TRACE.read_bytes().replace(b'"index": 1,', b'"index": 1.5,', 1)
    with pytest.raises(CassetteError, match="step 1 field `index` must be an integer"):
        loads(data)


@pytest.mark.parametrize("timestamp", [1.5, 1700000000000.25, 1e21, 5e-324])
def test_a_non_integral_timestamp_is_hashed_as_javascript_prints_it(tmp_path: Path, timestamp: float) -> None:
    doc = json.loads(TRACE.read_text())
    doc["steps"][3]["timestamp"] = timestamp
    path = tmp_path / "ts.json"
    path.write_text(json.dumps(rechain(doc)))
    cassette = load(path)
    assert cassette.steps[3].timestamp == timestamp and verify(path).ok
    # The hash is taken of JavaScript's text of the number (1e21 -> 1e+21), not Python's.
    js = {1.5: "1.5", 1700000000000.25: "1700000000000.25", 1e21: "1e+21", 5e-324: "5e-324"}[timestamp]
    assert f'"timestamp":{js},' in canonical_text({"timestamp": timestamp, "x": 0})
    done = cli("verify", path)
    assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr


def test_an_integral_float_timestamp_hashes_as_the_integer() -> None:
    doc = json.loads(TRACE.read_text())
    doc["steps"][3]["timestamp"] = float(doc["steps"][3]["timestamp"])  # 0.0: hashed as 0, hash unchanged
    assert verify(loads(json.dumps(doc).encode())).ok


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for n in range(depth):
        value = {"k": value} if n % 2 else [value]
    return value


def _deepest_loadable(build: Any) -> int:
    """The deepest nesting the loader accepts here (MAX_NESTING levels, less the cassette's own)."""
    low, high = 10, 2 * MAX_NESTING
    while low < high:
        mid = (low + high + 1) // 2
        try:
            loads(build(mid))
        except CassetteError:
            high = mid - 1
        else:
            low = mid
    return low


# A 16+-digit integer and keys whose UTF-16 order differs from code-point order: both send canonicalization
# to its exact (pure-Python) writer, which must not recurse.
@pytest.mark.parametrize("leaf", [12345678901234567890, {"\U0001f600": 1, "\ue000": 2}, 1e16])
def test_every_depth_the_loader_accepts_is_judged(leaf: Any) -> None:
    doc = json.loads(TRACE.read_text())

    def build(depth: int) -> bytes:
        doc["steps"][3]["payload"]["result"] = _nested(depth, leaf)
        with nesting_headroom():  # the test's own writer (json.dumps) recurses
            return json.dumps(rechain(doc)).encode()

    depth = _deepest_loadable(build)
    assert MAX_NESTING - 10 <= depth < MAX_NESTING  # the result sits 5 levels into the file
    data = build(depth)
    report = verify(loads(data))
    assert report.ok, report.to_dict()
    doc["steps"][3]["hash"] = "0" * 64
    with nesting_headroom():
        data = json.dumps(doc).encode()
    broken = verify(loads(data))
    assert broken.failure is not None and broken.failure.name == "hash_chain" and broken.failure.step == 3


def test_the_exact_writer_matches_the_fast_path_at_depth() -> None:
    from blackbox.format.canonical import _slow  # the pure-Python writer, compared with msgspec's bytes

    value = _nested(800, {"b": [1, 2.5, "x\u2028"], "a": None})
    assert _slow(value).encode() == canonical_text(value).encode()
    deep = _nested(50_000, 12345678901234567890)  # far deeper than any loader: still no RecursionError
    assert _slow(deep).count("12345678901234567000") == 1


def _deep_file(tmp_path: Path, depth: int, name: str = "deep.json") -> Path:
    doc = json.loads(TRACE.read_text())
    doc["steps"][3]["payload"]["result"] = _nested(depth, "leaf")
    with nesting_headroom():
        data = json.dumps(rechain(doc)).encode()
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _raises(read: Any) -> BaseException | None:
    try:
        read()
    except CassetteError as exc:
        return exc
    return None


def _every_reader(path: Path) -> dict[str, Any]:
    """What each reader makes of the file: True when it reads (and verifies) it, else its error's text."""
    import threading

    from blackbox.format.indexing import Indexer, Unusual
    from blackbox.format.lazy import load_lazy

    def indexed() -> bool | str:
        indexer = Indexer(path)
        try:
            indexer.start()
            steps = [step for batch in indexer.batches() for step in batch.steps]
            return len(steps) == 15 and steps[3].decoded().hash == load(path).steps[3].hash
        except Unusual:  # the UI then reads the file with `lazy`, whose verdict is the indexer's
            return str(_raises(lambda: load_lazy(path)))
        finally:
            indexer.file.close()

    def in_a_thread() -> bool:  # the UI reads files in a worker thread
        out: list[bool] = []
        worker = threading.Thread(target=lambda: out.append(verify(path).ok))
        worker.start()
        worker.join()
        return out == [True]

    readers = {"cassette": lambda: verify(load(path)).ok, "lazy": lambda: len(load_lazy(path).steps) == 15,
               "indexing": indexed, "verify": lambda: verify(path).ok, "thread": in_a_thread,
               "canonical": lambda: step_hash(3, "tool_result", load(path).steps[3].timestamp,
                                              load(path).steps[3].payload, load(path).steps[2].hash)
               == load(path).steps[3].hash}
    seen: dict[str, Any] = {}
    for name, read in readers.items():
        try:
            seen[name] = read()
        except CassetteError as exc:
            seen[name] = str(exc)
    return seen


@pytest.mark.parametrize("depth", [992, 2_500, 4_200, MAX_NESTING - 10])
def test_every_reader_accepts_the_depths_the_original_accepts(tmp_path: Path, depth: int) -> None:
    """The original hashes as deep as V8's stack lets it (2,600-4,200 levels); every reader here takes
    MAX_NESTING levels, through the library and the command line, never a RecursionError."""
    path = _deep_file(tmp_path, depth)
    assert _every_reader(path) == dict.fromkeys(("cassette", "lazy", "indexing", "verify", "thread", "canonical"),
                                                True)
    other = _deep_file(tmp_path, depth - 1, "other.json")
    for args in (["verify", path], ["verify", path, "--json"], ["verify", path, "--format", "markdown"],
                 ["inspect", path, "--step", "3"], ["inspect", path, "--json"], ["diff", path, other],
                 ["diff", path, other, "--json"], ["diff", path, other, "--semantic"], ["list", tmp_path]):
        done = cli(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr[-2000:])


def test_deeper_than_every_reader_accepts_is_refused_in_the_same_words(tmp_path: Path) -> None:
    path = _deep_file(tmp_path, MAX_NESTING + 50)
    seen = _every_reader(path)
    refused = {name: text for name, text in seen.items() if name not in ("verify", "thread")}
    assert all(isinstance(text, str) and TOO_DEEP in text for text in refused.values()), seen
    assert seen["verify"] is False and seen["thread"] is False
    for args in (["verify", path], ["inspect", path], ["diff", path, path]):
        done = cli(*args)
        assert done.returncode in (1, 2) and "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        assert TOO_DEEP in done.stdout + done.stderr, (args, done.stdout, done.stderr)


@pytest.mark.parametrize("policy", [False, True], ids=["plain", "with-a-policy"])
def test_a_tool_result_as_deep_as_the_readers_accept_is_recorded_and_replayed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: bool) -> None:
    """A wrapped tool that returns 2,500 nested lists (the original hashes that depth): recorded (journal and
    cassette), verified and replayed — never a RecursionError in the agent; deeper than every reader accepts is
    refused in one line."""
    import blackbox
    from blackbox.errors import SessionError

    if policy:
        rules = tmp_path / "policy.toml"
        rules.write_text("[[rules]]\nname = \"mail\"\ndetector = \"email\"\naction = \"mask\"\n")
        monkeypatch.setenv("BLACKBOX_POLICY", str(rules))

    def nested(depth: int) -> list[Any]:
        top: list[Any] = []
        inner = top
        for _ in range(depth - 1):
            inner.append([])
            inner = inner[0]
        inner.append("me@example.com")
        return top

    def text(value: Any) -> str:  # == and json.dumps recurse past Python's limit at this depth
        import msgspec

        with nesting_headroom():
            return msgspec.json.encode(value).decode()

    out = tmp_path / "deep.json"
    with blackbox.session("record", out=out) as bb:
        assert text(bb.tool("deep", lambda size: nested(size))(2_500)) == text(nested(2_500))
        bb.finish("done")
    cassette = load(out)
    assert verify(cassette).ok and cassette.steps[1].type == "tool_result"
    with blackbox.session("replay", cassette=out) as bb:
        again = text(bb.tool("deep", lambda size: pytest.fail("replay runs no tool"))(2_500))
        bb.finish("done")
    if policy:  # the address masked by a stable token, the structure as it was
        assert "me@example.com" not in again and "[redacted:mail:" in again
        again = re.sub(r'"\[redacted:mail:[0-9a-f]+\]"', '"me@example.com"', again)
    assert again == text(nested(2_500))
    with blackbox.session("record", out=tmp_path / "deeper.json") as bb, pytest.raises(SessionError, match=TOO_DEEP):
        bb.tool("deep", lambda size: nested(size))(MAX_NESTING + 10)
