"""A local Spark session set up for dlqlens, and loading captures into it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from dlqlens.errors import DlqlensError, UsageError


#: ``spark.sql.codegen.hugeMethodLimit`` of the sessions :func:`get_spark` makes:
#: the bytecode size (bytes) above which HotSpot does not JIT-compile a method.
HUGE_METHOD_LIMIT = 8000


#: The settings of :func:`get_spark` a session can take at run time (Spark SQL
#: configurations): :func:`get_spark` sets them with its others, and
#: :func:`spark_session` sets them on a Spark Connect session it creates (the
#: others, such as ``spark.ui.enabled``, are the server's).
#: ``spark.sql.session.timeZone`` matters for results: times are shown in UTC.
CONNECT_SETTINGS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    # HotSpot's JIT limit; see get_spark's docstring (rules-table replays of 100+ rules)
    "spark.sql.codegen.hugeMethodLimit": str(HUGE_METHOD_LIMIT),
    # no join turned into a broadcast at run time by adaptive execution: it judges a side by
    # its shuffle's compressed bytes, and a side of repetitive rows (queue names, finding ids)
    # under 10 MB compressed is a hash table many times that size, copied into each task
    # (Spark 4): a million-message report from a decoded directory failed with "Could not
    # allocate memory to grow BytesToBytesMap" in the default 1 GB heap, and passed without.
    # The detectors' own broadcasts (small lookup tables) are hints, and stay.
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "-1",
}


#: HotSpot options of the driver JVM of a session :func:`get_spark` creates, on
#: Java 17 to 21: a thread that cannot allocate while other threads hold the
#: GC locker (JNI critical sections: lz4 shuffle blocks, snappy and zstd
#: Parquet pages, Arrow) retries only twice (``GCLockerRetryAllocationCount``,
#: a diagnostic flag) and then throws ``OutOfMemoryError`` with the heap far
#: from full, and Spark's handler of uncaught errors stops the JVM. Seen here
#: as "Retried waiting for GCLocker too often allocating N words" before the
#: driver vanished (a report of a million messages from a decoded directory,
#: the detectors at ten million). OpenJDK bug JDK-8192647, fixed in Java 22,
#: where the flag no longer exists.
GC_LOCKER_OPTIONS = "-XX:+UnlockDiagnosticVMOptions -XX:GCLockerRetryAllocationCount=100"

#: The garbage collector of the driver JVM of a batch session (one command's,
#: ended with it: ``get_spark(..., batch=True)``, which :func:`spark_session`
#: asks for): the parallel collector instead of Java's default G1. Measured on
#: the ten-million-message report (``benchmarks/run.py``'s ``spark_report``,
#: ``local[2]``, the default 1 GB heap; ``docs/performance.md``, sixth stop):
#: 486 s and a 2,040 MB driver peak with G1, 377 s and 1,967 MB with it. Most
#: likely (not measured apart) a batch job on a small heap wants throughput,
#: not G1's short pauses, and the parallel collector's own structures are
#: smaller (G1's took 83 MB of the JVM's native memory at a million
#: messages).
#:
#: Not for a long session (a notebook's, the test suite's: ``batch=False``,
#: Java's default G1 kept). The whole suite, one session with a nearly full
#: heap, ran 1,236 s under it against 1,140 s under G1, and in CI (and again
#: here, seventh stop) its driver died: the parallel collector throws
#: ``OutOfMemoryError: GC overhead limit exceeded`` when 98% of the time goes
#: to collections that free less than 2% of the heap, and Spark's handler of
#: uncaught errors stops the JVM, so every later query of the session failed
#: ("Connection refused"). G1 has no such limit: it went on, slower. Hence
#: ``-XX:-UseGCOverheadLimit`` here too: a command near its heap's edge goes
#: on as it would under G1 instead of dying. Left out when the caller's
#: ``spark.driver.extraJavaOptions`` or the JVM's option variables
#: (:data:`JVM_OPTION_VARIABLES`) choose a collector already: HotSpot refuses
#: to start with two.
DRIVER_GC_OPTIONS = "-XX:+UseParallelGC -XX:-UseGCOverheadLimit"

#: HotSpot option of the driver JVM of a one-shot command on a small input
#: (``get_spark(..., one_shot=True)``: what :func:`spark_session` asks for
#: when the ``dlqlens`` console script runs a command whose captures are
#: small, :data:`SMALL_INPUT_SETTINGS`): only the client compiler (C1). On a
#: few hundred messages the run is the JVM warming up on Spark's own code: a
#: Java Flight Recording of the README's report on the sample showed the JIT
#: compilers taking 31.4 s of CPU on two cores against about 7 s of Java in
#: the application's threads. C1 compiles quickly; its code is slower than
#: C2's, which pays only on long runs. The README's report of the sample as
#: a process, three alternating pairs: 30.3, 29.4, 27.8 s without it, 25.7,
#: 24.8, 25.7 s with it (``docs/performance.md``, eighth stop). Only for a
#: process that ends with its command: a JVM's flags are fixed at its start,
#: and a session that lives on (a notebook's, even one whose first act was
#: :func:`dlqlens.cli.main`) would run every later analysis, of any size, on
#: C1's code. Left out when the caller's options or the JVM's option
#: variables choose a compilation mode (:func:`selects_compiler`).
ONE_SHOT_JIT_OPTIONS = "-XX:TieredStopAtLevel=1"

#: The environment variables whose options every HotSpot JVM reads.
JVM_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")


def selects_collector(options: str | None) -> bool:
    """True when JVM ``options`` choose a garbage collector (``-XX:+UseG1GC``,
    ``-XX:+UseParallelGC``, ``-XX:+UseZGC``...)."""
    import re

    return bool(re.search(r"-XX:\+Use\w*GC\b", options or ""))


def selects_compiler(options: str | None) -> bool:
    """True when JVM ``options`` choose how HotSpot compiles
    (``-XX:TieredStopAtLevel=N``, ``-XX:[+-]TieredCompilation``, ``-Xint``,
    ``-Xcomp``)."""
    import re

    return bool(re.search(r"-XX:TieredStopAtLevel=|-XX:[+-]TieredCompilation\b|-Xint\b|-Xcomp\b",
                          options or ""))


def java_major(version_line: str) -> int | None:
    """The major version in a ``java -version`` line (``openjdk version
    "17.0.15"`` -> 17; ``"1.8.0_402"`` -> 8), or None."""
    import re

    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_line or "")
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


class JavaMissingError(DlqlensError):
    """Spark needs Java 17 or newer and none was found."""


def java_executable() -> str | None:
    """The ``java`` Spark will start: ``$JAVA_HOME/bin/java`` when ``JAVA_HOME``
    is set, else the first on ``PATH``; None when there is none."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") \
        else shutil.which("java")
    return java if java and os.path.exists(java) else None


