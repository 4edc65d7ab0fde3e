// Must NOT compile: an Eigen::SparseVector with only collective/reduce.hpp
// included, so no representation for it. The CTest entry
// compile_fail.reduce_no_representation passes only when the compiler prints
// the message naming <sparse_reduce/repr/eigen.hpp>.

#include <sparse_reduce/collective/reduce.hpp>

#include <Eigen/SparseCore>

#include <functional>

int main()
{
    const boost::mpi::communicator world;
    Eigen::SparseVector<double> in(4), out;
    sparse_reduce::reduce(world, in, out, std::plus<>{}, 0);
}
