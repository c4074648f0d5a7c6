"""One heavy model computation at a time per process.

The app serves every browser session from one process on a few cores. Torch (the LM, MiniLM) and the e5 engine
each spread one call over every core, so two calls at once only fight over them (``bench/concurrency.py``: four
concurrent suggestions, the slowest took 5.3x one suggestion's time). Every such call takes :data:`COMPUTE` first: requests
queue and each runs at full speed. Long jobs (indexing thousands of quotes) take it per small batch, so a request
never waits for more than one batch.
"""

from __future__ import annotations

import threading

COMPUTE = threading.RLock()
"""Held for the duration of one model call (re-entrant: a call may make another)."""


class Queue:
    """A lock that serves its waiters in arrival order (a plain lock lets a request that has waited long lose to
    a newer one again and again)."""

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._next = self._serving = 0

    def __enter__(self) -> None:
        with self._turn:
            ticket = self._next
            self._next += 1
            self._turn.wait_for(lambda: self._serving == ticket)

    def __exit__(self, *exc: object) -> None:
        with self._turn:
            self._serving += 1
            self._turn.notify_all()


RERANKING = Queue()
"""Suggestions take their language-model pass one at a time, first come first served: with several requests at
once, each finishes in the order it came instead of all finishing late together."""
BATCH = 64
"""Texts embedded per hold of :data:`COMPUTE`."""
