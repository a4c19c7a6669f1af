"""Tokenizer and parser for runmqdlq / CSQUDLQH rules tables.

:func:`parse` turns the text of a rules table into a
:class:`~dlqlens.rules.model.RulesTable`; :func:`parse_file` reads a file
first. Parsing never raises on bad table content: every problem becomes a
:class:`~dlqlens.rules.model.Diagnostic` (see :mod:`dlqlens.rules.validate`),
and every rule that could be read is kept.

The lexical layer follows IBM's "DLQ rules table conventions" (multiplatform,
"DLQ rules table conventions on IBM i" and "Rules table conventions on z/OS"):

* A line whose first non-blank character is ``*`` is a comment; comment lines
  may appear anywhere. Blank lines are ignored.
* Each entry (the control data or a rule) begins on a new line and continues
  onto the next line only through a continuation character.
* ``+`` as the last non-blank character of a line: the entry continues from
  the *first non-blank character* of the next line. ``-`` as the last
  non-blank character: the entry continues from the *start* of the next line.
  Continuation characters may occur inside keywords and values
  (``APPLNAME('ABC+`` / ``  D')`` is ``ABCD``).
* Keywords and values are separated by blanks or commas; any number of blanks
  may appear around keywords, parentheses and values (``REASON (MQRC_Q_FULL)``).
* A value in single quotes keeps its case and blanks; ``''`` inside it stands
  for one quote (and counts as one character).
* The significant length of a line should not exceed 72 characters.

Choices made where IBM's text leaves room (each is pinned by a test):

* ``-`` continuation keeps **all** leading blanks of the next line (IBM: "from
  the start of the next line"; the exact number of blanks IBM's page shows in
  its ``'ABC D'`` example is a rendering artefact). Blanks before the
  continuation character itself are kept in both cases.
* Comment lines and blank lines met while an entry is being continued are
  skipped; the entry continues on the next line that is neither. So a
  continuation line cannot begin with ``*``.
* A line is a comment when its first *non-blank* character is ``*`` (no
  keyword starts with ``*``, so such a line could never be an entry).
* Tab characters count as blanks. Lines end at LF; a CR before the LF is
  dropped (CRLF files). A leading byte-order mark is ignored.
* A file is read as UTF-8, or as Latin-1 when it is not valid UTF-8. A UTF-16
  file (a byte-order mark FF FE or FE FF, or ASCII text with a NUL in every
  other byte, as Windows editors save "Unicode") is refused, not read, even
  when its byte-order mark makes the encoding certain: runmqdlq reads its
  rules as single-byte text in the queue manager's code page and would not
  read it, so a table dlqlens accepted would fail at the handler. The error
  says which UTF-16 it is and gives the ``iconv -f UTF-16 -t UTF-8`` command
  (``UTF-16LE`` / ``UTF-16BE`` without a byte-order mark) that converts it.
* A comma counts as a blank everywhere outside quotes (as in MQSC).
* A keyword written directly after the ``)`` of the previous one, with no
  blank or comma, is read as a keyword but flagged (``missing-separator``):
  IBM says they "must be separated".
* The 72-character limit is checked on entry lines only (IBM calls it a
  portability limit; comment text is not significant).
"""

from __future__ import annotations

import bisect
import io
import os
import re
from array import array

from dlqlens.errors import RulesError
from dlqlens.rules.entries import Entry, Item, Token
from dlqlens.rules.model import Diagnostic, RulesTable
from dlqlens.rules.validate import build_table, diagnostic

__all__ = ["Token", "Item", "Entry", "read_entries", "parse", "parse_file", "MAX_LINE",
           "MAX_VALUE_CHARS"]

#: IBM: "the significant length of a line must not be greater than 72 characters".
MAX_LINE = 72

_BLANKS = " \t"
_SEPARATORS = " \t,"
_WORD_END = " \t,()'"


