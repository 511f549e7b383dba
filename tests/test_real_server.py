"""Against a real ``naturali serve``: the demo, the SDK, the CLI, and the README's examples."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import naturali
import naturali_client
from server import Server, start, stop

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("home")
    # Relative, as the default `./.naturali` of `scripts/run` is: nothing may depend on the
    # working directory of the component that reads a path.
    running = start(Path(".naturali"), home)
    yield running
    stop(running)


# root reads every file: without these capabilities it meets a file's permissions as its owner
AS_OWNER = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _cli(server: Server, *args: str, as_owner: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NATURALI_BASE_URL": server.base_url, "NATURALI_TOKEN": server.token}
    env["XDG_CACHE_HOME"] = str(server.data_dir.parent / "xdg-cache")  # sync's memory
    owner = AS_OWNER if as_owner and os.geteuid() == 0 else []
    return subprocess.run(
        [*owner, sys.executable, "-m", "naturali.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_project_answers_the_spec_question(server: Server) -> None:
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        response = client.knowledge.search_knowledge(
            project_id=server.demo_project, query="how long do refunds take", limit=5
        )
    top = response.results[0]
    assert isinstance(top, naturali_client.DocumentKnowledgeResult)
    assert top.source_type == "document" and top.path == "/handbook/support/refunds.md"
    assert top.similarity_score is not None and "five business days" in (top.content or "")
    token_file = server.data_dir / "owner-token"
    assert token_file.read_text().strip() == server.token
    # The start-up hint puts naturali on a new shell's PATH before it uses it.
    hint = (server.data_dir.parent / "server.log").read_text()
    assert f"source {Path(sys.prefix) / 'bin' / 'activate'}\n  export NATURALI_TOKEN=" in hint


def test_sdk_raises_typed_errors(server: Server) -> None:
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        with pytest.raises(naturali.NaturaliAPIError) as caught:
            client.knowledge.search_knowledge(project_id=server.demo_project, query="x", limit=0)
        assert (caught.value.status, caught.value.param) == (400, "limit")
        with pytest.raises(naturali.NaturaliAPIError) as missing:
            client.knowledge.search_knowledge(project_id="proj_doesnotexist00", query="x")
        assert missing.value.status == 404 and missing.value.type == "not_found_error"
    with (
        naturali.Client(base_url=server.base_url, token="nk_bad") as bad,
        pytest.raises(naturali.NaturaliAPIError) as unauthorized,
    ):
        bad.projects.list()
    assert unauthorized.value.status == 401


def test_cli_table_json_and_errors(server: Server) -> None:
    table = _cli(
        server,
        "search-knowledge",
        "--project-id",
        server.demo_project,
        "--query",
        "escalation path",
        "--document-paths",
        "/handbook/support/",
        "--min-similarity",
        "0.5",
    )
    assert table.returncode == 0, table.stderr
    assert "/handbook/support/escalation.md" in table.stdout.splitlines()[0]
    raw = _cli(
        server,
        "search-knowledge",
        "--project-id",
        server.demo_project,
        "--query",
        "deploys",
        "--limit",
        "2",
        "--json",
    )
    assert raw.returncode == 0
    import json

    assert len(json.loads(raw.stdout)["results"]) == 2
    bad = _cli(
        server,
        "search-knowledge",
        "--project-id",
        server.demo_project,
        "--query",
        "x",
        "--limit",
        "101",
    )
    assert bad.returncode != 0 and "limit" in bad.stderr
    none = _cli(server, "search-knowledge", "--project-id", server.demo_project)
    assert none.returncode != 0 and "at least one of query" in none.stderr


def test_cli_sync_mirrors_a_folder_then_has_nothing_to_do(server: Server, tmp_path: Path) -> None:
    from pdfs import text_pdf

    (tmp_path / "sub").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.md").write_text("# A\n\nAardvarks eat ants.")
    (tmp_path / "sub" / "b.txt").write_text("Badgers dig burrows.")
    (tmp_path / "sub" / "c.pdf").write_bytes(text_pdf(["Capybaras swim.", "Page two."]))
    (tmp_path / "skip.bin").write_bytes(b"\x00\x01")
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main")
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="sync-test").id

        def sync(*flags: str) -> subprocess.CompletedProcess[str]:
            args = ("sync", str(tmp_path), "--project", project, "--path", "/zoo/", *flags)
            return _cli(server, *args)

        first = _cli(server, "ingest", str(tmp_path), "--project", project, "--path", "/zoo/")
        assert first.returncode == 0, first.stderr
        assert "3 new, 0 changed, 0 deleted" in first.stdout
        documents = {d.path: d for d in client.documents.list(project_id=project)}
        assert sorted(documents) == ["/zoo/a.md", "/zoo/sub/b.txt", "/zoo/sub/c.pdf"]
        hit = client.knowledge.search_knowledge(project_id=project, query="capybara").results
        assert hit[0].path == "/zoo/sub/c.pdf" and hit[0].page == 1  # type: ignore[union-attr]

        (tmp_path / "a.md").write_text("# A\n\nAardvarks eat termites.")
        (tmp_path / "sub" / "b.txt").unlink()
        plan = sync("--delete", "--dry-run")
        assert plan.returncode == 0, plan.stderr
        assert "update  /zoo/a.md" in plan.stdout and "delete  /zoo/sub/b.txt" in plan.stdout
        assert len(client.documents.list(project_id=project)) == 3  # a dry run changes nothing

        applied = sync("--delete")
        assert applied.returncode == 0, applied.stderr
        assert "0 new, 1 changed, 1 deleted, 1 unchanged" in applied.stdout
        after = {d.path: d for d in client.documents.list(project_id=project)}
        assert sorted(after) == ["/zoo/a.md", "/zoo/sub/c.pdf"]
        assert after["/zoo/a.md"].version == 2 and after["/zoo/sub/c.pdf"].version == 1

        again = sync("--delete")
        assert again.returncode == 0
        assert "nothing to do: 2 files under /zoo/ are unchanged" in again.stdout

        (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
        failing = sync()
        assert failing.returncode == 1 and "/zoo/broken.pdf" in failing.stderr
        for _ in range(2):  # refused before and unchanged: not sent again, not a failure
            again = sync()
            assert again.returncode == 0, again.stderr
            assert "/zoo/broken.pdf: refused before and unchanged since" in again.stderr
        (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 still not really")
        assert sync().returncode == 1  # changed, and refused again: a new failure
        (tmp_path / "broken.pdf").unlink()

        # A link out of the folder is not the folder's: skipped, and said so.
        secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
        secret.write_text("root:x:0:0:root:/root:/bin/bash")
        (tmp_path / "passwd.txt").symlink_to(secret)
        (tmp_path / "inside.md").symlink_to(tmp_path / "a.md")  # within: uploaded
        linked = sync()
        assert linked.returncode == 0, linked.stderr
        assert "passwd.txt: skipped, a link to a file outside" in linked.stderr
        paths = {d.path for d in client.documents.list(project_id=project)}
        assert "/zoo/passwd.txt" not in paths and "/zoo/inside.md" in paths
        allowed = sync("--follow-outside")
        assert allowed.returncode == 0, allowed.stderr
        assert "/zoo/passwd.txt" in {d.path for d in client.documents.list(project_id=project)}


def test_cli_sync_leaves_out_what_it_is_told_and_says_what_it_did(
    server: Server, tmp_path: Path
) -> None:
    import json

    (tmp_path / "docs").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / ".cache").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nOtters hold hands asleep.")
    (tmp_path / "docs" / "draft.md").write_text("# Draft\n\nNot yet.")
    (tmp_path / "build" / "out.txt").write_text("generated")
    (tmp_path / ".cache" / "x.md").write_text("cached")
    (tmp_path / "notes.log.txt").write_text("a log")
    (tmp_path / "empty.md").write_text("")
    (tmp_path / ".naturaliignore").write_text("build/\n*.log.txt\n")
    (tmp_path / "locked.md").write_text("# Locked")
    (tmp_path / "locked.md").chmod(0)  # EACCES: a skipped file, named, and the run goes on
    (tmp_path / "sealed").mkdir()
    (tmp_path / "sealed" / "in.md").write_text("# Sealed")
    (tmp_path / "sealed").chmod(0)
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="sync-rules").id
        args = ("sync", str(tmp_path), "--project", project, "--path", "/kb/")
        done = _cli(server, *args, "--exclude", "docs/draft.md", "--json", as_owner=True)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert sorted(summary["created"]) == ["/kb/docs/guide.md", "/kb/empty.md"]
        skipped = summary["skipped"]
        assert sorted(skipped["excluded"]) == ["build/", "docs/draft.md", "notes.log.txt"]
        assert sorted(skipped["hidden"]) == [".cache/", ".naturaliignore"]
        assert {u["path"]: u["error"] for u in skipped["unreadable"]} == {
            "locked.md": "Permission denied",
            "sealed/": "Permission denied",
        }
        said = _cli(server, "ingest", *args[1:], "--exclude", "docs/draft.md", as_owner=True)
        assert said.returncode == 0, said.stderr
        assert "locked.md: skipped, it cannot be read: Permission denied" in said.stderr
        assert "docs/draft.md: skipped, excluded" in said.stderr
        assert ".cache/: skipped, hidden" in said.stderr
        (tmp_path / "locked.md").chmod(0o644)
        (tmp_path / "sealed").chmod(0o755)
        (tmp_path / "locked.md").unlink()
        (tmp_path / "sealed" / "in.md").unlink()
        warned = {w["path"]: w["warnings"] for w in summary["warnings"]}
        assert warned["/kb/empty.md"][0].startswith("no_text")  # said, not silent
        paths = {d.path for d in client.documents.list(project_id=project)}
        assert paths == {"/kb/docs/guide.md", "/kb/empty.md"}

        (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nOtters float on their backs.")
        lines = _cli(server, *args, "--include-hidden")  # output to a pipe: a line a file
        assert lines.returncode == 0, lines.stderr
        assert "updated /kb/docs/guide.md" in lines.stdout
        assert "created /kb/.cache/x.md" in lines.stdout
        assert "created /kb/docs/draft.md" in lines.stdout


def test_cli_and_sdk_tokens_scoped_limited_listed_revoked(server: Server) -> None:
    import json

    made = _cli(
        server, "tokens", "create", "--name", "ci-reader", "--scope", "read",
        "--project", server.demo_project, "--expires", "30d",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)
    assert token["token"].startswith("nk_") and token["projects"] == [server.demo_project]
    with naturali.Client(base_url=server.base_url, token=token["token"]) as reader:
        assert reader.knowledge.search_knowledge(project_id=server.demo_project, query="refunds")
        with pytest.raises(naturali.NaturaliAPIError) as refused:
            reader.documents.create_text(project_id=server.demo_project, path="/x.md", content="x")
        assert refused.value.code == "insufficient_scope"
    listed = _cli(server, "tokens", "list")
    assert listed.returncode == 0 and "ci-reader" in listed.stdout
    assert token["token"] not in listed.stdout
    revoked = _cli(server, "tokens", "revoke", token["id"])
    assert revoked.returncode == 0, revoked.stderr
    with naturali.Client(base_url=server.base_url, token=token["token"]) as reader:
        with pytest.raises(naturali.NaturaliAPIError) as gone:
            reader.projects.list()
        assert gone.value.status == 401 and gone.value.code == "token_revoked"
    limited = _cli(
        server, "tokens", "create", "--name", "support-agent",
        "--path-prefix", "/handbook/support/", "--memory-store-id", "none",
    )  # fmt: skip
    assert limited.returncode == 0, limited.stderr
    support = json.loads(limited.stdout)
    assert support["path_prefixes"] == ["/handbook/support/"]
    assert support["memory_store_ids"] == []
    with naturali.Client(base_url=server.base_url, token=support["token"]) as agent:
        hits = agent.knowledge.search_knowledge(
            project_id=server.demo_project, query="how do deploys and refunds work", limit=20
        )
        assert hits.results and all(h.path.startswith("/handbook/support/") for h in hits.results)
    assert "paths:/handbook/support/ stores:none" in _cli(server, "tokens", "list").stdout
    with naturali.Client(base_url=server.base_url, token=server.token) as owner:
        sdk = owner.tokens.create(name="sdk-writer", scope="write", expires_in="1h")
        assert sdk.token and sdk.scope == "write"
        assert any(t.name == "sdk-writer" and t.token is None for t in owner.tokens.list())
        owner.tokens.revoke(token_id=sdk.id)


def _readme_blocks(language: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    quickstart = text[text.index("## Quickstart") : text.index("## The API")]
    return re.findall(rf"```{language}\n(.*?)```", quickstart, flags=re.DOTALL)


def test_readme_examples_run(server: Server, tmp_path: Path) -> None:
    """The Quickstart's shell and Python examples, run as written against the server."""
    home = server.data_dir.parent
    for name, target in (("src", ROOT / "src"), (".venv", Path(sys.prefix))):
        if not (home / name).exists():
            (home / name).symlink_to(target)
    port = server.base_url.rsplit(":", 1)[1]
    script = "set -euo pipefail\n" + "\n".join(_readme_blocks("sh")).replace("8600", port)
    # The Python example runs in the same shell, after the shell's: it reads what they export.
    (python_block,) = _readme_blocks("python")
    script += f"\npython3 -c {shlex.quote(python_block)}\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    shell = subprocess.run(
        ["bash", "-c", script], cwd=home, env=env, capture_output=True, text=True, timeout=300
    )
    assert shell.returncode == 0, shell.stdout + shell.stderr
    assert '"error"' not in shell.stdout, shell.stdout
    assert "/handbook/support/refunds.md" in shell.stdout
    assert "/policies/travel.md" in shell.stdout
    assert "400 invalid_value limit" in shell.stdout


