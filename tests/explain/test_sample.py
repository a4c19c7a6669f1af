"""The explanations on the bundled sample captures: severities, coverage, explained messages.

One detectors run (with the capture times of the dmpmqmsg banners, as the
command line reads them) serves every test of the module.
"""

from __future__ import annotations

import pytest

from dlqlens.detect.findings import SEVERITIES
from dlqlens.explain import coverage, explain_finding, explain_messages, unexplained
from tests.findings_rows import collect_findings
from dlqlens.explain.finding import EVIDENCE
from tests.conftest import DATASETS

pytestmark = pytest.mark.spark

#: The sample's findings by the severity scale, most severe first (before the scale:
#: seven "high" and one "medium").
EXPECTED = [
    ("critical", "expiry_buildup", "SYSTEM.DEAD.LETTER.QUEUE"),  # 112 of 112 expire within 5 min
    ("high", "unknown_destination", "LEDGER.REPORT"),  # banner: 11 s after its last 2085
    ("high", "reason_burst", "LEDGER.POST"),    # banner: 20 s after its last dead letter
    ("high", "reason_burst", "INVOICES.IN"),    # banner: 11 s after
    ("high", "unknown_destination", "INVOICES.IN"),  # the deleted queue, at any rate
    ("high", "reason_burst", "RATES.IN"),       # banner: 9 s after
    ("medium", "reason_burst", "ORDERS.IN"),    # raw capture: no time, end unknown
    ("medium", "unknown_destination", "ORDERS.ARCHVE"),  # one misaddressed message
    ("medium", "trigger_storm", "APP.WORK"),    # the dead-lettered re-triggers, 88 a minute
    ("medium", "trigger_failure", "APP.WORK"),
    ("medium", "backout_loop", "APP.IN"),
    ("medium", "persistent_reply", "AMQ.*"),
    ("medium", "orphaned_reply", "AMQ.*"),
]


@pytest.fixture(scope="module")
def sample(spark):
    from dlqlens.capture.reader import ReadOptions, captured_queues, captured_times, plan_pieces
    from dlqlens.detect import Findings, finding_record, run_detectors
    from dlqlens.detect.common import CaptureTimes
    from dlqlens.spark.session import load_capture

    pieces = plan_pieces([DATASETS], ReadOptions())
    queues = captured_queues(pieces)
    df = load_capture(spark, DATASETS).cache()
    findings, links = run_detectors(
        df, capture_queues=queues, capture_time=CaptureTimes(captured_times(pieces),
                                                             origin="banner"))
    found = Findings(findings.cache(), links)
    # every message of each finding (the sample is small)
    records = [finding_record(r) for r in collect_findings(found)]
    yield df, found, records, queues
    found.findings.unpersist()
    df.unpersist()


def test_severities_follow_the_scale(sample):
    _, _, records, _ = sample
    got = [(r["severity"], r["kind"], r["queues"][0]) for r in records]
    assert got == EXPECTED
    ranks = [SEVERITIES.index(r["severity"]) for r in records]
    assert ranks == sorted(ranks)
    high = sum(r["severity"] == "high" for r in records)
    assert 2 * high < len(records)  # at most a minority HIGH
    # a "still going" statement says where the capture time came from
    for r in records:
        if "still going" in r["statement"]:
            assert "the capture time from its dmpmqmsg banner" in r["statement"]
    orders = next(r for r in records if r["queues"] == ["ORDERS.IN"])
    assert orders["evidence"]["ongoing_at_capture"] is None
    assert "whether it went on is unknown" in orders["statement"]


def test_every_finding_is_explained_with_next_steps(sample):
    _, _, records, queues = sample
    for r in records:
        f = explain_finding(r, capture_queues=queues)
        table = EVIDENCE[r["kind"]]
        assert set(r["evidence"]) - {"reason_name"} <= set(table), r["kind"]  # all labelled
        assert f.next_steps and f.next_steps[0].commands
        assert f.messages.count == r["message_count"]
        assert "What to check or do next:" in f.to_text()
    rates = explain_finding(next(r for r in records if r["queues"] == ["RATES.IN"]))
    assert "ALTER QLOCAL('RATES.IN') PUT(ENABLED)" in [c.text for c in
                                                       rates.next_steps[0].commands]


