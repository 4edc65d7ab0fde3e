// Must NOT compile: a value aligned to 16 bytes is not a wire value (issue
// 17). The CTest entry compile_fail.plan_wire_value passes only when the
// compiler prints the message that states the rule.

#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/op/make_op.hpp>

#include <vector>

struct alignas(16) wide {
    double x = 0;
    bool operator==(const wide&) const = default;
};

int main()
{
    const boost::mpi::communicator world;
    const auto op = sparse_reduce::make_op([](wide a, wide b) { return wide{a.x + b.x}; }, wide{},
                                           sparse_reduce::commutative);
    std::vector<wide> in(4), out;
    auto plan = sparse_reduce::make_plan(world, 0, in.size());
    plan.reduce(in, out, op);
}
