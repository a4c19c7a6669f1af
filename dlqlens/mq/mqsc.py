"""MQSC object definitions: queues, processes and the queue manager, as administrators keep them.

Reads the text ``dmpmqcfg`` writes and ``runmqsc`` reads (``DEFINE``,
``ALTER`` and ``DELETE`` of QLOCAL, QMODEL, QREMOTE, QALIAS and PROCESS, and
``ALTER QMGR``) into :class:`Definitions`. The syntax rules followed (IBM MQ,
"Rules for using MQSC commands"), what becomes of each command and how
attributes are kept are in ``docs/mqsc.md``; attribute names, defaults,
allowed values and types are the vocabulary of :mod:`dlqlens.mq.vocabulary`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dlqlens.errors import DlqlensError
from dlqlens.mq import vocabulary
from dlqlens.mq.vocabulary import FLAG, OBJECT_TYPES, VERBS, AttributeValueError


class MqscError(DlqlensError):
    """MQSC text that cannot be read.

    Attributes
    ----------
    source : str
        File name (or ``"<string>"``).
    line, column : int
        1-based position of the problem in the source text.
    expected, found : str
        What the parser expected there and what it found.
    hint : str
        A suggestion (``"did you mean TRIGGER?"``), or ``""``.
    """

    def __init__(self, source: str, line: int, column: int, expected: str, found: str,
                 hint: str = ""):
        self.source = source
        self.line = line
        self.column = column
        self.expected = expected
        self.found = found
        self.hint = hint
        super().__init__(f"{source}:{line}:{column}: expected {expected}, found {found}"
                         + (f"; {hint}" if hint else ""))


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------

@dataclass
class QueueDefinition:
    """One queue's definition (QLOCAL, QMODEL, QREMOTE or QALIAS).

    Attributes
    ----------
    name : str
        Queue name as MQ stores it (unquoted names upper-cased).
    type : str
        ``'QLOCAL'``, ``'QMODEL'``, ``'QREMOTE'`` or ``'QALIAS'``.
    attributes : dict
        Lower-case MQSC attribute name -> value, defaults filled in, typed as
        :mod:`dlqlens.mq.vocabulary` says (``attributes["trigger"]`` is a
        bool); attributes the vocabulary does not have, as written.
    source : str
        Where it was defined.
    line : int
        Line of the DEFINE (or first ALTER) that made it.

    Attribute values are also readable as ``qdef.trigtype`` and
    ``qdef["trigtype"]``.
    """

    name: str
    type: str
    attributes: dict = field(default_factory=dict)
    source: str = "<string>"
    line: int = 0

    def __getattr__(self, name):
        attrs = self.__dict__.get("attributes")
        if attrs is not None and name in attrs:
            return attrs[name]
        raise AttributeError(name)

    def __getitem__(self, name):
        return self.attributes[name]

    def get(self, name, default=None):
        """``attributes.get(name, default)``."""
        return self.attributes.get(name, default)

    def known_attributes(self) -> dict:
        """The attributes the vocabulary has for the queue's type (:attr:`attributes`
        without those kept only as written): what a simulated queue
        (:meth:`dlqlens.sim.qmgr.QueueManager.define_qlocal`) takes."""
        known = vocabulary.attributes(self.type)
        return {k: v for k, v in self.attributes.items() if k in known}


@dataclass
class ProcessDefinition:
    """One process definition (DEFINE PROCESS): ``appltype`` (MQAT int), ``applicid``,
    ``envrdata``, ``userdata``, ``descr`` in :attr:`attributes`."""

    name: str
    attributes: dict = field(default_factory=dict)
    source: str = "<string>"
    line: int = 0
    type: str = "PROCESS"

    def __getattr__(self, name):
        attrs = self.__dict__.get("attributes")
        if attrs is not None and name in attrs:
            return attrs[name]
        raise AttributeError(name)

    def __getitem__(self, name):
        return self.attributes[name]

    def get(self, name, default=None):
        return self.attributes.get(name, default)


class Definitions(dict):
    """Queue definitions by name (a ``dict[str, QueueDefinition]``), plus the rest.

    Attributes
    ----------
    processes : dict of str to ProcessDefinition
    qmgr : dict
        Queue manager attributes from ``ALTER QMGR`` (``trigint`` in
        milliseconds, ``deadq``...), defaults filled in.
    warnings : list of str
        ``source:line:column: message`` for everything read but not used:
        unknown attributes, skipped object types, DEFINE of an existing
        object without REPLACE, ALTER or LIKE of an unknown object.
    """

    def __init__(self):
        super().__init__()
        self.processes: dict[str, ProcessDefinition] = {}
        self.qmgr: dict = vocabulary.defaults("QMGR")
        self.warnings: list[str] = []

    @property
    def trigint(self) -> int:
        """The queue manager's TRIGINT in milliseconds (the default, 999999999, unless altered)."""
        return int(self.qmgr.get("trigint", vocabulary.attributes("QMGR")["trigint"].default))