#: The lexer reads at most this many characters of one value (not counting
#: ``*``; ``''`` counts as one). The longest legal value has 48 (DestQName,
#: ReplyToQ, ...: ``docs/rules.md``); a longer one is reported as
#: ``value-too-long`` by the validator, with the value. Beyond this limit the
#: lexer reports it itself, at the value's line and column, keeps only the
#: first characters and marks the keyword's value unreadable, so a value of
#: megabytes costs no more memory than its line.
MAX_VALUE_CHARS = 1024

_WORD_RE = re.compile(r"[^ \t,()']*")
_SEP_RE = re.compile(r"[ \t,]*")


class _Logical:
    """One entry's text after continuation, and where each piece came from:
    per physical line that contributed, the offset in ``text`` of its first
    character, its line and its column (three ``array('q')``: 24 bytes a
    line, whatever its length)."""

    __slots__ = ("_buf", "_size", "offsets", "lines", "columns", "first_line",
                 "last_line", "text")

    def __init__(self, first_line: int) -> None:
        self._buf = io.StringIO()
        self._size = 0
        self.offsets = array("q")
        self.lines = array("q")
        self.columns = array("q")
        self.first_line = self.last_line = first_line
        self.text = ""

    def add(self, content: str, line: int, column: int) -> None:
        self.offsets.append(self._size)
        self.lines.append(line)
        self.columns.append(column)
        self._buf.write(content)
        self._size += len(content)

    def position(self, offset: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.offsets, offset) - 1
        return self.lines[k], self.columns[k] + offset - self.offsets[k]

    def finish(self) -> "_Logical":
        self.text = self._buf.getvalue()
        self._buf = None
        return self


def _diag(code: str, line: int, column: int, message: str, **kw) -> Diagnostic:
    return diagnostic(code, line, column, message, **kw)


def _iter_lines(text: str):
    """The lines of ``text`` without their line ends (LF; a CR before it is
    dropped), one at a time; a leading byte-order mark is ignored."""
    i = 1 if text.startswith("\ufeff") else 0
    n = len(text)
    while i < n:
        j = text.find("\n", i)
        if j < 0:
            j = n
        line = text[i:j]
        yield line[:-1] if line.endswith("\r") else line
        i = j + 1


def _join_lines(lines, diagnostics: list[Diagnostic]) -> list[_Logical]:
    """Drop comments and blank lines and apply ``+`` / ``-`` continuation."""
    entries: list[_Logical] = []
    current: _Logical | None = None
    mode: str | None = None  # '+' or '-' while continuing
    cont_pos: tuple[int, int] | None = None
    for lineno, line in enumerate(lines, start=1):
        body = line.strip(_BLANKS)
        if not body or body.startswith("*"):
            continue
        significant = len(line.rstrip(_BLANKS))
        if significant > MAX_LINE:
            diagnostics.append(
                _diag(
                    "line-too-long", lineno, MAX_LINE + 1,
                    f"line is {significant} characters long; IBM advises at most "
                    f"{MAX_LINE} significant characters per line for portability",
                    found=str(significant), expected=f"<= {MAX_LINE}",
                )
            )
        if current is None:
            current = _Logical(lineno)
            start = 0
        elif mode == "+":
            start = len(line) - len(line.lstrip(_BLANKS))
        else:
            start = 0
        current.last_line = lineno
        content = line[start:]
        trimmed = content.rstrip(_BLANKS)
        if trimmed.endswith(("+", "-")):
            mode = trimmed[-1]
            cont_pos = (lineno, start + len(trimmed))
            content = trimmed[:-1]
        else:
            mode = None
        if content:
            current.add(content, lineno, start + 1)
        if mode is None:
            entries.append(current.finish())
            current = None
    if current is not None:
        assert cont_pos is not None
        diagnostics.append(
            _diag(
                "dangling-continuation", cont_pos[0], cont_pos[1],
                f"the last entry ends with the continuation character '{mode}' "
                "but no line follows; the entry ends here",
                found=mode, expected="a following line",
            )
        )
        entries.append(current.finish())
    return entries


