"""Reading captures into Spark through the executors: the pieces planned by
``load_capture`` (``local=False``: ``mapInArrow`` over them) and the
``mqcapture`` data source; schema, partitions, modes, files and directories,
the same for both."""

from __future__ import annotations

import os

import pytest
from pyspark.sql import functions as F

from dlqlens.capture.message import dead_letter
from dlqlens.capture.raw import write_raw
from dlqlens.decode.schema import message_schema
from dlqlens.errors import UsageError
from dlqlens.spark.schema import spark_schema
from dlqlens.spark.session import load_capture as _load_capture
from dlqlens.spark.source import source_frame
from tests.conftest import DATASETS

pytestmark = pytest.mark.spark


def through_source(spark, paths, format="auto", mode="PERMISSIVE", columns=None, **options):
    """``load_capture``'s arguments, read by the ``mqcapture`` source."""
    schema = None if columns is None else \
        type(spark_schema())([spark_schema()[c] for c in columns])
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else paths
    return source_frame(spark, [os.fspath(p) for p in paths],
                        {"format": format, "mode": mode, **{k: str(v) for k, v in options.items()}},
                        schema)


@pytest.fixture(params=["executors", "source"])
def load_capture(request):
    """The two ways executors read a capture: the pieces ``load_capture`` planned
    (``local=False``: never the local path of small captures, which
    :func:`test_small_captures_decoded_on_the_driver_give_the_same_rows` compares
    with these), and the ``mqcapture`` source."""
    if request.param == "source":
        return through_source
    return lambda *args, **kwargs: _load_capture(*args, local=False, **kwargs)


def _messages(n, reason=2053):
    return [dead_letter({"Format": "MQSTR", "PutApplName": "app", "PutDate": "20240315",
                         "PutTime": f"1015{i % 60:02d}00"},
                        {"Reason": reason, "DestQName": f"Q{i % 3}", "DestQMgrName": "QM1",
                         "PutApplName": "amqrmppa", "PutApplType": 6,
                         "PutDate": "20240315", "PutTime": "10160000"},
                        f"m{i}".encode()) for i in range(n)]


def test_schema_is_the_decoder_schema_with_mq_field_names(spark, load_capture):
    df = load_capture(spark, DATASETS / "dlq_linux_x86.raw")
    assert df.schema == spark_schema()
    assert [f.name for f in df.schema] == message_schema().names
    assert "BackoutCount" in df.schema["md"].dataType.fieldNames()
    assert {"Reason", "DestQName", "DestQMgrName"} <= set(df.schema["dlh"].dataType.fieldNames())


def test_one_partition_per_file_and_directories(spark, load_capture):
    df = load_capture(spark, DATASETS)
    assert df.rdd.getNumPartitions() == 7
    counts = {r["capture_format"]: r["count"] for r in df.groupBy("capture_format").count().collect()}
    fmt = {".raw": "raw", ".dmp": "dmpmqmsg", ".bcg": "amqsbcg"}
    golden = {}  # messages per format, from the golden decodes beside the captures
    for p in DATASETS.glob("*.expected.jsonl"):
        kind = fmt[p.suffixes[-3]]
        golden[kind] = golden.get(kind, 0) + len(p.read_text(encoding="utf-8").splitlines())
    assert counts == golden and set(counts) == {"raw", "dmpmqmsg", "amqsbcg"}


def test_large_raw_capture_is_split_at_record_boundaries(spark, load_capture, tmp_path):
    path = tmp_path / "big.raw"
    write_raw(path, _messages(3000))
    df = load_capture(spark, path, splitBytes=200_000)
    assert df.rdd.getNumPartitions() > 3
    rows = df.select("message_number", "payload_text").orderBy("message_number").collect()
    assert [r["message_number"] for r in rows] == list(range(1, 3001))
    assert [r["payload_text"] for r in rows[:3]] == ["m0", "m1", "m2"]


