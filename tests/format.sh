#!/usr/bin/env bash
# format.sh check|fix [CLANG_FORMAT]: the project's C++ sources against .clang-format.
# check: exit 1 and name the files that differ; fix: rewrite them in place.
# Generated code (generated/) and test inputs (tests/data/) are not ours to format.
set -euo pipefail
mode=$1
cf=${2:-clang-format-16}
cd "$(dirname "$0")/.."
mapfile -t files < <(find compiler runtime tests benchmarks examples python \( -name '*.cpp' -o -name '*.hpp' \) \
  -not -path 'tests/data/*' | sort)
if [ "$mode" = fix ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  printf '%s\n' "${bad[@]}" | sed 's/^/not formatted: /' >&2
  echo "format: ${#bad[@]} file(s) differ from .clang-format (fix with: cmake --build build --target format)" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