def check_java() -> str:
    """Return the ``java -version`` line, or raise :class:`JavaMissingError`.

    Spark 4 runs on Java 17 or newer (Apache Spark "Spark Overview",
    "Downloading": "Spark runs on Java 17/21").
    """
    java = java_executable()
    if java is None:
        raise JavaMissingError(
            "Java not found: Spark 4 needs Java 17 or newer on PATH or in JAVA_HOME "
            "(for example: apt-get install openjdk-17-jre-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    first = out.splitlines()[0] if out else ""
    major = java_major(first)
    if major is not None and major < 17:
        raise JavaMissingError(f"Spark 4 needs Java 17 or newer, found: {first}")
    return first


#: ``spark.sql.ui.retainedExecutions`` of a session :func:`get_spark` creates
#: with the UI off: how many finished SQL queries the driver keeps described
#: (plan text and a graph of every operator's metrics; Spark keeps 1000). With
#: no UI nothing reads them, and a detectors query's description holds about
#: 1,900 metrics: over the test suite's one session they grew by 46 MB in the
#: first 230 seconds (26 MB with 20 kept), toward the whole run's failures for
#: want of driver memory. Queries still running are always kept.
RETAINED_EXECUTIONS_WITHOUT_UI = 20

#: ``spark.sql.codegen.cache.maxEntries`` of a session :func:`get_spark`
#: creates (Spark's default: 100): how many classes of generated code the JVM
#: keeps compiled, for every query of every session. The detectors over the
#: bundled sample generate 264 distinct classes (Spark's
#: ``CodegenMetrics``), so with 100 kept each run compiled them all again
#: (263 to 271 compilations a run, about 25 ms each; on a later run of a warm
#: notebook session, with 1000 kept, 5), and the rules replay 13 a run
#: instead of 4. Measured in one warm session (``docs/performance.md``,
#: fifteenth stop): the detectors of the sample, findings collected, 16.4 and
#: 15.1 s in rounds 2 and 3 against 12.9 and 10.1 s; the JVM's metaspace 3 MB
#: larger with every class of three rounds of detectors, replay and report
#: kept. A static setting: read when the JVM first generates code, so it
#: applies to a session this call creates.
CODEGEN_CACHE_ENTRIES = 1000


def session_settings(java: int | None, spark_conf: Mapping[str, str] | None = None, *,
                     environ: Mapping[str, str] | None = None, batch: bool = False,
                     one_shot: bool = False, **conf) -> dict[str, str]:
    """The configuration :func:`get_spark` gives the builder: its own settings,
    then ``conf`` (underscores for dots), then ``spark_conf`` (Spark's keys).

    With the UI off (the default) and no value of its own given,
    ``spark.sql.ui.retainedExecutions`` is
    :data:`RETAINED_EXECUTIONS_WITHOUT_UI`; unless given,
    ``spark.sql.codegen.cache.maxEntries`` is :data:`CODEGEN_CACHE_ENTRIES`
    (the classes of generated code the JVM keeps compiled). The driver's options of a
    ``batch`` session begin with :data:`DRIVER_GC_OPTIONS` unless the
    caller's options or the JVM option variables of ``environ`` choose a
    collector; then come, on Java 17 to 21, :data:`GC_LOCKER_OPTIONS`; the
    caller's own options come last.

    Parameters
    ----------
    java : int or None
        The JVM's major version (:func:`java_major`), None when not known.
    spark_conf : mapping of str to str, optional
        Spark's own keys and values; they override everything else.
    environ : mapping of str to str, optional
        The environment the JVM will start in (default ``os.environ``): read
        for :data:`JVM_OPTION_VARIABLES` only.
    batch : bool, default False
        A session for one command, ended with it (the parallel collector);
        False for a long one (a notebook's: Java's default collector).
    one_shot : bool, default False
        With ``batch``: a session for one command on a small input in a
        process that ends with it: :data:`ONE_SHOT_JIT_OPTIONS` (C1 only)
        after the collector's options.
    **conf
        Keys with underscores for dots (``spark_ui_enabled="true"``).

    Returns
    -------
    dict of str to str
        Spark configuration keys and values, no JVM started.
    """
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.python.worker.reuse": "true",
        # PySpark's call-site capture for DataFrame errors: about ten more JVM round trips
        # (and a walk of the Python stack) for every Column function called
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        **CONNECT_SETTINGS,
    }
    settings.update({k.replace("_", "."): str(v) for k, v in conf.items()})
    settings.update({k: str(v) for k, v in (spark_conf or {}).items()})
    if settings["spark.ui.enabled"].strip().lower() == "false":
        settings.setdefault("spark.sql.ui.retainedExecutions", str(RETAINED_EXECUTIONS_WITHOUT_UI))
    settings.setdefault("spark.sql.codegen.cache.maxEntries", str(CODEGEN_CACHE_ENTRIES))
    key = "spark.driver.extraJavaOptions"
    environ = os.environ if environ is None else environ
    ours = []
    given = (settings.get(key), *(environ.get(v) for v in JVM_OPTION_VARIABLES))
    if batch and not any(selects_collector(o) for o in given):
        ours.append(DRIVER_GC_OPTIONS)
    if batch and one_shot and not any(selects_compiler(o) for o in given):
        ours.append(ONE_SHOT_JIT_OPTIONS)
    if java is not None and java < 22:
        ours.append(GC_LOCKER_OPTIONS)
    if ours:  # the caller's own options after ours: theirs win
        settings[key] = " ".join(o for o in (*ours, settings.get(key)) if o)
    return settings


