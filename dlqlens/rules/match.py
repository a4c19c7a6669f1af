"""Pattern matching of runmqdlq rules against message fields.

Implements the string matching of IBM's DLQ handler (the ``?`` and ``*``
wildcards of IBM MQ "DLQ rules table conventions", with the exact algorithm
of the DLQ handler sample shipped with IBM MQ, ``amqsdlq``: ``odqMatchString``
in ``amqodqna.c``) and its integer matching (equality; ``*`` for any value),
without backtracking, plus a decision procedure for *pattern containment*
("does every field value matched by pattern B also match pattern A?") that
the linter uses to find shadowed rules.

Semantics (IBM MQ documentation, "DLQ rules table conventions"; sample
``odqMatchString``), for a pattern ``p`` and a fixed-length, blank-padded
field ``v`` of length ``L``:

* an ordinary character must equal the field character exactly
  (case-sensitive; no code-page folding);
* ``?`` matches any one character, including an embedded blank, provided a
  non-blank character exists at or after that position ("any single
  character except a trailing blank");
* ``*`` matches zero or more adjacent characters;
* when the pattern is exhausted the rest of the field must be blanks
  (``X'20'``); a NUL is *not* a blank, so ``DESTQM(QM1)`` does not match
  ``QM1`` padded with NULs while ``DESTQM(QM1*)`` does;
* when the field is exhausted the rest of the pattern must be ``*``;
* trailing blanks of the pattern are not significant ("Trailing blanks in
  parameter values ... are not significant").

Equivalently, with ``nb`` the length of ``v`` without its trailing blanks:
``p`` matches ``v`` when some run of the glob automaton of ``p`` reaches the
end of ``p`` at a position ``k`` with ``nb <= k <= L``, ``?`` never consuming a
position ``>= nb``. :func:`match_string` simulates that automaton with one
integer bit per pattern position (bit-parallel Shift-And), so it runs in
``O(L)`` word operations for any pattern, including ``*?*?*?...`` shapes on
which the sample's recursion (and a backtracking regular expression) is
exponential.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "BLANK",
    "CompiledPattern",
    "compile_pattern",
    "match_string",
    "match_integer",
    "matches_blank_field",
    "pattern_covers",
    "pattern_keys",
    "is_universal",
    "COVER_BUDGET",
    "Work",
]

#: The only character MQ treats as padding in character fields (X'20').
BLANK = " "

_STAR = "*"
_QUESTION = "?"


@dataclass(frozen=True)
class CompiledPattern:
    """A string pattern prepared for bit-parallel matching.

    Attributes
    ----------
    text : str
        The pattern with trailing blanks removed and runs of ``*`` collapsed
        to one ``*`` (both changes leave the matched set unchanged).
    literal_masks : dict[str, int]
        For each ordinary character, the bits of the pattern positions that
        hold it.
    any_mask : int
        Bits of the ``?`` positions.
    star_mask : int
        Bits of the ``*`` positions.
    end_bit : int
        The bit of the accepting position ``len(text)``.
    initial : int
        The start state (position 0 and what ``*`` reaches from it).
    """

    text: str
    literal_masks: dict
    any_mask: int
    star_mask: int
    end_bit: int
    initial: int

    def closure(self, state: int) -> int:
        """Add the positions reachable by letting a ``*`` match nothing."""
        # Runs of '*' are collapsed, so one shift reaches every such position.
        return state | ((state & self.star_mask) << 1)

    def step(self, state: int, char: str, before_trailing_blanks: bool) -> int:
        """Consume one field character.

        Parameters
        ----------
        state : int
            Current set of pattern positions.
        char : str
            The field character.
        before_trailing_blanks : bool
            True when a non-blank field character exists at or after this
            position (only then may ``?`` consume it).
        """
        advancing = self.literal_masks.get(char, 0)
        if before_trailing_blanks:
            advancing |= self.any_mask
        nxt = ((state & advancing) << 1) | (state & self.star_mask)
        return self.closure(nxt)


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Prepare ``pattern`` for :func:`match_string` (cached).

    Trailing blanks are dropped (IBM: trailing blanks in parameter values are
    not significant) and consecutive ``*`` collapsed.
    """
    text = pattern.rstrip(BLANK)
    collapsed: list[str] = []
    for ch in text:
        if ch == _STAR and collapsed and collapsed[-1] == _STAR:
            continue
        collapsed.append(ch)
    text = "".join(collapsed)
    literal: dict[str, int] = {}
    any_mask = 0
    star_mask = 0
    for i, ch in enumerate(text):
        bit = 1 << i
        if ch == _STAR:
            star_mask |= bit
        elif ch == _QUESTION:
            any_mask |= bit
        else:
            literal[ch] = literal.get(ch, 0) | bit
    end_bit = 1 << len(text)
    initial = 1 | ((1 & star_mask) << 1)
    return CompiledPattern(text, literal, any_mask, star_mask, end_bit, initial)


