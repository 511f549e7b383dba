"""The base of every request and result model: described from the glossary."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from naturali.contracts.glossary import description, example


class Described(BaseModel):
    """A contract model: its fields take their description and example from the glossary
    where their definition does not give them."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for name, info in cls.model_fields.items():
            wire_name = info.alias or name
            if info.description is None:
                info.description = description(cls.__name__, wire_name)
            if not info.examples:
                sample = example(cls.__name__, wire_name)
                info.examples = None if sample is None else [sample]
        cls.model_rebuild(force=True, raise_errors=False)
