"""Decode issues and statuses: what went wrong with one message, and where.

Every issue names the file, the message number, the byte offset or line, the
field, what was expected and what was found (DESIGN.md convention 4). The
``decode_status`` of a row is the most serious status among its issues:

========================  ==================================================
status                    meaning
========================  ==================================================
``ok``                    decoded completely (warnings may still be listed)
``truncated``             the capture kept only part of the message (data cut
                          short, descriptor lines elided, values masked, a hex
                          dump with no MQMD or cut by a screen:
                          ``not_captured``); what is present is decoded, what
                          is missing is null
``bad_header``            a chained header (MQDLH, MQXQH, ...) is not valid;
                          the rest of the data is kept as opaque payload
``bad_descriptor``        the MQMD could not be read; only raw bytes are kept
``bad_data``              the message bytes could not be recovered (bad hex)
``bad_framing``           text or bytes between messages that form no message,
                          or a message above the readers' size limit
                          (``too_large``: not decoded, see
                          :mod:`dlqlens.capture.limits`)
========================  ==================================================

``ok`` and ``truncated`` rows are well-formed; the others are *malformed*:
``DROPMALFORMED`` drops them and ``FAILFAST`` stops at the first one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: Status severity, least serious first.
STATUSES = ("ok", "truncated", "bad_header", "bad_descriptor", "bad_data", "bad_framing")
_RANK = {s: i for i, s in enumerate(STATUSES)}
WELL_FORMED = frozenset({"ok", "truncated"})

#: Issue code -> the status it implies (``None``: a warning, status unchanged).
ISSUE_STATUS: dict[str, str | None] = {
    "data_truncated": "truncated",
    "header_truncated": "truncated",
    "elided": "truncated",
    "masked": "truncated",
    "not_captured": "truncated",
    "bad_struc_id": "bad_header",
    "bad_version": "bad_header",
    "bad_struc_length": "bad_header",
    "chain_too_deep": "bad_header",
    "bad_md": "bad_descriptor",
    "bad_md_field": "bad_descriptor",
    "bad_hex": "bad_data",
    "length_mismatch": "bad_data",
    "bad_length": "bad_framing",
    "unframed": "bad_framing",
    "too_large": "bad_framing",
    "charset_mismatch": None,
    "encoding_mismatch": None,
    "encoding_undefined": None,
    "unknown_ccsid": None,
    "bad_timestamp": None,
    "text_not_decodable": None,
    "dlh_reconstructed": None,
    "lossy_capture": None,
    "index_mismatch": None,
}


@dataclass(frozen=True)
class Issue:
    """One problem found while framing or decoding a message.

    Attributes
    ----------
    code : str
        A key of :data:`ISSUE_STATUS`.
    field : str
        Where: an MQ field (``dlh.Reason``, ``md.StrucId``) or a capture
        element (``record length``, ``X line``).
    expected, found : str
        What the decoder expected and what it found (hex for bytes).
    offset : int or None
        Byte offset in the file (binary captures; decode issues inside the
        message data also give the byte of the data in ``message``).
    line : int or None
        1-based line number in the file (text captures).
    message : str
        The whole statement, naming file and message number.
    """

    code: str
    field: str
    expected: str
    found: str
    offset: int | None
    line: int | None
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def make_issue(code: str, *, source: str, message_number: int, field: str,
               expected: str, found: str, offset: int | None = None,
               line: int | None = None, note: str = "") -> Issue:
    """Build an :class:`Issue` whose ``message`` says everything in one line."""
    where = f"line {line}" if line is not None else (
        f"offset {offset}" if offset is not None else "")
    text = f"{source}: message {message_number}"
    if where:
        text += f" ({where})"
    text += f": {field}: expected {expected}, found {found}"
    if note:
        text += f" ({note})"
    return Issue(code, field, expected, found, offset, line, text)


def worst_status(codes) -> str:
    """The most serious status implied by a sequence of issue codes."""
    rank = 0
    for c in codes:
        s = ISSUE_STATUS.get(c)
        if s is not None:
            rank = max(rank, _RANK[s])
    return STATUSES[rank]
