"""The ``knowledge-record-v1`` file format: YAML 1.2 front matter and a Markdown body.

Front matter is parsed with ruamel.yaml (YAML 1.2: ``no`` and ``on`` stay strings) and
timestamps are kept as the strings that were written, so nothing is silently turned into a
date. Unknown keys are kept in ``Record.front`` and written back untouched.
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode

from naturali.text.unicode import find_unencodable

FORMAT = "knowledge-record-v1"
KINDS = ("page", "claim", "relationship")
LIFECYCLES = ("active", "superseded", "withdrawn")
# The front-matter keys naturali reads. Any other is kept as written (unknown keys survive),
# but means nothing to a query: a write that brings one is told (``unknown_fields``).
KNOWN_FIELDS = frozenset(
    {
        "format", "id", "revision", "kind", "type", "title", "aliases", "tags", "lifecycle",
        "summary", "entities", "sources", "source_event", "supersedes", "superseded_by",
        "occurred_at", "recorded_at", "updated_at", "due_at", "expires_at", "valid_until",
        "owner", "from", "to", "fields", "evidence", "attribution", "assertion_origin",
        "origin", "recorded_by", "metadata", "content_hash", "body",
    }
)  # fmt: skip
# What a writer most likely meant by a key naturali does not read.
_MEANT = {
    "date": "occurred_at", "when": "occurred_at", "happened_at": "occurred_at",
    "created_at": "recorded_at", "due": "due_at", "deadline": "due_at", "name": "title",
    "tag": "tags", "alias": "aliases", "entity": "entities", "source": "sources",
}  # fmt: skip
# Record ids name files (``<id>.md``): letters, digits and ``. _ : -``, never a path. The one
# pattern the vault scan and every interface accept.
RECORD_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$"
_RECORD_ID = re.compile(RECORD_ID_PATTERN)


class _TextDates(SafeConstructor):
    def construct_yaml_timestamp(self, node: ScalarNode, values: Any = None) -> Any:
        return self.construct_scalar(node)


_TextDates.add_constructor("tag:yaml.org,2002:timestamp", _TextDates.construct_yaml_timestamp)


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = _TextDates
    yaml.version = (1, 2)
    yaml.default_flow_style = False
    yaml.allow_unicode = True
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    return yaml


class RecordFormatError(ValueError):
    pass


# Front matters kept parsed, by their text (~1 KB each): a store closed and reopened
# (``open_stores``), or a file rewritten with the same front matter, is not parsed again.
# ruamel's YAML 1.2 parser is pure Python, ~0.8 ms a record: 85% of a closed store's next
# search. A copy of the cached mapping is handed out (~20 µs), so no caller shares one.
FRONTS_KEPT = 65_536


@functools.lru_cache(maxsize=FRONTS_KEPT)
def parsed_front(text: str) -> Any:
    """Front matter's YAML as data (a mapping when valid; ``parse`` checks), kept by text."""
    return _yaml().load(text) or {}


@dataclass
class Record:
    front: dict[str, Any]
    body: str

    @property
    def id(self) -> str:
        return str(self.front["id"])

    @property
    def revision(self) -> int:
        return int(self.front["revision"])

    @property
    def lifecycle(self) -> str:
        return str(self.front.get("lifecycle", "active"))

    @property
    def title(self) -> str:
        return str(self.front.get("title") or "")

    @property
    def tags(self) -> list[str]:
        return [str(t) for t in self.front.get("tags") or []]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalize(text: str) -> str:
    """Files saved on Windows are records too: a UTF-8 BOM is dropped and CRLF read as LF."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def front_matter(text: str) -> tuple[str, str]:
    """A normalised record file's front matter (between its ``---`` lines) and body."""
    if not text.startswith("---\n"):
        raise RecordFormatError("missing front matter: the file must start with '---'")
    end = text.find("\n---\n", 4)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise RecordFormatError("front matter is not closed by a '---' line")
    return text[4:end], text[end + 5 :]


def parse(text: str, read_front: Callable[[str], Any] = parsed_front) -> Record:
    """A record file's record; ``read_front`` gives its front matter's YAML as data (a caller
    may know it already: ``vault/fronts.py``)."""
    front_text, body = front_matter(normalize(text))
    try:
        front = copy.deepcopy(read_front(front_text))
    except YAMLError as exc:
        raise RecordFormatError(f"front matter is not valid YAML: {exc}") from exc
    if not isinstance(front, dict):
        raise RecordFormatError("front matter must be a mapping")
    record = Record(front=dict(front), body=body)
    _validate(record)
    return record


def unknown_fields(front: dict[str, Any], where: str) -> list[str]:
    """A warning for each top-level key naturali does not read, naming the one it may mean."""
    warnings = []
    for key in sorted(k for k in front if k not in KNOWN_FIELDS):
        meant = _MEANT.get(key) or next(
            iter(difflib.get_close_matches(key, KNOWN_FIELDS, n=1, cutoff=0.75)), None
        )
        hint = f"; did you mean {meant}?" if meant else ""
        warnings.append(
            f"{where}.{key} is not a field naturali reads: it is kept, but no query uses it{hint}"
        )
    return warnings


def _validate(record: Record) -> None:
    front = record.front
    if front.get("format") != FORMAT:
        raise RecordFormatError(f"format must be {FORMAT!r}")
    if not isinstance(front.get("id"), str) or not _RECORD_ID.match(front["id"]):
        raise RecordFormatError(
            "id must be 1–200 letters, digits and . _ : - starting with a letter or digit"
        )
    revision = front.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise RecordFormatError("revision must be a positive integer")
    if front.get("kind") not in KINDS:
        raise RecordFormatError(f"kind must be one of {', '.join(KINDS)}")
    if record.lifecycle not in LIFECYCLES:
        raise RecordFormatError(f"lifecycle must be one of {', '.join(LIFECYCLES)}")
    tags = front.get("tags", [])
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise RecordFormatError("tags must be a list of strings")
    if find_unencodable(front) is not None:
        # YAML can spell a lone surrogate ("\udc00"); no response could carry it.
        raise RecordFormatError("front matter holds a lone surrogate, which UTF-8 cannot encode")


def render(record: Record) -> str:
    _validate(record)
    buffer = io.StringIO()
    _yaml().dump(record.front, buffer)
    front = buffer.getvalue()
    if front.startswith("%YAML"):
        front = front.split("---\n", 1)[1]
    body = record.body if record.body.endswith("\n") or not record.body else record.body + "\n"
    return f"---\n{front}---\n{body}"
