"""Findings as rows with their messages, for assertions (tests only).

Detectors return ``Findings(findings, links)`` (:mod:`dlqlens.detect.findings`);
:func:`collect_findings` brings both of a small test capture to the driver and
gives each findings Row a ``messages`` list (its links, sorted), checking the
contract on the way: every link points at a finding, every finding's
``message_count`` is its number of links, and no message is linked twice to
one finding.
"""

from __future__ import annotations


def collect_findings(found) -> list:
    """``found``'s findings (in their order), each a Row with ``messages``:
    sorted ``Row(source, message_number)``."""
    from pyspark.sql import Row

    findings, links = found
    rows = findings.collect()
    ids = [r.finding_id for r in rows]
    assert len(ids) == len(set(ids)), f"finding ids repeat: {ids}"
    by_id: dict = {}
    for link in links.collect():
        by_id.setdefault(link.finding_id, []).append((link.source, link.message_number))
    assert set(by_id) <= set(ids), f"links of no finding: {sorted(set(by_id) - set(ids))}"
    out = []
    for r in rows:
        refs = sorted(by_id.get(r.finding_id, []))
        assert len(refs) == len(set(refs)), f"{r.finding_id}: a message linked twice"
        assert r.message_count == len(refs), (r.finding_id, r.message_count, len(refs))
        out.append(Row(**r.asDict(), messages=[Row(source=s, message_number=n)
                                               for s, n in refs]))
    return out
