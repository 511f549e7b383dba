"""Command-line options made from a request model's fields, so that a field is defined once:
each field an option named after it (``timeField`` is ``--time-field``), its description the
help, booleans a ``--x/--no-x`` pair, lists repeatable, string maps ``key=value`` pairs and any
other object JSON text. ``naturali knowledge …`` and ``naturali search-knowledge`` use it."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from naturali.cli.common import fail, parse_pairs
from naturali.contracts.glossary import limits
from naturali.service.invalid_input import invalid_request
from naturali.service.requests import union_members

M = TypeVar("M", bound=BaseModel)


def option_name(field_name: str) -> str:
    """``timeField`` → ``--time-field``; ``id`` → ``--id``."""
    return "--" + re.sub(r"(?<!^)(?=[A-Z])", "-", field_name).lower().replace("_", "-")


def keyword(
    name: str, annotation: Any, default: Any = inspect.Parameter.empty
) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def with_parameters(
    function: Callable[..., None], parameters: list[inspect.Parameter], doc: str
) -> Callable[..., None]:
    """``function`` (taking ``**given``) as Typer sees a command: these parameters, this help."""
    function.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    function.__doc__ = doc
    return function


def field_parameters(
    model: type[BaseModel], names: Iterable[str], argument: str | None = None
) -> list[inspect.Parameter]:
    """The options (and the ``argument``) that carry the fields ``names`` of ``model``, each
    helped by its description, then its limits, default and example from the model's schema."""
    fields = model.model_fields
    properties = model.model_json_schema(by_alias=True)["properties"]
    return [
        _field_parameter(
            name, fields[name], properties[fields[name].alias or name], argument=name == argument
        )
        for name in names
    ]


def _field_parameter(
    name: str, info: FieldInfo, schema: dict[str, Any], *, argument: bool
) -> inspect.Parameter:
    """The option (or, for the operation's main field, the argument) that carries a field."""
    kind = cli_type(info.annotation)
    help_text = " ".join(filter(None, (info.description, limits(schema))))
    if argument:
        return keyword(name, Annotated[kind, typer.Argument(help=help_text)])
    flag = option_name(name)
    if kind is bool:
        declared = typer.Option(f"{flag}/--no-{flag[2:]}", help=help_text)
        return keyword(name, Annotated[bool | None, declared], None)
    metavar = {dict: "<json>", "pairs": "<key=value>", list[str]: "<str>"}.get(kind)
    if kind == "pairs" or kind == list[str]:
        help_text += " (repeatable)"
    option = typer.Option(flag, help=help_text, metavar=metavar)
    annotation = {dict: str, "pairs": list[str]}.get(kind, kind)
    if info.is_required():
        return keyword(name, Annotated[annotation, option])
    return keyword(name, Annotated[annotation | None, option], None)


def cli_type(annotation: Any) -> Any:
    """What the command line can carry for a field: str, int, float, bool, list[str],
    ``"pairs"`` (a map of strings, as ``key=value``) or a JSON object (given as text)."""
    options = [a for a in union_members(annotation) if a is not type(None)]
    base = typing.get_origin(options[0]) or options[0]
    if base is typing.Annotated:
        return cli_type(typing.get_args(options[0])[0])
    if base is dict and _string_values(options[0]):
        return "pairs"
    if base in (int, float, bool, dict, list):
        return list[str] if base is list else base
    return str


def _string_values(annotation: Any) -> bool:
    args = typing.get_args(annotation)
    value = args[1] if len(args) == 2 else Any
    if typing.get_origin(value) is typing.Annotated:
        value = typing.get_args(value)[0]
    return value is str


def request_from(model: type[M], given: dict[str, Any]) -> M:
    """The request the options describe, validated by its model; exit 2 in our words if not."""
    values = {k: v for k, v in given.items() if v is not None}
    for name, info in model.model_fields.items():
        if name not in values:
            continue
        kind = cli_type(info.annotation)
        if kind is dict:
            try:
                values[name] = json.loads(values[name])
            except json.JSONDecodeError as exc:
                fail(f"{option_name(name)} must be JSON: {exc.msg}", 2)
        elif kind == "pairs":
            values[name] = parse_pairs(values[name], option_name(name))
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        fail(invalid_request(exc.errors()).message, 2)
