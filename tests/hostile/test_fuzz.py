"""Brief fuzzing of every reader and the rules parser, and the conservation
property: for every damaged capture, in every mode, messages framed == rows
out + rows dropped, and FAILFAST raises (naming file and offset or line)
exactly when a message is malformed.

``DLQLENS_FUZZ_EXAMPLES`` (default 25) sets the inputs per target here; the
long runs are ``python -m tests.fuzz`` (see docs/robustness.md).
"""

from __future__ import annotations

import os

import pytest

from tests import fuzz
from tests.conftest import RANDOM_DRAWS

EXAMPLES = int(os.environ.get("DLQLENS_FUZZ_EXAMPLES", 25))
#: The test command is a gate: the same inputs every run (hypothesis's
#: derandomized search; tests/conftest.py), so that it passes or fails with
#: the code, not the draw. New inputs come from the long runs
#: (``python -m tests.fuzz``, docs/robustness.md) or ``DLQLENS_FUZZ_RANDOM=1``.
DERANDOMIZE = not RANDOM_DRAWS


@pytest.mark.parametrize("target", ["raw", "dmpmqmsg", "amqsbcg", "auto", "pcap", "hexdump"])
def test_conservation_and_modes_under_random_damage(target):
    assert fuzz.run_target(target, EXAMPLES, derandomize=DERANDOMIZE) == EXAMPLES


def test_rules_parser_fuzz():
    assert fuzz.run_target("rules", EXAMPLES * 4, derandomize=DERANDOMIZE) == EXAMPLES * 4


def test_mutations_do_damage():
    # the generator must actually produce malformed captures, or the property
    # above would be checked on clean input only
    from hypothesis import find
    from hypothesis import strategies as st

    from dlqlens.capture.message import dead_letter

    m = dead_letter({"Format": "MQSTR"}, {"Reason": 2053}, b"payload")
    data = fuzz.write_bytes("raw", [m, m], 0)
    found = find(st.lists(fuzz.byte_mutation, min_size=1, max_size=3),
                 lambda muts: fuzz.mutate(data, muts) != data, settings=fuzz.fuzz_settings(200))
    assert found


def test_check_capture_catches_a_broken_invariant(tmp_path, monkeypatch):
    """The checker is not vacuous: a reader that loses a message fails it."""
    from dlqlens.capture import reader
    from dlqlens.capture.message import dead_letter

    m = dead_letter({"Format": "MQSTR"}, {"Reason": 2053}, b"payload")
    p = tmp_path / "c.bin"
    p.write_bytes(fuzz.write_bytes("raw", [m, m], 0))
    fuzz.check_capture(p, "raw")  # fine as it is
    orig_piece = reader.read_piece

    def read_piece(piece, options, stats=None):
        for b in orig_piece(piece, options, stats):
            stats.framed += 1  # claims a message it never outputs
            yield b
    monkeypatch.setattr(reader, "read_piece", read_piece)
    with pytest.raises(AssertionError):
        fuzz.check_capture(p, "raw")


@pytest.mark.parametrize("fmt", ["dmpmqmsg", "amqsbcg"])
def test_check_capture_compares_the_fast_reader_with_the_line_reader(tmp_path, monkeypatch, fmt):
    """Every text fuzz input also goes through the fast reader (forced on):
    one that misstates a field fails the check."""
    from dlqlens.capture.message import dead_letter

    m = dead_letter({"Format": "MQSTR"}, {"Reason": 2053}, b"payload")
    p = tmp_path / f"c.{fmt}"
    p.write_bytes(fuzz.write_bytes(fmt, [m, m, m], 0))
    fuzz.check_capture(p, fmt)  # fine as it is
    module = fuzz.FAST_READERS[fmt]
    real = module._Block.fast_units

    def fast_units(self, *args):
        ok, fr = real(self, *args)
        fr.data_length = fr.data_length + 1  # claims one byte more per message
        return ok, fr

    monkeypatch.setattr(module._Block, "fast_units", fast_units)
    with pytest.raises(AssertionError, match="fast reader"):
        fuzz.check_capture(p, fmt)


# issue 19 (branch perf19): the C extension's direct API, offsets up to 2**63
def test_scan_c_api_fuzz():
    from dlqlens.capture import scan

    if not scan.COMPILED:
        pytest.skip("dlqlens.capture._scan was not built (no C compiler at install)")
    if not DERANDOMIZE:  # a random series (derandomized, it is the fixed one below)
        assert fuzz.run_target("scan", EXAMPLES * 8) == EXAMPLES * 8
    # a fixed series (derandomized: the same inputs every run) in which match_lines'
    # write paths run (well-formed programs over matching text), not only its refusals,
    # probe_lines finds its literal, mqget_lines its units, template_fields reads values
    # and dmp_units reads units (checked against the line reader)
    before = {k: fuzz.COUNTS[k] for k in ("scan_match_writes", "scan_match_units",
                                          "scan_probe_hits", "scan_mqget_units",
                                          "scan_template_values", "scan_dmp_units_read")}
    assert fuzz.run_target("scan", 800, derandomize=True) == 800
    for k, v in before.items():
        assert fuzz.COUNTS[k] > v, k  # (scan_match_units: units that matched every template)
