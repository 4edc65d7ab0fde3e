#pragma once
// Checks of the communicator a collective is handed.

#include <mpi.h>

#include <string>

#include "../error.hpp"

namespace sparse_reduce::detail {

// Every collective works on intracommunicators only: an intercommunicator's
// ranks and collectives mean the remote group, so its result would be
// meaningless. Throws sparse_reduce::error on every rank that passes one
// (all of them, for a collective call), before anything is sent.
inline void require_intracommunicator(MPI_Comm comm, const char* who = "sparse_reduce")
{
    if (comm == MPI_COMM_NULL) fail(std::string(who) + ": the communicator is MPI_COMM_NULL");
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter) fail(std::string(who) + ": an intercommunicator was passed; collectives need an intracommunicator");
}

} // namespace sparse_reduce::detail