# ---------------------------------------------------------------------------
# lexing
# ---------------------------------------------------------------------------

@dataclass
class _Command:
    text: str
    pos: list  # (line, column) of each character of text


@dataclass
class _Tok:
    kind: str  # WORD, QUOTED, LP, RP, COMMA
    value: str
    line: int
    column: int


def _commands(text: str, source: str) -> list[_Command]:
    """Join continuation lines into commands, dropping comments and blank lines."""
    out: list[_Command] = []
    cur_text: list[str] = []
    cur_pos: list = []
    continuing = False
    strip_lead = False
    last_line = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        last_line = lineno
        if not continuing:
            stripped = line.strip()
            if not stripped or stripped.startswith("*"):
                continue
        start = len(line) - len(line.lstrip()) if continuing and strip_lead else 0
        body = line[start:].rstrip()
        if body.endswith(("+", "-")):
            continuing, strip_lead = True, body.endswith("+")
            body = body[:-1]
        else:
            continuing = False
        for i, ch in enumerate(body):
            cur_text.append(ch)
            cur_pos.append((lineno, start + i + 1))
        if not continuing:
            if "".join(cur_text).strip():
                out.append(_Command("".join(cur_text), cur_pos))
            cur_text, cur_pos = [], []
    if continuing:
        raise MqscError(source, last_line, 1, "a line continuing the command",
                        "end of input after a continuation character")
    return out


def _tokens(cmd: _Command, source: str) -> list[_Tok]:
    toks: list[_Tok] = []
    s = cmd.text
    i = 0
    n = len(s)

    def where(k):
        if k < len(cmd.pos):
            return cmd.pos[k]
        return cmd.pos[-1][0], cmd.pos[-1][1] + 1

    while i < n:
        ch = s[i]
        if ch.isspace():
            i += 1
            continue
        line, col = where(i)
        if ch == "(":
            toks.append(_Tok("LP", ch, line, col))
            i += 1
        elif ch == ")":
            toks.append(_Tok("RP", ch, line, col))
            i += 1
        elif ch == ",":
            toks.append(_Tok("COMMA", ch, line, col))
            i += 1
        elif ch == "'" or ch == '"':
            quote = ch
            j = i + 1
            buf = []
            while True:
                if j >= n:
                    el, ec = where(n)
                    raise MqscError(source, el, ec, f"closing {quote} of the string opened at "
                                    f"line {line} column {col}", "end of command")
                if s[j] == quote:
                    if j + 1 < n and s[j + 1] == quote:
                        buf.append(quote)
                        j += 2
                        continue
                    break
                buf.append(s[j])
                j += 1
            toks.append(_Tok("QUOTED", "".join(buf), line, col))
            i = j + 1
        else:
            j = i
            while j < n and not s[j].isspace() and s[j] not in "(),'\"":
                j += 1
            toks.append(_Tok("WORD", s[i:j], line, col))
            i = j
    return toks


# ---------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------

def _describe(tok: _Tok | None) -> str:
    if tok is None:
        return "end of command"
    if tok.kind == "QUOTED":
        return f"quoted string '{tok.value}'"
    return repr(tok.value)


class _Parser:
    def __init__(self, toks: list[_Tok], source: str, end: tuple[int, int]):
        self.toks = toks
        self.i = 0
        self.source = source
        self.end = end

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self) -> _Tok | None:
        t = self.peek()
        self.i += 1
        return t

    def fail(self, tok: _Tok | None, expected: str, hint: str = ""):
        line, col = (tok.line, tok.column) if tok is not None else self.end
        raise MqscError(self.source, line, col, expected, _describe(tok), hint)

    def value(self) -> tuple[object, _Tok]:
        """After '(': the value up to the matching ')'.

        Returns a string (quoted: as written; unquoted: upper-cased), or a
        list of strings for a list value, and the first token.
        """
        first = self.peek()
        items: list[str] = []
        depth = 0
        while True:
            t = self.next()
            if t is None:
                self.fail(t, "')' closing the value")
            if t.kind == "RP":
                if depth == 0:
                    break
                depth -= 1
                continue
            if t.kind == "LP":
                depth += 1
                continue
            if t.kind == "COMMA":
                continue
            items.append(t.value if t.kind == "QUOTED" else t.value.upper())
        if not items:
            return "", first
        if len(items) == 1:
            return items[0], first
        return items, first


