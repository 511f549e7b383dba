"""The catalogue: every operation of the HTTP API declared once (catalogue/operation.py says
what an entry is). The routes (api/routes.py), the OpenAPI document, the audit trail and the
one check of roles are made from ``ENTRIES``; the SDK is checked against them
(tests/test_catalogue.py). ``TOOLS`` — the knowledge search, the reads that act on a hit and
the records tools of a memory store — are also the MCP tools and the ``naturali knowledge``
commands, with their descriptions."""

from __future__ import annotations

from naturali.catalogue.documents import DOCUMENTS
from naturali.catalogue.knowledge import KNOWLEDGE
from naturali.catalogue.memories import MEMORY_STORES
from naturali.catalogue.operation import Operation
from naturali.catalogue.projects import PROJECTS
from naturali.catalogue.records import RECORDS
from naturali.catalogue.sources import SOURCES

TOOLS: tuple[Operation, ...] = (*KNOWLEDGE, *RECORDS)
# A fixed path before a slot that could take it: /documents/folders is no document's id.
ENTRIES: tuple[Operation, ...] = (
    *PROJECTS,
    *DOCUMENTS,
    *MEMORY_STORES,
    *SOURCES,
    *TOOLS,
)
BY_NAME = {op.name: op for op in TOOLS}
