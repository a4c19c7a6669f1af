"""The Arrow schema of decoded messages, derived from the MQ field tables.

One row per message framed in a capture. The Spark schema
(:func:`dlqlens.spark.schema.spark_schema`) is converted from this one, so
there is a single definition.

Columns
-------
source : string
    The capture file, as named by the user.
capture_format : string
    ``raw``, ``dmpmqmsg``, ``amqsbcg``, or a hex dump's layout (``ispf``,
    ``xxd``, ``hexdump-c``, ``od``, ``hex-stream``).
message_number : int32
    1-based number of the message in its file.
source_offset : int64
    Byte offset of the message in the file (null when unknown).
source_line : int32
    1-based first line of the message in a text capture (null for binary).
layout : struct
    How the message was read: ``md_origin`` (``binary``/``text``),
    ``md_byte_order`` (``little``/``big``), ``md_charset`` (Python codec of the
    MQMD's characters), ``md_version`` (1 or 2), ``dlh_reconstructed`` (the
    MQDLH was rebuilt from a formatted amqsbcg block).
md : struct
    Every MQMD field under IBM's name (``md.BackoutCount``); version-2 fields
    are null in a version-1 MQMD. Integers int32, MQCHAR strings with MQ's
    blank/NUL padding removed, MQBYTE binary. Null when the capture holds no
    MQMD (a hex dump that starts at the MQDLH, MQTM or MQRFH2: a
    ``not_captured`` issue says so); for a dump that starts at an MQXQH, the
    MQXQH's embedded version-1 MQMD.
dlh : struct
    Every MQDLH field (``dlh.Reason``, ``dlh.DestQName``...); null when the
    message does not start with an MQDLH.
xqh : struct
    The first MQXQH in the chain (with ``MsgDesc``, the embedded version-1
    MQMD), or null.
tm : struct
    The first MQTM (trigger message) in the chain, or null; fields cut off by
    a truncated capture are null (see ``decode_issues``).
rfh2 : struct
    The fixed part of the first MQRFH2, plus ``NameValueData`` (its folders
    as strings), or null.
headers : list<string>
    The formats of the header structures walked, in order, trimmed
    (``["MQDEAD", "MQTRIG"]``).
header_chain : list<struct>
    The same headers with ``format``, ``struc_id``, ``offset`` and ``length``
    (bytes, from the start of the message data), the ``encoding`` and
    ``ccsid`` they were read with, and a ``status``.
header_bytes : binary
    The message data before the payload, exactly as the capture holds it:
    the header structures walked (the MQDLH and those after it), so that
    ``header_bytes + payload`` is the message data as captured (null when
    the MQMD could not be read).
payload : binary
    The bytes after the last header (as much as the capture kept).
payload_length : int64
    Length of the payload in bytes as the capture states it (larger than
    ``len(payload)`` when the capture truncated the message).
payload_format, payload_encoding, payload_ccsid : string, int32, int32
    How the payload is described by the last header (format trimmed).
payload_text : string
    The payload decoded with its CCSID when its format is ``MQSTR``; null
    (and an ``unknown_ccsid`` issue) when dlqlens knows no character set for
    that CCSID (1390, 937, 65535, -1...): never another code page's reading.
data_length : int64
    Length of the whole message data (headers + payload) in bytes as stated.
data_truncated : bool
    True when the capture kept fewer bytes than ``data_length``.
reason_name : string
    The name of ``dlh.Reason`` (``MQRC_Q_FULL``), null without an MQDLH.
feedback_name : string
    The name of ``md.Feedback`` when it is not ``MQFB_NONE``.
put_ts : timestamp[us, UTC]
    ``md.PutDate`` + ``md.PutTime`` (the original put), null when invalid.
dlh_put_ts : timestamp[us, UTC]
    ``dlh.PutDate`` + ``dlh.PutTime`` (the put onto the dead-letter queue).
decode_status : string
    ``ok`` or the kind of problem (see :mod:`dlqlens.decode.issues`).
decode_issues : list<struct>
    Each with ``code``, ``field``, ``expected``, ``found``, ``offset``,
    ``line`` and ``message``.
raw : binary
    The raw record of a row whose descriptor or framing could not be read;
    null otherwise.
network : struct
    Where a message read from a network capture (``pcap``) crossed an MQ
    client connection; null for every other format. ``direction``
    (``to_qmgr``: an MQPUT/MQPUT1 the client sent; ``from_qmgr``: an MQGET
    reply the queue manager sent), ``verb`` (``MQPUT``, ``MQPUT1``, ``MQGET``),
    ``client_address``/``client_port`` and ``server_address``/``server_port``
    (the queue manager's listener), ``packet_ts`` (UTC capture time of the
    packet holding the message's first byte), ``frame`` (1-based number of
    that packet in the file), ``conversation_id``/``request_id`` (of a TSHM
    segment; null for TSH), ``object_handle`` (the MQI Hobj of an MQPUT or
    MQGET), ``queue_name``/``qmgr_name`` (what the capture says the message
    was put to or got from; null when it does not say) and ``queue_source``
    (which structure said it: ``MQPUT1 MQOD``, ``MQOPEN MQOD``, ``SPI MQOD``,
    ``MQGMO ResolvedQName``, ``MQPMO ResolvedQName``); ``completion_code``,
    ``reason`` and ``reason_name``: the outcome of the call, from the API
    header of the MQPUT/MQPUT1 reply that followed on the same conversation or
    of the MQGET reply itself (``MQRC_Q_FULL``: the put failed), null when the
    capture holds no reply.
"""

