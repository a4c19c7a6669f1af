"""Exceptions raised by dlqlens.

Every error that reaches a user names where the problem is (file, byte offset
or line, field) and what was expected and found, so the CLI can print it as one
line without a traceback.
"""

from __future__ import annotations

import difflib


def suggestions(word: str, known, n: int = 2) -> list[str]:
    """The names in ``known`` that ``word`` may be a misspelling of, closest first.

    The one measure of "close" behind every "did you mean" dlqlens prints
    (rules-table keywords, MQ constant names, MQSC attributes):
    :func:`difflib.get_close_matches` with a cutoff of 0.6, at most ``n``.
    ``word`` itself is never suggested.

    >>> suggestions("TRIGER", ["TRIGGER", "TRIGTYPE", "PUT"])
    ['TRIGGER', 'TRIGTYPE']
    """
    return [k for k in difflib.get_close_matches(word, list(known), n=n + 1, cutoff=0.6)
            if k != word][:n]


def did_you_mean(word: str, known, n: int = 2, sep: str = " or ") -> str:
    """``"did you mean A or B?"`` from :func:`suggestions`, or ``""`` when nothing is close."""
    close = suggestions(word, known, n)
    return f"did you mean {sep.join(close)}?" if close else ""


class DlqlensError(Exception):
    """Base class of every error dlqlens raises on purpose."""


class UsageError(DlqlensError):
    """Bad arguments or options (a command line, a reader option)."""


class CaptureError(DlqlensError):
    """A capture file cannot be read at all (missing, unreadable, unknown format).

    Problems inside one message never raise this in ``PERMISSIVE`` mode: they
    become ``decode_issues`` on that message's row.
    """


class MalformedMessageError(DlqlensError):
    """Raised in ``FAILFAST`` mode for the first message that does not decode.

    Attributes
    ----------
    issue : dict
        The first issue found, with keys ``source``, ``message_number``,
        ``offset``, ``line``, ``field``, ``expected``, ``found`` and ``message``.
    """

    def __init__(self, issue: dict):
        self.issue = issue
        super().__init__(issue.get("message", str(issue)))


class RulesError(DlqlensError):
    """A runmqdlq rules table cannot be used (for example it cannot be read)."""


class ExportError(DlqlensError):
    """A message or a selection cannot be written as asked (a character an
    export file cannot hold, bytes the capture did not keep, a missing column).

    Attributes
    ----------
    field : str or None
        The MQ field or column at fault (``md.PutApplName``), when one is.
    """

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        super().__init__(message)
