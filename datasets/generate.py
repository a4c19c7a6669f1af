"""Generate the bundled sample captures (seeded: the same bytes every run).

    python datasets/generate.py [--out datasets/dlq-sample] [--seed 20240315]

Writes one dead-letter queue, as several queue managers would see it, in
every capture format, both integer byte orders and both character-set
families, and next to each capture ``<capture>.expected.jsonl``: the values
its decode must give (checked by ``tests/test_datasets.py``).

The messages follow how MQ fills an MQDLH (``spec/mqdlh.md`` §4-§5): a
receiving MCA (``amqrmppa``, MQAT_UNIX) for channel-side reasons, the queue
manager itself (MQAT_QMGR, its name) for local puts, the trigger monitor
(``runmqtrm``) for trigger messages it could not act on, JMS (MQAT_JAVA) for
MQRC_BACKOUT_THRESHOLD_REACHED.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys

from dlqlens.capture.amqsbcg import write_amqsbcg
from dlqlens.capture.dmpmqmsg import write_dmpmqmsg
from dlqlens.capture.message import CaptureMessage, dead_letter
from dlqlens.capture.raw import write_raw
from dlqlens.mq.ccsid import charset
from dlqlens.mq.structs import MQTM

SEED = 20240315

# (Reason, weight, destination queue, destination qmgr, who puts it on the DLQ)
SCENARIOS = [
    (2053, 40, "PAYMENTS.IN", "QM.PAY", "mca"),
    (2053, 10, "ORDERS.IN", "QM.ORD", "mca"),
    (2085, 15, "ORDERS.RETRY", "QM.ORD", "mca"),
    (2085, 5, "AMQ.5F3A9C2E20001A04", "QM.ORD", "qmgr"),
    (2035, 10, "LEDGER.POST", "QM.PAY", "mca"),
    (2051, 8, "INVOICES.IN", "QM.BILL", "mca"),
    (2030, 4, "DOCS.ARCHIVE", "QM.BILL", "qmgr"),
    (2087, 3, "SETTLE.OUT", "QM.EU", "mca"),
    (2362, 3, "PAYMENTS.IN", "QM.PAY", "jms"),
    (265, 2, "SYSTEM.DEFAULT.INITIATION.QUEUE", "QM.PAY", "trigger"),
]
APPS = [("payments-api", 6), ("order-svc", 6), ("BILLRUN", 2), ("web-gateway", 28),
        ("settlement.jar", 28)]
USERS = ["appuser", "mqm", "svcpay", "BATCH01"]


def _messages(rng: random.Random, n: int, encoding: int, ccsid: int,
              md_byteorder: str, md_codec: str, start: dt.datetime) -> list[CaptureMessage]:
    weights = [s[1] for s in SCENARIOS]
    out = []
    t = start
    for i in range(n):
        reason, _, destq, destqm, who = rng.choices(SCENARIOS, weights)[0]
        t += dt.timedelta(seconds=rng.expovariate(1 / 90))
        orig = t - dt.timedelta(seconds=rng.uniform(0.05, 30))
        app, app_type = rng.choice(APPS)
        payload_ccsid = ccsid if charset(ccsid).family == "ebcdic" else rng.choice([1208, 819])
        body = f'{{"order":{rng.randint(10000, 99999)},"amount":{rng.randint(1, 99999) / 100},"seq":{i + 1}}}'
        fmt = "MQSTR"
        payload = body.encode(charset(payload_ccsid).codec)
        md = {"Version": 2, "Format": fmt, "Encoding": encoding, "CodedCharSetId": payload_ccsid,
              "Persistence": rng.choice([0, 1, 1]), "Priority": rng.randint(0, 9),
              "MsgId": b"AMQ " + destqm.encode().ljust(12) + rng.randbytes(8),
              "PutApplName": app, "PutApplType": app_type,
              "UserIdentifier": rng.choice(USERS),
              "ReplyToQMgr": destqm, "PutDate": orig.strftime("%Y%m%d"),
              "PutTime": orig.strftime("%H%M%S") + f"{orig.microsecond // 10000:02d}",
              "Expiry": rng.choice([-1, -1, -1, rng.randint(600, 36000)]),
              "BackoutCount": rng.randint(5, 25) if who == "jms" else 0}
        dlh = {"Reason": reason, "DestQName": destq, "DestQMgrName": destqm,
               "PutDate": t.strftime("%Y%m%d"),
               "PutTime": t.strftime("%H%M%S") + f"{t.microsecond // 10000:02d}"}
        if who == "mca":
            dlh.update(PutApplType=6, PutApplName="amqrmppa")
        elif who == "qmgr":
            dlh.update(PutApplType=7, PutApplName=destqm)
            md["ReplyToQ"] = "AMQ.5F3A9C2E20001A04" if destq.startswith("AMQ.") else ""
            if destq.startswith("AMQ."):
                md["MsgType"] = 2  # a reply to a temporary dynamic queue that is gone
        elif who == "jms":
            dlh.update(PutApplType=28, PutApplName="settlement.jar")
        else:  # trigger monitor: the data after the MQDLH is the MQTM (spec/mqtm.md §1)
            dlh.update(PutApplType=6, PutApplName="runmqtrm", Format="MQTRIG")
            md.update(Format="MQTRIG", MsgType=8, PutApplType=7, PutApplName=destqm)
            cs = charset(ccsid)
            payload = MQTM.pack({"Version": 1, "QName": "PAYMENTS.IN", "ProcessName": "PAY.PROC",
                                 "ApplType": 6, "ApplId": "/opt/pay/bin/payserver",
                                 "TriggerData": "", "EnvData": "", "UserData": ""},
                                ">" if encoding & 0x0F == 1 else "<",
                                cs.codec if cs.single_byte else "latin-1")
            md["CodedCharSetId"] = ccsid
        out.append(dead_letter(md, dlh, payload, encoding=encoding, ccsid=ccsid,
                               md_byteorder=md_byteorder, md_codec=md_codec))
    return out


#: capture file -> (writer, writer options, encoding, ccsid, MQMD byte order, MQMD codec)
CAPTURES = {
    "dlq_linux_x86.raw": ("raw", {}, 546, 1208, "<", "latin-1"),
    "dlq_zos.raw": ("raw", {}, 785, 500, ">", "cp500"),
    "dlq_aix.dmp": ("dmpmqmsg", {"qmgr": "QM.PAY", "queue": "SYSTEM.DEAD.LETTER.QUEUE"},
                    273, 819, ">", "latin-1"),
    "dlq_linux_x86.dmp": ("dmpmqmsg", {"qmgr": "QM.ORD", "queue": "DLQ", "ascii_column": True},
                          546, 819, "<", "latin-1"),
    "dlq_zos_ebcdic1047.dmp": ("dmpmqmsg", {}, 785, 1047, ">", "cp1047"),
    "dlq_linux_x86_mq94.bcg": ("amqsbcg", {"dlh_block": True}, 546, 1208, "<", "latin-1"),
    "dlq_aix_mq7.bcg": ("amqsbcg", {"dlh_block": False, "newline": "\r\n"}, 273, 819, ">", "latin-1"),
}


def expected_record(source: str, number: int, m: CaptureMessage) -> dict:
    """The fields a decode of ``m`` must give (what the golden files hold)."""
    from dlqlens.mq.structs import MQDLH

    md = m.full_md()
    cs = charset(md["CodedCharSetId"])
    dlh = MQDLH.unpack(m.data, ">" if md["Encoding"] & 0x0F == 1 else "<", cs.codec)
    payload = m.data[MQDLH.length():]
    headers = ["MQDEAD"]
    if dlh["Format"].rstrip() == "MQTRIG":  # the MQTM is a header: nothing follows it
        payload = payload[MQTM.length():]
        headers.append("MQTRIG")
    text = None
    if dlh["Format"].rstrip() == "MQSTR":
        text = payload.decode(charset(dlh["CodedCharSetId"]).codec)
    return {"source": source, "message_number": number,
            "md": {"Format": md["Format"], "Encoding": md["Encoding"],
                   "CodedCharSetId": md["CodedCharSetId"], "PutApplName": md["PutApplName"],
                   "PutDate": md["PutDate"], "PutTime": md["PutTime"],
                   "BackoutCount": md["BackoutCount"], "MsgId": bytes(md["MsgId"]).hex().upper()},
            "dlh": {k: dlh[k] for k in ("Reason", "DestQName", "DestQMgrName", "Encoding",
                                        "CodedCharSetId", "Format", "PutApplType",
                                        "PutApplName", "PutDate", "PutTime")},
            "headers": headers, "payload_hex": payload.hex().upper(), "payload_text": text,
            "decode_status": "ok"}


def generate(out: str, seed: int = SEED, per_file: int = 120) -> list[str]:
    """Write every capture of :data:`CAPTURES` into ``out``; return the file names."""
    writers = {"raw": write_raw, "dmpmqmsg": write_dmpmqmsg, "amqsbcg": write_amqsbcg}
    os.makedirs(out, exist_ok=True)
    names = []
    for k, (name, (fmt, opts, enc, ccsid, order, codec)) in enumerate(sorted(CAPTURES.items())):
        rng = random.Random(seed * 100 + k)
        start = dt.datetime(2024, 3, 15, 6, 0, 0) + dt.timedelta(hours=k)
        msgs = _messages(rng, per_file, enc, ccsid, order, codec, start)
        path = os.path.join(out, name)
        writers[fmt](path, msgs, **opts)
        with open(path + ".expected.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for i, m in enumerate(msgs, 1):
                fh.write(json.dumps(expected_record(name, i, m), ensure_ascii=False) + "\n")
        names.append(name)
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "dlq-sample"))
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-file", type=int, default=120)
    a = ap.parse_args(argv)
    for name in generate(a.out, a.seed, a.per_file):
        print(os.path.join(a.out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
