"""The DLQ explorer's model on the bundled sample: filters, pages, what reaches
the driver, the static twin, findings, progress and the widget view."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser

import pytest

from dlqlens.capture import raw
from dlqlens.capture.message import CaptureMessage, dead_letter
from dlqlens.capture.reader import read_capture
from dlqlens.widgets.explorer import ExplorerModel, Filters, explore
from tests.conftest import DATASETS

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def sample(spark):
    from dlqlens.spark import load_capture

    return load_capture(spark, str(DATASETS))


@pytest.fixture(scope="module")
def rows():
    """The same messages decoded in Python: the expected answers."""
    return read_capture(DATASETS).table.to_pylist()


@pytest.fixture(scope="module")
def model(sample):
    with ExplorerModel(sample, page_size=25) as m:
        yield m


def key(r) -> tuple:
    return (r["source"], r["message_number"])


def dlq_order(r) -> tuple:
    return (r["dlh_put_ts"] is not None, r["dlh_put_ts"] or dt.datetime.min.replace(tzinfo=UTC),
            r["source"], r["message_number"])


def all_pages(m) -> list:
    out = []
    for page in m.pages():
        assert len(page.rows) <= m.page_size
        out += [key(r) for r in page.rows]
    return out


# ---------------------------------------------------------------------------
# filters are Spark predicates and select the right rows
# ---------------------------------------------------------------------------

def test_filters_translate_to_predicates(spark):
    f = Filters(reasons=[2053, "2085"], destinations=("ORDERS.IN", "AMQ.*"), qmgrs="QM.ORDERS",
                dlq_put_from="2024-03-11 09:12", dlq_put_to=dt.datetime(2024, 3, 12))
    assert f.reasons == (2053, 2085) and f.qmgrs == ("QM.ORDERS",)
    assert f.dlq_put_from == dt.datetime(2024, 3, 11, 9, 12, tzinfo=UTC)
    assert f.dlq_put_to.tzinfo is not None  # a naive bound is UTC
    preds = dict(f.predicates())
    assert list(preds) == ["reason", "destinations", "qmgrs", "dlq_put_from", "dlq_put_to"]
    assert "in(Reason, 2053, 2085)" in str(preds["reason"])
    assert "DestQName" in str(preds["destinations"]) and "AMQ." in str(preds["destinations"])
    assert "dlh_put_ts" in str(preds["dlq_put_from"])
    assert Filters().predicates() == [] and Filters().describe() == "none"
    with pytest.raises(ValueError):
        Filters(dlq_put_from="yesterday")


def test_filtered_pages_hold_exactly_the_matching_rows(model, rows):
    start, end = dt.datetime(2024, 3, 13, tzinfo=UTC), dt.datetime(2024, 3, 15, 6, tzinfo=UTC)
    cases = [
        (Filters(reasons=[2053, 2085], destinations=["ORDERS.IN", "AMQ.*"]),
         lambda r: r["dlh"]["Reason"] in (2053, 2085)
         and (r["dlh"]["DestQName"] == "ORDERS.IN" or r["dlh"]["DestQName"].startswith("AMQ."))),
        (Filters(applications=["price-feed", "BILL*"], dlq_put_from=start, dlq_put_to=end),
         lambda r: (r["md"]["PutApplName"] == "price-feed" or r["md"]["PutApplName"].startswith("BILL"))
         and start <= r["dlh_put_ts"] < end),
        (Filters(qmgrs=["MQP?"]), lambda r: r["dlh"]["DestQMgrName"] in ("MQP1", "MQP2")),
    ]
    model.page_size = 50
    try:
        for filters, keep in cases:
            model.filters = filters
            expected = [key(r) for r in sorted((r for r in rows if keep(r)), key=dlq_order)]
            assert 0 < len(expected) < len(rows)
            assert model.count() == len(expected), filters.describe()
            assert all_pages(model) == expected, filters.describe()
    finally:
        model.page_size = 25
        model.clear_filters()


# ---------------------------------------------------------------------------
# paging: stable, complete, keyset == offset
# ---------------------------------------------------------------------------

def test_pages_are_complete_without_duplicates_and_keyset_equals_offset(model, rows):
    model.page_size = 40
    try:
        model.filters = Filters(qmgrs=["QM.ORDERS", "QM.PORTAL"])
        model.set_sort("destination", ascending=False)  # many ties on DestQName
        keyset = all_pages(model)
        expected = sorted((r for r in rows if r["dlh"]["DestQMgrName"] in ("QM.ORDERS", "QM.PORTAL")),
                          key=lambda r: (r["source"], r["message_number"]))
        expected.sort(key=lambda r: r["dlh"]["DestQName"], reverse=True)  # stable: ties by key
        assert keyset == [key(r) for r in expected]
        assert len(set(keyset)) == len(keyset) == model.count() == 200
        model._bounds.clear()  # forget the keys: page 3 by offset
        third = model.page(2)
        assert third.method == "offset"
        assert [key(r) for r in third.rows] == keyset[80:120]
        again = model.page(3)
        assert again.method == "keyset" and [key(r) for r in again.rows] == keyset[120:160]
    finally:
        model.page_size = 25
        model.set_sort("dlq_put")
        model.clear_filters()


def test_keyset_pages_order_nulls_first_ascending_and_last_descending(spark, tmp_path):
    from dlqlens.spark import load_capture

    p = tmp_path / "mixed.bin"
    msgs = []
    for i in range(9):
        if i % 3 == 0:  # no MQDLH: null dlh_put_ts and Reason
            msgs.append(CaptureMessage(md={"Format": "MQSTR", "PutDate": "20240315",
                                           "PutTime": f"10{i:02d}0000"}, data=b"plain"))
        else:
            msgs.append(dead_letter({"Format": "MQSTR"},
                                    {"Reason": 2053, "DestQName": "Q", "PutDate": "20240315",
                                     "PutTime": f"11{i % 2:02d}0000"}, b"x"))
    raw.write_raw(p, msgs)
    df = load_capture(spark, str(p))
    with ExplorerModel(df, page_size=2) as m:
        asc = all_pages(m)
        m.set_sort("dlq_put", ascending=False)
        desc = all_pages(m)
    numbers = [n for _s, n in asc]
    assert numbers[:3] == [1, 4, 7]  # no MQDLH first, by message number
    assert sorted(numbers[3:], key=lambda n: ((n - 1) % 2, n)) == numbers[3:]
    assert [n for _s, n in desc][-3:] == [1, 4, 7]  # nulls last descending
    assert len(set(asc)) == len(set(desc)) == 9


# ---------------------------------------------------------------------------
# only a page and the selection reach the driver
# ---------------------------------------------------------------------------

def test_the_driver_receives_at_most_a_page(model, monkeypatch):
    DataFrame = type(model.df)  # pyspark.sql.classic.dataframe.DataFrame under classic Spark
    received = []
    original = DataFrame.collect

    def counting_collect(self):
        out = original(self)
        received.append(len(out))
        return out

    monkeypatch.setattr(DataFrame, "collect", counting_collect)
    for name in ("toPandas", "toArrow", "toLocalIterator"):
        monkeypatch.setattr(DataFrame, name, lambda *a, **k: pytest.fail("bulk fetch"))
    model.page_size = 10
    before = len(model.fetches)  # the module's model: earlier tests fetched larger pages
    try:
        model._choices = None
        choices = model.choices()
        assert max(received) <= len(choices.facets) * model.top
        received.clear()
        model.filters = Filters(reasons=[2085])  # 207 messages
        page = model.page(0)
        model.page(1)
        model.page(7)
        assert len(page.rows) == 10 and received and max(received) <= model.page_size + 1
        received.clear()
        selection = model.select(3)
        current = model.current.rows[3]
        assert received == [1] and selection.key == (current["source"], current["message_number"])
        assert len(selection.row["payload"]) <= 4096
        assert all(n <= model.page_size + 1 for what, n in model.fetches[before:]
                   if what.startswith(("page", "message", "count")))
    finally:
        model.page_size = 25
        model.clear_filters()


# ---------------------------------------------------------------------------
# static twin, escaping
# ---------------------------------------------------------------------------

class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


ALLOWED = {"div", "h3", "h4", "p", "b", "i", "code", "ul", "li", "table", "thead", "tbody", "tr",
           "th", "td", "pre", "ol", "br"}  # the explanation's next steps: lists, line breaks
SCRIPT = "<script>alert(1)</script>"


def test_static_twin_escapes_a_hostile_queue_name(spark, tmp_path):
    from dlqlens.spark import load_capture

    p = tmp_path / "hostile.bin"
    raw.write_raw(p, [dead_letter({"Format": "MQSTR", "PutApplName": SCRIPT,
                                   "UserIdentifier": "<b>'&\"</b>", "PutDate": "20240315",
                                   "PutTime": "10153012"},
                                  {"Reason": 2053, "DestQName": SCRIPT, "DestQMgrName": "<u>QM</u>",
                                   "PutApplName": SCRIPT, "PutDate": "20240315",
                                   "PutTime": "10153157"},
                                  b'<script>alert("payload")</script>', ccsid=819)] * 2)
    df = load_capture(spark, str(p))
    explorer = explore(df, page_size=5)
    try:
        bundle = explorer._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
        page = bundle["text/html"]
        parser = Tags()
        parser.feed(page)
        assert parser.tags <= ALLOWED, parser.tags - ALLOWED
        assert {name for name, _v in parser.attrs} <= {"style", "class"}
        assert "<script" not in page and "<u>" not in page
        text = "".join(parser.text)
        assert SCRIPT in text and "<u>QM</u>" in text  # shown as text, not markup
        assert "<script" not in explorer.table.value and "<script" not in explorer.explanation.value
        assert "<script" not in explorer.headers.value and "<script" not in explorer.payload.value
        assert "\x1b" not in bundle["text/plain"]
        # the destination filter choice shows the hostile name as a label, not markup
        assert any(SCRIPT in label for label, _v in explorer.destinations.options)
    finally:
        explorer.model.close()
    from dlqlens.widgets import browse

    twin = browse(df)._repr_mimebundle_()  # the one-message browser has its twin too
    assert "&lt;script&gt;" in twin["text/html"] and "<script" not in twin["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in twin


# ---------------------------------------------------------------------------
# findings, progress, the widget view
# ---------------------------------------------------------------------------

def test_findings_browser_opens_a_findings_messages(spark, sample, rows):
    from dlqlens.detect.findings import FINDINGS_SCHEMA, LINKS_SCHEMA, Findings
    from dlqlens.widgets import NO_FINDING, findings_browser

    q_full = sorted(key(r) for r in rows if r["dlh"]["Reason"] == 2053)[:30]
    inhibited = sorted(key(r) for r in rows if r["dlh"]["Reason"] == 2051)
    t0 = dt.datetime(2024, 3, 11, 9, 0)
    findings = spark.createDataFrame([
        ("reason_burst:00000000000000aa", "reason_burst", "medium", 2, ["ORDERS.IN"], t0, t0,
         len(q_full), "{}", "Q full <script>burst</script>"),
        ("backout_loop:00000000000000bb", "backout_loop", "high", 1, ["RATES.IN"], t0, t0,
         len(inhibited), "{}", "inhibited"),
    ], FINDINGS_SCHEMA)
    links = spark.createDataFrame(
        [("reason_burst:00000000000000aa", s, n) for s, n in q_full]
        + [("backout_loop:00000000000000bb", s, n) for s, n in inhibited], LINKS_SCHEMA)
    with pytest.raises(TypeError, match="Findings"):
        findings_browser(findings, sample)  # findings alone hold no messages
    browser = findings_browser(Findings(findings, links), sample, page_size=50)
    try:
        assert [f["kind"] for f in browser.findings] == ["backout_loop", "reason_burst"]
        assert browser.findings[0]["finding_id"] == "backout_loop:00000000000000bb"
        assert browser.finding == 1 and browser.model.count() == len(inhibited)
        browser.choose(2)
        assert all_pages(browser.model) == sorted(
            q_full, key=lambda k: dlq_order(next(r for r in rows if key(r) == k)))
        # the messages in no finding: an anti join with the links, paged like any filter
        browser.choose(NO_FINDING)
        rest = {key(r) for r in rows} - set(q_full) - set(inhibited)
        assert browser.model.count() == len(rest) and set(all_pages(browser.model)) == rest
        assert "messages in no finding" in browser.model.filters.describe()
        assert "Showing the messages in no finding" in browser.to_html()
        browser.choose(2)
        page = browser.to_html()
        assert "Q full &lt;script&gt;burst&lt;/script&gt;" in page and "<script" not in page
        bundle = browser._repr_mimebundle_()
        assert "text/html" in bundle and "application/vnd.jupyter.widget-view+json" in bundle
        browser.pick.value = 1  # the widget follows
        assert browser.model.filters.finding == 1
    finally:
        browser.model.close()


def test_progress_reports_the_spark_jobs_of_its_block(spark):
    from dlqlens.widgets.progress import SparkProgress

    sc = spark.sparkContext
    sc.setLocalProperty("spark.jobGroup.id", "callers-group")
    reports = []
    try:
        with SparkProgress(sc, lambda *a: reports.append(a), "counting", interval=0.05) as p:
            spark.range(0, 100_000, numPartitions=4).selectExpr("sum(id)").collect()
        assert sc.getLocalProperty("spark.jobGroup.id") == "callers-group"
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert reports[0] == ("counting…", 0, 0)
    text, done, total = reports[-1]
    assert text.startswith("done in") and p.jobs and done == total >= 4


def test_widget_view_filters_pages_and_selects(sample):
    explorer = explore(sample, page_size=20)
    model = explorer.model
    try:
        assert "page 1 of 34" in explorer.page_label.value
        explorer.reasons.value = (2053,)
        explorer.destination_pattern.value = "ORDERS.*"
        explorer.apply.click()
        assert model.filters == Filters(reasons=(2053,), destinations=("ORDERS.*",))
        assert "page 1 of 6 (102 messages)" in explorer.page_label.value
        explorer.next.click()
        assert model.current.number == 1 and model.current.method == "keyset"
        explorer.pick.value = 3
        assert model.selection.key == (model.current.rows[3]["source"],
                                       model.current.rows[3]["message_number"])
        assert "MQRC_Q_FULL" in explorer.explanation.value and "MD+96" in explorer.headers.value
        explorer.dlq_put_from.value = "not a time"
        explorer.apply.click()
        assert "filter not applied" in explorer.status.value
        explorer.clear.click()
        assert model.filters == Filters()
    finally:
        model.close()


def test_fate_filters_and_the_selected_messages_rule_trace(sample, rows):
    from collections import Counter

    from dlqlens.rules import parse
    from dlqlens.rules.handler import Message
    from dlqlens.rules.replay import ReplayPlan, process_message, replay
    from dlqlens.rules.world import World
    from dlqlens.widgets.trace import message_fields

    table = parse("RETRYINT(10)\n"
                  "REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)\n"
                  "DESTQ(AMQ.*) ACTION(DISCARD)\n"
                  "REASON(MQRC_UNKNOWN_OBJECT_NAME) ACTION(IGNORE)\n"
                  "ACTION(FWD) FWDQ(DEADQ)\n")
    plan, world = ReplayPlan.from_table(table), World.pessimistic()
    expected = Counter()  # the fates worked out in Python, message by message
    for r in rows:
        fields = message_fields(r)
        matched = [rule.index for rule in table.rules if rule.matches(fields)]
        d = r["dlh"]
        fate = process_message(matched, Message(True, d["Reason"], d["DestQName"], d["DestQMgrName"]),
                        plan, world)
        expected[(fate.disposition, fate.left_reason)] += 1
    replayed = replay(table, sample, world)
    with ExplorerModel(sample, replayed=replayed, table=table, world=world, page_size=10) as m:
        by_fate = {c.value: c.messages for c in m.choices().facets["dispositions"]}
        by_disposition = Counter()
        for (disposition, _left_reason), n in expected.items():
            by_disposition[disposition] += n
        assert by_fate == dict(by_disposition)
        m.filters = Filters(dispositions=["left"], left_reasons=["ignore_rule"])
        assert m.count() == expected[("left", "ignore_rule")] > 0
        page = m.page(0)
        assert {(r["disposition"], r["left_reason"]) for r in page.rows} == {("left", "ignore_rule")}
        sel = m.select(2)
        trace = sel.trace
        assert trace.headline == "Left on the DLQ: rule 3 has ACTION(IGNORE)." and trace.notes == []
        assert trace.steps[0].failed_keywords == ("REASON",)  # 2085 is not MQRC_Q_FULL
        assert [s.outcome for s in trace.steps] == [None, None, "ignored", None]
        assert "Rules-table fate" in m.to_html()
        m.filters = Filters(dispositions=["forwarded"])
        m.page(0)
        forwarded = m.select(0).trace
        assert forwarded.rule_index == 4 and forwarded.target == "DEADQ"
