"""Message bytes of simulated messages: header chains packed from field tables.

A simulated message keeps its MQ headers as field dicts (``("MQDLH", {...})``,
``("MQTM", {...})``, ``("MQXQH", {...})``, by IBM structure name) in front of
its application data, so that the simulation can read them without parsing.
The bytes a capture holds are built here with the structures' own field
tables (:mod:`dlqlens.mq.structs`), following the chaining rule of
:mod:`dlqlens.mq.chaining`: the MQMD's Encoding/CodedCharSetId describe the
first header, each header's (the MQXQH's embedded MQMD's) describe what
follows it.
"""

from __future__ import annotations

from dlqlens.capture.message import byteorder_of
from dlqlens.mq import chaining
from dlqlens.mq.ccsid import UTF16, charset

from dlqlens.sim.engine import SimulationError

#: Length in bytes of each header kind (its structure's table).
HEADER_LENGTH = {kind: h.struct.length() for kind, h in chaining.BY_NAME.items()}


def header_codec(ccsid: int) -> str:
    """The Python codec MQ header characters are written with in ``ccsid``.

    Raises
    ------
    SimulationError
        For a CCSID an MQ header cannot be written in (UTF-16, or unknown to
        :func:`dlqlens.mq.ccsid.charset`): an MQDLH must be in a character
        set with single-byte characters for every character valid in queue
        names (IBM MQ, "MQDLH - Dead-letter header", character set and
        encoding), and "message header data cannot be encoded in UTF-16"
        ("Unicode conversion support").
    """
    cs = charset(int(ccsid))
    if cs.family == UTF16 or not cs.known:
        raise SimulationError(f"CCSID {ccsid} cannot carry MQ headers "
                              "(need a known single-byte or UTF-8 character set)")
    return cs.codec


def pack_data(md: dict, headers: tuple, body: bytes) -> bytes:
    """The message data: each header packed in the layout the one before names, then ``body``."""
    enc, ccsid = int(md["Encoding"]), int(md["CodedCharSetId"])
    parts = []
    for kind, fields in headers:
        h = chaining.BY_NAME[kind]
        parts.append(h.struct.pack(fields, byteorder_of(enc), header_codec(ccsid)))
        enc, ccsid, _ = chaining.next_layout(h, fields, enc, ccsid)
    parts.append(body)
    return b"".join(parts)


def data_length(headers: tuple, body: bytes) -> int:
    """Length in bytes of the message data (headers and body)."""
    return sum(HEADER_LENGTH[k] for k, _ in headers) + len(body)