def _as_text(value: str | bytes) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        # Byte-for-byte comparison, as the sample does on converted fields.
        return bytes(value).decode("latin-1")
    return value


def match_string(pattern: str, value: str | bytes, length: int | None = None) -> bool:
    """Match a runmqdlq string pattern against a character field.

    Follows ``odqMatchString`` of IBM's sample DLQ handler (``amqsdlq``)
    exactly, in linear time.

    Parameters
    ----------
    pattern : str
        The pattern as parsed (quotes removed, ``''`` already reduced to
        ``'``), e.g. ``"APP.*"``, ``"?*"``, ``" "``.
    value : str or bytes
        The field value. ``bytes`` are compared byte for byte (decoded as
        Latin-1). A value shorter than ``length`` is blank-padded to it, as
        MQ pads character fields; a value longer than ``length`` is used
        whole.
    length : int, optional
        The MQ field length (48 for DestQName, 8 for Format, ...). Default:
        ``len(value)``.

    Returns
    -------
    bool
        True when the field matches.

    Examples
    --------
    >>> match_string("APP.*", "APP.IN", 48)
    True
    >>> match_string("A?", "A", 8)
    False
    >>> match_string("QM1", "QM1" + "\\0" * 45, 48)
    False
    """
    text = _as_text(value)
    if length is not None and len(text) < length:
        text = text + BLANK * (length - len(text))
    compiled = compile_pattern(pattern)
    significant = len(text.rstrip(BLANK))
    end = compiled.end_bit
    state = compiled.initial
    if significant == 0 and state & end:
        return True
    for j, ch in enumerate(text):
        state = compiled.step(state, ch, j < significant)
        if not state:
            return False
        if j + 1 >= significant and state & end:
            return True
    return False


def match_integer(pattern: int | None, value: int) -> bool:
    """Match an integer pattern: ``None`` (``*``) matches anything,
    otherwise the MQLONG field must equal the value exactly.

    Parameters
    ----------
    pattern : int or None
        The value after symbolic-name resolution, ``None`` for ``*``.
    value : int
        The field value (e.g. ``dlh.Reason``).
    """
    return pattern is None or int(value) == pattern


def matches_blank_field(pattern: str, length: int) -> bool:
    """True when ``pattern`` matches a field that is all blanks.

    IBM recommends ``REPLYQ(?*)`` with ``FWDQ(&REPLYQ)`` precisely because
    ``?*`` does not match a blank ReplyToQ.
    """
    return match_string(pattern, BLANK * length, length)


def is_universal(pattern: str, length: int) -> bool:
    """True when ``pattern`` matches every possible field of ``length``."""
    return pattern_covers(pattern, _STAR, length) is True


#: Default work budget of :func:`pattern_covers`: product-automaton steps
#: (one step = one product state advanced over one symbolic character). Real
#: pairs of patterns need tens to a few thousand; a pair whose exact answer
#: needs more (``*`` followed by many ``?`` in both patterns, whose subset
#: states multiply) is answered ``None`` ("not decided") instead.
COVER_BUDGET = 50_000


