"""The Control UI end to end: Debian's chromium, driven by Playwright, against a real
``naturali serve``. Sign in, search and open a PDF hit on its page, upload a document and find
it, grep a record and see its highlighted span, withdraw it and see it gone, chronicle a week in
Europe/Berlin. Screenshots of each page at 1280×800 and a phone's width go to
``bench/results/ui`` (git-ignored)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect, sync_playwright

from pdfs import text_pdf
from records_vault import write
from server import Server, start, stop

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[1] / "bench" / "results" / "ui"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("ui")
    roots = str(tmp_path_factory.getbasetemp())  # the tests' repositories are under it
    running = start(home / "data", home, env={"NATURALI_SOURCES_LOCAL_ROOTS": roots})
    yield running
    stop(running)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail("the Control UI tests need chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(params=list(SIZES))
def page(request: pytest.FixtureRequest, browser: Browser, server: Server) -> Iterator[Page]:
    width, height = SIZES[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    # No external network at run time: every request must go to naturali itself.
    outside: list[str] = []
    context.on(
        "request",
        lambda r: None if r.url.startswith(server.base_url) else outside.append(r.url),
    )
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    opened.size_name = request.param  # type: ignore[attr-defined]
    yield opened
    context.close()
    assert outside == []


def _shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{page.size_name}.png"), full_page=True)  # type: ignore[attr-defined]


def _filters(page: Page) -> None:
    """Open the search's filters (folded away on a phone, so that results come first)."""
    filters = page.locator("details.filters")
    if filters.get_attribute("open") is None:
        filters.locator("summary").click()


def _sign_in(page: Page, server: Server) -> None:
    page.goto(server.base_url + "/ui/")
    page.get_by_label("Token").fill(server.token)
    page.keyboard.press("Enter")  # the keyboard is enough
    page.get_by_role("link", name="demo").click()
    expect(page.get_by_role("heading", name="Search")).to_be_visible()


def test_sign_in_search_and_open_a_pdf_hit_on_its_page(page: Page, server: Server) -> None:
    pdf = text_pdf(
        ["Cover page about nothing in particular.", "Travel is booked through the travel desk."]
    )
    httpx.post(
        f"{server.base_url}/v1/projects/{server.demo_project}/documents",
        headers={"Authorization": f"Bearer {server.token}"},
        files={"file": ("travel.pdf", pdf, "application/pdf")},
        data={"path": f"/policies/travel-{page.size_name}.pdf"},  # type: ignore[attr-defined]
    ).raise_for_status()
    page.goto(server.base_url + "/ui/")
    _shot(page, "sign-in")
    _sign_in(page, server)
    page.get_by_label("Query (empty: fetch mode)").fill("who books travel")
    _filters(page)
    page.get_by_label("Document paths (prefixes)").fill("/policies/")
    page.get_by_role("button", name="Search").click()
    hit = page.locator("article.hit").first
    expect(hit).to_contain_text("(page 2)")
    expect(hit.locator("mark").first).to_have_text("travel", ignore_case=True)
    _shot(page, "search")
    hit.locator("a.hit-link").click()
    focused = page.locator(".hit-focus")  # the hit's chunk, on its page
    expect(focused).to_have_count(1)
    expect(focused).to_contain_text("travel desk")
    expect(focused).to_have_attribute("data-page", "2")
    expect(focused).to_be_in_viewport()
    _shot(page, "document")


def test_upload_a_document_and_find_it(page: Page, server: Server, tmp_path: Path) -> None:
    _sign_in(page, server)
    page.get_by_role("link", name="Documents").click()
    name = f"parking-{page.size_name}.md"  # type: ignore[attr-defined]
    note = tmp_path / name
    note.write_text("# Parking\n\nVisitors park on level minus two, next to the lifts.\n")
    page.get_by_label("File", exact=True).set_input_files(str(note))
    page.get_by_label("Path (default: /file name)").fill(f"/facilities/{name}")
    page.get_by_role("button", name="Upload").click()
    expect(page.get_by_text(f"Uploaded /facilities/{name}")).to_be_visible()
    expect(page.get_by_role("link", name=f"/facilities/{name}")).to_be_visible()
    _shot(page, "documents")
    page.get_by_role("link", name="Search").click()
    page.get_by_label("Query (empty: fetch mode)").fill("where do visitors park")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("article.hit", has_text=f"/facilities/{name}")).to_have_count(1)