def _name_of(p: _Parser, objtype: str) -> tuple[str, _Tok]:
    t = p.next()
    if t is None:
        p.fail(t, f"'(' and the {objtype} name")
    if t.kind == "LP":
        nt = p.next()
        if nt is None or nt.kind not in ("WORD", "QUOTED"):
            p.fail(nt, f"the {objtype} name")
        close = p.next()
        if close is None or close.kind != "RP":
            p.fail(close, f"')' after the {objtype} name")
        name = nt.value if nt.kind == "QUOTED" else nt.value.upper()
    elif t.kind in ("WORD", "QUOTED") and objtype != "QMGR":
        name = t.value if t.kind == "QUOTED" else t.value.upper()
        nt = t
    else:
        p.fail(t, f"'(' and the {objtype} name")
    name = name.rstrip()
    if not name:
        p.fail(nt, f"a non-blank {objtype} name")
    if len(name) > 48:
        p.fail(nt, "a name of at most 48 characters")
    return name, nt


def _convert(attr: vocabulary.Attribute, raw, tok: _Tok, p: _Parser):
    """Type a known attribute's value; raises MqscError on a bad one."""
    try:
        return attr.convert(raw)
    except AttributeValueError as exc:
        p.fail(tok, exc.expected)


def _parse_command(cmd: _Command, source: str, defs: Definitions) -> None:
    toks = _tokens(cmd, source)
    end = (cmd.pos[-1][0], cmd.pos[-1][1] + 1) if cmd.pos else (0, 0)
    p = _Parser(toks, source, end)
    vt = p.next()
    if vt is None:
        return
    verb = VERBS.get(vt.value.upper()) if vt.kind == "WORD" else None

    def warn(tok, msg):
        defs.warnings.append(f"{source}:{tok.line}:{tok.column}: {msg}")

    if verb is None:
        _skip_syntax(p)
        warn(vt, f"command {vt.value.upper()} skipped (only DEFINE, ALTER, DELETE are read)")
        return
    ot = p.next()
    if ot is None or ot.kind != "WORD":
        p.fail(ot, f"an object type after {verb}")
    objtype = OBJECT_TYPES.get(ot.value.upper())
    if objtype is None:
        # another object type (CHANNEL, LISTENER, TOPIC, AUTHINFO, ...): syntax-check and skip
        if p.peek() is not None and p.peek().kind == "LP":
            _name_of(p, ot.value.upper())
        _skip_syntax(p)
        return
    if objtype == "QMGR":
        name, ntok = "", ot
        if verb != "ALTER":
            p.fail(ot, "ALTER QMGR (the queue manager is neither defined nor deleted in MQSC)")
    else:
        name, ntok = _name_of(p, objtype)

    # keyword list
    given: dict = {}
    unknown: dict = {}
    replace = False
    like = None
    while True:
        t = p.next()
        if t is None:
            break
        if t.kind != "WORD":
            p.fail(t, "an attribute keyword")
        kw = t.value.upper()
        has_value = p.peek() is not None and p.peek().kind == "LP"
        if has_value:
            p.next()
            raw, vtok = p.value()
            vtok = vtok or t
        else:
            raw, vtok = None, t
        if kw in ("REPLACE", "NOREPLACE", "PURGE", "NOPURGE", "FORCE") and not has_value:
            replace = replace or kw == "REPLACE"
            continue
        if kw == "LIKE":
            if not has_value:
                p.fail(p.peek(), "'(' and a value after LIKE")
            like = (str(raw).rstrip(), vtok)
            continue
        attr = vocabulary.keyword(objtype, kw)
        if attr is None and (close := vocabulary.misspelling(objtype, kw)):
            # runmqsc refuses a keyword it does not know (AMQ8405); one this close to a
            # keyword of the type is a typo, and reading on would lose what it was to set
            p.fail(t, f"an attribute keyword of {verb} {objtype}",
                   f"did you mean {' or '.join(close)}?")
        if attr is None:
            unknown[kw.lower()] = raw if has_value else True
            warn(t, f"{objtype}({name}): attribute {kw} kept but not used")
        elif not attr.settable:
            warn(t, f"{objtype}({name}): {kw} is not a parameter of {verb} {objtype}; ignored")
        elif attr.kind == FLAG:
            if has_value:
                p.fail(vtok, f"{attr.keyword} or {attr.negative} without a value")
            given[attr.key] = kw == attr.keyword
        elif has_value:
            given[attr.key] = _convert(attr, raw, vtok, p)
        else:
            p.fail(p.peek(), f"'(' and a value after {kw}")

    if objtype == "QMGR":
        defs.qmgr.update(given)
        defs.qmgr.update(unknown)
        return

    table = defs.processes if objtype == "PROCESS" else defs
    existing = table.get(name)
    if verb == "DELETE":
        if existing is None:
            warn(ntok, f"DELETE {objtype}({name}): no such object defined earlier")
        else:
            del table[name]
        return
    if verb == "ALTER":
        if existing is None:
            warn(ntok, f"ALTER {objtype}({name}): no such object defined earlier; "
                       "taken as a definition with defaults")
            existing = _new(objtype, name, vocabulary.defaults(objtype), source, ntok.line)
            table[name] = existing
        elif existing.type != objtype:
            p.fail(ntok, f"{existing.type} (the type {name} was defined with)",)
        existing.attributes.update(given)
        existing.attributes.update(unknown)
        return
    # DEFINE
    if existing is not None and not replace:
        warn(ntok, f"DEFINE {objtype}({name}): already defined and NOREPLACE; definition ignored")
        return
    if existing is not None and existing.type != objtype:
        p.fail(ntok, f"a {existing.type} definition (REPLACE cannot change the type of {name})")
    base = vocabulary.defaults(objtype)
    if like is not None:
        model = table.get(like[0])
        if model is None or model.type != objtype:
            warn(like[1], f"LIKE({like[0]}): no {objtype} of that name defined earlier; "
                          "defaults used")
        else:
            base.update(model.attributes)
            base["descr"] = model.attributes.get("descr", "")
    base.update(given)
    base.update(unknown)
    table[name] = _new(objtype, name, base, source, ntok.line)


