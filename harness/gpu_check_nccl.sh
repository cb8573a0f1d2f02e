# shellcheck shell=bash disable=SC2154,SC2034  # sourced by harness/gpu_check, which sets the variables
# harness/gpu_check_nccl.sh: which NCCL harness/gpu_check runs against (sourced, not run).
#
# --nccl takes a folder holding lib/libnccl.so.2 (an NCCL build kept outside the project tree,
# e.g. NCCL 2.30 built for sm_90 only), or a .tar.xz whose single top folder is one. A BUILD_INFO
# file in that folder ("nccl_version: 2.30.7", source commit, ONLY_FUNCS, ...) says which
# version must be loaded; without one, the version in the file name libnccl.so.X.Y.Z does.
#
# Sets nccl_source, nccl_build_info, nccl_expected; check_loaded_nccl sets multi_rank.

use_nccl() {  # DIR | TARBALL; returns 1 (with the reason on stderr) when it is not an NCCL
  local arg="$1" dir
  if [[ -f $arg ]]; then
    nccl_unpacked="$(mktemp -d)"
    if ! tar -xJf "$arg" -C "$nccl_unpacked" 2>"$nccl_unpacked.err"; then
      echo "gpu_check: --nccl $arg: not a .tar.xz this machine can unpack: $(head -c 300 "$nccl_unpacked.err")" >&2
      rm -f "$nccl_unpacked.err"
      return 1
    fi
    rm -f "$nccl_unpacked.err"
    dir=$(find "$nccl_unpacked" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    dir="${dir:-$nccl_unpacked}"
  elif [[ -d $arg ]]; then
    dir="$(cd "$arg" && pwd)"
  else
    echo "gpu_check: --nccl $arg: no such folder or file" >&2
    return 1
  fi
  if [[ ! -e $dir/lib/libnccl.so.2 ]]; then
    echo "gpu_check: --nccl $arg: expected lib/libnccl.so.2 in $dir" >&2
    return 1
  fi
  nccl_expected=""
  nccl_build_info=""
  if [[ -f $dir/BUILD_INFO ]]; then
    nccl_expected=$(sed -n 's/^nccl_version: *//p' "$dir/BUILD_INFO" | head -n 1)
    nccl_build_info=$(grep -E '^(source_tag|source_commit|gencode|libnccl_bytes_stripped):' "$dir/BUILD_INFO" \
      | sed 's/: */=/' | paste -sd ' ' -)
  fi
  if [[ -z $nccl_expected ]]; then
    nccl_expected=$(find "$dir/lib" -maxdepth 1 -name 'libnccl.so.2.*' -printf '%f\n' | sed 's/^libnccl\.so\.//' | head -n 1)
  fi
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  nccl_source="--nccl $arg ($dir/lib, expected version ${nccl_expected:-unknown})"
  return 0
}

# 1 when $1 (X.Y.Z) is at least 2.30.
at_least_2_30() {
  local major minor
  IFS=. read -r major minor _ <<<"$1"
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || return 1
  ((major > 2 || (major == 2 && minor >= 30)))
}

# After the Versions step (loaded_nccl from bench_gpu --nccl-version): the library --nccl named
# must be the one loaded, and several ranks per GPU are tried only with NCCL >= 2.30. A dry run
# whose library does not load here plans with the expected version and says so.
check_loaded_nccl() {
  multi_rank=0
  local version="$loaded_nccl"
  if [[ -n $nccl_arg ]]; then
    if [[ -z $loaded_nccl ]]; then
      if ((dry_run)); then
        say "the library was not loaded here; planning with the expected version ${nccl_expected:-unknown}"
        version="$nccl_expected"
      else
        say "FAILED: could not read the loaded NCCL version (expected ${nccl_expected:-unknown})"
        status=1
      fi
    elif [[ -n $nccl_expected && $loaded_nccl != "$nccl_expected" ]]; then
      say "FAILED: loaded NCCL $loaded_nccl, but --nccl $nccl_arg holds $nccl_expected (is another libnccl.so.2 first?)"
      status=1
      return
    else
      say "loaded NCCL $loaded_nccl: the one --nccl names"
    fi
  fi
  if at_least_2_30 "$version"; then
    multi_rank=1
    say "NCCL $version >= 2.30: the several-ranks-per-GPU section runs (NCCL_MULTI_RANK_GPU_ENABLE=1 in its steps only)"
  else
    say "NCCL ${version:-unknown} < 2.30: several ranks of one communicator cannot share a GPU; that section is skipped"
  fi
}
