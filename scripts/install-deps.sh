#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build and test SparseReduce.
# Does nothing (and does not touch apt) when everything is already installed.
#
#   scripts/install-deps.sh [--petsc]
#
#   --petsc   also petsc-dev, for the PETSc rows of assembly_bench (optional:
#             large, and nothing else needs it)
set -euo pipefail

petsc=0
for arg in "$@"; do
    case $arg in
    --petsc) petsc=1 ;;
    *) echo "install-deps: unknown option $arg (usage: install-deps.sh [--petsc])" >&2; exit 2 ;;
    esac
done

packages=(
    cmake g++ make ninja-build
    clang libclang-rt-14-dev
    libboost-mpi-dev libboost-test-dev libeigen3-dev
    openmpi-bin libopenmpi-dev
    libbenchmark-dev
    graphviz gnuplot-nox
    doxygen pkg-config
)
((petsc)) && packages+=(petsc-dev)

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
