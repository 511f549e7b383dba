"""A passage is found by its document's title and the headings it sits under, in both legs,
while its ``content`` stays its own text (text/context.py, ingest/chunk.py)."""

from __future__ import annotations

import numpy as np

from conftest import Api
from naturali.contracts.formats import Layout
from naturali.embed.onnx import OnnxEmbedder
from naturali.ingest.chunk import chunk_pages, under_title
from naturali.ingest.extract import Page
from naturali.model import SourceType
from naturali.retrieval.lexical import LexicalIndex
from naturali.text.context import MAX_CONTEXT_CHARS, context_of, in_context
from naturali.text.tokens import query_term_counts


def _words(text: str) -> int:
    return len(text.split()) * 40  # every paragraph its own chunk


def _contexts(text: str, layout: Layout = "prose") -> list[tuple[str, str]]:
    drafts = chunk_pages([Page(None, text, 0)], _words, layout)
    return [(d.context, d.text.split("\n", 1)[0]) for d in drafts]


def test_each_chunk_knows_the_headings_it_sits_under() -> None:
    text = "# Guide\n\nIntro.\n\n## Install\n\nStep.\n\n### Options\n\n-r\n\n## Usage\n\nUse.\n"
    assert _contexts(text) == [
        ("", "# Guide"),
        ("Guide", "## Install"),  # a chunk opening with a heading sits under its parents
        ("Guide › Install", "### Options"),
        ("Guide", "## Usage"),  # a sibling closes the section before it and its children
    ]


def test_setext_and_restructuredtext_levels_and_sections_over_pages() -> None:
    setext = "Title\n=====\n\nSection\n-------\n\nBody one.\n\nBody two.\n"
    assert _contexts(setext)[-1] == ("Title › Section", "Body two.")
    rst = "Intro\n*****\n\nPart\n~~~~\n\nBody.\n\nNext\n~~~~\n\nMore.\n"
    assert _contexts(rst, "rst")[-1] == ("Intro", "Next")  # a sibling of "Part"
    # the second page's first passage is still in the first page's last section
    pages = [Page(1, "# Report\n\n## Risks\n\nText.\n", 0), Page(2, "More risks.\n", 30)]
    assert chunk_pages(pages, _words)[-1].context == "Report › Risks"


def test_code_and_rows_have_no_headings_and_every_document_its_title() -> None:
    source = "def f():\n    pass\n\n\ndef g():\n    pass\n"
    code = chunk_pages([Page(None, source, 0)], _words, "code")
    assert {d.context for d in code} == {""}
    text = "# Guide\n\none two three\n\n## A\n\none two three\n\n### B\n\none two three\n"
    guide = chunk_pages([Page(None, text, 0)], _words)
    drafts = under_title(guide, "Guide")
    assert [d.context for d in drafts] == ["Guide", "Guide", "Guide › A"]  # said once
    assert context_of("T", ["x" * 40] * 10).__len__() <= MAX_CONTEXT_CHARS


def test_what_a_search_reads_of_a_passage() -> None:
    # the first chunk under its title does not say the title twice
    assert in_context("# Guide\n\nIntro.", "Guide") == "# Guide\n\nIntro."
    assert in_context("Step.", "Guide › Install") == "Guide › Install\n\nStep."
    assert in_context("Step.", "") == "Step."


def test_the_lexical_leg_finds_a_passage_by_its_documents_title() -> None:
    index = LexicalIndex()
    title = "Myeloid suppressor cells"
    index.add(0, in_context(f"# {title}\n\nThey expand.", title))
    index.add(1, in_context("A later paragraph about cytokines.", title))
    index.add(2, "A later paragraph about cytokines.")
    scores = index.score(query_term_counts("suppressor cells"), np.ones(3, bool), 3).scores
    assert scores[0] > 0 and scores[1] > 0 and scores[2] == 0
    assert index.lengths().tolist()[0] == 4  # the title not counted twice, nor "they"


MANUAL = """# {command}

{command} {summary}.

## Options

Recursively process every directory below the given one, following no symbolic links.

## Examples

Run it with the verbose flag to print each file as it is handled.
"""


def test_a_question_naming_the_document_finds_its_section(api: Api, embedder: OnnxEmbedder) -> None:
    """Two manuals whose Options sections say the same words: the question that names the
    command finds that command's section first, and the hit's content is its own text."""
    project_id = api.project()
    ids = {}
    for command, summary in [("rsync", "copies files between hosts"), ("chmod", "changes modes")]:
        text = MANUAL.format(command=command, summary=summary)
        ids[command] = api.doc(project_id, f"/man/{command}.md", text)["id"]
    for command in ids:
        r = api.search(project_id, query=f"{command} options recursive directories", limit=2)
        hits = r.json()["results"]
        assert hits[0]["document_id"] == ids[command], hits
        assert hits[0]["content"].startswith("## Options")
    # the vector leg read the same context: the stored vector is that of context and text
    chunks = api.naturali.storage.owner_chunks(project_id, SourceType.DOCUMENT, [ids["chmod"]])
    options = next(c for c in chunks if c.text.startswith("## Options"))
    assert options.context == "chmod"
    read = embedder.embed([in_context(options.text, options.context)])[0]
    assert np.allclose(np.frombuffer(options.vector, np.float32), read, atol=1e-5)


def test_the_nearest_headings_and_the_title_outlast_the_outermost() -> None:
    item = "Item 7. Management's Discussion and Analysis of Financial Condition and Results"
    title = "Acme Inc. — Form 10-K for the fiscal year ended December 31, 2025"
    context = context_of(title, ["PART II", item, "Liquidity"])
    assert context == f"{title} › {item} › Liquidity"
    assert len(context) <= MAX_CONTEXT_CHARS


def test_a_file_stem_is_no_title_in_front_of_the_passages(api: Api) -> None:
    project_id = api.project()
    document = api.doc(project_id, "/corpus/MED-4983.txt", "Cytokines expand suppressor cells.")
    assert document["title"] == "MED-4983"  # shown as the document's name
    chunks = api.naturali.storage.owner_chunks(project_id, SourceType.DOCUMENT, [document["id"]])
    assert [c.context for c in chunks] == [""]  # but read in front of no passage


def test_a_documents_path_is_read_by_the_lexical_leg(api: Api) -> None:
    """A file's stem is in front of no passage, but its words still find the file."""
    project_id = api.project()
    api.doc(project_id, "/filings/ACME_2025_10K.txt", "Revenue rose on anvil sales.")
    api.doc(project_id, "/filings/globex.txt", "Revenue fell on anvil sales.")
    hits = api.search(project_id, query="acme 10k revenue", explain=True).json()["results"]
    assert hits[0]["path"] == "/filings/ACME_2025_10K.txt"
    assert hits[0]["explain"]["lexical_rank"] == 1
    assert hits[0]["explain"]["bm25"] > hits[1]["explain"]["bm25"] > 0


def test_a_heading_the_title_already_says_is_not_said_again() -> None:
    title = "THE BOEING COMPANY — Form 10-K for the fiscal year ended December 31, 2018"
    context = context_of(title, ["THE BOEING COMPANY", "PART II", "Item 8. Financial Statements"])
    assert context == f"{title} › PART II › Item 8. Financial Statements"
    assert context_of("Options for X", ["Opt", "Usage"]) == "Options for X › Opt › Usage"
