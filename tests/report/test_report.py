"""The HTML audit report: its sections, self-containment, escaping, redaction and bounds.

The page is read as HTML (``html.parser``); what a browser shows of it is in
``test_browser.py``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.conftest import ROOT
from tests.report.hostile import ALERT_IMG, ALERT_SCRIPT, PWN_IMG, PWN_SCRIPT, PWN_URL


class _Page(HTMLParser):
    """Every start tag with its attributes, the text, and the section headings."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.h2: list[str] = []
        self._in_h2 = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_h2 = tag == "h2"
        if self._in_h2:
            self.h2.append("")

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_h2:
            self.h2[-1] += data


def _self_contained(html: str) -> _Page:
    """Fail on anything that would run or fetch: scripts, event handlers, frames,
    external links; every src a data: URI, every href a fragment."""
    page = _Page(html)
    names = [t for t, _ in page.tags]
    for tag in ("script", "iframe", "object", "embed", "link", "base", "form", "svg"):
        assert tag not in names, tag
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name == "src":
                assert value.startswith("data:image/png;base64,"), (tag, value[:40])
            if name == "href":
                assert value.startswith("#"), (tag, value)
    assert "url(" not in html and "@import" not in html  # no fetch from the stylesheet
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]
    return page


SECTIONS = ["Contents", "1. Summary", "2. Findings", "3. Rules table: diagnostics and lint",
            "4. Rules table: coverage and fall-through", "5. Queue definitions used",
            "6. Messages in no finding", "7. Explanations of the messages that need action"]


@pytest.mark.spark
def test_sample_report_from_the_command_line(sample_report):
    html = sample_report["path"].read_text(encoding="utf-8")
    page = _self_contained(html)
    assert page.h2 == SECTIONS
    text = " ".join(page.text)
    out = sample_report["stdout"]
    assert "669 message(s) in 7 capture file(s)" in out
    assert "findings: 13 (1 critical, 5 high, 7 medium); 0 message(s) in no finding" in out
    assert "292 message(s) match no rule" in out  # fall-through to the implicit IGNORE
    assert out.rstrip().endswith(f"report written to {sample_report['path']}")
    # findings most severe first, each with next steps
    severities = re.findall(r'<span class="badge severity-(\w+)">', html)
    assert severities == ["critical"] + ["high"] * 5 + ["medium"] * 7  # the documented scale
    assert html.count("<h4>Next steps</h4>") == 13
    assert "DISPLAY QLOCAL(&#x27;ORDERS.IN&#x27;) CURDEPTH MAXDEPTH" in html  # real names
    # every message of every finding is on the page, as message-number ranges per capture
    assert re.search(r"dlq_linux_x86\.raw #1-#42, #44-#103</code>", html)
    assert "more (<code>dlqlens export" not in html
    # the figure: one embedded PNG
    imgs = [a for t, a in page.tags if t == "img"]
    # the six summary figures and the rules table's coverage, each with its title as alt text
    assert len(imgs) == 7
    assert imgs[0]["alt"].startswith("Messages put on the dead-letter queue, by reason")
    assert any(a["alt"].startswith("Messages by destination") for a in imgs)
    assert all(a["src"].startswith("data:image/png;base64,") and a["alt"] for a in imgs)
    # lint, coverage, queue definitions, messages in no finding
    assert "no-catch-all" in text and "left/no_match" in text
    assert "INVOICES.IN" in text and "ORDERS.ARCHVE" in text  # destinations without definition
    # every message is of a pattern: the persistent replies (2048) and the 2085 strays too
    assert "Every message is in at least one finding" in text
    assert "MQRC_PERSISTENT_NOT_ALLOWED" in text and "persistent_reply" in text
    # bounded explanations: 3 per finding (13), some shared; no group in no finding
    explained = html.count('<details class="explanation"')
    assert 0 < explained <= 3 * 13
    # payloads redacted: a reply's JSON is never on the page, its length is
    assert '"quote":' not in html and "&#34;quote&#34;" not in html
    assert re.search(r"payload redacted: \d+ bytes; --show-payloads to include", text)
    # the session's configuration as it was
    before, after = sample_report["conf"]
    assert before == after


