"""Searches run a few at a time (api/search_lanes.py): no more than the lanes at once, and a
search that finds every lane held for too long runs beside them rather than waiting."""

from __future__ import annotations

import os
import threading
import time

import anyio
import pytest

from naturali.api import search_lanes
from naturali.compose import concurrency
from naturali.settings import Settings


def test_no_more_searches_run_at_once_than_there_are_lanes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search_lanes, "OVERFLOW_AFTER", 60.0)  # no overflow in this test
    running, most = 0, 0
    guard = threading.Lock()

    def search() -> None:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with guard:
            running -= 1

    async def six() -> None:
        async with anyio.create_task_group() as tasks:
            for _ in range(6):
                tasks.start_soon(search_lanes.in_lane, 2, search)

    anyio.run(six)
    assert most == 2


def test_a_search_runs_beside_lanes_held_too_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_lanes, "OVERFLOW_AFTER", 0.05)
    release = threading.Event()
    order: list[str] = []

    def slow() -> None:  # holds the only lane until the quick search has answered
        assert release.wait(timeout=30), "the quick search waited for the held lane"
        order.append("slow")

    def quick() -> None:
        order.append("quick")
        release.set()

    async def both() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(search_lanes.in_lane, 1, slow)
            await anyio.sleep(0.01)  # the slow search takes the lane first
            tasks.start_soon(search_lanes.in_lane, 1, quick)

    anyio.run(both)
    assert order == ["quick", "slow"]


def test_each_event_loop_has_lanes_of_its_own() -> None:
    # A limiter belongs to one loop: a second server (or test client) must not share it.
    async def lanes(size: int) -> anyio.CapacityLimiter:
        assert await search_lanes.in_lane(size, lambda: size) == size
        return search_lanes._lanes(size)

    first, second = anyio.run(lanes, 1), anyio.run(lanes, 3)
    assert first is not second
    assert (first.total_tokens, second.total_tokens) == (1, 3)


def test_the_lanes_default_to_one_per_cpu() -> None:
    assert concurrency(Settings()).lanes == len(os.sched_getaffinity(0))
    assert concurrency(Settings(search_threads=3)).lanes == 3
    assert Settings.load(env={"NATURALI_SEARCH_THREADS": "4"}).search_threads == 4
    with pytest.raises(ValueError, match="search_threads"):
        Settings(search_threads=-1)