def get_spark(master: str = "local[*]", app_name: str = "dlqlens", *,
              spark_conf: Mapping[str, str] | None = None, batch: bool = False,
              one_shot: bool = False, sources: bool = True, **conf):
    """A SparkSession for dlqlens, with the ``mqcapture`` source registered
    (unless ``sources`` is False).

    Sets ``PYSPARK_PYTHON`` to this interpreter (executors must import
    dlqlens and pyarrow), turns the UI off, keeps shuffles small and binds to
    the loopback address. Extra ``conf`` items are passed to the builder
    (underscores in keys stand for dots: ``spark_sql_shuffle_partitions=4``)
    and override these settings; ``spark_conf`` items (Spark's own keys, as
    ``--conf key=value`` gives them, underscores kept) override them all.

    ``spark.sql.codegen.hugeMethodLimit`` is set to 8000 (Spark's default is
    65535): whole-stage code generation puts the matching of every rule of a
    rules-table replay into one Java method, and past 8000 bytes of bytecode
    (about 100 rules) HotSpot does not JIT-compile a method
    (``-XX:+DontCompileHugeMethods``, its default) and interprets it, which
    was measured 3 to 7 times slower on tables of 100 and 300 rules. With the
    limit, Spark falls back to per-expression code generation for such an
    operator, whose methods are small enough to be compiled; Spark's own
    description of the setting recommends 8000 on HotSpot. Only this function
    sets it (on the session it returns): :func:`dlqlens.rules.replay.replay`
    and the other functions that are handed a caller's DataFrame leave that
    session's configuration as it is.

    ``spark.python.sql.dataFrameDebugging.enabled`` is set to false (PySpark's
    default is true): with it, every ``pyspark.sql.functions`` call and
    Column method records its Python call site in the JVM (for the
    "DataFrame" context of an error message), about ten more round trips to
    the JVM per call and a walk of the Python stack. The detectors build
    thousands of such expressions: their construction on the bundled sample
    made 31,753 round trips with it and 11,543 without. An error then says
    which operator failed but not the Python line that built it; give
    ``spark_conf={"spark.python.sql.dataFrameDebugging.enabled": "true"}``
    to have the lines back (PySpark reads it once per process, at the first
    Column function called while a session is active).

    With ``batch=True`` (a session for one command, ended with it: what
    :func:`spark_session` asks for), the driver JVM starts with the parallel
    garbage collector (:data:`DRIVER_GC_OPTIONS`: the ten-million-message
    report 22% faster and under 2 GB; the constant's comment) unless the
    caller's ``spark.driver.extraJavaOptions`` or the environment choose a
    collector; a long session (the default: a notebook's) keeps Java's own,
    G1, which goes on where the parallel collector gave up in the test
    suite's long session. On Java 17 to 21 the JVM starts with
    :data:`GC_LOCKER_OPTIONS` (a HotSpot bug that
    throws ``OutOfMemoryError`` when a thread meets the GC locker twice,
    which stopped the driver of a million-message report; the constant's
    comment), both before any ``spark.driver.extraJavaOptions`` given. With
    ``one_shot=True`` as well (one command on a small input, in a process
    that ends with it), the JVM compiles with C1 only
    (:data:`ONE_SHOT_JIT_OPTIONS`; the constant's comment says why never
    for a session that lives on). They apply when this call starts the JVM.

    With the UI off, the driver keeps the descriptions of the last
    :data:`RETAINED_EXECUTIONS_WITHOUT_UI` finished SQL queries, not 1000
    (``spark.sql.ui.retainedExecutions``; the constant's comment), and the
    JVM keeps :data:`CODEGEN_CACHE_ENTRIES` classes of generated code
    compiled, not 100 (the detectors alone make 264: with 100 kept, each run
    compiled them all again). The settings are :func:`session_settings`'s.

    A session this call creates (not one already active, which
    ``getOrCreate`` hands back) is marked as dlqlens's own
    (:data:`OWN_SESSION_KEY`): the eager analyses (the report, the summary,
    the audit) then run a small capture with the short run's settings and
    give the session its own back when they return (:func:`short_run`).
    The :data:`SMALL_INPUT_SETTINGS` keys given in ``conf`` or ``spark_conf``
    are the caller's, and never changed.

    With ``sources=False`` dlqlens's data sources (``mqcapture``,
    ``mqmessages``) are not registered here: what :func:`spark_session` asks
    for a command in a process that ends with it (``one_shot``), since
    dlqlens's own readers register them where they read through them
    (:func:`dlqlens.spark.source.register_sources`). Registering the first
    Python data source of a JVM makes Spark look for others first: it starts
    a Python process that imports every installed ``pyspark_*`` module
    (Spark's ``DataSourceManager``), 2.1 to 2.6 s measured here, which a
    command on a classic session never needs (a small capture is decoded on
    the driver, a large one by the executors, with no data source on the
    way).

    Raises
    ------
    JavaMissingError
        When no Java 17+ is installed.
    """
    version = check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    settings = session_settings(java_major(version), spark_conf, batch=batch,
                                one_shot=one_shot, **conf)
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    created = _active_session() is None  # else getOrCreate hands back that session
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if created:
        given = {k.replace("_", ".") for k in conf} | set(spark_conf or {})
        _mark_own_session(spark, [k for k in SMALL_INPUT_SETTINGS if k not in given])
    if sources:
        register(spark)
    return spark


