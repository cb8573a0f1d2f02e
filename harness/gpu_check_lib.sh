# shellcheck shell=bash disable=SC2154,SC2034  # sourced by harness/gpu_check, which sets the variables
# harness/gpu_check_lib.sh: the step runner of harness/gpu_check (sourced, not run).
#
# Every step goes through run_step, cli_step or guarded_step, so that
# - a dry run (dry_run=1) prints exactly what would run, with its environment and time limit,
#   and runs nothing;
# - no step outlives the whole check's deadline (deadline, in bash SECONDS): each step's limit
#   is cut to what is left, and a step with under 15 s left is not started but reported;
# - every step's full output goes to the full log ($full_log.tmp.$$), the report keeps the
#   verdict lines.
#
# The caller sets: log, full_log, status, skipped_tests (0), dry_run, deadline, and step_env (an array of
# VAR=value words put in front of every command; empty for the plain steps).

say() { printf '%s\n' "$*" | tee -a "$log"; }
section() { printf '\n## %s\n\n' "$*" | tee -a "$log"; }

# The limit a step may use: its own, cut to the time left before the deadline; 0 when the
# step should not start.
step_limit() {  # limit_s
  local left=$((deadline - SECONDS))
  ((left < 15)) && { echo 0; return; }
  ((left < $1)) && { echo "$left"; return; }
  echo "$1"
}

# One line that can be pasted into a shell: the environment, then the command.
shown() { printf '%q ' "${step_env[@]}" "$@" | sed 's/ $//'; }

# Runs "$@" under timeout with step_env, output to $log.step; sets step_rc (124/137 on a
# timeout, 125 when it was not started for lack of time) and step_s.
run_limited() {  # limit_s, command...
  local limit
  limit=$(step_limit "$1"); shift
  step_s=0
  if ((limit == 0)); then
    step_rc=125
    echo "not started: the check's deadline is less than 15 s away" >"$log.step"
    return
  fi
  local start=$SECONDS
  env "${step_env[@]}" timeout --kill-after=10 "$limit" "$@" >"$log.step" 2>&1
  step_rc=$?
  step_s=$((SECONDS - start))
}

keep_full_output() {  # title
  { printf '\n===== %s (exit %s, %s s)\n' "$1" "$step_rc" "$step_s"; cat "$log.step"; } >>"$full_log.tmp.$$"
}

