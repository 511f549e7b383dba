"""The Control UI end to end: Debian's chromium, driven by Playwright, against a real
``naturali serve``. Sign in, search and open a PDF hit on its page, upload a document and find
it, grep a record and see its highlighted span, withdraw it and see it gone, chronicle a week in
Europe/Berlin. Screenshots of each page at 1280×800 and a phone's width go to
``bench/results/ui`` (git-ignored)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
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
    running = start(home / "data", home)
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
    page.get_by_label("Document paths (prefixes)").fill("/policies/")
    page.get_by_role("button", name="Search").click()
    hit = page.locator("article.hit").first
    expect(hit).to_contain_text("(page 2)")
    expect(hit.locator("mark").first).to_have_text("travel", ignore_case=True)
    _shot(page, "search")
    hit.locator("a.hit-link").click()
    focused = page.locator(".page-focus")
    expect(focused).to_contain_text("travel desk")
    expect(focused).to_have_attribute("data-page", "2")
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
    _sign_in(page, server)
    page.get_by_role("link", name="Time").click()
    page.locator("#f-time-store").select_option(store["id"])
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