@pytest.mark.parametrize("fmt", ["dmpmqmsg", "amqsbcg"])
def test_large_text_capture_is_split_and_numbered_across_partitions(spark, load_capture, tmp_path,
                                                                   fmt):
    from dlqlens.capture.registry import FORMATS

    path = tmp_path / f"big.{fmt}"
    FORMATS[fmt].write(path, _messages(2000))
    df = load_capture(spark, path, splitBytes=100_000)
    assert df.rdd.getNumPartitions() > 3
    rows = df.select("message_number", "source_line", "payload_text").collect()
    assert sorted(r["message_number"] for r in rows) == list(range(1, 2001))
    by_number = {r["message_number"]: r for r in rows}
    assert [by_number[i]["payload_text"] for i in (1, 1000, 2000)] == ["m0", "m999", "m1999"]
    lines = [by_number[i]["source_line"] for i in range(1, 2001)]
    assert lines == sorted(lines) and len(set(lines)) == 2000
    unsplit = load_capture(spark, path, splitBytes=100_000, splitText="false")
    assert unsplit.rdd.getNumPartitions() == 1
    assert unsplit.select("message_number", "source_line", "payload_text").collect() == \
        sorted(rows, key=lambda r: r["message_number"])


def test_known_values_and_groupby(spark, load_capture):
    df = load_capture(spark, [DATASETS / "dlq_zos.raw", DATASETS / "dlq_aix.dmp"])
    by = {(r["Reason"], r["reason_name"]) for r in
          df.groupBy("dlh.Reason", "reason_name").count().collect()}
    # dlq_zos.raw: trigger messages runmqtrm/CKTI could not act on; dlq_aix.dmp: a deleted queue
    assert by == {(265, "MQFB_APPL_CANNOT_BE_STARTED"), (2085, "MQRC_UNKNOWN_OBJECT_NAME")}
    z = df.filter(F.col("source").endswith("dlq_zos.raw")).select("layout.*").distinct().collect()
    assert [(r["md_byte_order"], r["md_charset"]) for r in z] == [("big", "cp500")]


def test_modes(spark, load_capture, tmp_path):
    path = tmp_path / "mixed.raw"
    msgs = _messages(5)
    msgs[2].data = b"XXXX" + msgs[2].data[4:]  # StrucId of the MQDLH destroyed
    write_raw(path, msgs)
    permissive = load_capture(spark, path)
    assert permissive.count() == 5
    assert permissive.filter("decode_status = 'bad_header'").select("message_number").first()[0] == 3
    assert load_capture(spark, path, mode="DROPMALFORMED").count() == 4
    with pytest.raises(Exception, match="message 3"):
        load_capture(spark, path, mode="FAILFAST").count()


def test_unknown_option_is_refused(spark, load_capture):
    with pytest.raises(Exception, match="unknown option"):
        load_capture(spark, DATASETS / "dlq_zos.raw", colour="red").count()


def test_read_options_parse_spark_style_options():
    from dlqlens.capture.reader import ReadOptions

    o = ReadOptions.from_options({"MODE": "dropmalformed", "batchsize": "10", "path": "x"})
    assert (o.mode, o.batch_size) == ("DROPMALFORMED", 10)
    with pytest.raises(UsageError):
        ReadOptions.from_options({"batchSize": "ten"})


@pytest.mark.parametrize("options, message", [
    ({"batchSize": "ten"}, "option batchSize: expected a whole number of messages above 0, "
                           "found 'ten'"),
    ({"BATCHSIZE": "0"}, "option batchSize: expected a whole number of messages above 0, "
                         "found '0'"),
    ({"splitBytes": "-1"}, "option splitBytes: expected a whole number of bytes above 0, "
                           "found '-1'"),
    ({"maxMessageBytes": "1.5"}, "option maxMessageBytes: expected a whole number of bytes "
                                 "above 0, found '1.5'"),
])
def test_a_bad_whole_number_option_is_named_with_its_unit_and_what_was_found(options, message):
    # one check (positive_option) for Spark-style options, fields set directly and
    # the mqmessages source's batchSize
    from dlqlens.capture.reader import ReadOptions

    with pytest.raises(UsageError) as e:
        ReadOptions.from_options(options)
    assert str(e.value) == message
    with pytest.raises(UsageError, match="option splitBytes: .* found 0"):
        ReadOptions(split_bytes=0)
    for bad in (1.5, True):
        with pytest.raises(UsageError, match=f"option batchSize: .* found {bad}"):
            ReadOptions(batch_size=bad)
    assert ReadOptions(batch_size=" 12 ").batch_size == 12


