"""The threads that embed search queries while their searches go on, and the hand-over that
starts a query's embedding at once.

A search submits its query here and goes on with Python work of its own (the event loop
parses and validates the request, the lexical leg scores), holding the GIL. The pool's thread,
woken, then waits for the GIL until the interpreter's switch interval has passed (1 ms in the
server): measured in `bench/search_latency.py`'s server, the query's tokenizer started 1.35 ms
after the search had submitted it, and everything after the embedding waited as long. So a
submitter that has no other embedding in flight waits (the GIL released) until the pool's
thread has begun, at most ``HANDOFF_WAIT``: the query is tokenized and its model runs, with the
GIL released, while the submitter goes on. With other embeddings in flight the cores are busy
anyway and the submitter does not wait; nor does the event loop while it has other searches
in progress (``hand_over``), which it would hold up meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

HANDOFF_WAIT = 0.001  # seconds a submitter waits, at most, for the pool's thread to begin


class EmbeddingPool:
    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="naturali-embed")
        self._in_flight = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], T], *, hand_over: bool = True) -> Future[T]:
        """``fn()`` on the pool; returns once the pool's thread has begun it (if
        ``hand_over`` and nothing else is in flight) or at once."""
        begun = threading.Event()

        def job() -> T:
            begun.set()
            try:
                return fn()
            finally:
                with self._lock:
                    self._in_flight -= 1

        with self._lock:
            self._in_flight += 1
            alone = self._in_flight == 1
        future = self._pool.submit(job)
        if alone and hand_over:
            begun.wait(HANDOFF_WAIT)
        return future
