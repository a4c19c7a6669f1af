"""The lexical units of a rules table: tokens, keyword items and entries.

:func:`dlqlens.rules.parser.read_entries` produces them and
:func:`dlqlens.rules.validate.build_table` reads them; they live here, below
both modules, so that neither imports the other for them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Token", "Item", "Entry"]


@dataclass(frozen=True)
class Token:
    """One lexical token of an entry.

    Attributes
    ----------
    kind : str
        ``"WORD"`` (unquoted text), ``"QUOTED"`` (text in single quotes, with
        the quotes removed and ``''`` reduced to ``'``), ``"LPAREN"`` or
        ``"RPAREN"``.
    text : str
        The token text.
    line, column : int
        Position of its first character in the file (1-based).
    start, end : int
        Offsets in the entry's joined text (after continuation), used to
        tell whether two tokens were separated.
    closed : bool
        False for a quoted value without its closing quote.
    too_long : bool
        True when the value was longer than the lexer reads
        (:data:`dlqlens.rules.parser.MAX_VALUE_CHARS`; ``text`` holds its
        beginning only, and a ``value-too-long`` diagnostic says so).
    """

    kind: str
    text: str
    line: int
    column: int
    start: int
    end: int
    closed: bool = True
    too_long: bool = False


@dataclass(frozen=True)
class Item:
    """A keyword and its parenthesised value, as written.

    Attributes
    ----------
    keyword : Token
        The keyword token (``WORD``), as written (any case).
    value : Token or None
        The value token (``WORD`` or ``QUOTED``); ``None`` when the
        parentheses are empty or missing.
    has_parens : bool
        Whether a parenthesised value followed the keyword.
    well_formed : bool
        False when the value could not be read (a ``syntax`` diagnostic has
        been recorded for it); validation then skips the value.
    """

    keyword: Token
    value: Token | None
    has_parens: bool
    well_formed: bool = True


@dataclass(frozen=True)
class Entry:
    """One entry (control data or rule) after continuation lines are joined.

    Attributes
    ----------
    line, column : int
        Position of its first non-blank character.
    last_line : int
        The last physical line that belongs to it.
    items : tuple of Item
    """

    line: int
    column: int
    last_line: int
    items: tuple
