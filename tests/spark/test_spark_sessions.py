"""Pointing dlqlens at a Spark (issue 22, 4): ``--master``, ``--conf``,
``--remote``/``SPARK_REMOTE`` on every Spark verb, and a session dlqlens is
handed (a notebook's) left as it was found."""

from __future__ import annotations

import json
import os

import pytest

from dlqlens.cli import build_parser
from dlqlens.errors import UsageError
from dlqlens.spark.session import (CONNECT_SETTINGS, DRIVER_GC_OPTIONS, GC_LOCKER_OPTIONS,
                                   JVM_OPTION_VARIABLES, ONE_SHOT_JIT_OPTIONS,
                                   RETAINED_EXECUTIONS_WITHOUT_UI, connect_session,
                                   selects_collector, selects_compiler, session_settings,
                                   spark_session)
from tests.conftest import DATASETS, ROOT

#: Every verb that runs on Spark, with the arguments it needs besides the Spark options.
SPARK_VERBS = [
    ["report", "x"], ["summary", "x"], ["audit", "x"], ["detect", "x"],
    ["export", "x", "--out", "y"], ["rules", "replay", "t", "x"], ["rules", "diff", "a", "b", "x"],
    ["rules", "check", "t", "--capture", "x"],
]


@pytest.mark.parametrize("verb", SPARK_VERBS, ids=lambda v: " ".join(v[:2]))
def test_every_spark_verb_takes_master_conf_and_remote(verb):
    args = build_parser().parse_args(verb + ["--conf", "spark.executor.memory=2g",
                                             "--conf", "spark.executorEnv.MY_VAR=a=b",
                                             "--master", "spark://127.0.0.1:7077"])
    assert args.conf == [("spark.executor.memory", "2g"), ("spark.executorEnv.MY_VAR", "a=b")]
    assert args.master == "spark://127.0.0.1:7077" and args.remote is None
    args = build_parser().parse_args(verb + ["--remote", "sc://127.0.0.1:15002"])
    assert args.remote == "sc://127.0.0.1:15002" and args.master is None and args.conf == []


