"""The header chain: which header a Format announces, and what describes the data after it.

The data of an MQ message can start with MQ headers, one after another. The
MQMD's Format names the first (``MQDEAD`` an MQDLH, ``MQXMIT`` an MQXQH,
``MQTRIG`` an MQTM, ``MQHRF2`` an MQRFH2...); the MQMD's Encoding and
CodedCharSetId describe it. After that, each header's own Encoding,
CodedCharSetId and Format describe what follows it, not the header itself
(IBM MQ, "Encoding (MQLONG)", "CodedCharSetId (MQLONG)" and "Format
(MQCHAR8)" of MQDLH, MQMDE, MQRFH2, MQDH, MQRMH...). The MQXQH carries them
in its embedded version-1 MQMD, ``MsgDesc`` ("MQXQH - Transmission-queue
header"); nothing is chained after an MQTM ("MQTM - Trigger message").
Headers with the common prefix (StrucId, Version, StrucLength, Encoding,
CodedCharSetId, Format, Flags) say in ``StrucLength`` where the next one starts.

Two values mean "as this header": a CodedCharSetId of ``MQCCSI_INHERIT``
(IBM, CodedCharSetId of MQDLH: "Character data in the data following this
structure is in the same character set as this structure"), and, our
reading, ``MQCCSI_UNDEFINED`` (0) and an Encoding whose integer part
(``MQENC_INTEGER_MASK``) is undefined: MQ names no layout there, so the one
in force is kept.

This module is the rule. The decoder (:mod:`dlqlens.decode.records`, all rows
of a batch at once) and the simulator (:mod:`dlqlens.sim.wire`, one message
at a time) both apply it; :func:`following_encoding` and
:func:`following_ccsid` take numpy arrays or plain integers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dlqlens.mq.constants import MQCCSI, MQENC, MQFMT
from dlqlens.mq.structs import (MQCIH, MQDH, MQDLH, MQIIH, MQMDE, MQRFH, MQRFH2, MQRMH, MQTM,
                                MQWIH, MQXQH, Struct)

MQCCSI_INHERIT = MQCCSI["MQCCSI_INHERIT"]
MQCCSI_UNDEFINED = MQCCSI["MQCCSI_UNDEFINED"]
MQENC_INTEGER_MASK = MQENC["MQENC_INTEGER_MASK"]
MQFMT_NONE = MQFMT["MQFMT_NONE"]


@dataclass(frozen=True)
class ChainedHeader:
    """A header that can appear in a chain.

    Attributes
    ----------
    struct : Struct
        Its field table (:mod:`dlqlens.mq.structs`).
    next_fields : str or None
        The prefix of the names of its Encoding, CodedCharSetId and Format
        fields that describe the data after it (``""``, ``"MsgDesc."`` for
        the MQXQH); None when nothing follows it (the MQTM).
    """

    struct: Struct
    next_fields: str | None

    @property
    def name(self) -> str:
        """IBM's structure name (``MQDLH``)."""
        return self.struct.name

    @property
    def format(self) -> str:
        """The 8-character Format value that announces the header (``"MQDEAD  "``)."""
        return self.struct.format_name

    @property
    def struc_id(self) -> str:
        """The StrucId the header must start with (``"DLH "``)."""
        return self.struct.struc_id

    @property
    def prefixed(self) -> bool:
        """Whether the header has the common prefix, whose StrucLength says
        where the data after it starts (else it is as long as its table)."""
        return "StrucLength" in self.struct.offsets


#: The chained headers, by the 8-character Format that announces them.
HEADERS: dict[str, ChainedHeader] = {h.format: h for h in (
    ChainedHeader(MQDLH, ""),
    ChainedHeader(MQXQH, "MsgDesc."),
    ChainedHeader(MQTM, None),
    ChainedHeader(MQMDE, ""),
    ChainedHeader(MQRFH, ""),
    ChainedHeader(MQRFH2, ""),
    ChainedHeader(MQCIH, ""),
    ChainedHeader(MQIIH, ""),
    ChainedHeader(MQDH, ""),
    ChainedHeader(MQWIH, ""),
    ChainedHeader(MQRMH, ""),
)}

#: The same headers by IBM structure name (``"MQDLH"``).
BY_NAME: dict[str, ChainedHeader] = {h.name: h for h in HEADERS.values()}


def following_encoding(stated, current):
    """The Encoding of the data after a header that states ``stated``.

    ``stated`` unless its integer encoding is undefined (``stated &
    MQENC_INTEGER_MASK`` is 0): then ``current``, the encoding in force.
    Works element-wise on numpy arrays; plain integers give a 0-d array
    (use ``int()``).
    """
    stated = np.asarray(stated)
    return np.where(stated & MQENC_INTEGER_MASK, stated, current)


def following_ccsid(stated, current):
    """The CodedCharSetId of the data after a header that states ``stated``.

    ``stated`` unless it is ``MQCCSI_INHERIT`` or ``MQCCSI_UNDEFINED``: then
    ``current``, the character set of the header itself. Element-wise as
    :func:`following_encoding`.
    """
    stated = np.asarray(stated)
    return np.where((stated == MQCCSI_INHERIT) | (stated == MQCCSI_UNDEFINED), current, stated)


def next_layout(header: ChainedHeader, fields: Mapping, encoding: int,
                ccsid: int) -> tuple[int, int, str]:
    """Encoding, CodedCharSetId and Format of what follows one header.

    Parameters
    ----------
    header : ChainedHeader
    fields : mapping
        The header's field values by name (``"Encoding"``, or
        ``"MsgDesc.Encoding"`` for an MQXQH).
    encoding, ccsid : int
        Those the header itself is written in.

    Returns
    -------
    (int, int, str)
        For a header after which nothing follows (MQTM): ``encoding``,
        ``ccsid`` and ``MQFMT_NONE``.
    """
    pre = header.next_fields
    if pre is None:
        return int(encoding), int(ccsid), MQFMT_NONE
    return (int(following_encoding(int(fields[pre + "Encoding"]), int(encoding))),
            int(following_ccsid(int(fields[pre + "CodedCharSetId"]), int(ccsid))),
            str(fields[pre + "Format"]))


__all__ = ["BY_NAME", "HEADERS", "MQCCSI_INHERIT", "ChainedHeader", "following_ccsid",
           "following_encoding", "next_layout"]
