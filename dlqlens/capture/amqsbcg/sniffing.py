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
    """True when ``head`` looks like amqsbcg output."""
    text = normalise_head(head).decode("latin-1")
    return "AMQSBCG0" in text or _MD_BANNER in text or bool(_MQGET.search(text))


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
