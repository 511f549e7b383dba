"""PDF pages read a second: PDFium (pypdfium2, what naturali reads with) against pypdf (what
it read with before; the ``bench`` extra installs it), on a 160-page report made with fpdf2
(an annual report's length, a page of dense text each), in this process, CPU time.

    python bench/pdf.py [--pages 160] [--runs 3] [--file REPORT.pdf]

``--file`` measures a real PDF instead (an annual report from a filings site: their fonts and
layout cost a pure-Python reader far more than fpdf2's plain pages do).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from naturali.ingest.formats import pdf as pdfium_reader  # noqa: E402
from pdfs import text_pdf  # noqa: E402


def report(pages: int) -> bytes:
    return text_pdf(
        [
            f"Item {p}. Management's discussion of results for segment {p % 7}: revenue, "
            f"operating income and cash flows for the fiscal year, with risk factors. " * 12
            for p in range(pages)
        ],
        title="Annual report",
    )


def pypdf_pages(data: bytes) -> int:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    return sum(1 for page in reader.pages if page.extract_text() is not None)


def pdfium_pages(data: bytes) -> int:
    pages, _ = pdfium_reader.read(data)
    return len(pages)


def cpu(read, data: bytes, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        started = time.process_time()
        read(data)
        times.append(time.process_time() - started)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=160)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--file", type=Path, default=None)
    args = parser.parse_args()
    data = args.file.read_bytes() if args.file else report(args.pages)
    if args.file:
        args.pages = pdfium_pages(data)
    after = cpu(pdfium_pages, data, args.runs)
    print(f"{args.pages} pages, {len(data) / 1e6:.1f} MB")
    print(f"PDFium: {after:6.2f} s CPU, {args.pages / after:8.0f} pages/s")
    try:
        before = cpu(pypdf_pages, data, args.runs)
    except ImportError:
        print("pypdf not installed (pip install -e '.[bench]'): no baseline")
        return
    print(f"pypdf:  {before:6.2f} s CPU, {args.pages / before:8.0f} pages/s")
    print(
        f"pdf: pages={args.pages} pdfium_pages_s={args.pages / after:.0f} "
        f"pypdf_pages_s={args.pages / before:.0f} ratio={before / after:.1f}"
    )


if __name__ == "__main__":
    main()
