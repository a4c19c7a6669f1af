"""Text from captures made safe for a terminal.

Capture content (names, user ids, payload text) and rules-table text are
untrusted: printed as they are, an ESC sequence could rewrite the terminal
and a CR could overwrite a line. :func:`printable` shows every control
character (C0 except LF and TAB, DEL, C1, and the Unicode line and paragraph
separators) as a Python-style escape, so what is printed is what is there.
HTML output is escaped with :func:`html.escape` / jinja2 autoescape instead.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(m: re.Match) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """``text`` with control characters written as ``\\xNN`` (``\\uNNNN``).

    >>> printable("APP\\x1b[31m\\r")
    'APP\\\\x1b[31m\\\\x0d'
    """
    return _CONTROL.sub(_escape, text)
