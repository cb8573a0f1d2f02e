# shellcheck shell=bash disable=SC2154,SC2034  # sourced by harness/gpu_check, which sets the variables
# harness/gpu_check_multi_rank.sh: harness/gpu_check's section for several ranks of one
# communicator on one GPU (sourced, not run; needs gpu_check_lib.sh). It runs only when the
# loaded NCCL is >= 2.30, which may do that when NCCL_MULTI_RANK_GPU_ENABLE=1 (placement.h).
#
# Settings, all in step_env so the report shows them:
# - NCCL_MULTI_RANK_GPU_ENABLE=1: the switch (experimental in NCCL 2.30);
# - NCCL_NVLS_ENABLE=0: NVLS cannot serve two ranks on one GPU (NCCL would disable it silently);
# - NCCL_MAX_CTAS (with NCCL_MIN_CTAS=1): each rank on a GPU brings its own channels, one CTA
#   each, and the members of a collective must all be resident at once next to the backend's
#   spinning gate kernels. NCCL's docs advise capping it; the probe below tries the values of
#   --max-ctas in order (largest first, "unset" = NCCL's choice) with 8 members and keeps the
#   first that works for everything after it;
# - NCCL_DEBUG=WARN: NCCL's own warnings land in the full log.
#
# The caller sets bench, amaxcheck_bin, mpi_bin, root, ctas_candidates and everything
# gpu_check_lib.sh needs.

multi_rank_base_env=(NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)

ctas_env() {  # value ("unset" or a number): sets step_env
  step_env=("${multi_rank_base_env[@]}")
  [[ $1 == unset ]] || step_env+=("NCCL_MAX_CTAS=$1" NCCL_MIN_CTAS=1)
}

# Tries each NCCL_MAX_CTAS candidate with 8 members; sets chosen_ctas ("" when none worked).
probe_ctas() {
  section "Several ranks per GPU: NCCL_MAX_CTAS probe (bench_gpu --ranks 8 --probe)"
  chosen_ctas=""
  local v
  for v in ${ctas_candidates//,/ }; do
    ctas_env "$v"
    if ((dry_run)); then
      say "- NCCL_MAX_CTAS=$v: would run (limit 45 s): $(shown "$bench" --ranks 8 --probe); the first that prints probe_gates_off: ok is kept"
      [[ -n $chosen_ctas ]] || chosen_ctas="$v (dry run: assumed)"
      continue
    fi
    run_limited 45 "$bench" --ranks 8 --probe
    keep_full_output "probe NCCL_MAX_CTAS=$v: $(shown "$bench" --ranks 8 --probe)"
    local verdict
    if grep -q '^probe_gates_off: ok' "$log.step"; then
      verdict="works: $(grep -m1 '^probe_gates_on:' "$log.step" | sed 's/^probe_gates_on: ok, //') gated"
      [[ -n $chosen_ctas ]] || chosen_ctas="$v"
    elif ((step_rc == 124 || step_rc == 137)); then
      verdict="FAILS: killed after the step's limit (a hang the watchdog could not escape)"
    else
      verdict="FAILS (exit $step_rc): $(grep -m1 -E 'FAILED|SKIP|error' "$log.step" || echo 'no verdict line')"
    fi
    say "- NCCL_MAX_CTAS=$v: $verdict ($step_s s)"
    rm -f "$log.step"
  done
  if [[ -z $chosen_ctas ]]; then
    say "no NCCL_MAX_CTAS value worked with 8 members: the other several-ranks-per-GPU steps are not run"
    status=1
  else
    say "kept: NCCL_MAX_CTAS=${chosen_ctas}"
  fi
}

# The seed design points (4 modules, 2 iterations of 2 microbatches, concurrent kernels) with 2
# and 4 members per communicator, then the shipped CLI points that have more than one rank.
multi_rank_cli_checks() {
  local seed_point="--modules 4 --iters 2 --microbatches 2 --kernels concurrent --amax-order rank-dependent"
  local dp
  for dp in 2 4; do
    # shellcheck disable=SC2086  # seed_point is a list of words
    cli_step 1 check te-async --comm separate --wait after-copy $seed_point --dp "$dp" --seed 1
    # shellcheck disable=SC2086
    cli_step 0 check te-async --comm separate --wait before-copy $seed_point --dp "$dp" --seed 1
    cli_step 0 check te-async --comm shared --wait before-copy --amax-order same --modules 4 --dp "$dp" --seed 1
  done
  cli_step 1 check te-async --wait after-copy --dp 2 --seed 1
  cli_step 1 check "$root/traces/scenarios/custom-wait-after-copy.json" --seed 3
  cli_step 1 check te-async --comm shared --wait after-copy --dp 4 --modules 3 --seed 5
}

run_multi_rank_section() {
  probe_ctas
  [[ -n $chosen_ctas ]] || return
  ctas_env "${chosen_ctas%% *}"

  run_step "Several ranks per GPU: GPU tests (real cross-rank reductions, mismatch, hang)" 240 \
    "$bench_dir/cuda_tests" --gtest_filter='Gpu.*'

  section "Several ranks per GPU: differential check through the CLI (2 and 4 members per communicator)"
  if [[ -x $amaxcheck_bin ]] || ((dry_run)); then multi_rank_cli_checks; else say "skipped: $amaxcheck_bin is missing"; fi

  section "Several ranks per GPU: a real collective mismatch and a real hang, escaped by the watchdog"
  local seed_point="--modules 4 --iters 2 --microbatches 2 --kernels concurrent --amax-order rank-dependent"
  local dp
  for dp in 2 4; do
    # shellcheck disable=SC2086
    guarded_step "mismatch, shared communicator, rank-dependent order, $dp members" 1 60 '^  collective_mismatch: ' \
      check te-async --comm shared --wait before-copy $seed_point --dp "$dp" --seed 1
  done
  guarded_step "hang, one member never joins" 1 30 '^  deadlock: hang on GPU: .*grad_bucket' \
    check "$root/harness/gpu_scenarios/member-never-joins.json" --seed 1

  run_step "Several ranks per GPU: benchmarks, 2 members on one GPU" 150 "$bench" --ranks 2
  run_step "Several ranks per GPU: benchmarks, 8 members on one GPU" 150 "$bench" --ranks 8

  section "Several ranks per GPU: launch mode 2, two processes sharing the GPU (2-member communicators)"
  if { [[ -x $mpi_bin ]] && command -v mpirun >/dev/null 2>&1; } || ((dry_run)); then
    mpi_pair_step 1 te-async --wait after-copy --dp 2
    mpi_pair_step 0 te-async --wait before-copy --dp 2
  else
    say "skipped: mpirun or $mpi_bin is not available here"
  fi
}
