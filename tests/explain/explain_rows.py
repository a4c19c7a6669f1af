"""Message rows for the explanation tests, as the decoders give them (``docs/columns.md``)."""

from __future__ import annotations

from datetime import datetime, timezone

T0 = datetime(2024, 3, 15, 8, 0, 0, tzinfo=timezone.utc)

_UNSET = object()


def row(reason=2053, *, queue="APP.IN", qmgr="QM1", user="alice", msg_type=8, feedback=0,
        backout=0, expiry=-1, dlh_putter=("amqrmppa", 6), dlh_format="MQSTR", tm=None,
        number=1, source="t/QM1_SYSTEM.DEAD.LETTER.QUEUE.raw", put=T0, dlq_put=_UNSET,
        **md_over) -> dict:
    """One dead letter: MQMD, MQDLH and what the explanation reads."""
    md = {"StrucId": "MD  ", "Version": 2, "Report": 0, "MsgType": msg_type, "Expiry": expiry,
          "Feedback": feedback, "Encoding": 546, "CodedCharSetId": 1208, "Format": "MQDEAD",
          "Priority": 4, "Persistence": 1, "BackoutCount": backout, "ReplyToQ": "",
          "ReplyToQMgr": "QM1", "UserIdentifier": user, "PutApplType": 6,
          "PutApplName": "order-api", "MsgId": b"\x01" * 24, "CorrelId": b"\x00" * 24}
    md.update(md_over)
    dlh = {"StrucId": "DLH ", "Version": 1, "Reason": reason, "DestQName": queue,
           "DestQMgrName": qmgr, "Encoding": 546, "CodedCharSetId": 1208, "Format": dlh_format,
           "PutApplType": dlh_putter[1], "PutApplName": dlh_putter[0]}
    return {"source": source, "message_number": number, "source_line": None,
            "source_offset": 0, "md": md, "dlh": dlh, "tm": tm, "xqh": None, "rfh2": None,
            "headers": ["MQDEAD", dlh_format], "payload_format": None if tm else "MQSTR",
            "payload_length": 0 if tm else 12, "payload_text": None if tm else "hello orders",
            "data_length": 184, "decode_status": "ok", "decode_issues": [], "put_ts": put,
            "dlh_put_ts": put if dlq_put is _UNSET else dlq_put}


def trigger_tm(queue="APP.WORK", process="WORK.PROC", applid="/opt/work/bin/worker",
               appl_type=6) -> dict:
    return {"StrucId": "TM  ", "Version": 1, "QName": queue, "ProcessName": process,
            "TriggerData": "", "ApplType": appl_type, "ApplId": applid, "EnvData": "",
            "UserData": ""}


def commands(explanation) -> list[str]:
    """Every command of every next step."""
    return [c.text for s in explanation.next_steps for c in s.commands]


def where(explanation, text: str) -> str:
    """Where the command ``text`` runs."""
    return next(c.where for s in explanation.next_steps for c in s.commands if c.text == text)
