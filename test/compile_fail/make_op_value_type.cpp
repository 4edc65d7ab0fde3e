// Must NOT compile: an op made with an int identity used on double data.
// The CTest entry compile_fail.make_op_value_type builds
// this file and passes only when the compiler prints make_op's static_assert.

#include <sparse_reduce/sparse_reduce.hpp>

#include <vector>

int main()
{
    const auto op = sparse_reduce::make_op([](double a, double b) { return a + b; }, 0, sparse_reduce::commutative);
    std::vector<double> a(4, 1.5), b(4, 2.25), out;
    sparse_reduce::combine_into(out, a, b, op);
    return static_cast<int>(out[0]);
}
