"""The ``dlqlens`` command: parses the verb and dispatches.

Each verb group lives in its own module of :mod:`dlqlens.commands` and
registers itself through a ``register(subparsers)`` function listed in
:data:`COMMAND_MODULES`; a test fails when a module with such a function is
left out of the list. This module holds no command of its own.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dlqlens.errors import DlqlensError
from dlqlens.version import version

#: Modules that add sub-commands, in the order they appear in ``--help``.
COMMAND_MODULES: dict[str, str] = {
    "decode": "dlqlens.commands.capture",
    "rules": "dlqlens.commands.rules",
    "simulate": "dlqlens.commands.simulate",
    "detect": "dlqlens.commands.detect",
    "triggers": "dlqlens.commands.triggers",
    "report": "dlqlens.commands.report",
    "audit": "dlqlens.commands.audit",
    "export": "dlqlens.commands.export",
}


class Parser(argparse.ArgumentParser):
    """argparse with errors on one line: the error (escaped: argparse quotes what
    was typed) and where the usage is, exit status 2; the sub-commands' parsers
    are of this class too."""

    def error(self, message: str):
        from dlqlens.safe import one_line

        self.exit(2, f"{self.prog}: error: {one_line(message)} (usage: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dlqlens",
        description="Analytics and forensics for IBM MQ dead-letter queue captures.",
    )
    parser.add_argument("--version", action="version", version=f"dlqlens {version()}",
                        help="print the version of dlqlens (its package metadata) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in COMMAND_MODULES.values():
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: list[str] | None = None, *, one_shot: bool = False) -> int:
    """Run the command line; return the exit status.

    Exit status 0 on success, 1 when the command found errors it reports
    (for example ``rules check`` on a table with errors), 2 on bad arguments
    or unreadable input. Errors are one line on standard error, no traceback.

    ``one_shot``: the process ends with this command (:func:`run`), so a
    Spark driver the command starts may be tuned for it alone
    (:data:`dlqlens.spark.session.ONE_SHOT_JIT_OPTIONS` on a small input).
    False when called from a notebook or a program that goes on.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    args.one_shot = one_shot
    try:
        return int(args.func(args) or 0)
    except DlqlensError as exc:
        print(f"dlqlens: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dlqlens decode ... | head`
        return 0
    except KeyboardInterrupt:
        return 130


def run() -> None:
    """The ``dlqlens`` console script: :func:`main` in a process that ends with
    the command (``one_shot``), then exit with its status."""
    sys.exit(main(sys.argv[1:], one_shot=True))


if __name__ == "__main__":  # pragma: no cover
    run()