#: Settings of a session dlqlens creates for a command whose captures are small
#: enough to be decoded on the driver (at most
#: :data:`dlqlens.spark.source.LOCAL_BYTES` in all, one local relation):
#: on a few thousand messages every Spark job costs its planning, code
#: generation and scheduling whatever its rows, so the run is short and the
#: work is the JVM's own. Adaptive execution off: it runs each query stage as a
#: job of its own and re-plans between them, which on a local relation only
#: adds jobs; one shuffle partition: a few thousand rows need no more.
#: Measured in ``docs/performance.md`` ("Third change"), with the JIT flag
#: tried and left out (``-XX:TieredStopAtLevel=1``: less CPU, a longer wait).
#:
#: No generated code: whole-stage code generation off, and Catalyst's
#: expression objects (projections, predicates, orderings) interpreted
#: (``spark.sql.codegen.factoryMode`` ``NO_CODEGEN``). Each query of a short
#: run otherwise writes Java source for its stages and expressions, compiles
#: it with Janino and has the JIT compile the classes again, to run them on a
#: few thousand rows: the README's report of the sample took 20.4 to 21.4 s
#: against 24.7 to 27.9 s (six runs each, alternating; ``docs/performance.md``,
#: eleventh stop), with the same report; 28.8 and 29.3 s against 29.6 and 32.3 s
#: at the top of the range (14,000 messages, 15 MB). Jobs an RDD action runs
#: (``dlqlens.spark.driver.local_rows``) do not carry a session's SQL settings
#: to their tasks, which generate code as before. ``factoryMode`` is an
#: internal key of Spark's (its documentation: not for end users); its
#: interpreted path is the one Spark's own expression tests check beside the
#: generated one, and whole-stage code generation alone (a public key) saves
#: nothing measurable. A user's ``--conf`` for either key wins.
SMALL_INPUT_SETTINGS = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


