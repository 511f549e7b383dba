"""What OCR may cost: a page takes seconds of a core, so a small file of many scanned pages
would hold a server for hours. A document has at most ``document_pages`` pages read by OCR,
and a project at most ``project_pages_per_hour`` on this server in any hour; the pages over
either are not read, and the document's warnings list them (ingest/reading.py)."""

from __future__ import annotations

import threading
import time
from collections import deque

HOUR = 3600.0


class OcrBudget:
    def __init__(self, document_pages: int, project_pages_per_hour: int) -> None:
        self.document_pages = document_pages
        self._per_hour = project_pages_per_hour
        self._read: dict[str, deque[float]] = {}  # project → when its pages were read
        self._lock = threading.Lock()

    def take(self, project_id: str, read_in_document: int) -> bool:
        """Whether one more page of this document may be read by OCR (it is counted if so)."""
        if read_in_document >= self.document_pages:
            return False
        now = time.monotonic()
        with self._lock:
            times = self._read.setdefault(project_id, deque())
            while times and times[0] <= now - HOUR:
                times.popleft()
            if len(times) >= self._per_hour:
                return False
            times.append(now)
            return True
