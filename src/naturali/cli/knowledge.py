"""``naturali knowledge …``: one command per store operation of the catalogue, generated from
its request model — each field an option named after it (``timeField`` is ``--time-field``),
the operation's main field a positional argument. Commands talk to a server through the SDK."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from naturali.cli import views
from naturali.cli.common import BaseUrl, Token, client, errors, fail
from naturali.service.invalid_input import invalid_request
from naturali.service.operations import OPERATIONS, Operation, Target
from naturali.service.requests import union_members

app = typer.Typer(
    rich_markup_mode=None,
    help="The records tools of a memory store: search, lookup, inventory, dates and writes.",
    no_args_is_help=True,
)
COMMON = ("project_id", "store_id", "as_json", "base_url", "token")


def option_name(field_name: str) -> str:
    """``timeField`` → ``--time-field``; ``id`` → ``--id``."""
    return "--" + re.sub(r"(?<!^)(?=[A-Z])", "-", field_name).lower().replace("_", "-")


def _parameters(operation: Operation) -> list[inspect.Parameter]:
    fields = operation.request.model_fields
    ordered = sorted(fields, key=lambda n: (n != operation.argument, not fields[n].is_required()))
    params = [_parameter(operation, name, fields[name]) for name in ordered]
    params += [
        _keyword("project_id", Annotated[str, typer.Option("--project-id", help="Project id")]),
        _keyword("store_id", Annotated[str, typer.Option("--store-id", help="Memory store id")]),
        _keyword(
            "as_json",
            Annotated[bool, typer.Option("--json", help="Print the complete response")],
            False,
        ),
        _keyword("base_url", Annotated[str | None, BaseUrl], None),
        _keyword("token", Annotated[str | None, Token], None),
    ]
    return params


def _keyword(
    name: str, annotation: Any, default: Any = inspect.Parameter.empty
) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _parameter(operation: Operation, name: str, info: FieldInfo) -> inspect.Parameter:
    kind = _cli_type(info.annotation)
    help_text = info.description or ""
    if name == operation.argument:
        return _keyword(name, Annotated[kind, typer.Argument(help=help_text)])
    if kind is bool:
        flag = option_name(name)
        declared = typer.Option(f"{flag}/--no-{flag[2:]}", help=help_text)
        return _keyword(name, Annotated[bool | None, declared], None)
    required = info.is_required()
    option = typer.Option(option_name(name), help=help_text + (" (JSON)" if kind is dict else ""))
    annotation = str if kind is dict else kind
    if required:
        return _keyword(name, Annotated[annotation, option])
    return _keyword(name, Annotated[annotation | None, option], None)


def _cli_type(annotation: Any) -> Any:
    """What the command line can carry for a field: str, int, float, bool, list[str], or a
    JSON object (given as text)."""
    options = [a for a in union_members(annotation) if a is not type(None)]
    base = typing.get_origin(options[0]) or options[0]
    if base is typing.Annotated:
        return _cli_type(typing.get_args(options[0])[0])
    if base in (int, float, bool, dict, list):
        return list[str] if base is list else base
    return str


def _request(operation: Operation, given: dict[str, Any]) -> BaseModel:
    values = {k: v for k, v in given.items() if v is not None}
    for name, info in operation.request.model_fields.items():
        if name in values and _cli_type(info.annotation) is dict:
            try:
                values[name] = json.loads(values[name])
            except json.JSONDecodeError as exc:
                fail(f"{option_name(name)} must be JSON: {exc.msg}", 2)
    try:
        return operation.request.model_validate(values)
    except ValidationError as exc:
        fail(invalid_request(exc.errors()).message, 2)


def _command(operation: Operation) -> Callable[..., None]:
    show = views.SHOW.get(operation.name, views.show_json)

    def command(**given: Any) -> None:
        common = {k: given.pop(k) for k in COMMON}
        request = _request(operation, given)
        target = Target(common["project_id"], common["store_id"])
        body = operation.body(request)
        with errors(), client(common["base_url"], common["token"]) as api:
            extra = {"json": body} if body is not None else {}
            response = api.request(operation.method, operation.url(target, request), **extra)
        show(response, common["as_json"])

    parameters = _parameters(operation)
    command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = f"{operation.doc} ({operation.name})"
    return command


for _operation in OPERATIONS:
    if _operation.cli != "search":  # the project's search is ``naturali search-knowledge``
        app.command(_operation.cli)(_command(_operation))
