"""Records named by title or alias: exact lookup's normalisation (never fuzzy), shared by
every tool that takes a record by name."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import overload

from naturali.errors import Conflict
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.service.memory.stores import StoreView


def normalize_name(text: str) -> str:
    """NFKC, lowercase, trimmed, whitespace collapsed; never fuzzy."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def by_name(entries: Iterable[AvailableRecord], name: str) -> list[AvailableRecord]:
    """The records whose full title or an alias is ``name`` once both are normalised, by id:
    exact lookup's rule, shared by every tool that takes a record by name."""
    key = normalize_name(name)
    return sorted(
        (
            e
            for e in entries
            if normalize_name(e.title) == key or key in {normalize_name(a) for a in e.aliases}
        ),
        key=lambda e: e.id,
    )


@overload
def entity_id(view: StoreView, entity: str) -> str: ...
@overload
def entity_id(view: StoreView, entity: None) -> None: ...
@overload
def entity_id(view: StoreView, entity: str | None) -> str | None: ...


def entity_id(view: StoreView, entity: str | None) -> str | None:
    """The record an entity filter names: its id, else the one record whose full title or
    alias it is (exact lookup's normalisation). Two or more such records are a 409 naming
    them; a name no record has is kept as given (it matches what declares it verbatim)."""
    if entity is None or entity in view.entries:
        return entity
    named = by_name(view.entries.values(), entity)
    if len(named) > 1:
        raise Conflict(
            f"entity {entity!r} is ambiguous: it is the title or alias of "
            f"{', '.join(e.id for e in named)}; name one by its id",
            code="ambiguous_entity",
            param="entity",
        )
    return named[0].id if named else entity
