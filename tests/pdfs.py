"""Real PDFs made with fpdf2 for the tests."""

from __future__ import annotations

from fpdf import FPDF


def text_pdf(pages: list[str], title: str | None = None) -> bytes:
    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def scanned_pdf(page_count: int = 2) -> bytes:
    """Pages with drawings only: no text layer, as a scan would be."""
    pdf = FPDF()
    for i in range(page_count):
        pdf.add_page()
        pdf.set_fill_color(30 * i, 90, 160)
        pdf.rect(20, 20, 120, 80, style="F")
    return bytes(pdf.output())
