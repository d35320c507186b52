#!/usr/bin/env bash
# ab.sh: two forms of one robot's generated code, timed against each other in one binary.
#
#   benchmarks/ab.sh [options] -- SOAC_EMIT_ARGS...
#
# Writes the kernels twice with `soac emit SOAC_EMIT_ARGS` (form A and form B, in namespaces
# and C prefixes of their own), compiles each with its own flags, links both into one Google
# Benchmark binary and runs every kernel of both forms with randomly interleaved repetitions
# on the same random states. Prints one markdown row per kernel: the median time of A, of B,
# and B / A, then the largest difference between the two forms' outputs (relative to 1 +
# |A's entry|); with --layouts, the medians over the layouts and then B / A's range. Below
# the table, the clock the run saw (GHz, before and after; x86-64): on a VM a virtual CPU's
# clock moves with its host, and an absolute time means something only beside it. The two
# forms differ by what the options say:
#   --a-soac PATH, --b-soac PATH  the soac binary of each form (old against new: default both
#                                 $SOAC, else build/soac)
#   --a-emit "ARGS", --b-emit "ARGS"  extra `soac emit` options of each form
#   --a-cxx "FLAGS", --b-cxx "FLAGS"  compiler flags of each form (default -O2 both)
#   --a-compiler CXX, --b-compiler CXX  the compiler of each form's kernels (default g++ both;
#                                 the harness is always g++)
#   --cxxflags "FLAGS"            flags of both forms and of the harness (default -march=native)
#   --repetitions N               (default 5)   --min-time SECONDS  (default 0.2)
#   --filter REGEX                time only the kernels whose name matches
#   --layouts K                   link the two forms K times, each binary with its code and its
#                                 stack at other addresses modulo 4096 (a padding before the
#                                 kernels, the forms' order swapped every other time, a shift
#                                 of the stack), and report per kernel the medians over the K
#                                 binaries and the range of B / A (default 1). One binary's
#                                 B / A of identical forms strayed by up to a third
#                                 (docs/performance.md, "A/B", where the code lands): a ratio
#                                 that holds over layouts is the form's, not one binary's luck.
#   --keep DIR                    work in DIR and keep it (default: a temporary folder)
#   --cpu N                       run the benchmark on CPU N alone (taskset): on a VM the
#                                 virtual CPUs need not be alike (docs/performance.md, "A/B")
# Example (docs/performance.md, "A/B"): the generated code at -O2 against -O3,
#   benchmarks/ab.sh --b-cxx -O3 -- --robot examples/robots/talos_reduced.urdf --floating
# The random states: every input uniform in [-1, 1], a free-flyer's quaternion (q[3..6] when
# nq = nv + 1) normalised; 64 states cycled.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
soac_default=${SOAC:-$root/build/soac}
a_soac=$soac_default b_soac=$soac_default a_emit="" b_emit="" a_cxx="-O2" b_cxx="-O2" a_cc=g++ b_cc=g++
cxxflags="-march=native" repetitions=5 min_time=0.2 filter="" keep="" cpu="" layouts=1
die() { echo "ab.sh: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --a-soac) a_soac=${2:?}; shift 2 ;;
    --b-soac) b_soac=${2:?}; shift 2 ;;
    --a-emit) a_emit=${2?}; shift 2 ;;
    --b-emit) b_emit=${2?}; shift 2 ;;
    --a-cxx) a_cxx=${2?}; shift 2 ;;
    --b-cxx) b_cxx=${2?}; shift 2 ;;
    --a-compiler) a_cc=${2:?}; shift 2 ;;
    --b-compiler) b_cc=${2:?}; shift 2 ;;
    --cxxflags) cxxflags=${2?}; shift 2 ;;
    --repetitions) repetitions=${2:?}; shift 2 ;;
    --min-time) min_time=${2:?}; shift 2 ;;
    --filter) filter=${2:?}; shift 2 ;;
    --keep) keep=${2:?}; shift 2 ;;
    --cpu) cpu=${2:?}; shift 2 ;;
    --layouts) layouts=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see the comment at the top of benchmarks/ab.sh)" ;;
  esac
