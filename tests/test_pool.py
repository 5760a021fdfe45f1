"""`blackbox.many.pool`: at most `concurrency` jobs at once, every result handed over in the calling thread, a
provider's "slow down" (429/503 with retry-after) honoured by every worker, a failed job not stopping the rest;
and the live model's 429 seen as such through the real HTTP path (the fake API)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from blackbox.fork.client import retry_after
from blackbox.fork.whatif import LiveModel, RateLimited, Unreachable
from blackbox.many.pool import Done, RetryLater, run_all
from blackbox.providers.neutral import CallIds
from tests.fakeapi import FakeAPI, chat_completion, error_reply
from tests.waiting import until

pytest_plugins = ["tests.conftest_fakeapi"]


def test_no_more_than_concurrency_jobs_run_at_once_and_all_finish() -> None:
    lock, active, peak = threading.Lock(), [0], [0]
    release = threading.Event()

    def job(n: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        release.wait()
        with lock:
            active[0] -= 1
        return n * n

    jobs = [lambda n=n: job(n) for n in range(20)]
    worker = threading.Thread(target=lambda: results.extend(run_all(jobs, 4)))
    results: list[Done[int]] = []
    worker.start()
    until(lambda: active[0] >= 4, "four jobs running")
    release.set()
    worker.join()
    assert peak[0] == 4
    assert sorted(d.value for d in results if d.value is not None) == [n * n for n in range(20)]


def test_on_done_runs_in_the_calling_thread_and_a_failure_does_not_stop_the_others() -> None:
    seen: list[tuple[int, str]] = []

    def job(n: int) -> int:
        if n == 3:
            raise ValueError("job three broke")
        return n

    run_all([lambda n=n: job(n) for n in range(8)], 3,
            lambda done: seen.append((done.index, threading.current_thread().name)))
    assert sorted(index for index, _ in seen) == list(range(8))
    assert {name for _, name in seen} == {threading.current_thread().name}
    broken = run_all([lambda: job(3)], 1)
    assert isinstance(broken[0].error, ValueError) and broken[0].attempts == 1  # not retried: it asked for nothing


def test_a_retry_after_is_waited_out_by_every_worker_then_the_job_runs_again() -> None:
    calls: list[tuple[int, float]] = []
    waits: list[str] = []
    started = time.monotonic()

    def job(n: int) -> int:
        calls.append((n, time.monotonic() - started))
        if n == 0 and sum(1 for i, _ in calls if i == 0) == 1:
            raise RetryLater("the API answered 429", retry_after=0.3)
        return n

    done = run_all([lambda n=n: job(n) for n in range(1)], 2, on_wait=waits.append)
    assert done[0].value == 0 and done[0].attempts == 2
    second = [t for i, t in calls if i == 0][1]
    assert second >= 0.3  # a lower bound only: the wait it asked for was kept
    assert waits and "429" in waits[0] and "0.3 s" in waits[0]


def test_a_job_that_keeps_being_refused_ends_with_its_last_error() -> None:
    done = run_all([lambda: (_ for _ in ()).throw(RetryLater("429", retry_after=0.0))], 1, attempts=3)
    assert isinstance(done[0].error, RetryLater) and done[0].attempts == 3


def test_retry_after_headers() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_the_live_model_raises_rate_limited_with_the_wait_the_api_asked(fake_api: FakeAPI) -> None:
    fake_api.queue(error_reply("openai", 429, retry_after_ms=1500), chat_completion(content="fine"))
    env: dict[str, Any] = {"OPENAI_API_KEY": "sk-test-pool-0123456789abcdefghij",
                           "OPENAI_BASE_URL": fake_api.openai_url}
    model = LiveModel("openai", env=env)
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    with pytest.raises(RateLimited) as refused:
        model.reply(request, CallIds())
    assert refused.value.retry_after == 1.5
    assert model.reply(request, CallIds())["text"] == "fine"


def test_no_answer_at_all_is_unreachable_which_the_pool_retries() -> None:
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed when the block ends: nothing listens there
    env = {"OPENAI_API_KEY": "sk-test-pool-0123456789abcdefghij", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    model = LiveModel("openai", env=env)
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    with pytest.raises(Unreachable) as refused:
        model.reply(request, CallIds())
    assert refused.value.retry_after is None and "cannot reach" in str(refused.value)


def test_jobs_are_made_as_they_are_handed_out_and_on_done_keeps_the_results() -> None:
    """A sweep's memory stays flat: the pool indexes `jobs` only when a worker takes one (a lazy sequence
    makes each job then), and with `on_done` it keeps no `Done` of its own."""
    lock = threading.Lock()
    made: list[int] = []
    ran: list[int] = []
    seen: list[int] = []
    early: list[int] = []

    class Lazy:
        def __len__(self) -> int:
            return 40

        def __getitem__(self, index: int) -> Any:
            with lock:
                made.append(index)
                if len(made) > len(ran) + 2:  # two workers: only the jobs being taken now are made early
                    early.append(index)

            def job() -> int:
                with lock:
                    ran.append(index)
                return index

            return job

    assert run_all(Lazy(), 2, lambda done: seen.append(done.index)) == []  # type: ignore[arg-type]
    assert sorted(seen) == list(range(40)) and sorted(made) == list(range(40)) and not early
    made.clear()
    ran.clear()
    assert sorted(d.value for d in run_all(Lazy(), 2)) == list(range(40))  # type: ignore[arg-type,type-var]
