"""knowledge_grep's query contract: tokens, modes, filters and scope keys.

Queries are 1–64 word tokens within 500 characters; punctuation separates tokens. The state
port matches tokens, never query syntax: user text is never executed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Literal

from naturali.errors import InvalidRequest
from naturali.ports.state import MatchMode
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.text.tokens import words
from naturali.vault.dates import record_dates

MAX_QUERY_CHARS = 500
MAX_QUERY_TOKENS = 64
Lifecycle = Literal["active", "superseded", "all"]


def query_tokens(query: str) -> list[str]:
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"query is longer than {MAX_QUERY_CHARS} characters",
            code="query_too_long",
            param="query",
        )
    tokens = words(query)
    if not tokens:
        raise InvalidRequest("query has no word tokens", code="empty_query", param="query")
    if len(tokens) > MAX_QUERY_TOKENS:
        raise InvalidRequest(
            f"query has {len(tokens)} word tokens; at most {MAX_QUERY_TOKENS}",
            code="too_many_tokens",
            param="query",
        )
    return tokens


@dataclass(frozen=True)
class Filters:
    kind: str | None = None
    type: str | None = None  # canonical (aliases resolved by the caller)
    tag: str | None = None
    lifecycle: Lifecycle = "active"
    time_field: str = "occurred_at"
    since: int | None = None  # microseconds, inclusive
    until: int | None = None  # microseconds, exclusive

    def scope(self) -> str:
        """The projection key: filters apply before corpus statistics, so each filter set has
        its own projection and nothing outside it moves a rank."""
        payload = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(payload).hexdigest()[:16]

    def accepts(self, entry: AvailableRecord) -> bool:
        """kind/type/tag on a record (lifecycle is decided by the caller)."""
        if self.kind is not None and entry.kind != self.kind:
            return False
        if self.type is not None and entry.type != self.type:
            return False
        if self.tag is not None and self.tag not in entry.tags:
            return False
        if self.since is None and self.until is None:
            return True
        when = record_dates(entry.kind, entry.front).get(self.time_field)
        return when is not None and when.overlaps(self.since, self.until)


def fields_matched(entry: AvailableRecord, tokens: list[str], mode: MatchMode) -> list[str]:
    """Which of title, aliases, body contain the query (for complete hits' ``matches``). A
    phrase matches within one value: one alias, never two aliases side by side."""
    out = []
    for name, values in (
        ("title", [entry.title]),
        ("aliases", entry.aliases),
        ("body", [entry.scanned.record.body]),
    ):
        if mode == "phrase":
            hit = any(_has_phrase(words(v), tokens) for v in values)
        else:  # all/any: the query may be spread over fields; report every field that helped
            hit = bool(set(tokens) & {w for v in values for w in words(v)})
        if hit:
            out.append(name)
    return out


def _has_phrase(present: list[str], tokens: list[str]) -> bool:
    n = len(tokens)
    return any(present[i : i + n] == tokens for i in range(len(present) - n + 1))
