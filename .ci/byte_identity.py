#!/usr/bin/env python3
"""Old build vs new build: are the program's outputs byte for byte the same?

Builds `build/sim/amaxcheck` of an old commit (default: the merge-base of HEAD with `main`) in a
temporary worktree and build folder, builds the current tree, then runs both on the same inputs:

  * `check` of every shipped scenario (traces/scenarios/*.json) and of a few protocol design
    points, with each strategy, `--json` and `--trace-out`;
  * `replay`, `replay --json`, `shrink` and `export --perfetto` of every trace that produced, and of
    every committed trace (*.jsonl under traces/); the new build also replays the old build's
    traces (old traces must still read, unless --ignore scenario_hash says the hash changed);
  * `protocols --json` and `demo`.

Every output file, stdout and exit code is compared byte for byte. JSON and JSON Lines files are
compared after dropping the keys named with --ignore (at any depth), so a field a branch adds can
be allowed explicitly; `seconds` (wall time) is always dropped, and wall-clock text is masked (the
demo table's time column, stderr progress lines, what a time budget reached). Exit status:
0 identical, 1 differences (listed), 2 bad usage or a build failure.

  .ci/byte_identity.py                       # merge-base with main vs the working tree
  .ci/byte_identity.py --old v1 --ignore hazard_kinds
  .ci/byte_identity.py --old-bin /path/to/old/amaxcheck   # skip building the old commit

Builds use nice, BYTE_IDENTITY_JOBS (default 2) jobs and BYTE_IDENTITY_MESON_ARGS (default none).
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Protocol design points checked besides the shipped scenario files (small, so every strategy
# finishes in seconds).
PROTOCOL_POINTS = [
    ["te-async", "--wait", "after-copy", "--amax-order", "rank-dependent"],
    ["te-async", "--comm", "shared", "--amax-order", "rank-dependent"],
    ["te-async", "--comm", "shared", "--wait", "after-copy", "--amax-order", "rank-dependent"],
    ["te-sync"],
    ["current-scaling"],
]
STRATEGIES = [
    ["--strategy", "random", "--seed", "1", "--runs", "40", "--keep-going"],
    ["--strategy", "pct", "--seed", "3", "--runs", "40", "--keep-going"],
    ["--strategy", "exhaustive", "--max-schedules", "60", "--keep-going"],
    ["--strategy", "timed"],
]
ALWAYS_IGNORED = {"seconds"}


def sh(cmd: list[str], cwd: Path | None = None, quiet: bool = False) -> str:
    out = subprocess.run(cmd, cwd=cwd, check=True, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL if quiet else None)
    return out.stdout.strip()


def build(src: Path, build_dir: Path) -> Path:
    env = dict(os.environ)
    env.setdefault("CCACHE_BASEDIR", str(ROOT.parent))
    if not (build_dir / "build.ninja").exists():
        # The project's default options, as in every checkout, so ccache has the objects already.
        extra = os.environ.get("BYTE_IDENTITY_MESON_ARGS", "").split()
        subprocess.run(["meson", "setup", str(build_dir), str(src), *extra], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    jobs = os.environ.get("BYTE_IDENTITY_JOBS", "2")
    subprocess.run(["nice", "ninja", "-C", str(build_dir), f"-j{jobs}", "sim/amaxcheck"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return build_dir / "sim" / "amaxcheck"


def old_binary(args) -> Path:
    if args.old_bin:
        return Path(args.old_bin).resolve()
    ref = args.old or sh(["git", "merge-base", "HEAD", "main"], cwd=ROOT)
    commit = sh(["git", "rev-parse", "--verify", ref + "^{commit}"], cwd=ROOT)
    # The build folder sits inside its worktree, as in every checkout, so ccache (with a
    # CCACHE_BASEDIR above both) reuses the objects of other builds of the same sources.
    src = args.work / f"old-{commit[:12]}"
    if not src.exists():
        sh(["git", "worktree", "add", "--detach", str(src), commit], cwd=ROOT, quiet=True)
    print(f"old: {ref} ({commit[:12]}), built in {src / 'build'}")
    return build(src, src / "build")


def new_binary(args) -> Path:
    if args.new_bin:
        return Path(args.new_bin).resolve()
    build_dir = Path(os.environ.get("AMAXCHECK_BUILD", ROOT / "build"))
    print(f"new: the working tree, built in {build_dir}")
    return build(ROOT, build_dir)


def slug(words: list[str]) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", "-".join(words)).strip("_")


class Runner:
    """Runs one binary in its own folder; every path it sees is relative, so outputs that name
    files (trace paths, reproduce commands) read the same for both binaries."""

    def __init__(self, binary: Path, folder: Path):
        self.binary = binary
        self.folder = folder

    def run(self, name: str, argv: list[str]) -> None:
        proc = subprocess.run([str(self.binary), *argv], cwd=self.folder, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        (self.folder / "stdout").mkdir(exist_ok=True)
        (self.folder / "stdout" / f"{name}.out").write_text(
            f"$ amaxcheck {' '.join(argv)}\nexit {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")


def populate(folder: Path) -> list[Path]:
    """Copies the inputs (from the current tree) into `folder`: scenario files and committed traces."""
    (folder / "scenarios").mkdir(parents=True)
    (folder / "shipped").mkdir()
    for f in sorted((ROOT / "traces" / "scenarios").glob("*.json")):
        shutil.copy(f, folder / "scenarios" / f.name)
    shipped = []
    for f in sorted(ROOT.glob("traces/**/*.jsonl")):
        dest = folder / "shipped" / f.name
        shutil.copy(f, dest)
        shipped.append(dest.relative_to(folder))
    return shipped


def exercise(r: Runner, shipped: list[Path]) -> None:
    (r.folder / "traces").mkdir()
    targets = [[str(p.relative_to(r.folder))] for p in sorted((r.folder / "scenarios").glob("*.json"))]
    targets += PROTOCOL_POINTS
    traces = list(shipped)
    for target in targets:
        for strategy in STRATEGIES:
            name = slug(target + strategy[1:2])
            trace = Path("traces") / f"{name}.trace.jsonl"
            r.run(f"check-{name}", ["check", *target, *strategy, "--json", "--trace-out", str(trace)])
            if (r.folder / trace).exists():
                traces.append(trace)
    r.run("check-determinism", ["check", *PROTOCOL_POINTS[0], "--runs", "5", "--check-determinism"])
    r.run("check-human", ["check", *PROTOCOL_POINTS[2], "--runs", "20", "--keep-going"])
    for trace in traces:
        stem = trace.name.removesuffix(".jsonl")
        r.run(f"replay-{stem}", ["replay", str(trace)])
        r.run(f"replay-json-{stem}", ["replay", "--json", str(trace)])
        shrunk = trace.parent / f"{stem}.shrunk.jsonl"
        r.run(f"shrink-{stem}", ["shrink", str(trace), "-o", str(shrunk), "--max-tests", "300"])
        r.run(f"export-{stem}", ["export", str(trace), "--perfetto", str(trace.parent / f"{stem}.perfetto.json")])
        if (r.folder / shrunk).exists():
            r.run(f"export-shrunk-{stem}",
                  ["export", str(shrunk), "--perfetto", str(trace.parent / f"{stem}.shrunk.perfetto.json")])
    r.run("protocols", ["protocols"])
    r.run("protocols-json", ["protocols", "--json"])
    r.run("demo", ["demo", "--out", "demo"])  # a suite since issue 21 (no --runs); hazards show in run 1


def cross_read(new: Runner, old_folder: Path) -> None:
    """The new build replays the traces the old build wrote."""
    for trace in sorted((old_folder / "traces").glob("*.jsonl")):
        new.run(f"cross-replay-{trace.stem}", ["replay", str(trace.resolve())])


def strip(value, ignored: set[str]):
    if isinstance(value, dict):
        return {k: strip(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [strip(v, ignored) for v in value]
    return value


def normalized(path: Path, ignored: set[str]) -> str:
    """The file's text with ignored keys dropped and wall times masked."""
    text = path.read_text(errors="replace")
    if path.suffix == ".jsonl":
        return "\n".join(json.dumps(strip(json.loads(line), ignored)) for line in text.splitlines())
    if path.suffix == ".json":
        return json.dumps(strip(json.loads(text), ignored), indent=1)
    # A stdout capture: a --json report is one document between the stdout and stderr markers.
    text = re.sub(r"--- stdout\n(\{.*\})\n--- stderr",
                  lambda m: "--- stdout\n" + json.dumps(strip(json.loads(m.group(1)), ignored), indent=1)
                  + "\n--- stderr", text, flags=re.S)
    text = re.sub(r"^progress: .*\n", "", text, flags=re.M)  # wall-clock progress lines on stderr
    text = re.sub(r"inconclusive after (\d+) s \(\d+ schedules", r"inconclusive after \1 s (<n> schedules", text)
    text = re.sub(r"\b\d+\.\d\ds\b", "<time>s", text)  # the demo's time column
    return re.sub(r", \d+\.\d\d s\b", ", <time> s", text)  # check's "N steps, T s"


