"""Tokens in PostgreSQL (ports/storage.py TokenStorage), shared by every server: a revocation
is seen by each server at its next lookup of the token."""

from __future__ import annotations

from typing import Any

import psycopg

from naturali.model import Token, User
from naturali.storage import rows as mapping
from naturali.storage.postgres.connection import Database

LINEAGE = mapping.lineage("%s")
INSERT = (
    f"INSERT INTO tokens ({mapping.TOKEN_COLUMNS}) VALUES ({mapping.token_marks('%s')})"
).encode()


def insert_token(conn: psycopg.Connection[dict[str, Any]], token: Token, token_hash: str) -> None:
    conn.execute(INSERT, mapping.token_row(token, token_hash))


class PostgresTokens:
    db: Database

    def create_token(self, token: Token, token_hash: str) -> None:
        with self.db.transaction() as conn:
            insert_token(conn, token, token_hash)

    def token_for(self, token_hash: str) -> tuple[User, Token] | None:
        row = self.db.one(
            "SELECT t.*, u.name AS user_name, u.created_at AS user_created_at "
            "FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = %s",
            token_hash,
        )
        return mapping.user_and_token(row) if row else None

    def list_tokens(self, user_id: str, within: str | None = None) -> list[Token]:
        if within is None:
            rows = self.db.all(
                "SELECT * FROM tokens WHERE user_id = %s ORDER BY created_at, id", user_id
            )
        else:
            rows = self.db.all(
                LINEAGE + "SELECT * FROM tokens WHERE id IN (SELECT id FROM lineage) "
                "ORDER BY created_at, id",
                within,
                user_id,
            )
        return [mapping.token(r) for r in rows]

    def revoke_token(
        self, user_id: str, token_id: str, when: str, within: str | None = None
    ) -> bool:
        with self.db.transaction() as conn:
            if (
                within is not None
                and not conn.execute(
                    (LINEAGE + "SELECT 1 FROM lineage WHERE id = %s").encode(),
                    (within, user_id, token_id),
                ).fetchone()
            ):
                return False
            live = conn.execute(
                b"SELECT 1 FROM tokens WHERE id = %s AND user_id = %s AND revoked_at IS NULL "
                b"FOR UPDATE",
                (token_id, user_id),
            ).fetchone()
            if live:
                conn.execute(
                    (
                        LINEAGE + "UPDATE tokens SET revoked_at = %s "
                        "WHERE id IN (SELECT id FROM lineage) AND revoked_at IS NULL"
                    ).encode(),
                    (token_id, user_id, when),
                )
        return live is not None

    def touch_token(self, token_id: str, when: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(b"UPDATE tokens SET last_used_at = %s WHERE id = %s", (when, token_id))
