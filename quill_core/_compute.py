"""One heavy model computation at a time per process.

The app serves every browser session from one process on a few cores. Torch (the LM, MiniLM) and the e5 engine
each spread one call over every core, so two calls at once only fight over them (four concurrent suggestions took
5.3x one suggestion's time, ``bench/concurrency.py``). Every such call takes :data:`COMPUTE` first: requests
queue and each runs at full speed. Long jobs (indexing thousands of quotes) take it per small batch, so a request
never waits for more than one batch.
"""

from __future__ import annotations

import threading

COMPUTE = threading.RLock()
"""Held for the duration of one model call (re-entrant: a call may make another)."""
BATCH = 64
"""Texts embedded per hold of :data:`COMPUTE`."""
