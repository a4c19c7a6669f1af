"""amqsbcg output (IBM's browse sample): reader and writer.

A package: the reader, the writer and their helpers are moved as they were
into :mod:`dlqlens.capture.amqsbcg.fast`, to be split into modules by job.
"""

from dlqlens.capture.amqsbcg.fast import (banner, format_message, plan, read_amqsbcg, sniff,
                                          write_amqsbcg)

__all__ = ["banner", "format_message", "plan", "read_amqsbcg", "sniff", "write_amqsbcg"]
