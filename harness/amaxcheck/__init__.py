"""amaxcheck from Python: run the built amaxcheck program and get typed results.

    import amaxcheck
    from amaxcheck.testing import assert_clean

    result = amaxcheck.check("te-async", knobs={"comm": "separate", "dp": 4}, strategy="exhaustive")
    assert_clean(result, proven=True)      # a readable failure: hazard, participants, replay command
    amaxcheck.suite("traces/suites/seed_designs.toml").passed

The program is found at AMAXCHECK_BIN, next to the package, or on PATH (amaxcheck.program).
The same report readers (amaxcheck.report) serve the harness commands (amaxharness).
"""

from .api import CheckResult, SuiteResult, check, suite
from .errors import HarnessError as Error
from .errors import InputError, ProgramError
from .program import find_program
from .report import CaseReport, CheckReport, Expected, Hazard, Participant, SuiteReport, Timing

__all__ = ["check", "suite", "CheckResult", "SuiteResult", "CheckReport", "SuiteReport", "CaseReport",
           "Expected", "Hazard", "Participant", "Timing", "Error", "InputError", "ProgramError",
           "find_program"]
__version__ = "0.1.0"
