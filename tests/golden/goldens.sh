#!/usr/bin/env bash
# goldens.sh check|update SOAC: compare (or rewrite) every golden output listed in derive.list,
# and the vocabulary table of grammar/README.md.
set -euo pipefail
mode=$1
soac=$2
here=$(cd "$(dirname "$0")" && pwd)
status=0
while IFS='|' read -r name args; do
  name=$(echo "$name" | xargs)
  [[ -z "$name" || "$name" == \#* ]] && continue
  out=$(eval "\"$soac\" derive $args")
  if [ "$mode" = update ]; then
    printf '%s\n' "$out" > "$here/derive/$name"
  elif ! diff -u "$here/derive/$name" <(printf '%s\n' "$out"); then
    echo "golden mismatch: derive/$name (regenerate with: tests/golden/goldens.sh update $soac)" >&2
    status=1
  fi
done < "$here/derive.list"

# The vocabulary table of grammar/README.md, between its marker comments, is
# `soac vocabulary --format markdown`.
readme="$here/../../grammar/README.md"
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
  echo "golden mismatch: the vocabulary table in grammar/README.md (regenerate with: tests/golden/goldens.sh update $soac)" >&2
  status=1
fi
exit $status
