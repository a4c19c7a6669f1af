"""Decoded messages as JSON objects: the ``dlqlens decode --jsonl`` contract.

One object per message, with the columns of
:func:`dlqlens.decode.schema.message_schema` and these conventions:

* ``md``, ``dlh``, ``xqh``, ``tm``, ``rfh2`` are nested objects keyed by MQ's
  field names (``null`` when the structure is absent);
* byte fields (``MsgId``, ``CorrelId``, ``AccountingToken``, ``GroupId``) are
  upper-case hex strings; character fields are trimmed of MQ's blank/NUL padding;
* ``header_bytes``, ``payload`` and ``raw`` are given as ``header_bytes_hex``,
  ``payload_hex`` and ``raw_hex`` (upper-case hex);
* timestamps are ISO 8601 in UTC with a ``Z`` suffix;
* ``headers`` is the list of header formats in chain order.

Other tools and the tests read this output: keys are only ever added.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator

import pyarrow as pa

from dlqlens.safe import json_dumps

_RENAMED = {"header_bytes": "header_bytes_hex", "payload": "payload_hex", "raw": "raw_hex"}


def _plain(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex().upper()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat(timespec="microseconds") + "Z"
    return v


def records(batch: pa.RecordBatch | pa.Table) -> Iterator[dict]:
    """The JSON-ready objects of a batch of decoded messages."""
    for row in batch.to_pylist():
        yield {_RENAMED.get(k, k): _plain(v) for k, v in row.items()}


def dumps(obj: dict) -> str:
    """One JSON line (UTF-8 characters kept, no spaces after separators; the
    characters a terminal acts on, C1, DEL, U+2028/U+2029 and the bidirectional
    formatting characters, written as ``\\uNNNN``: :func:`dlqlens.safe.json_dumps`)."""
    return json_dumps(obj, separators=(",", ":"))
