"""Parquet in and out (dlqlens/spark/parquet.py): round trip of every column and of the
schema's field metadata, the partition layout, reader modes, refusals, results."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil

import pytest

from dlqlens.errors import MalformedMessageError, UsageError
from dlqlens.spark.parquet import (MARKER, UNKNOWN_PARTITION, MessageInput, capture_names,
                                   check_out_dir, message_input, read_marker, read_results,
                                   write_messages, write_results)
from dlqlens.spark.schema import described_schema
from tests.conftest import DATASETS, ROOT

CORPUS = ROOT / "tests" / "hostile" / "corpus"
#: a capture with a malformed message (bad_data) and one without a DLQ put time
HOSTILE = CORPUS / "amqsbcg_invalid_hex.bcg"


# --- pure Python: names and refusals (no Spark) ---------------------------------------------

def test_capture_names_are_one_safe_path_component():
    names = capture_names(["q1/dlq.dmp", "q2/dlq.dmp", "../../etc/pass wd", "a/b/x=1;$(rm).raw",
                           "a/..", "plain.raw"])
    assert names["plain.raw"] == "plain.raw"
    assert names["../../etc/pass wd"] == "pass_wd"
    assert names["a/b/x=1;$(rm).raw"] == "x_1___rm_.raw"
    assert names["a/.."] == "_"
    # the same base name twice: told apart by a hash of the full path, stable
    assert names["q1/dlq.dmp"] != names["q2/dlq.dmp"]
    assert names["q1/dlq.dmp"].startswith("dlq.dmp-") and len(names["q1/dlq.dmp"]) == 16
    assert capture_names(["q2/dlq.dmp", "q1/dlq.dmp"]) == {k: v for k, v in names.items()
                                                            if k.endswith("dlq.dmp")}
    for n in names.values():
        assert "/" not in n and n not in (".", "..") and set(n) <= set(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def test_described_schema_keeps_descriptions_and_units():
    s = described_schema()
    assert s["source"].metadata["description"] == "The capture file, as named by the user."
    assert "dead-letter queue" in s["dlh_put_ts"].metadata["description"]
    expiry = s["md"].dataType["Expiry"].metadata
    assert "tenths of a second" in expiry["description"].lower() and expiry["mq_type"] == "MQLONG"
    assert s["dlh"].dataType["PutDate"].metadata["mq_length"] == 8
    # each of payload_format, payload_encoding, payload_ccsid has the shared entry
    assert s["payload_ccsid"].metadata["description"] == s["payload_format"].metadata["description"]
    missing = [f.name for f in s.fields if not f.metadata.get("description")]
    assert missing == []


def test_captures_are_not_a_directory_and_bad_directories_are_refused(tmp_path):
    assert message_input([str(DATASETS)]) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "part-00000.snappy.parquet").write_bytes(b"PAR1")
    with pytest.raises(UsageError, match=f"not a directory dlqlens wrote: no {MARKER}"):
        message_input([str(plain)])
    good = tmp_path / "good"
    good.mkdir()
    (good / MARKER).write_text(json.dumps({"layout": 1, "kind": "messages", "sources": [
        {"source": "a.dmp", "capture": "a.dmp", "format": "dmpmqmsg", "messages": 1,
         "queue": "DLQ", "queue_manager": "QM1", "created": "2024-03-15T10:00:00"}]}))
    found = message_input(str(good))
    assert isinstance(found, MessageInput) and [e.path for e in found] == ["a.dmp"]
    assert found.queues == {"a.dmp": ("QM1", "DLQ")}
    assert found.times == {"a.dmp": dt.datetime(2024, 3, 15, 10)}
    with pytest.raises(UsageError, match="either captures or such directories"):
        message_input([str(good), str(DATASETS / "dlq_aix.dmp")])
    twice = tmp_path / "twice"
    shutil.copytree(good, twice)
    with pytest.raises(UsageError, match="give each capture once"):
        message_input([str(good), str(twice)])
    results = tmp_path / "results"
    results.mkdir()
    (results / MARKER).write_text(json.dumps({"layout": 1, "kind": "results", "frames": {}}))
    with pytest.raises(UsageError, match="holds dlqlens results"):
        message_input([str(results)])
    (results / MARKER).write_text(json.dumps({"layout": 99}))
    with pytest.raises(UsageError, match="expected layout 1"):
        read_marker(results)
    (results / MARKER).write_text(json.dumps({"layout": 1, "kind": "messages", "sources": "x"}))
    with pytest.raises(UsageError, match="sources: expected a list"):
        message_input([str(results)])
    (results / MARKER).write_text("{not json")
    with pytest.raises(UsageError, match="cannot read the marker"):
        read_marker(results)
    (results / MARKER).write_text(json.dumps({"layout": 1, "kind": "messages", "sources": [
        {"source": "a.dmp", "queue": "DLQ", "created": "2024-03-15T11:00:00+01:00"}]}))
    assert message_input([str(results)]).times == {"a.dmp": dt.datetime(2024, 3, 15, 10)}
    for created in ("yesterday", 20240315):  # the banner time, checked when read, not when used
        (results / MARKER).write_text(json.dumps({"layout": 1, "kind": "messages", "sources": [
            {"source": "a.dmp", "queue": "DLQ", "created": created}]}))
        with pytest.raises(UsageError, match="source 'a.dmp': created: expected the banner's "
                                             f"creation time as an ISO 8601 text .*{created}"):
            message_input([str(results)])


def test_out_directory_is_new_or_empty(tmp_path):
    assert check_out_dir(tmp_path / "new") == str(tmp_path / "new")
    assert check_out_dir(tmp_path) == str(tmp_path)  # empty
    (tmp_path / "x").write_text("x")
    with pytest.raises(UsageError, match="exists and is not an empty directory"):
        check_out_dir(tmp_path)
    with pytest.raises(UsageError, match="no such directory"):
        check_out_dir(tmp_path / "no" / "dir")


def test_read_groups_bound_rows_and_bytes():
    from dlqlens.spark.parquet import read_groups

    files = [{"path": f"f{i}", "rows": r, "bytes": b} for i, (r, b) in enumerate(
        [(40, 10), (40, 10), (40, 10), (150, 5), (10, 90), (10, 20), (5, 1)])]
    groups = read_groups(files, rows=100, nbytes=100)
    assert groups == [["f0", "f1"], ["f2"], ["f3"], ["f4"], ["f5", "f6"]]
    # every file once, in order; a group over a limit only when it is one file
    assert [p for g in groups for p in g] == [f["path"] for f in files]
    by = {f["path"]: f for f in files}
    for g in groups:
        assert len(g) == 1 or (sum(by[p]["rows"] for p in g) <= 100
                               and sum(by[p]["bytes"] for p in g) <= 100)
    assert read_groups([]) == []


# --- Spark -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_dir(spark, tmp_path_factory):
    from dlqlens.capture.reader import captured_queues, captured_times, plan_pieces, ReadOptions
    from dlqlens.spark import load_capture

    out = tmp_path_factory.mktemp("pq") / "sample"
    pieces = plan_pieces([str(DATASETS)], ReadOptions())
    marker = write_messages(load_capture(spark, str(DATASETS)), str(out),
                            capture_queues=captured_queues(pieces),
                            capture_times=captured_times(pieces))
    return out, marker


def _sorted_rows(df):
    return sorted(df.collect(), key=lambda r: (r["source"], r["message_number"]))


@pytest.mark.spark
def test_round_trip_every_column_and_the_metadata(spark, sample_dir):
    from dlqlens.spark import load_capture

    out, marker = sample_dir
    before = load_capture(spark, str(DATASETS))
    after = load_capture(spark, str(out))
    # same columns, same types, and the descriptions kept through Parquet
    assert [(f.name, f.dataType.simpleString()) for f in after.schema.fields] == \
        [(f.name, f.dataType.simpleString()) for f in before.schema.fields]
    assert after.schema == described_schema()  # StructField equality includes metadata
    assert spark.read.parquet(str(out)).schema["md"].dataType["Expiry"].metadata == \
        described_schema()["md"].dataType["Expiry"].metadata
    rows_before, rows_after = _sorted_rows(before), _sorted_rows(after)
    assert len(rows_after) == len(rows_before) == 669
    for a, b in zip(rows_after, rows_before):
        assert a == b, (a["source"], a["message_number"])
    # provenance unchanged: the original file names
    assert {r["source"] for r in rows_after} == {s["source"] for s in marker["sources"]}
    assert {r["source"] for r in rows_after} == {str(p) for p in DATASETS.iterdir()
                                                 if not p.name.endswith(".jsonl")}
    # the marker counts what was written, per source
    assert sum(s["messages"] for s in marker["sources"]) == 669
    assert {s["capture"] for s in marker["sources"]} == {os.path.basename(s["source"])
                                                         for s in marker["sources"]}
    assert read_marker(out)["schema"] == json.loads(described_schema().json())
    # a selection of columns reads only those, in the order asked
    part = load_capture(spark, str(out), columns=["message_number", "source", "dlh"])
    assert part.columns == ["message_number", "source", "dlh"]
    with pytest.raises(UsageError, match="nope"):
        load_capture(spark, str(out), columns=["source", "nope"])


@pytest.mark.spark
def test_metadata_in_the_parquet_footer(sample_dir):
    import pyarrow.parquet as pq

    out, _ = sample_dir
    files = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.endswith(".parquet")]
    assert files
    footer = json.loads(pq.read_schema(files[0]).metadata[b"org.apache.spark.sql.parquet.row.metadata"])
    md = next(f for f in footer["fields"] if f["name"] == "md")
    expiry = next(f for f in md["type"]["fields"] if f["name"] == "Expiry")
    assert "tenths of a second" in expiry["metadata"]["description"].lower()


@pytest.mark.spark
def test_partition_layout_by_capture_and_dlq_put_date(spark, sample_dir):
    from pyspark.sql import functions as F

    from dlqlens.spark import load_capture

    out, marker = sample_dir
    names = {s["source"]: s["capture"] for s in marker["sources"]}
    # the UTC day of each message's dlh_put_ts, from the capture itself
    expected = {f"capture={names[r['source']]}/dlh_put_date={r['d'] or UNKNOWN_PARTITION}"
                for r in load_capture(spark, str(DATASETS)).select(
                    "source", F.date_format("dlh_put_ts", "yyyy-MM-dd").alias("d")).collect()}
    found = {os.path.relpath(d, out) for d, _, fs in os.walk(out)
             if any(f.endswith(".parquet") for f in fs)}
    assert found == expected
    assert MARKER in os.listdir(out)


@pytest.mark.spark
def test_unknown_put_date_partition_and_reader_modes(spark, tmp_path):
    from dlqlens.capture.reader import read_capture
    from dlqlens.spark import load_capture

    cap = tmp_path / "in" / "odd name $x.bcg"
    cap.parent.mkdir()
    shutil.copy(HOSTILE, cap)
    out = tmp_path / "out"
    marker = write_messages(load_capture(spark, str(cap)), str(out))
    (entry,) = marker["sources"]
    assert entry["capture"] == "odd_name__x.bcg" and entry["messages"] == 3
    assert entry["malformed"] == 1 and entry["first_malformed"]["decode_status"] == "bad_data"
    assert os.path.isdir(out / "capture=odd_name__x.bcg" / f"dlh_put_date={UNKNOWN_PARTITION}")
    back = load_capture(spark, str(out))
    assert back.filter("dlh_put_ts is null").count() == 1
    kept = read_capture(str(cap), mode="DROPMALFORMED").table
    dropped = load_capture(spark, str(out), mode="DROPMALFORMED")
    assert sorted(r["message_number"] for r in dropped.select("message_number").collect()) == \
        sorted(kept.column("message_number").to_pylist())
    with pytest.raises(MalformedMessageError, match=f"message {entry['first_malformed']['message_number']}"):
        load_capture(spark, str(out), mode="FAILFAST")


@pytest.mark.spark
def test_write_results_any_named_frames(spark, sample_dir, tmp_path):
    from dlqlens.detect import run_detectors
    from dlqlens.spark import load_capture

    out, _ = sample_dir
    findings, links = run_detectors(load_capture(spark, str(out)))
    findings = findings.cache()
    marker = write_results({"findings": findings, "links": links}, str(tmp_path / "res"))
    assert marker["kind"] == "results"
    assert marker["frames"]["findings"]["rows"] == findings.count() > 0
    back = read_results(spark, str(tmp_path / "res"))
    assert back["findings"].schema.simpleString() == findings.schema.simpleString()
    assert sorted(map(tuple, back["links"].collect())) == sorted(map(tuple, links.collect()))
    with pytest.raises(UsageError, match="frame name"):
        write_results({"../x": findings}, str(tmp_path / "bad"))
    with pytest.raises(UsageError, match="holds dlqlens results"):
        load_capture(spark, str(tmp_path / "res"))


@pytest.mark.spark
def test_read_partitions_hold_bounded_rows_whatever_the_session(spark, tmp_path, monkeypatch):
    """Files of at most READ_ROWS messages, read in scans of at most READ_ROWS: no read
    partition holds more, though the session packs small files into as few partitions as
    it has cores (a file's open cost set to 1 byte here, as small compressed files next to
    the 4 MB default are at scale); the rows are those written, once each."""
    import dlqlens.spark.parquet as parquet
    from pyspark.sql import functions as F

    from dlqlens.spark import load_capture

    monkeypatch.setattr(parquet, "READ_ROWS", 40)
    key = "spark.sql.files.openCostInBytes"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "1")
    try:
        _bounded_reads(spark, tmp_path, parquet, F, load_capture)
    finally:
        spark.conf.unset(key) if before is None else spark.conf.set(key, before)


def _bounded_reads(spark, tmp_path, parquet, F, load_capture):
    out = tmp_path / "small-files"
    marker = write_messages(load_capture(spark, str(DATASETS)), str(out))
    assert marker["files"] == parquet.parquet_files(out)
    assert max(f["rows"] for f in marker["files"]) <= 40
    assert sum(f["rows"] for f in marker["files"]) == 669
    packed = spark.read.parquet(str(out))  # Spark's own plan: every file in few partitions
    assert packed.groupBy(F.spark_partition_id()).count().agg(F.max("count")).first()[0] > 40
    df = load_capture(spark, str(out))
    per_partition = df.groupBy(F.spark_partition_id().alias("p")).count().collect()
    assert max(r["count"] for r in per_partition) <= 40
    assert sum(r["count"] for r in per_partition) == 669
    assert df.select("source", "message_number").distinct().count() == 669
    # one relation in the plan however many groups (a union of one scan per group filled
    # the driver's heap with plan nodes at ten million messages)
    groups = parquet.read_groups(marker["files"])
    assert len(groups) >= 17
    assert df._jdf.queryExecution().analyzed().collectLeaves().size() == 1
    # every column of every row, the metadata included, as Spark's own reader reads them
    assert df.schema == described_schema()
    native = spark.read.schema(described_schema()).parquet(str(out)) \
        .select(*described_schema().fieldNames())  # without the partition columns
    assert _sorted_rows(df) == _sorted_rows(native)
    # columns asked for are the only ones read; DROPMALFORMED filters on a column not asked for
    few = load_capture(spark, str(out), columns=["message_number", "source"],
                       mode="DROPMALFORMED")
    assert few.columns == ["message_number", "source"]
    assert few.count() == native.filter(F.col("decode_status").isin("ok", "truncated")).count()
    # a directory written before the marker listed its files: listed on reading
    old = read_marker(out)
    del old["files"]
    (out / MARKER).write_text(json.dumps(old))
    again = load_capture(spark, str(out))
    assert again.groupBy(F.spark_partition_id()).count().agg(F.max("count")).first()[0] <= 40
    assert again.count() == 669


@pytest.mark.parametrize("files", [
    "x", [{"path": "../outside.parquet", "rows": 1, "bytes": 1}],
    [{"path": "/etc/x.parquet", "rows": 1, "bytes": 1}],
    [{"path": "a//b.parquet", "rows": 1, "bytes": 1}],
    [{"path": "ok.parquet", "rows": -1, "bytes": 1}],
    [{"path": "ok.parquet", "rows": True, "bytes": 1}], [["ok.parquet"]]])
def test_a_marker_naming_files_outside_its_directory_is_refused(tmp_path, files):
    from dlqlens.spark.parquet import load_messages

    (tmp_path / MARKER).write_text(json.dumps({"layout": 1, "kind": "messages", "sources": [],
                                               "files": files}))

    class NoSpark:  # refused before Spark is asked anything
        def __getattr__(self, name):
            raise AssertionError(f"spark.{name} used")

    with pytest.raises(UsageError, match="files: expected a list"):
        load_messages(NoSpark(), str(tmp_path))


@pytest.mark.parametrize("options, match", [
    ({"groups": "not json"}, "option groups"),
    ({"groups": '[["relative/part.parquet"]]'}, "absolute paths"),
    ({"groups": "[[]]"}, "non-empty"),
    ({"groups": '{"a": 1}'}, "option groups"),
    ({"groups": "[]", "batchSize": "0"}, "option batchSize"),
    ({"groups": "[]", "BATCHSIZE": "ten"}, "found 'ten'"),
])
def test_the_messages_source_refuses_bad_options(options, match):
    from dlqlens.spark.source import MQMessagesDataSource

    with pytest.raises(UsageError, match=match):
        MQMessagesDataSource(options).reader(described_schema())


def test_the_messages_source_refuses_a_schema_that_is_not_a_selection():
    from pyspark.sql.types import IntegerType, StructField, StructType

    from dlqlens.spark.source import MQMessagesDataSource

    with pytest.raises(UsageError, match="mqmessages schema: column 'nope' does not exist"):
        MQMessagesDataSource({}).reader(StructType([StructField("nope", IntegerType())]))
    with pytest.raises(UsageError, match="'source' must have type string, found int"):
        MQMessagesDataSource({}).reader(StructType([StructField("source", IntegerType())]))


@pytest.mark.spark
def test_the_messages_source_reads_late_put_dates_and_names_a_file_it_cannot_read(
        spark, tmp_path):
    """Spark writes timestamps as INT96; read in nanoseconds (pyarrow's default) a date
    after 2262 does not fit, so they are read in microseconds, the schema's unit. A
    file that is not Parquet is named in the error, not skipped."""
    from pyspark.sql import functions as F

    from dlqlens.errors import CaptureError
    from dlqlens.spark.source import FilesPartition, MQMessagesDataSource

    late = dt.datetime(9000, 12, 31, 23, 59, 59, 123456, tzinfo=dt.timezone.utc)
    out = tmp_path / "late"
    spark.range(3).select(F.lit(late).alias("put_ts"), F.col("id").cast("int")
                          .alias("message_number")).coalesce(1).write.parquet(str(out))
    path = next(str(p) for p in out.iterdir() if p.name.endswith(".parquet"))
    schema = described_schema()
    read = MQMessagesDataSource({"groups": json.dumps([[path]]), "batchSize": "2"}).reader(
        type(schema)([schema["put_ts"], schema["message_number"]]))
    batches = list(read.read(FilesPartition([path])))
    assert [b.num_rows for b in batches] == [2, 1]
    assert batches[0].schema.names == ["put_ts", "message_number"]
    assert batches[0].column("put_ts").to_pylist()[0] == late
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(CaptureError, match="bad.parquet: cannot read this Parquet file"):
        list(read.read(FilesPartition([path, str(bad)])))


@pytest.mark.spark
def test_put_dates_after_2262_read_back_by_every_reader(spark, tmp_path, monkeypatch):
    """A capture may say any PutDate up to 9999; the directory's Parquet (INT96, as Spark
    writes timestamps) reads back the same through Spark's reader, the executors' reader
    of a directory's groups, the mqmessages source and the reader without Spark (explain)."""
    import dlqlens.spark.parquet as parquet
    from dlqlens.spark import load_capture
    from dlqlens.spark.source import register_sources
    from tests.builders import dlq_message, write_capture

    capture = write_capture(tmp_path / "late.raw", "raw", [
        dlq_message(b"A", dlh={"PutDate": "90001231", "PutTime": "23595999"}),
        dlq_message(b"B", md={"PutDate": "99991231", "PutTime": "12000000"}),
        dlq_message(b"C")])
    out = tmp_path / "late"
    write_messages(load_capture(spark, str(capture)), str(out))
    want = sorted((r["message_number"], r["put_ts"], r["dlh_put_ts"]) for r in
                  load_capture(spark, str(capture)).collect())
    assert want[0][2].year == 9000 and want[1][1].year == 9999
    native = load_capture(spark, str(out))
    monkeypatch.setattr(parquet, "READ_ROWS", 1)  # a group a file: read by the executors
    groups = load_capture(spark, str(out))
    found = parquet.message_input(str(out))
    assert groups._jdf.queryExecution().analyzed().collectLeaves().size() == 1
    assert groups.rdd.getNumPartitions() == len(parquet.message_groups(found)) > 1
    # a size Spark does not know, as for the source: never broadcast for small
    assert groups._jdf.queryExecution().optimizedPlan().stats().sizeInBytes() > 2**40
    register_sources(spark)  # the same groups through the mqmessages source (as over Connect)
    source = (spark.read.format("mqmessages").schema(described_schema())
              .option("groups", json.dumps(parquet.message_groups(found))).load())
    for df in (native, groups, source):
        assert sorted((r["message_number"], r["put_ts"], r["dlh_put_ts"])
                      for r in df.collect()) == want
    # the executors' groups read again with only the columns asked (narrowed)
    from dlqlens.spark.source import narrowed

    thin = narrowed(groups, ["message_number", "put_ts", "dlh_put_ts"])
    assert thin._dlqlens_read[0].columns == ["message_number", "put_ts", "dlh_put_ts"]
    assert sorted(tuple(r) for r in thin.collect()) == want
    fields = narrowed(groups, ["message_number", "md"], {"md": ["PutTime", "PutDate"]})
    assert fields._dlqlens_read[0].fields == {"md": ["PutDate", "PutTime"]}
    assert fields.schema["md"].dataType.fieldNames() == ["PutDate", "PutTime"]
    assert sorted((r.message_number, r.md.PutDate, r.md.PutTime) for r in fields.collect()) == \
        sorted((r.message_number, r.md.PutDate, r.md.PutTime) for r in native.collect())
    got = [row for b in parquet.arrow_batches(found, ["message_number", "put_ts", "dlh_put_ts"])
           for row in b.to_pylist()]
    assert sorted((r["message_number"], r["put_ts"].replace(tzinfo=None) if r["put_ts"] else None,
                   r["dlh_put_ts"].replace(tzinfo=None) if r["dlh_put_ts"] else None)
                  for r in got) == want
