"""The base of every records-side result model: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

from naturali.contracts.described import Described


class WireModel(Described):
    """Fields left unset are left out of the wire form (the spec omits what does not apply,
    such as ``via`` on a direct hit); fields set to None are sent as null."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object the HTTP API sends and the MCP tools return."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
