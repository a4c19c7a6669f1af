"""dlqlens.spark.columns: expressions that cost the driver little to build."""

import pytest

from dlqlens.spark.columns import literal_map

pytestmark = pytest.mark.spark

AWKWARD = {"Q'1": 'it said "no"', "back\\slash": "tab\there", "ÉBCDIC ✓": None, "": "empty key"}


def _round_trips(monkeypatch, build):
    """JVM round trips (py4j commands) made while ``build()`` runs.

    py4j's memory commands are not counted: they release the JVM objects of
    Python wrappers the garbage collector frees, whenever it runs (CI once
    counted 83 of them during the first build), not work of ``build()``.
    """
    import gc

    from py4j import clientserver, protocol

    sent = []
    original = clientserver.ClientServerConnection.send_command
    releases = protocol.MEMORY_COMMAND_NAME + protocol.MEMORY_DEL_SUBCOMMAND_NAME

    def counted(self, command):
        if not command.startswith(releases):
            sent.append(command)
        return original(self, command)

    gc.collect()

    monkeypatch.setattr(clientserver.ClientServerConnection, "send_command", counted)
    try:
        build()
    finally:
        monkeypatch.setattr(clientserver.ClientServerConnection, "send_command", original)
    return len(sent)


def test_a_literal_map_gives_what_create_map_gives(spark):
    from pyspark.sql import functions as F

    keys = sorted(AWKWARD)
    rows = spark.createDataFrame([(k,) for k in keys + ["absent"]], "k string")
    long_form = F.create_map(*[x for k in keys for x in (F.lit(k), F.lit(AWKWARD[k]))])
    got = rows.select("k", literal_map(AWKWARD)[F.col("k")].alias("short"),
                      long_form[F.col("k")].alias("long")).collect()
    assert {r["k"]: r["short"] for r in got} == {**AWKWARD, "absent": None}
    assert all(r["short"] == r["long"] for r in got)


def test_typed_keys_and_values_and_an_empty_map(spark):
    from pyspark.sql import functions as F

    rows = spark.createDataFrame([(2035,), (2053,), (1,)], "reason int")
    codes = literal_map({2035: 7, 2053: 9}, "int", "bigint")
    got = rows.select(codes[F.col("reason")].alias("v"),
                      literal_map({})[F.col("reason").cast("string")].alias("none")).collect()
    assert [r["v"] for r in got] == [7, 9, None]
    assert [r["none"] for r in got] == [None, None, None]
    assert dict(rows.select(codes.alias("m")).first()["m"]) == {2035: 7, 2053: 9}


def test_the_optimizer_folds_it_to_a_literal(spark):
    from pyspark.sql import functions as F

    rows = spark.range(3).select(literal_map({str(i): i for i in range(50)}, "string", "int")[
        F.col("id").cast("string")].alias("v"))
    optimized = rows._jdf.queryExecution().optimizedPlan().toString()
    assert "from_json" not in optimized and "map_from_entries" not in optimized
    assert [r["v"] for r in rows.collect()] == [0, 1, 2]


def test_building_it_costs_the_same_whatever_its_size(spark, monkeypatch):
    """The work counted: JVM round trips to build a map of 1 and of 2,000 entries."""
    one = _round_trips(monkeypatch, lambda: literal_map({"a": "b"}))
    many = _round_trips(monkeypatch, lambda: literal_map({f"k{i}": f"v{i}" for i in range(2000)}))
    assert one == many
    assert one < 30  # (create_map took about six per entry)


@pytest.mark.parametrize("entries, found", [({None: "x"}, "None"), ({"a": object()}, "object")])
def test_what_json_cannot_hold_is_refused_by_name(spark, entries, found):
    with pytest.raises(ValueError, match=found):
        literal_map(entries)
