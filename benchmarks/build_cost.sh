#!/usr/bin/env bash
# build_cost.sh [--quick] BUILD_DIR: what building the C++ that `soac emit` generates costs,
# as two markdown tables on stdout. Uses BUILD_DIR/soac and the compiler ${CXX:-g++}.
#   1. "all standard kernels": the Panda (fixed base), TALOS reduced and full and a random
#      100-body tree (free-flyer), against the target < 30 s CPU and < 1 GB for the big two;
#   2. "linear scaling": random trees of 25 ... 400 bodies (free-flyer), inverse dynamics,
#      forward dynamics and the Jacobian only, with per-body ratios.
# For each configuration soac emit writes into a temporary directory; every *.cpp it wrote is
# compiled alone (g++ -std=c++20 -O2 -c, /usr/bin/time: user + sys CPU, peak resident memory),
# one after the other, then all of them again with 2 parallel jobs for the wall time.
# --quick: only the Panda and the 25- and 50-body trees (the ctest check, under a minute).
# Environment:
#   SOURCES=N      passes --sources N to soac emit (several source files);
#   TU_TIMEOUT=S   seconds one compilation may take (600): past it the cell says "timed out";
#   TU_MEMORY_MB=M address space one compilation may use (3072, ulimit -v): past it the cell
#                  says "out of memory".
# A full run takes several minutes on 2 cores, most of it the 100-body tree.
set -euo pipefail

