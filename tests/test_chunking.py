"""Chunking covers every word, keeps offsets exact and stays inside the model's window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from naturali.embed.onnx import OnnxEmbedder
from naturali.ingest.chunk import MAX_TOKENS, chunk_pages
from naturali.ingest.extract import Page, extract

DESIGN = Path(__file__).resolve().parents[2] / "shared" / "docs/DESIGN.md"
SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"


def _texts() -> list[str]:
    texts = [
        "One line without a newline",
        "Ends with a newline\n",
        "# Title\n\nFirst paragraph.\n\nSecond paragraph.\n\n\n",
        "word " * 700,  # one paragraph far over the window, no sentences
        ("A sentence that goes on. " * 120).strip(),
        "# H1\n## H2\ntext right under\n### H3\n\n- a\n- b\n",
    ]
    if DESIGN.exists():
        texts.append(DESIGN.read_text())
    if SCIFACT.exists():
        with SCIFACT.open() as fh:
            texts += [json.loads(next(fh))["text"] for _ in range(20)]
    return texts


@pytest.mark.parametrize("text", _texts())
def test_chunks_cover_text_with_exact_offsets(embedder: OnnxEmbedder, text: str) -> None:
    chunks = chunk_pages([Page(None, text, 0)], embedder.count_tokens)
    covered = [False] * len(text)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert embedder.count_tokens(chunk.text) <= MAX_TOKENS + 8
        for i in range(chunk.start, chunk.end):
            covered[i] = True
    missing = [i for i, c in enumerate(text) if not c.isspace() and not covered[i]]
    assert missing == []
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_pdf_page_offsets_point_into_the_full_text(embedder: OnnxEmbedder) -> None:
    from naturali.ingest.extract import full_text
    from pdfs import text_pdf

    extracted = extract(text_pdf(["first page text", "second page text"]), "x.pdf")
    chunks = chunk_pages(extracted.pages, embedder.count_tokens)
    whole = full_text(extracted)
    assert [c.page for c in chunks] == [1, 2]
    for chunk in chunks:
        assert whole[chunk.start : chunk.end] == chunk.text


CHANGELOG = """Changelog
=========

1.1
---
Fixed the export.
Faster search.
1.0
---
- First release.

# Notes
Written by hand.
## Upgrading
Nothing to do.
"""


def test_every_heading_starts_a_chunk(embedder: OnnxEmbedder) -> None:
    """Setext (``===``/``---`` under a line) and ATX headings alike: no chunk runs from one
    release of a changelog into the next; a title over the first section stays with it."""
    chunks = chunk_pages([Page(None, CHANGELOG, 0)], embedder.count_tokens)
    assert [c.text.split("\n")[0] for c in chunks] == [
        "Changelog",
        "1.0",
        "# Notes",
        "## Upgrading",
    ]
    assert chunks[0].text.endswith("Faster search.")
    assert chunks[1].text == "1.0\n---\n- First release."


def test_a_pdfs_printed_hash_or_rule_is_never_a_heading(embedder: OnnxEmbedder) -> None:
    """Markdown's rules are not a printed page's: a footnote that starts with "#" and a line
    of dashes under a line stay text, and no passage after them is put under them."""
    from pdfs import text_pdf

    first = (
        "Revenue grew in every segment during the year.\n"
        "# 1 All amounts are in millions of dollars.\n\n"
        "Operating income\n----------------\nrose by a tenth."
    )
    second = "Cash flows from operations were strong in the fourth quarter."
    pdf = text_pdf([first, second])
    extracted = extract(pdf, "report.pdf")
    assert extracted.layout == "printed"
    drafts = chunk_pages(extracted.pages, embedder.count_tokens, extracted.layout)
    assert drafts and all(d.context == "" for d in drafts), [d.context for d in drafts]
    assert any("# 1 All amounts" in d.text for d in drafts)
    # The same characters as Markdown are its headings, as they should be there: the next
    # page's passage sits under them.
    pages = [Page(1, first, 0), Page(2, second, len(first) + 2)]
    marked = chunk_pages(pages, embedder.count_tokens)
    assert "Operating income" in marked[-1].context
