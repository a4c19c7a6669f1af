"""The suites on the simulator's scenarios and the hostile corpus, run on Spark.

Every case of docs/quality.md's table is audited once (module fixture) as
``dlqlens audit`` does; the table is checked against the results, so it
cannot go stale.
"""

from __future__ import annotations

import os
import re

import pytest

import dlqlens.spark.session as spark_session  # where a capture's smallness is measured

from dlqlens.quality import Policy, audit
from tests.builders import persisted_rdds
from tests.quality.cases import CASES, ROOT, run_case

pytestmark = pytest.mark.spark

#: What each scenario was built to break (independent of the docs' table).
BUILT_TO_BREAK = {
    "poison_ping_pong": "hygiene.finding.backout_loop",
    "trigger_storm": "hygiene.finding.trigger_failure",
    "orphaned_replies": "hygiene.finding.orphaned_reply",
    "expiry_buildup": "hygiene.finding.expiry_buildup",
    "queue_full_burst": "hygiene.depth",
    "permissions_change": "hygiene.fall_through",
    "wrong_strucid_dlh": "structural.decode_status",
    "mqdlh_trunc_mid": "structural.decode_status",
}


@pytest.fixture(scope="module")
def results(spark):
    return {name: run_case(spark, name) for name in CASES}


def docs_table() -> dict:
    """``{case: [failed expectation, ...]}`` from docs/quality.md's cases table."""
    text = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    body = text.split("<!-- cases:", 1)[1]
    table = {}
    for line in body.splitlines():
        m = re.match(r"\| `([^`]+)` \|.*\| ([^|]+) \|$", line)
        if m:
            cell = m.group(2).strip()
            table[m.group(1)] = [] if cell == "none" else re.findall(r"`([^`]+)`", cell)
    return table


def test_clean_baseline_passes_both_suites(results):
    r = results["clean_baseline"]
    assert r.success, r.to_text()
    assert {x.check.suite for x in r.results} == {"structural", "hygiene"}
    assert r["structural.dlh.StrucId"].passed is True
    assert r["hygiene.without_dlh"].passed is True


@pytest.mark.parametrize("case, expectation", sorted(BUILT_TO_BREAK.items()))
def test_each_scenario_fails_naming_the_expectation_it_breaks(results, case, expectation):
    r = results[case]
    assert expectation in [x.name for x in r.failed], r.to_text()
    assert f"FAIL    {expectation}" in r.to_text()


def test_docs_table_is_the_real_results(results):
    table = docs_table()
    assert set(table) == set(CASES)
    for case, failed in table.items():
        assert failed == [x.name for x in results[case].failed], case


def test_an_application_queue_beside_the_dlq_is_not_held_to_the_dlq_expectations(spark, results):
    # poison_ping_pong: PAYMENTS.BOQ holds 10 backed-out messages, none with an MQDLH
    r = results["poison_ping_pong"]
    assert r["hygiene.without_dlh"].passed is True
    from dlqlens.spark.session import load_capture

    boq = str(ROOT / "datasets/scenarios/poison_ping_pong/QM.APP_PAYMENTS.BOQ.raw")
    as_dlq = audit(load_capture(spark, boq), suites=("hygiene",),
                   policy=Policy(forbidden_findings=()))
    assert as_dlq["hygiene.without_dlh"].passed is False
    assert as_dlq["hygiene.without_dlh"].value == 10


def test_failing_filters_select_what_great_expectations_counted(spark, results):
    from dlqlens.spark.session import load_capture

    # a row predicate (structural) and a join (the replay) on the sample
    df = load_capture(spark, str(ROOT / "datasets/dlq-sample"))
    r = results["dlq-sample"]
    fall = r["hygiene.fall_through"]
    assert fall.passed is False
    assert fall.failing.predicate is None
    assert fall.failing.apply(df).count() == fall.value
    bad = load_capture(spark, str(ROOT / "tests/hostile/corpus/dmpmqmsg_mqdlh_trunc_mid.dmp"))
    status = results["mqdlh_trunc_mid"]["structural.decode_status"]
    assert bad.where(status.failing.column()).count() == status.value == 1
    backout = results["mqdlh_trunc_mid"]["hygiene.finding.backout_loop"]
    assert backout.failing.apply(bad).count() >= 1


def test_depth_is_unknown_without_the_dlq_definition(results):
    # the sample's qm.mqsc says DEADQ(SYSTEM.DEAD.LETTER.QUEUE) and does not define it
    r = results["dlq-sample"]
    assert r["hygiene.depth"].passed is None
    assert "MAXDEPTH" in r["hygiene.depth"].observed
    assert any("no definition of SYSTEM.DEAD.LETTER.QUEUE" in n for n in r.notes)
    assert results["queue_full_burst"]["hygiene.depth"].value == 75 / 50


def test_ephemeral_context_writes_nothing_and_sends_no_analytics(spark, tmp_path, monkeypatch,
                                                                 results):
    from dlqlens.quality.engine import context
    from dlqlens.spark.session import load_capture

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GX_ANALYTICS_ENABLED", raising=False)
    ctx = context()
    assert os.environ["GX_ANALYTICS_ENABLED"] == "False"
    assert ctx.config.analytics_enabled is False
    r = audit(load_capture(spark, str(ROOT / "tests/hostile/corpus/dmpmqmsg_odd_hex.dmp")),
              suites=("structural",))
    assert r.results
    assert os.listdir(tmp_path) == []
    assert not (ROOT / "gx").exists()


