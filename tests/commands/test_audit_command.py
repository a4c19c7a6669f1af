"""``dlqlens audit`` end to end: a gate that exits 1 naming the failed expectation."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dlqlens.cli import main
from tests.quality.cases import ROOT

TRUNCATED = str(ROOT / "tests/hostile/corpus/dmpmqmsg_mqdlh_trunc_mid.dmp")


@pytest.mark.spark
def test_exit_status_1_names_the_failed_expectation(spark, capsys):
    status = main(["audit", TRUNCATED, "--suite", "structural", "--master", "local[2]"])
    out, err = capsys.readouterr()
    assert status == 1
    assert "dlqlens: audit failed: structural.decode_status" in err
    assert "FAIL    structural.decode_status" in out
    assert "structural.decode_status failing messages: (decode_status) IS NOT NULL" in out


@pytest.mark.spark
def test_json_output_and_exit_0_when_nothing_fails(spark, tmp_path, capsys):
    policy = tmp_path / "policy.toml"
    policy.write_text("forbidden_findings = []\nmax_age_seconds = 1e9\n", encoding="utf-8")
    clean = str(ROOT / "datasets/scenarios/clean_baseline")
    status = main(["audit", clean, "--suite", "hygiene", "--policy", str(policy), "--json",
                   "--master", "local[2]"])
    out, _ = capsys.readouterr()
    assert status == 0
    data = json.loads(out)
    assert data["success"] is True
    assert data["policy"]["max_age_seconds"] == 1e9
    assert [r["expectation"] for r in data["results"]] == [
        "hygiene.max_age", "hygiene.without_dlh", "hygiene.persistent_share"]
    assert "audited as the DLQ: 1 capture(s)" in data["notes"]


@pytest.mark.parametrize("policy, text", [
    ("max_age = 60\n", "policy.toml:1: unknown key 'max_age'"),
    ("max_depth_fraction = 3\n", "policy.toml:1: max_depth_fraction: expected a value from 0 to 1"),
])
def test_a_bad_policy_is_refused_before_spark(tmp_path, policy, text):
    path = tmp_path / "policy.toml"
    path.write_text(policy, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "dlqlens.cli", "audit",
                           str(ROOT / "datasets/scenarios/clean_baseline"), "--policy", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and text in proc.stderr, proc.stderr


def test_a_manifest_capture_outside_its_directory_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"captures": [{"file": "../etc/passwd", "queue": "SYSTEM.DEAD.LETTER.QUEUE"}]}))
    proc = subprocess.run([sys.executable, "-m", "dlqlens.cli", "audit", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "expected a file name in the directory" in proc.stderr


def test_a_plain_directory_beside_a_simulator_directory_is_audited_as_the_dlq():
    """Its files are DLQ captures (every planned file but the manifests' other queues);
    the path typed for it is never a row's source."""
    from dlqlens.commands.audit import audit_plan

    plan = audit_plan([str(ROOT / "datasets/scenarios/clean_baseline"),
                       str(ROOT / "datasets/dlq-sample")])
    dlq = plan["kwargs"]["dlq_sources"]
    sample = {p.path for p in plan["pieces"] if "dlq-sample" in p.path}
    assert sample and sample <= dlq
    assert not any(s.endswith("QM.HUB_ORDERS.IN.raw") for s in dlq)  # an application queue
    assert any(s.endswith("QM.HUB_SYSTEM.DEAD.LETTER.QUEUE.raw") for s in dlq)


def test_a_simulator_directory_without_the_deadq_is_refused(tmp_path):
    """--queue-defs naming another DEADQ leaves nothing to audit as the DLQ: an error, not a
    gate that passes on no message."""
    from dlqlens.commands.audit import audit_plan
    from dlqlens.errors import UsageError

    defs = tmp_path / "qm.mqsc"
    defs.write_text("ALTER QMGR DEADQ(OTHER.DLQ)\n", encoding="utf-8")
    with pytest.raises(UsageError, match="no capture of the dead-letter queue OTHER.DLQ"):
        audit_plan([str(ROOT / "datasets/scenarios/clean_baseline")], queue_defs=str(defs))


def test_a_markers_manifest_values_are_checked_by_name():
    """A marker is input too: a manifest value of the wrong type is a UsageError
    naming the directory, the capture and the key (review), never a traceback."""
    from types import SimpleNamespace

    from dlqlens.commands.audit import _from_markers
    from dlqlens.errors import UsageError

    good = {"qmgr": "QM1", "queue": "SYSTEM.DEAD.LETTER.QUEUE", "captured_at": None}
    pieces = SimpleNamespace(directories=["decoded"], manifests={"a.dmp": good})
    dlq, dlq_queues, queues, times, others = _from_markers(pieces, "SYSTEM.DEAD.LETTER.QUEUE")
    assert dlq == {"a.dmp"} and queues == {"a.dmp": ("QM1", "SYSTEM.DEAD.LETTER.QUEUE")}
    assert not others and not times
    pieces.manifests = {"a.dmp": {**good, "captured_at": 1700000000}}
    with pytest.raises(UsageError, match=r"decoded: manifests: 'a.dmp': captured_at: "
                                         r"expected a string or null, found int"):
        _from_markers(pieces, "SYSTEM.DEAD.LETTER.QUEUE")
