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


def _deepest_hashed(build: Any) -> int:
    """The deepest nesting whose step verifies here (MAX_NESTING levels of payload); deeper still loads, and
    fails its step's hash check."""
    low, high = 10, 2 * MAX_NESTING
    while low < high:
        mid = (low + high + 1) // 2
        if verify(loads(build(mid))).ok:
            low = mid
        else:
            high = mid - 1
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

    depth = _deepest_hashed(build)
    assert depth == MAX_NESTING - 1 - (not isinstance(leaf, int | float))  # the payload's own level, the leaf's
    deeper = verify(loads(build(depth + 1)))
    assert deeper.failure is not None and deeper.failure.name == "hash_chain" and deeper.failure.step == 3
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
        # Indentation grows with the square of the depth: a deep payload prints on one line instead of as
        # megabytes of spaces (10,000 levels indented: 100 MB, seconds to mask and write).
        assert len(done.stdout) < 20 * path.stat().st_size + 2**20, (args, len(done.stdout))


def test_a_payload_nested_deeper_is_read_by_every_reader_and_fails_its_steps_hash_check(tmp_path: Path) -> None:
    """One level past MAX_NESTING, the payload is not hashed: each reader loads the file and its chain check
    stops at that step (the original fails there too: its hash recursion ends at 2,600-4,200 levels)."""
    from blackbox.format.canonical import CanonicalError
    from blackbox.format.indexing import Indexer, Unusual

    path = _deep_file(tmp_path, MAX_NESTING)  # the result's levels and the payload's own: MAX_NESTING + 1
    with pytest.raises(CanonicalError, match=TOO_DEEP):
        step = load(path).steps[3]
        step_hash(3, step.type, step.timestamp, step.payload, step.prevHash)
    indexer = Indexer(path)
    try:
        indexer.start()
        with pytest.raises(Unusual):  # left to the whole-file (lazy) loader, below
            [step for batch in indexer.batches() for step in batch.steps]
    finally:
        indexer.file.close()
    assert verify(path).ok is False and verify(load(path)).ok is False
    for cassette in (load(path), load_lazy_path(path)):
        broken = chain_break(cassette)
        assert broken is not None and broken.index == 3
        assert broken.reason == f"step 3 payload is {TOO_DEEP}, too deep to hash, so its hash cannot be checked"
    for args in (["verify", path], ["verify", path, "--json"], ["assert", path], ["inspect", path],
                 ["inspect", path, "--step", "3"], ["diff", path, path]):
        done = cli(*args)
        assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        if args[0] in ("verify", "assert", "diff"):
            assert "too deep to hash" in done.stdout + done.stderr, (args, done.stdout, done.stderr)


def load_lazy_path(path: Path) -> Any:
    from blackbox.format.lazy import load_lazy

    return load_lazy(path)


def _deep_text(depth: int, *, where: str = "payload", inner: bytes = b"") -> bytes:
    """The trace with `depth` nested lists at `where` (step 3's payload, a field of step 3 the format does not
    define, or a top-level one), written as text: no writer recurses."""
    doc = json.loads(TRACE.read_text())
    if where == "payload":
        doc["steps"][3]["payload"] = "@DEEP@"
    elif where == "step":
        doc["steps"][3]["extra"] = "@DEEP@"
    else:
        doc["extra"] = "@DEEP@"
    return json.dumps(doc, indent=2).encode().replace(b'"@DEEP@"', b"[" * depth + inner + b"]" * depth)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 20_000, 150_000])
