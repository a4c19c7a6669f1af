"""dmpmqmsg (and QLOAD, SupportPac MO03) message files: reader and writer.

The files of IBM MQ "dmpmqmsg (queue load and unload)", as
``docs/capture-formats.md`` ("dmpmqmsg / QLOAD files") describes them: lines
starting ``*`` are comments (the ``* QLOAD``/``* DMPMQMSG`` banner,
``* Qmgr``, ``* Queue``, ``* Index n``); a message is a block of ``A xxx value``
attribute lines (or one ``N`` line) followed by ``X`` (hex), ``S`` (quoted
string, ``~`` escapes) and ``T`` (text, lossy) data lines. Every one of the 30
three-letter codes is read; an unknown code is reported and skipped. ``T``
lines are read as QLOAD reads them (a line feed after each) and the message is
flagged ``lossy_capture``.

Two readers, one behaviour: the line-by-line reader (``fast=False``) handles
every line and every oddity; the default fast reader frames the well-formed
messages of a block of the file at a time with numpy (its byte loops in C,
:mod:`dlqlens.capture.scan`) and hands every other message to the line
reader.

Modules:

``sniffing``
    :func:`sniff` (format detection), :func:`banner` (the queue manager and
    queue a file was dumped from), :func:`created` (when it was dumped),
    :func:`plan` (slices cut at message boundaries).
``lines``
    :data:`CODES` and the line-by-line reader.
``fast``
    :func:`read_dmpmqmsg` and the fast reader (its blocks and units).
``attrs``
    The fast reader's attribute lines, read columnwise into MQMD rows.
``writer``
    :func:`format_message` and :func:`write_dmpmqmsg`.

The fast reader's block sizes (``CHUNK_BYTES``, ``MIN_FAST_UNITS``,
``MIN_FAST_LINES``) are read from :mod:`dlqlens.capture.dmpmqmsg.fast`,
where a test changes them.
"""

from dlqlens.capture.dmpmqmsg.fast import read_dmpmqmsg
from dlqlens.capture.dmpmqmsg.lines import CODES
from dlqlens.capture.dmpmqmsg.sniffing import banner, created, plan, sniff
from dlqlens.capture.dmpmqmsg.writer import format_message, write_dmpmqmsg

__all__ = ["CODES", "banner", "created", "format_message", "plan", "read_dmpmqmsg", "sniff",
           "write_dmpmqmsg"]
