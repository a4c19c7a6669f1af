"""The world a replay assumes: which puts the DLQ handler makes succeed or fail.

A capture says what was on the dead-letter queue, not what the queues would
do if the handler ran now. Whether an ACTION(RETRY) or ACTION(FWD) put works
is therefore an explicit assumption, a :class:`World`, that the user sets.

Model
-----
Every put the handler makes for a message is judged by the first of these
that applies:

1. ``queues``: the first :class:`QueueRule` whose ``queue`` and ``qmgr``
   generic patterns (``*`` and ``?``, the rules-table matching of
   :func:`~dlqlens.rules.match.match_string` over 48-character names) match
   the target queue and queue manager;
2. ``original_destination``: when the target is the message's original
   destination (the MQDLH ``DestQName`` and ``DestQMgrName``), as for every
   ACTION(RETRY) and for ACTION(FWD) to ``&DESTQ``/``&DESTQM``;
3. ``default``.

Each of them is a :class:`PutOutcome`: ``succeed``, or ``fail`` with a reason
code (a number, an ``MQRC_*`` name, or ``"original"`` = the message's own
``MQDLH.Reason``; ``"original"`` is the default), either on every try or —
with ``fail_first: k`` — on the first ``k`` tries only. Tries are counted per
message and per destination (queue, queue manager), across all the rules that
put to it, in the order the handler makes them.

A target queue manager that is blank (``FWDQM(' ')``, or ``&DESTQM`` /
``&REPLYQM`` resolving to blanks) means the handler's own queue manager; when
``local_qmgr`` is set it is used as that name, otherwise the name stays blank:
a blank queue manager then matches only a ``qmgr`` pattern that matches
blanks (``*``), and counts as the same queue manager as any ``DestQMgrName``
in the original-destination test.

A put to a blank queue name (``FWDQ(&REPLYQ)`` on a message whose ReplyToQ is
blank, or ACTION(RETRY) on an MQDLH with a blank DestQName) always fails with
MQRC_UNKNOWN_OBJECT_NAME (2085), whatever the world says: there is no queue
to open. This is why IBM recommends ``REPLYQ(?*)`` with ``FWDQ(&REPLYQ)``.

Named worlds
------------
``optimistic``
    Every put succeeds (``{"default": "succeed"}``).
``pessimistic``
    Every put to the message's original destination fails again with the
    message's original reason; puts to other queues succeed
    (``{"default": "succeed", "original_destination": "fail"}``).

JSON form (``--world FILE``)
----------------------------
One object; every key optional::

    {
      "name": "payments outage",
      "default": "succeed",
      "original_destination": {"outcome": "fail", "reason": "original"},
      "local_qmgr": "QM1",
      "queues": [
        {"queue": "PAYMENTS.IN", "qmgr": "*", "outcome": "fail",
         "reason": 2053, "fail_first": 3},
        {"queue": "DEADQ.*", "outcome": "fail", "reason": "MQRC_NOT_AUTHORIZED"}
      ]
    }

``default`` and ``original_destination`` are ``"succeed"``, ``"fail"`` or an
object ``{"outcome", "reason", "fail_first"}``; ``original_destination`` may
be ``null`` (no special case, the default). A ``queues`` entry has
``queue`` (default ``"*"``), ``qmgr`` (default ``"*"``), ``outcome``
(required), ``reason`` and ``fail_first``. Unknown keys are errors.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dlqlens.errors import UsageError
from dlqlens.mq import constants
from dlqlens.rules.match import match_string

__all__ = [
    "PutOutcome",
    "QueueRule",
    "World",
    "WORLDS",
    "ORIGINAL",
    "MQRC_UNKNOWN_OBJECT_NAME",
    "NAME_LENGTH",
]

#: ``reason`` value meaning "the message's own MQDLH.Reason".
ORIGINAL = "original"
#: The reason of a put to a blank queue name.
MQRC_UNKNOWN_OBJECT_NAME = constants.MQRC["MQRC_UNKNOWN_OBJECT_NAME"]
#: Length of queue and queue-manager names (MQ_Q_NAME_LENGTH, MQ_Q_MGR_NAME_LENGTH).
NAME_LENGTH = 48

_OUTCOMES = ("succeed", "fail")


@dataclass(frozen=True)
class PutOutcome:
    """What a put to some destination does.

    Attributes
    ----------
    outcome : str
        ``"succeed"`` or ``"fail"``.
    reason : int or str
        For ``fail``: the MQRC reason code, or ``"original"`` (the message's
        MQDLH.Reason). Ignored for ``succeed``.
    fail_first : int or None
        For ``fail``: fail only the first ``fail_first`` tries to this
        destination, succeed afterwards; ``None``: fail every try.
    """

    outcome: str = "succeed"
    reason: int | str = ORIGINAL
    fail_first: int | None = None

    def __post_init__(self):
        if self.outcome not in _OUTCOMES:
            raise UsageError(f"world: outcome must be 'succeed' or 'fail', found {self.outcome!r}")
        if self.fail_first is not None and (
            not isinstance(self.fail_first, int) or isinstance(self.fail_first, bool)
            or self.fail_first < 0
        ):
            raise UsageError(f"world: fail_first must be an integer >= 0, found {self.fail_first!r}")
        if self.fail_first is not None and self.outcome != "fail":
            raise UsageError("world: fail_first applies to outcome 'fail' only")
        if self.reason != ORIGINAL and (not isinstance(self.reason, int) or isinstance(self.reason, bool)):
            raise UsageError(f"world: reason must be an integer, an MQRC_* name or 'original', "
                             f"found {self.reason!r}")

    def first_success(self, before: int, tries: int) -> int | None:
        """Which of ``tries`` further puts to this destination succeeds first.

        Parameters
        ----------
        before : int
            Puts already made to this destination for this message.
        tries : int
            Puts about to be made (a rule's RETRY count).

        Returns
        -------
        int or None
            The 1-based number (within ``tries``) of the first successful
            put, or ``None`` when all of them fail. Closed form, so a
            RETRY(999999999) costs nothing.
        """
        if self.outcome == "succeed":
            return 1 if tries >= 1 else None
        if self.fail_first is None:
            return None
        first = max(self.fail_first - before, 0) + 1
        return first if first <= tries else None

    def failure_reason(self, original_reason: int | None) -> int | None:
        """The reason code a failing put returns."""
        return original_reason if self.reason == ORIGINAL else self.reason  # type: ignore[return-value]

    def result(self, tries: int, original_reason: int | None) -> tuple[bool, int | None]:
        """Outcome of the ``tries``-th put (1-based) to this destination.

        Returns
        -------
        (bool, int or None)
            ``(True, None)`` when the put succeeds, else ``(False, reason)``.
        """
        if self.outcome == "succeed":
            return True, None
        if self.fail_first is not None and tries > self.fail_first:
            return True, None
        return False, self.failure_reason(original_reason)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"outcome": self.outcome}
        if self.outcome == "fail":
            out["reason"] = self.reason
            if self.fail_first is not None:
                out["fail_first"] = self.fail_first
        return out


@dataclass(frozen=True)
class QueueRule:
    """A world rule for puts to the queues matched by generic patterns.

    Attributes
    ----------
    queue, qmgr : str
        Generic patterns (``*``, ``?``) over the target queue and queue
        manager names; ``"*"`` matches every name, blank included.
    put : PutOutcome
    """

    queue: str = "*"
    qmgr: str = "*"
    put: PutOutcome = field(default_factory=PutOutcome)

    def applies(self, queue: str, qmgr: str) -> bool:
        return match_string(self.queue, queue, NAME_LENGTH) and match_string(
            self.qmgr, qmgr, NAME_LENGTH
        )

    def to_dict(self) -> dict:
        return {"queue": self.queue, "qmgr": self.qmgr, **self.put.to_dict()}


SUCCEED = PutOutcome("succeed")
#: Every put to a blank queue name: there is nothing to open.
BLANK_QUEUE = PutOutcome("fail", MQRC_UNKNOWN_OBJECT_NAME)


@dataclass(frozen=True)
class World:
    """The assumed outcome of every put the handler makes (see module docstring).

    Attributes
    ----------
    name : str
        ``"optimistic"``, ``"pessimistic"`` or a user's name.
    default : PutOutcome
        Outcome of puts no other rule covers.
    original_destination : PutOutcome or None
        Outcome of puts to the message's original destination (MQDLH
        DestQName/DestQMgrName), when no ``queues`` rule applies.
    queues : tuple of QueueRule
        Specific destinations, first match wins.
    local_qmgr : str
        Name of the queue manager the handler runs on ("" = unknown); a
        blank target queue manager resolves to it.
    """

    name: str = "custom"
    default: PutOutcome = SUCCEED
    original_destination: PutOutcome | None = None
    queues: tuple = ()
    local_qmgr: str = ""

    @classmethod
    def optimistic(cls) -> World:
        """Every put succeeds."""
        return cls(name="optimistic")

    @classmethod
    def pessimistic(cls) -> World:
        """Puts to the original destination fail with the original reason; others succeed."""
        return cls(name="pessimistic", original_destination=PutOutcome("fail", ORIGINAL))

    def resolve_qmgr(self, qmgr: str) -> str:
        """A target queue manager name, blank replaced by :attr:`local_qmgr`."""
        return qmgr if qmgr else self.local_qmgr

    def is_original_destination(self, queue: str, qmgr: str, dest_q: str | None,
                                dest_qmgr: str | None) -> bool:
        """Whether ``(queue, qmgr)`` is the MQDLH's DestQName/DestQMgrName.

        A blank queue manager on either side is the local one, whose name may
        be unknown: it is taken to be the same.
        """
        if dest_q is None or queue != dest_q:
            return False
        dest_qmgr = self.resolve_qmgr(dest_qmgr or "")
        return qmgr == "" or dest_qmgr == "" or qmgr == dest_qmgr

    def outcome_for(self, queue: str, qmgr: str, dest_q: str | None = None,
                    dest_qmgr: str | None = None) -> PutOutcome:
        """The :class:`PutOutcome` that governs puts to ``(queue, qmgr)``.

        ``qmgr`` is already resolved with :meth:`resolve_qmgr`. A blank queue
        name gives failure with MQRC_UNKNOWN_OBJECT_NAME on every try.
        """
        if queue == "":
            return BLANK_QUEUE
        for rule in self.queues:
            if rule.applies(queue, qmgr):
                return rule.put
        if self.original_destination is not None and self.is_original_destination(
            queue, qmgr, dest_q, dest_qmgr
        ):
            return self.original_destination
        return self.default

    def put(self, queue: str, qmgr: str, tries: int, *, dest_q: str | None = None,
            dest_qmgr: str | None = None, original_reason: int | None = None
            ) -> tuple[bool, int | None]:
        """Judge one put.

        Parameters
        ----------
        queue, qmgr : str
            The target, after substitution, trimmed; ``qmgr`` already
            resolved with :meth:`resolve_qmgr`.
        tries : int
            1-based number of this put among the message's puts to this
            destination.
        dest_q, dest_qmgr : str or None
            The message's MQDLH DestQName and DestQMgrName.
        original_reason : int or None
            The message's MQDLH Reason.

        Returns
        -------
        (bool, int or None)
            ``(True, None)`` on success, ``(False, reason)`` on failure.
        """
        return self.outcome_for(queue, qmgr, dest_q, dest_qmgr).result(tries, original_reason)

    # -- JSON form ---------------------------------------------------------

    def to_dict(self) -> dict:
        """The JSON form (see module docstring); :meth:`from_dict` reads it back."""
        return {
            "name": self.name,
            "default": self.default.to_dict(),
            "original_destination": (
                None if self.original_destination is None else self.original_destination.to_dict()
            ),
            "local_qmgr": self.local_qmgr,
            "queues": [q.to_dict() for q in self.queues],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], name: str = "custom") -> World:
        """Build a world from its JSON form.

        Raises
        ------
        dlqlens.errors.UsageError
            On an unknown key, a bad outcome, reason or fail_first.
        """
        if not isinstance(data, Mapping):
            raise UsageError(f"world: expected a JSON object, found {type(data).__name__}")
        _check_keys(data, {"name", "default", "original_destination", "local_qmgr", "queues"},
                    "world")
        queues = data.get("queues", [])
        if not isinstance(queues, list):
            raise UsageError("world: 'queues' must be a list")
        rules = []
        for i, entry in enumerate(queues, 1):
            if not isinstance(entry, Mapping):
                raise UsageError(f"world: queues[{i}] must be an object")
            _check_keys(entry, {"queue", "qmgr", "outcome", "reason", "fail_first"},
                        f"world: queues[{i}]")
            if "outcome" not in entry:
                raise UsageError(f"world: queues[{i}] has no 'outcome' ('succeed' or 'fail')")
            for key in ("queue", "qmgr"):
                if not isinstance(entry.get(key, "*"), str):
                    raise UsageError(f"world: queues[{i}].{key} must be a string")
            rules.append(QueueRule(
                queue=entry.get("queue", "*"),
                qmgr=entry.get("qmgr", "*"),
                put=_outcome({k: entry[k] for k in ("outcome", "reason", "fail_first") if k in entry},
                             f"queues[{i}]"),
            ))
        original = data.get("original_destination")
        local = data.get("local_qmgr", "")
        if not isinstance(local, str):
            raise UsageError("world: 'local_qmgr' must be a string")
        return cls(
            name=str(data.get("name", name)),
            default=_outcome(data.get("default", "succeed"), "default"),
            original_destination=None if original is None else _outcome(original, "original_destination"),
            queues=tuple(rules),
            local_qmgr=local.rstrip(),
        )

    @classmethod
    def load(cls, spec: str | os.PathLike | World | None) -> World:
        """``"optimistic"``, ``"pessimistic"``, a JSON file name, or a World.

        ``None`` is the optimistic world.

        Raises
        ------
        dlqlens.errors.UsageError
            When the file cannot be read, is not JSON, or is not a valid world.
        """
        if spec is None:
            return cls.optimistic()
        if isinstance(spec, World):
            return spec
        text = os.fspath(spec)
        if text in WORLDS:
            return WORLDS[text]()
        try:
            with open(text, encoding="utf-8") as fh:
                data = json.load(fh)
        except OSError as exc:
            raise UsageError(
                f"world {text!r} is neither 'optimistic', 'pessimistic' nor a readable JSON "
                f"file: {exc.strerror or exc}") from exc
        except json.JSONDecodeError as exc:
            raise UsageError(f"world file {text}: not JSON: {exc}") from exc
        try:
            return cls.from_dict(data, name=os.path.basename(text))
        except UsageError as exc:
            raise UsageError(f"{text}: {exc}") from exc


def _check_keys(data: Mapping, allowed: set, where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"expected {', '.join(sorted(allowed))}")


def _reason(value: Any, where: str) -> int | str:
    if value == ORIGINAL:
        return ORIGINAL
    if isinstance(value, bool):
        raise UsageError(f"world: {where}.reason must be a number, an MQRC_* name or 'original'")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if value.strip().lstrip("-").isdigit():
            return int(value)
        try:
            return constants.lookup(value)
        except KeyError as exc:
            raise UsageError(f"world: {where}.reason: {exc.args[0]}") from None
    raise UsageError(f"world: {where}.reason must be a number, an MQRC_* name or 'original', "
                     f"found {value!r}")


def _outcome(value: Any, where: str) -> PutOutcome:
    if isinstance(value, str):
        value = {"outcome": value}
    if not isinstance(value, Mapping):
        raise UsageError(f"world: {where} must be 'succeed', 'fail' or an object")
    _check_keys(value, {"outcome", "reason", "fail_first"}, f"world: {where}")
    outcome = value.get("outcome")
    if outcome not in _OUTCOMES:
        raise UsageError(f"world: {where}.outcome must be 'succeed' or 'fail', found {outcome!r}")
    try:
        return PutOutcome(
            outcome=outcome,
            reason=_reason(value.get("reason", ORIGINAL), where),
            fail_first=value.get("fail_first"),
        )
    except UsageError as exc:
        raise UsageError(f"{exc} (in {where})") from None


#: The named worlds.
WORLDS = {"optimistic": World.optimistic, "pessimistic": World.pessimistic}
