"""dmpmqmsg files: the writer (files ``dmpmqmsg -f FILE -o QUEUE`` can load).

IBM MQ "dmpmqmsg (queue load and unload)" loads a file onto a queue with
``dmpmqmsg -m QMGR -f FILE -o QUEUE`` (``-i``/``-I`` name an input *queue*).
The format is ``docs/capture-formats.md``, "dmpmqmsg / QLOAD files": attribute
lines in QLOAD's order, then ``X`` lines, then an empty line per message.

With ``strict`` (what an export for reloading uses), every value is checked
before a line is written: an attribute line is one line of text, so a
character value holding a line end (or any character outside printable
ASCII) would make the file say something else than the message (a
``PutApplName`` of ``"x\\nA USR root"`` would add an attribute); such a
message raises :class:`~dlqlens.errors.ExportError` instead. Without it,
values are written as given (test and dataset files, odd ones included).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from dlqlens.capture.dmpmqmsg.lines import CODES
from dlqlens.capture.message import CaptureMessage
from dlqlens.errors import ExportError
from dlqlens.mq.structs import MQMD

#: Attribute codes in the order QLOAD writes them (``qloadfnc.c``).
ORDER = ("VER", "RPT", "MST", "EXP", "FDB", "ENC", "CCS", "FMT", "PRI", "PER", "MSI",
         "COI", "BOC", "RTQ", "RTM", "USR", "ACC", "AIX", "PAT", "PAN", "PTD", "PTT",
         "AOX", "GRP", "MSQ", "OFF", "MSF", "ORL")
#: Codes written only for a version-2 MQMD (``VER`` is written from version 2 on).
V2_CODES = frozenset({"VER", "GRP", "MSQ", "OFF", "MSF", "ORL"})
_LENGTH = {f.name: f.length for f in MQMD.fields}
_MQLONG = (-2**31, 2**31 - 1)


def _char_value(code: str, name: str, v, strict: bool) -> str:
    """A character field as the file holds it, blank-padded to the field's
    length (the loader blank-pads as well); ``strict``: printable ASCII and at
    most the field's length, else :class:`ExportError`."""
    s = str(v)
    size = _LENGTH[name]
    if not strict:
        return s.ljust(size)
    bad = next((c for c in s if not " " <= c <= "~"), None)
    if bad is not None:
        raise ExportError(f"md.{name}: expected printable ASCII for the {code} line, "
                          f"found {bad!r} at character {s.index(bad)}", f"md.{name}")
    if len(s) > size:
        raise ExportError(f"md.{name}: expected at most {size} characters, found {len(s)}",
                          f"md.{name}")
    return s.ljust(size)


def format_message(m: CaptureMessage, *, width: int = 25, ascii_column: bool = False,
                   index: int | None = None, strict: bool = False) -> str:
    """The dmpmqmsg text of one message: its attribute lines and data lines.

    Parameters
    ----------
    m : CaptureMessage
        MQMD field values (missing ones from
        :data:`dlqlens.capture.message.MD_DEFAULTS`) and the message data.
    width : int
        Data bytes per ``X`` line (dmpmqmsg's default 25).
    ascii_column : bool
        Append the ``<...>`` character column of ``-da``.
    index : int, optional
        Write ``* Index n`` first (``-di``).
    strict : bool
        Check every value (an export for reloading); without it values are
        written as given (test files, including odd ones for the readers).

    Returns
    -------
    str
        Attribute lines in dmpmqmsg's order (``VER`` and the version-2 fields
        only for an MQMD of version 2 or more), ``X`` lines of ``width``
        bytes (``X `` alone for empty data), then the empty line dmpmqmsg
        writes after every message.

    Raises
    ------
    dlqlens.errors.ExportError
        With ``strict``, when a value cannot be written faithfully: an unknown
        (None) value, a character field with a
        character outside printable ASCII (0x20-0x7E) or longer than its
        MQMD field, a byte field longer than its field, an integer outside
        MQLONG.
    """
    md = m.full_md()
    out = []
    if index is not None:
        out.append(f"* Index {index}")
    if md["Version"] is None:  # which lines to write depends on it: never guessed
        raise ExportError("md.Version: expected a value for the VER line, found none "
                          "(the capture does not hold it)", "md.Version")
    for code in ORDER:
        name, kind = CODES[code]
        if code in V2_CODES and int(md["Version"]) < 2:
            continue
        v = md[name]
        if v is None and strict:
            raise ExportError(f"md.{name}: expected a value for the {code} line, found none "
                              "(the capture does not hold it)", f"md.{name}")
        if kind == "int":
            if strict and not _MQLONG[0] <= int(v) <= _MQLONG[1]:
                raise ExportError(f"md.{name}: expected an MQLONG, found {v}", f"md.{name}")
            s = str(int(v))
        elif kind == "char":
            s = _char_value(code, name, v, strict)
        elif kind == "hexchar":
            size = _LENGTH[name]
            s = _char_value(code, name, v, strict).encode("latin-1")[:size].hex().upper()
        else:
            b = bytes(v)
            if strict and len(b) > _LENGTH[name]:
                raise ExportError(f"md.{name}: expected at most {_LENGTH[name]} bytes, "
                                  f"found {len(b)}", f"md.{name}")
            s = b.ljust(_LENGTH[name], b"\0").hex().upper()
        out.append(f"A {code} {s}")
    data = m.data
    if not data:
        out.append("X ")
    for off in range(0, len(data), width):
        chunk = data[off:off + width]
        line = "X " + chunk.hex().upper()
        if ascii_column:
            chars = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
            line = line.ljust(2 + 2 * (width + 1)) + "<" + chars + ">"
        out.append(line)
    out.append("")
    return "\n".join(out) + "\n"


