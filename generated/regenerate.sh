#!/usr/bin/env bash
# Regenerate the checked-in generated code: generated/regenerate.sh [SOAC [OUT]]
# (default SOAC: build/soac; OUT: generated/). Robots are named relative to the repository,
# as the banners state them. Part of every golden: `cmake --build build --target goldens`
# runs this (tests/golden/goldens.sh), and ctest's `goldens` test fails when it is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
soac=${1:-build/soac}
out=${2:-generated}
"$soac" emit --robot examples/robots/panda.urdf --name panda --out "$out/panda"
"$soac" emit --robot examples/robots/double_pendulum_simple.urdf --name double_pendulum --sources 1 --out "$out/double_pendulum"