def test_the_source_yields_batches_of_batch_rows_unless_told(tmp_path):
    """The JVM holds every Arrow batch it reads in native memory, outside the heap:
    the source's own default (BATCH_ROWS) is smaller than the pure-Python readers'
    65,536 rows; a batchSize option, in any case, is kept."""
    from dlqlens.capture.reader import ReadOptions
    from dlqlens.spark.schema import spark_schema
    from dlqlens.spark.source import BATCH_ROWS, MQCaptureDataSource

    path = str(tmp_path / "c.raw")
    assert BATCH_ROWS < ReadOptions().batch_size
    read = MQCaptureDataSource({"path": path}).reader(spark_schema())
    assert read.options.batch_size == BATCH_ROWS
    for key in ("batchSize", "BATCHSIZE"):
        read = MQCaptureDataSource({"path": path, key: "100"}).reader(spark_schema())
        assert read.options.batch_size == 100


def test_columns_select_what_spark_carries(spark, load_capture, tmp_path):
    path = tmp_path / "few.raw"
    write_raw(path, _messages(7, reason=2085))
    cols = ["message_number", "dlh", "source"]
    df = load_capture(spark, path, columns=cols)
    assert df.columns == cols
    rows = df.orderBy("message_number").collect()
    assert [r["message_number"] for r in rows] == list(range(1, 8))
    assert {r["dlh"]["Reason"] for r in rows} == {2085}
    # the same through spark.read with a user schema that selects columns
    schema = spark_schema()
    picked = spark.read.format("mqcapture").schema(
        type(schema)([schema["payload_text"], schema["source"]])).load(str(path))
    assert sorted(r["payload_text"] for r in picked.collect()) == sorted(f"m{i}" for i in range(7))


def test_columns_refuse_unknown_names_and_wrong_types(spark):
    with pytest.raises(UsageError, match="nope"):
        _load_capture(spark, DATASETS / "dlq_zos.raw", columns=["source", "nope"])
    with pytest.raises(Exception, match="column 'source' must have type string, found int"):
        spark.read.format("mqcapture").schema("source int").load(
            str(DATASETS / "dlq_zos.raw")).count()


