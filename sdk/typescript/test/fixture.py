"""Seed a data dir for the SDK tests: the owner (the bootstrap token), a project with the id
the spec's examples use, the demo handbook in it, the first document with the spec's
document id, and a memory store with one memory.

    python fixture.py DATA_DIR   (NATURALI_BOOTSTRAP_TOKEN set)
"""

from __future__ import annotations

import itertools
import sys

import naturali.service.corpus.documents as documents
from naturali.compose import build_services
from naturali.model import Member, Project, utcnow
from naturali.service.corpus.documents import Upload
from naturali.service.platform.demo import DEMO_DIR
from naturali.settings import Settings

PROJECT = "proj_V1StGXR8Z5jdHi6B"
DOCUMENT = "doc_V1StGXR8Z5jdHi6B"
HANDBOOK = DEMO_DIR / "handbook"


def main() -> None:
    assert HANDBOOK.is_dir(), HANDBOOK
    services = build_services(Settings.load({"data_dir": sys.argv[1]}))
    services.bootstrap()
    owner = services.storage.oldest_user()
    assert owner is not None
    now = utcnow()
    services.storage.create_project(
        Project(PROJECT, "spec examples", now), Member(PROJECT, owner.id, "owner", now)
    )
    ids = itertools.chain([DOCUMENT], iter(lambda: None, 0))
    real_new_id = documents.new_id
    # The spec's document id for the first document (a test fixture; ids are random otherwise).
    documents.new_id = lambda prefix: next(ids) or real_new_id(prefix)  # type: ignore[assignment]
    for path in sorted(HANDBOOK.rglob("*.md")):
        logical = "/handbook/" + path.relative_to(HANDBOOK).as_posix()
        services.documents.create(owner, PROJECT, Upload(path.read_bytes(), path.name, logical))
    documents.new_id = real_new_id
    store = services.memories.create_store(owner, PROJECT, "agent", None)
    services.memories.create(owner, PROJECT, store.id, "Ann prefers green tea.", None)
    services.close()
    print(store.id)


if __name__ == "__main__":
    main()
