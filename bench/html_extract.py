"""Which reader keeps a docs page's text and drops its chrome: naturali's HTML reader
(``ingest/formats/html.py``) against trafilatura, on a real docs tree (Valgrind's manual,
``/usr/share/doc/valgrind/html``, or ``--site DIR``). For each reader: the share of its
text that is boilerplate (lines found on more than half the pages: navigation, footers), the
share of the pages' paragraph words it kept (``<p>``, ``<li>``, ``<pre>``: the content), and
its CPU time.

    python bench/html_extract.py [--site DIR]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import lxml.html
import trafilatura

from naturali.ingest.extract import extract


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--site", type=Path, default=Path("/usr/share/doc/valgrind/html"))
    args = parser.parse_args()
    pages = {p.name: p.read_bytes() for p in sorted(args.site.glob("*.html"))}
    readers: dict[str, Callable[[bytes], str]] = {
        "naturali (lxml, main text)": lambda b: extract(b, "page.html").pages[0].text,
        "trafilatura 2 (favor recall)": lambda b: (
            trafilatura.extract(
                b.decode("utf-8", "replace"), favor_recall=True, include_tables=True
            )
            or ""
        ),
    }
    content = {name: _content_words(body) for name, body in pages.items()}
    print(f"{len(pages)} pages from {args.site}")
    for reader, read in readers.items():
        started = time.process_time()
        texts = {name: read(body) for name, body in pages.items()}
        seconds = time.process_time() - started
        lines = Counter(
            line
            for text in texts.values()
            for line in {x.strip() for x in text.splitlines()}
            if line
        )
        common = {line for line, n in lines.items() if n > len(pages) / 2}
        total = sum(len(t) for t in texts.values())
        chrome = sum(
            len(line) for t in texts.values() for line in t.splitlines() if line.strip() in common
        )
        kept = sum(len(content[n] & set(texts[n].split())) for n in pages)
        wanted = sum(len(words) for words in content.values())
        print(
            f"{reader}: boilerplate {chrome / max(total, 1):.3f} of its text, "
            f"content words kept {kept / max(wanted, 1):.3f}, {seconds:.2f} s CPU"
        )


def _content_words(body: bytes) -> set[str]:
    tree = lxml.html.fromstring(body)
    return {w for node in tree.iter("p", "li", "pre") for w in node.text_content().split()}


if __name__ == "__main__":
    main()
