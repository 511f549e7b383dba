"""``naturali admin``: users, tokens, projects and members, straight on the data dir."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from naturali.cli.common import (
    DataDir,
    MemoryStoreIds,
    PathPrefixes,
    errors,
    limits,
    local_service,
    print_json,
    settings,
)
from naturali.contracts.glossary import description
from naturali.model import WHOLE

ProjectId = Annotated[str, typer.Argument(help=description("parameter", "project_id"))]
UserId = Annotated[str, typer.Argument(help=description("parameter", "user_id"))]

app = typer.Typer(
    rich_markup_mode=None,
    help="Manage users, tokens, projects and members on the data dir.",
    no_args_is_help=True,
)
users = typer.Typer(rich_markup_mode=None, help="Users and their tokens.", no_args_is_help=True)
projects = typer.Typer(rich_markup_mode=None, help="Projects and members.", no_args_is_help=True)
app.add_typer(users, name="user")
app.add_typer(projects, name="project")


@users.command("create")
def create_user(
    name: Annotated[str, typer.Argument(help="The user's name")],
    data_dir: Annotated[Path | None, DataDir] = None,
) -> None:
    """Create a user; prints its id and token (the token is shown once)."""
    with errors():
        user, token = local_service(data_dir).users.create(name)
    print_json({"id": user.id, "name": user.name, "token": token})


@users.command("token")
def create_token(user_id: UserId, data_dir: Annotated[Path | None, DataDir] = None) -> None:
    """Issue another token for a user."""
    with errors():
        token = local_service(data_dir).users.new_token(user_id)
    print_json({"user_id": user_id, "token": token})


@projects.command("create")
def create_project(
    name: Annotated[str, typer.Argument(help=description("ProjectCreate", "name"))],
    owner: Annotated[str, typer.Option(help="User id of the owner")],
    embedding_model: Annotated[
        str | None,
        typer.Option(help=description("ProjectCreate", "embedding_model")),
    ] = None,
    data_dir: Annotated[Path | None, DataDir] = None,
) -> None:
    """Create a project owned by a user."""
    with errors():
        services = local_service(data_dir)
        if embedding_model is not None:
            services.model_changes.check(embedding_model)
        user = services.users.get(owner)
        project, _ = services.projects.create(user, name, embedding_model)
    model = services.embedders.name_of(project)
    print_json({"id": project.id, "name": project.name, "owner": owner, "embedding_model": model})


@projects.command("list")
def list_projects(
    user_id: Annotated[str, typer.Option("--user", help="Whose projects")],
    data_dir: Annotated[Path | None, DataDir] = None,
) -> None:
    """The projects a user is a member of, with their role."""
    with errors():
        services = local_service(data_dir)
        rows = services.projects.list(services.users.get(user_id))
    print_json([{"id": p.id, "name": p.name, "role": m.role} for p, m in rows])


@projects.command("add-member")
def add_member(
    project_id: ProjectId,
    user_id: UserId,
    role: Annotated[str, typer.Option(help="owner, editor or viewer")] = "viewer",
    path_prefix: Annotated[list[str] | None, PathPrefixes] = None,
    memory_store_id: Annotated[list[str] | None, MemoryStoreIds] = None,
    data_dir: Annotated[Path | None, DataDir] = None,
) -> None:
    """Add a member to a project, or change their role and what of it they reach."""
    with errors():
        services = local_service(data_dir)
        owner = services.auth.acting_user(project_id, None)
        # Imported here: the request models (pydantic) load with the service, not for --help.
        from naturali.service.requests import MemberRole

        grant = MemberRole(role=role, **limits(path_prefix, memory_store_id)).grant(WHOLE)
        member = services.projects.put_member(owner, project_id, user_id, role, grant)
    made = {"project_id": project_id, "user_id": user_id, "role": member.role}
    print_json(made | grant.as_dict())


@projects.command("remove-member")
def remove_member(
    project_id: ProjectId, user_id: UserId, data_dir: Annotated[Path | None, DataDir] = None
) -> None:
    """Remove a member from a project (the last owner stays)."""
    with errors():
        services = local_service(data_dir)
        owner = services.auth.acting_user(project_id, None)
        services.projects.remove_member(owner, project_id, user_id)
    print_json({"project_id": project_id, "user_id": user_id, "removed": True})


@app.command("migrate")
def migrate(
    data_dir: Annotated[Path | None, DataDir] = None,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help="postgresql://… [env NATURALI_DATABASE_URL]"),
    ] = None,
) -> None:
    """Run the store's schema migrations alone (``naturali serve`` also runs them on start)."""
    # Imported here: the other commands should not pay for loading the service stack.
    from naturali.compose import migrate_database

    with errors():
        migrate_database(settings(data_dir=data_dir, database_url=database_url))
    print_json({"migrated": True})


@app.command("reembed")
def reembed(data_dir: Annotated[Path | None, DataDir] = None) -> None:
    """Re-embed chunks whose vectors another embedder model made (after changing embedder)."""
    with errors():
        count = local_service(data_dir).reembed()
    print_json({"reembedded": count})


@app.command("backup")
def backup(
    dest: Annotated[Path, typer.Argument(help="An empty or new directory")],
    data_dir: Annotated[Path | None, DataDir] = None,
) -> None:
    """Copy a data dir consistently while its server runs (catalog, files, each store's
    state and vault with its Git history); the embedded store only."""
    # Imported here: the other commands should not pay for loading the service stack.
    from naturali.compose import backup_data_dir

    with errors():
        backup_data_dir(settings(data_dir=data_dir), dest.resolve(), typer.echo)
    print_json({"backup": str(dest.resolve())})


@app.command("restore")
def restore(
    backup_dir: Annotated[Path, typer.Argument(help="A directory naturali admin backup made")],
    data_dir: Annotated[Path | None, DataDir] = None,
) -> None:
    """Bring a backup into an empty data dir (then start the server on it)."""
    # Imported here: the other commands should not pay for loading the service stack.
    from naturali.compose import restore_data_dir

    target = settings(data_dir=data_dir).data_dir
    with errors():
        restore_data_dir(backup_dir.resolve(), target)
    print_json({"restored": str(target)})
