"""Top-level argument parsing and error handling for every harness command."""

from __future__ import annotations

import argparse
import sys

from .errors import EXIT_INTERRUPTED, HarnessError


def build_parser() -> argparse.ArgumentParser:
    from . import repro
    from .fr import command as fr_command
    from .launch import command as launch_command
    from .sweep import command as sweep_command

    parser = argparse.ArgumentParser(
        prog="amaxcheck", description="amaxcheck's Python harness (sweep, import-fr, repro, "
        "launch). The C++ program is taken from AMAXCHECK_BIN.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sweep_command.add_parser(sub)
    fr_command.add_parser(sub)
    repro.add_parser(sub)
    launch_command.add_parser(sub)
    return parser


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help is 0, a usage error is 2
        return int(exit_.code or 0)
    try:
        return args.run(args)
    except HarnessError as err:
        print(f"amaxcheck {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"amaxcheck {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

