"""The reranking queue: requests that arrive while one reranks are served in the order they came."""

from __future__ import annotations

import threading
import time

from quill_core._compute import Queue


def test_waiting_requests_are_served_first_come_first_served():
    queue, served, started = Queue(), [], []
    release = threading.Event()

    def first():
        with queue:
            started.append("first")
            release.wait(5)
            served.append("first")

    def later(name):
        with queue:
            served.append(name)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    while not started:
        time.sleep(0.005)
    for name in ("second", "third", "fourth"):
        t = threading.Thread(target=later, args=(name,))
        t.start()
        threads.append(t)
        time.sleep(0.05)  # each asks after the previous one is already waiting
    release.set()
    for t in threads:
        t.join(5)
    assert served == ["first", "second", "third", "fourth"]