def test_a_documents_warnings_show_in_the_list_and_on_its_page(
    page: Page, server: Server, tmp_path: Path
) -> None:
    """Nothing skipped in silence: an empty file says it has no text where it is listed, on
    its page and when it is uploaded."""
    _sign_in(page, server)
    page.get_by_role("link", name="Documents").click()
    name = f"empty-{page.size_name}.md"  # type: ignore[attr-defined]
    (tmp_path / name).write_text("")
    page.get_by_label("File", exact=True).set_input_files(str(tmp_path / name))
    page.get_by_label("Path (default: /file name)").fill(f"/blank/{name}")
    page.get_by_role("button", name="Upload").click()
    expect(page.get_by_text(f"Uploaded /blank/{name}")).to_contain_text("Warning: no_text")
    row = page.locator("tr", has=page.get_by_role("link", name=f"/blank/{name}"))
    expect(row.locator(".status-warning")).to_contain_text("the file holds no text")
    row.get_by_role("link", name=f"/blank/{name}").click()
    expect(page.get_by_role("heading", name=name.removesuffix(".md"))).to_be_visible()
    expect(page.locator(".status-warning")).to_contain_text("not searchable")
    _shot(page, "document-warnings")


def test_a_large_upload_shows_its_progress_then_ready(
    page: Page, server: Server, tmp_path: Path
) -> None:
    _sign_in(page, server)
    page.get_by_role("link", name="Documents").click()
    name = f"manual-{page.size_name}.md"  # type: ignore[attr-defined]
    manual = tmp_path / name
    sections = [f"## Step {n}\n\nTurn valve {n} a quarter clockwise." for n in range(60)]
    manual.write_text("# Manual\n\n" + "\n\n".join(sections))
    page.get_by_label("File", exact=True).set_input_files(str(manual))
    page.get_by_label("Path (default: /file name)").fill(f"/manuals/{name}")
    page.get_by_role("button", name="Upload").click()
    expect(page.get_by_text(f"Uploaded /manuals/{name}: embedding")).to_be_visible()
    row = page.locator("tr", has=page.get_by_role("link", name=f"/manuals/{name}"))
    expect(row.get_by_role("cell", name="ready", exact=True)).to_be_visible(timeout=60_000)
    _shot(page, "documents-status")


def test_grep_a_record_see_its_span_then_withdraw_it(page: Page, server: Server) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    base = f"{server.base_url}/v1/projects/{server.demo_project}/memory_stores"
    store = httpx.post(base, headers=headers, json={"name": f"ui-{page.size_name}"}).json()  # type: ignore[attr-defined]
    vault = server.data_dir / "stores" / store["id"] / "vault"
    write(
        vault,
        "clm_dock",
        "Deliveries arrive at the loading dock before noon.\n",
        title="Loading dock hours",
        occurred_at="2026-03-04",
    )
    _sign_in(page, server)
    page.get_by_role("link", name="Memory").click()
    page.locator("#f-store").select_option(store["id"])
    # Pickers: the store's record types and its records' ids, offered, not typed.
    expect(page.locator('#type-options option[value="fact"]')).to_have_count(1)
    expect(page.locator('#record-options option[value="clm_dock"]')).to_have_count(1)
    page.get_by_label("Keywords").fill("loading dock")
    page.get_by_role("button", name="Grep").click()
    hit = page.locator("#records article.hit").first
    expect(hit.locator("mark")).to_have_text("loading dock")
    expect(hit).to_contain_text("cite clm_dock.md r1")
    _shot(page, "grep")
    hit.get_by_role("link", name="Loading dock hours").click()
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    _shot(page, "record")
    page.once("dialog", lambda dialog: dialog.accept("moved to the east gate"))
    page.get_by_role("button", name="Withdraw").click()
    page.get_by_label("Keywords").fill("loading dock")
    page.get_by_role("button", name="Grep").click()
    expect(page.get_by_text("0 match(es)")).to_be_visible()
    expect(page.locator("#records article.hit")).to_have_count(0)
    for n in range(25):  # more than a page of grep (20)
        write(
            vault,
            f"clm_parcel_{n:02d}",
            f"Parcel {n} waits at the front desk.\n",
            title=f"Parcel {n}",
        )
    page.get_by_label("Keywords").fill("parcel front desk")
    page.get_by_role("button", name="Grep").click()
    expect(page.locator("#records article.hit")).to_have_count(20)
    page.locator("#records").get_by_role("button", name="More").click()
    expect(page.locator("#records article.hit")).to_have_count(25)
    expect(page.locator("#records").get_by_role("button", name="More")).to_be_hidden()


