"""The Spark schema of decoded messages, converted from the Arrow schema.

There is one definition, :func:`dlqlens.decode.schema.message_schema`; this
module only converts it, so the Spark columns cannot drift from what the
decoder produces.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def spark_schema():
    """The :class:`pyspark.sql.types.StructType` of an ``mqcapture`` DataFrame."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from dlqlens.decode.schema import message_schema

    return from_arrow_schema(message_schema())