def _quoted_end(text: str, i: int, n: int) -> int:
    """Offset of the quote closing the value opened at ``i`` (``''`` is a
    quote inside it), or -1."""
    j = i + 1
    while True:
        j = text.find("'", j, n)
        if j < 0:
            return -1
        if j + 1 < n and text[j + 1] == "'":
            j += 2
            continue
        return j


def _too_long(raw: str, line: int, column: int, diagnostics: list[Diagnostic]) -> str | None:
    """Report a value of more than :data:`MAX_VALUE_CHARS` characters (not
    counting ``*``) and return its first characters; None when it is shorter."""
    if len(raw) <= MAX_VALUE_CHARS:
        return None
    significant = len(raw) - raw.count("*") - raw.count("''")
    if significant <= MAX_VALUE_CHARS:
        return None
    shown = raw[:48]
    diagnostics.append(
        _diag(
            "value-too-long", line, column,
            f"a value of {significant:,} characters (not counting '*'), starting "
            f"{shown!r}: no MQ field holds more than 48, and the lexer reads at most "
            f"{MAX_VALUE_CHARS}; the value is not read",
            found=f"{significant} characters", expected="at most 48 characters",
        )
    )
    return raw[:MAX_VALUE_CHARS]


def _tokenize(logical: _Logical, diagnostics: list[Diagnostic]) -> list[Token]:
    text = logical.text
    n = len(text)
    tokens: list[Token] = []
    i = _SEP_RE.match(text, 0).end()
    while i < n:
        ch = text[i]
        line, column = logical.position(i)
        if ch == "(":
            tokens.append(Token("LPAREN", ch, line, column, i, i + 1))
            i += 1
        elif ch == ")":
            tokens.append(Token("RPAREN", ch, line, column, i, i + 1))
            i += 1
        elif ch == "'":
            j = _quoted_end(text, i, n)
            raw = text[i + 1:(n if j < 0 else j)]
            short = _too_long(raw, line, column, diagnostics)
            value = (raw if short is None else short).replace("''", "'")
            if j < 0:
                diagnostics.append(
                    _diag(
                        "syntax", line, column,
                        "quoted value is not closed: no matching single quote before "
                        "the end of the entry",
                        found="'" + value[:MAX_LINE], expected="a closing '",
                    )
                )
                tokens.append(Token("QUOTED", value, line, column, i, n, closed=False,
                                    too_long=short is not None))
                i = n
            else:
                tokens.append(Token("QUOTED", value, line, column, i, j + 1,
                                    too_long=short is not None))
                i = j + 1
        else:
            j = _WORD_RE.match(text, i).end()
            raw = text[i:j]
            short = _too_long(raw, line, column, diagnostics)
            tokens.append(Token("WORD", raw if short is None else short, line, column, i, j,
                                too_long=short is not None))
            i = j
        i = _SEP_RE.match(text, i).end()
    return tokens


def _describe(tok: Token) -> str:
    return f"'{tok.text}'" if tok.kind != "QUOTED" else "'" + tok.text.replace("'", "''") + "'"


