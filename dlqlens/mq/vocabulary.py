"""The MQSC vocabulary: object types, attribute keywords, defaults, allowed values, types.

One table for everything in dlqlens that names MQ object attributes: the MQSC
reader (:mod:`dlqlens.mq.mqsc`) types and checks what it reads with it, and
the simulator (:mod:`dlqlens.sim.qmgr`) takes its queue, process and queue
manager defaults and its checks from it. Attributes are keyed by their MQSC
keyword in lower case (``maxdepth``, ``trigtype``); values are typed: integers
as ``int``, choices as their upper-case keyword (``'FIFO'``), ``TRIGGER`` /
``NOTRIGGER`` as a bool, strings as ``str``, a process's ``APPLTYPE`` as its
``MQAT_*`` number.

Only the attributes dlqlens reads are listed; the reader keeps the others as
written and warns about them. The values, ranges and defaults are IBM's (IBM
MQ, "DEFINE queues" and "ALTER queues", their parameter descriptions;
"DEFINE PROCESS"; "ALTER QMGR"; the queue and queue-manager attribute pages
named in each row's ``source``); where IBM's defaults differ by platform the
table has the Multiplatforms one and says so. ``docs/mqsc.md`` describes the
table and the disagreements it settled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dlqlens.errors import DlqlensError
from dlqlens.mq.constants import MQAT

#: Verbs (and the abbreviations MQSC accepts) -> canonical verb.
VERBS: dict[str, str] = {"DEFINE": "DEFINE", "DEF": "DEFINE", "ALTER": "ALTER", "ALT": "ALTER",
                         "DELETE": "DELETE", "DEL": "DELETE"}

#: Object type keywords (and their synonyms) -> canonical type (IBM: "DEFINE
#: QLOCAL", synonym ``DEF QL``; ``QR``, ``QA``, ``QM``; "DEFINE PROCESS", ``DEF PRO``).
OBJECT_TYPES: dict[str, str] = {
    "QLOCAL": "QLOCAL", "QL": "QLOCAL", "QREMOTE": "QREMOTE", "QR": "QREMOTE",
    "QALIAS": "QALIAS", "QA": "QALIAS", "QMODEL": "QMODEL", "QM": "QMODEL",
    "PROCESS": "PROCESS", "PRO": "PROCESS", "QMGR": "QMGR",
}

#: MQSC APPLTYPE keywords -> MQAT value (IBM, "DEFINE PROCESS": APPLTYPE).
APPLTYPES: dict[str, int] = {
    "CICS": MQAT["MQAT_CICS"], "DEF": MQAT["MQAT_DEFAULT"], "DOS": MQAT["MQAT_DOS"],
    "IMS": MQAT["MQAT_IMS"], "MVS": MQAT["MQAT_MVS"], "NOTESAGENT": MQAT["MQAT_NOTES_AGENT"],
    "NSK": MQAT["MQAT_NSK"], "OS2": MQAT["MQAT_OS2"], "OS400": MQAT["MQAT_OS400"],
    "UNIX": MQAT["MQAT_UNIX"], "WINDOWS": MQAT["MQAT_WINDOWS"],
    "WINDOWSNT": MQAT["MQAT_WINDOWS_NT"], "WLM": MQAT["MQAT_WLM"], "VMS": MQAT["MQAT_VMS"],
}

#: The platforms a value can be restricted to (the simulator's platform names).
ZOS = "zos"

INTEGER, CHOICE, FLAG, STRING, APPLTYPE = "integer", "choice", "flag", "string", "appltype"


class AttributeValueError(DlqlensError, ValueError):
    """A value an attribute does not take (or an attribute an object type does not have).

    Attributes
    ----------
    expected : str
        What the attribute takes (``"an integer 0-9 for TRIGMPRI"``,
        ``"TRIGTYPE(FIRST|EVERY|DEPTH|NONE)"``).
    found : str
        What was given.
    unknown : bool
        True when the type has no such attribute.
    """

    def __init__(self, expected: str, found: str, unknown: bool = False):
        self.expected = expected
        self.found = found
        self.unknown = unknown
        super().__init__(f"expected {expected}, found {found}")


@dataclass(frozen=True)
class Attribute:
    """One attribute of one object type.

    Attributes
    ----------
    keyword : str
        The MQSC keyword (``"TRIGTYPE"``); :attr:`key` is it in lower case.
    kind : str
        ``"integer"``, ``"choice"``, ``"flag"`` (``TRIGGER``/``NOTRIGGER``,
        a bool), ``"string"`` or ``"appltype"`` (an ``MQAT_*`` number, or
        an :data:`APPLTYPES` keyword in MQSC).
    default : object
        The value of the ``SYSTEM.DEFAULT.*`` object of the type
        (Multiplatforms, where IBM's defaults differ by platform).
    values : tuple of str
        Choices: the values allowed.
    low, high : int
        Integers: the range allowed.
    negative : str
        Flags: the keyword that turns it off (``"NOTRIGGER"``).
    synonyms : tuple of str
        Other keywords MQSC accepts for it (``TARGQ`` for ``TARGET``).
    settable : bool
        Whether DEFINE and ALTER of this object type take it; an attribute
        that is not is one the object has all the same (a local queue's
        DEFTYPE: how it was created).
    only_on : mapping of str to str
        Values that exist on one platform only (``{"SHAREDYN": "zos"}``).
    source : str
        The IBM documentation section the row follows.
    """

    keyword: str
    kind: str
    default: object
    values: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None
    negative: str = ""
    synonyms: tuple[str, ...] = ()
    settable: bool = True
    only_on: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    @property
    def key(self) -> str:
        """The lower-case name attributes are kept under (``"trigtype"``)."""
        return self.keyword.lower()

    def expected(self) -> str:
        """What the attribute takes, as error messages say it."""
        if self.kind == INTEGER:
            return f"an integer {self.low}-{self.high} for {self.keyword}"
        if self.kind == CHOICE:
            return f"{self.keyword}({'|'.join(self.values)})"
        if self.kind == FLAG:
            return f"{self.keyword} or {self.negative}"
        if self.kind == APPLTYPE:
            return f"{self.keyword}({'|'.join(sorted(APPLTYPES))}) or an integer"
        return f"a string for {self.keyword}"

    def convert(self, raw):
        """The typed value of MQSC text ``raw`` (unquoted text already upper-cased).

        Strings lose their trailing blanks (``BOQNAME(' ')`` is ``''``); a list
        value (``(A,B)``) is kept as a list of strings.

        Raises
        ------
        AttributeValueError
            When ``raw`` is not a value the attribute takes.
        """
        if self.kind == INTEGER:
            try:
                v = int(raw)
            except (TypeError, ValueError):
                raise AttributeValueError(self.expected(), repr(raw)) from None
            self.check(v)
            return v
        if self.kind == CHOICE:
            v = str(raw).upper()
            self.check(v)
            return v
        if self.kind == APPLTYPE:
            v = str(raw).upper()
            if v in APPLTYPES:
                return APPLTYPES[v]
            try:
                return int(v)
            except ValueError:
                raise AttributeValueError(self.expected(), repr(raw)) from None
        if isinstance(raw, list):
            return raw
        return str(raw).rstrip()

    def check(self, value, platform: str | None = None) -> None:
        """Check a typed value (as :meth:`convert` returns, or a program gives).

        Parameters
        ----------
        value : object
        platform : str, optional
            The platform of the queue manager the value is for (``"zos"``,
            ``"linux"``...); values of :attr:`only_on` another platform are
            refused. None: any platform.

        Raises
        ------
        AttributeValueError
        """
        if self.kind == INTEGER:
            if isinstance(value, bool) or not isinstance(value, int) or \
                    not self.low <= value <= self.high:
                raise AttributeValueError(self.expected(), repr(value))
        elif self.kind == CHOICE:
            if value not in self.values:
                raise AttributeValueError(self.expected(), repr(value))
            need = self.only_on.get(value)
            if need is not None and platform is not None and platform != need:
                raise AttributeValueError(
                    f"{self.keyword}({'|'.join(v for v in self.values if v not in self.only_on)})"
                    f" ({self.keyword}({value}) exists on {_PLATFORM_NAMES.get(need, need)} only)",
                    repr(value))
        elif self.kind == FLAG:
            if not isinstance(value, bool):
                raise AttributeValueError(self.expected(), repr(value))
        elif self.kind == APPLTYPE:
            if isinstance(value, bool) or not isinstance(value, int):
                raise AttributeValueError(self.expected(), repr(value))
        elif not isinstance(value, str):
            raise AttributeValueError(self.expected(), repr(value))


_PLATFORM_NAMES = {ZOS: "z/OS"}

_DEFINE_Q = 'IBM MQ, "DEFINE queues" and "ALTER queues" (parameter descriptions)'


def _int(keyword, default, low, high, source=_DEFINE_Q, **kw) -> Attribute:
    return Attribute(keyword, INTEGER, default, low=low, high=high, source=source, **kw)


def _choice(keyword, default, values, source=_DEFINE_Q, **kw) -> Attribute:
    return Attribute(keyword, CHOICE, default, values=tuple(values), source=source, **kw)


def _str(keyword, source=_DEFINE_Q, **kw) -> Attribute:
    return Attribute(keyword, STRING, "", source=source, **kw)


_ENABLED = ("ENABLED", "DISABLED")
_DESCR = _str("DESCR", synonyms=("DESC",))
_PROCESS = 'IBM MQ, "DEFINE PROCESS"'
_QMGR = 'IBM MQ, "ALTER QMGR"'
_PUT = _choice("PUT", "ENABLED", _ENABLED)
_GET = _choice("GET", "ENABLED", _ENABLED)
_DEFPSIST = _choice("DEFPSIST", "NO", ("NO", "YES"))
_DEFPRTY = _int("DEFPRTY", 0, 0, 9)  # 0 to the queue manager's MAXPRTY, 9

#: Local queue attributes (also the model queue's, but DEFTYPE).
_LOCAL = (
    # Multiplatforms default; z/OS's is 999999999 (DEFINE QMODEL/QLOCAL syntax notes)
    _int("MAXDEPTH", 5000, 0, 999999999),
    _int("MAXMSGL", 4194304, 0, 104857600),
    _PUT, _GET, _DEFPSIST, _DEFPRTY,
    _choice("MSGDLVSQ", "PRIORITY", ("PRIORITY", "FIFO")),
    _int("BOTHRESH", 0, 0, 999999999),
    _str("BOQNAME"),
    Attribute("TRIGGER", FLAG, False, negative="NOTRIGGER", source=_DEFINE_Q),
    _choice("TRIGTYPE", "FIRST", ("FIRST", "EVERY", "DEPTH", "NONE")),
    _int("TRIGDPTH", 1, 1, 999999999),
    _int("TRIGMPRI", 0, 0, 9),
    _str("INITQ"), _str("PROCESS"), _str("TRIGDATA"),
    _choice("USAGE", "NORMAL", ("NORMAL", "XMITQ")),
)

#: How a queue came to be (IBM, "DefinitionType (MQLONG)"): DEFINE makes
#: PREDEFINED queues, MQOPEN of a model queue dynamic ones; not a DEFINE
#: QLOCAL parameter.
_DEFINITION_TYPE = _choice("DEFTYPE", "PREDEFINED",
                           ("PREDEFINED", "PERMDYN", "TEMPDYN", "SHAREDYN"), settable=False,
                           only_on={"SHAREDYN": ZOS}, source='IBM MQ, "DefinitionType (MQLONG)"')

#: A model queue's DEFTYPE: the kind of dynamic queue MQOPEN makes from it
#: (IBM, "DEFINE queues", DEFTYPE: model queues only; SHAREDYN on z/OS only;
#: "Predefined queues cannot be created from model queues").
_MODEL_DEFTYPE = _choice("DEFTYPE", "TEMPDYN", ("PERMDYN", "TEMPDYN", "SHAREDYN"),
                         only_on={"SHAREDYN": ZOS})

_TABLES: dict[str, tuple[Attribute, ...]] = {
    "QLOCAL": _LOCAL + (_DEFINITION_TYPE, _DESCR),
    "QMODEL": _LOCAL + (_MODEL_DEFTYPE, _DESCR),
    "QREMOTE": (_str("RNAME"), _str("RQMNAME"), _str("XMITQ"), _PUT, _DEFPSIST, _DEFPRTY,
                _DESCR),
    "QALIAS": (_str("TARGET", synonyms=("TARGQ",)),
               _choice("TARGTYPE", "QUEUE", ("QUEUE", "TOPIC")),
               _PUT, _GET, _DEFPSIST, _DEFPRTY, _DESCR),
    "PROCESS": (
        # DEF: the platform's default type, MQAT_DEFAULT (6, UNIX, in cmqc.h for Linux)
        Attribute("APPLTYPE", APPLTYPE, MQAT["MQAT_DEFAULT"], source=_PROCESS),
        _str("APPLICID", source=_PROCESS),
        _str("ENVRDATA", source=_PROCESS),
        _str("USERDATA", source=_PROCESS),
        _str("DESCR", synonyms=("DESC",), source=_PROCESS),
    ),
    "QMGR": (
        _int("TRIGINT", 999999999, 0, 999999999, source=_QMGR),
        _str("DEADQ", source=_QMGR),
        # IBM, "MaxMsgLength (MQLONG)" of the queue manager: 32 KB to 100 MB
        _int("MAXMSGL", 4194304, 32768, 104857600, source=_QMGR),
        _str("DESCR", synonyms=("DESC",), source=_QMGR),
    ),
}

#: Every object type's attributes: type -> lower-case name -> :class:`Attribute`.
ATTRIBUTES: dict[str, dict[str, Attribute]] = {
    t: {a.key: a for a in rows} for t, rows in _TABLES.items()}

#: Keyword (synonyms and the negative keywords of flags included) -> attribute, per type.
_KEYWORDS: dict[str, dict[str, Attribute]] = {}
for _t, _rows in ATTRIBUTES.items():
    _KEYWORDS[_t] = {}
    for _a in _rows.values():
        for _k in (_a.keyword,) + _a.synonyms + ((_a.negative,) if _a.negative else ()):
            _KEYWORDS[_t][_k] = _a
del _t, _rows, _a, _k


#: Every keyword IBM MQ 9.4 takes after DEFINE, ALTER or DELETE of each object
#: type, whether dlqlens reads it or not (IBM MQ, "ALTER queues", Table 1, the
#: parameters of each queue type, one set for the four; "DEFINE PROCESS"; "ALTER
#: QMGR" and the attributes "DISPLAY QMGR" shows). A keyword the vocabulary
#: does not have is kept as written when it is one of these (or unlike any of
#: them: an attribute of a later MQ); one close to a keyword of its type and
#: not among them is a misspelling (:func:`misspelling`).
_QUEUE_KEYWORDS = """
    ACCTQ AUTHREC BOQNAME BOTHRESH CAPEXPRY CFSTRUCT CLCHNAME CLUSNL CLUSTER CLWLPRTY CLWLRANK
    CLWLUSEQ CMDSCOPE CUSTOM DEFBIND DEFPRESP DEFPRTY DEFPSIST DEFREADA DEFSOPT DEFTYPE DESCR
    DISTL FORCE GET HARDENBO NOHARDENBO IMGRCOVQ INDXTYPE INITQ LIKE MAXDEPTH MAXFSIZE MAXMSGL
    MONQ MSGDLVSQ NOPURGE NOREPLACE NOSHARE NOTRIGGER NPMCLASS OTELPCTL OTELTRAC PROCESS PROPCTL
    PURGE PUT QDEPTHHI QDEPTHLO QDPHIEV QDPLOEV QDPMAXEV QSGDISP QSVCIEV QSVCINT REPLACE RETINTVL
    RNAME RQMNAME SCOPE SHARE STATQ STGCLASS STREAMQ STRMQOS TARGET TARGQ TARGTYPE TRIGDATA
    TRIGDPTH TRIGGER TRIGMPRI TRIGTYPE USAGE XMITQ"""
MQSC_KEYWORDS: dict[str, frozenset[str]] = {
    **{t: frozenset(_QUEUE_KEYWORDS.split()) for t in ("QLOCAL", "QMODEL", "QREMOTE", "QALIAS")},
    "PROCESS": frozenset("""
        APPLICID APPLTYPE CMDSCOPE DESCR ENVRDATA LIKE NOREPLACE QSGDISP REPLACE USERDATA""".split()),
    "QMGR": frozenset("""
        ACCTCONO ACCTINT ACCTMQI ACCTQ ACTCHL ACTIVREC ACTVCONO ACTVTRC ADOPTCHK ADOPTMCA ADVCAP
        AMQPCAP AUTHEVSC AUTHOREV BRIDGEEV CCSID CERTLABL CERTQSGL CERTVPOL CFCONLOS CHAD CHADEV
        CHADEXIT CHIADAPS CHIDISPS CHISERVP CHLAUTH CHLEV CLWLDATA CLWLEXIT CLWLLEN CLWLMRUC
        CLWLUSEQ CMDEV CMDSCOPE CONFIGEV CONNAUTH CUSTOM DEADQ DEFCLXQ DEFXMITQ DESCR DNSGROUP
        DNSWLM EXPRYINT FORCE GROUPUR IGQ IGQAUT IGQUSER IMGINTVL IMGLOGLN IMGRCOVO IMGRCOVQ
        IMGSCHED INHIBTEV INITKEY IPADDRV LOCALEV LOGGEREV LSTRTMR LU62ARM LU62CHL LUGROUP LUNAME
        MARKINT MAXCHL MAXHANDS MAXMSGL MAXPROPL MAXPRTY MAXUMSGS MONACLS MONCHL MONQ OPORTMAX
        OPORTMIN PARENT PERFMEV PSCLUS PSMODE PSNPMSG PSNPRES PSRTYCNT PSSYNCPT RCVTIME RCVTMIN
        RCVTTYPE REMOTEEV REPOS REPOSNL REVDNS ROUTEREC SCHINIT SCMDSERV SCYCASE SPLCAP SQQMNAME
        SSLCRLNL SSLCRYP SSLEV SSLFIPS SSLKEYR SSLRKEYC SSLTASKS STATACLS STATCHL STATINT STATMQI
        STATQ STRSTPEV SUITEB TCPCHL TCPKEEP TCPNAME TCPSTACK TRAXSTR TRAXTBL TREELIFE TRIGINT
        XRCAP""".split()),
}


def misspelling(objtype: str, word: str) -> list[str]:
    """The keywords ``word`` is a misspelling of, for an ``objtype`` command.

    Returns
    -------
    list of str
        Empty when ``word`` is a keyword of ``objtype`` (the vocabulary's,
        their synonyms and negatives, or IBM's, :data:`MQSC_KEYWORDS`) or like
        none of them; else the closest keywords
        (:func:`dlqlens.errors.suggestions`), the one measure of "close" of
        every "did you mean" dlqlens prints.

    Raises
    ------
    KeyError
        For an object type the vocabulary does not have.
    """
    from dlqlens.errors import suggestions

    word = word.upper()
    known = set(_KEYWORDS[objtype]) | MQSC_KEYWORDS[objtype]
    if word in known:
        return []
    return suggestions(word, sorted(known))


def attributes(objtype: str) -> dict[str, Attribute]:
    """The attributes of ``objtype`` by lower-case name.

    Raises
    ------
    KeyError
        For an object type the vocabulary does not have.
    """
    return ATTRIBUTES[objtype]


def defaults(objtype: str) -> dict:
    """The attribute values of a new ``objtype`` (a fresh dict: the defaults).

    Raises
    ------
    KeyError
        For an object type the vocabulary does not have.
    """
    return {k: a.default for k, a in ATTRIBUTES[objtype].items()}


def keyword(objtype: str, word: str) -> Attribute | None:
    """The attribute an MQSC keyword of ``objtype`` names (``"NOTRIGGER"`` names
    ``TRIGGER``, ``"TARGQ"`` ``TARGET``), or None."""
    return _KEYWORDS[objtype].get(word.upper())


def check(objtype: str, values: Mapping, platform: str | None = None) -> None:
    """Check typed attribute values of an ``objtype`` object.

    Parameters
    ----------
    objtype : str
        ``"QLOCAL"``, ``"QMODEL"``, ``"QREMOTE"``, ``"QALIAS"``, ``"PROCESS"``
        or ``"QMGR"``.
    values : mapping
        Lower-case attribute name -> value.
    platform : str, optional
        See :meth:`Attribute.check`.

    Raises
    ------
    AttributeValueError
        Naming the first attribute the type does not have or whose value it
        does not take.
    """
    table = ATTRIBUTES[objtype]
    for k, v in values.items():
        a = table.get(k)
        if a is None:
            raise AttributeValueError(f"an attribute of {objtype} "
                                      f"({', '.join(x.upper() for x in table)})",
                                      f"unknown attribute {k!r}", unknown=True)
        a.check(v, platform)


__all__ = ["APPLTYPES", "ATTRIBUTES", "Attribute", "AttributeValueError", "MQSC_KEYWORDS",
           "OBJECT_TYPES", "VERBS", "ZOS", "attributes", "check", "defaults", "keyword",
           "misspelling"]