#: Set by :func:`spark_session` on a session it creates for a command (in that
#: session's runtime configuration only: not in the SparkContext's, so that a
#: ``newSession()`` of it is not marked): JSON, ``{"own": {key: value}, "set":
#: {key: value}}`` for the :data:`SMALL_INPUT_SETTINGS` keys, ``own`` being the
#: session's value before dlqlens set it (``null``: not set, Spark's default)
#: and ``set`` the value dlqlens last gave it. A key the user set with
#: ``--conf`` is not listed; a key whose value is no longer the one dlqlens set
#: (the user changed it since) is left as it is. A session without a mark
#: that parses is one dlqlens was handed: never changed.
COMMAND_SESSION_KEY = "spark.dlqlens.commandSession"


def _conf_value(session, key):
    value = session.conf.get(key, None)
    return None if value is None else str(value)


def _set_conf(session, key, value) -> None:
    if value is None:
        session.conf.unset(key)
    else:
        session.conf.set(key, value)


def _mark_command_session(session, spark_conf: Mapping[str, str],
                          tuning: Mapping[str, str]) -> None:
    """Set ``tuning``'s :data:`SMALL_INPUT_SETTINGS` keys on a session
    :func:`spark_session` has just created (the user's ``spark_conf`` wins)
    and mark it with :data:`COMMAND_SESSION_KEY`."""
    import json

    wanted = {k.replace("_", "."): str(v) for k, v in tuning.items()}
    keys = sorted(k for k in SMALL_INPUT_SETTINGS if k not in spark_conf)
    own = {k: _conf_value(session, k) for k in keys}
    for key in keys:
        if key in wanted:
            _set_conf(session, key, wanted[key])
    session.conf.set(COMMAND_SESSION_KEY, json.dumps(
        {"own": own, "set": {k: _conf_value(session, k) for k in keys}}, sort_keys=True))


def _retune(session, tuning: Mapping[str, str]) -> None:
    """On a session an earlier command of this process created (marked with
    :data:`COMMAND_SESSION_KEY`), set the :data:`SMALL_INPUT_SETTINGS` keys
    for this command: the short run's values when ``tuning`` holds them, else
    the session's own again, so that a large capture never runs with the
    settings of an earlier small one. A key the user changed since is left
    as it is; any session without a mark that parses is left as it is."""
    import json

    try:
        mark = json.loads(session.conf.get(COMMAND_SESSION_KEY, None) or "null")
        own, was_set = dict(mark["own"]), dict(mark["set"])
    except Exception:  # noqa: BLE001 - no mark (a handed or Connect session), or not ours
        return
    wanted = {k.replace("_", "."): str(v) for k, v in tuning.items()}
    for key in sorted(own):
        if key not in SMALL_INPUT_SETTINGS or _conf_value(session, key) != was_set.get(key):
            continue
        _set_conf(session, key, wanted.get(key, own[key]))
        was_set[key] = _conf_value(session, key)
    session.conf.set(COMMAND_SESSION_KEY, json.dumps({"own": own, "set": was_set},
                                                     sort_keys=True))


#: Set by :func:`get_spark` on a session it creates (in that session's runtime
#: configuration only, so that a ``newSession()`` of it is not marked): JSON,
#: ``{"own": {key: value}}`` for the :data:`SMALL_INPUT_SETTINGS` keys the
#: caller did not give, with the new session's value (``null``: not set,
#: Spark's default). These are the keys :func:`short_run` may set for an
#: analysis, and give back after it. A session without a mark that parses
#: is one dlqlens was handed: never changed.
OWN_SESSION_KEY = "spark.dlqlens.ownSession"


def _mark_own_session(session, keys) -> None:
    import json

    session.conf.set(OWN_SESSION_KEY, json.dumps(
        {"own": {k: _conf_value(session, k) for k in sorted(keys)}}, sort_keys=True))


def _short_run_keys(session) -> dict:
    """The :data:`SMALL_INPUT_SETTINGS` keys :func:`short_run` may set on
    ``session``, with the values to give back: those of a session
    :func:`get_spark` made (:data:`OWN_SESSION_KEY`) that still hold the
    session's own value and differ from the short run's. Empty for a session
    dlqlens was handed, and while the settings are already the short run's
    (a command's session for a small capture, an analysis inside another)."""
    import json

    try:
        own = dict(json.loads(session.conf.get(OWN_SESSION_KEY, None) or "null")["own"])
    except Exception:  # noqa: BLE001 - no mark (a handed or Connect session), or not ours
        return {}
    keys = {}
    for key, value in own.items():
        if key not in SMALL_INPUT_SETTINGS or value == SMALL_INPUT_SETTINGS[key]:
            continue
        if _conf_value(session, key) == value:  # else changed since: the user's, or a short run's
            keys[key] = value
    return keys


