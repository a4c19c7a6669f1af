"""Builders shared by the pure-Python reader and decoder tests (no Spark).

Builders make dead-letter messages with :func:`dlqlens.capture.message.dead_letter`
and the structure field tables; ``write_capture`` writes them in any of the three
capture formats; ``read_rows`` reads a capture back with
:func:`dlqlens.capture.reader.read_capture` and returns the rows as dicts.
``spark_jobs`` and ``persisted_rdds`` count a Spark session's work and caches
(for the Spark tests that count work instead of timing it).
"""

from __future__ import annotations

import os
import string
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, settings

from dlqlens.capture import amqsbcg, dmpmqmsg, raw
from dlqlens.capture.message import CaptureMessage, dead_letter
from dlqlens.capture.reader import read_capture
from tests.conftest import REAL, missing_real  # the one place the real captures' folder is worked out


#: Hypothesis settings of these tests (applied per test, not as a global profile,
#: so other test modules keep their own). DLQLENS_EXAMPLES=1000 for a longer run.
FAST = settings(deadline=None, max_examples=int(os.environ.get("DLQLENS_EXAMPLES", 60)),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

#: Characters that mean the same in ASCII and every EBCDIC Latin code page: those
#: of MQ names (IBM MQ "Rules for naming IBM MQ objects"; docs/capture-formats.md)
#: and some punctuation, minus the quote amqsbcg uses as a delimiter.
INVARIANT = string.ascii_letters + string.digits + " ._/%-+=?(),:"

WRITERS = ("raw", "dmpmqmsg", "amqsbcg")


def real(*parts: str) -> Path:
    """A file of the shared real-capture collection, or skip the test
    (:func:`tests.conftest.missing_real`: fail it when the real captures are required)."""
    p = REAL.joinpath(*parts)
    if not p.exists():
        missing_real(p)
    return p


def md_fields(**kw) -> dict:
    """MQMD values of an ordinary original message."""
    md = {"Version": 2, "MsgType": 8, "Expiry": -1, "Priority": 4, "Persistence": 1,
          "MsgId": b"AMQ QM1         \x01\x02\x03\x04\x05\x06\x07\x08",
          "ReplyToQMgr": "QM1", "UserIdentifier": "app", "PutApplType": 6,
          "PutApplName": "orders", "PutDate": "20240315", "PutTime": "10153012",
          "Format": "MQSTR", "Encoding": 546, "CodedCharSetId": 1208}
    md.update(kw)
    return md


def dlh_fields(**kw) -> dict:
    d = {"Reason": 2053, "DestQName": "APP.IN", "DestQMgrName": "QM1", "PutApplType": 6,
         "PutApplName": "amqrmppa", "PutDate": "20240315", "PutTime": "10153157"}
    d.update(kw)
    return d


def dlq_message(payload: bytes = b"ORDER 42", *, md: dict | None = None,
                dlh: dict | None = None, **kw) -> CaptureMessage:
    """A dead letter (MQDLH + payload) with ordinary values."""
    return dead_letter(md_fields(**(md or {})), dlh_fields(**(dlh or {})), payload, **kw)


def plain_message(payload: bytes, **md) -> CaptureMessage:
    """A message without MQDLH (MQMD Format from ``md``, default MQSTR)."""
    return CaptureMessage(md=md_fields(**md), data=payload)


def write_capture(path, fmt: str, messages, **kw) -> Path:
    """Write ``messages`` to ``path`` in capture format ``fmt``."""
    messages = list(messages)
    if fmt == "raw":
        raw.write_raw(path, messages, **kw)
    elif fmt == "dmpmqmsg":
        dmpmqmsg.write_dmpmqmsg(path, messages, **kw)
    elif fmt == "amqsbcg":
        amqsbcg.write_amqsbcg(path, messages, **kw)
    else:  # pragma: no cover
        raise ValueError(fmt)
    return Path(path)


def read_rows(paths, **kw) -> list[dict]:
    """Rows of ``read_capture(paths, **kw)`` as dicts, checking the stats identity."""
    res = read_capture(paths, **kw)
    s = res.stats
    assert s.framed == s.rows + s.dropped
    assert s.rows == res.table.num_rows
    return res.table.to_pylist()


def codes(row: dict) -> list[str]:
    """Issue codes of a row, in order."""
    return [i["code"] for i in row["decode_issues"]]


def issue(row: dict, code: str) -> dict:
    """The first issue of ``row`` with ``code`` (fails when there is none)."""
    for i in row["decode_issues"]:
        if i["code"] == code:
            return i
    raise AssertionError(f"no {code!r} issue in {codes(row)}: {row['decode_issues']}")


def load_script(path, name: str):
    """The committed generator script at ``path`` imported as module ``name``
    (each script its own name: several are called ``generate.py``)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def session_time_zone(spark, zone: str):
    """The session's ``spark.sql.session.timeZone`` set to ``zone`` inside the
    ``with`` block, its own value (dlqlens's UTC) set back after, whatever
    happens (``unset`` would leave the JVM's default zone instead)."""
    own = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", own)


def spark_jobs(spark) -> int:
    """The session's next Spark job id: the jobs run between two calls (the work
    tests count jobs, never seconds)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def persisted_rdds(spark) -> int:
    """RDDs the session holds persisted (every cache, whoever made it). Compare
    with ``<=``: Spark's cleaner may drop a cache of a collected DataFrame
    meanwhile, never add one."""
    return int(spark.sparkContext._jsc.getPersistentRDDs().size())


def jvm_round_trips(monkeypatch, build) -> int:
    """JVM round trips (py4j commands) made while ``build()`` runs.

    py4j's memory commands are not counted: they release the JVM objects of
    Python wrappers the garbage collector frees, whenever it runs (CI once
    counted 83 of them during the first build), not work of ``build()``.
    """
    import gc

    from py4j import clientserver, protocol

    sent = []
    original = clientserver.ClientServerConnection.send_command
    releases = protocol.MEMORY_COMMAND_NAME + protocol.MEMORY_DEL_SUBCOMMAND_NAME

    def counted(self, command):
        if not command.startswith(releases):
            sent.append(command)
        return original(self, command)

    gc.collect()

    monkeypatch.setattr(clientserver.ClientServerConnection, "send_command", counted)
    try:
        build()
    finally:
        monkeypatch.setattr(clientserver.ClientServerConnection, "send_command", original)
    return len(sent)
