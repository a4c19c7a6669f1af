"""dmpmqmsg files: format detection, the banner, and planning.

:func:`sniff` tells a dmpmqmsg file from its first bytes, :func:`banner`
gives the queue manager and queue it was dumped from, :func:`created` when
it was dumped, and :func:`plan` cuts
a large file into slices at message boundaries (with the fast reader's
blocks: :mod:`dlqlens.capture.dmpmqmsg.fast`).
"""

from __future__ import annotations

import re

from dlqlens.capture.dmpmqmsg import fast as _fast
from dlqlens.capture.slices import Slice
from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.text import normalise_head, plan_text
from dlqlens.mq.constants import OBJECT_NAME


def sniff(head: bytes) -> bool:
    """True when ``head`` looks like a dmpmqmsg/QLOAD file."""
    text = normalise_head(head).decode("latin-1")
    if text.startswith(("* QLOAD", "* DMPMQMSG")):
        return True
    return bool(re.search(r"^A (VER|RPT|MST|FMT) ", text, re.M)) and \
        bool(re.search(r"^[XST] ", text, re.M))


#: The banner lines; the value runs to the end of the line and its trailing
#: blanks are removed afterwards (a lazy value followed by `` *\r?$`` let the
#: engine retry every split of a long run of blanks: quadratic).
_BANNER = re.compile(rb"^\* (Qmgr|Queue) *= *([^\r\n]*)", re.M)


def banner(head: bytes) -> tuple[str | None, str | None]:
    """``(queue manager, queue)`` the file was dumped from: the ``* Qmgr  =``
    and ``* Queue =`` comment lines dmpmqmsg writes when it reads a queue
    (``docs/detectors.md``, "Which queue a capture holds"). None for a name
    that is absent or is not an MQ object name
    (:data:`dlqlens.mq.constants.OBJECT_NAME`); ``head`` is the start of the
    file, and the first line of each kind counts."""
    found: dict[bytes, str] = {}
    for m in _BANNER.finditer(normalise_head(head)):
        name = m.group(2).rstrip(b" ").decode("latin-1")
        if m.group(1) not in found and OBJECT_NAME.fullmatch(name):
            found[m.group(1)] = name
    return found.get(b"Qmgr"), found.get(b"Queue")


_CREATED = re.compile(rb"^\* (?:QLOAD|DMPMQMSG)\b([^\r\n]*)", re.M)


def created(head: bytes):
    """When the dump was written: the ``Created:`` time of the ``* QLOAD`` /
    ``* DMPMQMSG`` banner line (``docs/capture-formats.md``, "dmpmqmsg / QLOAD
    files"), a C ``ctime()`` text (``Wed Mar 13 22:40:30 2024``) read as a
    naive datetime, or None when the line is absent or not such a time. Only
    the first 4 KiB of ``head`` are searched.

    ``ctime()`` writes the local time of the machine that ran the dump and
    names no time zone: callers take it as UTC and say so."""
    import datetime as _dt

    m = _CREATED.search(normalise_head(head[:4096]))
    if not m or b"Created:" not in m.group(1):
        return None
    text = m.group(1).split(b"Created:", 1)[1].decode("latin-1").strip()
    try:
        return _dt.datetime.strptime(text, "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


def plan(path: str, target_bytes: int = 64 * 1024 * 1024, *,
         max_message_bytes: int = MAX_MESSAGE_BYTES) -> list[Slice]:
    """Split a dmpmqmsg file into :class:`~dlqlens.capture.slices.Slice`
    objects of about ``target_bytes`` (see :func:`dlqlens.capture.text.plan_text`:
    the file is read once to count the messages before each cut)."""
    return plan_text(path, _fast._Block, _fast.CHUNK_BYTES, target_bytes, max_message_bytes)
