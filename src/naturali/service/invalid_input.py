"""A validation failure in our own words: one sentence naming the field, the rule and what was
given (``limit must be at most 50, got 99``), the same over HTTP, the CLI, MCP and the SDKs
(which show the server's message). Pydantic's wording ("Input should be…", "Value error, …",
its multi-line dumps) never reaches a user."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from naturali.errors import InvalidRequest

# Where FastAPI says a value came from, before the field's own path.
_LOCATIONS = ("body", "query", "path", "header", "cookie")
_KINDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "a JSON object",
    "model_type": "a JSON object",
    "model_attributes_type": "a JSON object",
    "list_type": "a list",
}


def invalid_request(
    errors: Sequence[Mapping[str, Any]], *, located: bool = False
) -> InvalidRequest:
    """The first of pydantic's errors as an InvalidRequest naming the offending field.
    ``located``: FastAPI's errors, whose path starts with where the value came from."""
    first: Mapping[str, Any] = errors[0] if errors else {"loc": (), "type": ""}
    parts = list(first.get("loc") or ())
    if located and parts and parts[0] in _LOCATIONS:
        parts = parts[1:]
    kind = str(first.get("type", ""))
    if kind == "json_invalid":  # the location is a character offset, not a field
        return InvalidRequest("the body is not valid JSON", code="invalid_json")
    param = ".".join(str(p) for p in parts) or None
    if kind == "extra_forbidden":
        return InvalidRequest(f"unknown field {param!r}", code="unknown_field", param=param)
    if kind == "missing":
        if param is None:
            return InvalidRequest(
                "the request body is required: a JSON object", code="missing_field"
            )
        return InvalidRequest(f"{param} is required", code="missing_field", param=param)
    subject = param or "the request body"
    if kind in ("value_error", "assertion_error"):
        return InvalidRequest(_own(subject, first), code="invalid_value", param=param)
    message = f"{subject} {_rule(kind, first)}"
    if "input" in first:
        message += f", got {_shown(first['input'])}"
    return InvalidRequest(message, code="invalid_value", param=param)


def _own(subject: str, error: Mapping[str, Any]) -> str:
    """A validator's own sentence; it names the field itself, else it is put after the name."""
    cause = str((error.get("ctx") or {}).get("error") or "").strip() or "is invalid"
    field = subject.rsplit(".", 1)[-1]
    return cause if cause.startswith(field) else f"{subject} is invalid: {cause}"


def _rule(kind: str, error: Mapping[str, Any]) -> str:
    """What the value must be, after the field's name."""
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    if kind in _KINDS:
        return f"must be {_KINDS[kind]}"
    bounds = {
        "less_than_equal": ("at most", "le"),
        "greater_than_equal": ("at least", "ge"),
        "less_than": ("less than", "lt"),
        "greater_than": ("greater than", "gt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {_number(ctx.get(key))}"
    if kind in ("string_too_long", "string_too_short"):
        if kind == "string_too_short" and ctx.get("min_length") == 1:
            return "must not be empty"
        words, key = (
            ("at most", "max_length") if kind == "string_too_long" else ("at least", "min_length")
        )
        return f"must be {words} {ctx.get(key)} characters"
    if kind in ("too_long", "too_short"):
        if kind == "too_short" and ctx.get("min_length") == 1:
            return "must have at least one item"
        words, key = ("at most", "max_length") if kind == "too_long" else ("at least", "min_length")
        return f"must have {words} {ctx.get(key)} items"
    if kind == "literal_error" or kind == "enum":
        return f"must be one of {ctx.get('expected')}"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern')}"
    return "is invalid"


def _number(value: Any) -> str:
    """50, 1, 0.5: a bound as a person writes it (pydantic keeps 1.0 for a float field)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _shown(value: Any) -> str:
    """What was sent, short: numbers and words as they are, long text cut, others by kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        if len(value) > 40:
            return f"{len(value)} characters"
        return repr(value)
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    return type(value).__name__
