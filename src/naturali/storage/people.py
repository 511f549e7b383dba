"""Users, projects and their members (ports/storage.py), on either backend. A project keeps
an owner: the rule is checked in the transaction that changes its members, after the
backend's lock of them (``lock_members``), so two owners removing each other at once cannot
both succeed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from naturali.model import Member, Project, Role, User
from naturali.ports.storage import LastOwner
from naturali.storage import access_rows as mapping
from naturali.storage.sql import Aggregate, Writer

PUT_MEMBER = (
    "INSERT INTO members (project_id, user_id, role, created_at, path_prefixes, "
    "memory_store_ids) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, user_id) DO UPDATE "
    "SET role = excluded.role, path_prefixes = excluded.path_prefixes, "
    "memory_store_ids = excluded.memory_store_ids"
)
OWNERS = "SELECT count(*) AS n FROM members WHERE project_id = ? AND role = 'owner'"


def _user(row: object | None) -> User | None:
    r = cast(dict[str, str], row)
    return User(r["id"], r["name"], r["created_at"]) if row else None


class People(Aggregate):
    if TYPE_CHECKING:

        def lock_members(self, conn: Writer, project_id: str) -> None: ...

    def get_user(self, user_id: str) -> User | None:
        return _user(self.db.row("SELECT * FROM users WHERE id = ?", user_id))

    def oldest_user(self) -> User | None:
        order = f"created_at, {self.db.dialect.insertion_order}"
        return _user(self.db.row(f"SELECT * FROM users ORDER BY {order} LIMIT 1"))

    def count_users(self) -> int:
        row = self.db.row("SELECT count(*) AS n FROM users")
        return int(row["n"]) if row else 0

    def create_project(self, project: Project, owner: Member) -> None:
        key = self.db.dialect.project_key
        with self.db.writing() as conn:
            conn.execute(
                f"INSERT INTO projects ({key}, name, created_at, embedding_model) "
                "VALUES (?, ?, ?, ?)",
                (project.id, project.name, project.created_at, project.embedding_model),
            )
            conn.execute(PUT_MEMBER, _member_row(owner))

    def get_project(self, project_id: str) -> Project | None:
        key = self.db.dialect.project_key
        row = self.db.row(f"SELECT * FROM projects WHERE {key} = ?", project_id)
        return _project(row, key) if row else None

    def list_projects(self, user_id: str) -> list[tuple[Project, Member]]:
        key = self.db.dialect.project_key
        rows = self.db.rows(
            "SELECT p.*, m.role, m.created_at AS joined, m.path_prefixes, m.memory_store_ids "
            f"FROM projects p JOIN members m "
            f"ON m.project_id = p.{key} WHERE m.user_id = ? ORDER BY p.created_at, p.{key}",
            user_id,
        )
        return [
            (
                _project(r, key),
                Member(r[key], user_id, cast(Role, r["role"]), r["joined"], mapping.grant(r)),
            )
            for r in rows
        ]

    def set_project_models(
        self, project_id: str, model: str | None, next_model: str | None
    ) -> None:
        """The model the project is embedded with, and the one it moves to (None: none)."""
        key = self.db.dialect.project_key
        with self.db.writing() as conn:
            conn.execute(
                f"UPDATE projects SET embedding_model = ?, embedding_model_next = ? "
                f"WHERE {key} = ?",
                (model, next_model, project_id),
            )

    def moving_projects(self) -> list[Project]:
        """The projects whose vectors are being made again by another model."""
        key = self.db.dialect.project_key
        rows = self.db.rows("SELECT * FROM projects WHERE embedding_model_next IS NOT NULL")
        return [_project(r, key) for r in rows]

    def get_member(self, project_id: str, user_id: str) -> Member | None:
        row = self.db.row(
            "SELECT * FROM members WHERE project_id = ? AND user_id = ?", project_id, user_id
        )
        return mapping.member(row) if row else None

    def list_members(self, project_id: str) -> list[Member]:
        rows = self.db.rows(
            "SELECT * FROM members WHERE project_id = ? ORDER BY created_at, user_id", project_id
        )
        return [mapping.member(r) for r in rows]

    def put_member(self, member: Member) -> None:
        with self.db.writing() as conn:
            self.lock_members(conn, member.project_id)
            conn.execute(PUT_MEMBER, _member_row(member))
            _keep_an_owner(conn, member.project_id)

    def remove_member(self, project_id: str, user_id: str) -> None:
        with self.db.writing() as conn:
            self.lock_members(conn, project_id)
            conn.execute(
                "DELETE FROM members WHERE project_id = ? AND user_id = ?", (project_id, user_id)
            )
            _keep_an_owner(conn, project_id)


def _project(row: Any, key: str) -> Project:
    return Project(
        row[key],
        row["name"],
        row["created_at"],
        row["embedding_model"],
        row["embedding_model_next"],
    )


def _member_row(m: Member) -> tuple[str | None, ...]:
    return (m.project_id, m.user_id, m.role, m.created_at, *mapping.grant_columns(m.grant))


def _keep_an_owner(conn: Writer, project_id: str) -> None:
    if conn.execute(OWNERS, (project_id,)).fetchone()["n"] == 0:
        raise LastOwner(project_id)