done
(($#)) || die "no soac emit arguments after -- (e.g. -- --robot examples/robots/panda.urdf)"
[[ $repetitions =~ ^[1-9][0-9]*$ ]] || die "--repetitions takes a whole number from 1, not '$repetitions'"
[[ $layouts =~ ^[1-9][0-9]?$ ]] || die "--layouts takes a whole number from 1 to 99, not '$layouts'"
pin=()
if [[ -n $cpu ]]; then
  [[ $cpu =~ ^[0-9]+$ ]] || die "--cpu takes a CPU number, not '$cpu'"
  command -v taskset >/dev/null || die "--cpu needs taskset (Debian's util-linux)"
  taskset -c "$cpu" true 2>/dev/null || die "--cpu $cpu: no such CPU here (taskset -c $cpu refused)"
  pin=(taskset -c "$cpu")
fi
for s in "$a_soac" "$b_soac"; do [[ -x $s ]] || die "$s: no soac binary there (build first, or --a-soac/--b-soac)"; done
for c in "$a_cc" "$b_cc"; do command -v "$c" >/dev/null || die "--a-compiler/--b-compiler: no compiler '$c' on PATH"; done

if [[ -n $keep ]]; then
  work=$keep
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# Form X: soac emit into $work/X, named ab_x, compiled with its flags (sources in parallel).
make_form() {
  local form=$1 soac=$2 emit=$3 cxx=$4 cc=$5
  rm -rf "${work:?}/$form"
  # shellcheck disable=SC2086  # the per-form options are words
  "$soac" emit "${emit_args[@]}" --out "$work/$form" --name "ab_$form" $emit >"$work/$form.log" 2>&1 ||
    { cat "$work/$form.log" >&2; die "form $form: soac emit failed"; }
  local pids=()
  for src in "$work/$form"/*.cpp; do
    # shellcheck disable=SC2086
    "$cc" -std=c++20 $cxx $cxxflags -c "$src" -o "${src%.cpp}.o" & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || die "form $form: $cc failed"; done
}
emit_args=("$@")
make_form a "$a_soac" "$a_emit" "$a_cxx" "$a_cc"
make_form b "$b_soac" "$b_emit" "$b_cxx" "$b_cc"

# A form's kernels as "name inputs outputs", sorted, from its header's extern "C" comments:
#   // in = [q (39), qd (38), T (38)] (115 doubles); out = qdd (38)
#   // in = [q (39)] (39 doubles); out = calM (38 x 38, column-major)
kernels() {
  sed -n 's|^// in = .* (\([0-9]*\) doubles); out = [^ ]* (\([0-9]*\)\( x \([0-9]*\)\)\?.*|\1 \2 x\4|p;
          s|^void ab_[ab]_\([a-z0-9_]*\)(const double\* in, double\* out);|\1|p' "$1" | paste -d' ' - - |
    awk '{c = substr($3, 2); print $4, $1, $2 * (c == "" ? 1 : c)}' | sort
}
kernels "$work/a/ab_a.hpp" >"$work/a.kernels"
kernels "$work/b/ab_b.hpp" >"$work/b.kernels"
join "$work/a.kernels" "$work/b.kernels" | awk '$2 == $4 && $3 == $5 {print $1, $2, $3}' >"$work/kernels"
[[ -n $filter ]] && { grep -E "^[^ ]*($filter)" "$work/kernels" >"$work/kernels.f" || true; mv "$work/kernels.f" "$work/kernels"; }
[[ -s $work/kernels ]] || die "the two forms have no kernel in common (with the same sizes)"
nq=$(sed -n 's/^inline constexpr int nq = \([0-9]*\);/\1/p' "$work/a/ab_a.hpp")
nv=$(sed -n 's/^inline constexpr int nv = \([0-9]*\);/\1/p' "$work/a/ab_a.hpp")

{
  echo '// Written by benchmarks/ab.sh: both forms of every kernel, Google Benchmark.'
  echo '#include <benchmark/benchmark.h>'
  echo '#include <algorithm>'
  echo '#include <chrono>'
  echo '#include <cmath>'
  echo '#include <cstdio>'
  echo '#include <random>'
  echo '#include <vector>'
  echo 'extern "C" {'
  while read -r name _ _; do
    echo "void ab_a_$name(const double*, double*);"
    echo "void ab_b_$name(const double*, double*);"
  done <"$work/kernels"
  echo '}'
  echo 'using Kernel = void (*)(const double*, double*);'
  echo 'struct Entry { const char* name; Kernel a, b; int in, out; };'
  echo 'static const Entry entries[] = {'
  while read -r name in out; do echo "  {\"$name\", ab_a_$name, ab_b_$name, $in, $out},"; done <"$work/kernels"
  echo '};'
  cat <<EOF
constexpr int kStates = 64, kNq = ${nq:-0}, kNv = ${nv:-0};
static std::vector<double> states(int in) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> s(static_cast<std::size_t>(kStates * in));
  for (double& x : s) x = u(rng);
  if (kNq == kNv + 1 && in >= 7)  // a free-flyer: q[3..6] is a unit quaternion
    for (int i = 0; i < kStates; ++i) {
      double* quat = &s[static_cast<std::size_t>(i * in + 3)];
      const double n = std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
      for (int k = 0; k < 4; ++k) quat[k] /= n;
    }
  return s;
}
// The clock of the CPU running this process, in GHz: a chain of dependent integer additions
// runs one a cycle. On a VM the same virtual CPU's clock changes with its host, so a time
// in ns is read with the clock it ran at (docs/performance.md, "A/B").
static double clock_ghz() {
#if defined(__x86_64__)
  constexpr long n = 200000000;
  long x = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) asm volatile("add \$1, %0" : "+r"(x));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(n) / s * 1e-9;
#else
  return 0.0;
#endif
}
static void run(int argc, char** argv);
int main(int argc, char** argv) {
  // This layout's shift of the stack: the kernels' frames (their arrays s and w) start at
  // another address modulo 4096 (see --layouts).
  volatile char* shift = static_cast<char*>(__builtin_alloca(AB_STACK_SHIFT + 1));
  shift[0] = 0;
  std::printf("clock before %.2f\n", clock_ghz());
  run(argc, argv);
  std::printf("clock after %.2f\n", clock_ghz());
  return shift[0];
}
static void run(int argc, char** argv) {
  for (const Entry& e : entries) {
    const std::vector<double> s = states(e.in);
    std::vector<double> oa(static_cast<std::size_t>(e.out)), ob(oa.size());
    double worst = 0.0;
    for (int i = 0; i < kStates; ++i) {
      e.a(&s[static_cast<std::size_t>(i * e.in)], oa.data());
      e.b(&s[static_cast<std::size_t>(i * e.in)], ob.data());
      for (std::size_t k = 0; k < oa.size(); ++k)
        worst = std::max(worst, std::abs(oa[k] - ob[k]) / (1.0 + std::abs(oa[k])));
    }
    std::printf("check %s: A against B %.1e\n", e.name, worst);
    for (int form = 0; form < 2; ++form) {
      const Kernel k = form == 0 ? e.a : e.b;
      benchmark::RegisterBenchmark((std::string(e.name) + (form == 0 ? "/A" : "/B")).c_str(),
                                   [k, s, in = e.in, out = e.out](benchmark::State& st) {
                                     std::vector<double> o(static_cast<std::size_t>(out));
                                     int i = 0;
                                     for (auto _ : st) {
                                       k(&s[static_cast<std::size_t>(i * in)], o.data());
                                       benchmark::DoNotOptimize(o.data());
                                       benchmark::ClobberMemory();
                                       i = i + 1 == kStates ? 0 : i + 1;
                                     }
                                   });
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
EOF
} >"$work/ab_main.cpp"
# Layout k: the code after a padding of k/K of 4096 bytes (a multiple of 64: another cache
# set for every line), the forms in the order a, b for even k and b, a for odd k, the stack
# shifted by another fraction of 4096. Layout 0 is the plain link.
for ((k = 0; k < layouts; ++k)); do
  pad=$((k * 4096 / layouts / 64 * 64)) stack=$(((k * 2509) % 4096 / 16 * 16))
  # shellcheck disable=SC2086
  g++ -std=c++20 -O2 $cxxflags -c "$work/ab_main.cpp" -o "$work/ab_main_$k.o" -DAB_STACK_SHIFT=$stack ||
    die "building the harness failed"
  printf '.section .note.GNU-stack,"",@progbits\n.section .text.ab_pad,"ax",@progbits\nab_pad_%d:\n.skip %d, 0xcc\n' \
    "$k" "$((pad + 1))" >"$work/pad_$k.s"
  objects=("$work"/a/*.o "$work"/b/*.o)
  ((k % 2)) && objects=("$work"/b/*.o "$work"/a/*.o)
  # shellcheck disable=SC2086
  g++ -std=c++20 -O2 $cxxflags "$work/ab_main_$k.o" "$work/pad_$k.s" "${objects[@]}" -lbenchmark -lpthread \
    -o "$work/ab_$k" || die "linking layout $k failed"
done

for ((k = 0; k < layouts; ++k)); do
  "${pin[@]}" "$work/ab_$k" --benchmark_repetitions="$repetitions" --benchmark_enable_random_interleaving=true \
    --benchmark_min_time="$min_time" --benchmark_report_aggregates_only=true \
    --benchmark_format=json --benchmark_out="$work/ab_$k.json" >"$work/ab_$k.log" 2>&1 ||
    { cat "$work/ab_$k.log" >&2; die "the benchmark failed (layout $k)"; }
done
grep '^check ' "$work/ab_0.log" >"$work/checks" || true
cat "$work"/ab_*.log | sed -n 's/^clock \(before\|after\) \([0-9.]*\)$/\1 \2/p' >"$work/clocks"
python3 - "$work/checks" "$work/clocks" "$work"/ab_*.json <<'EOF'
import json, statistics, sys
checks = {l.split(":")[0][6:]: l.split("B ")[-1].strip() for l in open(sys.argv[1])}
clocks = {"before": [], "after": []}
for line in open(sys.argv[2]):
    when, ghz = line.split()
    clocks[when].append(float(ghz))
layouts = []  # per layout: run name -> median time over the repetitions
for path in sys.argv[3:]:
    runs = json.load(open(path))["benchmarks"]
    # With one repetition Google Benchmark reports no aggregate: the run itself.
    kept = [r for r in runs if r.get("aggregate_name") == "median"] or [r for r in runs if r.get("run_type") == "iteration"]
    layouts.append({r["run_name"]: r["real_time"] for r in kept})
    unit = kept[0]["time_unit"]
many = len(layouts) > 1
print("| kernel | A (%s) | B (%s) | B / A | outputs apart |%s" % (unit, unit, " B / A over %d layouts |" % len(layouts) if many else ""))
print("|---|--:|--:|--:|--:|%s" % ("--:|" if many else ""))
for name in sorted({n.rsplit("/", 1)[0] for n in layouts[0]}):
    a = [m[name + "/A"] for m in layouts]
    b = [m[name + "/B"] for m in layouts]
    r = [y / x for x, y in zip(a, b)]
    row = "| %s | %.1f | %.1f | %.3f | %s |" % (name, statistics.median(a), statistics.median(b), statistics.median(r), checks.get(name, "-"))
    print(row + (" %.3f - %.3f |" % (min(r), max(r)) if many else ""))
if clocks["before"] and min(clocks["before"] + clocks["after"]) > 0:
    span = lambda v: "%.2f" % v[0] if len(v) == 1 else "%.2f-%.2f" % (min(v), max(v))
    print("\nClock of the CPU it ran on (dependent additions, one a cycle): %s GHz before, %s GHz after." %
          (span(clocks["before"]), span(clocks["after"])))
EOF
