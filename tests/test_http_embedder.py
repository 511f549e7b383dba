"""The OpenAI-compatible HTTP embedder, against a real HTTP server on loopback that serves
the bundled model's vectors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from naturali.embed.factory import build_embedder
from naturali.embed.onnx import OnnxEmbedder
from naturali.settings import Settings


@pytest.fixture
def embeddings_server(embedder: OnnxEmbedder) -> Iterator[str]:
    seen: list[dict[str, object]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"auth": self.headers.get("Authorization"), **body})
            vectors = embedder.embed(body["input"])
            data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            payload = json.dumps({"data": list(reversed(data))}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    assert all(s["auth"] == "Bearer sk-test" and s["model"] == "mini" for s in seen)


def test_http_embedder_selected_by_settings(embeddings_server: str, embedder: OnnxEmbedder) -> None:
    settings = Settings(
        embedder="http",
        embedder_url=embeddings_server,
        embedder_model="mini",
        embedder_api_key="sk-test",
    )
    remote = build_embedder(settings)
    assert remote.model_id == "http:mini" and remote.dimension == 384
    texts = ["refunds take five days", "escalation path", "x"]
    assert np.allclose(remote.embed(texts), embedder.embed(texts), atol=1e-5)


def test_unknown_embedder_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        build_embedder(Settings(embedder="magic"))
    with pytest.raises(ValueError, match="embedder_url"):
        build_embedder(Settings(embedder="http"))
