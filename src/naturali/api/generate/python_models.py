"""Write the Python SDK's response models from the API's contracts (contracts/resources.py),
so that a result's shape is defined once. The SDK must not import the server (nor the
contracts, which build themselves from the server's domain objects), so its models are
generated, like its ``search_knowledge`` and the TypeScript SDK; each accepts fields a newer
server adds (``extra="allow"``). ``bash scripts/sdk`` runs it; a test fails when the committed
file is stale.

    python -m naturali.api.generate.python_models > client/src/naturali_client/_models.py
"""

from __future__ import annotations

import json
import textwrap
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from naturali.contracts import resources as contracts

# The SDK's name for each contract it returns, in dependency order.
MODELS: dict[str, type[BaseModel]] = {
    "Project": contracts.ProjectOut,
    "Token": contracts.TokenCreated,
    "PagesRead": contracts.PagesRead,
    "Document": contracts.DocumentOut,
    "MemoryStore": contracts.MemoryStoreOut,
    "Passage": contracts.Passage,
    "PassageList": contracts.PassageList,
    "Memory": contracts.MemoryOut,
    "TermMatch": contracts.TermMatch,
    "Explanation": contracts.Explanation,
    "DocumentKnowledgeResult": contracts.DocumentKnowledgeResult,
    "MemoryKnowledgeResult": contracts.MemoryKnowledgeResult,
    "KnowledgeSearchResponse": contracts.KnowledgeSearchResponse,
    "SourceRun": contracts.SourceRun,
    "Source": contracts.SourceOut,
}
# A field only some answers carry: the secret, in the answer that created the token.
OPTIONAL = {("Token", "token")}
# Docstrings the SDK's model says instead of its contract's.
DOCSTRINGS = {
    "Token": "A token as listed; ``token`` (the secret) only in the answer that created it.",
}
# What the SDK adds to a model for its callers' convenience.
EXTRA = {
    "MemoryKnowledgeResult": '''
    @property
    def path(self) -> None:
        """Memories have no path; present so code can read ``hit.path`` on any result."""
        return None
''',
}
_NAMES = {model: name for name, model in MODELS.items()}

HEADER = '''"""Typed responses of the SDK, generated from the API's contracts by ``python -m
naturali.api.generate.python_models``: do not edit."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer servers may add fields
'''


def type_source(annotation: Any) -> str:
    """An annotation as source, contract classes by their SDK names."""
    if annotation is type(None):
        return "None"
    if annotation is Any:
        return "Any"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _NAMES[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        extras = [m for m in annotation.__metadata__ if isinstance(m, FieldInfo)]
        discriminator = extras[0].discriminator if extras else None
        inner = type_source(args[0])
        return f'Annotated[{inner}, Field(discriminator="{discriminator}")]'
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_source(a) for a in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(json.dumps(a) for a in args)}]"
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(type_source(a) for a in args)}]"
    if isinstance(annotation, type):
        return annotation.__name__
    raise TypeError(f"no SDK type for {annotation!r}")


def _field(model: str, name: str, info: FieldInfo) -> str:
    kind = type_source(info.annotation)
    if (model, name) in OPTIONAL:
        return f"    {name}: {kind} | None = None\n"
    if info.default_factory in (list, dict):
        default = " = []" if info.default_factory is list else " = {}"
    elif info.is_required():
        default = ""
    else:
        value = info.default
        default = f" = {json.dumps(value) if isinstance(value, str) else repr(value)}"  # as ruff
    line = f"    {name}: {kind}{default}\n"
    if len(line) > 101 and kind.startswith("list[Annotated["):  # as ruff format wraps it
        inner = kind.removeprefix("list[Annotated[").removesuffix("]]")
        kind = f"list[\n        Annotated[\n            {inner}\n        ]\n    ]"
    comment = ""
    if info.description:
        lines = textwrap.wrap(info.description, 90)
        comment = "".join(f"    # {line}\n" for line in lines)
    return f"{comment}    {name}: {kind}{default}\n"


def _model(name: str, contract: type[BaseModel]) -> str:
    doc = _docstring(DOCSTRINGS.get(name, contract.__doc__ or ""))
    fields = "".join(_field(name, f, info) for f, info in contract.model_fields.items())
    return f"\n\nclass {name}(_Model):\n{doc}{fields}{EXTRA.get(name, '')}"


def _docstring(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    lines = textwrap.wrap(text, 88)
    body = "\n    ".join(lines)
    return f'    """{body}"""\n\n'


def source() -> str:
    return HEADER + "".join(_model(n, c) for n, c in MODELS.items())


def main() -> None:
    print(source(), end="")


if __name__ == "__main__":
    main()
