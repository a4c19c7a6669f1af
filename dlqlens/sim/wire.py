"""Message bytes of simulated messages: header chains packed from field tables.

A simulated message keeps its MQ headers as field dicts (``("MQDLH", {...})``,
``("MQTM", {...})``, ``("MQXQH", {...})``) in front of its application data, so
that the simulation can read them without parsing. The bytes a capture holds
are built here with the structures' own field tables
(:mod:`dlqlens.mq.structs`), following the chaining rule of
``spec/mqdlh.md`` §3/§7: the MQMD's Encoding/CodedCharSetId describe the first
header, an MQDLH's (or MQXQH's embedded MQMD's) describe what follows it.
"""

from __future__ import annotations

from dlqlens.capture.message import byteorder_of
from dlqlens.mq.ccsid import UTF16, charset
from dlqlens.mq.structs import MQDLH, MQTM, MQXQH

from dlqlens.sim.engine import SimulationError

#: Structures a simulated message can carry, by kind.
STRUCTS = {"MQDLH": MQDLH, "MQTM": MQTM, "MQXQH": MQXQH}

#: Length in bytes of each header kind (MQDLH 172, MQTM 684, MQXQH 428).
HEADER_LENGTH = {kind: st.length() for kind, st in STRUCTS.items()}


def header_codec(ccsid: int) -> str:
    """The Python codec MQ header characters are written with in ``ccsid``.

    Raises
    ------
    SimulationError
        For a CCSID an MQ header cannot be written in (UTF-16, or unknown to
        :func:`dlqlens.mq.ccsid.charset`): IBM requires single-byte
        characters for everything valid in queue names (``spec/mqdlh.md`` §3).
    """
    cs = charset(int(ccsid))
    if cs.family == UTF16 or not cs.known:
        raise SimulationError(f"CCSID {ccsid} cannot carry MQ headers "
                              "(need a known single-byte or UTF-8 character set)")
    return cs.codec


def next_layout(kind: str, fields: dict, encoding: int, ccsid: int) -> tuple[int, int]:
    """Encoding and CCSID of what follows a header of ``kind``."""
    if kind == "MQDLH":
        return int(fields["Encoding"]), int(fields["CodedCharSetId"])
    if kind == "MQXQH":
        return int(fields["MsgDesc.Encoding"]), int(fields["MsgDesc.CodedCharSetId"])
    return encoding, ccsid


def pack_data(md: dict, headers: tuple, body: bytes) -> bytes:
    """The message data: each header packed in the layout the one before names, then ``body``."""
    enc, ccsid = int(md["Encoding"]), int(md["CodedCharSetId"])
    parts = []
    for kind, fields in headers:
        parts.append(STRUCTS[kind].pack(fields, byteorder_of(enc), header_codec(ccsid)))
        enc, ccsid = next_layout(kind, fields, enc, ccsid)
    parts.append(body)
    return b"".join(parts)


def data_length(headers: tuple, body: bytes) -> int:
    """Length in bytes of the message data (headers and body)."""
    return sum(HEADER_LENGTH[k] for k, _ in headers) + len(body)
