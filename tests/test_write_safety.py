"""Crash injection between each step of a write, and concurrent writers in several
processes: nothing torn, nothing lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import open_store
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.service.container import Services
from naturali.service.memory.record_requests import CorrectRequest, GrepRequest, SaveRequest
from naturali.settings import Settings

CRASH = textwrap.dedent(
    """
    import os, signal, sys
    from naturali.compose import build_services
    from naturali.service.memory import write_engine as m
    from naturali.service.memory.record_requests import CorrectRequest
    from naturali.settings import Settings

    data_dir, project_id, store_id, record_id, revision, sha, step = sys.argv[1:]
    die = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    if step == "before_writes":
        m.atomic_write = die
    elif step == "between_writes":
        real, calls = m.atomic_write, []
        def second_dies(path, data):
            calls.append(path)
            if len(calls) == 2:
                die()
            real(path, data)
        m.atomic_write = second_dies
    elif step == "before_receipt":
        from naturali.storage.sqlite.state import SqliteState
        from naturali.storage.postgres.state import PostgresStoreState
        SqliteState.journal_record = die
        PostgresStoreState.journal_record = die
    elif step == "mid_write":  # the temp file is written and fsynced, not yet renamed
        import naturali.vault.files as files
        files.os.replace = die
    elif step == "before_git":
        m.WriteEngine._commit = die
    naturali = build_services(Settings.load({"data_dir": data_dir}))
    owner = naturali.storage.oldest_user()
    naturali.mutations.correct(owner, project_id, store_id, CorrectRequest(
        requestId="fix-1", id=record_id, expectedRevision=int(revision), expectedHash=sha,
        replacement={"title": "Refund time", "body": "Refunds take ten days."},
        reason="policy changed"))
    """
)


def _env(backend: dict[str, str]) -> dict[str, str]:
    """The child processes' environment: the same backend as the test's."""
    url = backend.get("database_url")
    return {**os.environ, **({"NATURALI_DATABASE_URL": url} if url else {})}


def _setup(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, str]
) -> tuple[Services, object, str, str, dict]:
    naturali = build_services(Settings(data_dir=tmp_path, **backend), embedder=embedder)
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    project, _ = naturali.projects.create(owner, "p")
    store = naturali.memories.create_store(owner, project.id, "kb", None)
    receipt = naturali.mutations.save(
        owner,
        project.id,
        store.id,
        SaveRequest(
            requestId="make",
            record={"kind": "claim", "title": "Refund time", "body": "Refunds take five days."},
        ),
    )
    return naturali, owner, project.id, store.id, receipt.wire()["records"][0]


@pytest.mark.parametrize(
    "step", ["before_writes", "mid_write", "between_writes", "before_receipt", "before_git"]
)
def test_a_crash_at_any_step_reopens_consistent(
    tmp_path: Path, embedder: OnnxEmbedder, step: str, backend: dict[str, str]
) -> None:
    naturali, owner, project_id, store_id, record = _setup(tmp_path, embedder, backend)
    naturali.close()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CRASH,
            str(tmp_path),
            project_id,
            store_id,
            record["id"],
            str(record["revision"]),
            record["sha256"],
            step,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(backend),
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr

    reopened = build_services(Settings(data_dir=tmp_path, **backend), embedder=embedder)
    opened = open_store(reopened, store_id)
    view = opened.view()
    assert view.scan.issues == []  # no torn or half-written file
    active = {e.id: e for e in view.entries.values() if e.lifecycle == "active"}
    bodies = sorted(e.scanned.record.body.strip() for e in active.values())
    assert bodies in (
        ["Refunds take five days."],
        ["Refunds take ten days."],
        ["Refunds take five days.", "Refunds take ten days."],
    )
    # The next write (or resume) rolls the journal forward and commits.
    result = reopened.mutations.resume(owner, project_id, store_id).wire()  # type: ignore[arg-type]
    assert result["gitPending"] == []
    receipt = reopened.mutations.mutation(owner, project_id, store_id, "fix-1").wire()  # type: ignore[arg-type]
    assert receipt["git"]["state"] == "committed"
    new_id = receipt["records"][0]["id"]
    hits = reopened.records.grep(owner, project_id, store_id, GrepRequest(query="five days")).wire()  # type: ignore[arg-type]
    assert [(h["id"], h["via"]["id"]) for h in hits["hits"]] == [(new_id, record["id"])]
    again = reopened.mutations.correct(
        owner,
        project_id,
        store_id,
        CorrectRequest(  # type: ignore[arg-type]
            requestId="fix-1",
            id=record["id"],
            expectedRevision=record["revision"],
            expectedHash=record["sha256"],
            reason="policy changed",
            replacement={"title": "Refund time", "body": "Refunds take ten days."},
        ),
    ).wire()
    assert again["records"] == receipt["records"]  # the retried request is the same mutation
    # Recovery removed the temp files of the interrupted write and committed records only.
    vault = tmp_path / "stores" / store_id / "vault"
    assert [p.name for p in vault.rglob("*") if ".git" not in p.parts and p.suffix != ".md"] == []
    tracked = subprocess.run(
        ["git", f"--git-dir={vault / '.git'}", "ls-files"], capture_output=True, text=True
    ).stdout.split()
    assert tracked and all(name.endswith(".md") for name in tracked), tracked
    reopened.close()


WRITER = textwrap.dedent(
    """
    import sys
    from naturali.errors import Conflict
    from naturali.compose import build_services
    from naturali.service.memory.record_requests import SaveRequest
    from naturali.settings import Settings

    data_dir, project_id, store_id, counter_id, worker, count = sys.argv[1:]
    naturali = build_services(Settings.load({"data_dir": data_dir}))
    owner = naturali.storage.oldest_user()
    wins = 0
    for i in range(int(count)):
        naturali.mutations.save(owner, project_id, store_id, SaveRequest(
            requestId=f"w{worker}-{i}", id=f"clm_w{worker}_{i}",
            record={"kind": "claim", "title": f"note {worker} {i}"}))
        while True:  # read, then write fenced by what was read; retry on conflict
            with naturali.stores.opened(store_id) as opened:
                entry = opened.view().entries[counter_id]
            value = int(entry.scanned.record.body.strip())
            try:
                naturali.mutations.save(owner, project_id, store_id, SaveRequest(
                    requestId=f"c{worker}-{i}", id=counter_id,
                    expectedRevision=entry.scanned.record.revision,
                    expectedHash=entry.scanned.sha256, record={"body": str(value + 1)}))
                wins += 1
                break
            except Conflict:
                continue
    print(wins)
    """
)


def test_concurrent_writers_lose_nothing(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, str]
) -> None:
    naturali = build_services(Settings(data_dir=tmp_path, **backend), embedder=embedder)
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    assert owner
    project, _ = naturali.projects.create(owner, "p")
    store = naturali.memories.create_store(owner, project.id, "kb", None)
    counter = (
        naturali.mutations.save(
            owner,
            project.id,
            store.id,
            SaveRequest(
                requestId="counter",
                id="clm_counter",
                record={"kind": "claim", "title": "counter", "body": "0"},
            ),
        )
        .records[0]
        .id
    )
    naturali.close()
    workers, count = 4, 100
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(tmp_path),
                project.id,
                store.id,
                counter,
                str(w),
                str(count),
            ],
            stdout=subprocess.PIPE,
            env=_env(backend),
            text=True,
        )
        for w in range(workers)
    ]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(int(o.strip()) for o in outputs) == workers * count
    reopened = build_services(Settings(data_dir=tmp_path, **backend), embedder=embedder)
    view = open_store(reopened, store.id).view()
    assert int(view.entries[counter].scanned.record.body) == workers * count
    assert view.entries[counter].scanned.record.revision == workers * count + 1
    assert len(view.entries) == workers * count + 1
    assert open_store(reopened, store.id).state.journal_git_pending() == []
    history = reopened.mutations.history(owner, project.id, store.id, counter).wire()
    assert [r["revision"] for r in history["revisions"]] == list(range(1, workers * count + 2))
    reopened.close()


def test_leftover_temp_files_are_found_outside_git_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupted atomic write's temp file is removed wherever it lies in the vault; the
    walk never enters .git, whose object folders Git packs and prunes while it runs (a folder
    gone between its listing and its reading failed the write that looked: here every folder
    of .git is gone when read)."""
    from naturali.vault.files import TEMP_PREFIX, TEMP_SUFFIX, remove_temp_files

    scandir = os.scandir

    def pruned_meanwhile(path: Any = ".") -> Any:
        if ".git" in Path(path).parts:
            raise FileNotFoundError(path)
        return scandir(path)

    vault = tmp_path / "vault"
    left = vault / "people" / f"{TEMP_PREFIX}ann{TEMP_SUFFIX}"
    gits = vault / ".git" / "objects" / "13" / f"{TEMP_PREFIX}obj{TEMP_SUFFIX}"
    for path in (left, gits, vault / "people" / "ann.md"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    monkeypatch.setattr(os, "scandir", pruned_meanwhile)
    assert remove_temp_files(vault) == [left]
    assert not left.exists() and gits.exists() and (vault / "people" / "ann.md").exists()
