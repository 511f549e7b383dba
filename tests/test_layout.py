"""A document read as its author laid it out: a PDF's headings from its type and outline, its
running headers and footers out, a statement's column header carried over its pages, a
filing's title from its cover page; a Word or HTML table's header row over every passage of
its rows."""

from __future__ import annotations

import io
from collections.abc import Callable

import docx
import pytest

from conftest import Api
from naturali.ingest.chunk import chunk_pages
from naturali.ingest.extract import Page
from naturali.ingest.formats import Heading, LaidOut, pdf, pdf_title
from naturali.ingest.formats.pdf_layout import laid_out
from naturali.ingest.formats.pdf_lines import Line, joined, on_one_baseline
from naturali.ingest.worker import handle
from pdfs import report_pdf

HEADER = "(Millions) 2025 2024 2023"


def _passages(data: bytes) -> tuple[str, list[tuple[int, str, str]]]:
    out = handle({"filename": "ar2025.pdf", "counter": "wordpiece", "max_chunks": 1000}, data)
    assert "error" not in out
    return out["title"], [(d[4], d[1], d[5]) for d in out["drafts"]]


def test_a_report_is_read_by_its_layout_not_its_characters() -> None:
    title, passages = _passages(report_pdf())
    # The metadata title is a word processor's: the first page's largest type names it.
    assert title == "Acme Corporation Annual Report 2025"
    text = "\n".join(t for _, t, _ in passages)
    assert "Our anvils business" in text and "Product line 70 sales" in text
    # The running header and the page numbers are printed on every page, in no passage.
    assert "Annual Report 2025 |" not in text and "Page 2" not in text
    # The footnote that starts with "#" is text, never a heading over what follows it.
    assert "# 1 Figures are unaudited" in text
    assert not any("unaudited" in context for _, _, context in passages)
    statement = [p for p in passages if "Product line" in p[1]]
    assert {page for page, _, _ in statement} == {1, 2, 3}  # the statement runs over pages
    for _, passage, context in statement:
        # Every passage of the statement is read under its name and its columns' years.
        assert passage.startswith(HEADER) or passage.startswith("Consolidated Statement")
        assert "Consolidated Statement of Operations" in context + passage
    outlook = next(p for p in passages if "demand for anvils" in p[1])
    # A heading in larger type closes the statement: its section is not the statement's.
    assert "Consolidated Statement" not in outlook[2]
    assert outlook[1].startswith("Outlook")


def test_the_outline_names_the_sections_at_its_levels() -> None:
    pages, _, _ = pdf.read(report_pdf(rows=5, outline=True))
    first = pages[0][1]
    assert isinstance(first, LaidOut)
    levels = {h.title: h.level for h in first.headings}
    assert levels["Operations Review"] == 1
    assert levels["Consolidated Statement of Operations"] == 2
    assert levels["Acme Corporation Annual Report 2025"] > 2  # in no bookmark: below them


def _line(text: str, size: float = 10, weight: int = 400, bottom: float = 0) -> Line:
    letters = sum(c.isalnum() for c in text)
    return Line(text, size, weight, weight >= 700, bottom + size, bottom, letters)


def _page(*lines: Line) -> list[Line]:
    """Lines set down a page from its top, 12 points apart."""
    return [
        _line(line.text, line.size, line.weight, bottom=700 - 12 * i)
        for i, line in enumerate(lines)
    ]


def test_a_statements_sections_in_bold_are_rows_of_it_and_numbered_items_nest() -> None:
    body = "The company makes anvils and sells them to coyotes in many deserts."
    page = _page(
        _line("PART II"),
        _line("Item 7. Management's Discussion and Analysis"),
        _line(body),
        _line("Liquidity", weight=700),
        _line(body),
        _line("(Millions) 2025 2024", weight=700),
        _line("Cash Flows from Operating Activities", weight=700),
        _line("Net income 5,363 4,869"),
        _line("Cash Flows from Investing Activities", weight=700),
        _line("Purchases of equipment (1,577) (1,373)"),
    )
    (out,) = laid_out([page * 1], [])
    levels = {h.title: h.level for h in out.headings}
    assert levels["PART II"] < levels["Item 7. Management's Discussion and Analysis"]
    assert levels["Item 7. Management's Discussion and Analysis"] < levels["Liquidity"]
    assert "Cash Flows from Investing Activities" not in levels  # a row of the statement
    (table,) = out.tables
    assert table.header == "(Millions) 2025 2024"
    assert out.text[table.start :].startswith("Cash Flows from Operating Activities")


