"""Users' tokens (ports/storage.py TokenStorage), on either backend: on PostgreSQL shared by
every server, so a revocation is seen by each at its next lookup of the token."""

from __future__ import annotations

from naturali.model import Token, User
from naturali.storage import access_rows as mapping
from naturali.storage.sql import Aggregate, Writer

LINEAGE = mapping.lineage("?")
INSERT = f"INSERT INTO tokens ({mapping.TOKEN_COLUMNS}) VALUES ({mapping.token_marks('?')})"


class Tokens(Aggregate):
    def create_user(self, user: User, token: Token, token_hash: str) -> None:
        with self.db.writing() as conn:
            conn.execute(
                "INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)",
                (user.id, user.name, user.created_at),
            )
            insert_token(conn, token, token_hash)

    def create_token(self, token: Token, token_hash: str) -> None:
        with self.db.writing() as conn:
            insert_token(conn, token, token_hash)

    def token_for(self, token_hash: str) -> tuple[User, Token] | None:
        row = self.db.row(
            "SELECT t.*, u.name AS user_name, u.created_at AS user_created_at "
            "FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?",
            token_hash,
        )
        return mapping.user_and_token(row) if row else None

    def list_tokens(self, user_id: str, within: str | None = None) -> list[Token]:
        if within is None:
            sql, args = "SELECT * FROM tokens WHERE user_id = ?", [user_id]
        else:
            sql = LINEAGE + "SELECT * FROM tokens WHERE id IN (SELECT id FROM lineage)"
            args = [within, user_id]
        rows = self.db.rows(sql + " ORDER BY created_at, id", *args)
        return [mapping.token(r) for r in rows]

    def revoke_token(
        self, user_id: str, token_id: str, when: str, within: str | None = None
    ) -> bool:
        with self.db.writing() as conn:
            if (
                within is not None
                and not conn.execute(
                    LINEAGE + "SELECT 1 FROM lineage WHERE id = ?", (within, user_id, token_id)
                ).fetchone()
            ):
                return False
            live = conn.execute(
                "SELECT 1 FROM tokens WHERE id = ? AND user_id = ? AND revoked_at IS NULL "
                + self.db.dialect.for_update,
                (token_id, user_id),
            ).fetchone()
            if live:
                conn.execute(
                    LINEAGE + "UPDATE tokens SET revoked_at = ? "
                    "WHERE id IN (SELECT id FROM lineage) AND revoked_at IS NULL",
                    (token_id, user_id, when),
                )
        return live is not None

    def touch_token(self, token_id: str, when: str) -> None:
        with self.db.writing() as conn:
            conn.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", (when, token_id))


def insert_token(conn: Writer, token: Token, token_hash: str) -> None:
    conn.execute(INSERT, mapping.token_row(token, token_hash))
