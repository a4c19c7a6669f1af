"""The command line's verbs, one module per verb group.

This is the top layer (``docs/architecture.md``): a command composes the
domain packages (reading, Spark, rules, detectors, the simulator, views) and
prints; nothing below imports it. :mod:`dlqlens.cli` only dispatches to the
modules listed in :data:`dlqlens.cli.COMMAND_MODULES`, each of which has a
``register(subparsers)`` function.
"""
