"""amqsbcg output: the writer (as amqsbcg prints, old and 9.3.4+ layouts)."""

from __future__ import annotations

from collections.abc import Iterable

from dlqlens.capture.message import CaptureMessage, byteorder_of
from dlqlens.mq.ccsid import charset
from dlqlens.mq.structs import MQDLH


def _q(v, width: int) -> str:
    return "'" + str(v).ljust(width)[:width] + "'"


def format_message(number: int, m: CaptureMessage, *, dlh_block: bool = False,
                   compcode: bool = True) -> str:
    """The amqsbcg text of one message: the ``MQGET`` line, the descriptor, the
    Dead Letter Header block when asked for, and the hex dump (IBM MQ "The
    Browser sample program"; ``docs/capture-formats.md``, "amqsbcg output").

    Parameters
    ----------
    dlh_block : bool
        Print an MQDLH at the start of the data as MQ 9.3.4+ does (formatted
        block, 172 bytes left out of the dump).
    compcode : bool
        Add ``, CompCode:0 Reason:0`` to the MQGET line (newer releases).
    """
    md = m.full_md()
    out = [" "]
    out.append(f" MQGET of message number {number}" + (", CompCode:0 Reason:0" if compcode else ""))
    out += ["****Message descriptor****", "",
            f"  StrucId  : 'MD  '  Version : {md['Version']}",
            f"  Report   : {md['Report']}  MsgType : {md['MsgType']}",
            f"  Expiry   : {md['Expiry']}  Feedback : {md['Feedback']}",
            f"  Encoding : {md['Encoding']}  CodedCharSetId : {md['CodedCharSetId']}",
            f"  Format : {_q(md['Format'], 8)}",
            f"  Priority : {md['Priority']}  Persistence : {md['Persistence']}",
            f"  MsgId : X'{bytes(md['MsgId']).hex().upper().ljust(48, '0')}'",
            f"  CorrelId : X'{bytes(md['CorrelId']).hex().upper().ljust(48, '0')}'",
            f"  BackoutCount : {md['BackoutCount']}",
            f"  ReplyToQ       : {_q(md['ReplyToQ'], 48)}",
            f"  ReplyToQMgr    : {_q(md['ReplyToQMgr'], 48)}",
            "  ** Identity Context",
            f"  UserIdentifier : {_q(md['UserIdentifier'], 12)}",
            "  AccountingToken : ",
            f"   X'{bytes(md['AccountingToken']).hex().upper().ljust(64, '0')}'",
            f"  ApplIdentityData : {_q(md['ApplIdentityData'], 32)}",
            "  ** Origin Context",
            f"  PutApplType    : '{md['PutApplType']}'",
            f"  PutApplName    : {_q(md['PutApplName'], 28)}",
            f"  PutDate  : {_q(md['PutDate'], 8)}    PutTime  : {_q(md['PutTime'], 8)}",
            f"  ApplOriginData : {_q(md['ApplOriginData'], 4)}", ""]
    if md["Version"] >= 2:
        out += [f"  GroupId : X'{bytes(md['GroupId']).hex().upper().ljust(48, '0')}'",
                f"  MsgSeqNumber   : '{md['MsgSeqNumber']}'",
                f"  Offset         : '{md['Offset']}'",
                f"  MsgFlags       : '{md['MsgFlags']}'",
                f"  OriginalLength : '{md['OriginalLength']}'"]
    data = m.data
    if dlh_block and md["Format"].rstrip() == "MQDEAD" and data[:4] in (b"DLH ", b"\xc4\xd3\xc8\x40") \
            and len(data) >= MQDLH.length():
        cs = charset(md["CodedCharSetId"])
        d = MQDLH.unpack(data, byteorder_of(md["Encoding"]), cs.codec)
        from dlqlens.mq.constants import code_name

        out += ["", "****Dead Letter Header****", "",
                f"  StrucId  : 'DLH '  Version : {d['Version']}",
                f"  Reason   : {d['Reason']} [{code_name(d['Reason'])}]",
                f"  DestQName      : {_q(d['DestQName'], 48)}",
                f"  DestQMgrName   : {_q(d['DestQMgrName'], 48)}",
                f"  Encoding : {d['Encoding']}  CodedCharSetId : {d['CodedCharSetId']}",
                f"  Format : {_q(d['Format'], 8)}",
                f"  PutApplType    : '{d['PutApplType']}'",
                f"  PutApplName    : {_q(d['PutApplName'], 28)}",
                f"  PutDate  : {_q(d['PutDate'], 8)}    PutTime  : {_q(d['PutTime'], 8)}"]
        data = data[MQDLH.length():]
    out += [" ", "****   Message      ****", " ", f" length - {len(data)} of {len(data)} bytes", " "]
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        groups = " ".join(chunk[i:i + 2].hex().upper() for i in range(0, len(chunk), 2))
        chars = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        out.append(f"{off:08X}:  {groups.ljust(39)} '{chars.ljust(16)}'")
    return "\n".join(out) + "\n"


def write_amqsbcg(path, messages: Iterable[CaptureMessage], *, queue: str = "SYSTEM.DEAD.LETTER.QUEUE",
                  dlh_block: bool = False, newline: str = "\n") -> int:
    """Write amqsbcg output for ``messages``; returns how many were written.

    ``dlh_block=True`` writes the MQ 9.3.4+ layout (formatted MQDLH block and
    a summary), otherwise the older layout (MQDLH inside the dump).
    """
    n = 0
    sizes = []
    with open(path, "w", encoding="utf-8", newline=newline) as fh:
        fh.write(f"\nAMQSBCG0 - starts here\n**********************\n \n MQOPEN - '{queue}'\n \n")
        for m in messages:
            n += 1
            fh.write(format_message(n, m, dlh_block=dlh_block))
            sizes.append(len(m.data))
        fh.write(" \n \n \n No more messages \n")
        if dlh_block:
            fh.write("\n****   Summary      ****\n")
            if sizes:
                fh.write(f" {n} messages browsed.\n Smallest message {min(sizes)} bytes.\n"
                         f" Largest message {max(sizes)} bytes.\n"
                         f" Average message {sum(sizes) // len(sizes)} bytes.\n")
        fh.write("\n MQCLOSE\n MQDISC\n")
    return n