def test_cli_knowledge_commands(server: Server) -> None:
    from records_vault import write

    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="records-cli").id
        store = client.memory_stores.create(project_id=project, name="kb").id
    vault = server.data_dir / "stores" / store / "vault"
    write(
        vault,
        "org_acme",
        "Acme builds anvils.",
        kind="page",
        type="organization",
        title="Acme",
        aliases=["Acme Corp"],
    )
    write(
        vault,
        "clm_old",
        "Acme pays in thirty days.",
        lifecycle="superseded",
        superseded_by="clm_new",
    )
    write(vault, "clm_new", "Acme pays in sixty days.", supersedes="clm_old")
    common = ["--project-id", project, "--store-id", store]
    grep = _cli(server, "knowledge", "grep", "thirty days", *common)
    assert grep.returncode == 0, grep.stderr
    assert "clm_new" in grep.stdout and "via clm_old" in grep.stdout
    raw = _cli(server, "knowledge", "grep", "anvils", "--json", *common)
    import json

    assert json.loads(raw.stdout)["hits"][0]["citation"]["id"] == "org_acme"
    found = _cli(server, "knowledge", "lookup", "acme corp", *common)
    assert found.stdout.splitlines()[0] == "found" and "org_acme" in found.stdout
    inventory = json.loads(_cli(server, "knowledge", "records", "--json", *common).stdout)
    assert [r["id"] for r in inventory["records"]] == ["clm_new", "org_acme"]
    one = _cli(server, "knowledge", "record", "clm_new", *common)
    assert one.returncode == 0 and "sixty days" in one.stdout
    bad = _cli(server, "knowledge", "grep", "x", "--limit", "99", *common)
    assert bad.returncode != 0 and "limit" in bad.stderr
    write(vault, "clm_d", "Acme decided on anvils.", type="decision", occurred_at="2026-05-04")
    dated = ["--since", "2026-05-01", "--until", "2026-05-31", "--json", *common]
    in_may = json.loads(_cli(server, "knowledge", "grep", "anvils", *dated).stdout)
    assert [h["id"] for h in in_may["hits"]] == ["clm_d"]
    day = _cli(
        server, "knowledge", "chronicle-day", "--date", "2026-05-04", "--kind", "decision", *common
    )
    assert day.returncode == 0 and "clm_d" in day.stdout
    other = _cli(
        server, "knowledge", "chronicle-since", "--since", "2026-05-01", "--kind", "event", *common
    )
    assert other.returncode == 0 and "clm_d" not in other.stdout