def test_the_finding_filter_selects_its_messages(sample):
    df, _, records, _ = sample
    for r in records:
        f = explain_finding(r)
        assert df.where(f.messages.column()).count() == r["message_count"]


def test_a_sampled_record_says_where_the_rest_is(sample):
    """What --jsonl and the report bring to the driver: the first messages of a finding
    (sample_links), its count of all of them, and its id, the key of its links."""
    from dlqlens.detect import finding_record, sample_links

    df, found, _, _ = sample
    rows = found.findings.collect()
    samples = {r.finding_id: r.messages for r in sample_links(found.links, 3).collect()}
    assert set(samples) == {r.finding_id for r in rows}
    for row in rows:
        rec = finding_record(row, messages=samples[row.finding_id])
        assert len(rec["messages"]) == min(3, rec["message_count"])
        assert rec["messages"] == sorted(rec["messages"], key=lambda m: (m["source"],
                                                                         m["message_number"]))
        f = explain_finding(rec)
        assert f.finding_id == row.finding_id and f.messages.count == len(rec["messages"])
        if rec["message_count"] > 3:
            assert f"the first 3 of {rec['message_count']}" in f.to_text()
            assert row.finding_id in f.to_text()
        # all of them, lazily: the finding's rows of the capture
        assert found.messages(df, row.finding_id).count() == row.message_count
    with pytest.raises(ValueError, match="n must be 1 or more"):
        sample_links(found.links, 0)


def test_messages_in_no_finding_grouped_with_counts(sample):
    from pyspark.sql import DataFrame

    df, findings, _, _ = sample
    groups = unexplained(df, findings)
    assert isinstance(groups, DataFrame)  # lazy: nothing collected
    # every dead letter of the sample is in a finding: the persistent replies (2048) and the
    # 2085 strays below the burst threshold have detectors of their own
    assert groups.collect() == []
    cov = coverage(df, findings)
    total = df.count()
    assert cov.total == total == cov.covered and cov.unexplained == 0 and cov.groups == []
    assert cov.to_text().startswith(f"Messages in no finding (0 of {total};")
    assert "<script>" not in cov._repr_html_()
    kinds = {(r["kind"], r["queues"][0]): r for r in findings.findings.collect()}
    assert kinds[("persistent_reply", "AMQ.*")]["message_count"] == 27
    assert kinds[("unknown_destination", "LEDGER.REPORT")]["message_count"] == 5
    assert kinds[("unknown_destination", "ORDERS.ARCHVE")]["message_count"] == 1
    text = explain_finding(kinds[("unknown_destination", "LEDGER.REPORT")]).to_text()
    assert "check: whether LEDGER.REPORT exists on QM.LEDGER (runmqsc QM.LEDGER)" in text
    assert "DISPLAY QUEUE('LEDGER.REPORT')" in text


def test_explained_messages_name_their_findings(sample):
    from pyspark.sql import functions as F

    df, findings, _, _ = sample
    one = df.where(F.col("source").endswith("dlq_aix.dmp") & (F.col("message_number") == 3))
    [e] = explain_messages(one, findings=findings)
    # a dead letter for the deleted INVOICES.IN: the burst, and the destination that is gone
    assert [f["kind"] for f in e.findings] == ["reason_burst", "unknown_destination"]
    assert dict(e.facts)["Findings"].startswith("reason_burst (high): Burst of 131")
    lone = df.where(F.col("source").endswith("dlq_linux_x86.raw")
                    & (F.col("dlh.DestQName") == "ORDERS.ARCHVE"))
    [e] = explain_messages(lone, findings=findings)
    assert dict(e.facts)["Findings"].startswith("unknown_destination (medium): 1 dead letter(s)")
    assert "DISPLAY QUEUE('ORDERS.ARCHVE')" in [c.text for s in e.next_steps for c in s.commands]
