"""What to check or do next: the remedies of :mod:`dlqlens.mq.remedies` filled with real names.

:func:`next_step` takes an entry of the remedies table and the names a
capture holds (queue, queue manager, user, process...) and returns a
:class:`NextStep`: what happened, the usual causes and the commands, each
command with the names put in as its language quotes them (an MQSC or rules
literal in single quotes with quotes doubled, a shell word), where it runs,
and whether every name was known. Nothing is run.

Names
-----
A name is a string, ``""`` (the field is in the capture and blank) or None
(the capture does not hold it). In prose an unknown name reads "unknown"; a
blank queue manager name reads "the local queue manager" (MQ's meaning of a
blank DestQMgrName or ObjectQMgrName). In a command an unknown or blank name
becomes a ``<placeholder>`` and the command is marked incomplete, so that
nothing that looks runnable is wrong.

Display
-------
:meth:`NextStep.to_text` escapes every character a terminal could act on
(:func:`dlqlens.safe.one_line`), :meth:`NextStep.to_html` everything with
:func:`html.escape`: capture content is untrusted.
"""

from __future__ import annotations

import html
import re
import shlex
import string
from dataclasses import dataclass, field

from dlqlens.mq.remedies import REASON_CODES_PAGE, Remedy, mqsc_literal
from dlqlens.safe import one_line

#: How an unknown name reads in prose.
UNKNOWN = "unknown"

#: Prose for a name the capture does not hold, by placeholder.
_UNKNOWN_PROSE = {
    "queue": "an unknown queue", "qmgr": "an unknown queue manager", "user": "an unknown user",
    "process": "an unknown process", "applid": "an unknown program",
    "app_queue": "an unknown application queue", "initq": "an unknown initiation queue",
    "dlq": "the dead-letter queue", "dlq_qmgr": "its queue manager",
    "length": "of unknown length", "expires": "at an unknown time",
}
#: Prose for a name that is present and blank.
_BLANK_PROSE = {
    "qmgr": "the local queue manager (DestQMgrName is blank)",
    "dlq_qmgr": "the local queue manager",
    "user": "a blank user id",
}
#: Placeholders put into commands as they are (symbolic names from fixed tables).
_RAW = frozenset({"reason"})
_SYMBOLIC = re.compile(r"MQ[A-Z0-9_]+")


@dataclass
class Command:
    """One filled command.

    Attributes
    ----------
    purpose : str
        What it shows or does.
    text : str
        The command with the names put in (never run by dlqlens).
    language : str
        ``mqsc`` (runmqsc), ``shell`` or ``rules`` (a runmqdlq rules-table line).
    where : str
        Where to run it, in words (``runmqsc QM1``, ``on the host of QM1``...).
    change : bool
        True for a command that changes something: run it once the cause is understood.
    complete : bool
        False when a name it needs is not in the capture (a ``<placeholder>`` stands for it).
    """

    purpose: str
    text: str
    language: str
    where: str
    change: bool = False
    complete: bool = True

    def to_dict(self) -> dict:
        return {"purpose": self.purpose, "text": self.text, "language": self.language,
                "where": self.where, "change": self.change, "complete": self.complete}


@dataclass
class NextStep:
    """What to check or do next for one reason or situation.

    Attributes
    ----------
    name : str
        The ``MQRC_*`` / ``MQFB_*`` name or situation key of the remedy.
    title : str
        Heading (``MQRC_Q_FULL (2053)``).
    happened : str
        What happened, with the names put in.
    causes : list of str
        The usual causes, most likely first.
    commands : list of Command
        Checks first, then changes.
    page_title, page : str
        IBM's page for the code, and its address.
    """

    name: str
    title: str
    happened: str
    causes: list = field(default_factory=list)
    commands: list = field(default_factory=list)
    page_title: str = ""
    page: str = REASON_CODES_PAGE

    def reference(self) -> str:
        """IBM's page in words: its title and address (the reason-code list when
        the code's own page address is not known to dlqlens)."""
        if not self.page_title:
            return f"IBM: {self.page}"
        if self.page == REASON_CODES_PAGE:
            return f"IBM: \"{self.page_title}\" in the API reason codes, {self.page}"
        return f"IBM: \"{self.page_title}\", {self.page}"

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "happened": self.happened,
                "causes": list(self.causes), "commands": [c.to_dict() for c in self.commands],
                "page_title": self.page_title, "page": self.page}

    def text_lines(self, indent: str = "  ", *, happened: bool = True) -> list[str]:
        """The step as lines of text, names escaped for a terminal; without
        the "what happened" line when ``happened`` is false (a view that
        says it already)."""
        lines = [f"{indent}{one_line(self.title)} ({one_line(self.reference())})"]
        if happened and self.happened:
            lines.append(f"{indent}  {one_line(self.happened[0].upper() + self.happened[1:])}.")
        if self.causes:
            lines.append(f"{indent}  Usual causes:")
            lines += [f"{indent}    {i}. {one_line(c)}" for i, c in enumerate(self.causes, 1)]
        if self.commands:
            lines.append(f"{indent}  Commands (shown, not run; names quoted as the language "
                         "needs; <...> is for you to fill):")
            for c in self.commands:
                kind = "change" if c.change else "check"
                lines.append(f"{indent}    {kind}: {one_line(c.purpose)} ({one_line(c.where)})")
                lines.append(f"{indent}        {one_line(c.text)}"
                             + ("" if c.complete else "    [a name is not in the capture]"))
        return lines

    def to_html(self) -> str:
        esc = html.escape
        causes = "".join(f"<li>{esc(c)}</li>" for c in self.causes)
        commands = "".join(
            f"<li>{'change' if c.change else 'check'}: {esc(c.purpose)} <i>({esc(c.where)})</i>"
            f"<br><code>{esc(c.text)}</code>"
            f"{'' if c.complete else ' <i>(a name is not in the capture)</i>'}</li>"
            for c in self.commands)
        return (f"<div><b>{esc(self.title)}</b> — <i>{esc(self.reference())}</i>"
                + (f"<p>{esc(self.happened[0].upper() + self.happened[1:])}.</p>"
                   if self.happened else "")
                + (f"<p>Usual causes:</p><ol>{causes}</ol>" if causes else "")
                + (f"<p>Commands (shown, not run):</p><ul>{commands}</ul>" if commands else "")
                + "</div>")


