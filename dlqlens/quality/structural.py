"""The structural suite: does every decoded structure look like the MQ structure it claims to be?

Generated from the field tables of :mod:`dlqlens.mq.structs` (never a hand
list): for every structure the capture DataFrame holds as a column
(:data:`STRUCT_COLUMNS`), each of its fields that MQ constrains gets an
expectation, by field name:

``StrucId``
    the structure's identifier (IBM, each structure's "StrucId" field).
``Version``
    one of the versions ``mq.constants`` declares for it (``MQMD_VERSION_1``,
    ``MQMD_VERSION_2``...).
``StrucLength`` / header length
    a header with a ``StrucLength`` is at least its fixed part long; one
    without is, in ``header_chain``, exactly its table's length (MQDLH 172
    bytes, MQTM 684).
``Encoding``
    a valid MQENC_* combination: an integer, a decimal and a floating-point
    part from the MQENC table, no reserved bit (IBM, "MQENC_* (Encoding)").
``CodedCharSetId``
    a CCSID, 1 to 65535; a header after the MQMD may also say
    MQCCSI_INHERIT (IBM, "MQCCSI_* (Coded character set identifiers)").
``NameValueCCSID``
    1200, 1208, 13488 or 17584 (IBM, MQRFH2 "NameValueCCSID").
``PutDate``, ``PutTime``
    ``YYYYMMDD`` and ``HHMMSSTH`` with a real month, day, hour, minute and
    second (IBM, MQMD "PutDate", "PutTime").
``dlh.Reason``
    a named MQRC_* or MQFB_* code of ``mq.constants`` (IBM, MQDLH "Reason").

and every row has ``decode_status`` ``ok`` (:mod:`dlqlens.decode.issues`).
Values the capture does not hold (null: no MQTM in a message) are not
checked.
"""

from __future__ import annotations

from itertools import product

from dlqlens.mq import constants as C
from dlqlens.mq import structs as S
from dlqlens.quality.checks import Check

#: Capture DataFrame column -> the structure it holds (dlqlens.decode.schema).
STRUCT_COLUMNS = {"md": S.MQMD, "dlh": S.MQDLH, "xqh": S.MQXQH, "tm": S.MQTM, "rfh2": S.MQRFH2}

#: The ``header_chain`` format of each structure without a StrucLength field.
_VERSION_PREFIX = {"MQRFH2": "MQRFH_VERSION_2"}

_DATE = "^[0-9]{4}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])$"
_TIME = "^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][0-9]{2}$"

#: The CCSID number space (CCSIDs are 16-bit).
CCSID_RANGE = (1, 65535)

#: The CCSIDs MQ allows in MQRFH2 NameValueCCSID (IBM, MQRFH2 "NameValueCCSID":
#: UTF-16 1200, UTF-8 1208, UTF-16 13488 and 17584).
NAME_VALUE_CCSIDS = (1200, 1208, 13488, 17584)


def valid_encodings() -> list[int]:
    """Every valid MQENC value: one integer, one decimal and one float part of
    the MQENC table (``MQENC_INTEGER_*``, ``MQENC_DECIMAL_*``,
    ``MQENC_FLOAT_*``; masks excluded), OR-ed together."""
    def part(prefix):
        return sorted({v for k, v in C.MQENC.items()
                       if k.startswith(prefix) and not k.endswith("_MASK")})

    return sorted({i | d | f for i, d, f in product(part("MQENC_INTEGER_"),
                                                    part("MQENC_DECIMAL_"),
                                                    part("MQENC_FLOAT_"))})


def versions_of(struct: S.Struct) -> list:
    """The Version values ``mq.constants`` declares for ``struct``."""
    prefix = _VERSION_PREFIX.get(struct.name, struct.name + "_VERSION_")
    return sorted(v for k, v in vars(C).items() if k.startswith(prefix) and isinstance(v, int))


def known_reasons() -> list[int]:
    """The values with a name in MQRC_NAMES or MQFB_NAMES, MQRC_NONE/MQFB_NONE (0) excluded."""
    return sorted((set(C.MQRC_NAMES) | set(C.MQFB_NAMES)) - {0})


def _fmt_set(values, limit: int = 6) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:limit])
    return "in {" + shown + (f", … ({len(values)} values)" if len(values) > limit else "") + "}"


