"""Structured dates: parsing record dates and query bounds, and what a record says about when.

Times are integers of microseconds since the epoch, intervals half-open ``[start, end)``: a
timestamp is the one-microsecond interval at its instant, a date-only value its whole UTC day
(so date-only records match every range they overlap without claiming an instant).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from naturali.errors import InvalidRequest

TimeField = Literal["occurred_at", "recorded_at", "updated_at", "due_at"]
TIME_FIELDS: tuple[TimeField, ...] = ("occurred_at", "recorded_at", "updated_at", "due_at")
DAY_US = 86_400_000_000
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A timestamp with seconds and an explicit zone (Z or ±HH:MM); fractions allowed.
_BOUND_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$")
# Records may also omit seconds, but never the zone.
_RECORD_TS = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$"
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_us(moment: datetime) -> int:
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int) -> datetime:
    return EPOCH + timedelta(microseconds=value)


def day_start(day: date) -> int:
    return to_us(datetime(day.year, day.month, day.day, tzinfo=UTC))


@dataclass(frozen=True)
class Interval:
    start: int
    end: int  # exclusive
    date_only: bool
    written: str

    def overlaps(self, start: int | None, end: int | None) -> bool:
        return (end is None or self.start < end) and (start is None or self.end > start)


def parse_record_value(value: Any) -> Interval | None:
    """A record's date as written; None when absent or not a real date with a zone."""
    if value is None:
        return None
    text = str(value).strip()
    if _DATE.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return None
        start = day_start(day)
        return Interval(start, start + DAY_US, True, text)
    if _RECORD_TS.match(text):
        try:
            moment = datetime.fromisoformat(text.replace(" ", "T").replace("Z", "+00:00"))
        except ValueError:
            return None
        instant = to_us(moment)
        return Interval(instant, instant + 1, False, text)
    return None


def parse_bound(value: str, param: str, *, upper: bool) -> int:
    """Query bounds: a real YYYY-MM-DD, or an ISO timestamp with seconds and an explicit zone.

    Returns the inclusive start (lower bound) or the exclusive end (upper bound); a date-only
    upper bound covers its whole UTC day.
    """
    text = value.strip()
    if _DATE.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise InvalidRequest(
                f"{param}: {text!r} is not a real date", code="invalid_date", param=param
            ) from None
        return day_start(day) + (DAY_US if upper else 0)
    if _BOUND_TS.match(text):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidRequest(
                f"{param}: {text!r} is not a real timestamp", code="invalid_date", param=param
            ) from None
        return to_us(moment) + (1 if upper else 0)
    raise InvalidRequest(
        f"{param} must be YYYY-MM-DD or an ISO timestamp with seconds and a zone "
        f"(2026-11-03T10:00:00Z); got {text!r}",
        code="invalid_date",
        param=param,
    )


def record_dates(kind: str, front: dict[str, Any]) -> dict[str, Interval]:
    """The structured dates of a record. Pages keep occurrence under ``fields.occurred_at``
    (meetings); claims and relationships at the top level. Recording time never stands in
    for occurrence; prose dates are never read."""
    out: dict[str, Interval] = {}
    raw_fields = front.get("fields")
    fields: dict[str, Any] = raw_fields if isinstance(raw_fields, dict) else {}
    occurred = fields.get("occurred_at") if kind == "page" else front.get("occurred_at")
    for name, value in (
        ("occurred_at", occurred),
        ("recorded_at", front.get("recorded_at")),
        ("updated_at", front.get("updated_at")),
        ("due_at", front.get("due_at")),
    ):
        interval = parse_record_value(value)
        if interval is not None:
            out[name] = interval
    return out


def date_issues(kind: str, front: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each structured date that is written but cannot be placed on a
    timeline: not a real date, or a timestamp without a zone."""
    raw_fields = front.get("fields")
    fields: dict[str, Any] = raw_fields if isinstance(raw_fields, dict) else {}
    written = {
        "fields.occurred_at" if kind == "page" else "occurred_at": (
            fields.get("occurred_at") if kind == "page" else front.get("occurred_at")
        ),
        **{name: front.get(name) for name in ("recorded_at", "updated_at", "due_at")},
    }
    return [
        (
            name,
            f"{name} {value!s:.40} is not a real YYYY-MM-DD or a timestamp with a time zone",
        )
        for name, value in written.items()
        if value is not None and parse_record_value(value) is None
    ]


def parse_range(
    since: str | None, until: str | None, since_param: str = "since", until_param: str = "until"
) -> tuple[int | None, int | None]:
    """Inclusive query bounds as [start, end); ``since`` later than ``until`` is refused."""
    start = parse_bound(since, since_param, upper=False) if since else None
    end = parse_bound(until, until_param, upper=True) if until else None
    if start is not None and end is not None and start >= end:
        raise InvalidRequest(
            f"{since_param} is later than {until_param}", code="invalid_range", param=since_param
        )
    return start, end


def entity_links(front: dict[str, Any]) -> dict[str, str]:
    """Entity id → how the record is associated with it: explicit ``entities``, ``owner``,
    relationship endpoints and ``sources``. Never co-mentions in the text."""
    out: dict[str, str] = {}
    for value in front.get("entities") or []:
        out.setdefault(str(value), "entity")
    if front.get("owner") is not None:
        out.setdefault(str(front["owner"]), "owner")
    for key in ("from", "to"):
        if front.get(key) is not None:
            out.setdefault(str(front[key]), "endpoint")
    for value in front.get("sources") or []:
        out.setdefault(str(value), "source")
    return out
