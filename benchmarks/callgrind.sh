#!/usr/bin/env bash
# callgrind.sh BUILD_DIR: instructions per call of the generated Panda and TALOS kernels
# (soa_callgrind, compiled with -O2 -march=x86-64-v3) counted by valgrind's callgrind, and
# the kernels' operation counts (from the generated headers' banners) next to Featherstone's
# counts for the general algorithms. Prints two markdown tables.
#
# Only the kernel is counted: --toggle-collect switches collection on when the kernel's C++
# entry point is entered and off when it returns, so callees (sin, cos) are included and the
# driver loop, the URDF loading and the state generation are not.
# SOA_CALLGRIND_CALLS (default 1000) sets how many calls are averaged.
set -euo pipefail

build=${1:?usage: callgrind.sh BUILD_DIR}
bin=$build/benchmarks/soa_callgrind
calls=${SOA_CALLGRIND_CALLS:-1000}
[[ -x $bin ]] || { echo "callgrind.sh: $bin not built (make soa_callgrind)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# instructions ROBOT KERNEL -> instructions per call (rounded)
instructions() {
  local robot=$1 kernel=$2 out=$tmp/callgrind.$1.$2
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect="soa_gen::${robot}::${kernel}(*" \
    "$bin" "$robot" "$kernel" "$calls" >"$tmp/stdout" 2>"$tmp/stderr" || {
    # Valgrind 3.19 does not decode every AVX instruction g++ emits (the register form of
    # vmovq, in lane-group code): that kernel cannot be counted here, which is said in its row.
    if grep -q "Unrecognised instruction" "$tmp/stderr"; then
      echo undecodable
      return
    fi
    cat "$tmp/stderr" >&2
    exit 1
  }
  local total
  total=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
  if [[ -z $total || $total -eq 0 ]]; then
    echo "callgrind.sh: nothing collected for soa_gen::${robot}::${kernel}" >&2
    exit 1
  fi
  echo $(((total + calls / 2) / calls))
}

header() {  # the generated header of soa_bench_ROBOT (benchmarks/CMakeLists.txt)
  local h
  h=$(find "$build/benchmarks" -path "*soa_bench_$1_generated/$1.hpp" | head -n 1)
  [[ -n $h ]] || { echo "callgrind.sh: no generated header for $1 under $build/benchmarks" >&2; exit 1; }
  echo "$h"
}

# ops HEADER KERNEL -> "mul add sub neg div sqrt sin cos" from the banner line
#   //     1032 ops: 571 mul, 254 add, 194 sub, 1 neg, 0 div, 0 sqrt, 6 sin, 6 cos
ops() {
  awk -v k="$2" '
    $1 == "//" && $3 == "=" { current = $2 }
    current == k && / [0-9]+ ops:/ {
      gsub(",", "")
      for (i = 1; i < NF; ++i) v[$(i + 1)] = $i
      print v["mul"], v["add"], v["sub"], v["neg"], v["div"], v["sqrt"], v["sin"], v["cos"]
      exit
    }' "$1"
}

declare -A target=([panda.inverse_dynamics]=2700 [panda.forward_dynamics]=5800 [panda.mass_matrix]=2700
                   [talos.inverse_dynamics]=10000 [talos.forward_dynamics]=23000 [talos.mass_matrix]=11000)
declare -A label=([inverse_dynamics]=ID [mass_matrix]="M (CRBA)" [forward_dynamics]=FD
                  [mass_matrix_inverse]=Minv)
kernels=(inverse_dynamics mass_matrix forward_dynamics mass_matrix_inverse)

version=$(valgrind --version | sed 's/valgrind-//')
echo "Instructions per call (callgrind, valgrind $version, $calls calls on 64 random states; g++ -O2 -march=x86-64-v3):"
echo
echo "| robot | kernel | instructions / call | target | |"
echo "|---|---|--:|--:|---|"
for robot in panda talos; do
  for kernel in "${kernels[@]}"; do
    n=$(instructions "$robot" "$kernel")
    t=${target[$robot.$kernel]:-}
    if [[ $n == undecodable ]]; then
      [[ -z $t ]] || { echo "callgrind.sh: valgrind cannot run $robot $kernel, which has a target" >&2; exit 1; }
      echo "| $robot | ${label[$kernel]} | - | - | (valgrind $version cannot decode an AVX instruction in it) |"
      continue
    fi
    if [[ -z $t ]]; then verdict="(no target)"
    elif ((n <= t)); then verdict="met"
    else verdict="missed by $((n - t)) ($(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2f%%", 100 * (n - t) / t }'))"
    fi
    echo "| $robot | ${label[$kernel]} | $n | ${t:--} | $verdict |"
  done
done

echo
echo "Operation counts of the generated code (soac's own count after constant folding, CSE"
echo "and DCE: mul = mul + div, add = add + sub; negations, sin and cos listed apart) against"
echo "Featherstone's general counts (RNEA 93n-108 mul, 81n-100 add; CRBA 10n^2+22n-32 mul,"
echo "6n^2+37n-43 add; ABA 224n-259 mul, 205n-248 add). n is the number of 1-dof joints; for"
echo "the free-flyer, as in the literature, n = dof (the free joint counts as 6 one-dof joints)."
echo "Featherstone's counts exclude the joint transforms' sin/cos; ours include every"
echo "operation of the kernel from q to the output. FD is compared with ABA (ours computes"
echo "C by Newton-Euler inside the kernel: M^-1 (T - C))."
echo
echo "| robot | n | kernel | ours mul | ours add | neg | sin+cos | Featherstone | F. mul | F. add | ours / F. (mul+add) |"
echo "|---|--:|---|--:|--:|--:|--:|---|--:|--:|--:|"
for robot in panda talos; do
  h=$(header "$robot")
  n=$(sed -n 's/.* N \([0-9]*\),.*/\1/p' "$h" | head -n 1)
  for kernel in inverse_dynamics mass_matrix forward_dynamics; do
    read -r mul add sub neg div _sqrt sin cos <<<"$(ops "$h" "$kernel")"
    case $kernel in
      inverse_dynamics) algo=RNEA; fm=$((93 * n - 108)); fa=$((81 * n - 100)) ;;
      mass_matrix) algo=CRBA; fm=$((10 * n * n + 22 * n - 32)); fa=$((6 * n * n + 37 * n - 43)) ;;
      forward_dynamics) algo=ABA; fm=$((224 * n - 259)); fa=$((205 * n - 248)) ;;
    esac
    om=$((mul + div)) oa=$((add + sub))
    r=$(awk -v o=$((om + oa)) -v f=$((fm + fa)) 'BEGIN { printf "%.2f", o / f }')
    echo "| $robot | $n | ${label[$kernel]} | $om | $oa | $neg | $((sin + cos)) | $algo | $fm | $fa | $r |"
  done
done