def test_chronicle_a_week_in_berlin(page: Page, server: Server) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    base = f"{server.base_url}/v1/projects/{server.demo_project}/memory_stores"
    store = httpx.post(base, headers=headers, json={"name": f"time-{page.size_name}"}).json()  # type: ignore[attr-defined]
    vault = server.data_dir / "stores" / store["id"] / "vault"
    write(
        vault,
        "evt_kickoff",
        "Kickoff.",
        title="Kickoff",
        type="event",
        occurred_at="2026-03-01T23:30:00Z",
    )  # Monday 00:30 in Berlin
    write(vault, "per_ann", "Ann is a person.", kind="page", type="person", title="Ann")
    _sign_in(page, server)
    page.get_by_role("link", name="Time").click()
    page.locator("#f-time-store").select_option(store["id"])
    # The entity picker offers the store's pages; kinds its records' types.
    expect(page.locator('#entity-options option[value="per_ann"]')).to_have_count(1)
    expect(page.locator('#kind-options option[value="event"]')).to_have_count(1)
    page.get_by_label("Date", exact=True).fill("2026-03-04")
    page.get_by_label("Time zone (IANA)").fill("Europe/Berlin")
    page.get_by_label("Its Monday–Sunday week").check()
    page.get_by_role("button", name="Chronicle").click()
    expect(page.get_by_text("from 2026-03-02 to 2026-03-08 (Europe/Berlin)")).to_be_visible()
    row = page.locator("#rows article.hit").first
    expect(row).to_contain_text("Kickoff")
    expect(row).to_contain_text("2026-03-02T00:30:00+01:00")
    _shot(page, "time")


def test_api_errors_show_their_message(page: Page, server: Server) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    base = f"{server.base_url}/v1/projects/{server.demo_project}/memory_stores"
    store = httpx.post(base, headers=headers, json={"name": f"err-{page.size_name}"}).json()  # type: ignore[attr-defined]
    _sign_in(page, server)
    page.get_by_role("link", name="Memory").click()
    page.locator("#f-store").select_option(store["id"])
    page.get_by_label("Keywords").fill("?!")  # no word tokens: the API says so
    page.get_by_role("button", name="Grep").click()
    expect(page.get_by_role("alert")).to_contain_text("word tokens")


def _api_search(server: Server, body: dict[str, object]) -> dict[str, object]:
    r = httpx.post(
        f"{server.base_url}/v1/projects/{server.demo_project}/knowledge/search",
        headers={"Authorization": f"Bearer {server.token}"},
        json=body,
    )
    r.raise_for_status()
    return dict(r.json())


def _post_doc(server: Server, path: str, content: str) -> dict[str, object]:
    r = httpx.post(
        f"{server.base_url}/v1/projects/{server.demo_project}/documents",
        headers={"Authorization": f"Bearer {server.token}"},
        json={"path": path, "content": content},
    )
    r.raise_for_status()
    document = dict(r.json())
    for _ in range(600):  # a long one is embedded in the background
        if document["status"] != "processing":
            return document
        time.sleep(0.2)
        document = httpx.get(
            f"{server.base_url}/v1/projects/{server.demo_project}/documents/{document['id']}",
            headers={"Authorization": f"Bearer {server.token}"},
        ).json()
    raise AssertionError("still processing")


def _search(page: Page, query: str, paths: str | None = None) -> None:
    page.get_by_label("Query (empty: fetch mode)").fill(query)
    if paths is not None:
        _filters(page)
        page.get_by_label("Document paths (prefixes)").fill(paths)
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("article.hit").first).to_be_visible()


