"""A clean stop: SIGTERM during a burst of searches and writes answers what it took (none
with a 5xx), exits 0, and every write it acknowledged is there after a restart; /healthz says
alive, /readyz ready."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx

from server import start, stop


def test_sigterm_during_a_burst_loses_no_acknowledged_write(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start(data, tmp_path)
    headers = {"Authorization": f"Bearer {server.token}"}
    project = f"{server.base_url}/v1/projects/{server.demo_project}"
    deadline = time.monotonic() + 60
    while httpx.get(f"{server.base_url}/readyz").status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert httpx.get(f"{server.base_url}/healthz").json() == {"status": "ok"}
    acknowledged: list[str] = []
    statuses: list[int] = []
    stop_sending = threading.Event()

    def writer(n: int) -> None:
        with httpx.Client(headers=headers, timeout=30) as http:
            for i in range(10_000):
                if stop_sending.is_set():
                    return
                body = {"path": f"/burst/{n}-{i}.md", "content": f"Burst note {n} {i}."}
                try:
                    r = http.post(f"{project}/documents", json=body)
                except httpx.TransportError:
                    return  # the server closed: nothing was acknowledged
                statuses.append(r.status_code)
                if r.status_code in (201, 202):
                    acknowledged.append(r.json()["id"])

    def searcher() -> None:
        with httpx.Client(headers=headers, timeout=30) as http:
            while not stop_sending.is_set():
                try:
                    r = http.post(f"{project}/knowledge/search", json={"query": "refunds"})
                except httpx.TransportError:
                    return
                statuses.append(r.status_code)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    threads += [threading.Thread(target=searcher) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    stop_sending.set()
    for thread in threads:
        thread.join()
    assert acknowledged and statuses
    assert all(s < 500 for s in statuses), sorted(set(statuses))
    restarted = start(data, tmp_path, token=server.token, log_name="server2.log")
    try:
        again = f"{restarted.base_url}/v1/projects/{restarted.demo_project}/documents"
        missing = [
            d for d in acknowledged if httpx.get(f"{again}/{d}", headers=headers).status_code != 200
        ]
        assert missing == []
    finally:
        stop(restarted)