def _items(tokens: list[Token], diagnostics: list[Diagnostic]) -> list[Item]:
    items: list[Item] = []
    i = 0
    n = len(tokens)
    prev_end: int | None = None  # end offset of the previous item's ')'
    while i < n:
        tok = tokens[i]
        if tok.kind == "WORD":
            if prev_end is not None and tok.start == prev_end:
                diagnostics.append(
                    _diag(
                        "missing-separator", tok.line, tok.column,
                        f"keyword {tok.text.upper()} follows the previous ')' directly; "
                        "IBM requires at least one blank or comma between keywords",
                        found=tok.text, expected="a blank or comma before it",
                    )
                )
            if i + 1 < n and tokens[i + 1].kind == "LPAREN":
                lparen = tokens[i + 1]
                j = i + 2
                parts: list[Token] = []
                while j < n and tokens[j].kind not in ("RPAREN", "LPAREN"):
                    parts.append(tokens[j])
                    j += 1
                if j < n and tokens[j].kind == "LPAREN":
                    nested = tokens[j]
                    diagnostics.append(
                        _diag(
                            "syntax", nested.line, nested.column,
                            f"unexpected '(' inside the value of {tok.text.upper()}",
                            found="(", expected="a value and then ')'",
                        )
                    )
                    while j < n and tokens[j].kind != "RPAREN":
                        j += 1
                    items.append(Item(tok, None, True, well_formed=False))
                    prev_end = None
                    i = j + 1
                    continue
                if j >= n:
                    if parts and not parts[-1].closed:
                        # The unclosed quote is already reported; it ate the ')'.
                        items.append(Item(tok, None, True, well_formed=False))
                        break
                    diagnostics.append(
                        _diag(
                            "syntax", lparen.line, lparen.column,
                            f"the value of {tok.text.upper()} has no closing ')'",
                            found=tok.text + "(" + " ".join(p.text for p in parts),
                            expected="')' after the value",
                        )
                    )
                    items.append(Item(tok, None, True, well_formed=False))
                    prev_end = None
                    i = j
                    continue
                if len(parts) > 1:
                    extra = parts[1]
                    diagnostics.append(
                        _diag(
                            "syntax", extra.line, extra.column,
                            f"the value of {tok.text.upper()} has more than one part "
                            f"({' '.join(_describe(p) for p in parts)}); a value that "
                            "contains blanks or commas must be in single quotes",
                            found=" ".join(p.text for p in parts),
                            expected="one value",
                        )
                    )
                    items.append(Item(tok, None, True, well_formed=False))
                elif parts and parts[0].too_long:  # reported by the lexer
                    items.append(Item(tok, None, True, well_formed=False))
                else:
                    items.append(Item(tok, parts[0] if parts else None, True))
                prev_end = tokens[j].end
                i = j + 1
            else:
                items.append(Item(tok, None, False))
                prev_end = None
                i += 1
        elif tok.kind == "LPAREN":
            diagnostics.append(
                _diag(
                    "syntax", tok.line, tok.column,
                    "'(' without a keyword before it",
                    found="(", expected="KEYWORD(value)",
                )
            )
            j = i + 1
            while j < n and tokens[j].kind != "RPAREN":
                j += 1
            prev_end = None
            i = j + 1
        else:
            what = "')'" if tok.kind == "RPAREN" else f"quoted value {_describe(tok)}"
            diagnostics.append(
                _diag(
                    "syntax", tok.line, tok.column,
                    f"unexpected {what}; expected a keyword",
                    found=tok.text, expected="a keyword",
                )
            )
            prev_end = None
            i += 1
    return items


def read_entries(text: str) -> tuple[list[Entry], list[Diagnostic], bool]:
    """Split a rules table into entries (the lexical layer).

    Parameters
    ----------
    text : str
        The whole rules table.

    Returns
    -------
    entries : list of Entry
        Entries in file order, continuation lines joined, comments dropped.
    diagnostics : list of Diagnostic
        Lexical problems (``syntax``, ``missing-separator``,
        ``line-too-long``, ``dangling-continuation``).
    ends_with_newline : bool
        Whether the last line ends with a line end (IBM: required on
        Windows).
    """
    diagnostics: list[Diagnostic] = []
    ends_with_newline = text.endswith("\n")
    entries: list[Entry] = []
    for logical in _join_lines(_iter_lines(text), diagnostics):
        tokens = _tokenize(logical, diagnostics)
        if not tokens:
            continue  # an entry of only separators, e.g. ',' or a lone '+'
        items = _items(tokens, diagnostics)
        first = tokens[0]
        entries.append(Entry(first.line, first.column, logical.last_line, tuple(items)))
    return entries, diagnostics, ends_with_newline