def _new(objtype, name, attrs, source, line):
    if objtype == "PROCESS":
        return ProcessDefinition(name, attrs, source, line)
    return QueueDefinition(name, objtype, attrs, source, line)


def _skip_syntax(p: _Parser) -> None:
    """Check the rest of a command for balanced parentheses."""
    depth = 0
    while True:
        t = p.next()
        if t is None:
            break
        if t.kind == "LP":
            depth += 1
        elif t.kind == "RP":
            depth -= 1
            if depth < 0:
                p.fail(t, "a keyword (unbalanced ')')")
    if depth > 0:
        p.fail(None, "')' closing the value")


def parse_attributes(text: str, objtype: str = "QLOCAL", source: str = "<string>",
                     line: int = 1, column: int = 1) -> dict:
    """The attributes given in ``text`` (MQSC keyword syntax), typed, without defaults.

    ``parse_attributes("TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(5)")`` is
    ``{'trigger': True, 'trigtype': 'DEPTH', 'trigdpth': 5}``: what an
    ``ALTER QLOCAL(...) TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(5)`` changes.
    Positions in errors are ``line`` and ``column`` plus the offset in ``text``.

    Raises
    ------
    MqscError
        As :func:`parse_definitions`.
    """
    defs = Definitions()
    probe = _new(objtype, "_", {}, source, line)
    (defs.processes if objtype == "PROCESS" else defs)["_"] = probe
    prefix = f"ALTER {objtype}(_) "
    pos = [(line, column)] * len(prefix) + [(line, column + i) for i in range(len(text))]
    _parse_command(_Command(prefix + text, pos), source, defs)
    return dict(probe.attributes)


# ---------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------

def parse_definitions(text: str, source: str = "<string>") -> Definitions:
    """Parse MQSC text into queue, process and queue-manager definitions.

    Parameters
    ----------
    text : str
        MQSC commands (``dmpmqcfg`` output, a runmqsc script).
    source : str
        Name used in errors and warnings.

    Returns
    -------
    Definitions
        A ``dict`` of :class:`QueueDefinition` by queue name, with
        ``.processes``, ``.qmgr`` and ``.warnings``.

    Raises
    ------
    MqscError
        On a syntax error (unterminated string, unbalanced parenthesis,
        missing name, continuation at the end of the text) or a bad value of
        a known attribute (``TRIGTYPE(SOMETIMES)``, ``MAXDEPTH(lots)``),
        naming source, line, column, what was expected and what was found.
    """
    defs = Definitions()
    for cmd in _commands(text, source):
        _parse_command(cmd, source, defs)
    return defs


def parse_mqsc(text: str, source: str = "<string>") -> Definitions:
    """Queue definitions by name from MQSC text (see :func:`parse_definitions`).

    Returns
    -------
    Definitions
        ``dict[str, QueueDefinition]``; process definitions are in
        ``.processes`` and the queue manager's TRIGINT in ``.trigint``.
    """
    return parse_definitions(text, source)


def read_queue_defs(path: str | os.PathLike) -> Definitions:
    """Read an MQSC file (``dmpmqcfg -m QM -a > qm.mqsc``) into queue definitions.

    The file is read as UTF-8 (undecodable bytes replaced); errors name the file.

    Raises
    ------
    MqscError
        On a syntax error in the file.
    dlqlens.errors.UsageError
        When the file cannot be read.
    """
    from dlqlens.errors import UsageError

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read queue definitions {os.fspath(path)}: {exc.strerror}") \
            from None
    return parse_definitions(text, os.fspath(path))


__all__ = ["Definitions", "MqscError", "ProcessDefinition", "QueueDefinition",
           "parse_attributes", "parse_definitions", "parse_mqsc", "read_queue_defs"]
