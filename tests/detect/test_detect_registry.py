"""The detector registry, run()'s parameter check and the text/JSON helpers of the CLI (no Spark)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import dlqlens.detect as detect_pkg
from dlqlens.cli import COMMAND_MODULES
from dlqlens.detect import DETECTORS, KINDS, detector, run_detectors
from dlqlens.commands.detect import detector_names, format_finding, parse_params
from dlqlens.safe import one_line
from dlqlens.errors import UsageError


def test_every_module_defining_detect_is_registered():
    registered = set(DETECTORS.values())
    missing = []
    for info in pkgutil.iter_modules(detect_pkg.__path__):
        name = f"dlqlens.detect.{info.name}"
        mod = importlib.import_module(name)
        if callable(getattr(mod, "detect", None)) and f"{name}:detect" not in registered:
            missing.append(name)
    assert not missing, f"modules with detect() missing from DETECTORS: {missing}"


def test_registry_names_are_finding_kinds_and_resolve():
    for name in DETECTORS:
        assert name in KINDS
        assert callable(detector(name))
    for mine in ("backout_loop", "expiry_buildup", "orphaned_reply", "reason_burst"):
        assert mine in DETECTORS
    with pytest.raises(KeyError, match="known"):
        detector("no_such_detector")
    assert COMMAND_MODULES["detect"] == "dlqlens.commands.detect"


def test_run_refuses_a_parameter_no_selected_detector_takes():
    # checked before the DataFrame is touched
    with pytest.raises(TypeError, match="max_gapp"):
        run_detectors(None, ["reason_burst"], max_gapp=5)
    with pytest.raises(TypeError, match="backout_threshold"):
        run_detectors(None, ["reason_burst", "orphaned_reply"], backout_threshold=5)


def test_params_and_detector_names_from_the_command_line():
    assert parse_params(["max_gap=120", "exclude_reasons=[2053]", "model-prefixes=[\"Q.*\"]",
                         "capture_queues={\"a.raw\": \"DLQ\"}", "name=text"]) == {
        "max_gap": 120, "exclude_reasons": (2053,), "model_prefixes": ("Q.*",),
        "capture_queues": {"a.raw": "DLQ"}, "name": "text"}
    with pytest.raises(UsageError, match="NAME=VALUE"):
        parse_params(["oops"])
    assert detector_names(["backout_loop,reason_burst", "expiry_buildup"]) == [
        "backout_loop", "reason_burst", "expiry_buildup"]
    assert detector_names(None) is None
    with pytest.raises(UsageError, match="unknown detector"):
        detector_names(["backout"])


def test_list_and_missing_captures(capsys):
    from dlqlens.cli import main

    assert main(["detect", "--list"]) == 0
    assert capsys.readouterr().out.split() == list(DETECTORS)
    assert main(["detect"]) == 2
    assert "at least one CAPTURE" in capsys.readouterr().err


def test_text_form_escapes_capture_values():
    rec = {"kind": "reason_burst", "severity": "high", "queues": ["EVIL\x1b[2J.Q"],
           "window_start": "2024-03-15T08:00:25.160000Z", "window_end": None,
           "message_count": 7, "messages": [{"source": f"f{i}.raw", "message_number": i}
                                            for i in range(1, 8)],
           "evidence": {"reason": 2053, "dest_queue": "EVIL\x1b[2J.Q"},
           "statement": "Burst for EVIL\x1b[2J.Q\nnext"}
    text = format_finding(rec)
    assert "\x1b" not in text and "\\x1b[2J" in text
    assert text.splitlines()[0] == ("[HIGH] reason_burst  EVIL\\x1b[2J.Q  "
                                    "2024-03-15 08:00:25.160Z .. ?  7 message(s)")
    # the messages as a filter, not a list: the first captures, then how many more
    assert "Messages (7, as a filter): f1.raw #1; f2.raw #2; f3.raw #3; and 4 more capture(s)" \
        in text
    assert "f4.raw" not in text
    # a record listing a sample only says how many it lists, and where the rest are
    text = format_finding({**rec, "finding_id": "reason_burst:0123456789abcdef",
                           "message_count": 700000})
    assert ("Messages (the first 7 of 700000, as a filter): f1.raw #1; f2.raw #2; f3.raw #3; "
            "and 4 more capture(s); all of them: the links of finding "
            "reason_burst:0123456789abcdef") in text
    # it ends with what to do next, the hostile name quoted as an MQSC literal and escaped
    assert "DISPLAY QLOCAL('EVIL\\x1b[2J.Q') CURDEPTH MAXDEPTH" in text
    assert "\n\n" not in text  # one block: the summary splits findings on blank lines
    assert one_line(None) == "" and one_line("a b") == "a b"
