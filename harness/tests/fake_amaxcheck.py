"""A stand-in for the amaxcheck program in the harness's own tests.

It follows the CLI contract (exit codes, the --json report, trace files) with tiny, fixed rules
so the tests can check the harness's orchestration against known answers:
  check PROTOCOL: wait=after-copy -> data_race; comm=shared with amax-order=rank-dependent ->
    ordering_hazard; --strategy exhaustive is complete when dp <= 8; --strategy timed adds
    timing figures that grow with log2(dp); an unknown option -> exit 2.
  check SCENARIO.json: clean; writes --trace-out. FAKE_SCENARIO_VERDICT=hazard reports a
    deadlock for it instead, =inconclusive a check cut short, =crash an internal error (exit 3).
  replay/shrink/export: on fake traces (JSON lines with "step", plus {"hazard": kind} lines).
  fr-scan: runs the real program's (FAKE_AMAXCHECK_REAL, the AMAXCHECK_BIN the fake replaced).
  hazard-kinds --json: a kind table (FAKE_REVERSED_KINDS=1 lists it in reverse order, so a test
    can tell that the harness takes the order and labels from the program).
  check --backend gpu: reports for OMPI_COMM_WORLD_RANK / SLURM_PROCID (with process and
    processes); run as plain amaxcheck (not amaxcheck-mpi) in a multi-process launch -> exit 2.
  check --time-budget S: a check that would sleep longer (FAKE_SLEEP_S) stops at S, inconclusive
    (cut short: time_budget), unless FAKE_IGNORE_BUDGET=1 (a hang: the harness's deadline ends
    it); --max-steps below 20 cuts every run short (step_cap: a timed run has no figures).
Environment: FAKE_AMAXCHECK_LOG (append argv as JSON lines), FAKE_SLEEP_S (per check),
FAKE_CRASH_DP (exit 3 for that dp), FAKE_GPU_HAZARD_RANK (that rank reports a hazard),
FAKE_WRONG_EXIT (check exits 0 for a hazard, 1 otherwise: the report and the exit code disagree),
FAKE_TIMED_HANG (a timed check reports a deadlock, with its timing figures), FAKE_NO_CAUSE (a
report cut short names no cause).
"""

import json
import math
import os
import sys
import time

KNOWN = {"--comm", "--wait", "--wait-bwd", "--amax-order", "--dp", "--tp", "--pp", "--cp", "--modules",
         "--microbatches", "--iters", "--kernels", "--strategy", "--seed", "--runs",
         "--trace-out", "--backend", "--alpha-us", "--depth", "--max-schedules", "--time-budget",
         "--max-steps"}
FLAGS = {"--json", "--keep-going", "--no-progress"}


def log(argv):
    path = os.environ.get("FAKE_AMAXCHECK_LOG")
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(argv) + "\n")


def options(args):
    opts, flags, rest, i = {}, set(), [], 0
    while i < len(args):
        a = args[i]
        if a in FLAGS:
            flags.add(a)
        elif a.startswith("--"):
            if a not in KNOWN:
                print(f"error: unknown option {a}", file=sys.stderr)
                sys.exit(2)
            opts[a] = args[i + 1]
            i += 1
        else:
            rest.append(a)
        i += 1
    return opts, flags, rest


def hazard(kind, summary, rank=0):
    return {"kind": kind, "summary": summary,
            "participants": [{"rank": rank, "lane": "stream amax", "op": "amax_allreduce",
                              "origin": "iter 0", "step": 7}],
            "replay": "amaxcheck replay fake.jsonl"}


def write_trace(path, hazards):
    with open(path, "w") as out:
        out.write(json.dumps({"format": "fake", "version": 1}) + "\n")
        for step in range(12):
            out.write(json.dumps({"step": step, "rank": step % 2}) + "\n")
        for h in hazards:
            out.write(json.dumps({"hazard": h["kind"], "summary": h["summary"]}) + "\n")


