#!/usr/bin/env bash
# ab_check.sh SOAC: benchmarks/ab.sh times two forms of the double pendulum's code against
# each other. Its table must have one row per standard kernel, every time a positive number,
# and -O2 against -O2 must give the same bits. Two forms that differ in what they compute
# (gravity; form B built by clang++-16) must be told apart (run pinned to CPU 0), and bad
# options must be refused with exit 2.
set -euo pipefail

soac=${1:?usage: ab_check.sh SOAC}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ab=$here/../../benchmarks/ab.sh
robot=$here/../../examples/robots/double_pendulum.urdf
fail() { echo "ab_check: $*" >&2; exit 1; }

out=$(SOAC=$soac "$ab" --cxxflags "" --repetitions 1 --min-time 0.01 -- --robot "$robot")
echo "$out"
for k in inverse_dynamics mass_matrix forward_dynamics mass_matrix_inverse jacobian lambda tip_force_correction; do
  grep -Eq "^\| $k \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| 0\.0e\+00 \|$" <<<"$out" || fail "no row of identical forms for $k"
done
grep -Eq '\| 0\.0 \|' <<<"$out" && fail "a time of zero"

out=$(SOAC=$soac "$ab" --cxxflags "" --repetitions 1 --min-time 0.01 --filter inverse_dynamics --cpu 0 \
  --b-emit "--gravity 0,0,-1" --b-compiler clang++-16 -- --robot "$robot")
echo "$out"
[[ $(grep -Ec '^\| [a-z_]+ \| [0-9]' <<<"$out") == 1 ]] || fail "--filter inverse_dynamics: expected its row alone"
grep -Eq '^\| inverse_dynamics \|.*\| [1-9]\.[0-9]e[-+][0-9]+ \|$' <<<"$out" || fail "other gravity, yet the outputs agree"

set +e
SOAC=$soac "$ab" --no-such-option -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "an unknown option not refused with exit 2"
SOAC=$soac "$ab" --cxxflags "" 2>/dev/null; [[ $? == 2 ]] || fail "no soac arguments not refused with exit 2"
SOAC=$soac "$ab" -- --robot "$robot.missing" 2>/dev/null; [[ $? == 2 ]] || fail "a missing robot not refused with exit 2"
SOAC=$soac "$ab" --cpu one -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "--cpu one not refused with exit 2"
SOAC=$soac "$ab" --b-compiler no-such-c++ -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "a missing compiler not refused with exit 2"
SOAC=$soac "$ab" --cpu 4096 -- --robot "$robot" 2>/dev/null; [[ $? == 2 ]] || fail "--cpu 4096 (no such CPU) not refused with exit 2"
echo "ab_check: passed"
