#!/usr/bin/env bash
# build_cost_check.sh BUILD_DIR: benchmarks/build_cost.sh --quick measures something. Its
# output must hold table 1 with the Panda's row and table 2 with the 25- and 50-body trees'
# rows, every cell of those rows a number (no "timed out", no empty cell), and the trees'
# sizes must grow with their bodies. Prints the output, then the first broken expectation.
set -euo pipefail

build=${1:?usage: build_cost_check.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$("$here/../../benchmarks/build_cost.sh" --quick "$build")
echo "$out"

fail() { echo "build_cost_check: $*" >&2; exit 1; }
number='[0-9]+(\.[0-9]+)?'

# row FIRST_CELL COLUMNS: the table row starting with FIRST_CELL, its numeric cells checked.
row() {
  local line
  line=$(grep -E "^\| $1 \|" <<<"$out" | head -n 1) || fail "no row '$1'"
  # The numeric cells: all but the first, and but the last $3 (text cells).
  awk -F'|' -v skip="$3" -v cols="$2" -v re="^ *$number *\$" -v name="$1" '
    { n = NF - 2
      if (n != cols) { print "row " name ": " n " cells, expected " cols; exit 1 }
      for (i = 3; i <= NF - 1 - skip; ++i) if ($i !~ re) { print "row " name ", cell " i - 1 ": \"" $i "\" is not a number"; exit 1 } }' \
    <<<"$line" >&2 || fail "table row broken: $line"
  echo "$line"
}

grep -q '^Table 1: all standard kernels' <<<"$out" || fail "no table 1"
grep -q '^Table 2: linear scaling' <<<"$out" || fail "no table 2"
row panda 10 1 >/dev/null
t25=$(row 25 9 0)
t50=$(row 50 9 0)
lines25=$(awk -F'|' '{ print $4 }' <<<"$t25")
lines50=$(awk -F'|' '{ print $4 }' <<<"$t50")
((lines50 > lines25)) || fail "50 bodies give no more lines ($lines50) than 25 ($lines25)"
echo "build_cost_check: both tables complete"
