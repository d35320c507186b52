#!/usr/bin/env bash
# Install what soac needs from Debian 12 (only what is missing), configure and build.
# Used by both README commands and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ python3 libeigen3-dev libfmt-dev tao-pegtl-dev libcli11-dev
          libtinyxml2-dev nlohmann-json3-dev catch2 libmujoco-dev libbenchmark-dev llvm-16-dev llvm-16-tools valgrind time
          texlive-latex-base
          clang-16 libclang-rt-16-dev clang-format-16
          pybind11-dev python3-dev python3-numpy python3-pytest libjs-katex chromium fonts-dejavu-core)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
