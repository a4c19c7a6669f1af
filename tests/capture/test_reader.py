"""Plain-Python reads (no JVM): column selection and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlqlens.capture.reader import ReadOptions, read_capture
from dlqlens.errors import CaptureError, UsageError
from tests.conftest import DATASETS


def test_columns_select_and_order_the_output():
    full = read_capture(DATASETS / "dlq_zos.raw")
    few = read_capture(DATASETS / "dlq_zos.raw", columns=["dlh", "message_number"])
    assert few.table.schema.names == ["dlh", "message_number"]
    assert few.table.column("dlh").to_pylist() == full.table.column("dlh").to_pylist()
    assert few.stats == full.stats


def test_columns_keep_reader_modes_working():
    # DROPMALFORMED needs decode_status even when it is not selected
    got = read_capture(DATASETS / "dlq_zos.raw", mode="DROPMALFORMED", columns=["source"])
    assert got.table.schema.names == ["source"] and len(got) == got.stats.rows


@pytest.mark.parametrize("cols, match", [(["source", "nope"], "nope"), ([], "none given"),
                                         (["source", "source"], "named twice")])
def test_columns_errors(cols, match):
    with pytest.raises(UsageError, match=match):
        ReadOptions(columns=tuple(cols))


def test_columns_option_from_spark_string():
    assert ReadOptions.from_options({"columns": "source, dlh"}).columns == ("source", "dlh")


_SUBSETS = [("reason_name",), ("decode_status", "decode_issues"), ("dlh", "put_ts", "dlh_put_ts"),
            ("md", "payload_text"), ("headers", "header_chain", "xqh", "tm", "rfh2", "layout")]


def _pruning_inputs():
    files = sorted(p for p in DATASETS.iterdir() if not p.name.endswith(".jsonl"))
    corpus = Path(__file__).resolve().parents[1] / "hostile" / "corpus"
    files += sorted(p for p in corpus.iterdir() if p.is_file() and p.stat().st_size < 1 << 20
                    and p.suffix in (".raw", ".dmp", ".bcg", ".txt", ".bin"))
    return files


@pytest.mark.parametrize("path", _pruning_inputs(), ids=lambda p: p.name)
def test_decoding_only_some_columns_gives_the_same_values(path):
    """decode_frames(columns=...) skips work, never changes a value or a status."""
    try:
        full = read_capture(path)
    except CaptureError as exc:  # a corpus case that is no capture: refused alike, whatever the columns
        for cols in _SUBSETS:
            with pytest.raises(CaptureError) as again:
                read_capture(path, columns=list(cols))
            assert str(again.value) == str(exc)
        return
    for cols in _SUBSETS:
        few = read_capture(path, columns=list(cols))
        assert few.stats == full.stats
        assert few.table.equals(full.table.select(list(cols))), (path.name, cols)


_FIELDS = {"md": ["MsgId", "ReplyToQ", "Persistence", "Format", "PutApplName"],
           "dlh": ["Reason", "DestQName"], "tm": ["QName"]}
_STRUCT_COLUMNS = ["source", "message_number", "md", "dlh", "tm", "put_ts", "dlh_put_ts",
                   "reason_name", "decode_status", "decode_issues"]


def _table(path, options):
    import pyarrow as pa

    from dlqlens.capture.reader import plan_pieces, read_piece

    batches = [b for p in plan_pieces([path], options) for b in read_piece(p, options)]
    return pa.Table.from_batches(batches) if batches else None


@pytest.mark.parametrize("path", _pruning_inputs(), ids=lambda p: p.name)
def test_decoding_only_some_fields_gives_the_same_values(path):
    """``fields``: the structs hold only the fields asked (the structure's order,
    null where the structure is), every value and status as in a whole read."""
    from dlqlens.decode.schema import only_fields

    try:
        full = _table(path, ReadOptions(split_text=False))
    except CaptureError:
        return  # refused whatever is asked (test_decoding_only_some_columns_gives_the_same_values)
    few = _table(path, ReadOptions(split_text=False, columns=tuple(_STRUCT_COLUMNS),
                                   fields=_FIELDS))
    if full is None:  # no message (an empty file)
        assert few is None
        return
    for c in _STRUCT_COLUMNS:
        want = full.column(c).combine_chunks()
        if c in _FIELDS:
            want = only_fields(want, _FIELDS[c])
        assert few.column(c).combine_chunks().equals(want), (path.name, c)
    assert few.schema.field("md").type.names == ["Format", "Persistence", "MsgId", "ReplyToQ",
                                                 "PutApplName"]


@pytest.mark.parametrize("fields, match", [({"payload": ["x"]}, "cannot be narrowed"),
                                           ({"md": ["NoSuch"]}, "md has no field NoSuch"),
                                           ({"dlh": []}, "none given")])
def test_fields_errors(fields, match):
    with pytest.raises(UsageError, match=match):
        ReadOptions(fields=fields)


def test_fields_are_kept_in_a_canonical_form():
    got = ReadOptions(fields={"tm": "QName", "md": ("MsgId", "Format")})
    assert got.fields == (("md", ("Format", "MsgId")), ("tm", ("QName",)))
    assert got.field_map == {"md": ("Format", "MsgId"), "tm": ("QName",)}
    from dlqlens.decode.schema import message_schema

    whole = [f.name for f in message_schema().field("dlh").type]
    assert ReadOptions(fields={"dlh": whole}).fields is None  # a struct asked whole