def banner(*, qmgr: str = "", queue: str = "", created: str = "Fri Mar 15 10:20:00 2024",
           strict: bool = False) -> str:
    """The comment lines a dmpmqmsg file starts with, and the empty line after them.

    ``* QLOAD Version:8.0 Created:<ctime>``, then ``* Qmgr  =`` and
    ``* Queue =`` when given (dmpmqmsg writes them only when it read a queue).

    Raises
    ------
    dlqlens.errors.ExportError
        With ``strict``, when a value holds a character outside printable ASCII.
    """
    for label, value in (("queue manager", qmgr), ("queue", queue), ("created", created)):
        if strict and any(not " " <= c <= "~" for c in value):
            raise ExportError(f"banner {label}: expected printable ASCII, found {value!r}")
    out = f"* QLOAD Version:8.0 Created:{created}\n"
    if qmgr:
        out += f"* Qmgr  = {qmgr}\n"
    if queue:
        out += f"* Queue = {queue}\n"
    return out + "\n"


def write_dmpmqmsg(path, messages: Iterable[CaptureMessage], *, qmgr: str = "",
                   queue: str = "", created: str = "Fri Mar 15 10:20:00 2024",
                   ascii_column: bool = False, newline: str = "\n",
                   strict: bool = False) -> int:
    """Write a dmpmqmsg file an administrator can load with
    ``dmpmqmsg -m QMGR -f FILE -o QUEUE``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; written under a temporary name in the same
        directory and renamed when complete, so a failure leaves no partial
        file under ``path``.
    messages : iterable of CaptureMessage
    qmgr, queue : str
        The ``* Qmgr`` / ``* Queue`` banner lines (none when empty).
    created : str
        The banner's ``Created:`` time, C ``ctime()`` text.
    ascii_column : bool
        ``-da``'s character column.
    newline : str
        Line end (``"\\r\\n"`` for a Windows file).
    strict : bool
        Check every value (:func:`format_message`); the file is then ASCII.

    Returns
    -------
    int
        The number of messages written.

    Raises
    ------
    dlqlens.errors.ExportError
        With ``strict``, for a message :func:`format_message` cannot write
        (nothing is left under ``path``).
    OSError
        When the file cannot be written.
    """
    path = os.fspath(path)
    part = path + ".part"
    n = 0
    try:
        with open(part, "w", encoding="ascii" if strict else "utf-8", newline=newline) as fh:
            fh.write(banner(qmgr=qmgr, queue=queue, created=created, strict=strict))
            for m in messages:
                fh.write(format_message(m, ascii_column=ascii_column, strict=strict))
                n += 1
        os.replace(part, path)
    finally:
        if os.path.exists(part):
            os.remove(part)
    return n
