"""How large a message the readers decode.

IBM MQ's largest message is 100 MB (MAXMSGL at most 104,857,600 bytes), so
:data:`MAX_MESSAGE_BYTES` is the default limit: a message whose data is
longer is not read into memory. Its row says so instead: status
``bad_framing``, issue ``too_large`` naming the offset (and line), the length
found and the limit. The limit is the ``maxMessageBytes`` read option
(:class:`dlqlens.capture.reader.ReadOptions`, ``read_capture(...,
max_message_bytes=)``, ``dlqlens capture --max-message-bytes``).

Text captures print each byte of data as several characters; their limit
applies to a message's text: :data:`TEXT_BYTES_PER_DATA_BYTE` times the
limit plus :data:`TEXT_OVERHEAD` bytes of descriptor lines (so a message at
the limit always passes, and one a few times over it never costs more than
its text).
"""

from __future__ import annotations

from dlqlens.decode.issues import Issue, make_issue

__all__ = ["MAX_MESSAGE_BYTES", "TEXT_BYTES_PER_DATA_BYTE", "TEXT_OVERHEAD", "text_limit",
           "too_large_issue"]

#: Largest message data a reader decodes, by default (IBM MQ's 100 MB).
MAX_MESSAGE_BYTES = 100 * 1024 * 1024
#: Characters of text per byte of data, at most: dmpmqmsg ``X`` lines (two hex
#: digits, three with the ``-da`` character column, plus the tag), amqsbcg dump
#: lines (16 bytes in about 78 characters).
TEXT_BYTES_PER_DATA_BYTE = {"dmpmqmsg": 4, "amqsbcg": 6}
#: Text of a message besides its data lines (descriptor and attribute lines).
TEXT_OVERHEAD = 1 << 20


def text_limit(capture_format: str, max_message_bytes: int) -> int:
    """Bytes of text above which a message of ``capture_format`` is too large."""
    return TEXT_BYTES_PER_DATA_BYTE[capture_format] * max_message_bytes + TEXT_OVERHEAD


def too_large_issue(*, source: str, message_number: int, field: str, found: int,
                    limit: int, offset: int, line: int | None = None,
                    what: str = "bytes") -> Issue:
    """The ``too_large`` issue of a message that is not decoded."""
    return make_issue(
        "too_large", source=source, message_number=message_number, field=field,
        expected=f"at most {limit:,} {what} (option maxMessageBytes)",
        found=f"{found:,} {what}", offset=offset, line=line,
        note=f"offset {offset}; not decoded")