@pytest.mark.spark
def test_the_short_run_settings_change_nothing_in_the_report(spark, sample_report, tmp_path):
    """The short run's settings (no adaptive execution, no generated code:
    Catalyst's interpreted expressions; one shuffle partition in a command's
    session) give the same report as a session's own settings: detectors,
    replay, coverage, figures and explanations, byte for byte but the time it
    was made. Three runs of the README's report: the suite's (its session is
    get_spark's, so the report ran short, its shuffle partitions the
    fixture's), one with every short-run key set as a command's session for a
    small capture has them, and one in a session dlqlens was handed (the mark
    taken off: the session's own settings throughout)."""
    import contextlib
    import io

    from dlqlens.cli import main
    from dlqlens.spark.session import OWN_SESSION_KEY, SMALL_INPUT_SETTINGS, short_run
    from tests.conftest import DATASETS

    assert SMALL_INPUT_SETTINGS["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    own = {k: spark.conf.get(k, None) for k in SMALL_INPUT_SETTINGS}
    assert own != SMALL_INPUT_SETTINGS  # the suite's session generates code

    def generated(df):  # whole-stage generated code in the plan ('*(1) Project')
        return "*(" in df._jdf.queryExecution().executedPlan().toString()

    assert generated(spark.range(3).selectExpr("id + 1 AS x"))
    with short_run(spark.range(3), lambda: True) as changed:  # what the suite's report ran with
        assert changed and not generated(spark.range(3).selectExpr("id + 1 AS x"))
    assert {k: spark.conf.get(k, None) for k in SMALL_INPUT_SETTINGS} == own

    def report(name):
        out = tmp_path / name
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            status = main(["report", str(DATASETS), "--rules", str(ROOT / "datasets/rules/shop.rul"),
                           "--queue-defs", str(ROOT / "datasets/mqsc/qm.mqsc"), "--out", str(out),
                           "--master", "local[2]"])
        assert status == 0
        return out, buf.getvalue()

    def own_again():
        for key, value in own.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)

    mark = spark.conf.get(OWN_SESSION_KEY)
    try:
        for key, value in SMALL_INPUT_SETTINGS.items():
            spark.conf.set(key, value)
        assert not generated(spark.range(3).selectExpr("id + 1 AS x"))
        short = report("short.html")
        assert {k: spark.conf.get(k, None) for k in SMALL_INPUT_SETTINGS} == SMALL_INPUT_SETTINGS
        own_again()
        spark.conf.unset(OWN_SESSION_KEY)  # a handed session: nothing changed, even for a while
        handed = report("handed.html")
    finally:
        spark.conf.set(OWN_SESSION_KEY, mark)
        own_again()

    def made(html):
        return re.sub(r'<p class="meta">Generated [^<]*</p>', "", html)

    def said(run):
        return run[1].replace(str(run[0]), "OUT")

    suite = (sample_report["path"], sample_report["stdout"])
    for run in (short, suite):
        assert made(run[0].read_text(encoding="utf-8")) == \
            made(handed[0].read_text(encoding="utf-8"))
        assert said(run) == said(handed)


SCENARIOS = sorted(p.name for p in (ROOT / "datasets/scenarios").iterdir() if p.is_dir())


