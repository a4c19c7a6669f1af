"""Slices: byte ranges of a capture file that start and end at message boundaries.

A large capture is read as several slices (one Spark partition each). Every
format plans its own slices (``plan`` in each reader module) and reads one
when given it; a slice carries what its reader cannot know on its own: the
message number and line number it starts at.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slice:
    """A byte range of a capture that starts and ends at message boundaries.

    Attributes
    ----------
    path : str
    start, stop : int or None
        Byte offsets ``[start, stop)`` in the file; None for both means the
        whole file.
    first_number : int
        1-based message number of the first message framed in the range.
    first_line : int
        1-based line number of the range's first line (text captures; 1 for
        binary ones).
    messages : int or None
        How many messages the range frames, when planning counted them (text
        captures); the reader checks it.
    """

    path: str
    start: int | None = None
    stop: int | None = None
    first_number: int = 1
    first_line: int = 1
    messages: int | None = None
