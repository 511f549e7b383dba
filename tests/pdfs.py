"""Real PDFs made with fpdf2 for the tests."""

from __future__ import annotations

import functools
import zlib
from typing import Any

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


# Inflates past what a parser worker may hold (limits.MEMORY_BYTES, 3 GiB).
BOMB_BYTES = 5_000_000_000


@functools.cache  # built once a session: a big one takes seconds
def pdf_bomb(inflated: int) -> bytes:
    """A one-page PDF whose content stream inflates to ``inflated`` bytes."""
    deflate, block = zlib.compressobj(1), b"0" * (1 << 24)
    parts = [
        deflate.compress(block[: min(len(block), inflated - at)])
        for at in range(0, inflated, len(block))
    ]
    stream = b"".join(parts) + deflate.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    return out + trailer % (len(objects) + 1, xref)


def page_images(pdf: bytes, scale: float = 2.0) -> list[Any]:
    """The pages of a PDF rendered to images (PIL), as a scanner would see them."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return [document[i].render(scale=scale).to_pil() for i in range(len(document))]
    finally:
        document.close()


def scanned_copy(pdf: bytes, keep_text: set[int] | None = None) -> bytes:
    """An image-only copy of a PDF: each page rendered and placed back as a picture, as a
    scan of the printed document would be; pages in ``keep_text`` (1-based) are not scanned
    but written again as text (a mixed PDF)."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(pdf)
    texts = [source[i].get_textpage().get_text_bounded() for i in range(len(source))]
    source.close()
    out = FPDF()
    out.set_font("helvetica", size=11)
    for number, image in enumerate(page_images(pdf), start=1):
        out.add_page()
        if keep_text and number in keep_text:
            out.multi_cell(0, 6, texts[number - 1].replace("\r\n", "\n"))
        else:
            out.image(image, x=0, y=0, w=out.w, h=out.h)
    return bytes(out.output())


class _Report(FPDF):
    """Every page printed under a running header and over a page number, as a report is."""

    def header(self) -> None:
        self.set_font("helvetica", size=8)
        self.cell(0, 6, "Acme Corporation | Annual Report 2025", new_x="LMARGIN", new_y="NEXT")
        self.ln(4)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("helvetica", size=8)
        self.cell(0, 6, f"Page {self.page_no()}", align="C")


def report_pdf(rows: int = 70, outline: bool = False) -> bytes:
    """A three-page annual report laid out as its author set it: a title in large type (its
    metadata title a word processor's), headings in larger and in bold type, a footnote line
    that starts with "#", and a statement whose rows run on from its first page to the next
    under one column header; ``outline`` adds bookmarks naming its sections."""
    pdf = _Report()
    pdf.set_title("Microsoft Word - ar2025_final.docx")
    pdf.add_page()

    def line(text: str, size: float = 11, style: str = "", bookmark: int | None = None) -> None:
        if bookmark is not None and outline:
            pdf.start_section(text, level=bookmark)
        pdf.set_font("helvetica", style=style, size=size)
        pdf.multi_cell(0, size * 0.55, text, new_x="LMARGIN", new_y="NEXT")

    line("Acme Corporation Annual Report 2025", size=24, style="B")
    pdf.ln(6)
    line("Operations Review", size=16, style="B", bookmark=0)
    pdf.ln(3)
    for topic in ("anvils", "rockets", "magnets"):
        line(f"Our {topic} business grew steadily through the year. " * 6)
        pdf.ln(3)
    line("# 1 Figures are unaudited and rounded to the nearest million.", size=8)
    pdf.ln(3)
    line("Consolidated Statement of Operations", style="B", bookmark=1)
    line("(Millions) 2025 2024 2023", style="B")
    for i in range(rows):
        line(f"Product line {i + 1} sales {1000 + i:,} {900 + i:,} {800 + i:,}")
    pdf.ln(3)
    line("Outlook", size=16, style="B", bookmark=0)
    pdf.ln(3)
    line("Management expects demand for anvils to soften in the coming year. " * 4)
    return bytes(pdf.output())