@pytest.mark.spark
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_bundled_scenario_gets_its_report(spark, scenario, tmp_path):
    """The report of each simulated scenario, as the README's command makes it.
    Several hold messages without an MQDLH (an initiation queue's trigger
    messages, a backout queue's messages beside the DLQ): the fall-through and
    no-finding tables come to the driver as pandas frames whose integer and
    time columns hold those nulls as NaN, and the report says "(no MQDLH)",
    "unknown" and "no time known" for them (it used to stop with ``cannot
    convert float NaN to integer`` on three of the eight)."""
    from dlqlens.report import build_report
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, str(ROOT / "datasets/scenarios" / scenario))
    report = build_report(df, rules=str(ROOT / "datasets/rules/shop.rul"),
                          queue_defs=str(ROOT / "datasets/mqsc/qm.mqsc"))
    page = _self_contained(report.write(tmp_path / "r.html").read_text(encoding="utf-8"))
    assert page.h2 == SECTIONS
    words = " ".join(page.text).split()
    assert "nan" not in words and "NaN" not in words
    if scenario == "trigger_storm":
        # 254 trigger messages on the initiation queue: left for having no MQDLH
        text = " ".join(words)
        assert "254 without an MQDLH" in text
        assert re.search(r"no_dlh \(no MQDLH\) unknown unknown 0 254", text), text


@pytest.mark.spark
def test_hostile_capture_is_text(hostile_report):
    html = hostile_report["path"].read_text(encoding="utf-8")
    page = _self_contained(html)
    text = "".join(page.text)
    for s in (PWN_SCRIPT, PWN_IMG, ALERT_SCRIPT, ALERT_IMG, PWN_URL):
        assert s in text, s  # shown, as text
    for raw in ("<script", "<img src=x", "<iframe", "<style>body", "<a href=\"javascript",
                "<b>bold"):
        assert raw not in html, raw
    # the payload is shown (show_payloads) and escaped; the hostile rules table and MQSC
    # file are listed and tabled as text
    assert "window.__pwned=4" in text and "window.__pwned=7" in text
    assert "Rules table: diagnostics and lint" in text and "unknown-keyword" in text
    # the strays to a hostile queue are in no finding, grouped under its name, explained
    assert "3 message(s) are in no finding, in 1 group(s)" in text
    assert f"No finding: 2035 MQRC_NOT_AUTHORIZED for {PWN_IMG} on QM.HOSTILE" in text
    assert hostile_report["report"].title.startswith("Hostile <script>")
    assert "<title>Hostile &lt;script&gt;alert(1)&lt;/script&gt;</title>" in html
    assert not hostile_report["cached_after"]  # the caller's DataFrame is left uncached
    assert "\x1b" not in hostile_report["report"].text


def test_render_item_escapes_what_is_not_a_view():
    from markupsafe import Markup

    from dlqlens.report.views import Note, Table, render_item

    assert render_item(PWN_SCRIPT) == Markup("<p>&lt;script&gt;window.__pwned=1&lt;/script&gt;</p>")
    assert PWN_SCRIPT not in render_item(Table(["queue"], [[PWN_SCRIPT]], caption=PWN_IMG))
    assert PWN_IMG not in render_item(Note(PWN_IMG))
    assert render_item(None) == ""


def test_figure_is_an_embedded_png():
    from dlqlens.report.views import render_item

    fig = _bar_figure("Dead letters by reason over time")
    html = str(render_item(fig))
    assert html.startswith('<figure class="plot">\n<img src="data:image/png;base64,iVBORw0KGgo')
    assert 'alt="Dead letters by reason over time"' in html


def _bar_figure(title: str):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 2))
    fig.suptitle(title)
    fig.add_subplot().bar(["2053 MQRC_Q_FULL", "2085 MQRC_UNKNOWN_OBJECT_NAME"], [102, 5])
    return fig


def _threads_rendering(monkeypatch) -> list:
    """(figure title, thread name) of every FigureView.of call from now on."""
    import threading

    from dlqlens.report import views

    calls, of = [], views.FigureView.of.__func__

    def recorded(cls, fig, *args, **kwargs):
        title = getattr(fig, "_suptitle", None)
        calls.append((title.get_text() if title is not None else None,
                      threading.current_thread().name))
        return of(cls, fig, *args, **kwargs)

    monkeypatch.setattr(views.FigureView, "of", classmethod(recorded))
    return calls


