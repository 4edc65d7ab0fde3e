// Three automatic reduces of one value type in three representations:
// an Eigen::SparseVector<double>, an index_value_vector<double> and dense
// buffers (std::span). Against reduce_automatic.cpp: what a further
// representation adds.
#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi.hpp>

#include <functional>
#include <span>
#include <vector>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    const std::size_t n = 1 << 20;
    const auto me = static_cast<std::size_t>(world.rank());
    Eigen::SparseVector<double> a(static_cast<Eigen::Index>(n)), a_out;
    a.insertBack(static_cast<Eigen::Index>(me)) = 1.0;
    sr::reduce(world, a, a_out, std::plus<>{}, 0);
    sr::index_value_vector<double> b(n), b_out;
    b.push_back(me, 1.0);
    sr::reduce(world, b, b_out, std::plus<>{}, 0);
    std::vector<double> c(n, 0.0), c_out(n);
    c[me] = 1.0;
    sr::reduce(world, std::span<const double>(c), std::span<double>(c_out), std::plus<>{}, 0);
    const bool wrong = a_out.nonZeros() != world.size() || b_out.nnz() != static_cast<std::size_t>(world.size()) ||
                       c_out[0] != 1.0;
    return world.rank() == 0 && wrong;
}
