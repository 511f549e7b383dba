"""The ontology: record types, their aliases and fields. A built-in default, extended per
store by ``<store>/ontology.yaml``::

    types:
      vendor: {aliases: [supplier], kind: page}
    aliases:
      firm: organization
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

DEFAULT_TYPES: dict[str, list[str]] = {
    # pages
    "person": ["people", "human", "contact"],
    "organization": ["company", "org", "business", "organisation"],
    "project": ["initiative"],
    "meeting": ["call", "sync"],
    "source": ["document", "reference"],
    "topic": ["subject", "theme"],
    "note": ["memo"],
    "place": ["location"],
    # claims
    "fact": [],
    "preference": [],
    "decision": [],
    "commitment": ["promise", "todo"],
    "event": ["happening"],
    # relationships
    "works_at": ["employed_by"],
    "attended": [],
    "part_of": [],
    "mentions": [],
}


@dataclass
class Ontology:
    """Maps any type name or alias to its canonical type."""

    canonical: dict[str, str] = field(default_factory=dict)
    issues: list[str] = field(default_factory=list)

    def resolve(self, name: str) -> str:
        key = name.strip().lower()
        return self.canonical.get(key, key)

    def expand(self, name: str) -> set[str]:
        """Every name that means the same type as ``name`` (for filters on raw record types)."""
        target = self.resolve(name)
        return {target} | {alias for alias, canon in self.canonical.items() if canon == target}


def load(store_dir: Path) -> Ontology:
    ontology = Ontology()
    for canon, aliases in DEFAULT_TYPES.items():
        ontology.canonical[canon] = canon
        for alias in aliases:
            ontology.canonical[alias] = canon
    path = store_dir / "ontology.yaml"
    if path.is_file():
        try:
            _extend(ontology, YAML(typ="safe", pure=True).load(path.read_text("utf-8")) or {})
        except (YAMLError, ValueError, TypeError, AttributeError) as exc:
            ontology.issues.append(f"ontology.yaml: {exc}")
    return ontology


def _extend(ontology: Ontology, data: dict[str, Any]) -> None:
    for name, spec in (data.get("types") or {}).items():
        canon = str(name).strip().lower()
        ontology.canonical[canon] = canon
        for alias in (spec or {}).get("aliases") or []:
            ontology.canonical[str(alias).strip().lower()] = canon
    for alias, target in (data.get("aliases") or {}).items():
        ontology.canonical[str(alias).strip().lower()] = ontology.resolve(str(target))
