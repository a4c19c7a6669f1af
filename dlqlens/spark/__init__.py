"""Spark integration: the ``mqcapture`` Python data source, a session helper,
and rows to the driver a partition at a time (:func:`local_rows`)."""

from dlqlens.spark.driver import local_rows
from dlqlens.spark.session import get_spark, load_capture, register

__all__ = ["get_spark", "load_capture", "local_rows", "register"]