def test_help_shows_every_option_whole() -> None:
    """At 80 columns, as a terminal opens: no option name cut short."""
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-m", "naturali.cli.main", "search-knowledge", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--include-documents / --no-include-documents" in done.stdout
    assert "--memory-store-ids" in done.stdout and "…" not in done.stdout


def test_every_cli_command_is_documented() -> None:
    import typer.main
    from typer._click import Context

    from naturali.cli.main import app

    readme = (ROOT / "README.md").read_text()
    group = typer.main.get_group(app)
    for name, command in group.commands.items():
        # list_commands, not .commands: the knowledge group loads its commands lazily
        sub = command.list_commands(Context(command)) if hasattr(command, "list_commands") else []
        names = [f"{name} {s}" for s in sub] if sub else [name]
        for full in names:
            assert f"naturali {full}" in readme, f"naturali {full} is not in the README"


def test_cli_write_commands(server: Server) -> None:
    import json

    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="writes-cli").id
        store = client.memory_stores.create(project_id=project, name="kb").id
    common = ["--project-id", project, "--store-id", store]
    saved = _cli(
        server,
        "knowledge",
        "save",
        "--request-id",
        "cli-1",
        "--record",
        '{"kind": "claim", "title": "Lunch", "body": "Lunch is at noon."}',
        *common,
    )
    assert saved.returncode == 0, saved.stderr
    rec = json.loads(saved.stdout)["records"][0]
    fixed = _cli(
        server,
        "knowledge",
        "correct",
        rec["id"],
        "--request-id",
        "cli-2",
        "--expected-revision",
        "1",
        "--expected-hash",
        rec["sha256"],
        "--replacement",
        '{"body": "Lunch is at one."}',
        "--reason",
        "moved",
        *common,
    )
    assert fixed.returncode == 0, fixed.stderr
    new_id = json.loads(fixed.stdout)["records"][0]["id"]
    gone = _cli(
        server,
        "knowledge",
        "withdraw",
        new_id,
        "--request-id",
        "cli-3",
        "--reason",
        "cancelled",
        *common,
    )
    assert json.loads(gone.stdout)["records"][0]["lifecycle"] == "withdrawn"
    receipt = json.loads(_cli(server, "knowledge", "mutation", "cli-2", *common).stdout)
    assert receipt["git"]["state"] == "committed"
    revisions = json.loads(_cli(server, "knowledge", "history", rec["id"], *common).stdout)
    assert [r["lifecycle"] for r in revisions["revisions"]] == ["active", "superseded"]
    assert json.loads(_cli(server, "knowledge", "resume", *common).stdout)["gitPending"] == []
    vault = server.data_dir / "stores" / store / "vault"
    log = subprocess.run(
        ["git", f"--git-dir={vault / '.git'}", "log", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert log == ["naturali: cli-3", "naturali: cli-2", "naturali: cli-1"]
    stale = _cli(
        server,
        "knowledge",
        "save",
        "--request-id",
        "cli-4",
        "--id",
        rec["id"],
        "--expected-revision",
        "1",
        "--expected-hash",
        rec["sha256"],
        "--record",
        "{}",
        *common,
    )
    assert stale.returncode != 0 and "no active record" in stale.stderr


def test_mcp_through_the_server(server: Server, tmp_path: Path) -> None:
    import json

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="mcp-remote").id
        store = client.memory_stores.create(project_id=project, name="kb").id

    async def run() -> list[Any]:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "naturali.cli.main",
                "mcp",
                "--project",
                project,
                "--store",
                store,
                "--base-url",
                server.base_url,
            ],
            env={**os.environ, "NATURALI_TOKEN": server.token},
        )
        with (tmp_path / "stderr").open("w") as errlog:
            return await calls(params, errlog)

    async def calls(params: StdioServerParameters, errlog: Any) -> list[Any]:
        async with (
            stdio_client(params, errlog=errlog) as (r, w),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            results = []
            for name, args in (
                (
                    "knowledge_save",
                    {
                        "requestId": "r1",
                        "record": {
                            "kind": "claim",
                            "title": "Otters",
                            "body": "Otters hold hands.",
                        },
                    },
                ),
                ("knowledge_grep", {"query": "otters"}),
                ("knowledge_search", {"query": "animals holding hands"}),
                ("knowledge_grep", {"query": "x", "offset": 900}),
            ):
                result = await session.call_tool(name, args)
                text = result.content[0].text  # type: ignore[union-attr]
                results.append(("error", text) if result.is_error else json.loads(text))
            return results

    saved, grep, search, bad = anyio.run(run)
    assert saved["git"]["state"] == "committed"
    assert [h["id"] for h in grep["hits"]] == [saved["records"][0]["id"]]
    assert search["results"][0]["source_type"] == "memory"
    assert bad == (
        "error",
        "Error executing tool knowledge_grep: offset must be at most 500, got 900"
        " (parameter: offset)",
    )
    assert (tmp_path / "stderr").read_text() == ""  # quiet: no line per HTTP call


def test_the_server_hands_the_gil_over_within_a_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``naturali serve`` owns its process and shortens the GIL switch interval for it (threads
    coming back from onnxruntime, numpy and SQLite otherwise wait up to 5 ms for the GIL)."""
    import uvicorn

    from naturali.cli.serve import run_server
    from naturali.compose import GIL_SWITCH_INTERVAL

    seen: list[float] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: seen.append(sys.getswitchinterval()))
    before = sys.getswitchinterval()
    try:
        run_server(object(), "127.0.0.1", 0)  # type: ignore[arg-type]
    finally:
        sys.setswitchinterval(before)
    assert seen == [GIL_SWITCH_INTERVAL] and before > GIL_SWITCH_INTERVAL


_FRAGMENTED_HEAP = """
import json, numpy as np
from naturali.compose import _malloc_trim
def anon():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon"))
big = np.ones(16 << 20, np.uint8)
del big  # glibc raises its mmap threshold past it: the arrays below come from the heap
kept, dropped = [], []
for i in range(3000):  # as indexes loaded and dropped in turn leave it
    (kept if i % 10 == 0 else dropped).append(np.ones(100_000, np.uint8))
dropped.clear()
before = anon()
_malloc_trim()(0)
print(json.dumps([before, anon()]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_the_server_gives_memory_its_dropped_indexes_freed_back_to_the_system() -> None:
    """Freed between arrays still held, the heap's pages stay the process's until trimmed
    (``compose.own_process`` trims every few seconds): here 270 MB of them."""
    out = subprocess.run(
        [sys.executable, "-c", _FRAGMENTED_HEAP], capture_output=True, check=True, timeout=120
    )
    before, after = json.loads(out.stdout)  # KiB
    assert before - after > 150 * 1024


def test_a_restarted_server_restores_its_saved_indexes_as_it_starts(tmp_path: Path) -> None:
    """``naturali serve`` saves its indexes when stopped and loads them again as it starts,
    before any search (so the first search does not wait to read them)."""
    env = {"NATURALI_INDEX_SNAPSHOT_ROWS": "1"}
    first = start(tmp_path / ".naturali", tmp_path, env=env, log_name="first.log")
    headers = {"Authorization": f"Bearer {first.token}"}
    search = f"{first.base_url}/v1/projects/{first.demo_project}/knowledge/search"
    assert httpx.post(search, json={"query": "refunds"}, headers=headers).status_code == 200
    stop(first)
    again = start(
        tmp_path / ".naturali", tmp_path, token=first.token, env=env, log_name="again.log"
    )
    try:
        deadline = time.monotonic() + 60
        log = ""
        while "restored the search indexes" not in log and time.monotonic() < deadline:
            time.sleep(0.2)
            log = (tmp_path / "again.log").read_text()
        assert "restored the search indexes of 1 project(s)" in log
    finally:
        stop(again)


def test_sdk_reads_the_project_at_a_glance(server: Server) -> None:
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="glance-sdk").id
        paths = ["/top.md"] + [f"/f{i:03d}/doc.md" for i in range(105)]  # two pages of folders
        for path in paths:
            client.documents.create_text(project_id=project, path=path, content=f"# {path}")
        tree = client.documents.folders(project_id=project)
        assert tree["documents_here"] == 1 and tree["next_cursor"] is None
        assert [f["path"] for f in tree["data"]] == [f"/f{i:03d}/" for i in range(105)]
        assert len(client.documents.list(project_id=project)) == 106  # every page
        overview = client.projects.overview(project_id=project)
        assert overview["documents"] == 106 and overview["ingestion"]["queued"] == 0
        assert client.projects.ingest_jobs(project_id=project) == []


def test_cli_documents_list_shows_each_documents_warnings(server: Server, tmp_path: Path) -> None:
    from pdfs import scanned_copy, text_pdf

    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned_copy(text_pdf(["Badges are renewed at the front desk."])))
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="listed").id
        client.documents.create_text(project_id=project, path="/empty.md", content="")
        queued = client.documents.upload(project_id=project, file=scan, path="/scan.pdf")
        assert queued.status == "processing" and queued.pages_total == 1
        while client.documents.get(project_id=project, document_id=queued.id).status != "ready":
            time.sleep(0.2)
    listed = _cli(server, "documents", "list", "--project-id", project)
    assert listed.returncode == 0, listed.stderr
    assert "/empty.md  ready  v1, 0 passages" in listed.stdout
    assert "warning: no_text: the file holds no text" in listed.stdout
    assert "/scan.pdf  ready  v1, 1 passages, 1 pages (1 read by OCR)" in listed.stdout
    assert "warning: ocr: page(s) 1 had no text layer and were read by OCR" in listed.stdout


