#!/usr/bin/env python3
"""amaxcheck's Python harness: `./amaxcheck sweep|import-fr|repro|launch ...` lands here.

The launcher sets AMAXCHECK_BIN to the built C++ program; the harness orchestrates it and never
re-implements what it computes.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from amaxharness.main import main  # noqa: E402  (the path above must come first)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