def test_why_this_hit_matches_explain_and_copy_as_curl_reproduces_it(
    page: Page, server: Server
) -> None:
    _sign_in(page, server)
    _search(page, "how long do refunds take")
    hit = page.locator("article.hit").first
    hit.get_by_text("Why this hit").click()
    body = json.loads((page.locator("#raw-request").text_content() or "").split("\n", 1)[1])
    assert body["query"] == "how long do refunds take" and body["explain"] is True
    top = _api_search(server, body)["results"][0]  # type: ignore[index]
    explain = top["explain"]
    expect(hit.locator(".leg").first).to_contain_text(f"{explain['cosine']:.4f}")
    expect(hit.locator(".leg").first).to_contain_text(f"(rank {explain['vector_rank']})")
    expect(hit.locator(".leg").nth(1)).to_contain_text(f"{explain['bm25']:.4f}")
    expect(hit.locator(".why")).to_contain_text(f"fused {explain['fused']:.4f}")
    expect(hit.locator(".why")).to_contain_text("refund")  # a matched term
    _shot(page, "search-explained")
    page.get_by_text("This request: copy it, see it raw").click()
    page.get_by_role("button", name="Copy as curl").click()
    expect(page.get_by_text("copied as curl")).to_be_visible()
    curl = page.locator('pre[data-form="curl"]').inner_text()
    assert "$NATURALI_TOKEN" in curl and server.token not in curl  # the token is a variable
    ran = subprocess.run(
        ["bash", "-c", curl],
        env={**os.environ, "NATURALI_TOKEN": server.token},
        capture_output=True,
        text=True,
        check=True,
    )
    shown = json.loads(page.locator("#raw-response").inner_text())
    again = json.loads(ran.stdout)

    def ids(response: dict[str, list[dict[str, str]]]) -> list[str | None]:
        # Documents' hits by chunk, memories' by memory (other tests leave memories around).
        return [r.get("chunk_id") or r.get("memory_id") for r in response["results"]]

    assert ids(again) == ids(shown)
    python = page.locator('pre[data-form="Python"]').inner_text()
    assert "search_knowledge(" in python and 'os.environ["NATURALI_TOKEN"]' in python
    typescript = page.locator('pre[data-form="TypeScript"]').inner_text()
    assert "searchKnowledge(" in typescript and "process.env.NATURALI_TOKEN" in typescript


def test_highlighting_marks_whole_query_tokens_only(page: Page, server: Server) -> None:
    path = f"/highlight/{page.size_name}.md"  # type: ignore[attr-defined]
    _post_doc(server, path, "# Returns\n\nRefunds take the other information into account.")
    _sign_in(page, server)
    _search(page, "refunds take", paths=path)
    marks = page.locator("article.hit").first.locator("mark")
    expect(marks).to_have_text(["Refunds", "take"])  # not "the", nor the "the" in "other"


@pytest.fixture(scope="module")
def long_document(server: Server) -> str:
    """A document of 2,000 passages (one per section), made once for both widths: its path."""
    path = "/manuals/long.md"
    sections = [f"## Step {n}\n\nTurn valve {n} a quarter clockwise." for n in range(2000)]
    sections[1333] = "## Step 1333\n\nThe boiler's pressure relief valve is tested each spring."
    document = _post_doc(server, path, "# Long manual\n\n" + "\n\n".join(sections))
    assert int(document["chunk_count"]) >= 2000  # type: ignore[call-overload]
    return path


def test_a_hit_deep_in_a_long_document_is_shown_marked_and_in_view(
    page: Page, server: Server, long_document: str
) -> None:
    path = long_document
    _sign_in(page, server)
    _search(page, "when is the pressure relief valve tested", paths=path)
    page.locator("article.hit").first.locator("a.hit-link").click()
    focused = page.locator(".hit-focus")
    expect(focused).to_contain_text("pressure relief valve is tested")
    expect(focused).to_be_in_viewport()
    expect(focused.locator("mark")).to_have_count(0)  # the document view marks the passage
    page.get_by_role("button", name="Load earlier passages").click()
    expect(page.locator("section.passage")).to_have_count(80)  # 40 more, on demand
    _shot(page, "long-document")


