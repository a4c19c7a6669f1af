"""The report's data-quality section: the suites' results, escaped (no Spark needed)."""

from __future__ import annotations

from dlqlens.quality import Check, MessageSelection, Policy, QualityResults
from dlqlens.quality.results import Result
from dlqlens.report.build import _quality_section
from dlqlens.report.views import render_item

HOSTILE = "<script>alert(1)</script>"


def results():
    check = Check("structural.dlh.Reason", "structural", "dlh.Reason", "dlh.Reason",
                  "ExpectColumnValuesToBeInSet", {"value_set": [2053]}, "in {2053}")
    failed = Result(check, False, f"1 of 2 unexpected (e.g. '{HOSTILE}')", 1,
                    MessageSelection("dlh.Reason = 1", "capture rows where dlh.Reason = 1"))
    fine = Result(Check("hygiene.max_age", "hygiene", "age_seconds", "age_seconds",
                        "ExpectColumnMaxToBeBetween", {"max_value": 60.0}, "<= 60 s"),
                  True, "5 s (oldest)", 5, MessageSelection(None, "DLQ rows where age_seconds > 60"))
    return QualityResults([failed, fine], Policy(), [f"note {HOSTILE}"])


def test_section_names_the_failed_expectations_and_escapes_capture_text():
    section = _quality_section(results())
    assert section.id == "quality"
    html = "".join(str(render_item(item)) for item in section.items)
    assert "structural.dlh.Reason" in html
    assert "1 expectation(s) failed" in html
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert '<tr class="fail">' in html and '<tr class="pass">' in html
    assert "2 expectation(s): 1 passed, 1 failed, 0 unknown" in section.intro


def test_text_view_escapes_control_characters():
    r = results()
    r.results[0].observed = "bad \x1b[31m value"
    text = r.to_text()
    assert "\x1b" not in text and "\\x1b" in text
    assert "structural.dlh.Reason failing messages: dlh.Reason = 1" in text
