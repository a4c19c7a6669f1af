"""Capture formats: the registry and format sniffing.

:data:`FORMATS` is the explicit list of readers (a test fails when a module
in :mod:`dlqlens.capture` that defines a reader is left out). ``format="auto"``
tries each format's ``sniff`` on the first bytes of a file, in registry order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from dlqlens.capture import amqsbcg, dmpmqmsg, hexdump, pcap, raw
from dlqlens.capture.slices import Slice
from dlqlens.decode.frames import Frames
from dlqlens.errors import CaptureError, UsageError

SNIFF_BYTES = 64 * 1024


def _no_banner(head: bytes) -> tuple[None, None]:
    """For a format whose files do not say where they were taken from (raw)."""
    return None, None


@dataclass(frozen=True)
class CaptureFormat:
    """One capture format: its name, sniffer, reader, writer and planner.

    ``read(path, source=None, piece=None, batch_size=...)`` frames a file (or
    one :class:`~dlqlens.capture.slices.Slice` of it), naming it ``source``
    (default ``path``) in its rows; ``plan(path,
    target_bytes)`` cuts a file into slices of about ``target_bytes``;
    ``plan_reads`` says whether planning reads the whole file (text formats
    count their messages) or only an index (raw). ``banner(head)`` gives the
    ``(queue manager, queue)`` a file says it was taken from, from its first
    :data:`SNIFF_BYTES` (None for what it does not say).
    """

    name: str
    description: str
    sniff: Callable[[bytes], bool]
    read: Callable[..., Iterator[Frames]]
    write: Callable[..., int]
    plan: Callable[[str, int], list[Slice]]
    plan_reads: bool
    banner: Callable[[bytes], tuple[str | None, str | None]] = _no_banner


FORMATS: dict[str, CaptureFormat] = {
    "raw": CaptureFormat("raw", "dlqlens raw capture or one MQMD+data message",
                         raw.sniff, raw.read_raw, raw.write_raw, raw.plan, False),
    "dmpmqmsg": CaptureFormat("dmpmqmsg", "dmpmqmsg / QLOAD message file",
                              dmpmqmsg.sniff, dmpmqmsg.read_dmpmqmsg, dmpmqmsg.write_dmpmqmsg,
                              dmpmqmsg.plan, True, dmpmqmsg.banner),
    "amqsbcg": CaptureFormat("amqsbcg", "amqsbcg browse output",
                             amqsbcg.sniff, amqsbcg.read_amqsbcg, amqsbcg.write_amqsbcg,
                             amqsbcg.plan, True, amqsbcg.banner),
    # MQ client traffic (issue 23 part 3): pcap/pcapng, MQ messages of TCP streams
    "pcap": CaptureFormat("pcap", "pcap/pcapng capture of MQ client traffic",
                          pcap.sniff, pcap.read_pcap, pcap.write_pcap, pcap.plan, False),
}
# --- hex dumps (issue 23): after the text formats, whose hex lines they would
# otherwise claim; each refuses unless its first record starts with an MQ structure
FORMATS.update({
    name: CaptureFormat(name, hexdump.DESCRIPTIONS[name], hexdump.SNIFF[name],
                        hexdump.READ[name], hexdump.WRITE[name], hexdump.plan, False)
    for name in hexdump.LAYOUTS})


def detect_format(path: str) -> str:
    """The name of the capture format of ``path``.

    Raises
    ------
    CaptureError
        When the file cannot be read, is empty or matches no format.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        raise CaptureError(f"{path}: cannot open: {exc.strerror or exc}") from exc
    if not head:
        raise CaptureError(f"{path}: empty file: no capture format to detect")
    for fmt in FORMATS.values():
        if fmt.sniff(head):
            return fmt.name
    raise CaptureError(
        f"{path}: unknown capture format: expected one of {', '.join(FORMATS)} "
        f"(raw magic, '* QLOAD' banner or 'A xxx' lines, amqsbcg banners, pcap/pcapng magic, "
        f"hex-dump lines starting with an MQ structure), "
        f"found {head[:24]!r}")


def get_format(name: str) -> CaptureFormat:
    try:
        return FORMATS[name.lower()]
    except KeyError:
        raise UsageError(f"unknown capture format {name!r}: expected auto or one of "
                         f"{', '.join(FORMATS)}") from None
