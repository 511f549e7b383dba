"""``naturali serve``: the HTTP server on an embedded store (optionally with the demo project)."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from naturali.cli.common import DataDir, settings

if TYPE_CHECKING:
    from fastapi import FastAPI


def _activate_hint() -> str:
    """The line that puts ``naturali`` on a new shell's PATH, when it runs from a venv (as
    ``scripts/run`` starts it): without it the hint's next line is "command not found"."""
    activate = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix == sys.base_prefix or not activate.is_file():
        return ""
    return f"  source {activate}\n"


def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind [127.0.0.1]")] = None,
    port: Annotated[int | None, typer.Option(help="Port [8600]")] = None,
    data_dir: Annotated[Path | None, DataDir] = None,
    demo: Annotated[bool, typer.Option(help="Create the demo project from shipped docs")] = False,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="postgresql://… shared by several servers [env NATURALI_DATABASE_URL]",
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="This server's rebuildable state")
    ] = None,
) -> None:
    """Start the HTTP API. On first start, creates the owner user and prints its token once."""
    # Imported here: the other commands should not pay for loading the server's stack.
    from naturali.api.app import create_app
    from naturali.compose import build_services
    from naturali.service.container import OWNER_TOKEN_FILE
    from naturali.service.platform.demo import ensure_demo

    s = settings(
        host=host, port=port, data_dir=data_dir, database_url=database_url, cache_dir=cache_dir
    )
    naturali = build_services(s)
    token = naturali.bootstrap()
    if token:
        typer.echo(
            f"Created the owner user. Token (shown once, also in "
            f"{s.data_dir / OWNER_TOKEN_FILE}, mode 0600):\n\n  {token}\n"
        )
    if demo:
        project_id = ensure_demo(naturali, lambda msg: typer.echo(msg))
        base = f"http://{s.host}:{s.port}"
        shown = token or f"$(cat {s.data_dir / OWNER_TOKEN_FILE})"
        typer.echo(
            "\nTry a search, in another shell:\n\n"
            + _activate_hint()
            + f"  export NATURALI_TOKEN={shown} NATURALI_BASE_URL={base}\n"
            f"  naturali search-knowledge --project-id {project_id} "
            '--query "how long do refunds take" --limit 5\n\n'
            f"  curl -s -X POST {base}/v1/projects/{project_id}/knowledge/search \\\n"
            '    -H "Authorization: Bearer $NATURALI_TOKEN" \\\n'
            '    -H "Content-Type: application/json" \\\n'
            '    -d \'{"query": "how long do refunds take", "limit": 5}\'\n'
        )
    naturali.embedder()  # load the model before the first request, not during it
    changed = naturali.reembed(lambda n: typer.echo(f"\r  re-embedded {n} chunks", nl=False))
    if changed:
        typer.echo(f"\nRe-embedded {changed} chunks made by another embedder model.")
    _start_logging()
    # The indexes saved at the last stop load while the server starts: a first search that
    # comes meanwhile waits for its project's (as it would have loaded it itself), not longer.
    # After re-embedding, which drops every snapshot when it changes vectors.
    threading.Thread(target=naturali.restore_indexes, name="naturali-restore", daemon=True).start()
    # Closing the services on shutdown saves changed search indexes: the next start reads little.
    app = create_app(naturali, close_on_shutdown=True)
    run_server(app, s.host, s.port, s.shutdown_grace_seconds)


def _start_logging() -> None:
    # uvicorn's own access log prints query strings (filters); naturali.access does not.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(message)s")


def run_server(app: FastAPI, host: str, port: int, grace: float = 30.0) -> None:
    """Serve ``app`` until stopped; the server owns this process, so it sets the process's
    GIL switch interval. On SIGTERM uvicorn stops accepting, lets the requests in flight
    finish for up to ``grace`` seconds, then the app's shutdown closes the services."""
    import uvicorn  # Imported here, like the rest of the server's stack (see serve)

    from naturali.compose import own_process

    own_process()
    # uvicorn re-raises the SIGTERM it handled once it has shut down, to end the process the
    # signal's way (-15); answered by this handler instead, a clean stop exits 0.
    signal.signal(signal.SIGTERM, lambda _signal, _frame: None)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        access_log=False,
        timeout_graceful_shutdown=max(1, round(grace)),
    )
