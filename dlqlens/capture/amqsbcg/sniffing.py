"""amqsbcg output: format detection, the banner, and planning.

:func:`sniff` tells amqsbcg output from its first bytes, :func:`banner` gives
the queue it browsed, and :func:`plan` cuts a large file into slices at
message boundaries (with the fast reader's blocks:
:mod:`dlqlens.capture.amqsbcg.fast`).
"""

from __future__ import annotations

import re

from dlqlens.capture.amqsbcg import fast as _fast
from dlqlens.capture.amqsbcg.lines import _MD_BANNER, _MQGET
from dlqlens.capture.slices import Slice
from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.text import normalise_head, plan_text
from dlqlens.mq.constants import OBJECT_NAME


def sniff(head: bytes) -> bool:
    """True when ``head`` looks like amqsbcg output, or a piece of it.

    Whole output: its ``AMQSBCG0`` banner, an ``MQGET of message number``
    line or the ``****Message descriptor****`` banner. A piece pasted
    without them (``docs/capture-formats.md``, "amqsbcg fragments") only
    when its section banner is followed by what amqsbcg prints under it:
    the ``****Dead Letter Header****`` banner by a ``StrucId : 'DLH '``
    line, the ``****   Message      ****`` banner by its ``length - N
    bytes`` line and a dump line at offset 0. A hex dump alone (``xxd``,
    ``hexdump -C``, or amqsbcg's dump lines without their banner) could be
    something else: refused, as is a banner without what follows it.
    """
    text = normalise_head(head).decode("latin-1")
    if "AMQSBCG0" in text or _MD_BANNER in text or _MQGET.search(text):
        return True
    return bool(_DLH_FRAGMENT.search(text) or _DATA_FRAGMENT.search(text))


#: The Dead Letter Header block's banner, then (blank lines and an elision
#: marker allowed) its StrucId line.
_DLH_FRAGMENT = re.compile(
    r"^[ \t]*\*{4}Dead Letter Header\*{4}[ \t]*\r?\n(?:[ \t]*(?:\.{3,}|\u2026)?[ \t]*\r?\n){0,3}"
    r"[ \t]*StrucId[ \t]*:[ \t]*'DLH '", re.M)
#: The data banner, its length line and the first dump line (offset 0, hex groups).
_DATA_FRAGMENT = re.compile(
    r"^[ \t]*\*{4}[ \t]+Message[ \t]+\*{4}[ \t]*\r?\n(?:[ \t]*\r?\n){0,3}"
    r"[ \t]*length[ \t]*-[ \t]*\d+(?:[ \t]+of[ \t]+\d+)?[ \t]+bytes[ \t]*\r?\n(?:[ \t]*\r?\n){0,3}"
    r"00000000:[ \t]+[0-9A-Fa-f]{2,4}[ \t]", re.M)


_MQOPEN = re.compile(rb"^ MQOPEN - '([^'\r\n]*)' *\r?$", re.M)


def banner(head: bytes) -> tuple[None, str | None]:
    """``(None, queue)``: the queue amqsbcg browsed, from its ``MQOPEN -
    'name'`` line (as in the typical output of IBM MQ "Browsing queues with the
    sample program"; ``docs/detectors.md``, "Which queue a capture holds";
    amqsbcg does not print the queue manager's name). None when absent or not
    an MQ object name (:data:`dlqlens.mq.constants.OBJECT_NAME`); ``head`` is
    the start of the file, and the first such line counts."""
    m = _MQOPEN.search(normalise_head(head))
    name = m.group(1).decode("latin-1").rstrip() if m else ""
    return None, name if OBJECT_NAME.fullmatch(name) else None


def plan(path: str, target_bytes: int = 64 * 1024 * 1024, *,
         max_message_bytes: int = MAX_MESSAGE_BYTES) -> list[Slice]:
    """Split an amqsbcg file into :class:`~dlqlens.capture.slices.Slice`
    objects of about ``target_bytes`` (see :func:`dlqlens.capture.text.plan_text`:
    the file is read once to count the messages before each cut)."""
    return plan_text(path, _fast._Block, _fast.CHUNK_BYTES, target_bytes, max_message_bytes)
