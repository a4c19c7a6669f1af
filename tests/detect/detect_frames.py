"""Hand-built capture frames for the detector tests (only the columns detectors read)."""

from __future__ import annotations

from datetime import datetime, timedelta

FRAME_SCHEMA = (
    "source string, message_number int, "
    "md struct<MsgId:binary, CorrelId:binary, BackoutCount:int, Expiry:int, Report:int, "
    "MsgType:int, PutApplName:string, UserIdentifier:string, Persistence:int>, "
    "dlh struct<Reason:int, DestQName:string, DestQMgrName:string>, "
    "payload binary, payload_length bigint, reason_name string, "
    "put_ts timestamp, dlh_put_ts timestamp"
)

T0 = datetime(2024, 3, 15, 8, 0, 0)


def at(seconds: float) -> datetime:
    """T0 + ``seconds`` (naive UTC, the session time zone is UTC)."""
    return T0 + timedelta(seconds=seconds)


def msgid(n: int, qmgr: str = "QM.T") -> bytes:
    """A 24-byte MsgId as a queue manager makes them: 'AMQ ' + name + counter."""
    return ("AMQ " + qmgr.ljust(12)).encode("ascii")[:16] + n.to_bytes(8, "big")


def row(source, number, *, msg_id=None, correl_id=None, backout_count=0, expiry=-1, report=0,
        msg_type=8, put_appl_name="app", user="user", reason=None, dest_qname=None,
        dest_qmgr_name="QM.T", payload=b"x", put=0.0, dlh_put=None, reason_name=None,
        persistence=0):
    """One capture row. ``put`` and ``dlh_put`` are seconds after T0 (``put_ts`` and
    ``dlh_put_ts``); the row has an MQDLH when ``reason`` is given."""
    dlh = None
    if reason is not None:
        dlh = (reason, dest_qname, dest_qmgr_name)
    return (source, number,
            (msg_id if msg_id is not None else msgid(number), correl_id or b"\0" * 24,
             backout_count, expiry, report, msg_type, put_appl_name, user, persistence),
            dlh, payload, len(payload) if payload is not None else None, reason_name,
            at(put) if put is not None else None,
            at(dlh_put) if dlh_put is not None else None)


def frame(spark, rows):
    return spark.createDataFrame(rows, FRAME_SCHEMA)
