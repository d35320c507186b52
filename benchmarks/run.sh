#!/usr/bin/env bash
# run.sh BUILD_DIR: the whole benchmark report for the README, as markdown.
#   1. configures BUILD_DIR as a Release build with SOA_BUILD_BENCHMARKS=ON if it is not one;
#   2. builds soa_bench, soa_callgrind, soac and soa_jit_compile (JOBS, default 2, parallel jobs);
#   3. runs soa_bench (5 repetitions, randomly interleaved so that a burst of load on this
#      shared machine spreads over all benchmarks instead of hitting one; medians reported),
#      then soa_bench_constraints (constrained forward dynamics, the same way),
#      soa_bench_loops (step loops against the same kernels written out) and
#      soa_bench_derivatives (the derivative kernels against the plain ones, with LLVM);
#   4. runs soa_jit_compile when the LLVM back-end is built (its compile time for all
#      standard kernels of the Panda and the Talos robots, 5 repetitions), and
#      soa_bench_derive (the rewriter's time, 3 repetitions);
#   5. runs callgrind.sh (instructions per call and operation counts);
#   6. runs build_cost.sh (the cost of compiling the generated C++ soac emit writes).
# soa_bench's full console output is kept in BUILD_DIR/benchmarks/soa_bench.log.
# Takes a few minutes after the build, most of it build_cost.sh's 100-body tree.
# The build uses the project's flags (plain x86-64, the ISA of Debian's MuJoCo). To measure
# code compiled for the machine, give a fresh BUILD_DIR and e.g.
#   CXXFLAGS=-march=x86-64-v3 benchmarks/run.sh build-bench-v3
# (CMake reads CXXFLAGS at the first configure; not -march=native on AVX-512 machines if
# callgrind is to run: valgrind 3.19 cannot execute AVX-512).
set -euo pipefail

build=${1:?usage: run.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(dirname "$here")
jobs=${JOBS:-2}

cache=$build/CMakeCache.txt
if [[ ! -f $cache ]] || ! grep -q '^SOA_BUILD_BENCHMARKS:BOOL=ON$' "$cache" ||
   ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$cache"; then
  cmake -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSOA_BUILD_BENCHMARKS=ON \
    -DSOA_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target soa_bench soa_bench_constraints soa_bench_loops soa_bench_derive soa_callgrind soac \
  -j "$jobs" >/dev/null
if grep -q '^SOA_WITH_LLVM:BOOL=ON$' "$cache"; then  # soa_bench_derivatives compiles through the JIT
  cmake --build "$build" --target soa_bench_derivatives -j "$jobs" >/dev/null
fi
jit_compile=$build/benchmarks/soa_jit_compile
if grep -q '^SOA_WITH_LLVM:BOOL=ON$' "$cache"; then
  cmake --build "$build" --target soa_jit_compile -j "$jobs" >/dev/null
fi

# table NAME CHECKS [ARGS...]: benchmark NAME with the 5 randomly interleaved repetitions
# every table here takes (and ARGS), its output kept in BUILD_DIR/benchmarks/NAME.log; prints
# its check lines (CHECKS = checks) and its markdown table.
table() {
  local name=$1 checks=$2 log=$build/benchmarks/$1.log
  shift 2
  "$build/benchmarks/$name" --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true "$@" \
    >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  if [[ $checks == checks ]]; then
    grep '^check ' "$log" | sed 's/^/    /'
    echo
  fi
  sed -n "/^<!-- $name table -->\$/,\$p" "$log" | tail -n +2
  echo
}
echo "# soac benchmarks"
echo
echo "$(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)), g++ $(g++ -dumpfullversion)."
echo
table soa_bench checks --benchmark_min_time=0.2
# 3b. constrained forward dynamics (soa_bench_constraints, the same repetitions).
table soa_bench_constraints checks --benchmark_min_time=0.2
# 3b'. step loops against the same kernels written out (soa_bench_loops).
table soa_bench_loops - --benchmark_min_time=0.2
# 3c. the derivative kernels (soa_bench_derivatives, with LLVM only).
if [[ -x $build/benchmarks/soa_bench_derivatives ]]; then
  table soa_bench_derivatives -
fi
if [[ -x $jit_compile ]]; then
  # 4. the JIT's compile time for all standard kernels (soa_jit_compile: 5 repetitions).
  jlog=$build/benchmarks/soa_jit_compile.log
  "$jit_compile" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true >"$jlog" 2>&1 ||
    { cat "$jlog" >&2; exit 1; }
  echo "JIT compile time, all 7 standard kernels (soa_jit_compile, 5 repetitions, wall clock; CPU of all threads):"
  echo
  echo "| robot, tips | operations | compiled (shared once) | median (ms) | mean (ms) | CV | median CPU (s) |"
  echo "|---|--:|--:|--:|--:|--:|--:|"
  awk '/real_time_(median|mean|cv) / {
         split($1, part, "/iterations:1/real_time_"); name = part[1]; sub(/^jit_compile\//, "", name)
         for (i = 2; i <= NF; ++i) { if ($i ~ /^cpu_s=/) cpu = substr($i, 7); if ($i ~ /^ops=/) ops = substr($i, 5); if ($i ~ /^compiled_ops=/) compiled = substr($i, 14) }
         if (part[2] == "median") { median[name] = $2; mcpu[name] = cpu; count[name] = ops; shared[name] = compiled; order[++n] = name }
         if (part[2] == "mean") mean[name] = $2
         if (part[2] == "cv") cv[name] = $2 " %"
       }
       END { for (i = 1; i <= n; ++i) { k = order[i]; printf "| %s | %s | %s | %s | %s | %s | %.2f |\n", k, count[k], shared[k], median[k], mean[k], cv[k], mcpu[k] } }' "$jlog"
  echo
fi
# 4b. the rewriter's time (soa_bench_derive: 3 repetitions).
dlog=$build/benchmarks/soa_bench_derive.log
"$build/benchmarks/soa_bench_derive" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true >"$dlog" 2>&1 ||
  { cat "$dlog" >&2; exit 1; }
echo "The rewriter's time, rewrite::derive with the built-in library (soa_bench_derive, 3 repetitions):"
echo
echo "| expression | median (ms) | steps |"
echo "|---|--:|--:|"
awk '/_median / { name = $1; sub(/^derive\//, "", name); sub(/_median$/, "", name)
       for (i = 2; i <= NF; ++i) if ($i ~ /^steps=/) steps = substr($i, 7)
       printf "| %s | %s | %s |\n", name, $2, steps }' "$dlog"
echo
"$here/callgrind.sh" "$build"
echo
"$here/build_cost.sh" "$build"
