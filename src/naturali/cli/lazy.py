"""Commands that load when one is used: ``naturali --help`` lists a group, or a command,
without importing what it is generated from (pydantic, the catalogue, SearchRequest)."""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer._click import Command, Context  # typer vendors click: its groups take these
from typer.core import TyperCommand, TyperGroup


class LazyGroup(TyperGroup):
    """The commands of the Typer ``app`` in ``module``, loaded on first use."""

    module = ""

    @classmethod
    def of(cls, module: str) -> type[LazyGroup]:
        return type(f"Lazy_{module.rsplit('.', 1)[-1]}", (cls,), {"module": module})

    def _loaded(self) -> TyperGroup:
        # A documented lazy import: the group's module is imported when a command is used.
        app = importlib.import_module(self.module).app
        group: TyperGroup = typer.main.get_group(app)
        return group

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self._loaded().list_commands(ctx))

    def get_command(self, ctx: Context, cmd_name: str) -> Any:
        return self._loaded().get_command(ctx, cmd_name)


class LazyCommand(TyperCommand):
    """A command whose options load when it is used: listed in ``naturali --help`` by its
    one-line help alone, its parameters made (from a request model) only to parse its own
    arguments or show its own help."""

    def __init__(self, name: str, module: str, attribute: str, help: str) -> None:
        super().__init__(name, help=help)
        self._module, self._attribute = module, attribute

    def _loaded(self) -> Command:
        # A documented lazy import: the command's module is imported when it is used.
        function = getattr(importlib.import_module(self._module), self._attribute)
        app = typer.Typer(rich_markup_mode=None)
        app.command(self.name)(function)
        command: Command = typer.main.get_command(app)
        return command

    def make_context(  # type: ignore[override]
        self, info_name: str | None, args: list[str], **extra: Any
    ) -> Context:
        return self._loaded().make_context(info_name, args, **extra)