def test_a_payload_nested_far_deeper_never_recurses_and_fails_the_same_check(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(_deep_text(depth))
    loaded = load(path)
    assert len(loaded.steps) == 15
    assert loaded.steps[4].payload == json.loads(TRACE.read_text())["steps"][4]["payload"]
    report = verify(path)
    assert report.failure is not None and (report.failure.name, report.failure.step) == ("hash_chain", 3)
    assert report.checks[0].status == "pass" and TOO_DEEP in (report.failure.detail or "")
    done = cli("verify", path, "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["failure"]["name"] == "hash_chain", done.stderr[-2000:]


@pytest.mark.parametrize("where", ["step", "top"])
def test_a_file_nested_too_deep_outside_its_payloads_is_refused_at_load(tmp_path: Path, where: str) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(_deep_text(MAX_NESTING + 10, where=where))
    seen = _every_reader(path)
    refused = {name: text for name, text in seen.items() if name not in ("verify", "thread")}
    assert all(isinstance(text, str) and TOO_DEEP in text for text in refused.values()), seen
    report = verify(path)
    assert report.failure is not None and report.failure.name == "schema_version"
    assert TOO_DEEP in str(report.failure.detail)


@pytest.mark.parametrize(("inner", "words"), [
    (b"NaN", "NaN/Infinity at line 72, column 20018 "),
    (b"1 2", "invalid syntax at line 72, column 20019;"),
    (b'"\xff"', "not UTF-8 text at line 72, column 20019,"),
])
def test_text_that_is_not_json_inside_a_deep_payload_is_refused_at_its_place(inner: bytes, words: str) -> None:
    with pytest.raises(CassetteError, match=words):
        loads(_deep_text(20_000, inner=inner))


def test_a_deep_payload_cut_short_is_a_truncated_file() -> None:
    data = _deep_text(20_000)
    with pytest.raises(CassetteError, match="the file ends early"):
        loads(data[: data.index(b"]")])


def test_the_last_payload_member_of_a_step_counts_as_in_json_parse() -> None:
    doc = json.loads(TRACE.read_text())
    payload = json.dumps(doc["steps"][3]["payload"]).encode()
    doc["steps"][3]["payload"] = "@P@"
    text = json.dumps(doc, indent=2).encode()
    deep = b"[" * 20_000 + b"]" * 20_000
    overridden = text.replace(b'"@P@"', deep + b', "payload": ' + payload)
    assert verify(loads(overridden)).ok  # the deep one is read over, as JSON.parse drops it
    overriding = text.replace(b'"@P@"', payload + b', "payload": ' + deep)
    report = verify(loads(overriding))
    assert report.failure is not None and (report.failure.name, report.failure.step) == ("hash_chain", 3)


def test_a_cassette_holding_a_payload_too_deep_to_read_is_never_written(tmp_path: Path) -> None:
    from blackbox.format.cassette import save

    loaded = loads(_deep_text(20_000))
    with pytest.raises(CassetteError, match="step 3 payload is nested more than 10,000 levels deep"):
        save(loaded, tmp_path / "copy.json")
    assert not (tmp_path / "copy.json").exists()


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
    deeper = blackbox.session("record", out=tmp_path / "deeper.json")
    with pytest.raises(SessionError, match=TOO_DEEP):
        deeper.tool("deep", lambda size: nested(size))(MAX_NESTING + 10)
    with pytest.raises(SessionError, match=TOO_DEEP):  # the refusal fails the run: finish() raises it again
        deeper.finish("done")


def test_a_journal_line_holding_a_payload_as_deep_as_the_readers_go_is_recovered() -> None:
    """A crash journal's line is one step: its payload may nest MAX_NESTING levels there too."""
    from blackbox.live.journal import journal_steps

    doc = json.loads(TRACE.read_text())
    doc["steps"][3]["payload"]["result"] = _nested(MAX_NESTING - 1, 1.5)  # the payload: MAX_NESTING levels
    rechain(doc)
    with nesting_headroom():
        lines = [json.dumps(step).encode() for step in doc["steps"][:5]]
    steps = journal_steps(lines, doc["id"])
    from blackbox.format.cassette import hash_break

    assert [step.index for step in steps] == [0, 1, 2, 3, 4]
    assert hash_break(3, steps[3])[0] is None  # read whole: it hashes as recorded