#: Messages up to which a capture is small: :func:`dlqlens.detect.run_detectors`
#: reads it from one partition and :func:`dlqlens.rules.replay.replay` decides
#: its fates on the driver (the bundled sample holds 669). The same bound as
#: the rows of one read partition of a decoded directory
#: (``dlqlens.spark.parquet``): a task of this many messages runs in the
#: default 1 GiB heap.
SMALL_CAPTURE_MESSAGES = 50_000


def small_capture(df) -> bool:
    """True when the capture ``df`` holds at most :data:`SMALL_CAPTURE_MESSAGES`
    messages (:func:`dlqlens.detect.run_detectors` reads it from one
    partition, :func:`dlqlens.rules.replay.replay` decides its fates on the
    driver, :func:`short_run` gives its block the short run's settings).

    Counted, not estimated: one query, ``df.limit(N + 1).count()`` (two Spark
    jobs under adaptive execution), which reads at most N + 1 rows of each
    partition (on a cached capture, the cache; it fills a cache not yet
    filled, which the analyses would fill next). Catalyst's size estimate
    is no measure of the rows: a directory decoded to Parquet is estimated at
    its compressed files' size (a million messages in about 27 MB), and a
    cached capture not yet filled at its source's estimate. The DataFrame API
    only, so the same on Spark Connect.
    """
    return df.limit(SMALL_CAPTURE_MESSAGES + 1).count() <= SMALL_CAPTURE_MESSAGES


@contextmanager
def short_run(df, small: Callable[[], bool]) -> Iterator[bool]:
    """Run the block with the short run's settings when ``df`` is a small
    capture in a session dlqlens made, and give the session its own back.

    For an eager analysis (one that runs its Spark queries before it
    returns: the report, the summary, the audit) in a notebook's session of
    :func:`get_spark`: on a few thousand messages each of its queries costs
    its planning, code generation and scheduling whatever its rows, as in a
    command's short run (:data:`SMALL_INPUT_SETTINGS`). The README's report
    of the sample in a warm notebook session took 17.1, 8.8 and 7.8 s in
    three rounds against 28.2, 15.1 and 12.0 s without (the settings set by
    hand at 49,000 messages, the top of the range: 23.7 and 13.4 s against
    25.9 and 19.9 s; ``docs/performance.md``, twelfth stop).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The capture the block analyses.
    small : callable
        Called (once, and only when the session is one dlqlens made and its
        settings are its own) to tell whether ``df`` is small; the callers
        pass :func:`small_capture` of it (one query).

    Yields
    ------
    bool
        Whether the settings were changed for the block.

    Notes
    -----
    Nothing is changed on a session dlqlens was handed (no
    :data:`OWN_SESSION_KEY`), on a Spark Connect session, for a key the
    caller gave :func:`get_spark` or changed since, nor while the short
    run's settings already hold (a command's session for a small capture;
    a ``short_run`` inside another, which then runs no query of its own).
    A lazy result (a DataFrame returned) runs with the settings of the
    moment it is read: only what runs inside the block takes them. The
    settings are the session's: a query another thread runs on it
    meanwhile takes them too.
    """
    session = df.sparkSession
    keys = _short_run_keys(session)
    if not keys or not small():
        yield False
        return
    for key in keys:
        _set_conf(session, key, SMALL_INPUT_SETTINGS[key])
    try:
        yield True
    finally:
        for key, value in keys.items():
            _set_conf(session, key, value)


