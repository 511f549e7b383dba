"""The demo project: the handbook shipped with the package, ingested on ``serve --demo``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from naturali.errors import NotFound
from naturali.model import Document, User
from naturali.service.container import Services
from naturali.service.corpus.documents import Upload

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"  # naturali/demo/
DEMO_NAME = "demo"


def ensure_demo(naturali: Services, say: Callable[[str], None]) -> str:
    """Create (or refresh) the demo project for the owner; returns its id. Idempotent:
    unchanged files make no new versions."""
    owner = naturali.storage.oldest_user()
    if owner is None:
        raise NotFound("no owner user yet: start the server once first")
    existing = [p for p, _ in naturali.projects.list(owner) if p.name == DEMO_NAME]
    project = existing[0] if existing else naturali.projects.create(owner, DEMO_NAME)[0]
    current = {d.path: d for d in _documents(naturali, owner, project.id)}
    for file in sorted(DEMO_DIR.rglob("*.md")):
        path = "/" + file.relative_to(DEMO_DIR).as_posix()
        upload = Upload(file.read_bytes(), file.name, path)
        if path in current:
            naturali.documents.update(owner, project.id, current[path].id, upload)
        else:
            naturali.documents.create(owner, project.id, upload)
        say(f"  ingested {path}")
    say(f"Demo project {project.id} ({DEMO_NAME}) is ready.")
    return project.id


def _documents(naturali: Services, owner: User, project_id: str) -> list[Document]:
    """Every document of the project, page after page (a project past a page of them still
    refreshes its handbook rather than finding it taken)."""
    found: list[Document] = []
    cursor: str | None = None
    while True:
        page = naturali.documents.list(owner, project_id, cursor=cursor, limit=100)
        found += page.documents
        cursor = page.next_cursor
        if cursor is None:
            return found