from __future__ import annotations

from functools import lru_cache

import pyarrow as pa

from dlqlens.mq.structs import MQBYTE, MQDLH, MQLONG, MQMD, MQRFH2, MQTM, MQXQH, Struct

_ARROW = {MQLONG: pa.int32(), MQBYTE: pa.binary()}


def struct_type(s: Struct, version: int | None = None) -> pa.StructType:
    """Arrow struct type of an MQ structure (nested for dotted names)."""
    top: list[pa.Field] = []
    nested: dict[str, list[pa.Field]] = {}
    for f in s.fields_for(version):
        t = _ARROW.get(f.type, pa.string())
        if "." in f.name:
            parent, child = f.name.split(".", 1)
            if parent not in nested:
                nested[parent] = []
                top.append(pa.field(parent, pa.null()))  # placeholder, replaced below
            nested[parent].append(pa.field(child, t))
        else:
            top.append(pa.field(f.name, t))
    fields = [pa.field(f.name, pa.struct(nested[f.name])) if f.name in nested else f
              for f in top]
    return pa.struct(fields)


HEADER_CHAIN_ITEM = pa.struct([
    ("format", pa.string()), ("struc_id", pa.string()), ("offset", pa.int32()),
    ("length", pa.int32()), ("encoding", pa.int32()), ("ccsid", pa.int32()),
    ("status", pa.string()),
])

ISSUE_ITEM = pa.struct([
    ("code", pa.string()), ("field", pa.string()), ("expected", pa.string()),
    ("found", pa.string()), ("offset", pa.int64()), ("line", pa.int32()),
    ("message", pa.string()),
])

LAYOUT = pa.struct([
    ("md_origin", pa.string()), ("md_byte_order", pa.string()),
    ("md_charset", pa.string()), ("md_version", pa.int32()),
    ("dlh_reconstructed", pa.bool_()),
])

TS = pa.timestamp("us", tz="UTC")

#: The ``network`` column (pcap captures; see the module docstring).
NETWORK = pa.struct([
    ("direction", pa.string()), ("verb", pa.string()),
    ("client_address", pa.string()), ("client_port", pa.int32()),
    ("server_address", pa.string()), ("server_port", pa.int32()),
    ("packet_ts", TS), ("frame", pa.int64()),
    ("conversation_id", pa.int64()), ("request_id", pa.int64()),
    ("object_handle", pa.int64()), ("queue_name", pa.string()),
    ("qmgr_name", pa.string()), ("queue_source", pa.string()),
    ("completion_code", pa.int32()), ("reason", pa.int32()), ("reason_name", pa.string()),
])


#: The structure columns a read can narrow to some of their fields
#: (:attr:`dlqlens.capture.reader.ReadOptions.fields`).
NARROWABLE = ("md", "dlh", "tm")


def narrow_schema(schema: pa.Schema, fields) -> pa.Schema:
    """``schema`` with each struct column named in ``fields`` (a mapping:
    column -> field names) limited to those of its fields, in the struct's
    order; the other columns as they are."""
    if not fields:
        return schema
    out = []
    for f in schema:
        keep = fields.get(f.name)
        if keep is not None and pa.types.is_struct(f.type):
            f = f.with_type(pa.struct([c for c in f.type if c.name in keep]))
        out.append(f)
    return pa.schema(out)


def only_fields(array: pa.StructArray, names) -> pa.StructArray:
    """``array`` with only its fields ``names`` (in its own order), null where it is."""
    kept = [f for f in array.type if f.name in names]
    if len(kept) == array.type.num_fields:
        return array
    if array.offset:
        array = pa.concat_arrays([array])  # (children read from offset 0 below)
    return pa.StructArray.from_arrays([array.field(f.name) for f in kept], fields=kept,
                                      mask=array.is_null() if array.null_count else None)


@lru_cache(maxsize=1)
def message_schema() -> pa.Schema:
    """The Arrow schema of decoded messages (see the module docstring)."""
    rfh2 = pa.struct(list(struct_type(MQRFH2)) + [pa.field("NameValueData", pa.list_(pa.string()))])
    return pa.schema([
        ("source", pa.string()),
        ("capture_format", pa.string()),
        ("message_number", pa.int32()),
        ("source_offset", pa.int64()),
        ("source_line", pa.int32()),
        ("layout", LAYOUT),
        ("md", struct_type(MQMD)),
        ("dlh", struct_type(MQDLH)),
        ("xqh", struct_type(MQXQH)),
        ("tm", struct_type(MQTM)),
        ("rfh2", rfh2),
        ("headers", pa.list_(pa.string())),
        ("header_chain", pa.list_(HEADER_CHAIN_ITEM)),
        ("header_bytes", pa.binary()),
        ("payload", pa.binary()),
        ("payload_length", pa.int64()),
        ("payload_format", pa.string()),
        ("payload_encoding", pa.int32()),
        ("payload_ccsid", pa.int32()),
        ("payload_text", pa.string()),
        ("data_length", pa.int64()),
        ("data_truncated", pa.bool_()),
        ("reason_name", pa.string()),
        ("feedback_name", pa.string()),
        ("put_ts", TS),
        ("dlh_put_ts", TS),
        ("decode_status", pa.string()),
        ("decode_issues", pa.list_(ISSUE_ITEM)),
        ("raw", pa.binary()),
        ("network", NETWORK),
    ])
