"""What an index sync asks the store: a project's chunks added and removed since its cursors
(most searches find nothing, and are answered by one statement)."""

from __future__ import annotations

from conftest import Api


def test_chunk_changes_report_additions_removals_and_nothing_else(api: Api) -> None:
    storage = api.naturali.storage
    project_id, other = api.project(), api.project("other")
    empty = storage.chunk_changes(project_id, 0, 0)
    assert (empty.added, empty.removed, empty.chunk_cursor, empty.removal_cursor) == ([], [], 0, 0)

    doc = api.doc(project_id, "/refunds.md", "Refunds take five days.")
    added = storage.chunk_changes(project_id, 0, 0)
    assert {c.owner_id for c in added.added} == {doc["id"]}
    assert added.chunk_cursor == added.added[-1].seq and not added.removed
    cursors = (added.chunk_cursor, added.removal_cursor)

    api.doc(other, "/elsewhere.md", "Another project's chunk.")  # not this project's change
    nothing = storage.chunk_changes(project_id, *cursors)
    assert (nothing.added, nothing.removed) == ([], [])
    assert (nothing.chunk_cursor, nothing.removal_cursor) == cursors

    assert api.delete(f"/v1/projects/{project_id}/documents/{doc['id']}").is_success
    removed = storage.chunk_changes(project_id, *cursors)  # a removal alone is a change
    assert removed.added == [] and removed.removed == [c.seq for c in added.added]
    assert removed.removal_cursor > cursors[1] and removed.chunk_cursor == cursors[0]
