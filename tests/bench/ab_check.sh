#!/usr/bin/env bash
# ab_check.sh SOAC: benchmarks/ab.sh times two forms of the double pendulum's code against
# each other. Its table must have one row per standard kernel, every time a positive number,
# and -O2 against -O2 must give the same bits, with the clock the run saw printed below it.
# Two forms that differ in what they compute (gravity; form B built by clang++-16) must be
# told apart (run pinned to CPU 0); with --layouts 3 the table gains B / A's range over the
# three binaries, which holds the row's B / A; and bad options must be refused with exit 2.
set -euo pipefail

soac=${1:?usage: ab_check.sh SOAC}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ab=$here/../../benchmarks/ab.sh
robot=$here/../../examples/robots/double_pendulum.urdf
fail() { echo "ab_check: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

out=$(SOAC=$soac "$ab" --cxxflags "" --repetitions 1 --min-time 0.01 -- --robot "$robot")
echo "$out"
for k in inverse_dynamics mass_matrix forward_dynamics mass_matrix_inverse jacobian lambda tip_force_correction; do
  grep -Eq "^\| $k \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| 0\.0e\+00 \|$" <<<"$out" || fail "no row of identical forms for $k"
done
grep -Eq '\| 0\.0 \|' <<<"$out" && fail "a time of zero"
grep -Eq '^Clock of the CPU it ran on \(dependent additions, one a cycle\): [1-9][0-9]*\.[0-9]{2} GHz before, [1-9][0-9]*\.[0-9]{2} GHz after\.$' <<<"$out" ||
  fail "no clock line (or a clock under 1 GHz)"

out=$(SOAC=$soac "$ab" --cxxflags "" --repetitions 1 --min-time 0.01 --filter inverse_dynamics --cpu 0 \
  --b-emit "--gravity 0,0,-1" --b-compiler clang++-16 -- --robot "$robot")
echo "$out"
[[ $(grep -Ec '^\| [a-z_]+ \| [0-9]' <<<"$out") == 1 ]] || fail "--filter inverse_dynamics: expected its row alone"
grep -Eq '^\| inverse_dynamics \|.*\| [1-9]\.[0-9]e[-+][0-9]+ \|$' <<<"$out" || fail "other gravity, yet the outputs agree"

out=$(SOAC=$soac "$ab" --cxxflags "" --repetitions 1 --min-time 0.01 --filter mass_matrix --layouts 3 \
  --keep "$work" -- --robot "$robot")
echo "$out"
grep -q '| B / A over 3 layouts |$' <<<"$out" || fail "--layouts 3: no range column"
row=$(grep -E '^\| mass_matrix \|' <<<"$out") || fail "--layouts 3: no mass_matrix row"
awk -F' *\\| *' '{split($7, r, " - "); if (!(r[1] + 0 > 0 && r[1] <= $5 && $5 <= r[2])) exit 1}' <<<"$row" ||
  fail "--layouts 3: B / A ($row) outside its range"
# The three binaries hold the kernels at three places modulo 4096, the forms swapped in the second.
places=$(for k in 0 1 2; do nm "$work/ab_$k" | awk '$3 == "ab_a_mass_matrix" {print $1}'; done)
[[ $(for p in $places; do echo $((16#$p % 4096)); done | sort -u | wc -l) == 3 ]] ||
  fail "--layouts 3: the kernels not at three places modulo 4096 ($places)"
a1=$(nm "$work/ab_1" | awk '$3 == "ab_a_mass_matrix" {print $1}')
b1=$(nm "$work/ab_1" | awk '$3 == "ab_b_mass_matrix" {print $1}')
((16#$b1 < 16#$a1)) || fail "--layouts 3: layout 1 does not link form B first"

set +e
SOAC=$soac "$ab" --layouts 0 -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "--layouts 0 not refused with exit 2"
SOAC=$soac "$ab" --no-such-option -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "an unknown option not refused with exit 2"
SOAC=$soac "$ab" --cxxflags "" 2>/dev/null; [[ $? == 2 ]] || fail "no soac arguments not refused with exit 2"
SOAC=$soac "$ab" -- --robot "$robot.missing" 2>/dev/null; [[ $? == 2 ]] || fail "a missing robot not refused with exit 2"
SOAC=$soac "$ab" --cpu one -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "--cpu one not refused with exit 2"
SOAC=$soac "$ab" --b-compiler no-such-c++ -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "a missing compiler not refused with exit 2"
SOAC=$soac "$ab" --cpu 4096 -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "--cpu 4096 (no such CPU) not refused with exit 2"
echo "ab_check: passed"