def test_the_nav_is_hidden_until_sign_in_and_sign_out_hides_it_again(
    page: Page, server: Server
) -> None:
    page.goto(server.base_url + "/ui/")
    expect(page.locator("#nav")).to_be_hidden()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    _sign_in(page, server)
    expect(page.locator("#nav")).to_be_visible()
    page.get_by_role("link", name="Switch project").click()
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()
    page.get_by_role("link", name="demo").click()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Token")).to_be_visible()
    expect(page.locator("#nav")).to_be_hidden()


def test_results_come_first_on_a_phone_and_errors_show_where_the_action_was(
    page: Page, server: Server
) -> None:
    _sign_in(page, server)
    narrow = page.size_name == "phone"  # type: ignore[attr-defined]
    assert (page.locator("details.filters").get_attribute("open") is None) == narrow
    _search(page, "who handles escalations")
    expect(page.locator("article.hit").first).to_be_in_viewport()
    _shot(page, "results")
    page.keyboard.press("Tab")  # keyboard: from the results, arrows step through them
    first = page.locator("article.hit").first
    first.focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator("article.hit").nth(1)).to_be_focused()
    _filters(page)
    page.get_by_label("Limit").fill("500")  # the API refuses it: said under the form
    page.get_by_role("button", name="Search", exact=True).click()
    slot = page.locator("form .error-slot")
    expect(slot).to_contain_text("limit")
    expect(slot).to_be_in_viewport()
    expect(page.locator("#error")).to_be_hidden()


def test_no_serious_accessibility_violation(page: Page, server: Server) -> None:
    axe = Axe()
    page.goto(server.base_url + "/ui/")
    screens = {"sign-in": axe.run(page)}
    _sign_in(page, server)
    _search(page, "how long do refunds take")
    page.locator("article.hit").first.get_by_text("Why this hit").click()
    screens["search"] = axe.run(page)
    page.locator("article.hit").first.locator("a.hit-link").click()
    expect(page.locator(".hit-focus")).to_be_visible()
    screens["document"] = axe.run(page)
    page.get_by_role("link", name="Project", exact=True).click()
    expect(page.locator("table.facts")).to_be_visible()
    expect(page.locator(".tree li[data-path]").first).to_be_visible()
    screens["project"] = axe.run(page)
    page.get_by_role("link", name="Tokens").click()
    expect(page.get_by_role("button", name="Revoke").first).to_be_visible()
    screens["tokens"] = axe.run(page)
    serious = {
        name: [
            (v["id"], v["help"])
            for v in r.response["violations"]
            if v["impact"] in ("serious", "critical")
        ]
        for name, r in screens.items()
    }
    assert serious == {name: [] for name in screens}


def _api(server: Server, method: str, path: str, **kwargs: object) -> dict[str, object]:
    r = httpx.request(
        method,
        f"{server.base_url}/v1/projects/{server.demo_project}{path}",
        headers={"Authorization": f"Bearer {server.token}"},
        **kwargs,  # type: ignore[arg-type]
    )
    r.raise_for_status()
    return dict(r.json())


