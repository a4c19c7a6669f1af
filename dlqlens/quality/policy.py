"""The audit policy: the thresholds of the hygiene suite, loadable from a TOML file.

A policy file holds top-level keys only (TOML, read with the standard
library's :mod:`tomllib`)::

    # dlqlens audit policy
    max_age_seconds = 86400          # no dead letter older than a day
    max_fall_through = 0             # messages the rules table leaves to the implicit IGNORE
    max_without_dlh = 0              # messages on the DLQ without an MQDLH
    forbidden_findings = ["backout_loop", "trigger_storm", "trigger_failure",
                          "expiry_buildup", "orphaned_reply"]
    min_persistent_share = 0.0       # share of persistent dead letters, 0..1
    max_depth_fraction = 0.8         # DLQ depth / MAXDEPTH, 0..1

Keys left out keep their defaults (:data:`DEFAULTS`); ``docs/quality.md``
gives each key's meaning and unit. An unknown key, a value of the wrong type
or out of range is an error naming the file, the line, the key, what was
expected and what was found (and, for a misspelt key, the nearest known one).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass, field

from dlqlens.errors import UsageError

#: The finding kinds the hygiene suite forbids by default (dlqlens.detect kinds):
#: the failure patterns that leave messages nobody will deal with (DESIGN: backout
#: loops, trigger storms and failures, expired messages building up, replies to
#: deleted temporary queues). ``reason_burst`` is left out: a burst is an incident
#: whose messages the age and fall-through expectations hold to account.
DEFAULT_FORBIDDEN = ("backout_loop", "trigger_storm", "trigger_failure", "expiry_buildup",
                     "orphaned_reply")


#: key -> (type, lowest, highest) for the checks.
_CHECKS = {
    "max_age_seconds": ("number", 0, None),
    "max_fall_through": ("int", 0, None),
    "max_without_dlh": ("int", 0, None),
    "forbidden_findings": ("kinds", None, None),
    "min_persistent_share": ("number", 0, 1),
    "max_depth_fraction": ("number", 0, 1),
}


@dataclass(frozen=True)
class Policy:
    """Thresholds of the hygiene suite.

    Attributes
    ----------
    max_age_seconds : float
        No dead letter may have been on the DLQ longer than this when the
        capture was taken (seconds; MQDLH PutDate/PutTime to the capture time).
        Default 86400 (one day).
    max_fall_through : int
        Messages a rules table may leave to the implicit ACTION(IGNORE) (no
        rule matches, or every matching rule exhausted its RETRY). Default 0.
    max_without_dlh : int
        Messages on the DLQ that do not begin with an MQDLH (the DLQ handler
        never processes them). Default 0.
    forbidden_findings : tuple of str
        Finding kinds (:data:`dlqlens.detect.KINDS`) that fail the audit, one
        expectation each. Default backout_loop, trigger_storm, trigger_failure,
        expiry_buildup, orphaned_reply (:data:`DEFAULT_FORBIDDEN`).
    min_persistent_share : float
        Least share (0..1) of DLQ messages with ``md.Persistence`` =
        MQPER_PERSISTENT. Default 0.0 (reported, never failing).
    max_depth_fraction : float
        Highest DLQ depth as a fraction (0..1) of the DLQ's MAXDEPTH, checked
        when queue definitions are given. Default 0.8.
    source : str or None
        The file the policy was read from (None: the defaults, or built in code).
    """

    max_age_seconds: float = 86400.0
    max_fall_through: int = 0
    max_without_dlh: int = 0
    forbidden_findings: tuple = DEFAULT_FORBIDDEN
    min_persistent_share: float = 0.0
    max_depth_fraction: float = 0.8
    source: str | None = field(default=None, compare=False)

    def __post_init__(self):
        for name, (kind, lo, hi) in _CHECKS.items():
            _check_value(name, getattr(self, name), kind, lo, hi, where=self.source or "policy")
        object.__setattr__(self, "forbidden_findings", tuple(self.forbidden_findings))

    def to_dict(self) -> dict:
        """The thresholds (without ``source``)."""
        return {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in dataclasses.asdict(self).items() if k != "source"}


def _check_value(name, value, kind, lo, hi, *, where):
    from dlqlens.detect.findings import KINDS

    def bad(expected):
        raise UsageError(f"{where}: {name}: expected {expected}, found {value!r}")

    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            bad("an integer")
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            bad("a number")
    elif kind == "kinds":
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            bad(f"a list of finding kinds ({', '.join(KINDS)})")
        unknown = [v for v in value if v not in KINDS]
        if unknown:
            bad(f"finding kinds among {', '.join(KINDS)}")
        return
    if lo is not None and value < lo or hi is not None and value > hi:
        bad(f"a value from {lo} to {hi}" if hi is not None else f"a value of at least {lo}")


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*(\[\s*)?[\"']?{re.escape(key)}[\"']?\s*[=\].]")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return None


#: The defaults, by key.
DEFAULTS = Policy().to_dict()


def load_policy(path) -> Policy:
    """Read a policy file (TOML, top-level keys of :data:`DEFAULTS`).

    Parameters
    ----------
    path : str or path
        The file.

    Returns
    -------
    Policy
        The defaults overridden by the file's keys; ``source`` is the path.

    Raises
    ------
    dlqlens.errors.UsageError
        When the file cannot be read or is not TOML (``file:line:column``
        from the parser), holds a key the policy does not have (``file:line``,
        the nearest known key), a table, or a value of the wrong type or out
        of range (``file:line``, expected and found).
    """
    import tomllib

    where = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise UsageError(f"--policy {where}: {exc.strerror or exc}") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: not a TOML policy file: {exc}") from None
    values = {}
    for key, value in data.items():
        line = _line_of(text, key)
        at = f"{where}:{line}" if line else where
        if key not in DEFAULTS:
            near = difflib.get_close_matches(key, DEFAULTS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise UsageError(f"{at}: unknown key {key!r}: expected one of "
                             f"{', '.join(DEFAULTS)}{hint}")
        kind, lo, hi = _CHECKS[key]
        if isinstance(value, dict):
            raise UsageError(f"{at}: {key}: expected a value, found a table")
        _check_value(key, value, kind, lo, hi, where=at)
        values[key] = tuple(value) if isinstance(value, list) else value
    return Policy(**values, source=where)


__all__ = ["DEFAULTS", "DEFAULT_FORBIDDEN", "Policy", "load_policy"]