def test_figure_pngs_are_made_in_a_thread_of_their_own(monkeypatch):
    """FigurePngs renders each figure submitted in its own thread, as the page
    would (the same HTML); a figure not submitted is rendered when asked for; a
    figure submitted again replaces its earlier PNG; a failure to render is
    raised where the view is asked for."""
    from dlqlens.report.views import FigurePngs, render_item

    calls = _threads_rendering(monkeypatch)
    pngs = FigurePngs()
    first, second, other = (_bar_figure(t) for t in ("first", "second", "other"))
    pngs.submit(first, None, "not a figure", second)
    pngs.close()
    assert render_item(first, pngs) == render_item(first)
    assert 'alt="second"' in render_item(second, pngs)
    assert 'alt="other"' in render_item(other, pngs)
    ahead = [t for title, t in calls if title in ("first", "second")]
    # first and second ahead, first again without pngs
    assert sorted(ahead) == ["MainThread", "dlqlens-png_0", "dlqlens-png_0"]
    assert ("other", "MainThread") in calls

    first.suptitle("first, changed")
    pngs.submit(first)  # after close: a thread of its own again
    assert 'alt="first, changed"' in render_item(first, pngs)
    pngs.close()

    class Broken:  # a figure whose rendering fails
        def get_size_inches(self):
            return (4, 2)

        def savefig(self, *args, **kwargs):
            raise ValueError("cannot render")

    broken = Broken()
    pngs.submit(broken)
    with pytest.raises(ValueError, match="cannot render"):
        pngs.view(broken)
    pngs.close()


@pytest.mark.spark
def test_the_reports_figures_and_caches_are_made_beside_its_queries(spark, monkeypatch):
    """Every figure of the page (the summary's six, the rules table's
    coverage) is rendered to PNG in FigurePngs' thread during gather, none by
    the page's rendering; the findings and their links are cached (planned)
    side by side, each in a thread of its own."""
    import threading

    from dlqlens.report import build_report
    from dlqlens.spark.caches import Caches
    from dlqlens.spark.session import load_capture

    calls = _threads_rendering(monkeypatch)
    cached, cache = [], Caches.cache

    def recorded(self, df):
        if "finding_id" in df.columns:
            cached.append(threading.current_thread().name)
        return cache(self, df)

    monkeypatch.setattr(Caches, "cache", recorded)
    df = load_capture(spark, str(ROOT / "datasets/scenarios/permissions_change"))
    report = build_report(df, rules=str(ROOT / "datasets/rules/shop.rul"))
    assert report.html.count('<img src="data:image/png;base64,') == 7
    assert len(calls) == 7 and {t for _, t in calls} == {"dlqlens-png_0"}, calls
    assert len(cached) == 2 and len(set(cached)) == 2, cached
    assert all(name.startswith("dlqlens-plan") for name in cached), cached


def test_template_is_package_data():
    """The templates ship in the wheel: pyproject names them as package data."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = data["package-data"]["dlqlens.report"]
    for name in ("report.html.j2", "views.html.j2", "report.css"):
        assert (ROOT / "dlqlens/report/templates" / name).is_file()
        assert any(re.fullmatch(p.replace(".", r"\.").replace("*", ".*"), f"templates/{name}")
                   for p in patterns), name


@pytest.mark.parametrize("extra, text", [
    (["--rules", "/nonexistent.rul"], "cannot read rules table /nonexistent.rul"),
    (["--queue-defs", "/nonexistent.mqsc"], "cannot read queue definitions /nonexistent.mqsc"),
    (["--out", "/nonexistent/x.html"], "no such directory /nonexistent"),
    (["--world", "nosuchworld"], "world 'nosuchworld'"),
    (["--policy", "/nonexistent.toml"], "--policy /nonexistent.toml: No such file"),
])
def test_command_line_refuses_bad_arguments_before_spark(extra, text):
    """One line on stderr, exit status 2, and no JVM started (the arguments are checked first)."""
    import subprocess
    import sys

    from tests.conftest import DATASETS

    proc = subprocess.run([sys.executable, "-m", "dlqlens.cli", "report", str(DATASETS), *extra],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and text in proc.stderr, proc.stderr
