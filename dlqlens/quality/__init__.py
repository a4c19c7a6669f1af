"""Data-quality suites over captures, validated by great-expectations on Spark.

Two suites (``docs/quality.md`` lists every expectation, parameter, default
and unit):

structural
    generated from the field tables of :mod:`dlqlens.mq.structs`: every
    decoded MQMD, MQDLH, MQXQH, MQTM and MQRFH2 has its StrucId, a Version
    MQ defines, a valid Encoding and CCSID, a well-formed PutDate and
    PutTime, a known dlh.Reason, its length; every message decoded cleanly.
hygiene
    what an auditor checks on a DLQ, each threshold a :class:`Policy`
    parameter: message age, fall-through to the implicit IGNORE under a
    rules table, forbidden findings (backout loops, trigger storms,
    orphaned replies), messages without an MQDLH, the persistent share, the
    depth against MAXDEPTH.

:func:`audit` runs them and returns :class:`QualityResults` (a tidy table,
``to_text()``, ``_repr_html_()``, ``to_dict()``, and per expectation the
failing messages as a filter over the capture DataFrame)::

    from dlqlens.quality import audit, load_policy
    results = audit(df, policy=load_policy("policy.toml"), rules="shop.rul")
    results.table
    df.where(results.failing("structural.dlh.Reason").column())
"""

from dlqlens.quality.audit import SUITES, audit
from dlqlens.quality.checks import Check, MessageSelection, failing_sql
from dlqlens.quality.hygiene import hygiene_checks
from dlqlens.quality.policy import DEFAULTS, Policy, load_policy
from dlqlens.quality.results import QualityResults, Result
from dlqlens.quality.structural import structural_checks

__all__ = ["DEFAULTS", "SUITES", "Check", "MessageSelection", "Policy", "QualityResults",
           "Result", "audit", "failing_sql", "hygiene_checks", "load_policy",
           "structural_checks"]
