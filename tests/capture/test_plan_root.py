"""Pieces planned with a root directory (issue 22, 1): a Spark executor's working
directory is not the driver's (a standalone worker runs its executors in
``work/app-.../N``), so the ``mqcapture`` source plans relative paths under the
driver's directory and each piece carries it; the rows keep the path as given."""

from __future__ import annotations

import os
import pickle

import pytest

from dlqlens.capture.reader import ReadOptions, plan_pieces, read_piece
from dlqlens.errors import CaptureError
from tests.conftest import ROOT

GIVEN = ["datasets/dlq-sample", "datasets/dlq-sample/*.raw", "./datasets/dlq-sample/dlq_zos.raw",
         str(ROOT / "datasets/dlq-sample/dlq_zos.raw")]


def test_relative_paths_under_a_root_plan_as_from_that_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    here = [(p.path, p.format, p.slice) for p in plan_pieces(GIVEN, ReadOptions(split_bytes=50_000))]
    monkeypatch.chdir(tmp_path)  # elsewhere, as an executor is
    with pytest.raises(CaptureError, match="datasets/dlq-sample: no such file"):
        plan_pieces(GIVEN, ReadOptions())
    pieces = plan_pieces(GIVEN, ReadOptions(split_bytes=50_000), root=str(ROOT))
    assert [(p.path, p.format, p.slice) for p in pieces] == here
    assert len(pieces) > 14 and sum(p.format == "raw" for p in pieces) > 4
    assert all(os.path.isabs(p.file) and os.path.exists(p.file) for p in pieces)


def test_a_piece_read_elsewhere_opens_its_file_and_keeps_the_given_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pieces = plan_pieces(["datasets/dlq-sample/dlq_aix.dmp"], ReadOptions(split_bytes=50_000),
                         root=str(ROOT))
    moved = pickle.loads(pickle.dumps(pieces))  # as Spark ships them
    batches = [b for p in moved for b in read_piece(p, ReadOptions(columns=("source",
                                                                            "message_number")))]
    sources = {s for b in batches for s in b.column("source").to_pylist()}
    numbers = [n for b in batches for n in b.column("message_number").to_pylist()]
    assert sources == {"datasets/dlq-sample/dlq_aix.dmp"}
    assert len(moved) > 1 and numbers == list(range(1, len(numbers) + 1))


def test_a_file_is_planned_once_while_it_is_unchanged(tmp_path, monkeypatch):
    """Planning a large text capture reads it whole (to count its messages); a
    command plans before Spark starts and again when it loads, a notebook loads
    the same files again and again: the slices are kept while the file is
    unchanged, and a file written since (appended to, rewritten, replaced) is
    planned again, giving the slices of what it holds now."""
    import dataclasses

    from dlqlens.capture import reader
    from dlqlens.capture.message import dead_letter
    from dlqlens.capture.registry import FORMATS

    calls = []
    spec = FORMATS["dmpmqmsg"]

    def counted(*args, **kwargs):
        calls.append(args[0])
        return spec.plan(*args, **kwargs)

    monkeypatch.setitem(FORMATS, "dmpmqmsg", dataclasses.replace(spec, plan=counted))
    monkeypatch.setattr(reader, "_planned", {})
    msgs = [dead_letter({"Format": "MQSTR"}, {"Reason": 2053, "DestQName": "Q"}, f"m{i}".encode())
            for i in range(400)]
    path = tmp_path / "big.dmp"
    spec.write(path, msgs)
    options = ReadOptions(format="dmpmqmsg", split_bytes=20_000)

    def plan():
        return [(p.slice.start, p.slice.first_number) for p in plan_pieces([str(path)], options)]

    first = plan()
    assert len(first) > 3 and plan() == first and len(calls) == 1
    assert plan_pieces([str(path)], ReadOptions(format="dmpmqmsg", split_bytes=40_000)) \
        and len(calls) == 2  # other options: planned for them
    spec.write(path, msgs + msgs)  # rewritten, twice as long
    again = plan()
    assert len(calls) == 3 and len(again) > len(first) and again[-1][1] > 400
    monkeypatch.setattr(reader, "_PLANNED_FILES", 1)  # bounded: the oldest plan goes
    plan_pieces([str(path)], ReadOptions(format="dmpmqmsg", split_bytes=30_000))
    assert len(reader._planned) == 1 and plan() == again and len(calls) == 5