def structural_checks() -> list[Check]:
    """The structural suite's checks, generated from the field tables.

    Returns
    -------
    list of Check
        In table order: per structure column, its constrained fields; then
        the header lengths and ``decode_status``.
    """
    checks: list[Check] = []
    encodings = valid_encodings()
    reasons = known_reasons()

    def add(column, expr, expectation, threshold, doc, **kwargs):
        checks.append(Check(f"structural.{column}", "structural", column, expr, expectation,
                            kwargs, threshold, doc))

    for col, struct in STRUCT_COLUMNS.items():
        chained = col != "md"
        for f in struct.fields:
            if "." in f.name:  # MQXQH's embedded MsgDesc.*: checked as the MQMD it is
                continue
            name = f"{col}.{f.name}"
            if f.name == "StrucId":
                add(name, name, "ExpectColumnValuesToBeInSet", _fmt_set([struct.struc_id]),
                    f"{struct.name} StrucId (blanks removed)",
                    value_set=[struct.struc_id.rstrip()])
            elif f.name == "Version" and versions_of(struct):
                vs = versions_of(struct)
                add(name, name, "ExpectColumnValuesToBeInSet", _fmt_set(vs),
                    f"{struct.name} Version: the versions MQ defines", value_set=vs)
            elif f.name == "StrucLength":
                low = struct.length()
                add(name, name, "ExpectColumnValuesToBeBetween", f">= {low} bytes",
                    f"{struct.name} StrucLength covers at least its fixed part",
                    min_value=low, max_value=None)
            elif f.name == "Encoding":
                add(name, name, "ExpectColumnValuesToBeInSet",
                    f"a valid MQENC_* combination ({len(encodings)} values)",
                    f"{struct.name} Encoding: integer, decimal and float parts of MQENC, "
                    "no reserved bit", value_set=encodings)
            elif f.name == "NameValueCCSID":
                add(name, name, "ExpectColumnValuesToBeInSet", _fmt_set(NAME_VALUE_CCSIDS),
                    "MQRFH2 NameValueCCSID: a Unicode CCSID, as MQ allows",
                    value_set=list(NAME_VALUE_CCSIDS))
            elif f.name == "CodedCharSetId":
                lo, hi = CCSID_RANGE
                expr = name
                threshold = f"{lo}..{hi}"
                if chained:
                    inherit = C.MQCCSI["MQCCSI_INHERIT"]
                    expr = f"CASE WHEN {name} = {inherit} THEN NULL ELSE {name} END"
                    threshold += " or MQCCSI_INHERIT (-2)"
                add(name, expr, "ExpectColumnValuesToBeBetween", threshold,
                    f"{struct.name} {f.name}: a CCSID", min_value=lo, max_value=hi)
            elif f.name == "PutDate":
                add(name, name, "ExpectColumnValuesToMatchRegex", "YYYYMMDD",
                    f"{struct.name} PutDate: a real date", regex=_DATE)
            elif f.name == "PutTime":
                add(name, name, "ExpectColumnValuesToMatchRegex", "HHMMSSTH",
                    f"{struct.name} PutTime: a real time of day", regex=_TIME)
            elif f.name == "Reason" and struct is S.MQDLH:
                add(name, name, "ExpectColumnValuesToBeInSet",
                    f"a named MQRC_*/MQFB_* code ({len(reasons)} values)",
                    "MQDLH Reason: a reason or feedback code MQ names", value_set=reasons)
    # headers without a StrucLength field have their table's length in the chain
    for col, struct in STRUCT_COLUMNS.items():
        if col == "md" or "StrucLength" in struct.offsets or not struct.format_name:
            continue
        fmt = struct.format_name.rstrip()
        length = struct.length()
        expr = (f"get(transform(filter(header_chain, h -> h.format = "
                f"'{fmt}'), h -> h.length), 0)")
        add(f"header_chain.{fmt}.length", expr, "ExpectColumnValuesToBeInSet",
            f"{length} bytes", f"{struct.name} length in the header chain", value_set=[length])
    add("decode_status", "decode_status", "ExpectColumnValuesToBeInSet", "'ok'",
        "every message decoded without an issue (dlqlens.decode.issues)", value_set=["ok"])
    return checks


__all__ = ["CCSID_RANGE", "NAME_VALUE_CCSIDS", "STRUCT_COLUMNS", "known_reasons", "structural_checks",
           "valid_encodings", "versions_of"]