def test_lines_printed_at_the_edge_of_every_page_are_left_out() -> None:
    pages = [
        _page(
            _line("Acme Corp. 2025 Form 10-K"),
            _line(f"Page {n} text about anvils and what they weigh, in full sentences."),
            _line(f"Sales by region {n} {n + 1}"),  # a table row: never a running line
            _line(str(n + 40)),
        )
        for n in range(1, 5)
    ]
    out = laid_out(pages, [])
    for n, page in enumerate(out, start=1):
        assert "Form 10-K" not in page.text and str(n + 40) not in page.text.split()
        assert f"Sales by region {n} {n + 1}" in page.text


@pytest.mark.parametrize(
    ("cover", "title"),
    [
        (
            "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\n"
            "For the fiscal year ended December 31, 2018\nCommission file number 1-3285\n"
            "Apple Inc.\n(Exact name of Registrant as specified in its charter)",
            "Apple Inc. — Form 10-K for the fiscal year ended December 31, 2018",
        ),
        (
            "FORM 10-Q\nFor the quarterly period ended June 30, 2023\nCORNING INCORPORATED\n"
            "(Exact name of registrant as specified in its charter)",
            "CORNING INCORPORATED — Form 10-Q for the quarterly period ended June 30, 2023",
        ),
        (  # set in two columns; the registrant's name after the cover's rules
            "FORM 10-Q\nFor the quarterly period ended Commission file\nMarch 31, 2021 number "
            "1-5805 ______ JPMorgan Chase & Co.\n(Exact name of registrant as specified in its "
            "charter) ______ Delaware 13-2624428",
            "JPMorgan Chase & Co. — Form 10-Q for the quarterly period ended March 31, 2021",
        ),
        (  # no label: the name under the commission file number
            "FORM 10-K\nFor the fiscal year ended December 31, 2022\nor\n"
            "Commission file number 1-3285\n3M COMPANY\nState of Incorporation: Delaware",
            "3M COMPANY — Form 10-K for the fiscal year ended December 31, 2022",
        ),
        (  # the name is a logo: the label heads no text, and "OR" names nothing
            "FORM 10-K\nFor the fiscal year ended December 31, 2017\nOR\n"
            "Commission File Number 001-02217\n(Exact name of Registrant as specified in its "
            "charter)\nDelaware",
            "Form 10-K for the fiscal year ended December 31, 2017",
        ),
        ("Minutes of the board meeting, 3 May 2025", None),  # no filing's cover
    ],
)
def test_a_filings_cover_page_names_it(cover: str, title: str | None) -> None:
    assert pdf_title.cover_title(cover) == title


def test_a_passage_of_a_statement_is_found_by_its_years(api: Api) -> None:
    project = api.project()
    r = api.upload(project, "/reports/ar2025.pdf", report_pdf(), "ar2025.pdf")
    assert r.status_code == 201, r.text
    r = api.search(project, query="Product line 66 sales in 2025 (millions)", limit=3)
    top = r.json()["results"][0]
    assert top["page"] == 3 and top["title"] == "Acme Corporation Annual Report 2025"
    assert top["content"].startswith(HEADER)


def _word_table(rows: int) -> bytes:
    made = docx.Document()
    made.add_heading("Price list", 1)
    table = made.add_table(rows=rows + 1, cols=3)
    for col, text in enumerate(["Plan", "Monthly price 2025", "Seats"]):
        table.cell(0, col).text = text
    for row in range(1, rows + 1):
        for col, text in enumerate([f"Plan number {row}", f"{row * 7} euros", f"{row} seats"]):
            table.cell(row, col).text = text
    out = io.BytesIO()
    made.save(out)
    return out.getvalue()


def _html_table(rows: int) -> bytes:
    body = "".join(
        f"<tr><td>Plan number {i}</td><td>{i * 7} euros</td><td>{i} seats</td></tr>"
        for i in range(1, rows + 1)
    )
    head = "<thead><tr><th>Plan</th><th>Monthly price 2025</th><th>Seats</th></tr></thead>"
    return f"<html><body><h1>Price list</h1><table>{head}{body}</table></body></html>".encode()


