#pragma once
// The guide's sections (doc/getting-started.md), one function each; each
// returns whether this rank saw the right result. example/guide/main.cpp
// runs them by name.

#include <boost/mpi/communicator.hpp>

namespace guide {

bool outputs(const boost::mpi::communicator& world);
bool custom_ops(const boost::mpi::communicator& world);
bool plans(const boost::mpi::communicator& world);
bool pattern_plans(const boost::mpi::communicator& world);
bool matrix_assembly(const boost::mpi::communicator& world);
bool report(const boost::mpi::communicator& world);
bool allreduce(const boost::mpi::communicator& world);
bool reduce_scatter(const boost::mpi::communicator& world);
bool sort(const boost::mpi::communicator& world);
bool tuning(const boost::mpi::communicator& world);
bool floating_point(const boost::mpi::communicator& world);
bool errors(const boost::mpi::communicator& world);

} // namespace guide
