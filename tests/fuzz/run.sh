#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/CMakeLists.txt, clang++-16) in BUILD_DIR and runs them.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET ...]   a long run: every target (syntax, urdf,
#       eval; default all) for SECONDS at once, at nice 19; each keeps growing its corpus in
#       BUILD_DIR/corpus/TARGET and saves what fails in BUILD_DIR/findings/TARGET/; its log is
#       BUILD_DIR/TARGET.log, and the last lines (executions, cov, ft) are printed at the end.
#   tests/fuzz/run.sh BUILD_DIR --runs N TARGET         the test-suite's bounded run: N inputs
#       from the seed corpus with a fixed seed and a fresh working corpus.
#   tests/fuzz/run.sh BUILD_DIR --build                 configure and build only.
#
# Exit status: 0 when no target failed; 1 when one crashed, leaked, broke an oracle or hit
# a sanitizer (the input is in BUILD_DIR/findings/TARGET/, reproduce with
# BUILD_DIR/fuzz_TARGET FILE); 2 on usage errors.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
usage() { echo "usage: $0 BUILD_DIR (SECONDS | --runs N | --build) [TARGET ...]" >&2; exit 2; }
(($# >= 2)) || usage
build="$1"; shift
mode="$1"; shift
runs=""
case "$mode" in
  --build) ;;
  --runs) (($# >= 1)) || usage; runs="$1"; shift ;;
  *[!0-9]* | "") usage ;;
esac
targets=("$@")
((${#targets[@]})) || targets=(syntax urdf eval)
for t in "${targets[@]}"; do
  [ -d "$here/corpus/$t" ] || { echo "$0: unknown target '$t' (syntax, urdf, eval)" >&2; exit 2; }
done

cxx="${SOA_FUZZ_CXX:-clang++-16}"
command -v "$cxx" >/dev/null || { echo "$0: $cxx not found: apt-get install clang-16 libclang-rt-16-dev" >&2; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build"
# The build directory only names where the objects go: let every one share ccache's entries.
export CCACHE_NOHASHDIR=1
{ [ -f "$build/CMakeCache.txt" ] || cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}"
  cmake --build "$build" -j"$(nproc)"; } >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log"; echo "$0: building the fuzz targets failed: $build/build.log" >&2; exit 2; }
[ "$mode" = --build ] && exit 0

# Leaks fail a run too (libFuzzer's -detect_leaks is on by default with ASan).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

if [ -n "$runs" ]; then
  status=0
  for t in "${targets[@]}"; do
    work="$build/work/$t"
    rm -rf "$work" && mkdir -p "$work" "$build/findings/$t"
    # New inputs go to the first folder only, so the repository's corpus is left as it is.
    "$build/fuzz_$t" -runs="$runs" -seed=1 -dict="$here/$t.dict" -max_len=16384 -timeout=60 \
        -artifact_prefix="$build/findings/$t/" -print_final_stats=1 "$work" "$here/corpus/$t" \
        >"$build/$t.log" 2>&1 || { status=1; echo "fuzz_$t failed: see $build/$t.log"; }
    grep -E '^#[0-9]+ +DONE|^Done' "$build/$t.log" | sed "s/^/fuzz_$t: /" || true
    ((status == 0)) || tail -40 "$build/$t.log"
  done
  exit $status
fi

seconds="$mode"
# crash-, leak-, timeout- and oom- inputs; slow-unit- ones are only the slowest input so far.
findings() { ls "$build/findings/$1" | grep -v '^slow-unit-' || true; }
# A target runs until it fails, is restarted on its grown corpus with the time that is left,
# and so collects distinct findings (at most 20) for the whole time; an input that runs for
# more than 60 s of wall time is a finding too (a hang: the inputs take milliseconds, but
# at nice 19 on a busy machine one may wait seconds for a CPU).
long_run() {
  local t="$1" end=$((SECONDS + seconds)) left
  mkdir -p "$build/corpus/$t" "$build/findings/$t"
  : >"$build/$t.log"
  while left=$((end - SECONDS)); ((left > 0)); do
    nice -n 19 "$build/fuzz_$t" -max_total_time="$left" -dict="$here/$t.dict" -max_len=16384 \
        -timeout=60 -artifact_prefix="$build/findings/$t/" -print_final_stats=1 \
        "$build/corpus/$t" "$here/corpus/$t" >>"$build/$t.log" 2>&1 && break
    (($(findings "$t" | wc -l) < 20)) || break
  done
}
pids=()
for t in "${targets[@]}"; do
  long_run "$t" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || true
  t="${targets[$i]}"
  [ -z "$(findings "$t")" ] || status=1
  echo "== fuzz_$t: $(grep -E '^#[0-9]+[[:space:]]' "$build/$t.log" | tail -1)"
  echo "   executions: $(awk '/^stat::number_of_executed_units/ {n += $2} END {print n + 0}' "$build/$t.log")," \
       "sessions: $(grep -c '^stat::number_of_executed_units' "$build/$t.log")"
  findings "$t" | sed 's/^/   finding: /'
done
exit $status
