"""The harness's errors and exit codes: those of the amaxcheck package (amaxcheck.errors), so an
error raised by either reads and exits the same."""

from amaxcheck.errors import (EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_HAZARD, EXIT_INCONCLUSIVE,  # noqa: F401
                              EXIT_INTERNAL, EXIT_INTERRUPTED, HarnessError, InputError,
                              ProgramError)
