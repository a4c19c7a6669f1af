"""The Spark schema of decoded messages, converted from the Arrow schema.

There is one definition, :func:`dlqlens.decode.schema.message_schema`; this
module only converts it, so the Spark columns cannot drift from what the
decoder produces, and describes it (:func:`described_schema`: the metadata
Parquet directories keep).
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def spark_schema():
    """The :class:`pyspark.sql.types.StructType` of an ``mqcapture`` DataFrame."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from dlqlens.decode.schema import message_schema

    return from_arrow_schema(message_schema())


def described_schema():
    """The Spark schema of a decoded message with each field's metadata.

    Returns
    -------
    pyspark.sql.types.StructType
        :func:`dlqlens.spark.schema.spark_schema` with, on every top-level
        field, ``{"description": ...}`` (the column's entry in
        :mod:`dlqlens.decode.schema`'s docstring, the text of
        ``docs/columns.md``) and on every field of the ``md``, ``dlh``,
        ``xqh`` and ``tm`` structs ``{"description", "mq_type", "mq_length"}``
        from the MQ field tables (:mod:`dlqlens.mq.structs`: units such as
        tenths of a second are in the descriptions). Parquet keeps it (Spark
        writes it in the files' footer).
    """
    from pyspark.sql.types import StructField, StructType

    from dlqlens.mq.structs import STRUCTS

    tops = _column_descriptions()
    by_struct = {"md": "MQMD", "dlh": "MQDLH", "xqh": "MQXQH", "tm": "MQTM"}
    fields = []
    for f in spark_schema().fields:
        dt = f.dataType
        st = STRUCTS.get(by_struct.get(f.name, ""))
        if st is not None and isinstance(dt, StructType):
            docs = {x.name: x for x in st.fields}
            dt = StructType([StructField(g.name, g.dataType, g.nullable, (
                {"description": docs[g.name].doc, "mq_type": docs[g.name].type,
                 "mq_length": docs[g.name].length} if g.name in docs else dict(g.metadata)))
                for g in dt.fields])
        meta = {"description": tops[f.name]} if f.name in tops else dict(f.metadata)
        fields.append(StructField(f.name, dt, f.nullable, meta))
    return StructType(fields)


def _column_descriptions() -> dict[str, str]:
    """Column -> description, from the ``Columns`` section of the schema's docstring."""
    from dlqlens.decode import schema

    doc = schema.__doc__.split("Columns\n-------\n", 1)[1]
    out: dict[str, str] = {}
    names: list[str] = []
    text: list[str] = []

    def flush():
        for n in names:
            out[n] = " ".join(t.strip() for t in text).strip()

    for line in doc.splitlines():
        if line and not line.startswith(" "):
            flush()
            names = [n.strip() for n in line.split(":", 1)[0].split(",")]
            text = []
        elif line.strip():
            text.append(line)
    flush()
    return out