@pytest.mark.parametrize(
    ("make", "filename"), [(_word_table, "prices.docx"), (_html_table, "prices.html")]
)
def test_a_long_tables_header_row_heads_every_passage_of_it(
    make: Callable[[int], bytes], filename: str
) -> None:
    out = handle({"filename": filename, "counter": "wordpiece", "max_chunks": 1000}, make(120))
    passages = [d[1] for d in out["drafts"]]
    assert len(passages) > 3  # the table is split
    assert all(
        p.startswith(("# Price list", "Plan | Monthly price 2025 | Seats")) for p in passages
    )
    assert "Plan number 120 | 840 euros | 120 seats" in passages[-1]


def test_a_line_broken_in_two_on_one_baseline_is_one_line() -> None:
    words = _line("(Dollars in", bottom=500)
    rest = _line("millions)", weight=700, bottom=500.5)
    assert on_one_baseline(words, rest)
    assert not on_one_baseline(words, _line("next line", bottom=488))
    line = joined(words, rest)
    assert (line.text, line.weight, line.letters) == ("(Dollars in millions)", 400, 17)


def test_minor_headings_gather_small_sections_into_one_passage() -> None:
    sections = ["Year 2025 results:", "Sales rose.", "Year 2024 results:", "Sales fell."]
    text = "\n\n".join(sections)
    starts = [text.index(s) for s in sections]

    def headings(minor: bool) -> tuple[Heading, ...]:
        return tuple(
            Heading(starts[i], starts[i] + len(sections[i]), 5, sections[i], minor) for i in (0, 2)
        )

    def passages(minor: bool) -> list[str]:
        page = Page(1, text, 0, headings(minor))
        return [d.text for d in chunk_pages([page], lambda t: len(t.split()), "printed")]

    assert passages(minor=False) == [
        "Year 2025 results:\n\nSales rose.",
        "Year 2024 results:\n\nSales fell.",
    ]
    assert passages(minor=True) == [text]  # small sections read together


def test_a_statement_opening_a_page_is_not_under_the_one_before_it() -> None:
    """Each statement's page opens with its company's name in small type, then the
    statement's name: the second page's first passage is no longer under the first's."""

    def statement(name: str, number: int, offset: int) -> Page:
        lines = ["ACME INC.", name, "Cash 1,200 1,100"]
        text = "\n\n".join(lines)
        starts = [text.index(line) for line in lines]
        headings = (
            Heading(starts[0], starts[0] + len(lines[0]), 6, lines[0], False),
            Heading(starts[1], starts[1] + len(lines[1]), 3, lines[1], False),
        )
        return Page(number, text, offset, headings)

    pages = [statement("BALANCE SHEETS", 1, 0), statement("STATEMENTS OF INCOME", 2, 100)]
    drafts = chunk_pages(pages, lambda t: len(t.split()), "printed")
    assert [(d.page, d.context) for d in drafts] == [(1, ""), (2, "")]


def test_a_column_header_set_over_several_paragraphs_heads_its_table() -> None:
    """A statement's column dates, each over two lines and apart: every line back to the
    sentence above is the table's header."""
    texts = ["Revenue grew in every region this year, as the letter said."]
    texts += ["Years Ended", "December 2,", "2016", "November 27,", "2015"]
    texts += [f"Line item {n} {n},{n}00 {n},{n}50" for n in range(1, 6)]
    bottoms = [700.0 - 12 * i - (30 if i >= 4 else 0) for i in range(len(texts))]  # a gap
    page = [_line(text, bottom=bottom) for text, bottom in zip(texts, bottoms, strict=True)]
    (out,) = laid_out([page], [])
    (table,) = out.tables
    assert table.header == "Years Ended\nDecember 2,\n2016\nNovember 27,\n2015"
    assert out.text[table.start :].startswith("Line item 1")
    assert out.text.startswith(texts[0])


def test_a_first_row_of_a_date_and_its_years_heads_the_table() -> None:
    texts = ["The company sells anvils to coyotes in many deserts, as it always has."]
    texts += ["At December 31, 2025 2024"] + [f"Asset {n} {n},100 {n},050" for n in range(1, 5)]
    (out,) = laid_out([_page(*map(_line, texts))], [])
    assert [t.header for t in out.tables] == ["At December 31, 2025 2024"]