def test_results_views(results):
    r = results["dlq-sample"]
    table = r.table
    assert list(table.columns) == ["suite", "expectation", "column", "observed", "threshold",
                                   "passed", "failing"]
    assert len(table) == len(r.results)
    d = r.to_dict()
    assert d["success"] is False
    assert d["results"][0]["expectation"] == "structural.md.StrucId"
    html = r._repr_html_()
    assert '<tr class="fail">' in html and "hygiene.fall_through" in html


def counted_verdict(result) -> bool:
    """The verdict the numbers dlqlens counted give (the failing filter's count, the
    column's maximum or sum, the share)."""
    check, kw = result.check, result.check.kwargs
    if check.expectation in ("ExpectColumnMaxToBeBetween", "ExpectColumnSumToBeBetween"):
        return result.value <= kw["max_value"]
    if kw.get("mostly") is not None:
        return result.value >= kw["mostly"]
    return result.value == 0


def test_great_expectations_verdicts_agree_with_the_counted_filters(results):
    checked = 0
    for case, res in results.items():
        for r in res.results:
            if r.passed is not None:
                assert r.passed == counted_verdict(r), (case, r.name, r.observed)
                checked += 1
    assert checked > 200


def test_the_checks_columns_are_cached_only_when_their_frame_is_not(spark, cached_sample,
                                                                      monkeypatch):
    """The structural checks over the cached sample cache nothing more (their columns are
    projected again from the sample's cache: two caches of a 10M capture ran the driver out
    of heap); over the same rows uncached, the checks' columns are cached once, then
    unpersisted. Nothing is left persisted either way (great-expectations persists each
    batch's DataFrame unless told not to, and never unpersists it). Same verdicts both
    ways."""
    from dlqlens.quality.engine import validate
    from dlqlens.quality.structural import structural_checks

    frame_class = type(cached_sample)  # PySpark's classic (or Connect) DataFrame
    calls = []
    real_cache = frame_class.cache
    monkeypatch.setattr(frame_class, "cache", lambda self: calls.append(self) or real_cache(self))
    checks = structural_checks()
    before = persisted_rdds(spark)
    on_cached = validate({"messages": cached_sample}, checks)
    assert calls == []
    assert persisted_rdds(spark) <= before
    uncached = cached_sample.select("*")
    assert not uncached.is_cached
    on_uncached = validate({"messages": uncached}, checks)
    assert len(calls) == 1 and not calls[0].is_cached  # unpersisted when done
    assert persisted_rdds(spark) <= before
    assert {k: o.success for k, o in on_cached.items()} == \
        {k: o.success for k, o in on_uncached.items()}


def test_the_partitioned_path_gives_the_same_verdicts(spark, results, monkeypatch):
    """Every case audited again as a capture past ``SMALL_CAPTURE_MESSAGES`` is: its
    detectors read a cache of their own (``detector_input``: only the fields they
    read) and run on the partitioned path (every grouping shuffled across the
    executors instead of read from one partition). The same verdicts, words and
    numbers as the module's results, in the same session (which holds them), and
    every cache unpersisted after each audit."""
    import dlqlens.detect as detect

    monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", -1)
    read = []
    real_run = detect.run_detectors

    def run_detectors(df, *args, **kwargs):
        read.append((tuple(df.columns), df.is_cached))
        return real_run(df, *args, **kwargs)

    monkeypatch.setattr(detect, "run_detectors", run_detectors)

    def verdicts(r):
        return [(x.name, x.passed, x.observed, x.value, x.error) for x in r.results]

    before = persisted_rdds(spark)
    for name in sorted(CASES):
        assert verdicts(run_case(spark, name)) == verdicts(results[name]), name
        assert persisted_rdds(spark) <= before, f"{name}: an audit left a cache behind"
    detector_columns = (*detect.DETECTOR_COLUMNS, *detect.DETECTOR_FIELDS, "payload_sha256")
    assert read and all(got == (detector_columns, True) for got in read), read


def test_an_audit_counts_the_capture_once(spark, monkeypatch):
    """The audit decides whether its capture is small (its detectors' own cache past
    the limit) and tells ``run_detectors``, which then does not count it again."""
    import dlqlens.detect as detect
    from dlqlens.spark.session import load_capture

    calls = []
    real = detect.small_capture
    monkeypatch.setattr(detect, "small_capture", lambda df: calls.append(df) or real(df))
    audit(load_capture(spark, str(ROOT / "datasets/dlq-sample")))
    assert len(calls) == 1


def test_an_audit_takes_each_captures_newest_put_from_one_query(spark, monkeypatch):
    """No capture time given: the ages of the DLQ's messages and the detectors take
    each capture's newest put from one aggregation (``with_newest_puts``), not from
    a window over each capture's rows (all of a one-file capture in one task) nor
    from a join per detector."""
    import importlib

    import dlqlens.detect.common as common
    from dlqlens.spark.session import load_capture

    # the module (the package's name ``audit`` is its function)
    audit_module = importlib.import_module("dlqlens.quality.audit")

    built, frames = [], []
    newest_puts = common.newest_puts
    monkeypatch.setattr(common, "newest_puts", lambda d: built.append(d) or newest_puts(d))
    dlq_frame = audit_module.dlq_frame
    monkeypatch.setattr(audit_module, "dlq_frame",
                        lambda *a: frames.append(dlq_frame(*a)) or frames[-1])
    results = audit(load_capture(spark, str(ROOT / "datasets/dlq-sample")))
    assert results["hygiene.max_age"].error is None
    assert len(built) == 1 and len(frames) == 1
    assert "Window" not in frames[0]._jdf.queryExecution().optimizedPlan().toString()
