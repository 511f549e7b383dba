"""Per-token limits, checked by the request guard before a body is read: a request rate
(``rate_limit``, e.g. ``"20/second"``, a moving window from ``limits``) and searches in flight
(``searches_in_flight``). Over either, 429 with ``Retry-After``. Both are this server's own
counts (in memory): on PostgreSQL with N servers behind a balancer a token gets up to N times
the rate; the project quotas (service/corpus/documents.py, memories.py) are shared, counted in the
catalog. Off unless configured (the embedded laptop setup); docs/operations.md has a
production profile."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from naturali.errors import TooManyRequests


class RateLimits:
    def __init__(self, rate: str | None, searches_in_flight: int) -> None:
        self._item = parse(rate) if rate else None
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._searches = searches_in_flight
        self._in_flight: Counter[str] = Counter()
        self._lock = threading.Lock()

    def hit(self, key: str) -> None:
        """One request of this token's; TooManyRequests over its rate."""
        if self._item is None or self._limiter.hit(self._item, key):
            return
        reset = self._limiter.get_window_stats(self._item, key).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        raise TooManyRequests(
            f"more than {self._item} requests for this token; retry in {wait} s",
            code="rate_limited",
            retry_after=wait,
        )

    def begin_search(self, key: str) -> None:
        """A search of this token's starts; TooManyRequests over its limit (then it has
        not started: no end_search)."""
        if self._searches <= 0:
            return
        with self._lock:
            if self._in_flight[key] >= self._searches:
                raise TooManyRequests(
                    f"{self._searches} searches of this token are running; retry in 1 s",
                    code="too_many_searches",
                    retry_after=1,
                )
            self._in_flight[key] += 1

    def end_search(self, key: str) -> None:
        if self._searches <= 0:
            return
        with self._lock:
            self._in_flight[key] -= 1
            if not self._in_flight[key]:
                del self._in_flight[key]
