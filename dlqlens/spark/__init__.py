"""Spark integration: the ``mqcapture`` Python data source, a session helper,
rows to the driver a partition at a time (:func:`local_rows`) and the JVM
objects of dropped DataFrames released (:func:`release_dropped_frames`)."""

from dlqlens.spark.driver import local_rows, release_dropped_frames
from dlqlens.spark.session import get_spark, load_capture, register

__all__ = ["get_spark", "load_capture", "local_rows", "register", "release_dropped_frames"]
