"""dlqlens.spark.columns: expressions that cost the driver little to build."""

import pytest

from dlqlens.spark.columns import literal_map, sql_literal, sql_name
from tests.builders import jvm_round_trips

pytestmark = pytest.mark.spark

AWKWARD = {"Q'1": 'it said "no"', "back\\slash": "tab\there", "ÉBCDIC ✓": None, "": "empty key"}


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
    one = jvm_round_trips(monkeypatch, lambda: literal_map({"a": "b"}))
    many = jvm_round_trips(monkeypatch,
                           lambda: literal_map({f"k{i}": f"v{i}" for i in range(2000)}))
    assert one == many
    assert one < 30  # (create_map took about six per entry)


@pytest.mark.parametrize("entries, found", [({None: "x"}, "None"), ({"a": object()}, "object")])
def test_what_json_cannot_hold_is_refused_by_name(spark, entries, found):
    with pytest.raises(ValueError, match=found):
        literal_map(entries)


@pytest.mark.parametrize("value", ["plain", "Q'1", 'it said "no"', "back\\slash\\", "tab\there",
                                   "ÉBCDIC ✓", "", 0, -2035, 2**40, 1.5, True, False])
def test_sql_literal_reads_back_as_its_value(spark, value):
    """What ``sql_literal`` writes, Spark's parser reads back as the same value."""
    assert spark.range(1).selectExpr(f"{sql_literal(value)} AS v").first().v == value


def test_sql_name_names_the_top_level_column_of_that_name(spark):
    """A name with a backtick or a dot is one top-level column, never a path."""
    from dlqlens.spark.driver import local_frame

    df = local_frame(spark, [("odd", "dot", "plain")], "`a``b` string, `c.d` string, e string")
    got = df.selectExpr(*[f"{sql_name(n)} AS x{i}" for i, n in enumerate(["a`b", "c.d", "e"])])
    assert tuple(got.first()) == ("odd", "dot", "plain")
