"""The report looked at as a user would: rendered in headless Chromium.

Drives Debian's ``chromium`` (``apt-get install chromium``) with Playwright's
Python package; never a browser that ``playwright install`` downloads. Skips,
saying why, when either is missing.

Checks what the page shows: the section headings, the figures decoded; the
hostile capture's markup as text, no dialog, no script run (``window.__pwned``
stays undefined), no network request (only ``file:`` and ``data:``). The
page's Content-Security-Policy would block a script or a fetch on its own, so
the pages are opened with CSP bypassed: what is tested is the escaping.

Full-page screenshots go to ``$DLQLENS_SCREENSHOTS`` (a folder) when it is set.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.report.hostile import ALERT_IMG, ALERT_SCRIPT, JS_URL, PWN_IMG, PWN_SCRIPT

pytestmark = pytest.mark.spark

SECTION_TITLES = ["1. Summary", "2. Findings", "3. Rules table: diagnostics and lint",
                  "4. Rules table: coverage and fall-through", "5. Queue definitions used",
                  "6. Messages in no finding",
                  "7. Explanations of the messages that need action"]


@pytest.fixture(scope="module")
def chromium():
    """A headless Debian chromium driven by Playwright (module-wide)."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install playwright)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True)
        try:
            yield browser
        finally:
            browser.close()


class Visit:
    """One page opened in a fresh context, with its requests and dialogs recorded."""

    def __init__(self, browser, path: Path, *, bypass_csp: bool = True):
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(bypass_csp=bypass_csp,
                                           viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

        def on_dialog(dialog):
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        self.page.on("dialog", on_dialog)
        self.page.goto(path.as_uri(), wait_until="load")

    def images(self) -> list[dict]:
        return self.page.eval_on_selector_all(
            "img", "imgs => imgs.map(i => ({complete: i.complete, width: i.naturalWidth, "
                   "src: i.src.slice(0, 22), alt: i.alt}))")

    def open_everything(self) -> None:
        """Unfold every <details> (the evidence and the explanations)."""
        self.page.eval_on_selector_all("details", "ds => ds.forEach(d => d.open = true)")
        self.page.wait_for_timeout(200)

    def external_requests(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(("file:", "data:"))]

    def screenshot(self, name: str) -> None:
        folder = os.environ.get("DLQLENS_SCREENSHOTS")
        if not folder:
            return
        Path(folder).mkdir(parents=True, exist_ok=True)
        height = self.page.evaluate("document.documentElement.scrollHeight")
        step = 3000  # a very tall page is shot in slices (Chromium's texture limit)
        for i, y in enumerate(range(0, height, step)):
            self.page.screenshot(path=str(Path(folder) / f"report-{name}-{i}.png"), full_page=True,
                                 clip={"x": 0, "y": y, "width": 1280,
                                       "height": min(step, height - y)})

    def close(self) -> None:
        self.context.close()


def _no_script_ran(visit: Visit) -> None:
    page = visit.page
    assert visit.dialogs == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 0
    assert page.evaluate("document.querySelectorAll('iframe, link, object, embed').length") == 0
    assert page.evaluate("[...document.querySelectorAll('*')].filter(e => "
                         "[...e.attributes].some(a => a.name.startsWith('on'))).length") == 0
    assert page.evaluate("[...document.querySelectorAll('[href]')].filter(e => "
                         "!e.getAttribute('href').startsWith('#')).length") == 0
    assert visit.external_requests() == []


def test_sample_report_in_a_browser(chromium, sample_report):
    visit = Visit(chromium, sample_report["path"])
    try:
        page = visit.page
        assert page.title() == "DLQ audit report"
        headings = page.locator("section > h2").all_inner_texts()
        assert headings == SECTION_TITLES
        images = visit.images()
        assert images and all(i["complete"] and i["width"] > 0 for i in images), images
        assert all(i["src"].startswith("data:image/png") for i in images)
        shown = page.inner_text("body")
        for text in ("669", "reason_burst", "Next steps", "left/no_match", "ORDERS.ARCHVE",
                     "payload redacted:"):
            assert text in shown, text
        # the findings are visible, most severe first
        badges = page.locator("article.finding .badge").all_inner_texts()
        assert [b.lower() for b in badges] == ["critical"] + ["high"] * 5 + ["medium"] * 7
        visit.screenshot("sample")
        visit.open_everything()
        _no_script_ran(visit)
        assert page.locator("details.explanation table").count() > 10
    finally:
        visit.close()


def test_sample_report_under_its_own_policy(chromium, sample_report):
    """With the page's Content-Security-Policy in force, its own styles and figures
    still apply (they are inline and data: URIs) and nothing is refused."""
    visit = Visit(chromium, sample_report["path"], bypass_csp=False)
    try:
        page = visit.page
        images = visit.images()
        assert images and all(i["complete"] and i["width"] > 0 for i in images)
        badge = page.evaluate("getComputedStyle(document.querySelector('.badge'))"
                              ".backgroundColor")
        assert badge == "rgb(122, 0, 25)"  # --critical (the first finding's): the stylesheet applied
        assert visit.errors == [] and visit.external_requests() == []
    finally:
        visit.close()


def test_hostile_report_in_a_browser(chromium, hostile_report):
    visit = Visit(chromium, hostile_report["path"])
    try:
        page = visit.page
        assert page.title() == "Hostile <script>alert(1)</script>"
        shown = page.inner_text("body")
        # what the capture, the rules table and the MQSC file hold is shown as text
        for text in (PWN_SCRIPT, PWN_IMG, ALERT_SCRIPT, ALERT_IMG):
            assert text in shown, text
        assert JS_URL in shown  # in the payload of the first explanation (show_payloads)
        assert page.locator("section > h2").all_inner_texts() == SECTION_TITLES
        images = visit.images()
        assert images and all(i["complete"] and i["width"] > 0 for i in images)
        _no_script_ran(visit)
        visit.screenshot("hostile")
        visit.open_everything()  # every explanation and evidence unfolded: still text
        _no_script_ran(visit)
        assert page.inner_text("body").count(JS_URL) > 3
    finally:
        visit.close()
