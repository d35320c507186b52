#!/usr/bin/env bash
# expect-exit.sh N CMD...: run CMD, pass its output through, succeed only if it exits N.
want=$1
shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect-exit: '$*' exited $got, expected $want" >&2
  exit 1
fi
