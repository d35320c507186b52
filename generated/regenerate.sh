#!/usr/bin/env bash
# Regenerate the checked-in generated code: generated/regenerate.sh [SOAC]
# (default SOAC: build/soac). tests/lit/generated-fresh.test fails when it is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
soac=${1:-build/soac}
"$soac" emit --robot examples/robots/panda.urdf --name panda --out generated/panda
"$soac" emit --robot examples/robots/double_pendulum_simple.urdf --name double_pendulum --out generated/double_pendulum