def test_the_project_page_shows_the_project_at_a_glance(page: Page, server: Server) -> None:
    size = page.size_name  # type: ignore[attr-defined]
    for i in range(55):  # more folders than a page of the tree holds (50)
        _post_doc(server, f"/tree-{size}/f{i:02d}/doc.md", f"# Folder {i}\n\nNotes {i}.")
    _post_doc(server, f"/tree-{size}/f00/deeper/more.md", "# Deeper\n\nMore notes.")
    store = _api(server, "POST", "/memory_stores", json={"name": f"glance-{size}"})
    for text in ("The agent prefers short answers.", "The agent works in Lyon."):
        _api(server, "POST", f"/memory_stores/{store['id']}/memories", json={"content": text})
    overview = _api(server, "GET", "/overview")
    _sign_in(page, server)
    page.get_by_role("link", name="Project", exact=True).click()
    facts = page.locator("table.facts")
    expect(facts.locator("tr", has_text="Documents")).to_contain_text(str(overview["documents"]))
    model = overview["embedding_model"]
    expect(facts.locator("tr", has_text="Embedding model")).to_contain_text(model["id"])  # type: ignore[index]
    expect(facts.locator("tr", has_text="Search index")).to_contain_text("loaded on this server")
    tree = page.locator(".tree")
    folder = tree.locator(f'li[data-path="/tree-{size}/"]')
    expect(folder).to_contain_text("56 document(s)")
    folder.locator("summary").first.click()
    inner = folder.locator("li[data-path]")
    expect(inner).to_have_count(50)  # a page of the level, then More
    folder.get_by_role("button", name="More").click()
    expect(inner).to_have_count(55)
    first = folder.locator(f'li[data-path="/tree-{size}/f00/"]')
    expect(first).to_contain_text("2 document(s) · 2 chunk(s)")
    first.locator("summary").first.click()
    expect(first.get_by_role("link", name=f"1 document(s) in /tree-{size}/f00/")).to_be_visible()
    row = page.locator("tr", has=page.get_by_role("link", name=f"glance-{size}"))
    expect(row.locator("td").nth(1)).to_have_text("2")
    expect(row.locator("td").nth(2)).to_have_text("2, every file read")
    jobs = _api(server, "GET", "/ingest_jobs")["data"]
    rows = page.locator("table", has=page.get_by_role("columnheader", name="Queued at"))
    expect(rows.locator("tbody tr")).to_have_count(len(jobs))  # type: ignore[arg-type]
    _shot(page, "project")
    first.get_by_role("link", name=f"1 document(s) in /tree-{size}/f00/").click()
    expect(page.get_by_label("Path prefix")).to_have_value(f"/tree-{size}/f00/")
    expect(page.get_by_role("link", name=f"/tree-{size}/f00/doc.md")).to_be_visible()


def test_the_project_page_shows_each_source_with_its_last_sync(
    page: Page, server: Server, tmp_path: Path
) -> None:
    from test_sources import Repo

    size = page.size_name  # type: ignore[attr-defined]
    repo = Repo(tmp_path / f"repo-{size}")
    repo.write("guide.md", "# Guide\n\nOtters hold hands while they sleep.")
    repo.commit("first")
    body = {"kind": "git", "url": str(repo.root), "path": f"/repo-{size}/"}
    source = _api(server, "POST", "/sources", json=body)
    _api(server, "POST", f"/sources/{source['id']}/sync")
    deadline = time.monotonic() + 60
    while not _api(server, "GET", f"/sources/{source['id']}")["last_run"]:
        assert time.monotonic() < deadline, "the source did not sync"
        time.sleep(0.2)
    _sign_in(page, server)
    page.get_by_role("link", name="Project", exact=True).click()
    row = page.locator("tr", has=page.get_by_role("link", name=f"/repo-{size}/"))
    expect(row).to_contain_text("1 created, 0 updated, 0 deleted, 0 unchanged")
    expect(row).to_contain_text("manual only")
    row.get_by_role("button", name="Sync now").click()
    expect(row.get_by_role("button", name="Sync requested")).to_be_visible()
    _shot(page, "project-sources")


def test_pickers_offer_the_projects_folders_and_stores(page: Page, server: Server) -> None:
    size = page.size_name  # type: ignore[attr-defined]
    _post_doc(server, f"/picked-{size}/note.md", "# Picked\n\nThe picker found this note.")
    store = _api(server, "POST", "/memory_stores", json={"name": f"picked-{size}"})
    _api(server, "POST", f"/memory_stores/{store['id']}/memories", json={"content": "Picked."})
    _sign_in(page, server)
    _filters(page)
    expect(page.locator(f'#folder-options option[value="/picked-{size}/"]')).to_have_count(1)
    page.get_by_label(f"picked-{size}", exact=True).check()
    page.get_by_label("Query (empty: fetch mode)").fill("picked")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("article.hit").first).to_be_visible()
    raw = json.loads(str(page.locator("#raw-request").text_content()).split("\n", 1)[1])
    assert raw["memory_store_ids"] == [store["id"]]