def test_the_langchain_and_llamaindex_retrievers_against_the_server(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each framework's own calls — invoke/ainvoke, retrieve/aretrieve — through naturali's
    retrievers, with the hit's provenance in the metadata; base_url and token from the
    environment when not given."""
    import asyncio

    from naturali_client.langchain import NaturaliRetriever as LangChainRetriever
    from naturali_client.llamaindex import NaturaliRetriever as LlamaIndexRetriever

    monkeypatch.setenv("NATURALI_BASE_URL", server.base_url)
    monkeypatch.setenv("NATURALI_TOKEN", server.token)
    question = "how long do refunds take?"
    chain = LangChainRetriever(project_id=server.demo_project, limit=3)
    documents = chain.invoke(question)
    assert len(documents) == 3 and "refund" in documents[0].page_content.lower()
    cited = documents[0].metadata
    assert cited["source_type"] == "document" and cited["path"].startswith("/handbook/")
    assert {"chunk_id", "document_id", "score", "similarity_score"} <= set(cited)
    assert [d.page_content for d in asyncio.run(chain.ainvoke(question))] == [
        d.page_content for d in documents
    ]
    only = LangChainRetriever(project_id=server.demo_project, search={"document_paths": ["/x/"]})
    assert only.invoke(question) == []  # every search parameter reaches the search
    index = LlamaIndexRetriever(server.demo_project, base_url=server.base_url, token=server.token)
    nodes = index.retrieve(question)
    assert nodes[0].node.get_content() == documents[0].page_content
    assert nodes[0].score == cited["score"] and nodes[0].node.node_id == cited["chunk_id"]
    again = asyncio.run(index.aretrieve(question))
    assert [n.node.node_id for n in again] == [n.node.node_id for n in nodes]


def test_cli_says_what_placed_a_reranked_hit(server: Server) -> None:
    """With --rerank, a hit's why line carries the cross-encoder's score that placed it (the
    fused scores, shown too, no longer order the hits)."""
    done = _cli(
        server, "search-knowledge", "--project-id", server.demo_project,
        "--query", "how long do refunds take", "--rerank", "--explain", "--limit", "3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    whys = [line for line in done.stdout.splitlines() if line.strip().startswith("why:")]
    assert len(whys) == 3 and all("rerank " in why and "(orders these)" in why for why in whys)


def test_sdk_replaces_a_document_from_a_file_or_text_with_its_fields(
    server: Server, tmp_path: Path
) -> None:
    with naturali.Client(base_url=server.base_url, token=server.token) as client:
        project = client.projects.create(name="replace-sdk").id
        made = client.documents.create_text(project_id=project, path="/a.md", content="One.")
        text = client.documents.replace(
            project_id=project, document_id=made.id, content="Two.", title="Second", tags={"k": "v"}
        )
        assert (text.version, text.title, text.tags) == (2, "Second", {"k": "v"})
        file = tmp_path / "third.md"
        file.write_text("Three.")
        moved = client.documents.replace(
            project_id=project, document_id=made.id, file=file, path="/b.md", metadata={"n": 3}
        )
        assert (moved.version, moved.path, moved.metadata) == (3, "/b.md", {"n": 3})
        assert moved.title == "Second"  # omitted: kept
        with pytest.raises(ValueError):
            client.documents.replace(project_id=project, document_id=made.id)
