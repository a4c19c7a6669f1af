"""Text from captures made safe for a terminal.

Capture content (names, user ids, payload text) and rules-table text are
untrusted: printed as they are, an ESC sequence could rewrite the terminal
and a CR could overwrite a line; a bidirectional override (U+202E) makes
a terminal show the characters after it in another order than they are.
:func:`printable` shows every control character (C0 except LF and TAB, DEL,
C1, the Unicode line and paragraph separators and the bidirectional
formatting characters) as a Python-style escape, so what is printed is what
is there; :func:`one_line` also escapes LF, TAB and every other character
Python does not call printable, for values printed inside one line.
HTML output is escaped with :func:`html.escape` / jinja2 autoescape instead.
JSON output keeps its other characters as UTF-8 but writes the same classes
of characters as ``\\uNNNN`` escapes (:func:`json_text`, :func:`json_dumps`):
JSON allows them raw in strings, and a terminal or a line-oriented tool
reading ``--jsonl`` output would act on them (a U+2028 or a NEL ends a line
for some of them).
"""

from __future__ import annotations

import json
import re

#: C0 but LF and TAB, DEL, C1, LS and PS, and the bidirectional formatting
#: characters (ALM, LRM, RLM, LRE..RLO, LRI..PDI).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e"
                      "\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """``text`` with control characters written as ``\\xNN`` (``\\uNNNN``).

    >>> printable("APP\\x1b[31m\\r")
    'APP\\\\x1b[31m\\\\x0d'
    """
    return _CONTROL.sub(_escape, text)


def one_line(text) -> str:
    """``text`` for a place inside one line: every character Python does not
    call printable (controls, LF, TAB, format characters, separators other
    than the space) written as an escape; None as ``""``.

    >>> one_line("Q1\\nQ2\\u202e")
    'Q1\\\\nQ2\\\\u202e'
    """
    if text is None:
        return ""
    return "".join(ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode()
                   for ch in str(text))


#: What JSON text may carry raw but must not reach a terminal: C0 controls (JSON
#: escapes them; Spark's ``to_json`` too, all but DEL), DEL, C1, LS and PS, the
#: bidirectional formatting characters. TAB, LF, CR and the blank are left: they
#: are JSON's own whitespace outside strings (and always escaped inside).
_JSON_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                          "\u2028-\u202e\u2066-\u2069]")


def json_text(text: str) -> str:
    """A JSON text with every character of :func:`printable`'s classes that it
    carries raw written as a ``\\uNNNN`` escape: the same JSON value, other
    characters kept as they are (UTF-8 output, not ``ensure_ascii``).

    Such characters can only be inside strings in valid JSON, where the escape
    means the same character, so ``json.loads(json_text(t)) == json.loads(t)``.

    >>> json_text('{"q":"A\u202eB\u0085"}')
    '{"q":"A\\\\u202eB\\\\u0085"}'
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def json_dumps(obj, **kwargs) -> str:
    """:func:`json.dumps` with UTF-8 characters kept (``ensure_ascii=False``) and
    the characters a terminal acts on escaped (:func:`json_text`)."""
    return json_text(json.dumps(obj, ensure_ascii=False, **kwargs))
