"""The audit cases of docs/quality.md's table: which expectation fails on which capture.

Each case is the argument list of ``dlqlens audit`` (paths relative to the
repository root); :func:`run_case` runs it in-process on a given Spark
session, as the command does, and returns the results.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

#: case name -> (captures, options), as docs/quality.md's table lists them.
CASES = {
    "clean_baseline": (["datasets/scenarios/clean_baseline"], {}),
    "poison_ping_pong": (["datasets/scenarios/poison_ping_pong"], {}),
    "trigger_storm": (["datasets/scenarios/trigger_storm"], {}),
    "orphaned_replies": (["datasets/scenarios/orphaned_replies"], {}),
    "expiry_buildup": (["datasets/scenarios/expiry_buildup"], {}),
    "queue_full_burst": (["datasets/scenarios/queue_full_burst"],
                         {"queue_defs": "tests/quality/dlq_maxdepth.mqsc"}),
    "permissions_change": (["datasets/scenarios/permissions_change"],
                           {"rules": "datasets/rules/shop.rul"}),
    "dlq-sample": (["datasets/dlq-sample"], {"rules": "datasets/rules/shop.rul",
                                             "queue_defs": "datasets/mqsc/qm.mqsc"}),
    "wrong_strucid_dlh": (["tests/hostile/corpus/dmpmqmsg_wrong_strucid_dlh.dmp"], {}),
    "mqdlh_trunc_mid": (["tests/hostile/corpus/dmpmqmsg_mqdlh_trunc_mid.dmp"], {}),
}


def case_argv(name: str) -> list:
    """The ``dlqlens audit`` arguments of case ``name``."""
    captures, options = CASES[name]
    argv = list(captures)
    for key, value in options.items():
        argv += ["--" + key.replace("_", "-"), value]
    return argv


def run_case(spark, name: str):
    """Audit case ``name`` on ``spark`` as ``dlqlens audit`` does; return the QualityResults."""
    from dlqlens.commands.audit import audit_plan
    from dlqlens.quality import audit
    from dlqlens.spark.session import load_capture

    captures, options = CASES[name]
    # the case's paths are relative to the repository, as in the docs
    plan = audit_plan([str(ROOT / c) for c in captures],
                      **{k: str(ROOT / v) for k, v in options.items()})
    df = load_capture(spark, plan["paths"])
    return audit(df, **plan["kwargs"])