def check(args):
    opts, flags, rest = options(args)
    cut = []
    if os.environ.get("FAKE_SLEEP_S"):
        sleep, budget = float(os.environ["FAKE_SLEEP_S"]), float(opts.get("--time-budget", 0))
        if budget and sleep > budget and not os.environ.get("FAKE_IGNORE_BUDGET"):
            sleep = budget
            cut.append({"cause": "time_budget", "limit": budget, "raise_with": "--time-budget"})
        time.sleep(sleep)
    if int(opts.get("--max-steps", 0) or 0) and int(opts["--max-steps"]) < 20:
        cut.append({"cause": "step_cap", "limit": int(opts["--max-steps"]), "runs": 1,
                    "raise_with": "--max-steps"})
    dp = int(opts.get("--dp", 2))
    if os.environ.get("FAKE_CRASH_DP") == str(dp):
        print("internal error: fake crash", file=sys.stderr)
        sys.exit(3)
    strategy = opts.get("--strategy", "random")
    hazards = []
    target = rest[0] if rest else ""
    rank = None
    if opts.get("--backend") == "gpu":
        rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("SLURM_PROCID", "0")))
        size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1")))
        if size > 1 and not sys.argv[0].endswith("amaxcheck-mpi"):
            print(f"error: this process was launched as process {rank} of {size}: multi-process "
                  "GPU runs need amaxcheck-mpi", file=sys.stderr)
            sys.exit(2)
        if os.environ.get("FAKE_GPU_HAZARD_RANK") == str(rank):
            hazards.append(hazard("data_race", f"race seen on rank {rank}", rank))
    elif target.endswith(".json"):
        if os.environ.get("FAKE_SCENARIO_VERDICT") == "crash":
            print("internal error: the fake crashed", file=sys.stderr)
            sys.exit(3)
        if os.environ.get("FAKE_SCENARIO_VERDICT") == "hazard":
            hazards.append(hazard("deadlock", "wait-for cycle in the scenario"))
    else:
        if "after-copy" in (opts.get("--wait"), opts.get("--wait-bwd")):
            hazards.append(hazard("data_race", "RAW on amax_history vs amax all-reduce"))
        if opts.get("--comm") == "shared" and opts.get("--amax-order") == "rank-dependent":
            hazards.append(hazard("ordering_hazard", "amax vs gradient order differs"))
    complete = strategy == "exhaustive" and dp <= 8 and not cut
    if strategy == "exhaustive" and not complete and not cut:
        cut.append({"cause": "schedule_cap", "limit": int(opts.get("--max-schedules", 0)),
                    "raise_with": "--max-schedules"})
    if target.endswith(".json") and os.environ.get("FAKE_SCENARIO_VERDICT") == "inconclusive":
        cut.append({"cause": "step_cap", "limit": 100, "raise_with": "--max-steps"})
    if strategy == "timed" and os.environ.get("FAKE_TIMED_HANG"):  # the timed run hangs (its figures stay)
        hazards.append(hazard("deadlock", "wait-for cycle in the timed run"))
    verdict = "hazard" if hazards else "proven_clean" if complete else \
        "inconclusive" if cut else "no_hazard_found"
    if os.environ.get("FAKE_NO_CAUSE"):  # an inconclusive report that names no cause
        cut = []
    report = {"verdict": verdict, "hazards": hazards,
              "runs": int(opts.get("--runs", opts.get("--max-schedules", 1))),
              "complete": complete,
              "strategy": strategy, "seed": int(opts.get("--seed", 0)),
              "trace": opts.get("--trace-out"), "cut_short": cut}  # kept with a hazard, as the program does
    if rank is not None:
        report["rank"] = rank
        report["process"], report["processes"] = rank, size
    if strategy == "timed" and not cut:  # a run cut short has no figures, hazard or not
        shared = opts.get("--comm") == "shared"
        alpha = float(opts.get("--alpha-us", 8))
        report["timing"] = {
            "iteration_time_us": 1000.0 + dp,
            "exposed_amax_latency_us": alpha + 2 * math.log2(dp) + (20.0 if shared else 0.0),
            "amax_queued_us": 20.0 * math.log2(dp) if shared else 0.0,
            "extra_comm_memory_bytes": 0 if shared else 512 * 1024 * 1024}
    if "--trace-out" in opts:
        write_trace(opts["--trace-out"], hazards)
    if "--json" in flags:
        print("fake: log line before the report")
        print(json.dumps(report, indent=2))
    code = 1 if hazards else 4 if verdict == "inconclusive" else 0
    if os.environ.get("FAKE_WRONG_EXIT"):  # a program whose exit code contradicts its report
        code = 0 if code else 1
    return code


def read_trace(path):
    steps, hazards = [], []
    with open(path) as lines:
        for line in lines:
            doc = json.loads(line)
            if doc.get("diverge"):
                print(f"error: diverged at step {doc.get('step', 0)}: expected x, got y",
                      file=sys.stderr)
                sys.exit(2)
            if "step" in doc:
                steps.append(doc)
            if "hazard" in doc:
                hazards.append(doc)
    return steps, hazards


# Test data standing in for the real program's table (src/detectors/hazard.h).
HAZARD_KINDS = [("data_race", "race"), ("collective_mismatch", "mismatch"), ("ordering_hazard", "order"),
                ("unjoined_collective", "unjoined"), ("deadlock", "deadlock"),
                ("value_mismatch", "value"), ("replica_divergence", "divergence")]


def hazard_kinds():
    kinds = HAZARD_KINDS[::-1] if os.environ.get("FAKE_REVERSED_KINDS") else HAZARD_KINDS
    print(json.dumps({"hazard_kinds": [{"name": n, "short": s, "description": f"fake {n}"} for n, s in kinds]}))
    return 0


def main(argv):
    log(argv)
    cmd, args = argv[0], argv[1:]
    if cmd == "hazard-kinds":
        return hazard_kinds()
    if cmd == "fr-scan":  # the Flight Recorder reader is the real program's (FAKE_AMAXCHECK_REAL)
        real = os.environ.get("FAKE_AMAXCHECK_REAL")
        if not real:
            print("fr-scan needs the real program: FAKE_AMAXCHECK_REAL is not set", file=sys.stderr)
            return 3
        os.execv(real, [real, cmd, *args])
    if cmd == "check":
        return check(args)
    if cmd == "replay":
        steps, hazards = read_trace(args[0])
        found = [hazard(h["hazard"], h["summary"]) for h in hazards]
        print(json.dumps({"verdict": "hazard" if found else "no_hazard_found", "hazards": found,
                          "runs": 1, "complete": True, "strategy": "replay", "seed": 0,
                          "trace": args[0]}))
        return 1 if found else 0
    if cmd == "shrink":
        steps, hazards = read_trace(args[0])
        out = args[args.index("-o") + 1]
        with open(out, "w") as f:
            f.write(json.dumps({"format": "fake", "version": 1}) + "\n")
            for s in steps[: max(1, len(steps) // 3)]:
                f.write(json.dumps(s) + "\n")
            for h in hazards:
                f.write(json.dumps(h) + "\n")
        return 0
    if cmd == "export":
        read_trace(args[0])
        out = args[args.index("--perfetto") + 1]
        with open(out, "w") as f:
            json.dump({"traceEvents": []}, f)
        return 0
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
