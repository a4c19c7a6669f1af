"""dlqlens: analytics and forensics for IBM MQ dead-letter queue captures.

``read_capture`` decodes captures in this process (no JVM); for Spark use
:func:`dlqlens.spark.load_capture` or ``spark.read.format("mqcapture")``.
"""

from dlqlens.capture.reader import CaptureResult, read_capture
from dlqlens.version import version as _version

__all__ = ["CaptureResult", "read_capture"]
__version__ = _version()
