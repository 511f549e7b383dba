"""What an anonymous caller, a bad byte or a careless client can break (issue 10): each point
through the public interface, in process or against a real ``naturali serve``."""

from __future__ import annotations

import select
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import Api, StoreVault, assert_error, make_api
from naturali.api.app import create_app
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.settings import Settings
from pdfs import BOMB_BYTES, pdf_bomb, text_pdf
from server import Server, start


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("hostile")
    running = start(root / "data", root)
    yield running
    running.process.terminate()
    running.process.wait(timeout=30)


def _raw(server: Server, head: str, chunks: Iterator[bytes]) -> tuple[int, int]:
    """Send a request by hand, chunk by chunk, until the server answers; (status, bytes sent).
    The answer is looked for before each chunk, so it is read before the server closes."""
    port = int(server.base_url.rsplit(":", 1)[1])
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode())
        for chunk in chunks:
            readable, _, _ = select.select([sock], [], [], 0.01 if sent else 2.0)
            if readable:
                return _status(sock), sent
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        return _status(sock), sent


def _status(sock: socket.socket) -> int:
    try:
        answer = sock.recv(4096)
    except ConnectionResetError:
        return -1  # reset before an answer could be read
    return int(answer.split(b" ", 2)[1]) if answer else -1


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    yield b'{"query": "' + b"a" * (size - 11)
    for _ in range(total // size):
        yield b"a" * size


# 1 ------------------------------------------------------------------------------------------
def test_an_anonymous_chunked_body_is_refused_before_it_is_read(server: Server) -> None:
    head = (
        f"POST /v1/projects/{server.demo_project}/knowledge/search HTTP/1.1\r\n"
        "Host: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    status, sent = _raw(server, head, _chunks(256 * 1024 * 1024))  # up to 256 MiB
    assert status == 401
    assert sent < 64 * 1024 * 1024  # answered long before the body could end


def test_an_oversized_chunked_json_body_is_413_while_streaming(server: Server) -> None:
    head = (
        f"POST /v1/projects/{server.demo_project}/knowledge/search HTTP/1.1\r\n"
        f"Host: x\r\nAuthorization: Bearer {server.token}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    status, sent = _raw(server, head, _chunks(256 * 1024 * 1024))
    assert status == 413
    assert sent < 64 * 1024 * 1024


def test_a_declared_oversized_body_is_413_unread(api: Api) -> None:
    project = api.project()
    r = api.post(
        f"/v1/projects/{project}/knowledge/search",
        content=b"{" + b" " * (2 * 1024 * 1024) + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert_error(r, 413, "body_too_large")


# 2 ------------------------------------------------------------------------------------------
def test_a_lone_surrogate_is_400_and_nothing_is_stored(api: Api) -> None:
    vault = StoreVault(api)
    store_url = f"/v1/projects/{vault.project}/memory_stores/{vault.store}"
    before = api.get(store_url).json()
    patched = api.patch(
        store_url,
        content=b'{"tags": {"k": "v\\ud800"}}',
        headers={"Content-Type": "application/json"},
    )
    assert assert_error(patched, 400, "invalid_text")["param"] == "tags.k"
    assert api.get(store_url).json() == before
    assert api.get(f"/v1/projects/{vault.project}/memory_stores").status_code == 200
    saved = api.post(
        f"{vault.base}/save",
        content=b'{"requestId": "s1", "record": {"kind": "claim", "title": "t\\udc00"}}',
        headers={"Content-Type": "application/json"},
    )
    assert assert_error(saved, 400, "invalid_text")["param"] == "record.title"
    raw = api.post(
        f"{vault.base}/save",
        content=b'{"requestId": "s2", "record": {"kind": "claim", "title": "t\xed\xa0\x80"}}',
        headers={"Content-Type": "application/json"},
    )
    assert_error(raw, 400, "invalid_text")
    assert list(vault.path.glob("*.md")) == []
    grep = api.post(f"{vault.base}/grep", json={"query": "t"})
    assert grep.status_code == 200 and grep.json()["hits"] == []
    # A paired surrogate escape is an ordinary character.
    ok = api.post(
        f"{vault.base}/save",
        content=b'{"requestId": "s3", "record": {"kind": "claim", "title": "\\ud83d\\ude00"}}',
        headers={"Content-Type": "application/json"},
    )
    assert ok.status_code == 200, ok.text


def test_a_file_spelling_a_lone_surrogate_is_reported_not_served(api: Api) -> None:
    vault = StoreVault(api)
    (vault.path / "bad.md").write_text(
        "---\nformat: knowledge-record-v1\nid: clm_bad\nrevision: 1\nkind: claim\n"
        'title: "t\\udc00"\nlifecycle: active\n---\npelican\n',
        encoding="utf-8",
    )
    vault.write("clm_ok", "pelican")
    grep = api.post(f"{vault.base}/grep", json={"query": "pelican"})
    assert grep.status_code == 200, grep.text
    assert [h["id"] for h in grep.json()["hits"]] == ["clm_ok"]
    assert [i["path"] for i in grep.json()["coverage"]["issues"]] == ["bad.md"]
    assert api.search(vault.project, query="pelican").status_code == 200
    assert api.get(f"{vault.base}/records/clm_bad").status_code == 404


@pytest.mark.parametrize(
    ("field", "value"),
    [("title", "a\x00b"), ("title", "a\x85b"), ("title", "a\u2028b"), ("body", "a\x07b")],
)
def test_control_characters_in_records_are_400(api: Api, field: str, value: str) -> None:
    vault = StoreVault(api)
    record = {"kind": "claim", "title": "t", field: value}
    r = api.post(f"{vault.base}/save", json={"requestId": "c1", "record": record})
    assert assert_error(r, 400, "invalid_text")["param"] == f"record.{field}"
    assert list(vault.path.glob("*.md")) == []


def test_memory_titles_with_line_separators_are_400(api: Api) -> None:
    vault = StoreVault(api)
    url = f"/v1/projects/{vault.project}/memory_stores/{vault.store}/memories"
    assert_error(api.post(url, json={"content": "x", "title": "a\x85b"}), 400)
    assert_error(api.post(url, json={"content": "x\x00"}), 400)


# 3 ------------------------------------------------------------------------------------------
def test_two_owners_removing_each_other_leave_one(api: Api) -> None:
    for _ in range(15):
        project = api.project()
        other_id, other_token = api.user("co-owner")
        r = api.put(f"/v1/projects/{project}/members/{other_id}", json={"role": "owner"})
        assert r.status_code == 200
        me = api.get(f"/v1/projects/{project}/members").json()["data"]
        my_id = next(m["user_id"] for m in me if m["user_id"] != other_id)
        barrier = threading.Barrier(2)
        statuses: list[int] = []
        threads = [
            threading.Thread(target=_remove, args=(api, barrier, statuses, project, *pair))
            for pair in ((other_id, api.token), (my_id, other_token))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # One wins; the other is refused: as the last owner (409), or as a non-member (404)
        # when it came second.
        assert sorted(statuses)[0] == 204 and sorted(statuses)[1] in (404, 409), statuses
        owners = [m for m in api.naturali.storage.list_members(project) if m.role == "owner"]
        assert len(owners) == 1


def _remove(
    api: Api,
    barrier: threading.Barrier,
    statuses: list[int],
    project: str,
    target: str,
    token: str,
) -> None:
    barrier.wait()
    statuses.append(api.delete(f"/v1/projects/{project}/members/{target}", token).status_code)


# 4 ------------------------------------------------------------------------------------------
def test_a_pdf_bomb_is_a_clear_400(api: Api) -> None:
    """A content stream that inflates past what a worker may hold kills that worker, not the
    server; the next PDF is read by a new one."""
    project = api.project()
    bomb = pdf_bomb(BOMB_BYTES)
    assert len(bomb) < 30_000_000  # under max_upload_bytes
    r = api.upload(project, "/bomb.pdf", bomb, "bomb.pdf")
    assert assert_error(r, 400, "pdf_limit_reached")["param"] == "file"
    assert api.get(f"/v1/projects/{project}/documents").json()["data"] == []
    fine = api.upload(project, "/fine.pdf", text_pdf(["Refunds take five days."]), "fine.pdf")
    assert fine.status_code == 201, fine.text


def test_a_stream_that_inflates_within_bounds_is_read_as_what_it_is(api: Api) -> None:
    """200 MB of drawing operators and no text: read within the worker's bounds, its page
    rendered within them too (to tell a blank page from a scan: it draws nothing, so it is
    blank and never waits for OCR), stored with its warning."""
    project = api.project()
    r = api.upload(project, "/drawn.pdf", pdf_bomb(200_000_000), "drawn.pdf")
    assert r.status_code == 201, r.text
    assert r.json()["reading"]["empty_pages"] == [1]
    document = api.ready(project, r.json()["id"])
    assert document["status"] == "ready", document
    assert document["warnings"][0].startswith("no_text_layer")


def test_a_worker_that_runs_out_of_time_is_a_clear_400(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from naturali.ingest import limits

    # No time at all: a worker kept warm reads a one-page PDF within a millisecond.
    monkeypatch.setattr(limits, "wall_seconds", lambda size: 0.0)
    project = api.project()
    r = api.upload(project, "/a.pdf", text_pdf(["Some text."]), "a.pdf")
    assert_error(r, 400, "pdf_limit_reached")
    r = api.upload(project, "/a.md", b"# Some text", "a.md")
    assert_error(r, 400, "file_limit_reached")


# 5 ------------------------------------------------------------------------------------------
def test_record_writes_are_bounded(api: Api) -> None:
    vault = StoreVault(api)
    big = {"kind": "claim", "title": "t", "body": "word " * 20_001}
    r = api.post(f"{vault.base}/save", json={"requestId": "b1", "record": big})
    assert assert_error(r, 400, "too_long")["param"] == "record.body"
    for depth in (40, 900, 3000):
        nested = "[" * depth + "1" + "]" * depth
        body = f'{{"requestId": "d{depth}", "record": {{"kind": "claim", "x": {nested}}}}}'

        r = api.post(
            f"{vault.base}/save", content=body, headers={"Content-Type": "application/json"}
        )
        assert_error(r, 400)
    assert list(vault.path.glob("*.md")) == []


def test_a_write_is_indexed_without_a_search(api: Api) -> None:
    vault = StoreVault(api)
    r = api.post(
        f"{vault.base}/save",
        json={"requestId": "w1", "record": {"kind": "claim", "title": "t", "body": "pelican"}},
    )
    record_id = r.json()["records"][0]["id"]
    assert api.naturali.indexer.idle(timeout=60)  # indexed in the background, no search asked
    assert record_id in api.naturali.storage.memory_hashes(vault.store)


def test_a_search_indexes_hand_edits_within_its_budget(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    apis = make_api(tmp_path, embedder, reconcile_budget_seconds=0.0)
    api = next(apis)
    vault = StoreVault(api)
    for i in range(3):
        vault.write(f"clm_{i}", f"pelican number {i}")
    counts = []
    for _ in range(3):
        api.search(vault.project, query="pelican")
        counts.append(len(api.naturali.storage.memory_hashes(vault.store)))
    assert counts == [1, 2, 3]  # one record per search at a zero budget, never none
    next(apis, None)


# 7 ------------------------------------------------------------------------------------------
def test_a_refused_store_leaves_no_folder(api: Api) -> None:
    project = api.project()
    url = f"/v1/projects/{project}/memory_stores"
    assert api.post(url, json={"name": "kb"}).status_code == 201
    stores = api.naturali.settings.data_dir / "stores"
    before = sorted(p.name for p in stores.iterdir())
    assert_error(api.post(url, json={"name": "kb"}), 409, "name_taken")
    assert_error(api.post(url, json={"name": "bad\x00"}), 400)
    assert sorted(p.name for p in stores.iterdir()) == before


def test_the_data_dir_is_the_owners_alone(api: Api) -> None:
    vault = StoreVault(api)
    vault.api.post(
        f"{vault.base}/save", json={"requestId": "p1", "record": {"kind": "claim", "title": "t"}}
    )
    api.doc(vault.project, "/a.md", "Some text.")
    data_dir = api.naturali.settings.data_dir
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    for path in data_dir.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode & 0o077 == 0, (path, oct(mode))


# 8 ------------------------------------------------------------------------------------------
def test_405_names_the_allowed_methods(api: Api) -> None:
    r = api.http.put("/v1/projects", headers=api.headers())
    assert_error(r, 405, "method_not_allowed")
    assert r.headers["Allow"] == "GET, POST"


def test_the_access_log_has_no_query_strings(server: Server) -> None:
    url = f"{server.base_url}/v1/projects/{server.demo_project}/documents"
    headers = {"Authorization": f"Bearer {server.token}"}
    r = httpx.get(url, params={"path_prefix": "/secret-filter-x/"}, headers=headers)
    assert r.status_code == 200
    line = f"GET /v1/projects/{server.demo_project}/documents 200"
    log = ""
    for _ in range(100):  # the line is written just after the answer is sent
        log = (server.data_dir.parent / "server.log").read_text()
        if line in log:
            break
        time.sleep(0.05)
    assert line in log
    assert "secret-filter-x" not in log


def test_openapi_states_the_rules_the_server_enforces(api: Api) -> None:
    schema = api.http.get("/openapi.json").json()
    params = schema["paths"]["/v1/projects/{project_id}/documents"]["get"]["parameters"]
    prefix = next(p for p in params if p["name"] == "path_prefix")
    assert prefix["schema"]["anyOf"][0]["minLength"] == 1
    project = schema["components"]["schemas"]["ProjectCreate"]["properties"]["name"]
    assert "pattern" in project
    project_id = api.project()
    assert_error(api.get(f"/v1/projects/{project_id}/documents?path_prefix="), 400)
    # JSON Schema's "integer" admits 2.0: so does the server; 2.5 stays an error.
    assert api.search(project_id, query="x", limit=2.0).status_code == 200
    assert_error(api.search(project_id, query="x", limit=2.5), 400)


def _http_on(sock: socket.socket, method: str, path: str, token: str, body: bytes) -> bytes:
    """One keep-alive request on ``sock``; the raw answer (b"" when the server closed)."""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
        try:
            part = sock.recv(65536)
        except ConnectionResetError:
            return b""
        if not part:
            return b""
        answer += part
    return answer


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def test_an_unexpected_error_is_a_500_and_the_connection_stays_open(
    tmp_path: Path, embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the 500 was answered and the exception re-raised to uvicorn, which closed the
    connection: the client's next request on it, innocent of the failure, was reset."""
    import uvicorn  # Imported here: only this test runs a server inside the test process

    naturali = build_services(Settings(data_dir=tmp_path / "data"), embedder=embedder)
    token = naturali.bootstrap()
    assert token
    project, _ = naturali.projects.create(naturali.auth.authenticate(token), "p")

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(naturali.search, "search", broken)
    config = uvicorn.Config(create_app(naturali), host="127.0.0.1", port=0, log_level="critical")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            search = f"/v1/projects/{project.id}/knowledge/search"
            failed = _http_on(sock, "POST", search, token, b'{"query": "refunds"}')
            assert failed.startswith(b"HTTP/1.1 500"), failed
            assert b'"code":"internal_error"' in failed.replace(b" ", b"")
            listed = _http_on(sock, "GET", "/v1/projects", token, b"")
            assert listed.startswith(b"HTTP/1.1 200"), listed  # the same connection answers
    finally:
        server.should_exit = True
        thread.join(30)
        naturali.close()


def test_every_answer_carries_the_browser_safety_headers(api: Api) -> None:
    for url in ("/ui/", "/ui/app.js", "/v1/projects", "/v1/nope", "/openapi.json"):
        r = api.get(url)
        assert r.headers["x-content-type-options"] == "nosniff", url
        assert r.headers["x-frame-options"] == "DENY", url
        assert r.headers["referrer-policy"] == "no-referrer", url
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp, url
    ui = api.get("/ui/").headers["content-security-policy"]
    assert "script-src 'self'" in ui and "default-src 'none'" in ui
