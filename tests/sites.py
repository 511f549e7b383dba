"""Hostile web sites a test or a bench serves on loopback, to sync from."""

from __future__ import annotations

import http.server
import threading
import time
from typing import Any


class Hostile:
    """A site on loopback with a page that drips a byte every half second (for at most
    ``drip_seconds``) and an endless run of pages, each linking to the next; and a log of what
    was asked."""

    def __init__(self, drip_seconds: float = 40.0) -> None:
        self.asked: list[str] = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                site.asked.append(self.path)
                if self.path.startswith("/drip/") and self.path.endswith(".html"):
                    self._drip()
                elif self.path.startswith("/endless/") and self.path.endswith(".html"):
                    n = int(self.path.rsplit("/", 1)[1].split(".")[0] or 0)
                    body = (
                        f"<html><body><h1>Page {n}</h1><p>Page {n} of a site without end.</p>"
                        f'<a href="{n + 1}.html">next</a></body></html>'
                    ).encode()
                    self._send(body)
                else:
                    self.send_error(404)

            def _drip(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(int(drip_seconds * 2) + 1))
                self.end_headers()
                try:
                    for _ in range(int(drip_seconds * 2)):
                        self.wfile.write(b"<")
                        self.wfile.flush()
                        time.sleep(0.5)
                except OSError:
                    pass  # the client gave up: what this test wants

            def _send(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