def parse(text: str, source: str | None = None) -> RulesTable:
    """Parse and validate a rules table.

    Parameters
    ----------
    text : str
        The rules table, as runmqdlq would read it from stdin.
    source : str, optional
        A name for the table (file name) kept on the result.

    Returns
    -------
    RulesTable
        Control data (defaults filled in), every rule entry in table order
        (numbered from 1), and the diagnostics in file order. Never raises
        for problems in the table itself; check ``table.ok``.

    Examples
    --------
    >>> t = parse("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\\n")
    >>> t.ok, t.rules[0].action, t.rules[0].retry, t.control.retryint
    (True, 'RETRY', 5, 60)
    """
    entries, diagnostics, ends_with_newline = read_entries(text)
    # A leading byte-order mark is not content (``_iter_lines`` skips it): a
    # table of only a mark has no last line to lack a line end.
    content = text[1:] if text.startswith("\ufeff") else text
    if content.strip() and not ends_with_newline:
        last = sum(1 for _ in _iter_lines(text))
        diagnostics.append(
            _diag(
                "no-final-newline", last, 1,
                "the last line has no line end; on Windows the last rule must end "
                "with CR/LF or runmqdlq does not see it",
                expected="a line end after the last rule",
            )
        )
    return build_table(entries, diagnostics, source=source)


def _utf16(data: bytes) -> tuple[str, str, str] | None:
    """``(byte order, how it is known, iconv's name for it)`` when ``data`` is
    UTF-16 text, else None: a byte-order mark (FF FE, FE FF; not the UTF-32
    FF FE 00 00), or, without one, over the first 4 KB (an even number of
    bytes), the bytes of one parity at least half NUL and those of the other
    at most a tenth (text mostly in ASCII or Latin-1, whose characters have a
    high byte of 0 in UTF-16)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") and not data.startswith(b"\xff\xfe\x00\x00"):
        order = "little-endian" if data[:2] == b"\xff\xfe" else "big-endian"
        return order, "byte-order mark " + data[:2].hex(" ").upper(), "UTF-16"
    head = data[:4096]
    if len(head) < 4 or len(head) % 2:
        return None
    even, odd = head[0::2], head[1::2]
    for order, high, low, source in (("little-endian", odd, even, "UTF-16LE"),
                                     ("big-endian", even, odd, "UTF-16BE")):
        if 2 * high.count(0) >= len(high) and 10 * low.count(0) <= len(low):
            return order, "no byte-order mark", source
    return None


def parse_file(path: str | os.PathLike) -> RulesTable:
    """Read and parse a rules table file.

    The file is decoded as UTF-8, or as Latin-1 when it is not valid UTF-8
    (rules tables are plain text in the local code page).

    Raises
    ------
    dlqlens.errors.RulesError
        When the file cannot be read, is UTF-16 (which runmqdlq cannot read;
        the error says so and gives the ``iconv`` command that converts it)
        or is not a text file (contains NUL bytes). Problems *in* the table
        never raise; they are diagnostics.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise RulesError(f"cannot read rules table {name}: {exc.strerror or exc}") from exc
    utf16 = _utf16(data)
    if utf16 is not None:
        order, bom, source = utf16
        raise RulesError(
            f"{name} is UTF-16 text ({order}, {bom}), which runmqdlq cannot read (it reads "
            f"its rules table as text in the queue manager's code page: ASCII-based, such as "
            f"UTF-8 or ISO 8859-1); convert it: iconv -f {source} -t UTF-8 {name} > converted.rul"
        )
    if b"\x00" in data:
        offset = data.index(b"\x00")
        raise RulesError(
            f"{name} is not a rules table: NUL byte at offset {offset} (expected text)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse(text, source=name)
