#!/usr/bin/env bash
# goldens.sh check|update SOAC: compare (or rewrite) every golden output listed in derive.list.
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
exit $status
