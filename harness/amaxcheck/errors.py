"""Errors of the amaxcheck package and the harness commands, each with the exit code it maps to.

The codes mirror the C++ program's: bad input (a malformed grid, dump or argument) is 2, a failure
of the harness or of the program it drives is 3. Hazards are findings, not errors: commands
return 1 for them instead of raising.
"""

EXIT_CLEAN = 0
EXIT_HAZARD = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INCONCLUSIVE = 4  # a step cap, schedule cap, bound or time budget cut the check short
EXIT_INTERRUPTED = 130


class HarnessError(Exception):
    """Base class: a message for the user and the process exit code."""

    exit_code: int = EXIT_INTERNAL


class InputError(HarnessError):
    """The user's input is wrong; the message names the file/field and what was expected."""

    exit_code: int = EXIT_BAD_INPUT


class ProgramError(HarnessError):
    """The amaxcheck program failed (crashed, timed out, or printed something unreadable)."""

    exit_code: int = EXIT_INTERNAL
