"""What was read how: each page of a paged file from its text layer, by OCR, empty (blank, or
no text by either), or left unread by the OCR budget (service/corpus/ocr_budget.py) — the
document's ``reading`` and the warnings that say it, so that nothing is skipped in silence
and a passage read by OCR can be told from one read from text (its page is in
``ocr_pages``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from naturali.ingest import ocr


@dataclass(frozen=True)
class Reading:
    """The pages read from a text layer (a count), by OCR, empty (no text by either), still
    waiting for OCR (read in the background job), and left unread by the OCR budget."""

    text_pages: int = 0
    ocr_pages: list[int] = field(default_factory=list)
    empty_pages: list[int] = field(default_factory=list)
    ocr_pending: list[int] = field(default_factory=list)
    ocr_skipped: list[int] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        pages: list[tuple[int | None, str]],
        scans: list[int],
        ocr_texts: dict[int, str | None] | None,
    ) -> Reading:
        """``pages``, OCR's text in place; ``scans``: the pages without a text layer that are
        not blank; ``ocr_texts``: what OCR read on them (None: not read yet — pending when this
        server has OCR; a page's None: not read, over the OCR budget)."""
        scanned = set(scans)
        pending = list(scans) if ocr_texts is None and ocr.available() else []
        skipped = [n for n in scans if ocr_texts is not None and ocr_texts.get(n, "") is None]
        has_text = {n for n, t in pages if t.strip()}
        accounted = has_text | set(pending) | set(skipped)
        return cls(
            text_pages=sum(1 for n, t in pages if n not in scanned and t.strip()),
            ocr_pages=[n for n in scans if n in has_text],
            empty_pages=[n for n, _ in pages if n is not None and n not in accounted],
            ocr_pending=pending,
            ocr_skipped=skipped,
        )

    def warnings(self, scans: list[int], what: str) -> list[str]:
        """What a reader of the document must know: pages read by OCR (check before quoting),
        waiting for it, or left without text; ``what`` names the file ("the PDF")."""
        notes = []
        if self.ocr_skipped:
            notes.append(
                f"ocr_skipped: {_pages(self.ocr_skipped)} were not read by OCR, over the "
                "document's OCR page cap or the project's hourly OCR budget (ocr_document_pages, "
                "ocr_project_pages_per_hour); they are not searchable"
            )
        if self.ocr_pending:
            notes.append(f"ocr_pending: {_pages(self.ocr_pending)} being read by OCR")
        if self.ocr_pages:
            notes.append(
                f"ocr: {_pages(self.ocr_pages)} had no text layer and were read by OCR: "
                "check a passage from them before quoting it"
            )
        unread = [n for n in scans if n in self.empty_pages]
        if self.text_pages + len(self.ocr_pages) + len(self.ocr_pending) == 0 and not (
            self.ocr_skipped
        ):
            hint = "" if ocr.available() or not scans else f"; {ocr.EXTRA} reads scanned pages"
            why = "no text, not even by OCR" if ocr.available() and scans else "no extractable text"
            notes.append(
                f"no_text_layer: {what} has {why}; it was stored with zero chunks and is not "
                f"searchable{hint}"
            )
        elif unread and not ocr.available():
            notes.append(
                f"no_text_layer: {_pages(unread)} have no text layer and are not searchable; "
                f"{ocr.EXTRA} reads scanned pages"
            )
        elif unread:
            notes.append(f"empty: {_pages(unread)} had no text, not even by OCR")
        return notes


def _pages(numbers: list[int]) -> str:
    listed = ", ".join(str(n) for n in numbers[:20]) + (" …" if len(numbers) > 20 else "")
    return f"page(s) {listed}"