def test_no_piece_to_read_is_an_empty_frame(spark, load_capture, tmp_path):
    """No file to read (an empty directory; only files in no capture format): Spark reads
    one partition of its own (``InputPartition(None)``) and gets no rows (issue 19; was an
    AttributeError from the Python worker)."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("notes\n", encoding="utf-8")
    for folder in ("empty", "notes"):
        df = load_capture(spark, tmp_path / folder)
        assert df.count() == 0 and df.schema == spark_schema()


def test_small_captures_decoded_on_the_driver_give_the_same_rows(spark):
    """The local path (one Arrow table, no Python workers), the executors reading
    the pieces planned here, and the source: one decoder, the same rows and
    schema; the local one is a local relation."""
    local = _load_capture(spark, DATASETS)
    executors = _load_capture(spark, DATASETS, local=False)
    source = through_source(spark, DATASETS)
    assert local.schema == executors.schema == source.schema == spark_schema()
    assert local._jdf.queryExecution().analyzed().getClass().getSimpleName() == "LocalRelation"
    assert local.count() == executors.count() == source.count() == 669
    for other in (executors, source):
        assert local.exceptAll(other).count() == 0 and other.exceptAll(local).count() == 0
    cols = ["source", "message_number", "dlh", "reason_name"]
    assert (_load_capture(spark, DATASETS, columns=cols).orderBy("source", "message_number")
            .collect() == source.select(*cols).orderBy("source", "message_number").collect())


def assert_size_unknown(spark, df):
    """Spark does not take what the executors read for small: its size estimate is
    ``spark.sql.defaultSizeInBytes`` (the largest long), as for a Python data source,
    and a join with a small table broadcasts the small table, never the capture
    (over ``spark.range``, 8 bytes a piece, the capture side was the one broadcast)."""
    from pyspark.sql import functions as F

    assert df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes() > 2**40
    small = spark.range(3).select(F.col("id").cast("int").alias("message_number"))
    for joined, build in ((small.join(df, "message_number"), "BuildLeft"),
                          (df.join(small, "message_number"), "BuildRight")):
        plan = joined._jdf.queryExecution().sparkPlan().toString()
        assert "BroadcastHashJoin" in plan and build in plan, plan


def test_a_capture_over_the_limit_is_read_by_the_executors_from_pieces_planned_at_load(
        spark, monkeypatch, tmp_path):
    """Over ``LOCAL_BYTES`` on a classic session: one partition per piece, planned
    once, by ``load_capture`` (no Python data source in the plan, whose planning
    runs two Python processes at every query); the pieces are those of the files
    as they were at load."""
    import shutil

    from dlqlens.spark import source

    monkeypatch.setattr(source, "LOCAL_BYTES", 1000)
    folder = tmp_path / "dlq"
    folder.mkdir()
    shutil.copy(DATASETS / "dlq_linux_x86.raw", folder / "a.raw")
    df = _load_capture(spark, folder)
    plan = df._jdf.queryExecution().analyzed().toString()
    assert "MapInArrow" in plan and "PythonDataSource" not in plan, plan
    assert df.rdd.getNumPartitions() == 1
    assert_size_unknown(spark, df)
    n = df.count()
    shutil.copy(DATASETS / "dlq_linux_x86.raw", folder / "b.raw")  # after the load
    assert df.count() == n > 0
    assert _load_capture(spark, folder).count() == 2 * n  # a new load plans again


def test_narrowed_reads_only_the_columns_asked_of_a_capture_the_executors_read(spark, tmp_path):
    """Spark cannot prune a ``mapInArrow`` read: ``narrowed`` reads the same pieces
    with only the columns asked (same rows, same partitions, reader modes kept);
    anything else (decoded on the driver, cached, transformed) is selected."""
    from dlqlens.spark.source import narrowed

    df = _load_capture(spark, DATASETS, local=False)
    cols = ["message_number", "source", "md", "payload"]
    got = narrowed(df, cols)
    assert got.columns == cols and got.schema == df.select(*cols).schema
    assert got._dlqlens_read[0].options.columns == tuple(cols)
    assert got._jdf.queryExecution().analyzed().getClass().getSimpleName() == "MapInArrow"
    assert got.rdd.getNumPartitions() == df.rdd.getNumPartitions() == 7
    key = ["source", "message_number"]
    assert got.orderBy(*key).collect() == df.select(*cols).orderBy(*key).collect()
    assert narrowed(df, df.columns) is df  # nothing to leave out
    # a mode reads the columns it needs whatever the columns asked
    path = tmp_path / "mixed.raw"
    msgs = _messages(3)
    msgs[1].data = b"XXXX" + msgs[1].data[4:]
    write_raw(path, msgs)
    dropping = _load_capture(spark, path, mode="DROPMALFORMED", local=False)
    assert sorted(r[0] for r in narrowed(dropping, ["message_number"]).collect()) == [1, 3]
    # read as it is: decoded on the driver, transformed, cached
    local = _load_capture(spark, DATASETS)
    for other in (local, df.where(F.col("message_number") > 1)):
        assert "_dlqlens_read" not in narrowed(other, cols).__dict__
    cached = df.cache()
    try:
        plan = narrowed(cached, cols)._jdf.queryExecution().withCachedData().toString()
        assert "InMemoryRelation" in plan, plan
    finally:
        cached.unpersist()


def test_narrowed_structs_keep_only_the_fields_asked(spark):
    """``fields``: of ``md``, ``dlh`` and ``tm`` only the fields asked, in the
    structure's order, null where the structure is; read so by the executors
    (the decoder decodes no other MQMD or MQDLH character field), selected
    otherwise, the same rows either way."""
    from pyspark.errors import AnalysisException

    from dlqlens.spark.source import narrowed

    cols = ["source", "message_number", "md", "dlh", "tm"]
    fields = {"md": ["ReplyToQ", "MsgId", "Persistence"], "dlh": "Reason", "tm": ["QName"]}
    executors = _load_capture(spark, DATASETS, local=False)
    got = narrowed(executors, cols, fields)
    assert got._dlqlens_read[0].options.fields == (
        ("md", ("Persistence", "MsgId", "ReplyToQ")), ("dlh", ("Reason",)), ("tm", ("QName",)))
    local = narrowed(_load_capture(spark, DATASETS), cols, fields)
    for df in (got, local):
        assert df.schema["md"].dataType.fieldNames() == ["Persistence", "MsgId", "ReplyToQ"]
        assert df.schema["dlh"].dataType.fieldNames() == ["Reason"]
    key = ["source", "message_number"]
    rows = got.orderBy(*key).collect()
    assert rows == local.orderBy(*key).collect()
    whole = executors.select(*cols).orderBy(*key).collect()
    assert [(r.md.MsgId, r.md.ReplyToQ, r.dlh and r.dlh.Reason, r.tm and r.tm.QName)
            for r in rows] == [(r.md.MsgId, r.md.ReplyToQ, r.dlh and r.dlh.Reason,
                                r.tm and r.tm.QName) for r in whole]
    assert sum(r.tm is None for r in rows) == sum(r.tm is None for r in whole) > 0
    with pytest.raises(AnalysisException):
        narrowed(executors, cols, {"md": ["NoSuchField"]}).schema
    with pytest.raises(UsageError, match="not among the columns"):
        narrowed(executors, ["source"], {"md": ["MsgId"]})


def test_the_analyses_inputs_read_only_their_columns_with_the_same_rows(spark, monkeypatch):
    """``detector_input``, ``analysis_input`` and the replay over a capture the
    executors read: what they read is decoded (no message bytes, no columns they
    do not read), and the rows are those of the capture decoded on the driver."""
    from dlqlens.detect import BYTE_COLUMNS, analysis_input, detector_input
    from dlqlens.rules import parse
    from dlqlens.rules.replay import INPUT_COLUMNS, replay

    from dlqlens.detect import DETECTOR_FIELDS
    from dlqlens.spark import source

    executors = _load_capture(spark, DATASETS, local=False)
    local = _load_capture(spark, DATASETS)
    reads = []  # the options of each narrowed read

    def recorded(*args, **kwargs):
        df = narrowed(*args, **kwargs)
        if "_dlqlens_read" in df.__dict__:
            reads.append(df._dlqlens_read[0].options)
        return df

    narrowed = source.narrowed
    monkeypatch.setattr(source, "narrowed", recorded)
    for made in (detector_input, analysis_input):
        got, want = made(executors), made(local)
        read = got._jdf.queryExecution().analyzed().toString()
        for c in BYTE_COLUMNS:
            if c != "payload":  # the digest's
                assert f"{c}#" not in read, (made.__name__, c)
        assert got.columns == want.columns
        assert got.exceptAll(want).count() == 0 and want.exceptAll(got).count() == 0
    assert [r.field_map and {k: set(v) for k, v in r.field_map.items()} for r in reads] == \
        [{k: set(v) for k, v in DETECTOR_FIELDS.items()}, None]
    assert "header_chain" not in reads[0].columns and "raw" not in reads[1].columns
    table = parse("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)\n"
                  "PERSIST(MQPER_PERSISTENT) ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)\n"
                  "ACTION(FWD) FWDQ(DEADQ)\n")
    got, want = replay(table, executors), replay(table, local)
    assert reads[-1].columns == INPUT_COLUMNS
    assert reads[-1].field_map == {"md": ("Persistence", "ReplyToQ", "ReplyToQMgr"),
                                   "dlh": ("Reason", "DestQName", "DestQMgrName")}
    assert got.exceptAll(want).count() == 0 and want.exceptAll(got).count() == 0


def test_local_path_failfast_raises_at_load(spark, tmp_path):
    from dlqlens.errors import MalformedMessageError

    path = tmp_path / "mixed.raw"
    msgs = _messages(3)
    msgs[1].data = b"XXXX" + msgs[1].data[4:]
    write_raw(path, msgs)
    with pytest.raises(MalformedMessageError, match="message 2"):
        _load_capture(spark, path, mode="FAILFAST")
    assert _load_capture(spark, path, mode="DROPMALFORMED").count() == 2


def test_a_new_session_of_the_context_reads_through_the_sources(spark):
    """A ``spark.newSession()`` (its own SQL configuration and data source
    registry, the same SparkContext): the sources are registered on it
    (:func:`dlqlens.spark.source.source_frame`, as ``load_capture`` over Spark
    Connect) and it reads through them. Registering them there failed with
    ``DATA_SOURCE_ALREADY_EXISTS`` (Spark checks the name through the JVM's active
    session, the suite's, which has them) while the new session could not find
    ``mqcapture``. The session active before is active again after."""
    from dlqlens.spark.session import register

    sessions = spark._jvm.org.apache.spark.sql.SparkSession
    before = sessions.getActiveSession()
    new = spark.newSession()
    assert through_source(new, DATASETS).count() == 669
    register(new)  # again: nothing to say
    after = sessions.getActiveSession()
    assert before.isDefined() and after.isDefined() and before.get().equals(after.get())
    assert through_source(spark, DATASETS).count() == 669