@pytest.mark.parametrize("bad", ["spark.executor.memory", "=2g", ""])
def test_conf_without_key_and_value_is_refused_by_name(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["detect", "x", "--conf", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--conf" in err and "expected KEY=VALUE" in err and repr(bad) in err


@pytest.fixture
def no_session(monkeypatch):
    """As in a new process: no session active (whatever this test run started)."""
    import dlqlens.spark.session as session

    monkeypatch.setattr(session, "_active_session", lambda: None)


def test_master_and_connect_url_together_are_refused(monkeypatch, no_session):
    with pytest.raises(UsageError, match="--master local.2. and the Spark Connect URL sc://h:1"):
        spark_session("local[2]", remote="sc://h:1")
    monkeypatch.setenv("SPARK_REMOTE", "sc://h:2")  # the environment: the same refusal
    with pytest.raises(UsageError, match="--master yarn and the Spark Connect URL sc://h:2"):
        spark_session("yarn")


def test_connect_url_must_be_sc():
    with pytest.raises(UsageError, match=r"expected sc://host:port"):
        connect_session("http://127.0.0.1:15002")


@pytest.mark.spark
def test_connect_settings_are_get_sparks(spark):
    """A Connect session gets the run-time settings of the sessions get_spark makes
    (the fixture's own shuffle partitions aside)."""
    for key, value in CONNECT_SETTINGS.items():
        if key != "spark.sql.shuffle.partitions":
            assert spark.conf.get(key) == value, key


@pytest.mark.spark
def test_get_spark_turns_off_pysparks_call_site_capture(spark):
    """Each Column function PySpark builds would otherwise cost about ten JVM round trips
    more (the detectors' construction: 31,753 round trips with it, 11,543 without)."""
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"


def _conf(spark) -> dict:
    """Everything set on a session: the SparkContext's conf and the SQL conf."""
    return {**dict(spark.sparkContext.getConf().getAll()),
            **{r["key"]: r["value"] for r in spark.sql("SET").collect()}}


@pytest.mark.spark
def test_a_handed_session_is_left_as_it_was(spark, tmp_path, monkeypatch):
    """The session a notebook hands dlqlens: spark_session returns it untouched
    (``--conf`` refused), and loading, the detectors, the replay, the quality
    suites and the report leave its configuration as it was."""
    from dlqlens.detect import run_detectors
    from dlqlens.quality import audit
    from dlqlens.report import build_report
    from dlqlens.rules import parse_file
    from dlqlens.rules.replay import replay
    from dlqlens.spark.session import load_capture

    spark.conf.set("spark.sql.shuffle.partitions", "3")  # a user's own choice
    try:
        before = _conf(spark)
        assert spark_session() is spark
        assert spark_session("local[*]") is spark  # a master is for a session dlqlens creates
        monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:1")  # so is SPARK_REMOTE
        assert spark_session() is spark
        monkeypatch.delenv("SPARK_REMOTE")
        with pytest.raises(UsageError, match="already active.*does not change a session"):
            spark_session(conf={"spark.sql.shuffle.partitions": "8"})
        df = load_capture(spark, str(DATASETS))
        findings, links = run_detectors(df)
        assert findings.count() > 0 and links.count() > 0
        table = parse_file(str(ROOT / "datasets/rules/shop.rul"))
        assert replay(table, df).count() == 669
        assert audit(df, rules=table).results
        build_report(df, rules=table).write(str(tmp_path / "r.html"))
        after = _conf(spark)
        assert after == before
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "2")  # the fixture's


def test_spark_remote_without_master_makes_a_connect_session(monkeypatch, no_session):
    """SPARK_REMOTE and no master: a Connect session is asked for (an unreachable
    URL fails in the gRPC channel, not in a classic session)."""
    monkeypatch.setenv("SPARK_REMOTE", "ftp://not-connect")
    with pytest.raises(UsageError, match="ftp://not-connect.*expected sc://"):
        spark_session()
    assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") is None


# A small capture's session (issue 21, the first answer): tuned for a short run, and only
# when dlqlens creates the session. No JVM: get_spark is replaced by a recorder.

def test_a_small_capture_gets_the_short_run_settings(monkeypatch):
    import dlqlens.spark.source as source
    from dlqlens.commands.common import plan_captures
    from dlqlens.spark.session import SMALL_INPUT_SETTINGS, small_input_settings

    pieces = plan_captures([str(DATASETS)], "auto")
    assert small_input_settings(pieces) == SMALL_INPUT_SETTINGS
    assert SMALL_INPUT_SETTINGS["spark.sql.adaptive.enabled"] == "false"
    # one byte over the driver-decoding limit: the session keeps get_spark's settings
    monkeypatch.setattr(source, "LOCAL_BYTES", source.planned_bytes(pieces) - 1)
    assert small_input_settings(pieces) == {}


def test_a_decoded_directory_is_never_taken_as_small():
    from dlqlens.spark.parquet import MessageInput
    from dlqlens.spark.session import small_input_settings

    # its sources name the capture files it was decoded from (not the Parquet's size)
    assert small_input_settings(MessageInput(["d"], [{"sources": []}])) == {}


def test_the_short_run_settings_reach_only_a_session_dlqlens_creates(monkeypatch, no_session):
    from types import SimpleNamespace

    import dlqlens.spark.session as session
    from dlqlens.cli import build_parser
    from dlqlens.commands.common import load_captures

    made = []

    def get_spark(master, app, spark_conf=None, **conf):
        made.append(SimpleNamespace(conf=_Conf(spark_conf or {}), spark_conf=spark_conf,
                                    tuning=conf))
        return made[-1]

    monkeypatch.setattr(session, "get_spark", get_spark)
    monkeypatch.setattr(session, "load_capture", lambda spark, paths, **kw: spark)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    sample = str(DATASETS)
    args = build_parser().parse_args(
        ["summary", sample, "--conf", "spark.sql.shuffle.partitions=3"])
    new = load_captures(args, [sample])[0]
    assert made == [new]
    assert new.tuning.pop("batch") is True  # a command's session: the parallel collector
    # called as a function (a notebook, a program that goes on): never C1 only
    assert new.tuning.pop("one_shot") is False
    # set on the session itself (not given to the builder, so not the SparkContext's);
    # --conf wins over them
    assert not set(new.tuning) & set(session.SMALL_INPUT_SETTINGS)
    assert new.conf["spark.sql.adaptive.enabled"] == "false"
    assert new.conf["spark.sql.shuffle.partitions"] == "3"
    assert new.spark_conf == {"spark.sql.shuffle.partitions": "3"}
    # a session already active is handed back as it is: no setting reaches it
    theirs = SimpleNamespace(conf=_Conf())
    monkeypatch.setattr(session, "_active_session", lambda: theirs)
    monkeypatch.setattr(session, "register", lambda s: None)
    args = build_parser().parse_args(["summary", sample])
    assert load_captures(args, [sample])[0] is theirs
    assert len(made) == 1 and theirs.conf == {}


class _Conf(dict):
    """A session's runtime configuration, as ``spark.conf`` answers (no JVM)."""

    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value):
        self[key] = value

    def unset(self, key):
        self.pop(key, None)