def small_input_settings(pieces) -> dict[str, str]:
    """:data:`SMALL_INPUT_SETTINGS` when the planned ``pieces`` are decoded on
    the driver (:func:`dlqlens.spark.source.capture_frame`: captures of at most
    :data:`dlqlens.spark.source.LOCAL_BYTES` in all), else nothing.

    Parameters
    ----------
    pieces : list
        What :func:`dlqlens.commands.common.plan_captures` returns: the planned
        :class:`dlqlens.capture.reader.Piece` objects, or a
        :class:`dlqlens.spark.parquet.MessageInput` for directories written by
        ``dlqlens decode --to`` (never small: their size is not the files').

    Returns
    -------
    dict of str to str
        Spark settings for :func:`get_spark`; :func:`spark_session` applies them
        only to a session it creates (never to one it is handed or a Spark
        Connect one), under the user's ``--conf``.
    """
    from dlqlens.spark.parquet import MessageInput
    from dlqlens.spark.source import LOCAL_BYTES, planned_bytes

    if isinstance(pieces, MessageInput) or planned_bytes(pieces) > LOCAL_BYTES:
        return {}
    return dict(SMALL_INPUT_SETTINGS)


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None, *,
                  remote: str | None = None, app_name: str = "dlqlens", one_shot: bool = False,
                  **tuning):
    """The session a command runs on, chosen by Spark's usual means.

    In this order:

    1. ``remote`` (``--remote``): a new Spark Connect session
       (``sc://host:port``) with the :data:`CONNECT_SETTINGS` and ``conf``
       set on it, and the ``mqcapture`` source registered
       (:func:`connect_session`). The server's Python workers must import
       dlqlens and pyarrow (``docs/scale.md``).
    2. A session already active in this process (a notebook's, one an
       application made, the one an earlier call made; classic or Connect,
       ``SparkSession.active()``): returned as it is, its configuration left
       as found (only the ``mqcapture`` source is registered on it); giving
       ``conf`` then is an error, since dlqlens does not change a session it
       is handed. A session an earlier call made (marked with
       :data:`COMMAND_SESSION_KEY`) is dlqlens's own: its
       :data:`SMALL_INPUT_SETTINGS` keys are set for this call's captures
       (those the user has not changed since).
    3. The ``SPARK_REMOTE`` environment variable: a new Spark Connect
       session, as for ``remote``.
    4. Otherwise a batch session of :func:`get_spark` (``batch=True``:
       the parallel collector, :data:`DRIVER_GC_OPTIONS`) on ``master``
       (``local[*]`` when None), ``conf`` overriding its settings and ``tuning`` passed
       as its keyword settings, except the :data:`SMALL_INPUT_SETTINGS`
       keys, which are set on the session alone (not on the SparkContext)
       under ``conf``, and the session marked (:data:`COMMAND_SESSION_KEY`).
       With ``one_shot`` and those keys (a small input), the driver JVM
       compiles with C1 only (:data:`ONE_SHOT_JIT_OPTIONS`). With
       ``one_shot``, whatever the input, dlqlens's data sources are not
       registered on it (``get_spark(..., sources=False)``: the command's
       readers register them where they read through them).

    Parameters
    ----------
    master : str, optional
        A Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``).
    conf : mapping of str to str, optional
        Spark configuration (``--conf key=value``): the key as Spark names it.
    remote : str, optional
        A Spark Connect URL (``sc://host:15002``).
    one_shot : bool, default False
        The process ends with this command (the ``dlqlens`` console script,
        :func:`dlqlens.cli.run`): a JVM it starts serves this command only.

    Returns
    -------
    pyspark.sql.SparkSession
        A classic session or a Spark Connect one
        (``pyspark.sql.connect.session.SparkSession``).

    Raises
    ------
    dlqlens.errors.UsageError
        When both a master and a Connect URL (``remote`` or ``SPARK_REMOTE``)
        are named (a Connect session has no master: the server has one); when a ``conf`` key cannot be set on a
        Connect session (a static one, such as ``spark.executor.memory``: it
        is set where the server is started); when ``conf`` is given and a
        session is already active.
    JavaMissingError
        When a local session is to be created and no Java 17+ is installed.
    """
    conf = dict(conf or {})
    if remote is not None:
        return connect_session(_no_master(master, remote), conf)
    active = _active_session()
    if active is not None:
        if conf:
            raise UsageError(
                f"--conf {', '.join(conf)}: a Spark session is already active in this process "
                "and dlqlens does not change a session it is handed; set these on it yourself")
        register(active)
        _retune(active, tuning)
        return active
    remote = os.environ.get("SPARK_REMOTE") or None
    if remote is not None:  # (PySpark refuses a master while SPARK_REMOTE is set, too)
        return connect_session(_no_master(master, remote), conf)
    short = {k: v for k, v in tuning.items() if k.replace("_", ".") in SMALL_INPUT_SETTINGS}
    session = get_spark(master or "local[*]", app_name, spark_conf=conf, batch=True,
                        one_shot=one_shot and bool(short), sources=not one_shot,
                        **{k: v for k, v in tuning.items() if k not in short})
    _mark_command_session(session, conf, short)
    return session


def _no_master(master: str | None, remote: str) -> str:
    """``remote``, when no master is named too (else a UsageError)."""
    if master is not None:
        raise UsageError(f"--master {master} and the Spark Connect URL {remote} "
                         "(--remote or SPARK_REMOTE): a Spark Connect session has no "
                         "master of its own (the server has one); give only one")
    return remote


def _active_session():
    """The session active in this thread, else the process's default one
    (``SparkSession.active()``: a classic or a Spark Connect one), else None."""
    from pyspark.sql import SparkSession

    try:
        return SparkSession.active()
    except Exception:  # noqa: BLE001 - PySparkRuntimeError NO_ACTIVE_OR_DEFAULT_SESSION
        return None