def compare(old: Path, new: Path, ignored: set[str], limit: int) -> int:
    old_files = {p.relative_to(old) for p in old.rglob("*") if p.is_file()}
    new_files = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    problems = 0
    for rel in sorted(old_files ^ new_files):
        if str(rel).startswith("stdout/cross-replay-"):
            continue
        print(f"only in {'old' if rel in old_files else 'new'}: {rel}")
        problems += 1
    for rel in sorted(old_files & new_files):
        a, b = (old / rel).read_bytes(), (new / rel).read_bytes()
        if a == b:
            continue
        na, nb = normalized(old / rel, ignored), normalized(new / rel, ignored)
        if na == nb:
            continue
        problems += 1
        print(f"differs: {rel}")
        diff = difflib.unified_diff(na.splitlines(), nb.splitlines(), "old", "new", lineterm="", n=1)
        for i, line in enumerate(diff):
            if i >= limit:
                print("    ...")
                break
            print("    " + line[:300])
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", help="git ref of the old build (default: merge-base of HEAD and main)")
    p.add_argument("--old-bin", help="an already built old amaxcheck binary")
    p.add_argument("--new-bin", help="an already built new amaxcheck binary (default: build the working tree)")
    p.add_argument("--ignore", action="append", default=[], metavar="KEY",
                   help="a JSON key the new build may add or change (repeatable)")
    p.add_argument("--work", type=Path, default=ROOT.parent / f"{ROOT.name}-byte-identity",
                   help="folder for the old worktree (with its build) and both runs' outputs "
                        "(default: next to this checkout)")
    p.add_argument("--diff-lines", type=int, default=12, help="diff lines shown per differing file")
    args = p.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        binaries = {"old": old_binary(args), "new": new_binary(args)}
    except subprocess.CalledProcessError as e:
        print(f"byte_identity: build failed: {e}", file=sys.stderr)
        return 2
    runners = {}
    for side, binary in binaries.items():
        folder = args.work / "runs" / side
        shutil.rmtree(folder, ignore_errors=True)
        shipped = populate(folder)
        runners[side] = Runner(binary, folder)
        exercise(runners[side], shipped)
    cross_read(runners["new"], runners["old"].folder)
    problems = compare(runners["old"].folder, runners["new"].folder, ALWAYS_IGNORED | set(args.ignore),
                       args.diff_lines)
    unreadable = [out for out in sorted((runners["new"].folder / "stdout").glob("cross-replay-*.out"))
                  if re.search(r"^exit [23]$", out.read_text(), flags=re.M)]
    for out in unreadable[:args.diff_lines]:
        error = out.read_text().split("--- stderr\n", 1)[-1].strip().splitlines()[:1]
        print(f"the new build cannot read the old build's trace {out.name.removeprefix('cross-replay-')}: "
              f"{error[0] if error else '?'}")
    if unreadable and "scenario_hash" in args.ignore:
        print(f"note: {len(unreadable)} old trace(s) refused; expected, since --ignore scenario_hash says the "
              "hash definition changed (regenerate such traces)")
    else:
        problems += len(unreadable)
    files = sum(1 for p in (runners["new"].folder).rglob("*") if p.is_file())
    print(f"byte identity: {files} outputs compared, {problems} difference(s)"
          + (f" (ignoring {', '.join(sorted(ALWAYS_IGNORED | set(args.ignore)))})"))
    return 0 if problems == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
