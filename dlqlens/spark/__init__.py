"""Spark integration: the ``mqcapture`` Python data source and a session helper."""

from dlqlens.spark.session import get_spark, load_capture, register

__all__ = ["get_spark", "load_capture", "register"]
