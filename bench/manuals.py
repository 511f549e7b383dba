"""Passages in their context, on real PDFs: a project of long manuals whose sections all say
"Options", and questions that name the manual.

The Git manual's pages for its ``--commands`` longest commands (``/usr/share/man/man1``,
formatted by groff), laid out as HTML (a heading a section, each option a definition) and
printed to PDF by Chromium, are uploaded as PDFs into one project (or, with ``--format html``,
as the HTML itself, whose headings the chunker reads). Each question names a command and asks
about up to ``--per-command`` of its options, in the words of the option's description (many
options — ``--quiet``, ``--verbose``, ``--no-edit`` — say the same words in many commands); its
answer is the command's document and the page the option is described on. Prints the right
document in the top 10, the right page in the top 10, and the page's MRR@10.

    python bench/manuals.py [--commands 40] [--per-command 5] [--format pdf|html]

Run it on two checkouts to compare them (``PYTHONPATH=OTHER/src python bench/manuals.py``).
Needs ``groff`` and ``chromium``.
"""

from __future__ import annotations

import argparse
import gzip
import html
import random
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import service  # noqa: E402
from naturali.service.corpus.documents import Upload  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402

MAN = Path("/usr/share/man/man1")
_SECTION = re.compile(r"^[A-Z][A-Z ]+$")
_OPTION = re.compile(r"^ {7}(-\S.*)$")
_DESCRIBED = re.compile(r"^ {11}(\S.*)$")


@dataclass(frozen=True)
class Question:
    command: str
    text: str
    phrase: str  # the first words of the answer
    page: int | None = None  # the PDF page it is on


def manual_text(page: Path) -> str:
    man = gzip.decompress(page.read_bytes())
    out = subprocess.run(
        ["groff", "-man", "-Tutf8", "-P-cbou"], input=man, capture_output=True, check=True
    )
    return out.stdout.decode("utf-8", "replace")


def sections(text: str) -> list[tuple[str, list[str]]]:
    """The page's sections, each its heading and lines (the header and footer lines left out)."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines()[1:-1]:
        if _SECTION.match(line):
            out.append((line.strip(), []))
        elif out:
            out[-1][1].append(line)
    return out


def options(lines: list[str]) -> list[tuple[str, str]]:
    """An OPTIONS section's options: each its name line and its description's words."""
    found: list[tuple[str, list[str]]] = []
    for line in lines:
        if m := _OPTION.match(line):
            found.append((m.group(1).strip(), []))
        elif (m := _DESCRIBED.match(line)) and found:
            found[-1][1].append(m.group(1))
    return [(name, " ".join(" ".join(words).split())) for name, words in found if words]


def as_html(command: str, parts: list[tuple[str, list[str]]]) -> str:
    body = []
    for heading, lines in parts:
        body.append(f"<h2>{html.escape(heading)}</h2>")
        described = options(lines) if heading == "OPTIONS" else []
        if described:
            items = "".join(
                f"<dt>{html.escape(name)}</dt><dd>{html.escape(text)}</dd>"
                for name, text in described
            )
            body.append(f"<dl>{items}</dl>")
        else:
            body.append(f"<pre>{html.escape(chr(10).join(lines).strip())}</pre>")
    head = f"<head><title>{command}</title></head>"
    return f"<html>{head}<body><h1>{command}</h1>{''.join(body)}</body></html>"


def print_pdf(page: Path, out: Path) -> None:
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={out}",
            page.as_uri(),
        ],
        capture_output=True,
        check=True,
    )


def questions_of(command: str, parts: list[tuple[str, list[str]]], per: int) -> list[Question]:
    """Up to ``per`` of the command's options, asked in their description's first words."""
    described = [o for h, lines in parts if h == "OPTIONS" for o in options(lines)]
    described = [(n, d) for n, d in described if len(d.split()) >= 8]
    chosen = random.Random(command).sample(described, min(per, len(described)))
    spoken = command.replace("-", " ", 1)
    return [
        Question(command, f"{spoken}: {' '.join(d.split()[:12])}", " ".join(d.split()[:8]))
        for _, d in chosen
    ]


def answer_page(pages: list[str], phrase: str) -> int | None:
    folded = " ".join(phrase.split())
    for number, text in enumerate(pages, 1):
        if folded in " ".join(text.split()):
            return number
    return None


def build(commands: int, per: int, folder: Path, form: str) -> tuple[list[Path], list[Question]]:
    import pypdfium2

    pages = sorted(MAN.glob("git-*.1.gz"), key=lambda p: p.stat().st_size, reverse=True)
    files, asked = [], []
    for page in pages[:commands]:
        command = page.name.removesuffix(".1.gz")
        parts = sections(manual_text(page))
        source = folder / f"{command}.html"
        source.write_text(as_html(command, parts))
        pdf = folder / f"{command}.pdf"
        print_pdf(source, pdf)
        texts = [p.get_textpage().get_text_range() for p in pypdfium2.PdfDocument(pdf)]
        for q in questions_of(command, parts, per):
            number = answer_page(texts, q.phrase)
            if number is not None:
                asked.append(Question(q.command, q.text, q.phrase, number))
        files.append(pdf if form == "pdf" else source)
    return files, asked


def _answers(content: str, page: int | None, q: Question) -> bool:
    """A PDF's hit answers on the right page; an HTML one (one page) holding the answer."""
    if page is not None:
        return page == q.page
    return " ".join(q.phrase.split()[:5]) in " ".join(content.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=40)
    parser.add_argument("--per-command", type=int, default=5)
    parser.add_argument("--format", choices=("pdf", "html"), default="pdf")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="naturali-manuals-"))
    files, asked = build(args.commands, args.per_command, folder, args.format)
    naturali, user = service(folder / "data")
    project, _ = naturali.projects.create(user, "manuals")
    for file in files:
        upload = Upload(file.read_bytes(), file.name, f"/man/{file.name}", None)
        naturali.documents.create_many(user, project.id, [upload])
    while naturali.ingestion.run_once():
        pass
    doc_hits, page_hits, reciprocal = [], [], []
    for q in asked:
        request = SearchRequest(query=q.text, limit=10, include_memories=False)
        hits = naturali.search.search(user, project.id, request)
        right = [h for h in hits if h.path.split("/")[-1].rsplit(".", 1)[0] == q.command]
        on_page = [h for h in right if _answers(h.content, h.page, q)]
        doc_hits.append(bool(right))
        page_hits.append(bool(on_page))
        reciprocal.append(1 / (hits.index(on_page[0]) + 1) if on_page else 0.0)
    what = "passage" if args.format == "html" else "page"
    print(
        f"manuals: documents={len(files)} questions={len(asked)} format={args.format} "
        f"document@10={statistics.fmean(doc_hits):.3f} {what}@10={statistics.fmean(page_hits):.3f} "
        f"mrr@10={statistics.fmean(reciprocal):.3f}"
    )
    naturali.close()


if __name__ == "__main__":
    main()
