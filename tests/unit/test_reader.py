"""Plain-Python reads (no JVM): column selection and its errors."""

from __future__ import annotations

import pytest

from dlqlens.capture.reader import ReadOptions, read_capture
from dlqlens.errors import UsageError
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