# An eager analysis (the report, the summary, the audit) of a small capture in a session
# dlqlens made (issue 21: a warm notebook's report): the short run's settings while it
# runs, the session's own after. No JVM: sessions of _Conf.

def test_short_run_changes_only_a_session_dlqlens_made_and_gives_it_back():
    from types import SimpleNamespace

    import dlqlens.spark.session as session
    from dlqlens.spark.session import SMALL_INPUT_SETTINGS, short_run

    asked = []

    def small():
        asked.append(True)
        return True

    # a session dlqlens was handed (no mark): nothing changed, nothing counted
    theirs = SimpleNamespace(conf=_Conf({"spark.sql.shuffle.partitions": "8"}))
    with short_run(SimpleNamespace(sparkSession=theirs), small) as changed:
        assert not changed and theirs.conf == {"spark.sql.shuffle.partitions": "8"}
    assert asked == []
    # one get_spark made, whose caller gave the shuffle partitions (theirs for good)
    ours = SimpleNamespace(conf=_Conf({"spark.sql.shuffle.partitions": "8",
                                       "spark.sql.adaptive.enabled": "true"}))
    session._mark_own_session(ours, [k for k in SMALL_INPUT_SETTINGS
                                     if k != "spark.sql.shuffle.partitions"])
    own = dict(ours.conf)
    df = SimpleNamespace(sparkSession=ours)
    with short_run(df, small) as changed:
        assert changed and asked == [True]
        assert ours.conf["spark.sql.adaptive.enabled"] == "false"
        assert ours.conf["spark.sql.codegen.wholeStage"] == "false"
        assert ours.conf["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
        assert ours.conf["spark.sql.shuffle.partitions"] == "8"
        with short_run(df, small) as inner:  # an analysis inside another: nothing more
            assert not inner
        assert asked == [True]
    assert ours.conf == own  # unset keys unset again
    with short_run(df, lambda: False) as changed:  # a large capture
        assert not changed and ours.conf == own
    # a key changed since is the user's: left as it is, the others set
    ours.conf.set("spark.sql.codegen.wholeStage", "true")
    with short_run(df, small):
        assert ours.conf["spark.sql.codegen.wholeStage"] == "true"
        assert ours.conf["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    # a failed analysis gives them back too
    with pytest.raises(RuntimeError, match="boom"):
        with short_run(df, small):
            raise RuntimeError("boom")
    assert ours.conf == {**own, "spark.sql.codegen.wholeStage": "true"}
    # a command's session for a small capture already runs short: nothing to do
    command = SimpleNamespace(conf=_Conf())
    session._mark_own_session(command, list(SMALL_INPUT_SETTINGS))
    command.conf.update(SMALL_INPUT_SETTINGS)
    asked.clear()
    with short_run(SimpleNamespace(sparkSession=command), small) as changed:
        assert not changed and asked == []


@pytest.mark.spark
def test_get_spark_marks_the_session_it_creates_and_no_other(spark):
    """The suite's session is get_spark's: marked, with the keys its caller did not
    give (the shuffle partitions are the fixture's). get_spark called again while it is
    active hands it back (getOrCreate) without marking it anew."""
    from dlqlens.spark.session import OWN_SESSION_KEY, SMALL_INPUT_SETTINGS, get_spark

    mark = spark.conf.get(OWN_SESSION_KEY)
    own = json.loads(mark)["own"]
    assert set(own) == set(SMALL_INPUT_SETTINGS) - {"spark.sql.shuffle.partitions"}
    assert own["spark.sql.codegen.factoryMode"] is None  # Spark's default: not set
    try:
        spark.conf.set(OWN_SESSION_KEY, "a mark of someone else's")
        assert get_spark("local[2]", app_name="dlqlens-tests",
                         spark_sql_shuffle_partitions=2) is spark
        assert spark.conf.get(OWN_SESSION_KEY) == "a mark of someone else's"
    finally:
        spark.conf.set(OWN_SESSION_KEY, mark)


def test_a_command_session_is_retuned_for_each_command_and_a_handed_one_never(monkeypatch):
    """A session an earlier command made for a small capture (adaptive execution
    off, one shuffle partition) gets its own settings back when the next command
    of the process reads a large one, and the short run's again for a small one;
    a key the user set with --conf when it was made, or changed since, stays
    theirs; a session dlqlens was handed (no mark, or one that does not parse)
    is never changed."""
    from types import SimpleNamespace

    import dlqlens.spark.session as session
    from dlqlens.spark.session import COMMAND_SESSION_KEY, SMALL_INPUT_SETTINGS

    def made_with(user_conf, before):
        monkeypatch.setattr(session, "_active_session", lambda: None)
        monkeypatch.setattr(session, "get_spark", lambda master, app, spark_conf=None, **kw:
                            SimpleNamespace(conf=_Conf({**before, **(spark_conf or {})})))
        return session.spark_session(None, user_conf, **SMALL_INPUT_SETTINGS)

    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setattr(session, "register", lambda s: None)
    # spark-defaults.conf gave the session 8 partitions; AQE left at Spark's default
    ours = made_with({}, {"spark.sql.shuffle.partitions": "8"})
    assert {k: ours.conf[k] for k in SMALL_INPUT_SETTINGS} == SMALL_INPUT_SETTINGS
    pinned = made_with({"spark.sql.shuffle.partitions": "3"}, {})
    assert json.loads(pinned.conf[COMMAND_SESSION_KEY])["own"] == {
        "spark.sql.adaptive.enabled": None, "spark.sql.codegen.factoryMode": None,
        "spark.sql.codegen.wholeStage": None}  # the partitions are the user's
    theirs = SimpleNamespace(conf=_Conf(SMALL_INPUT_SETTINGS))
    garbled = SimpleNamespace(conf=_Conf({**SMALL_INPUT_SETTINGS, COMMAND_SESSION_KEY: "x"}))

    def command(active, **tuning):
        monkeypatch.setattr(session, "_active_session", lambda: active)
        assert session.spark_session(None, None, spark_ui_showConsoleProgress="false",
                                     **tuning) is active

    for active in (ours, pinned, theirs, garbled):
        command(active)  # a large capture
    assert "spark.sql.adaptive.enabled" not in ours.conf  # Spark's default again
    assert ours.conf["spark.sql.shuffle.partitions"] == "8"  # the session's own again
    assert "spark.sql.adaptive.enabled" not in pinned.conf
    assert pinned.conf["spark.sql.shuffle.partitions"] == "3"
    assert {k: theirs.conf[k] for k in SMALL_INPUT_SETTINGS} == SMALL_INPUT_SETTINGS
    assert {k: garbled.conf[k] for k in SMALL_INPUT_SETTINGS} == SMALL_INPUT_SETTINGS
    command(ours, **SMALL_INPUT_SETTINGS)  # a small one again
    assert {k: ours.conf[k] for k in SMALL_INPUT_SETTINGS} == SMALL_INPUT_SETTINGS
    ours.conf.set("spark.sql.shuffle.partitions", "16")  # the user's change: kept
    command(ours)
    assert ours.conf["spark.sql.shuffle.partitions"] == "16"
    assert "spark.sql.adaptive.enabled" not in ours.conf


@pytest.mark.parametrize("line, major", [('openjdk version "17.0.15" 2025-04-15', 17),
                                         ('java version "1.8.0_402"', 8),
                                         ('openjdk version "21" 2023-09-19', 21),
                                         ('openjdk version "22.0.1" 2024-04-16', 22),
                                         ("no java here", None)])
def test_java_major(line, major):
    from dlqlens.spark.session import java_major

    assert java_major(line) == major


@pytest.mark.spark
def test_the_driver_jvm_retries_allocation_past_the_gc_locker(spark):
    """get_spark's JVM (the fixture's: a long session, not a batch one) on Java 17
    to 21 runs with GC_LOCKER_OPTIONS, and with Java's own collector (G1) unless the
    environment chose one: the parallel collector, which gave up ("GC overhead limit
    exceeded") in this suite's long session, is for a command's session only."""
    from dlqlens.spark.session import check_java, java_major

    flags = list(spark.sparkContext._jvm.java.lang.management.ManagementFactory
                 .getRuntimeMXBean().getInputArguments())
    if not any(selects_collector(os.environ.get(v)) for v in JVM_OPTION_VARIABLES):
        assert not any(selects_collector(f) for f in flags), flags
        collectors = {b.getName() for b in spark.sparkContext._jvm.java.lang.management
                      .ManagementFactory.getGarbageCollectorMXBeans()}
        assert "G1 Young Generation" in collectors, collectors
    if java_major(check_java()) >= 22:
        assert not any("GCLockerRetryAllocationCount" in f for f in flags)
    else:
        for option in GC_LOCKER_OPTIONS.split():
            assert option in flags


def test_session_settings_keep_few_query_descriptions_only_without_the_ui():
    key = "spark.sql.ui.retainedExecutions"
    assert session_settings(17)[key] == str(RETAINED_EXECUTIONS_WITHOUT_UI)
    # the UI on: Spark's own default (the queries are there to be looked at)
    assert key not in session_settings(17, {"spark.ui.enabled": "true"})
    assert key not in session_settings(17, spark_ui_enabled="true")
    # the caller's own value wins
    assert session_settings(17, {key: "500"})[key] == "500"
    # the caller's driver options after ours: the collector, then the GC-locker ones
    # (Java 17 to 21 only)
    jvm = "spark.driver.extraJavaOptions"
    opts = session_settings(17, {jvm: "-Xss4m"}, environ={}, batch=True)
    assert opts[jvm] == f"{DRIVER_GC_OPTIONS} {GC_LOCKER_OPTIONS} -Xss4m"
    assert session_settings(22, environ={}, batch=True)[jvm] == DRIVER_GC_OPTIONS
    # a long session (a notebook's, the default) keeps Java's own collector
    assert session_settings(17, {jvm: "-Xss4m"}, environ={})[jvm] == f"{GC_LOCKER_OPTIONS} -Xss4m"
    assert jvm not in session_settings(22, environ={})


def test_the_jvm_keeps_more_classes_of_generated_code_than_sparks_default(spark):
    """The detectors over the sample generate 264 classes: with Spark's 100 kept,
    each run compiled them all again. The caller's own value wins."""
    from dlqlens.spark.session import CODEGEN_CACHE_ENTRIES

    key = "spark.sql.codegen.cache.maxEntries"
    assert CODEGEN_CACHE_ENTRIES >= 500
    assert session_settings(17)[key] == str(CODEGEN_CACHE_ENTRIES)
    assert session_settings(17, batch=True, one_shot=True)[key] == str(CODEGEN_CACHE_ENTRIES)
    assert session_settings(17, {key: "50"})[key] == "50"
    assert session_settings(17, spark_sql_codegen_cache_maxEntries=60)[key] == "60"
    # what the JVM's code generator reads when it makes its cache (a static setting)
    assert spark._jvm.org.apache.spark.sql.internal.SQLConf.get().codegenCacheMaxEntries() \
        == CODEGEN_CACHE_ENTRIES


def test_a_batch_sessions_jvm_starts_on_the_parallel_collector_without_its_limit():
    """The suite's JVM is a long session's, so no test starts a batch one through
    Spark: the installed Java is started here with a batch session's driver options
    (as session_settings gives them for this Java) and reports its flags. The
    parallel collector throws "GC overhead limit exceeded" (and Spark's handler then
    stops the driver) where G1 goes on: the limit must be off."""
    import re
    import subprocess

    from dlqlens.spark.session import check_java, java_executable, java_major

    major = java_major(check_java())
    java = java_executable()

    def flags(**kind):
        options = session_settings(major, environ={}, batch=True,
                                   **kind)["spark.driver.extraJavaOptions"]
        run = subprocess.run([java, *options.split(), "-XX:+PrintFlagsFinal", "-version"],
                             capture_output=True, text=True, env={
                                 k: v for k, v in os.environ.items()
                                 if k not in JVM_OPTION_VARIABLES})
        assert run.returncode == 0, run.stderr
        return dict(re.findall(r"^\s*\S+\s+(\w+)\s+:?=\s+(\S+)", run.stdout, re.M))

    batch, one_shot = flags(), flags(one_shot=True)
    for f in (batch, one_shot):
        assert f["UseParallelGC"] == "true" and f["UseG1GC"] == "false"
        assert f["UseGCOverheadLimit"] == "false"
        if major < 22:
            assert f["GCLockerRetryAllocationCount"] == "100"
    # a one-shot command on a small input: C1 only; any other batch session: both compilers
    assert one_shot["TieredStopAtLevel"] == "1"
    assert batch["TieredStopAtLevel"] == "4"


@pytest.mark.parametrize("where", ["conf", *JVM_OPTION_VARIABLES])
def test_a_collector_chosen_by_the_caller_is_kept(where):
    """HotSpot refuses to start with two collectors: when the caller's driver
    options, or a JVM option variable of the environment, choose one, get_spark
    adds none."""
    jvm = "spark.driver.extraJavaOptions"
    conf = {jvm: "-Xss4m -XX:+UseG1GC"} if where == "conf" else None
    environ = {} if where == "conf" else {where: "-XX:+UseZGC"}
    own = (conf or {}).get(jvm)
    assert session_settings(17, conf, environ=environ, batch=True)[jvm] == " ".join(
        o for o in (GC_LOCKER_OPTIONS, own) if o)
    assert session_settings(22, conf, environ=environ, batch=True).get(jvm) == own
    assert not selects_collector("-Xss4m -XX:+UseCompressedOops -XX:MaxGCPauseMillis=50")
    assert selects_collector("-XX:+UseSerialGC")


@pytest.mark.spark
def test_the_session_forgets_finished_queries_past_the_limit(spark):
    """Three times the limit of queries run; the driver's store keeps no more than the
    limit (Spark trims it in the background: waited for, a few seconds at most)."""
    import time

    from dlqlens.spark.session import RETAINED_EXECUTIONS_WITHOUT_UI

    store = spark._jsparkSession.sharedState().statusStore()
    for _ in range(3 * RETAINED_EXECUTIONS_WITHOUT_UI):
        spark.range(3).count()
    deadline = time.monotonic() + 30
    while store.executionsCount() > RETAINED_EXECUTIONS_WITHOUT_UI and time.monotonic() < deadline:
        time.sleep(0.2)
    assert store.executionsCount() <= RETAINED_EXECUTIONS_WITHOUT_UI


def test_c1_only_for_a_one_shot_batch_session_unless_the_caller_chose():
    """A one-shot command on a small input compiles with C1 only; never a long
    session (a notebook's JVM would run every later analysis on C1's code), never
    over the caller's own compilation options."""
    jvm = "spark.driver.extraJavaOptions"
    assert session_settings(22, environ={}, batch=True, one_shot=True)[jvm] == \
        f"{DRIVER_GC_OPTIONS} {ONE_SHOT_JIT_OPTIONS}"
    assert ONE_SHOT_JIT_OPTIONS not in session_settings(22, environ={}, batch=True)[jvm]
    assert jvm not in session_settings(22, environ={}, one_shot=True)
    for own in ("-XX:TieredStopAtLevel=4", "-XX:-TieredCompilation", "-Xint"):
        assert session_settings(22, {jvm: own}, environ={}, batch=True, one_shot=True)[jvm] \
            == f"{DRIVER_GC_OPTIONS} {own}"
        assert session_settings(22, environ={"JDK_JAVA_OPTIONS": own}, batch=True,
                                one_shot=True)[jvm] == DRIVER_GC_OPTIONS
    assert not selects_compiler("-Xss4m -XX:+UseParallelGC -XX:TieredStopAtLevelX")
    assert selects_compiler("-XX:+TieredCompilation")


def test_only_the_console_script_runs_a_command_one_shot(monkeypatch, no_session):
    """``dlqlens`` (the console script, dlqlens.cli:run) says the process ends with
    the command; a small input then gets C1 only, a large one not; main() called
    from Python (a notebook) never says so."""
    import argparse
    import tomllib
    from types import SimpleNamespace

    import dlqlens.cli as cli
    import dlqlens.spark.session as session
    import dlqlens.spark.source as source
    from dlqlens.commands.common import load_captures

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["dlqlens"] == "dlqlens.cli:run"
    # main() hands the command its one_shot
    told = []
    parsed = argparse.Namespace(func=lambda args: told.append(args.one_shot) or 0)
    monkeypatch.setattr(cli, "build_parser", lambda: SimpleNamespace(
        parse_args=lambda argv: parsed))
    assert cli.main(["x"], one_shot=True) == 0 and cli.main(["x"]) == 0
    assert told == [True, False]
    # run(): main(argv, one_shot=True), then exit with its status
    seen = []
    monkeypatch.setattr(cli, "main", lambda argv, one_shot=False: seen.append(
        (argv, one_shot)) or 3)
    monkeypatch.setattr("sys.argv", ["dlqlens", "summary", "x"])
    with pytest.raises(SystemExit) as stop:
        cli.run()
    assert stop.value.code == 3 and seen == [(["summary", "x"], True)]
    # the command's session: C1 only for a one-shot command on a small input
    made = []

    def get_spark(master, app, spark_conf=None, **conf):
        made.append(conf)
        return SimpleNamespace(conf=_Conf(spark_conf or {}))

    monkeypatch.setattr(session, "get_spark", get_spark)
    monkeypatch.setattr(session, "load_capture", lambda spark, paths, **kw: spark)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    sample = str(DATASETS)
    for one_shot, limit, c1 in [(True, None, True), (False, None, False), (True, 1, False)]:
        if limit is not None:  # a capture over the driver-decoding limit: not small
            monkeypatch.setattr(source, "LOCAL_BYTES", limit)
        args = build_parser().parse_args(["summary", sample])
        args.one_shot = one_shot
        load_captures(args, [sample])
        assert made[-1]["batch"] is True and made[-1]["one_shot"] is c1, (one_shot, limit)
        # dlqlens's data sources left unregistered in a one-shot process, whatever its input
        assert made[-1]["sources"] is (not one_shot), (one_shot, limit)


def test_get_spark_registers_the_data_sources_unless_told_not_to(spark, monkeypatch):
    """``sources=False`` (a one-shot command's session): no registration, so no
    look-up of Python data sources by Spark (a Python process, about 2 s); by
    default (a notebook's session) the sources are registered."""
    import dlqlens.spark.session as session
    from dlqlens.spark.session import get_spark

    registered = []
    monkeypatch.setattr(session, "register", registered.append)
    # the fixture's own arguments: getOrCreate hands the suite's session back, unchanged
    same = dict(app_name="dlqlens-tests", spark_sql_shuffle_partitions=2)
    assert get_spark("local[2]", sources=False, **same) is spark
    assert registered == []
    assert get_spark("local[2]", **same) is spark
    assert registered == [spark]