class Work:
    """An operation counter shared by the decision procedures.

    Attributes
    ----------
    steps : int
        Product-automaton steps taken by :func:`pattern_covers`.
    pairs : int
        Pattern pairs given to :func:`pattern_covers`.
    searched : int
        Pairs that needed the automaton search (not decided by a fast path).
    undecided : int
        Pairs abandoned because they hit the budget.
    rule_pairs : int
        Pairs of rules compared by the linter's shadowing check.
    index_visits : int
        Index entries the linter's shadowing check visited to find them.
    """

    __slots__ = ("steps", "pairs", "searched", "undecided", "rule_pairs", "index_visits")

    def __init__(self) -> None:
        self.steps = 0
        self.pairs = 0
        self.searched = 0
        self.undecided = 0
        self.rule_pairs = 0
        self.index_visits = 0

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


def _wildcard_free_count(text: str) -> int:
    return len(text) - text.count(_STAR)


def _normal_text(pattern: str, length: int) -> str | None:
    """The pattern's collapsed text, with its ``*`` removed when its other
    characters fill the field (each ``*`` can then only match nothing); None
    when it matches no field at all (more non-``*`` characters than the field)."""
    text = compile_pattern(pattern).text
    fixed = _wildcard_free_count(text)
    if fixed > length:
        return None
    if fixed == length:
        text = text.replace(_STAR, "").rstrip(BLANK)
    return text


def _literal_prefix(text: str) -> str:
    for i, ch in enumerate(text):
        if ch in "*?":
            return text[:i]
    return text


def _literal_suffix(text: str) -> str:
    for i in range(len(text) - 1, -1, -1):
        if text[i] in "*?":
            return text[i + 1:]
    return text


def pattern_keys(pattern: str, length: int) -> tuple[str, str, str, str] | None:
    """Literal keys of a pattern that bound which patterns can contain which.

    Returns ``(head, tail, prefix, suffix)``, or None when the pattern matches
    no field of ``length``:

    * ``prefix`` / ``suffix``: the pattern's literal characters before its
      first wildcard / after its last one (the whole text when it has none).
      Every field the pattern matches begins with ``prefix``, and, with its
      trailing blanks removed, ends with ``suffix``.
    * ``head`` / ``tail``: what *every* field the pattern matches shares, and
      nothing more: the pattern's literal prefix / suffix, except for a
      pattern without wildcards (one field: ``head`` is it, blank-padded,
      ``tail`` it without the padding).

    So ``inner`` ⊆ ``outer`` implies that ``outer``'s ``prefix`` is a prefix
    of ``inner``'s ``head`` and ``outer``'s ``suffix`` a suffix of
    ``inner``'s ``tail`` (after a wildcard the fields of ``inner`` differ:
    a ``?`` takes any character, a ``*`` with room to spare one more or one
    fewer; a ``*`` without room is removed first). :func:`pattern_covers`
    uses this as a fast refusal and the linter as an index.
    """
    text = _normal_text(pattern, length)
    if text is None:
        return None
    prefix, suffix = _literal_prefix(text), _literal_suffix(text)
    if _STAR not in text and _QUESTION not in text:
        return text.ljust(length, BLANK), text, prefix, suffix
    return prefix, suffix, prefix, suffix


