#pragma once
// Shared by the assembly benchmarks against PETSc (assembly_bench,
// matrix_assembly_bench): PETSc's lifetime inside Boost.MPI's and the
// interleaved rounds their rows are timed in.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include <mpi.h>

#ifdef SPARSE_REDUCE_HAVE_PETSC
#include <petscsys.h>
#endif

#include "timing.hpp"

namespace sparse_reduce::bench {

#ifdef SPARSE_REDUCE_HAVE_PETSC
// PETSc around Boost.MPI's environment: PetscInitialize finds MPI running
// (PETSC_COMM_WORLD stays MPI_COMM_WORLD) and so leaves MPI_Finalize to
// Boost; PetscFinalize runs first, as this object is destroyed before the
// environment.
struct petsc_session {
    petsc_session(int& argc, char**& argv) { PetscCallAbort(MPI_COMM_WORLD, PetscInitialize(&argc, &argv, nullptr, nullptr)); }
    petsc_session(const petsc_session&) = delete;
    petsc_session& operator=(const petsc_session&) = delete;
    ~petsc_session() { PetscFinalize(); }
};
#endif

// Per row, its time in each repetition (the slowest rank's). Every
// repetition runs each row once, in an order shuffled the same on every rank,
// so no row always follows the same neighbour.
inline std::vector<std::vector<double>> time_rounds(MPI_Comm comm, int warmup, int reps,
                                                    const std::vector<std::function<void()>>& fs)
{
    for (int i = 0; i < warmup; ++i)
        for (const auto& f : fs) f();
    std::vector<std::vector<double>> t(fs.size());
    std::vector<std::size_t> order(fs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937 shuffle_rng(12345);
    for (int i = 0; i < reps; ++i) {
        std::shuffle(order.begin(), order.end(), shuffle_rng);
        for (const std::size_t k : order) t[k].push_back(time_collective(comm, 0, 1, fs[k]).median);
    }
    return t;
}

} // namespace sparse_reduce::bench
