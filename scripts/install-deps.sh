#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build and test SparseReduce.
# Does nothing (and does not touch apt) when everything is already installed.
set -euo pipefail

packages=(
    cmake g++ make ninja-build
    clang libclang-rt-14-dev
    libboost-mpi-dev libboost-test-dev libeigen3-dev
    openmpi-bin libopenmpi-dev
    libbenchmark-dev
    graphviz gnuplot-nox
    doxygen pkg-config
)

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != ii* ]]; then
        missing+=("$pkg")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "install-deps: all dependencies present"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "install-deps: not root and no sudo; install manually: ${missing[*]}" >&2
        exit 1
    fi
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