quick=0
if [[ ${1:-} == --quick ]]; then quick=1; shift; fi
build=${1:?usage: build_cost.sh [--quick] BUILD_DIR}
soac=$build/soac
[[ -x $soac ]] || { echo "build_cost.sh: $soac not built (make soac)" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
robots=$(dirname "$here")/examples/robots
cxx=${CXX:-g++}
tu_timeout=${TU_TIMEOUT:-600}
tu_memory_mb=${TU_MEMORY_MB:-3072}
[[ -x /usr/bin/time ]] || { echo "build_cost.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The three kernels of table 2, declared as compiler/lower/kernels.cpp declares them.
cat >"$tmp/scaling.soa" <<'EOF'
kernel inverse_dynamics(q, qd, qdd) = calM qdd + C;
kernel forward_dynamics(q, qd, T) = calM^-1 (T - C);
kernel jacobian(q) = J;
EOF

# compile_one SOURCE TIMEFILE: compiles one TU under the time and memory limits; the exit
# status of timeout(1) (124 when it fired) or of the compiler.
compile_one() {
  (
    ulimit -v $((tu_memory_mb * 1024))
    exec timeout "$tu_timeout" /usr/bin/time -o "$2" -f "%U %S %M" \
      "$cxx" -std=c++20 -O2 -I/usr/include/eigen3 -c "$1" -o /dev/null
  ) 2>"$2.err"
}
export -f compile_one
export cxx tu_timeout tu_memory_mb

# measure ARGS...: emits with `soac emit ARGS` and sets the globals below (the cost cells
# hold "timed out (> S s)" or "out of memory" when a TU did).
lines=0 bytes=0 sources=0 dofs=0 cpu='' largest='' peak_mb='' wall='' failed=''
measure() {
  local out=$tmp/out
  rm -rf "$out"
  local extra=()
  if [[ -n ${SOURCES:-} ]]; then extra=(--sources "$SOURCES"); fi
  local summary
  summary=$("$soac" emit "$@" "${extra[@]}" --out "$out" 2>"$tmp/emit.err") ||
    { echo "build_cost.sh: soac emit $* failed:" >&2; cat "$tmp/emit.err" >&2; exit 1; }
  dofs=$(sed -n 's/.*, N = \([0-9][0-9]*\),.*/\1/p' <<<"$summary" | head -n 1)
  local files=("$out"/*.cpp)
  sources=${#files[@]}
  lines=$(cat "$out"/*.cpp "$out"/*.hpp | wc -l)
  bytes=$(cat "$out"/*.cpp "$out"/*.hpp | wc -c)
  failed=
  local user sys kb total=0 max_tu=0 max_kb=0 f status
  for f in "${files[@]}"; do
    status=0
    compile_one "$f" "$tmp/time" || status=$?
    if ((status == 124)); then
      failed="timed out (> $tu_timeout s)"
    elif ((status != 0)) && grep -qiE 'out of memory|memory exhausted|cannot allocate|std::bad_alloc' "$tmp/time.err"; then
      failed="out of memory"
    elif ((status != 0)); then
      echo "build_cost.sh: $cxx failed on $(basename "$f") (soac emit $*):" >&2
      head -n 20 "$tmp/time.err" >&2
      exit 1
    fi
    if [[ -n $failed ]]; then break; fi
    read -r user sys kb <"$tmp/time"
    total=$(awk -v a="$total" -v u="$user" -v s="$sys" 'BEGIN { print a + u + s }')
    max_tu=$(awk -v a="$max_tu" -v u="$user" -v s="$sys" 'BEGIN { t = u + s; print (t > a ? t : a) }')
    if ((kb > max_kb)); then max_kb=$kb; fi
  done
  if [[ -n $failed ]]; then
    cpu=$failed largest=$failed peak_mb=$failed wall=$failed
    return
  fi
  cpu=$(printf '%.1f' "$total")
  largest=$(printf '%.1f' "$max_tu")
  peak_mb=$((max_kb / 1024))
  # The same TUs again, 2 at a time: the wall time of a parallel build.
  local start end
  start=$(date +%s.%N)
  # shellcheck disable=SC2016  # $1 is the inner shell's
  printf '%s\0' "${files[@]}" |
    xargs -0 -P 2 -I{} bash -c 'compile_one "$1" "$1.time"' _ {} ||
    { echo "build_cost.sh: the parallel build of soac emit $* failed" >&2; exit 1; }
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
}

# target: the cell of the targets column (< 30 s CPU and < 1 GB).
target() {
  if [[ -n $failed ]]; then echo "not met ($failed)"; return; fi
  if awk -v c="$cpu" -v m="$peak_mb" 'BEGIN { exit !(c < 30 && m < 1024) }'; then
    echo "met"
  else
    echo "not met ($cpu s, $peak_mb MB)"
  fi
}

echo "## Build cost of the generated C++"
echo
echo "$(nproc) CPUs, $cxx $("$cxx" -dumpfullversion), -std=c++20 -O2 -c per source${SOURCES:+, soac emit --sources $SOURCES}; CPU is user + sys of all sources compiled one after the other, peak the largest source's resident memory, wall 2 parallel jobs."
echo
echo "Table 1: all standard kernels."
echo
echo "| robot | N | lines | KB | sources | CPU (s) | largest source (s) | peak (MB) | wall, 2 jobs (s) | target < 30 s, < 1 GB |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"
configs=("panda|--robot $robots/panda.urdf|")
if ((!quick)); then
  configs+=("talos_reduced, free-flyer|--robot $robots/talos_reduced.urdf --floating|"
            "talos_full, free-flyer|--robot $robots/talos_full.urdf --floating|target"
            "random 100-body tree, free-flyer|--random-tree 100 --floating|target")
fi
for config in "${configs[@]}"; do
  IFS='|' read -r label args targeted <<<"$config"
  # shellcheck disable=SC2086  # the arguments are words without spaces
  measure $args
  cell=-
  if [[ -n $targeted ]]; then cell=$(target); fi
  echo "| $label | $dofs | $lines | $((bytes / 1024)) | $sources | $cpu | $largest | $peak_mb | $wall | $cell |"
done
echo
echo "Table 2: linear scaling, random trees with a free-flyer (--random-tree B --floating), inverse dynamics, forward dynamics and the Jacobian."
echo
echo "| bodies | N | lines | KB | sources | CPU (s) | peak (MB) | lines/body | ms CPU/body |"
echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
sizes=(25 50 100 200 400)
if ((quick)); then sizes=(25 50); fi
for b in "${sizes[@]}"; do
  measure "$tmp/scaling.soa" --random-tree "$b" --floating
  if [[ -n $failed ]]; then
    per_body=$failed
  else
    per_body=$(awk -v c="$cpu" -v b="$b" 'BEGIN { printf "%.0f", 1000 * c / b }')
  fi
  echo "| $b | $dofs | $lines | $((bytes / 1024)) | $sources | $cpu | $peak_mb | $((lines / b)) | $per_body |"
done
