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
