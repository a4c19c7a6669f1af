"""amqsbcg output (IBM's browse sample): reader and writer.

The output of IBM MQ's browse sample ("The Browser sample program"), as
``docs/capture-formats.md`` ("amqsbcg output") describes it. The reader
accepts every layout people paste: MQ 5 to 9.x headers, ``MQGET of message
number N`` with or without ``, CompCode:c Reason:r``, shell prompts and other
text around the output, ``length - N bytes`` and ``length - N of M bytes`` (a
browse that kept only the first M bytes), the MQ 9.3.4+
``****Dead Letter Header****`` block (whose 172 bytes are then missing from
the hex dump and are rebuilt from the printed fields, marked
``dlh_reconstructed``), properties blocks, several messages and several
browse runs per file, ``No more messages``, CRLF line ends and the blank line
amqsbcg inserts every 60 lines; and pieces of it (its sections pasted without
the banner and the ``MQGET`` lines, in any subset, lines elided, the hex cut
short: ``docs/capture-formats.md``, "amqsbcg fragments").

The MQMD is built from the descriptor lines; the message bytes come from the
hex columns of the dump lines (never from the character column). A damaged
dump line keeps its byte positions (bad pairs read as zero, ``bad_hex``), and
missing lines within the stated length are zero-filled (``length_mismatch``),
so the bytes after them are still decoded at their place.

Two readers, one behaviour: the line-by-line reader (``fast=False``) handles
all of the above; the default fast reader frames, a block of the file at a
time with numpy, every message printed exactly as amqsbcg prints it and hands
every other message to the line reader.

Modules:

``sniffing``
    :func:`sniff` (format detection), :func:`banner` (the queue browsed),
    :func:`plan` (slices cut at message boundaries).
``lines``
    The line-by-line reader.
``fast``
    :func:`read_amqsbcg` and the fast reader (its blocks and units, the
    rebuilt MQDLH).
``layout``
    amqsbcg's descriptor lines as templates, and the matcher that reads the
    fast reader's units against them.
``dump``
    The fast reader's hex dump lines: checked, and turned into bytes.
``writer``
    :func:`format_message` and :func:`write_amqsbcg`.

The fast reader's block sizes (``CHUNK_BYTES``, ``MIN_FAST_UNITS``,
``FAST_BLOCK_BYTES``) are read from :mod:`dlqlens.capture.amqsbcg.fast`, and
the line reader's ``MAX_ZERO_FILL`` from :mod:`dlqlens.capture.amqsbcg.lines`.
"""

from dlqlens.capture.amqsbcg.fast import read_amqsbcg
from dlqlens.capture.amqsbcg.sniffing import banner, plan, sniff
from dlqlens.capture.amqsbcg.writer import format_message, write_amqsbcg

__all__ = ["banner", "format_message", "plan", "read_amqsbcg", "sniff", "write_amqsbcg"]
