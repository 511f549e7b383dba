"""A command group whose commands load when one is used: ``naturali --help`` lists the group
without importing what its commands are generated from (pydantic and the catalogue)."""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer._click import Context  # typer vendors click: its groups take this Context
from typer.core import TyperGroup


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
