// Must NOT compile: in the compiled mode, the front <sparse_reduce/compiled.hpp>
// declares only the calls the compiled library holds; index_value_vector with
// 64-bit indices is not one of them. The CTest entry
// compile_fail.compiled_front_other_call passes only when the compiler names
// the constraint (compiled_reduce_call) the call does not meet.
#define SPARSE_REDUCE_COMPILED // what linking SparseReduce::compiled defines

#include <sparse_reduce/compiled.hpp>

#include <cstdint>
#include <functional>

int main()
{
    const boost::mpi::communicator world;
    const sparse_reduce::index_value_vector<double, std::uint64_t> in(4);
    sparse_reduce::index_value_vector<double, std::uint64_t> out;
    sparse_reduce::reduce(world, in, out, std::plus<>{}, 0);
}