def pattern_covers(
    outer: str, inner: str, length: int, *, max_states: int = 200_000,
    budget: int = COVER_BUDGET, work: Work | None = None,
) -> bool | None:
    """Decide whether every field matched by ``inner`` is matched by ``outer``.

    Exact for the semantics of :func:`match_string` over all fields of
    exactly ``length`` characters (any characters, NUL included). Fast paths
    first: ``outer`` ``*``; ``inner`` without wildcards (one field, matched
    by ``outer`` or not); the literal keys of :func:`pattern_keys` (a
    literal prefix or suffix of ``outer`` that some field of ``inner`` does
    not have). Otherwise both patterns are run as automata over a symbolic
    field, split at the point where the trailing blanks begin (the only
    context ``?`` depends on), and the product is explored breadth first
    until a field accepted by ``inner`` and rejected by ``outer`` is found.

    Parameters
    ----------
    outer, inner : str
        Patterns as parsed.
    length : int
        The MQ field length.
    max_states : int
        Give up (return ``None``) when one layer of the search holds more
        product states than this.
    budget : int
        Give up (return ``None``) before the search takes more than this
        many steps (:data:`COVER_BUDGET`); so one call costs
        ``O(budget + len(outer) + len(inner))`` whatever the patterns.
    work : Work, optional
        Counter the steps are added to.

    Returns
    -------
    bool or None
        True when ``inner`` ⊆ ``outer``, False when some field matches
        ``inner`` only, None when the answer was not decided within the
        budget (the exact answer may need exponentially many states).
    """
    if work is not None:
        work.pairs += 1
    inner_text = _normal_text(inner, length)
    if inner_text is None:
        return True  # inner matches no field at all
    a = compile_pattern(outer)
    if a.text == _STAR:
        return True
    if _STAR not in inner_text and _QUESTION not in inner_text:
        # no wildcard: inner matches one field, which outer matches or not
        return match_string(outer, inner_text, length)
    head, tail, _prefix, _suffix = pattern_keys(inner, length)  # type: ignore[misc]
    outer_keys = pattern_keys(outer, length)
    if outer_keys is None:
        return False  # outer matches nothing, inner something
    prefix, suffix = outer_keys[2], outer_keys[3]
    if not head.startswith(prefix) or not tail.endswith(suffix):
        return False
    b = compile_pattern(inner)
    chars = set(a.literal_masks) | set(b.literal_masks)
    chars.discard(BLANK)
    other = "\x00"
    while other in chars:  # a non-blank character neither pattern names
        other = chr(ord(other) + 1)
    # Cheap refutation: fields of inner with its wildcards filled by that
    # character (each '*' empty, or one character).
    for star in ("", other):
        witness = inner_text.replace(_QUESTION, other).replace(_STAR, star)
        if len(witness) <= length and match_string(inner_text, witness, length) \
                and not match_string(outer, witness, length):
            return False
    if work is not None:
        work.searched += 1
    alphabet = sorted(chars) + [other]
    fan_out = len(alphabet) + 1
    steps = 0

    def step_tail(p: CompiledPattern, state: int) -> int:
        # Inside the trailing blanks: only literal blanks and '*' consume,
        # and a run that has reached the end of the pattern stays accepted.
        nxt = ((state & p.literal_masks.get(BLANK, 0)) << 1) | (
            state & (p.star_mask | p.end_bit)
        )
        return p.closure(nxt)

    def give_up() -> None:
        if work is not None:
            work.steps += steps
            work.undecided += 1

    # A state is (in_tail, previous_char_nonblank, outer_state, inner_state).
    layer = {(False, True, a.initial, b.initial)}
    for j in range(length + 1):
        expanded = set(layer)
        for in_tail, prev_nonblank, sa, sb in layer:
            if not in_tail and prev_nonblank:
                # The trailing blanks start here (j == significant length).
                expanded.add((True, True, sa, sb))
        if j == length:
            steps += len(expanded)
            if work is not None:
                work.steps += steps
            for in_tail, _prev, sa, sb in expanded:
                if in_tail and sb & b.end_bit and not sa & a.end_bit:
                    return False
            return True
        cost = len(expanded) * fan_out
        if steps + cost > budget:
            give_up()
            return None
        steps += cost
        nxt: set = set()
        for in_tail, _prev, sa, sb in expanded:
            if in_tail:
                sb2 = step_tail(b, sb)
                if sb2:
                    nxt.add((True, True, step_tail(a, sa), sb2))
                continue
            for ch in alphabet:
                sb2 = b.step(sb, ch, True)
                if sb2:
                    nxt.add((False, True, a.step(sa, ch, True), sb2))
            # An embedded blank (a non-blank follows later, so '?' may take it).
            sb2 = b.step(sb, BLANK, True)
            if sb2:
                nxt.add((False, False, a.step(sa, BLANK, True), sb2))
        if len(nxt) > max_states:
            give_up()
            return None
        layer = nxt
    return True  # pragma: no cover - the loop returns at j == length
