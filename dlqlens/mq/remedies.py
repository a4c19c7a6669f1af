"""What to check and do next, per reason: the usual causes and the commands, as data.

One table (:data:`REMEDIES`) holds, for each ``MQRC_*`` / ``MQFB_*`` name a
dead letter can carry in ``MQDLH.Reason`` (or a report in ``MQMD.Feedback``),
what happened in words, the usual causes, and the commands that confirm them
or fix them; :data:`SITUATIONS` does the same for patterns that are not one
reason (a finding's kind, a message about to expire). Explanations
(:mod:`dlqlens.explain`) fill the templates with the names a capture holds;
nothing here runs a command.

The facts are IBM's, from the "Reason codes" pages (each entry's ``page``:
"API reason codes" (:data:`REASON_CODES_PAGE`), one page per code, e.g. "2053 (0805) (RC2053): MQRC_Q_FULL"), the MQDLH
``Reason`` page for the feedback values that occur only there, the "Reason
and feedback codes in ASF" page for 2362-2364, and ``spec/reason-codes.md``;
the MQSC and control commands are those of IBM's command references
(``DISPLAY QLOCAL``, ``DISPLAY QSTATUS``, ``DISPLAY PROCESS``, ``dspmqaut``,
``setmqaut``...).

Templates
---------
Prose (``happened``, ``causes``, ``Check.purpose``) names things with
``{queue}`` (the destination queue, ``MQDLH.DestQName``), ``{qmgr}`` (its
queue manager, ``MQDLH.DestQMgrName``), ``{user}`` (``MQMD.UserIdentifier``),
``{process}``, ``{applid}`` and ``{app_queue}`` (from the MQTM of a trigger
message), ``{initq}`` (the initiation queue), ``{dlq}`` (the dead-letter
queue the capture read) and ``{length}`` (the message's data length in
bytes). Command templates use the same names; the explanation puts each name
in as the command's language quotes it: an MQSC or rules-table literal
(``'APP.IN'``, a quote doubled, :func:`mqsc_literal`) or a shell word, and a
value the capture does not hold as ``<queue>``, marking the command
incomplete. ``<...>`` written in a template (``MAXDEPTH(<n>)``) is a value
for the reader to choose.

Languages: ``mqsc`` runs in ``runmqsc`` on the queue manager named by ``on``
(``dest``: the destination's, ``sender``: the queue manager the message came
from, ``dlq``: the dead-letter queue's); ``shell`` on that queue manager's
host; ``rules`` is a runmqdlq rules-table line.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The pages cited when an entry names none.
REASON_CODES_PAGE = ("https://ibm.com/support/knowledgecenter/en/SSFKSJ_9.2.0/"
                     "com.ibm.mq.tro.doc/q040710_.htm")
DLH_REASON_PAGE = "https://www.ibm.com/docs/en/SSFKSJ_9.3.0/refdev/q096230_.html"
MD_FEEDBACK_PAGE = "https://www.ibm.com/docs/en/SSFKSJ_9.1.0/com.ibm.mq.ref.dev.doc/q097510_.html"
EXPIRY_PAGE = "https://www.ibm.com/docs/en/SSFKSJ_9.2.0/com.ibm.mq.ref.dev.doc/q097490_.html"
BACKOUT_COUNT_PAGE = "https://www.ibm.com/docs/SSFKSJ_9.2.0/com.ibm.mq.ref.dev.doc/q097450_.htm"
ASF_CODES_PAGE = ("https://www.ibm.com/docs/en/ibm-mq/9.0.x?"
                  "topic=handling-reason-feedback-codes-in-asf")
_RC = "https://www.ibm.com/docs/en/SSFKSJ_latest/reference/{}_.html"

#: Languages of :class:`Check` templates.
LANGUAGES = ("mqsc", "shell", "rules")
#: Where a check runs (see the module docstring).
PLACES = ("dest", "sender", "dlq")


@dataclass(frozen=True)
class Check:
    """One command: what it confirms (or changes), in which language, where.

    Attributes
    ----------
    purpose : str
        What the command shows or does, in words (a prose template).
    template : str
        The command, with ``{name}`` placeholders.
    language : str
        ``mqsc``, ``shell`` or ``rules`` (:data:`LANGUAGES`).
    on : str
        ``dest``, ``sender`` or ``dlq`` (:data:`PLACES`).
    change : bool
        True for a command that changes something (ALTER, setmqaut, a rule
        that moves messages): to run only once the cause is understood.
    """

    purpose: str
    template: str
    language: str = "mqsc"
    on: str = "dest"
    change: bool = False


@dataclass(frozen=True)
class Remedy:
    """What a reason means for a dead letter, and what to check next.

    Attributes
    ----------
    name : str
        The ``MQRC_*`` / ``MQFB_*`` name, or a situation key.
    happened : str
        What happened to this message, in words (prose template).
    causes : tuple of str
        The usual causes, most likely first (prose templates).
    checks : tuple of Check
        Commands that confirm the causes, then those that fix them.
    page : str
        IBM's page for the code.
    failed_put : bool
        True when the reason is a put that failed (the message "was being
        put to" its destination); False for reasons that are not (backouts,
        a trigger monitor's feedback, an exit's, a selector that matched
        nothing).
    """

    name: str
    happened: str
    causes: tuple = ()
    checks: tuple = ()
    page: str = REASON_CODES_PAGE
    failed_put: bool = True


def _r(name, happened, causes, checks, page=REASON_CODES_PAGE, failed_put=True):
    return name, Remedy(name, happened, tuple(causes), tuple(checks), page, failed_put)


_CONSUMER = Check("whether anything has {queue} open for input (IPPROCS), and when it last got "
                  "a message", "DISPLAY QSTATUS({queue}) TYPE(QUEUE) IPPROCS CURDEPTH LGETDATE "
                  "LGETTIME")
_RETRY_RULE = Check("once fixed, put the dead letters back to {queue} with the DLQ handler",
                    "DESTQ({queue}) REASON({reason}) ACTION(RETRY) RETRY(5)", "rules", "dlq",
                    change=True)

#: Remedies by ``MQRC_*`` / ``MQFB_*`` name.
REMEDIES: dict[str, Remedy] = dict([
    _r("MQRC_Q_FULL",
       "{queue} on {qmgr} already held MAXDEPTH messages, so the put failed (IBM: retry "
       "later, raise the maximum depth, or add instances of the application that serves the "
       "queue)",
       ["the application that gets from {queue} stopped, or cannot keep up with the puts",
        "MAXDEPTH of {queue} is too low for the peaks it must absorb",
        "expired messages on {queue} still count in its depth until a get reaches them"],
       [Check("the depth against the limit", "DISPLAY QLOCAL({queue}) CURDEPTH MAXDEPTH"),
        _CONSUMER,
        Check("raise the limit (choose n from the peaks)", "ALTER QLOCAL({queue}) MAXDEPTH(<n>)",
              change=True),
        _RETRY_RULE],
       _RC.format("q041240")),
    _r("MQRC_PUT_INHIBITED",
       "puts to {queue} on {qmgr} (or to the queue it resolves to) were inhibited, PUT(DISABLED), "
       "so the put failed",
       ["an administrator or a script disabled puts on {queue} (maintenance, a drain, a "
        "migration) and has not enabled them again",
        "{queue} is an alias or remote definition whose own PUT attribute, or its target's, is "
        "DISABLED"],
       [Check("whether puts are disabled", "DISPLAY QLOCAL({queue}) PUT"),
        Check("when {queue} is an alias: its target and its own PUT",
              "DISPLAY QALIAS({queue}) TARGET PUT"),
        Check("allow puts again (IBM's system programmer action)",
              "ALTER QLOCAL({queue}) PUT(ENABLED)", change=True),
        _RETRY_RULE],
       _RC.format("q041220")),
    _r("MQRC_NOT_AUTHORIZED",
       "the user the put ran as was not authorized to open {queue} on {qmgr} for output",
       ["the user id the put ran as has no +put authority on {queue}: for a message arriving "
        "on a channel, the receiving channel's MCAUSER, or the message's own UserIdentifier "
        "({user}) when the channel has PUTAUT(CTX)",
        "an authority change or a security refresh took the authority away",
        "on z/OS, the RACF profile for {queue} in the MQQUEUE class does not permit the user"],
       [Check("the authority of {user} on {queue}",
              "dspmqaut -m {qmgr} -n {queue} -t queue -p {user}", "shell"),
        Check("which user the receiving channels put with",
              "DISPLAY CHANNEL(*) CHLTYPE(RCVR) MCAUSER PUTAUT"),
        Check("grant put authority, once the right user is known",
              "setmqaut -m {qmgr} -n {queue} -t queue -p {user} +put", "shell", change=True),
        _RETRY_RULE],
       _RC.format("q041060")),
    _r("MQRC_UNKNOWN_OBJECT_NAME",
       "{queue} could not be found on {qmgr}: no queue of that name is defined there",
       ["{queue} was deleted, renamed or never defined on {qmgr}",
        "the sending side addresses the wrong queue: a QREMOTE whose RNAME is {queue}, or an "
        "application's misspelt queue name",
        "a reply to a temporary dynamic queue that its requester had already closed"],
       [Check("whether {queue} exists on {qmgr}", "DISPLAY QUEUE({queue})"),
        Check("the remote queue definitions that send to {queue}, with their route",
              "DISPLAY QREMOTE(*) WHERE(RNAME EQ {queue}) RQMNAME XMITQ", on="sender"),
        Check("whether {queue} is a cluster queue known on {qmgr}",
              "DISPLAY QCLUSTER({queue}) CLUSQMGR"),
        Check("define the queue, if it should exist", "DEFINE QLOCAL({queue})", change=True)]),
    _r("MQRC_Q_DELETED",
       "{queue} on {qmgr} was a dynamic queue deleted after it was opened, so the put through "
       "that handle failed",
       ["the requester that owned the temporary dynamic queue {queue} closed it or ended "
        "before this message came (most often after giving up waiting for a reply)"],
       [Check("the temporary dynamic queues that exist now",
              "DISPLAY QSTATUS('AMQ.*') TYPE(QUEUE) CURDEPTH IPPROCS")]),
    _r("MQRC_PERSISTENT_NOT_ALLOWED",
       "a persistent message could not be put to {queue} on {qmgr}, a queue that does not "
       "hold persistent messages (a temporary dynamic queue)",
       ["{queue} is a temporary dynamic queue: a persistent reply to a persistent request "
        "cannot go there (IBM: use a permanent dynamic or predefined reply queue)",
        "on z/OS, a shared queue whose CFSTRUCT has RECOVER(NO)"],
       [Check("the kind of queue {queue} is", "DISPLAY QLOCAL({queue}) DEFTYPE"),
        Check("the model queues requesters open for replies, and what they create",
              "DISPLAY QMODEL(*) DEFTYPE")],
       _RC.format("q041190")),
    _r("MQRC_MSG_TOO_BIG_FOR_Q",
       "the message ({length}) was longer than the MAXMSGL of {queue} on {qmgr}",
       ["MAXMSGL of {queue} is lower than the messages its producers send",
        "a producer sends larger messages than agreed"],
       [Check("the queue's limit", "DISPLAY QLOCAL({queue}) MAXMSGL"),
        Check("raise it (n in bytes, at least the message's length)",
              "ALTER QLOCAL({queue}) MAXMSGL(<n>)", change=True)],
       _RC.format("q041020")),
    _r("MQRC_MSG_TOO_BIG_FOR_Q_MGR",
       "the message ({length}) was longer than the MAXMSGL of queue manager {qmgr}",
       ["the queue manager's MAXMSGL is lower than the messages sent to it"],
       [Check("the queue manager's limit", "DISPLAY QMGR MAXMSGL")],
       _RC.format("q041030")),
    _r("MQRC_MSG_TOO_BIG_FOR_CHANNEL",
       "the message ({length}) was longer than the MAXMSGL of a channel on its way to {qmgr}",
       ["a channel's MAXMSGL (the lower of the two ends') is below the message's length"],
       [Check("the channels' limits", "DISPLAY CHANNEL(*) MAXMSGL", on="sender")],
       _RC.format("q042550")),
    _r("MQRC_Q_SPACE_NOT_AVAILABLE",
       "there was no space on disk for {queue} on {qmgr}",
       ["the file system holding the queue manager's data is full",
        "an application is putting messages in a loop (IBM's first thing to check)"],
       [Check("the depth of {queue}", "DISPLAY QLOCAL({queue}) CURDEPTH MAXDEPTH")],
       _RC.format("q041260")),
    _r("MQRC_STORAGE_MEDIUM_FULL",
       "the page set or coupling-facility structure behind {queue} on {qmgr} was full (z/OS)",
       ["queues on the same page set filled it (not necessarily {queue})",
        "servers that should empty those queues are not running"],
       [Check("the page sets' use", "DISPLAY USAGE TYPE(PAGESET)"),
        Check("the queues holding messages", "DISPLAY QLOCAL(*) WHERE(CURDEPTH GT 0) CURDEPTH")],
       _RC.format("q042350")),
    _r("MQRC_UNKNOWN_REMOTE_Q_MGR",
       "queue manager {qmgr} could not be resolved to a transmission queue",
       ["no transmission queue named {qmgr}, no queue manager alias for it, and no default "
        "transmission queue"],
       [Check("a transmission queue named after {qmgr}", "DISPLAY QLOCAL({qmgr}) USAGE",
              on="sender"),
        Check("a queue manager alias for {qmgr}", "DISPLAY QREMOTE({qmgr}) RQMNAME XMITQ",
              on="sender"),
        Check("the default transmission queue", "DISPLAY QMGR DEFXMITQ", on="sender")]),
    _r("MQRC_UNKNOWN_XMIT_Q",
       "the transmission queue named for the route to {queue} on {qmgr} does not exist",
       ["the XMITQ of a remote queue or queue manager alias names no local queue"],
       [Check("the route the remote definition gives", "DISPLAY QREMOTE({queue}) RQMNAME XMITQ",
              on="sender")]),
    _r("MQRC_UNKNOWN_ALIAS_BASE_Q",
       "{queue} on {qmgr} is an alias whose target cannot be resolved",
       ["the alias's TARGET names a queue that does not exist"],
       [Check("the alias's target", "DISPLAY QALIAS({queue}) TARGET TARGTYPE")]),
    _r("MQRC_CLUSTER_RESOLUTION_ERROR",
       "the cluster queue {queue} could not be resolved (no answer from a full repository)",
       ["the full repositories are not reachable, or do not know {queue}"],
       [Check("the cluster queue managers and their channels' state",
              "DISPLAY CLUSQMGR(*) QMTYPE STATUS"),
        Check("what the queue manager knows of {queue}", "DISPLAY QCLUSTER({queue}) CLUSQMGR")]),
    _r("MQRC_BACKOUT_THRESHOLD_REACHED",
       "its consumer on {queue} got it under syncpoint and backed it out until the backout "
       "threshold (BOTHRESH; JMS uses 20 where it cannot read one), and {queue} has no backout "
       "queue (BOQNAME), so the JMS/XMS ConnectionConsumer moved it here: backouts, not a "
       "failed put",
       ["the message's content makes the consuming application fail (a poison message)",
        "{queue} has no BOQNAME, so nothing but the DLQ can take messages off it",
        "a DLQ handler RETRY put earlier copies back, and the consumer failed on them again"],
       [Check("the queue's backout threshold and backout queue",
              "DISPLAY QLOCAL({queue}) BOTHRESH BOQNAME HARDENBO"),
        Check("give {queue} a backout queue (IBM's advice), once its name is chosen",
              "ALTER QLOCAL({queue}) BOQNAME(<backout queue>) BOTHRESH(<n>)", change=True),
        Check("do not RETRY these to {queue} before the consumer is fixed: forward them aside",
              "DESTQ({queue}) REASON(MQRC_BACKOUT_THRESHOLD_REACHED) ACTION(FWD) "
              "FWDQ(<hold queue>) HEADER(YES)", "rules", "dlq", change=True)],
       _RC.format("q043910"), failed_put=False),
    _r("MQRC_MSG_NOT_MATCHED",
       "no JMS ConnectionConsumer watching {queue} had a selector matching it, so it was "
       "requeued to the dead-letter queue",
       ["the ConnectionConsumers' selectors do not cover every message put to {queue}",
        "an unexpected producer puts messages to {queue}"],
       [Check("who has {queue} open", "DISPLAY QSTATUS({queue}) TYPE(HANDLE) ALL")],
       ASF_CODES_PAGE, failed_put=False),
    _r("MQRC_JMS_FORMAT_ERROR",
       "JMS could not interpret it when it was got from {queue}",
       ["the message's format or headers are not what JMS expects (IBM: investigate its "
        "origin)"],
       [Check("who puts to {queue}", "DISPLAY QSTATUS({queue}) TYPE(HANDLE) ALL")],
       ASF_CODES_PAGE, failed_put=False),
    _r("MQFB_APPL_CANNOT_BE_STARTED",
       "the trigger monitor that got this trigger message from initiation queue {initq} "
       "could not start the application {applid} of process {process} for queue {app_queue}",
       ["the program {applid} (the process's APPLICID) does not exist, is not executable for "
        "the trigger monitor's user, or fails as it starts",
        "on z/OS, CKTI could not start the CICS transaction the process names",
        "the process definition {process} names the wrong program or environment"],
       [Check("the process definition the trigger monitor used",
              "DISPLAY PROCESS({process}) APPLICID APPLTYPE USERDATA ENVRDATA"),
        Check("the triggered queue: its trigger settings, its waiting messages and its servers",
              "DISPLAY QLOCAL({app_queue}) TRIGGER TRIGTYPE INITQ PROCESS CURDEPTH IPPROCS"),
        Check("whether {applid} exists and can run, as the trigger monitor's user",
              "ls -l {applid}", "shell")],
       DLH_REASON_PAGE, failed_put=False),
    _r("MQFB_APPL_TYPE_ERROR",
       "the trigger monitor that got this trigger message from {initq} cannot start "
       "applications of the ApplType it names (process {process}, queue {app_queue})",
       ["the process's APPLTYPE is one this trigger monitor does not start (runmqtrm starts "
        "UNIX/Windows programs, CKTI CICS transactions)",
        "the initiation queue is served by the wrong kind of trigger monitor"],
       [Check("the application type the process gives",
              "DISPLAY PROCESS({process}) APPLTYPE APPLICID"),
        Check("the initiation queue and process of the triggered queue",
              "DISPLAY QLOCAL({app_queue}) INITQ PROCESS TRIGGER")],
       DLH_REASON_PAGE, failed_put=False),
    _r("MQFB_TM_ERROR",
       "a trigger monitor found no valid MQTM in this message from initiation queue {initq}",
       ["an application put a message that is not a trigger message on {initq}"],
       [Check("who has {initq} open", "DISPLAY QSTATUS({initq}) TYPE(HANDLE) ALL")],
       DLH_REASON_PAGE, failed_put=False),
    _r("MQFB_STOPPED_BY_MSG_EXIT",
       "a channel message exit stopped it on its way to {queue} on {qmgr}",
       ["a message exit of a channel on the route suppressed the message"],
       [Check("the channels' message exits", "DISPLAY CHANNEL(*) MSGEXIT MSGDATA", on="sender")],
       "https://www.ibm.com/docs/en/ibm-mq/10.0.x?topic=fields-feedback-mqlong",
       failed_put=False),
    _r("MQFB_XMIT_Q_MSG_ERROR",
       "a channel found this message on a transmission queue without a valid MQXQH",
       ["an application put directly to a transmission queue"],
       [Check("the transmission queues and who has them open",
              "DISPLAY QLOCAL(*) WHERE(USAGE EQ XMITQ) CURDEPTH IPPROCS OPPROCS", on="sender")],
       DLH_REASON_PAGE, failed_put=False),
    _r("MQFB_BIND_OPEN_CLUSRCVR_DEL",
       "it was bound on open to a cluster queue manager whose cluster-receiver channel has "
       "since been deleted",
       ["a cluster queue manager left the cluster while messages bound to it were in flight"],
       [Check("the cluster queue managers", "DISPLAY CLUSQMGR(*) QMTYPE STATUS")],
       DLH_REASON_PAGE, failed_put=False),
])

#: Remedies for a report's ``MQMD.Feedback`` (the report itself could not be
#: delivered: the MQDLH reason says why; this says what the report was).
REPORT_FEEDBACK: dict[str, str] = {
    "MQFB_EXPIRATION": "an expiration report: a message its sender sent expired unprocessed "
                       "(and was discarded) before anything got it",
    "MQFB_COA": "a confirmation of arrival: a message reached its destination queue",
    "MQFB_COD": "a confirmation of delivery: an application got the message",
    "MQFB_PAN": "a positive action notification from the receiving application",
    "MQFB_NAN": "a negative action notification from the receiving application",
    "MQFB_QUIT": "a request to an application instance to end",
}

#: Remedies by situation (not one reason): a finding's kind or signal, a
#: message about to expire, a message without an MQDLH, the fallback.
SITUATIONS: dict[str, Remedy] = dict([
    _r("EXPIRING",
       "it will expire {expires}: then the queue manager discards it at the next get or browse "
       "that reaches it, and its content is lost",
       ["nothing processes {dlq} (no DLQ handler running, or rules that leave this message "
        "there)"],
       [Check("how many messages wait on the dead-letter queue",
              "DISPLAY QSTATUS({dlq}) TYPE(QUEUE) CURDEPTH IPPROCS", on="dlq"),
        Check("run the DLQ handler on it with a rules table that disposes of this reason",
              "runmqdlq {dlq} {dlq_qmgr} < rules.rul", "shell", "dlq", change=True)],
       EXPIRY_PAGE),
    _r("NO_DLH",
       "it does not start with an MQDLH, so a DLQ handler cannot process it and it stays on the "
       "queue",
       ["an application put it on the dead-letter queue without a dead-letter header"],
       [Check("who has the dead-letter queue open", "DISPLAY QSTATUS({dlq}) TYPE(HANDLE) ALL",
              on="dlq")]),
    _r("GENERIC",
       "{reason_text} stopped it on its way to {queue} on {qmgr}",
       ["dlqlens has no notes on this reason: read IBM's page for it"],
       [Check("the destination queue's definition", "DISPLAY QUEUE({queue}) ALL"),
        Check("the queue manager's error log around the time it was dead-lettered",
              "tail -n 200 /var/mqm/qmgrs/<qmgr directory>/errors/AMQERR01.LOG", "shell")]),
    _r("EXPIRY_BUILDUP",
       "messages on {queue} will expire: each is discarded at the next get or browse that "
       "reaches it, and until then counts in the queue's depth",
       ["nothing processes {queue} (for a dead-letter queue: no DLQ handler, or rules that "
        "leave these messages there)",
        "the messages were put with an expiry shorter than the time they wait"],
       [Check("the queue's depth and whether anything reads it",
              "DISPLAY QSTATUS({queue}) TYPE(QUEUE) CURDEPTH IPPROCS LGETDATE LGETTIME"),
        Check("dispose of them before they expire: the DLQ handler with a rules table",
              "runmqdlq {queue} {qmgr} < rules.rul", "shell", change=True)],
       EXPIRY_PAGE),
    _r("ORPHANED_REPLY",
       "replies and reports came back after their requesters had closed their temporary "
       "reply queues {queue} on {qmgr}",
       ["the service answers more slowly than its requesters wait (their MQGET wait interval "
        "or JMS receive timeout)",
        "requesters end or restart before their replies come"],
       [Check("the temporary dynamic queues that exist now on {qmgr}",
              "DISPLAY QSTATUS({queue}) TYPE(QUEUE) CURDEPTH IPPROCS"),
        Check("these replies can no longer be delivered: discard them with the DLQ handler",
              "DESTQ({queue}) REASON(MQRC_UNKNOWN_OBJECT_NAME) ACTION(DISCARD)", "rules", "dlq",
              change=True)]),
    _r("TRIGGER_STORM",
       "{app_queue} was triggered again and again: process {process} was started many times",
       ["the server started for {app_queue} ends before draining it, so every close with "
        "messages left triggers it again",
        "TRIGINT is too low to damp re-triggering (TRIGTYPE FIRST)"],
       [Check("the queue's trigger settings", "DISPLAY QLOCAL({app_queue}) TRIGGER TRIGTYPE "
              "TRIGDPTH TRIGMPRI INITQ PROCESS"),
        Check("the trigger interval", "DISPLAY QMGR TRIGINT"),
        Check("whether a server has the queue open and how deep it is",
              "DISPLAY QSTATUS({app_queue}) TYPE(QUEUE) IPPROCS CURDEPTH")]),
    _r("PERSISTENT_REPLY",
       "persistent replies to temporary dynamic queues {queue} on {qmgr} were refused: a "
       "temporary dynamic queue holds nonpersistent messages only",
       ["the requesting application sends persistent requests and opens a model queue with "
        "DEFTYPE(TEMPDYN) for the replies; its servers reply with the request's persistence, "
        "as IBM recommends",
        "a server puts its replies as persistent whatever the request's persistence "
        "(MQPER_PERSISTENT, or MQPER_PERSISTENCE_AS_Q_DEF on a queue with DEFPSIST(YES))"],
       [Check("the model queues requesters open for replies: DEFTYPE(TEMPDYN) cannot hold these",
              "DISPLAY QMODEL(*) DEFTYPE DEFPSIST"),
        Check("the temporary dynamic queues that exist now, and who has them open",
              "DISPLAY QSTATUS({queue}) TYPE(QUEUE) CURDEPTH IPPROCS"),
        Check("give requesters a permanent dynamic reply queue (IBM: or a predefined one), "
              "once the requesting application is known",
              "ALTER QMODEL(<reply model>) DEFTYPE(PERMDYN)", change=True),
        Check("keep the refused replies aside until the requesters are fixed",
              "DESTQ({queue}) REASON(MQRC_PERSISTENT_NOT_ALLOWED) ACTION(FWD) "
              "FWDQ(<hold queue>) HEADER(YES)", "rules", "dlq", change=True)],
       _RC.format("q041190")),
    _r("TRIGGER_STORM_DEPTH",
       "{app_queue} (TRIGTYPE(DEPTH)) was triggered again and again: the queue manager turns "
       "TRIGGER off after every DEPTH trigger message, so something turned it back on each time",
       ["the server started for {app_queue} turns TRIGGER back on (MQSET of TriggerControl) "
        "before the depth falls below TRIGDPTH, so the queue manager makes the next trigger "
        "message at once (\"Conditions for a trigger event\", item 13)",
        "an operator or a script runs ALTER QLOCAL({app_queue}) TRIGGER repeatedly"],
       [Check("the queue's trigger settings and depth", "DISPLAY QLOCAL({app_queue}) TRIGGER "
              "TRIGTYPE TRIGDPTH TRIGMPRI INITQ PROCESS CURDEPTH"),
        Check("who has the queue open (the server that re-enables TRIGGER)",
              "DISPLAY QSTATUS({app_queue}) TYPE(HANDLE) ALL"),
        Check("whether an operator or script alters it: the command events, when CMDEV is on",
              "DISPLAY QMGR CMDEV")],
       "https://www.ibm.com/docs/en/ibm-mq/10.0.x?topic=queues-triggertype-mqlong"),
    _r("BACKOUT_QUEUE",
       "poison messages wait on backout queue {queue}: a consumer gave up on each after "
       "backing it out to the threshold",
       ["their content makes the consuming application fail"],
       [Check("how many wait there", "DISPLAY QSTATUS({queue}) TYPE(QUEUE) CURDEPTH LGETDATE")],
       BACKOUT_COUNT_PAGE),
    _r("BACKOUT_COUNT",
       "messages on {queue} were got and backed out again and again (BackoutCount at or past "
       "the threshold)",
       ["their content makes the consuming application fail",
        "{queue} has no BOQNAME, so nothing moves them away"],
       [Check("the backout threshold and backout queue",
              "DISPLAY QLOCAL({queue}) BOTHRESH BOQNAME HARDENBO"),
        Check("give {queue} a backout queue",
              "ALTER QLOCAL({queue}) BOQNAME(<backout queue>) BOTHRESH(<n>)", change=True)],
       BACKOUT_COUNT_PAGE),
    _r("BACKED_OUT",
       "messages on {queue} have been backed out, below the threshold",
       ["a consumer failed on them (once, or a loop under way)"],
       [Check("the backout threshold and backout queue",
              "DISPLAY QLOCAL({queue}) BOTHRESH BOQNAME")],
       BACKOUT_COUNT_PAGE),
    _r("RETRY_LOOP",
       "messages for {queue} go round between its consumer's backouts and a DLQ handler's "
       "RETRY",
       ["a rules table RETRYs MQRC_BACKOUT_THRESHOLD_REACHED dead letters to {queue}: each "
        "comes back with BackoutCount 0 and fails again"],
       [Check("the queue's backout settings", "DISPLAY QLOCAL({queue}) BOTHRESH BOQNAME"),
        Check("forward them aside instead of RETRY",
              "DESTQ({queue}) REASON(MQRC_BACKOUT_THRESHOLD_REACHED) ACTION(FWD) "
              "FWDQ(<hold queue>) HEADER(YES)", "rules", "dlq", change=True)],
       _RC.format("q043910")),
])


def mqsc_literal(value: str) -> str:
    """``value`` as a quoted MQSC (or runmqdlq rules-table) string: in single
    quotes, each quote doubled, so that the name keeps its case and cannot end
    the literal. ``mqsc_literal("O'HARA.Q")`` is ``'O''HARA.Q'``."""
    return "'" + str(value).replace("'", "''") + "'"


def remedy(name: str) -> Remedy | None:
    """The entry of :data:`REMEDIES` or :data:`SITUATIONS` named ``name``, or None."""
    return REMEDIES.get(name) or SITUATIONS.get(name)


def page_title(code: int, name: str) -> str:
    """The title of IBM's page for a reason code, ``"2053 (0805) (RC2053): MQRC_Q_FULL"``;
    for a feedback value, ``"MQFB_... (X'00000109')"``."""
    if name.startswith("MQRC_"):
        return f"{code} ({code & 0xFFFF:04X}) (RC{code}): {name}"
    return f"{name} (X'{code & 0xFFFFFFFF:08X}')"


__all__ = ["ASF_CODES_PAGE", "BACKOUT_COUNT_PAGE", "EXPIRY_PAGE", "Check", "DLH_REASON_PAGE",
           "LANGUAGES", "MD_FEEDBACK_PAGE",
           "PLACES", "REASON_CODES_PAGE", "REMEDIES", "REPORT_FEEDBACK", "Remedy", "SITUATIONS",
           "mqsc_literal", "page_title", "remedy"]