run_step() {  # name, limit_s, command...
  local name="$1" limit="$2"; shift 2
  section "$name"
  if ((dry_run)); then
    say "would run (limit ${limit} s): $(shown "$@")"
    return
  fi
  run_limited "$limit" "$@"
  keep_full_output "$name: $(shown "$@")"
  # gtest prints one line per test; keep the verdict lines, the failures and "name: value" lines.
  grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Skipped|Failure|SKIP:|FAILED:|: ' "$log.step" | grep -v '^\[ *RUN' \
    | head -n 200 | tee -a "$log"
  ((step_rc == 124 || step_rc == 137)) && say "TIMEOUT after ${limit}s: the step was killed"
  ((step_rc == 125)) && say "NOT RUN: out of time (the check's deadline)"
  # A test that skips (too few GPUs for it, say) passes gtest but checked nothing: counted, so
  # the verdict cannot read "all GPU checks passed" over tests that never ran.
  local skipped
  skipped=$(grep -cE '^\[ *SKIPPED *\] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+ \(' "$log.step")
  if ((skipped > 0)); then
    say "NOT RUN here: $skipped test(s) skipped (their reasons are above)"
    skipped_tests=$((skipped_tests + skipped))
  fi
  say "(exit $step_rc, $step_s s)"
  rm -f "$log.step"
  ((step_rc == 0)) || status=1
}

# The differential check through the CLI: exit code as expected, and the simulator and the
# GPU agree bit for bit.
cli_step() {  # expected exit, arguments...
  local want="$1"; shift
  if ((dry_run)); then
    say "- would run (limit 60 s): $(shown "$amaxcheck_bin" "$@" --backend gpu), expecting exit $want and agreement"
    return
  fi
  run_limited 60 "$amaxcheck_bin" "$@" --backend gpu
  keep_full_output "amaxcheck $* --backend gpu (expected exit $want)"
  local oracle
  oracle=$(grep -m1 -E '^oracle:|no usable CUDA device' "$log.step" || echo "(no oracle line)")
  say "- \`amaxcheck $* --backend gpu\`: exit $step_rc (expected $want), $step_s s; $oracle"
  grep -m1 -E '^(note|gpu backend):' "$log.step" | sed 's/^/  /' | tee -a "$log"
  if ((step_rc != want)) || ! grep -q 'simulator and GPUs agree' <<<"$oracle"; then status=1; fi
  rm -f "$log.step"
}

# A CLI run that must end on its own (a hang or a mismatch the watchdog escapes) and leave no
# process behind: it runs in a session of its own (setsid), and once it has returned, any
# process still in that session is an orphan (named, then killed).
guarded_step() {  # label, expected exit, within_s, required output (ERE), arguments...
  local label="$1" want="$2" within="$3" needs="$4"; shift 4
  if ((dry_run)); then
    say "- $label: would run in its own session (setsid, limit 90 s): $(shown "$amaxcheck_bin" "$@" --backend gpu)," \
        "expecting exit $want within $within s, output matching /$needs/, no 'did not drain', no process left"
    return
  fi
  local sid_file="$log.sid"
  # shellcheck disable=SC2016  # $$ and $@ expand in the new session's shell
  run_limited 90 setsid bash -c 'echo $$ >"$0"; exec "$@"' "$sid_file" "$amaxcheck_bin" "$@" --backend gpu
  keep_full_output "$label: amaxcheck $* --backend gpu (expected exit $want within $within s)"
  local sid orphans="" ok=1
  sid=$(cat "$sid_file" 2>/dev/null || echo 0)
  if ((sid > 0)); then
    orphans=$(ps -e -o sid=,pid=,comm= | awk -v s="$sid" '$1 == s {print $2 " " $3}' | paste -sd ',' -)
    ps -e -o sid=,pid= | awk -v s="$sid" '$1 == s {print $2}' | while read -r pid; do kill -9 "$pid" 2>/dev/null; done
  fi
  rm -f "$sid_file"
  ((step_rc == want)) || ok=0
  ((step_s <= within)) || ok=0
  grep -qE "$needs" "$log.step" || ok=0
  grep -q 'did not drain' "$log.step" && ok=0
  [[ -z $orphans ]] || ok=0
  say "- $label: \`amaxcheck $* --backend gpu\`: exit $step_rc (expected $want), $step_s s (limit $within s)," \
      "$( ((ok)) && echo passed || echo FAILED)"
  say "  processes left behind: ${orphans:-none}"
  grep -E '^(oracle|gpu|gpu backend):|^  (collective_mismatch|deadlock|unjoined_collective): ' "$log.step" | head -n 8 \
    | sed 's/^/  /' | tee -a "$log"
  ((ok)) || status=1
  rm -f "$log.step"
}

# Launch mode 2: `mpirun -np 2 amaxcheck-mpi check ... --backend gpu` under step_env (a local
# mpirun's processes inherit its environment); each process must agree with the simulator bit
# for bit, and mpirun's exit must be the expected one.
mpi_pair_step() {  # expected exit, check arguments...
  local want="$1"; shift
  local argv=(mpirun --allow-run-as-root --oversubscribe -np 2 --output-filename "$log.mpi"
              "$mpi_bin" check "$@" --backend gpu --seed 2)
  if ((dry_run)); then
    say "- would run (limit 120 s): $(shown "${argv[@]}"), expecting exit $want and agreement in both processes"
    return
  fi
  run_limited 120 "${argv[@]}"
  say "- \`mpirun -np 2 amaxcheck-mpi check $* --backend gpu\`: exit $step_rc (expected $want), $step_s s"
  ((step_rc == want)) || status=1
  local p out oracle
  for p in 0 1; do
    out=$(cat "$log.mpi"/*/rank.$p/stdout "$log.mpi"/*/rank.$p/stderr 2>/dev/null)
    printf '\n===== mpirun -np 2 amaxcheck-mpi check %s (process %s, expected exit %s)\n%s\n' "$*" "$p" "$want" "$out" \
      >>"$full_log.tmp.$$"
    oracle=$(grep -m1 -E '^oracle:|error' <<<"$out" || echo "(no oracle line)")
    say "  - $(grep -m1 '^process' <<<"$out" || echo "process $p"): $oracle"
    grep -m1 '^gpu backend:' <<<"$out" | sed 's/^/    /' | tee -a "$log"
    grep -q 'simulator and GPUs agree' <<<"$oracle" || status=1
  done
  cat "$log.step" >>"$full_log.tmp.$$"
  rm -rf "$log.mpi" "$log.step"
}
