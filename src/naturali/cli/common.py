"""What every CLI command shares: settings, clients, and mapping errors to exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from naturali.errors import NaturaliError
from naturali.settings import Settings
from naturali_client._errors import NaturaliAPIError, NaturaliConnectionError

if TYPE_CHECKING:
    from naturali.service.container import Services
    from naturali_client import Client

T = TypeVar("T")

DataDir = typer.Option("--data-dir", help="Data directory [env NATURALI_DATA_DIR]")
BaseUrl = typer.Option("--base-url", help="Server URL [env NATURALI_BASE_URL]")
Token = typer.Option("--token", help="Bearer token [env NATURALI_TOKEN]")
# What of a project a token or a member reaches (docs/operations.md "Grants").
PathPrefixes = typer.Option(
    "--path-prefix",
    help="Only the documents under this path prefix (repeatable; 'none': no document)",
)
MemoryStoreIds = typer.Option(
    "--memory-store-id", help="Only this memory store (repeatable; 'none': no store)"
)


def settings(**overrides: Any) -> Settings:
    try:
        return Settings.load(overrides)
    except (ValueError, OSError) as exc:
        fail(f"configuration error: {exc}")


def fail(message: str, code: int = 1) -> NoReturn:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code)


@contextmanager
def errors() -> Iterator[None]:
    """API and service errors become a message on stderr and a non-zero exit code."""
    try:
        yield
    except NaturaliAPIError as exc:
        fail(
            f"{exc.message} ({exc.code}{', param ' + str(exc.param) if exc.param else ''})",
            2 if exc.status < 500 else 1,
        )
    except NaturaliConnectionError as exc:
        fail(
            f"{exc.message} at {exc.url}; check that `naturali serve` is running there "
            "(--base-url or NATURALI_BASE_URL)"
        )
    except NaturaliError as exc:
        fail(f"{exc.message} ({exc.code})", 2 if exc.status < 500 else 1)
    except OSError as exc:
        fail(str(exc))


def client(base_url: str | None, token: str | None) -> Client:
    """The SDK for a command that talks to a server."""
    # Imported here: httpx and the SDK's models are only loaded by commands that use them.
    from naturali_client import Client

    s = settings(base_url=base_url, token=token)
    if not s.token:
        fail("no token: pass --token or set NATURALI_TOKEN")
    return Client(base_url=s.base_url, token=s.token)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def parse_pairs(values: list[str] | None, option: str) -> dict[str, str] | None:
    """``--tags team=support`` pairs into a dict."""
    if not values:
        return None
    out: dict[str, str] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key:
            fail(f"{option} takes key=value, got {value!r}")
        out[key] = item
    return out


def limits(prefixes: list[str] | None, stores: list[str] | None) -> dict[str, list[str] | None]:
    """``--path-prefix`` and ``--memory-store-id`` as the API's fields: not given, None (the
    default); ``none``, an empty list."""

    def one(values: list[str] | None) -> list[str] | None:
        return None if not values else [] if values == ["none"] else values

    return {"path_prefixes": one(prefixes), "memory_store_ids": one(stores)}


def local_service(data_dir: Path | None) -> Services:
    # Imported here: the client commands should not pay for loading the server's stack.
    from naturali.compose import build_services

    return build_services(settings(data_dir=data_dir))


def run(fn: Callable[[], T]) -> T:
    with errors():
        return fn()
