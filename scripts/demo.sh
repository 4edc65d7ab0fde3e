#!/usr/bin/env bash
# Builds the release configuration's demo and runs it on 4 MPI ranks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j2 --target demo

oversubscribe=()
if mpiexec --version 2>&1 | grep -qE 'Open MPI|OpenRTE'; then
    oversubscribe=(--oversubscribe)
fi
exec mpiexec -n 4 "${oversubscribe[@]}" build/release/example/demo "$@"
