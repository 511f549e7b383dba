"""``naturali knowledge …``: one command per store operation of the catalogue, generated from
its request model (``cli/model_options.py``), the operation's main field a positional
argument. Commands talk to a server through the SDK."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from naturali.catalogue import TOOLS
from naturali.catalogue.operation import Operation
from naturali.cli import views
from naturali.cli.common import BaseUrl, Token, client, errors
from naturali.cli.model_options import field_parameters, keyword, request_from, with_parameters
from naturali_client._operations import http_call

app = typer.Typer(
    rich_markup_mode=None,
    help="The knowledge tools: a store's records (search, lookup, inventory, dates, writes) "
    "and the project's documents, passages and stores.",
    no_args_is_help=True,
)
COMMON = ("project_id", "store_id", "as_json", "base_url", "token")


def _parameters(operation: Operation) -> list[inspect.Parameter]:
    fields = operation.request.model_fields
    ordered = sorted(fields, key=lambda n: (n != operation.argument, not fields[n].is_required()))
    params = field_parameters(operation.request, ordered, operation.argument)
    params.append(
        keyword("project_id", Annotated[str, typer.Option("--project-id", help="Project id")])
    )
    if "{memory_store_id}" in operation.path:
        store = Annotated[str, typer.Option("--store-id", help="Memory store id")]
        params.append(keyword("store_id", store))
    params += [
        keyword(
            "as_json",
            Annotated[bool, typer.Option("--json", help="Print the complete response")],
            False,
        ),
        keyword("base_url", Annotated[str | None, BaseUrl], None),
        keyword("token", Annotated[str | None, Token], None),
    ]
    return params


def _command(operation: Operation) -> Callable[..., None]:
    show = views.SHOW.get(operation.name, views.show_json)

    def command(**given: Any) -> None:
        common = {k: given.pop(k, "") for k in COMMON}
        request = request_from(operation.request, given)
        ids = {"project_id": common["project_id"], "memory_store_id": common["store_id"]}
        fields = request.model_dump(mode="json", exclude_none=True)
        url, extra = http_call(operation.method, operation.path, operation.path_field, ids, fields)
        with errors(), client(common["base_url"], common["token"]) as api:
            response = api.request(operation.method, url, **extra)
        show(response, common["as_json"])

    return with_parameters(command, _parameters(operation), f"{operation.doc} ({operation.name})")


for _operation in TOOLS:
    if _operation.cli != "search":  # the project's search is ``naturali search-knowledge``
        app.command(_operation.cli)(_command(_operation))