def prose_name(key: str, value) -> str:
    """How a name reads in a sentence: itself, "unknown" forms for None,
    "the local queue manager" for a blank queue manager."""
    if value is None:
        return _UNKNOWN_PROSE.get(key, UNKNOWN)
    text = str(value).strip()
    if not text:
        return _BLANK_PROSE.get(key, f"a blank {key}")
    return text


def _command_name(key: str, value, language: str) -> tuple[str, bool]:
    """A name for a command, and whether it was known."""
    text = None if value is None else str(value).strip()
    if key in _RAW:
        if text and _SYMBOLIC.fullmatch(text):
            return text, True
        return f"<{key}>", False
    if not text:
        return f"<{key}>", False
    if language in ("mqsc", "rules"):
        return mqsc_literal(text), True
    return shlex.quote(text), True


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


class _Prose(dict):
    def __missing__(self, key):
        return _UNKNOWN_PROSE.get(key, UNKNOWN)


def fill_prose(template: str, names: dict) -> str:
    """``template`` with every ``{name}`` put in as prose (:func:`prose_name`)."""
    return template.format_map(_Prose({k: prose_name(k, v) for k, v in names.items()}))


def fill_command(template: str, language: str, names: dict) -> tuple[str, bool]:
    """``template`` with every ``{name}`` quoted for ``language``; and whether
    every name was known."""
    values, complete = {}, True
    for key in _fields(template):
        values[key], known = _command_name(key, names.get(key), language)
        complete = complete and known
    return template.format_map(values), complete


def _where(on: str, language: str, names: dict) -> str:
    if on == "dlq":
        qmgr = names.get("dlq_qmgr")
        label = "the dead-letter queue's queue manager"
    elif on == "sender":
        qmgr, label = None, "the queue manager that sent the message"
    else:
        qmgr = names.get("qmgr")
        label = ("the local queue manager (DestQMgrName is blank)"
                 if qmgr is not None and not str(qmgr).strip()
                 else "the destination's queue manager (not in the capture)")
    known = qmgr is not None and str(qmgr).strip()
    if language == "rules":
        return f"a rules-table line for runmqdlq on {str(qmgr).strip() if known else label}"
    if language == "shell":
        return f"on the host of {str(qmgr).strip() if known else label}"
    return f"runmqsc {str(qmgr).strip()}" if known else f"runmqsc on {label}"


def next_step(entry: Remedy, names: dict, *, title: str | None = None,
              page_title: str = "") -> NextStep:
    """Fill one remedy with ``names``.

    Parameters
    ----------
    entry : dlqlens.mq.remedies.Remedy
        From :data:`~dlqlens.mq.remedies.REMEDIES` or :data:`~dlqlens.mq.remedies.SITUATIONS`.
    names : dict
        Placeholder -> value (str, ``""`` for blank, None for unknown); see
        :mod:`dlqlens.mq.remedies` for the placeholders.
    title : str, optional
        Heading; the entry's name by default.
    page_title : str
        The title of IBM's page (:func:`dlqlens.mq.remedies.page_title`).

    Returns
    -------
    NextStep
    """
    commands = []
    for check in entry.checks:
        text, complete = fill_command(check.template, check.language, names)
        commands.append(Command(fill_prose(check.purpose, names), text, check.language,
                                _where(check.on, check.language, names), check.change,
                                complete))
    return NextStep(entry.name, title or entry.name, fill_prose(entry.happened, names),
                    [fill_prose(c, names) for c in entry.causes], commands, page_title,
                    entry.page)


__all__ = ["Command", "NextStep", "UNKNOWN", "fill_command", "fill_prose", "next_step",
           "prose_name"]
