#!/usr/bin/env python3
"""Does the test suite catch a planted bug? Each mutant in mutants.py is one hand-made edit of
the source (a detector that drops a check, a search that prunes too much, an oracle that reads
the design under test) that would let a hazard through or a verdict claim too much. For each,
this applies the edit to a separate work tree, rebuilds it, runs the suite it names, and puts
the source back. A mutant the suite does not kill is a test that cannot fail where it should.
What failed is then run again on the restored source: a test that fails without the mutant too
(one that depends on timing, say) is reported and not counted as a kill.

    python3 .ci/mutants/mutation_audit.py               # every mutant (about 40 s each)
    python3 .ci/mutants/mutation_audit.py R1 S4         # some of them
    python3 .ci/mutants/mutation_audit.py --list
    python3 .ci/mutants/mutation_audit.py --check       # each edit still applies (no build)

The work tree is a git worktree of HEAD at --tree (default <tmp>/amaxcheck-mutants), built
there with -Dcuda=disabled the first time (about 10 minutes on 2 cores). Not part of CI: it
takes most of an hour. Exit 0 when every mutant met its expectation, 1 when one survived, 2 when
a mutant no longer applies (the code it edits changed: update mutants.py). --check is that last
test alone, on this checkout, in a second: the default suite runs it (suite 'mutants'), so an edit
that moves a mutant's code fails CI until mutants.py follows it, instead of rotting unnoticed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import MUTANTS  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
# The suite 'mutants' is --check, which a planted mutant always fails: it tells nothing.
DEFAULT_SUITE = ['--no-suite', 'long', '--no-suite', 'harness', '--no-suite', 'cuda', '--no-suite', 'mutants']


def stale_in(root, mutants):
    """The ids of `mutants` whose `old` text is not in its file under `root` exactly once."""
    stale = []
    for m in mutants:
        path = os.path.join(root, m['file'])
        text = open(path).read() if os.path.isfile(path) else ''
        if text.count(m['old']) != 1:
            stale.append(m['id'])
    return stale


def prepare(tree):
    if not os.path.isdir(tree):
        subprocess.run(['git', 'worktree', 'add', '--detach', tree, 'HEAD'], cwd=ROOT, check=True)
    else:  # follow HEAD, so that the mutants meet the code they were written against
        subprocess.run(['git', 'checkout', '--quiet', '--detach', subprocess.check_output(
            ['git', 'rev-parse', 'HEAD'], cwd=ROOT, text=True).strip()], cwd=tree, check=True)
    if not os.path.isdir(os.path.join(tree, 'build')):
        subprocess.run(['meson', 'setup', 'build', '-Dcuda=disabled'], cwd=tree, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(['ninja', '-C', 'build'], cwd=tree, check=True, stdout=subprocess.DEVNULL)


def failed_pytests(tree, tests):
    """Runs the harness's pytest `tests` (files or test ids) against the program built in `tree`;
    returns the ids of those that failed."""
    env = dict(os.environ, AMAXCHECK_BIN=os.path.join(tree, 'build', 'sim', 'amaxcheck'), PYTHONDONTWRITEBYTECODE='1')
    run = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-c', 'pytest.ini', '--rootdir', '.', *tests],
                         cwd=os.path.join(tree, 'harness'), env=env, capture_output=True, text=True)
    return sorted(set(re.findall(r'^FAILED (\S+?)(?: - |$)', run.stdout, re.M))) or (
        ['(pytest failed)'] if run.returncode else [])


def failed_gtests(tree, program, env, only=None):
    """Runs a GoogleTest `program` of the build in `tree` (only the tests named in `only`, when
    given); returns the names of the tests that failed."""
    args = [program] + (['--gtest_filter=' + ':'.join(only)] if only else [])
    run = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True)
    return sorted(set(re.findall(r'^\[  FAILED  \] (\S+) \(', run.stdout, re.M))) or (
        [f'({os.path.basename(program)} failed)'] if run.returncode else [])


def killed_by(tree, suite, only=None):
    """Runs `suite` ('default', 'long:<gtest filter>' of the property program, 'harness:<test
    files>' of the Python harness, or 'gtest:<program>' of the build); returns the names of what
    failed (empty: the mutant survived). `only`: the names a first run returned, to run again
    alone (meson's test programs for 'default', test ids or GoogleTest names for the others)."""
    if suite == 'default':
        names = [name.split(' / ', 1)[1] for name in only] if only else DEFAULT_SUITE
        run = subprocess.run(['meson', 'test', '-C', 'build', '--no-rebuild', '--num-processes', '2',
                              '--timeout-multiplier', '0.5', *names], cwd=tree, capture_output=True, text=True)
        return re.findall(r'^\s*\d+/\d+ (\S+ / \S+)\s+(?:FAIL|TIMEOUT|ERROR)', run.stdout, re.M) or (
            ['(meson test failed)'] if run.returncode else [])
    if suite.startswith('harness:'):
        return failed_pytests(tree, only or suite.split(':', 1)[1].split())
    if suite.startswith('gtest:'):
        program = os.path.join(tree, 'build', suite.split(':', 1)[1])
        return failed_gtests(tree, program, dict(os.environ, AMAXCHECK_ROOT=tree), only)
    env = dict(os.environ, RC_PARAMS='max_success=2000', AMAXCHECK_LONG='1', AMAXCHECK_ROOT=tree)
    return failed_gtests(tree, os.path.join(tree, 'build', 'property_tests', 'property_tests'), env,
                         only or [suite.split(':', 1)[1]])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('ids', nargs='*', help='mutant ids (default: all)')
    parser.add_argument('--tree', default=os.path.join(tempfile.gettempdir(), 'amaxcheck-mutants'))
    parser.add_argument('--list', action='store_true', help='list the mutants and exit')
    parser.add_argument('--check', action='store_true',
                        help='only check that each edit applies to this checkout (exit 2 when one does not)')
    args = parser.parse_args()
    chosen = [m for m in MUTANTS if not args.ids or m['id'] in args.ids]
    unknown = set(args.ids) - {m['id'] for m in MUTANTS}
    if unknown:
        print(f'mutation_audit: no mutant {", ".join(sorted(unknown))} (--list shows them)', file=sys.stderr)
        return 2
    if args.list:
        for m in chosen:
            print(f"{m['id']:5} {m['file']}: {m['bug']} [{m['killed_by']}]")
        return 0
    if args.check:
        stale = stale_in(ROOT, chosen)
        for m in chosen:
            if m['id'] in stale:
                print(f"{m['id']:5} STALE: the text it edits is not in {m['file']} exactly once")
        print(f'mutation_audit --check: {len(chosen) - len(stale)} of {len(chosen)} mutants apply')
        return 2 if stale else 0
    prepare(args.tree)
    stale, survived = [], []
    for m in chosen:
        if stale_in(args.tree, [m]):
            stale.append(m['id'])
            print(f"{m['id']:5} STALE: the text it edits is not in {m['file']} exactly once", flush=True)
            continue
        path = os.path.join(args.tree, m['file'])
        with open(path) as f:
            text = f.read()
        start = time.time()
        try:
            with open(path, 'w') as f:
                f.write(text.replace(m['old'], m['new']))
            build = subprocess.run(['ninja', '-C', 'build'], cwd=args.tree, capture_output=True, text=True)
            if build.returncode != 0:
                stale.append(m['id'])
                print(f"{m['id']:5} STALE: does not build\n{build.stdout[-1500:]}", flush=True)
                continue
            failed = killed_by(args.tree, m['killed_by'])
        finally:
            with open(path, 'w') as f:
                f.write(text)
        # A test that fails without the mutant too (one that depends on timing, say) is no kill:
        # what failed is run again on the restored source, rebuilt first where the mutant was C++
        # (the default suite's whole programs, as meson names them; the other suites' tests).
        flaky = []
        if failed and not failed[0].startswith('('):
            if not m['file'].endswith('.py'):
                subprocess.run(['ninja', '-C', 'build'], cwd=args.tree, capture_output=True, check=True)
            flaky = [t for t in killed_by(args.tree, m['killed_by'], failed) if t in failed]
            failed = [t for t in failed if t not in flaky]
        if flaky:
            print(f"{m['id']:5} not counted, failed without the mutant too: {', '.join(flaky)}", flush=True)
        if not failed:
            survived.append(m['id'])
        verdict = f"killed by {', '.join(failed[:4])}" if failed else 'SURVIVED'
        print(f"{m['id']:5} {verdict} ({m['killed_by']}, {time.time() - start:.0f} s): {m['bug']}", flush=True)
    subprocess.run(['ninja', '-C', 'build'], cwd=args.tree, capture_output=True)  # back to the clean build
    print(f'mutation_audit: {len(chosen) - len(stale) - len(survived)} killed, {len(survived)} survived '
          f'{" ".join(survived)}, {len(stale)} stale {" ".join(stale)}')
    return 2 if stale else 1 if survived else 0


if __name__ == '__main__':
    sys.exit(main())
