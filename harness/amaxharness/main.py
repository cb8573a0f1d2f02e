"""Top-level argument parsing and error handling for every harness command.

Exit codes follow the program's: an error the harness did not expect is an internal error (3),
never 1 (which means a hazard or a divergence). Each command is imported on its own, so a
Python package missing for one (tqdm for sweeps) leaves the others working and names itself.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback

from .errors import EXIT_INTERNAL, EXIT_INTERRUPTED, HarnessError

# (command, module with add_parser), in the order --help lists them
COMMANDS = (("sweep", ".sweep.command"), ("import-fr", ".fr.command"), ("repro", ".repro"),
            ("launch", ".launch.command"))


class MissingPackage(HarnessError):
    exit_code = EXIT_INTERNAL


def _unavailable(sub, name: str, err: ImportError):
    package = err.name or str(err)
    message = (f"this command needs the Python package '{package}', which {sys.executable} "
               f"cannot import; install the harness's packages with: {sys.executable} -m pip "
               "install -r harness/requirements.txt")
    p = sub.add_parser(name, help=f"(unavailable: needs the Python package '{package}')",
                       description=message)
    p.add_argument("args", nargs=argparse.REMAINDER)

    def run(_args):
        raise MissingPackage(message)
    p.set_defaults(run=run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="amaxcheck", description="amaxcheck's Python harness (sweep, import-fr, repro, "
        "launch). The C++ program is taken from AMAXCHECK_BIN.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in COMMANDS:
        try:
            command = importlib.import_module(module, __package__)
        except ImportError as err:
            _unavailable(sub, name, err)
            continue
        command.add_parser(sub)
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
    except Exception as err:  # noqa: BLE001 - a bug of ours: say so, exit 3 (not 1, a hazard)
        traceback.print_exc(file=sys.stderr)
        print(f"amaxcheck {args.command}: internal error: {type(err).__name__}: "
              f"{str(err)[:500]}", file=sys.stderr)
        return EXIT_INTERNAL
