#!/usr/bin/env python3
"""amaxcheck's Python harness: `./amaxcheck sweep|import-fr|repro|launch ...` lands here.

The launcher sets AMAXCHECK_BIN to the built C++ program; the harness orchestrates it and never
re-implements what it computes.
"""

import pathlib
import sys

EXIT_INTERNAL = 3  # amaxcheck.errors.EXIT_INTERNAL, which may be what fails to import

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    try:
        from amaxharness.main import main
    except Exception as err:  # noqa: BLE001 - not 1 (a hazard): the harness itself is broken
        print(f"amaxcheck: internal error: the harness cannot start under {sys.executable}: "
              f"{type(err).__name__}: {err}", file=sys.stderr)
        sys.exit(EXIT_INTERNAL)
    sys.exit(main(sys.argv[1:]))
