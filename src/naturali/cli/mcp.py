"""``naturali mcp``: the MCP server for one memory store, over stdio or streamable HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from naturali.cli.common import DataDir, errors, fail, settings


def mcp(
    project: Annotated[str, typer.Option("--project-id", help="Project id")],
    store: Annotated[str, typer.Option("--store-id", help="Memory store id")],
    data_dir: Annotated[Path | None, DataDir] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Work through this server [env NATURALI_BASE_URL]"),
    ] = None,
    transport: Annotated[str, typer.Option(help="stdio or streamable-http")] = "stdio",
    host: Annotated[str, typer.Option(help="For streamable-http")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="For streamable-http")] = 8700,
    log_level: Annotated[
        str, typer.Option(help="debug, info, warning (default) or error, on stderr")
    ] = "warning",
) -> None:
    """Serve the records tools of one store to an agent. Works on the data dir, or through a
    server with --base-url (and NATURALI_TOKEN)."""
    # Imported here: the other commands should not pay for loading the MCP SDK.
    from naturali.catalogue.operation import Target
    from naturali.mcp.backend import Backend, LocalBackend, RemoteBackend
    from naturali.mcp.server import build

    level = log_level.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        fail("--log-level is debug, info, warning or error")
    s = settings(data_dir=data_dir, base_url=base_url)
    backend: Backend
    if base_url:
        from naturali_client import Client

        if not s.token:
            fail("--base-url needs NATURALI_TOKEN")
        backend = RemoteBackend(Client(base_url=s.base_url, token=s.token), Target(project, store))
    else:
        from naturali.compose import build_services

        services = build_services(s)
        with errors():
            user = services.auth.acting_user(project, s.token)
        backend = LocalBackend(services, user, Target(project, store))
    server = build(backend, log_level=level)  # type: ignore[arg-type]
    if transport == "stdio":
        server.run("stdio")
    elif transport == "streamable-http":
        server.run("streamable-http", host=host, port=port)
    else:
        fail("--transport is stdio or streamable-http")
