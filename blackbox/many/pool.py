"""Many jobs at once, politely: bounded concurrency, the provider's "slow down" honoured, Ctrl-C clean.

`run_all(jobs, concurrency, on_done)` runs each job (a callable taking nothing) on one of `concurrency` worker
threads and hands every finished one, as a `Done`, to `on_done` **in the calling thread**, one at a time: the
caller writes its manifest there, so only one thread ever writes it and a write is never cut by another's.

A job that raises an exception carrying a `retry_after` attribute (seconds, or None for "no hint": the
`LiveModel`'s `RateLimited` for a 429 or 503) is run again, whole, after that wait (or an exponential back-off
when the provider gave none), up to `attempts` times.  The wait is shared: one 429 pauses every worker until
its `retry-after` has passed, because the limit is the account's, not the thread's.  `on_wait(text)` says
so (a progress bar's `say`), so a terminal never sits silent through a wait.  A job is therefore run whole
again: it must write its result only once it finished (a branch cassette is written atomically at its end).

Ctrl-C (KeyboardInterrupt in the calling thread) stops handing out jobs and re-raises at once: the workers
are daemon threads, so a job still running is abandoned, its result never reaches `on_done`, and whatever
`on_done` wrote last (atomically) stays whole.  The caller resumes from that.

No SDK, no HTTP here: what is retried is decided by the exception alone, so the pool serves any job.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Done", "Gate", "RetryLater", "run_all"]

T = TypeVar("T")

BACKOFF = 1.0  # seconds before the first retry when the provider gave no retry-after; doubled each time
MAX_WAIT = 300.0  # no single wait is longer than this, whatever a retry-after says


class RetryLater(Exception):
    """A job's way to say "ask again in `retry_after` seconds" (None: back off as you see fit)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Done(Generic[T]):
    """One finished job: its position in `jobs`, its value or the exception it ended with, how many times it
    was run (1 unless retried) and the seconds its last run took."""

    index: int
    value: T | None = None
    error: BaseException | None = None
    attempts: int = 1
    seconds: float = 0.0


class Gate:
    """A pause every worker respects: `hold(s)` closes it for `s` seconds from now (a longer hold wins),
    `wait(stop)` returns once it is open (False when `stop` was set meanwhile)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until = 0.0
        self._lock = threading.Lock()

    def hold(self, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, self._clock() + max(0.0, seconds))

    def wait(self, stop: threading.Event) -> bool:
        while True:
            with self._lock:
                left = self._until - self._clock()
            if left <= 0:
                return not stop.is_set()
            if stop.wait(left):
                return False


def _retry_after(exc: BaseException) -> tuple[bool, float | None]:
    """(whether `exc` asks for a retry, the seconds it asks to wait)."""
    if not hasattr(exc, "retry_after"):
        return False, None
    value = exc.retry_after
    return True, float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Workers(Generic[T]):
    """The shared state of one `run_all`: the next job to hand out, the gate, the stop flag, the results."""

    def __init__(self, jobs: Sequence[Callable[[], T]], attempts: int,
                 on_wait: Callable[[str], None] | None) -> None:
        self.jobs, self.attempts, self.on_wait = jobs, max(1, attempts), on_wait
        self.next: Iterator[int] = iter(range(len(jobs)))
        self.lock = threading.Lock()
        self.gate = Gate()
        self.stop = threading.Event()
        self.finished: queue.Queue[Done[T]] = queue.Queue()

    def take(self) -> int | None:
        with self.lock:
            return None if self.stop.is_set() else next(self.next, None)

    def work(self) -> None:
        while (index := self.take()) is not None:
            done = self.run(index)
            if done is None:
                return
            self.finished.put(done)

    def run(self, index: int) -> Done[T] | None:
        """Run job `index` until it ends or runs out of attempts; None when stopped while waiting."""
        for attempt in range(1, self.attempts + 1):
            if not self.gate.wait(self.stop):
                return None
            started = time.perf_counter()
            try:
                value = self.jobs[index]()
            except Exception as exc:
                seconds = time.perf_counter() - started
                asks, wait = _retry_after(exc)
                if not asks or attempt == self.attempts:
                    return Done(index, error=exc, attempts=attempt, seconds=seconds)
                delay = min(MAX_WAIT, wait if wait is not None else BACKOFF * 2 ** (attempt - 1))
                self.gate.hold(delay)
                if self.on_wait is not None:
                    self.on_wait(f"{exc} — waiting {delay:.1f} s (retry {attempt} of {self.attempts - 1})")
                continue
            return Done(index, value=value, attempts=attempt, seconds=time.perf_counter() - started)
        return None  # not reached: the last attempt returns


def run_all(jobs: Sequence[Callable[[], T]], concurrency: int,
            on_done: Callable[[Done[T]], None] | None = None, *,
            on_wait: Callable[[str], None] | None = None, attempts: int = 6) -> list[Done[T]]:
    """Run `jobs` with at most `concurrency` at a time; every one's `Done`, in the order they finished.

    `on_done(done)` is called in this thread as each finishes (an exception it raises stops the run and is
    raised here); `on_wait(text)` from a worker when the provider asked to wait.  A job's exception does not
    stop the others: it is in its `Done.error`.  KeyboardInterrupt stops handing out jobs and is re-raised.
    With `on_done`, the caller keeps what it needs and the list returned is empty: a sweep's memory does not
    grow by a `Done` per branch.  `jobs` is indexed only as each job is handed out (and again for a retry),
    so a lazy sequence can build each job when it is due."""
    state = _Workers(jobs, attempts, on_wait)
    threads = [threading.Thread(target=state.work, name=f"blackbox-pool-{n}", daemon=True)
               for n in range(max(1, min(concurrency, len(jobs))))]
    results: list[Done[T]] = []
    finished = 0
    try:
        for thread in threads:
            thread.start()
        while finished < len(jobs):
            done = state.finished.get()
            finished += 1
            if on_done is None:
                results.append(done)
            else:
                on_done(done)
    finally:
        state.stop.set()  # normally a no-op: every job was handed out; on Ctrl-C or an on_done error: no more
    for thread in threads:
        thread.join()
    return results
