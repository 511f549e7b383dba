"""A real ``naturali serve`` process for tests where the process boundary matters."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx


@dataclass
class Server:
    base_url: str
    token: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    demo_project: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(
    data_dir: Path,
    cwd: Path,
    *,
    token: str | None = None,
    env: dict[str, str] | None = None,
    log_name: str = "server.log",
) -> Server:
    """A server on ``data_dir`` with the demo project; ``env`` adds settings (a database
    URL, a cache dir), ``token`` is the owner's (the bootstrap token of a first start).
    A relative ``data_dir`` is read from ``cwd``, as `naturali serve` reads its default."""
    port = free_port()
    token = token or "nk_test_" + os.urandom(16).hex()
    env = {
        **os.environ,
        "NATURALI_BOOTSTRAP_TOKEN": token,
        "NATURALI_DATA_DIR": str(data_dir),
        **(env or {}),
    }
    log = (cwd / log_name).open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "naturali.cli.main", "serve", "--demo", "--port", str(port)],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((cwd / log_name).read_text())
        try:
            if httpx.get(base_url + "/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        process.kill()
        raise RuntimeError("server did not start: " + (cwd / log_name).read_text())
    projects = httpx.get(
        base_url + "/v1/projects", headers={"Authorization": f"Bearer {token}"}
    ).json()["data"]
    demo = next(p["id"] for p in projects if p["name"] == "demo")
    return Server(base_url, token, cwd / data_dir, process, demo)


def stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
