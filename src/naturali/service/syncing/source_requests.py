"""What a caller sends to make or change a source (``POST``/``PATCH …/sources``), validated
here once: its kind, URL, ref, folder, logical prefix, patterns and schedule."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from naturali.service import validation
from naturali.service.requests import ONE_LINE_PATTERN, Strict

MIN_EVERY_SECONDS = 60
MAX_EVERY_SECONDS = 30 * 86_400
_EVERY = re.compile(r"^(\d{1,6})([mhd])$")
_UNIT = {"m": 60, "h": 3600, "d": 86_400}
Pattern = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=ONE_LINE_PATTERN)]
Patterns = Annotated[list[Pattern], Field(max_length=100)]
# What git takes as a ref name: none of : ~ ^ ? * [ \ (a leading "-", a space or a control
# is refused by the service as source_refused: service/syncing/sources.py)
Ref = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^:~^?*\[\\]+$")]
Folder = Annotated[str, StringConstraints(max_length=500, pattern=ONE_LINE_PATTERN)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=2000)]


def every_seconds(every: str | None) -> int | None:
    """``15m``, ``1h``, ``1d`` → seconds; None: manual only."""
    if every is None:
        return None
    found = _EVERY.match(every)
    seconds = int(found.group(1)) * _UNIT[found.group(2)] if found else 0
    if not MIN_EVERY_SECONDS <= seconds <= MAX_EVERY_SECONDS:
        raise ValueError("every must be minutes, hours or days (15m, 1h, 1d), from 1m to 30d")
    return seconds


class _SourceFields(Strict):
    ref: Ref | None = Field(None, description="A branch or tag (Git); the remote's HEAD if absent.")
    folder: Folder | None = Field(
        None, description="The repository's sub-folder to mirror (Git); all of it if absent."
    )
    include: Patterns | None = Field(
        None, description="gitignore patterns: only the files they match (all if absent)."
    )
    exclude: Patterns | None = Field(None, description="gitignore patterns of files to leave out.")
    every: str | None = Field(
        None, description="How often the servers sync it: 15m, 1h, 1d (absent: manual only)."
    )

    @field_validator("every")
    @classmethod
    def _every(cls, value: str | None) -> str | None:
        every_seconds(value)
        return value

    @field_validator("folder")
    @classmethod
    def _folder(cls, value: str | None) -> str | None:
        if value is not None and ".." in value.split("/"):
            raise ValueError("folder must not climb out of the repository (..)")
        return value


class SourceCreate(_SourceFields):
    kind: Literal["git", "web"] = Field(
        description="git: a Git repository; web: a site, crawled from its URL or its sitemap."
    )
    url: Url = Field(
        description="A Git URL (https, ssh, git, or a local path where the operator allows "
        "it); for web, the start page (the crawl stays under its folder) or a sitemap (.xml)."
    )
    path: str = Field("/", description="The logical prefix its documents go under, ending in /.")

    @model_validator(mode="after")
    def _web_has_no_ref(self) -> SourceCreate:
        if self.kind == "web" and (self.ref is not None or self.folder is not None):
            raise ValueError("ref and folder are a Git source's: a web source has neither")
        return self

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        path = validation.logical_path(value, "path", prefix=True)
        return path if path.endswith("/") else path + "/"


class SourceUpdate(_SourceFields):
    url: Url | None = None