def test_hits_read_as_a_person_reads_them(page: Page, server: Server) -> None:
    """The header names the project; a memory hit carries its record's title and opens it; a
    Markdown passage shows its text, not its marks; grep answers above the new-record form;
    no two inputs share an id."""
    size = page.size_name  # type: ignore[attr-defined]
    store = _api(server, "POST", "/memory_stores", json={"name": f"hits-{size}"})
    memory = _api(
        server, "POST", f"/memory_stores/{store['id']}/memories",
        json={"content": "The courier collects outgoing mail at four.", "title": f"Courier {size}"},
    )  # fmt: skip
    _sign_in(page, server)
    expect(page.locator("#who")).to_contain_text("project demo ·")
    page.get_by_label("Query (empty: fetch mode)").fill("when does the courier collect the mail")
    page.get_by_role("button", name="Search").click()
    hit = page.locator("article.hit", has_text=memory["id"]).first
    expect(hit.get_by_role("heading")).to_have_text(f"Courier {size}")
    expect(hit.locator(".meta").first).not_to_contain_text("memory memory")
    page.get_by_label("Query (empty: fetch mode)").fill("how long do refunds take")
    page.get_by_role("button", name="Search").click()
    refunds = page.locator("article.hit", has_text="/handbook/support/refunds.md").first
    expect(refunds.locator(".snippet")).to_contain_text("How long refunds take")
    expect(refunds.locator(".snippet")).not_to_contain_text("## ")
    page.get_by_label("Query (empty: fetch mode)").fill("courier mail")
    page.get_by_role("button", name="Search").click()
    page.locator("article.hit", has_text=memory["id"]).first.locator("a.hit-link").click()
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    page.get_by_role("link", name="Memory").click()
    page.locator("#f-store").select_option(store["id"])
    page.get_by_label("Keywords").fill("courier")
    page.get_by_role("button", name="Grep").click()
    expect(page.locator("#records article.hit")).to_have_count(1)
    above = page.evaluate(
        "() => !!(document.querySelector('#records').compareDocumentPosition("
        "[...document.querySelectorAll('h2')].find((e) => e.textContent === 'New record'))"
        " & Node.DOCUMENT_POSITION_FOLLOWING)"
    )
    assert above, "grep's results come before the new-record form"
    duplicated = page.evaluate(
        "() => { const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);"
        " return ids.filter((id, i) => ids.indexOf(id) !== i); }"
    )
    assert duplicated == []
    _shot(page, "hits")


def test_the_tokens_page_makes_a_limited_token_that_sees_only_its_grant(
    page: Page, server: Server
) -> None:
    name = f"support-{page.size_name}"  # type: ignore[attr-defined]
    _sign_in(page, server)
    page.get_by_role("link", name="Tokens").click()
    expect(page.get_by_role("heading", name="Tokens")).to_be_visible()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Path prefixes (empty: every document; none)").fill("/handbook/support/")
    page.get_by_label("Memory store ids (empty: every store; none)").fill("none")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("code.secret").inner_text()
    assert secret.startswith("nk_")
    row = page.locator("tr", has=page.get_by_role("cell", name=name, exact=True))
    reaches = "documents: /handbook/support/ · memory stores: none"
    expect(row.get_by_role("cell", name=reaches)).to_be_visible()
    _shot(page, "tokens")
    # Signed in with it: the search and the project page hold only what it was granted.
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Token").fill(secret)
    page.keyboard.press("Enter")
    page.get_by_role("link", name="demo").click()
    _search(page, "how do deploys and refunds work")
    hits = page.locator("article.hit")
    expect(hits.first).to_be_visible()
    for i in range(hits.count()):
        expect(hits.nth(i)).to_contain_text("/handbook/support/")
    page.get_by_role("link", name="Project", exact=True).click()
    expect(page.locator("table.facts")).to_contain_text(reaches)
    # Revoked from the page by the owner, it no longer signs in.
    page.get_by_role("button", name="Sign out").click()
    _sign_in(page, server)
    page.get_by_role("link", name="Tokens").click()
    row = page.locator("tr", has=page.get_by_role("cell", name=name, exact=True))
    row.get_by_role("button", name="Revoke").click()
    expect(row.get_by_role("cell", name="revoked", exact=True)).to_be_visible()