def connect_session(url: str, conf: Mapping[str, str] | None = None):
    """A new Spark Connect session on ``url`` for dlqlens.

    Sets :data:`CONNECT_SETTINGS`, then ``conf``, on the new server-side
    session (a session of its own: other clients' sessions on the same
    server are untouched) and registers the ``mqcapture`` source.

    Raises
    ------
    dlqlens.errors.UsageError
        When ``url`` is not a Spark Connect URL, or a ``conf`` key cannot be
        set at run time (Spark's error for it quoted).
    """
    if not url.startswith("sc://"):
        raise UsageError(f"Spark Connect URL {url!r}: expected sc://host:port "
                         "(as SPARK_REMOTE or --remote)")
    from pyspark.sql import SparkSession

    # pyspark's own builder (not pyspark.sql.connect's): it also switches this process's
    # pyspark.sql.functions to Spark Connect, as SPARK_REMOTE does
    spark = SparkSession.builder.remote(url).create()
    for key, value in {**CONNECT_SETTINGS, **(conf or {})}.items():
        try:
            spark.conf.set(key, str(value))
        except Exception as exc:  # pyspark's AnalysisException for a static key
            if key in (conf or {}):
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise UsageError(
                    f"--conf {key}={value}: the Spark Connect server {url} does not take it "
                    f"at run time ({first}); set it where the server is started "
                    "(start-connect-server.sh --conf ...)") from None
            raise
    register(spark)
    return spark


def register(spark) -> None:
    """Register dlqlens's data sources, ``mqcapture`` and ``mqmessages``, on
    ``spark`` (safe to call again): :func:`dlqlens.spark.source.register_sources`."""
    from dlqlens.spark.source import register_sources

    register_sources(spark)


def load_capture(spark, paths, format: str = "auto", mode: str = "PERMISSIVE", columns=None,
                 local: bool | None = None, **options):
    """A capture as a DataFrame: the rows ``spark.read.format("mqcapture")``
    gives over ``paths`` with ``options``, planned in this process
    (:func:`dlqlens.spark.source.capture_frame`).

    Parameters
    ----------
    columns : list of str, optional
        Read only these top-level columns (for example ``["source",
        "message_number", "md", "dlh", "put_ts"]``): the decoder still decodes
        every message, but Spark then carries only these columns, which on a
        large capture saves most of the cost (``raw`` and ``payload`` are the
        bulk of a row).
    local : bool, optional
        Decode on the driver and hand Spark one Arrow table (the same
        decoder, no Python workers): by default (None) when the files hold at
        most :data:`dlqlens.spark.source.LOCAL_BYTES` in all; True always;
        False never. Otherwise the executors decode, one partition per file
        or slice of a large capture: on a classic session each reads the
        pieces planned here (``mapInArrow``), over Spark Connect through the
        ``mqcapture`` source, which the server plans.

    ``paths`` may instead be directories written by ``dlqlens decode --to``
    (:func:`dlqlens.spark.parquet.write_messages`): their Parquet is read
    (:func:`dlqlens.spark.parquet.load_messages`; ``format`` and the
    ``options`` do not apply).

    Returns
    -------
    pyspark.sql.DataFrame
        The columns of :func:`dlqlens.decode.schema.message_schema` (or ``columns``).

    Raises
    ------
    dlqlens.errors.UsageError
        For a column name that does not exist; for a Parquet directory
        without dlqlens's marker, or such directories mixed with captures.
    """
    found = _message_directories(paths)
    if found is not None:  # decoded before: read the Parquet (dlqlens.spark.parquet)
        from dlqlens.spark.parquet import load_messages

        return load_messages(spark, found, columns=columns, mode=mode)
    path_list = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) \
        else [os.fspath(p) for p in paths]
    schema = None
    if columns is not None:
        from pyspark.sql.types import StructType

        from dlqlens.capture.reader import ReadOptions
        from dlqlens.spark.schema import spark_schema

        ReadOptions(columns=tuple(columns))  # one clear error for a bad name
        full = spark_schema()
        schema = StructType([full[c] for c in columns])
    from dlqlens.spark.source import LOCAL_BYTES, capture_frame, classic, source_frame

    opts = {"format": format, "mode": mode, **{k: str(v) for k, v in options.items()}}
    if local is not False or classic(spark):
        limit = {None: LOCAL_BYTES, True: float("inf"), False: -1}[local]
        df = capture_frame(spark, path_list, opts, schema, local_limit=limit)
        if df is not None:
            return df
    return source_frame(spark, path_list, opts, schema)


def _message_directories(paths):
    """The Parquet directories of decoded messages among ``paths``, or None
    (:func:`dlqlens.spark.parquet.message_input`)."""
    from dlqlens.spark.parquet import message_input

    return message_input(paths)
