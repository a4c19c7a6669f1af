"""dmpmqmsg (and QLOAD, SupportPac MO03) message files: reader and writer.

A package: the reader, the writer and their helpers are moved as they were
into :mod:`dlqlens.capture.dmpmqmsg.fast`, to be split into modules by job.
"""

from dlqlens.capture.dmpmqmsg.fast import (CODES, banner, format_message, plan, read_dmpmqmsg,
                                           sniff, write_dmpmqmsg)

__all__ = ["CODES", "banner", "format_message", "plan", "read_dmpmqmsg", "sniff",
           "write_dmpmqmsg"]
