"""HTML with lxml: the main text (``<main>``, ``<article>``, else ``<body>``), headings kept as
Markdown headings so chunks stay inside their section, preformatted text fenced with its line
breaks, table rows one per line; scripts, styles, navigation, headers, footers and forms
dropped. The title from ``<title>``, else the first ``<h1>``. lxml's HTML parser declares no
entities and fetches nothing."""

from __future__ import annotations

from collections.abc import Iterator

import lxml.html
from lxml.etree import ParserError, _Element

from naturali.ingest.formats import FormatError, LaidOut, Pages, Rows, heading, laid

DROPPED = [
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "iframe",
    "svg",
    "button",
    "select",
    "object",
    "embed",
    "canvas",
]
HEADINGS = {f"h{n}": n for n in range(1, 7)}
BLOCKS = set(HEADINGS) | set(
    [
        "p",
        "li",
        "dt",
        "dd",
        "blockquote",
        "figcaption",
        "caption",
        "pre",
        "tr",
        "div",
        "section",
        "article",
        "main",
        "body",
        "ul",
        "ol",
        "dl",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "figure",
        "address",
        "details",
        "summary",
        "hr",
        "br",
    ]
)


def read(data: bytes) -> tuple[Pages, str | None]:
    root = parse(data)
    text, title = html_laid_out(root)
    return [(None, text)], title


def parse(data: bytes) -> _Element:
    parser = lxml.html.HTMLParser(remove_comments=True, no_network=True)
    try:
        root = lxml.html.fromstring(data, parser=parser)
    except (ParserError, ValueError) as exc:
        raise FormatError("invalid_file", f"the HTML could not be read: {exc}") from exc
    return root


def html_text(root: _Element) -> tuple[str, str | None]:
    """The page's main text as Markdown-like blocks, and its title."""
    page, title = html_laid_out(root)
    return page.text, title


def html_laid_out(root: _Element) -> tuple[LaidOut, str | None]:
    """The page's main text as Markdown-like blocks with its tables marked, and its title."""
    title_element = root.find(".//title")
    title = " ".join((title_element.text_content() if title_element is not None else "").split())
    for element in list(root.iter(*DROPPED)):
        element.drop_tree()
    main = next(iter(root.iter("main", "article")), None)
    if main is None:
        main = root.find(".//body")
    parts = list(_blocks(main if main is not None else root))
    if not title:
        title = next(
            (p.lstrip("# ") for p in parts if isinstance(p, str) and p.startswith("# ")), ""
        )
    return laid(parts), title or None


def _blocks(element: _Element) -> Iterator[str | Rows]:
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag in HEADINGS:
        yield heading(HEADINGS[tag], element.text_content())
    elif tag == "pre":
        yield "```\n" + element.text_content().strip("\n") + "\n```"
    elif tag == "table":
        yield _table(element)
    elif tag == "tr":  # a row outside any table
        yield _row(element)
    elif not any(_is_block(c) for c in element.iterdescendants()):
        yield " ".join(element.text_content().split())
    else:
        yield _inline(element.text)
        for child in element:
            yield from _blocks(child) if _is_block(child) else [_inline(_text(child))]
            yield _inline(child.tail)


def _table(table: _Element) -> Rows:
    """A table's rows; those of its ``thead``, or its first when that is all ``th`` cells,
    head its columns."""
    rows = list(table.iter("tr"))
    head = [r for r in rows if r.getparent() is not None and r.getparent().tag == "thead"]
    if not head and rows and rows[0].findall("./th") and not rows[0].findall("./td"):
        head = rows[:1]
    return Rows([_row(r) for r in head], [_row(r) for r in rows if r not in head])


def _row(row: _Element) -> str:
    cells = [c for c in row if isinstance(c.tag, str) and c.tag in ("td", "th")]
    return " | ".join(" ".join(c.text_content().split()) for c in cells)


def _is_block(element: _Element) -> bool:
    return isinstance(element.tag, str) and element.tag in BLOCKS


def _text(element: _Element) -> str:
    return element.text_content() if isinstance(element.tag, str) else ""


def _inline(text: str | None) -> str:
    return " ".join((text or "").split())
