"""One vocabulary across the CLI: the same thing has one spelling in every command (the
project is --project-id, a store --store-id; an earlier release's spelling is still read),
dates are options, and every command that reads can print JSON."""

from __future__ import annotations

import typer.main
from typer._click import Context
from typer._click import core as click

from naturali.cli.main import RENAMED, app, canonical

# Commands that read, by their path; each prints JSON with --json (or only JSON).
WRITES = {"create", "update", "delete", "sync", "revoke", "put", "remove", "save", "correct"}
WRITES |= {"withdraw", "resume", "ingest", "serve", "mcp", "backup", "restore", "bootstrap"}
WRITES |= {"reembed", "mutation", "migrate", "token", "add-member", "remove-member"}
# Read commands whose only output is JSON.
JSON_ONLY = {"admin project list", "sources get"}


def _commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}

    def walk(group: click.Command, prefix: str) -> None:
        for name in group.list_commands(Context(group)):  # type: ignore[attr-defined]
            command = group.get_command(Context(group), name)  # type: ignore[attr-defined]
            assert command is not None
            if hasattr(command, "list_commands"):  # a group
                walk(command, f"{prefix}{name} ")
            else:  # a command loaded on first use is loaded here, to be read whole
                loaded = getattr(command, "_loaded", None)
                found[prefix + name] = loaded() if loaded else command

    walk(typer.main.get_group(app), "")
    return found


def test_one_spelling_of_each_option_everywhere() -> None:
    spelled: dict[str, set[str]] = {}
    for path, command in _commands().items():
        for param in command.params:
            if param.param_type_name == "option":
                flags = {f for f in param.opts if f.startswith("--")}
                assert not flags & set(RENAMED), (path, flags)  # only today's spellings
                spelled.setdefault(param.name or "", set()).update(flags)
    for name in ("project_id", "store_id", "as_json", "base_url", "token", "limit"):
        assert len(spelled.get(name, set())) <= 1, (name, spelled[name])


def test_dates_are_options_and_every_read_command_prints_json() -> None:
    for path, command in _commands().items():
        arguments = [p.name for p in command.params if p.param_type_name == "argument"]
        assert not {"date", "since", "until"} & set(arguments), path
        if path.split()[-1] not in WRITES and path not in JSON_ONLY:
            options = {f for p in command.params if p.param_type_name == "option" for f in p.opts}
            assert "--json" in options, f"naturali {path} has no --json"


def test_an_earlier_spelling_is_read_as_todays() -> None:
    given = ["sync", "dir", "--project", "p1", "--store=s1", "--projects", "--path", "/x/"]
    assert canonical(given) == [
        "sync", "dir", "--project-id", "p1", "--store-id=s1", "--projects", "--path", "/x/"
    ]  # fmt: skip
