#!/usr/bin/env bash
# goldens.sh check|update SOAC [TEST_LOWER [ROOT]]: compare (check) or rewrite (update) every
# expected output the tests hold soac to, under ROOT (default: this repository):
#   derive      tests/golden/derive/*     soac derive, one file per line of derive.list
#   vocabulary  grammar/README.md         its table between the vocabulary markers: soac vocabulary --format markdown
#   lower       tests/golden/lower_*.txt  test_lower's "lowered programs print ... (golden)" case
#   generated   generated/*/              soac emit for the shipped robots (generated/regenerate.sh)
# The inputs (robots, identity library) are always this repository's. Everyone runs it as
#   cmake --build build --target goldens      (update)
# and ctest's `goldens` test runs the check; a mismatch names that command.
set -euo pipefail
mode=$1
soac=$(realpath "$2")
test_lower=$(realpath "${3:-$(dirname "$soac")/tests/test_lower}")  # default: SOAC's build tree
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
root=$(realpath "${4:-$src}")
case "$mode" in check | update) ;; *) echo "usage: goldens.sh check|update SOAC [TEST_LOWER [ROOT]]" >&2; exit 2 ;; esac
status=0
stale() {
  echo "golden mismatch: $1 (regenerate every golden with: cmake --build build --target goldens)" >&2
  status=1
}

# derive: each output is tests/golden/derive/NAME.
mkdir -p "$root/tests/golden/derive"
while IFS='|' read -r name args; do
  [[ "$name" =~ ^[[:space:]]*(#|$) ]] && continue
  name=$(echo "$name" | xargs)
  out=$(cd "$src" && eval "\"$soac\" derive $args")
  if [ "$mode" = update ]; then
    printf '%s\n' "$out" > "$root/tests/golden/derive/$name"
  elif ! diff -u "$root/tests/golden/derive/$name" <(printf '%s\n' "$out"); then
    stale "derive/$name"
  fi
done < "$here/derive.list"

# vocabulary: the table of grammar/README.md, between its marker comments.
readme="$root/grammar/README.md"
table=$("$soac" vocabulary --format markdown)
current=$(sed -n '/^<!-- vocabulary:begin/,/^<!-- vocabulary:end/{/^<!-- vocabulary:/!p}' "$readme")
if [ "$mode" = update ]; then
  printf '%s\n' "$table" > "$readme.table.tmp"
  awk -v table="$readme.table.tmp" '
    /^<!-- vocabulary:begin/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /^<!-- vocabulary:end/ { skip = 0 }
    !skip' "$readme" > "$readme.tmp"
  rm "$readme.table.tmp"
  mv "$readme.tmp" "$readme"
elif [ "$current" != "$table" ]; then
  diff -u <(printf '%s\n' "$current") <(printf '%s\n' "$table") || true
  stale "the vocabulary table in grammar/README.md"
fi

# lower: the test case reads its goldens under SOA_GOLDEN_ROOT and rewrites them with SOA_UPDATE_GOLDEN.
lower_case="lowered programs print in the papers' loop notation (golden)"
if [ "$mode" = update ]; then
  SOA_GOLDEN_ROOT="$root" SOA_UPDATE_GOLDEN=1 "$test_lower" "$lower_case" > /dev/null
elif ! SOA_GOLDEN_ROOT="$root" "$test_lower" "$lower_case" > "$root/.goldens-lower.log" 2>&1; then
  cat "$root/.goldens-lower.log" >&2
  stale "tests/golden/lower_*.txt"
fi
rm -f "$root/.goldens-lower.log"

# generated: written into a scratch directory, then compared or moved into place whole.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$src/generated/regenerate.sh" "$soac" "$scratch" > /dev/null
for dir in "$scratch"/*/; do
  name=$(basename "$dir")
  if [ "$mode" = update ]; then
    rm -rf "$root/generated/$name"
    mkdir -p "$root/generated"
    cp -r "$dir" "$root/generated/$name"
  elif ! diff -ru "$root/generated/$name" "$dir"; then
    stale "generated/$name"
  fi
done
exit $status
