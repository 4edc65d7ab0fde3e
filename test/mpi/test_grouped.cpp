// Grouped allreduce (Chen and Lee, n.d.) on Boost.MPI cartesian communicators, 2 x 2,
// 2 x 3 and 2 x 4 (CTest grouped.np4, .np6, .np8), regular and wrapped:
// every group shape that tiles the mesh and the model's own, against the
// serial fold on every rank; non-commutative operations in rank order where
// the groups allow it and a clear error where they do not; plans over
// several iterations; failures on one rank end in errors on every rank.

#define BOOST_TEST_MODULE grouped
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"
#include "../support/reference.hpp"

#include <sparse_reduce/collective/allreduce.hpp>

#include <boost/mpi/cartesian_communicator.hpp>

#include <Eigen/SparseCore>

#include <functional>
#include <string>
#include <vector>

namespace sr = sparse_reduce;
namespace mpi = boost::mpi;
using namespace sparse_reduce_test;

namespace {

// 2 x P/2, periodic in both dimensions or in none.
mpi::cartesian_communicator mesh(bool wrapped, bool reorder = false)
{
    const int P = world().size();
    std::vector<mpi::cartesian_dimension> dims{{2, wrapped}, {P / 2, wrapped}};
    return mpi::cartesian_communicator(world(), mpi::cartesian_topology(dims), reorder);
}

std::vector<sr::group_shape> tiling_shapes(int rows, int cols)
{
    std::vector<sr::group_shape> out;
    for (int a = 1; a <= rows; ++a)
        for (int b = 1; b <= cols; ++b)
            if (rows % a == 0 && cols % b == 0) out.push_back({a, b});
    return out;
}

// Runs a plan call in the representation `kind` (0 vector, 1 span, 2
// index_value, 3 Eigen) on this rank; true iff it equals the serial fold.
template <class T, class Plan, class Op>
bool equals_fold(Plan& plan, const mpi::communicator& comm, int kind, double density, const Op& op, unsigned salt,
                 std::string& why)
{
    const std::size_t n = plan.dimension();
    const auto mine = rank_input<T>(comm.rank(), n, density, op, salt);
    const auto want = rank_fold<T>(comm.size(), n, density, op, salt);
    std::vector<T> got(n);
    sr::report rep;
    try {
        if (kind == 0) rep = plan.allreduce(mine, got, op);
        if (kind == 1) rep = plan.allreduce(std::span<const T>(mine), std::span<T>(got), op);
        if (kind == 2) {
            sr::index_value_vector<T> out;
            rep = plan.allreduce(sr::to_index_value(mine, op), out, op);
            got = sr::to_dense(out, op);
        }
        if constexpr (std::is_same_v<T, double>)
            if (kind == 3) {
                Eigen::SparseVector<double> in(static_cast<Eigen::Index>(n)), out;
                sr::convert_into(in, mine, op);
                rep = plan.allreduce(in, out, op);
                got = sr::to_dense(out, op);
            }
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
    if (rep.algorithm.find("grouped(mesh ") != 0) {
        why = "algorithm " + rep.algorithm;
        return false;
    }
    const long d = first_difference(got, want);
    if (d >= 0) why = rep.algorithm + ": first difference at " + std::to_string(d);
    return d < 0;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_group_shape_equals_the_serial_fold)
{
    const int P = world().size();
    BOOST_TEST_REQUIRE(P % 2 == 0);
    unsigned salt = 1;
    for (bool wrapped : {false, true}) {
        const auto cart = mesh(wrapped);
        for (const auto& g : tiling_shapes(2, P / 2))
            for (std::size_t seg : {std::size_t{0}, std::size_t{64}}) {
                auto plan = sr::make_allreduce_plan(
                    cart, 1001, sr::policy::grouped{.group_rows = g.rows, .group_cols = g.cols, .segment_bytes = seg});
                BOOST_TEST(plan.mesh().rows == 2);
                BOOST_TEST(plan.mesh().cols == P / 2);
                BOOST_TEST(plan.mesh().wrapped == wrapped);
                BOOST_TEST_REQUIRE(plan.groups().has_value());
                BOOST_TEST(plan.groups()->rows == g.rows);
                BOOST_TEST(plan.groups()->cols == g.cols);
                for (double density : {0.002, 0.05, 0.5, 1.0}) {
                    for (int kind : {0, 1, 2, 3}) {
                        std::string why;
                        const bool ok = equals_fold<double>(plan, cart, kind, density, std::plus<>{}, ++salt, why);
                        BOOST_TEST(all_ok(ok), "groups " << sr::to_string(g) << " wrapped " << wrapped << " density "
                                                         << density << " kind " << kind << ": " << why);
                    }
                    std::string why;
                    const bool ok = equals_fold<std::int64_t>(plan, cart, 1, density, sr::max{}, ++salt, why);
                    BOOST_TEST(all_ok(ok), "max, groups " << sr::to_string(g) << ": " << why);
                }
            }
    }
}

// Non-commutative: groups of consecutive ranks (1 x b, whole rows) keep rank
// order; others are refused on every rank before any data moves.
BOOST_AUTO_TEST_CASE(non_commutative_operations_keep_rank_order_or_are_refused)
{
    const int P = world().size();
    const auto cart = mesh(false);
    unsigned salt = 100;
    for (const auto& g : tiling_shapes(2, P / 2)) {
        auto plan =
            sr::make_allreduce_plan(cart, 700, sr::policy::grouped{.group_rows = g.rows, .group_cols = g.cols});
        const bool contiguous = g.rows == 1 || g.cols == P / 2;
        for (double density : {0.01, 0.3, 1.0}) {
            std::string why;
            const bool ok = equals_fold<affine>(plan, cart, 2, density, compose{}, ++salt, why);
            if (contiguous) {
                BOOST_TEST(all_ok(ok), "groups " << sr::to_string(g) << " density " << density << ": " << why);
            } else {
                BOOST_TEST(all_ok(!ok && why.find("consecutive ranks") != std::string::npos),
                           "groups " << sr::to_string(g) << ": " << why);
            }
        }
    }
    // the model, told the operation is not commutative, picks consecutive ranks
    auto chosen = sr::make_allreduce_plan(cart, 700, sr::policy::grouped{});
    std::string why;
    BOOST_TEST(all_ok(equals_fold<affine>(chosen, cart, 0, 0.2, compose{}, ++salt, why)), why);
    BOOST_TEST_REQUIRE(chosen.groups().has_value());
    BOOST_TEST(sr::contiguous_in_rank_order(*chosen.groups(), chosen.mesh()));
}

// Without a shape the model chooses one on the first call, from the mean
// density, and keeps it: the same as choose_group_shape with the same inputs.
BOOST_AUTO_TEST_CASE(the_model_chooses_the_shape_on_the_first_call)
{
    const int P = world().size();
    for (bool wrapped : {false, true})
        for (double density : {0.001, 0.1, 1.0}) {
            const auto cart = mesh(wrapped);
            const std::size_t n = 4000;
            auto plan = sr::make_allreduce_plan(cart, n, sr::policy::grouped{});
            BOOST_TEST(!plan.groups().has_value());
            const auto mine = rank_input<double>(cart.rank(), n, density, std::plus<>{}, 7);
            std::vector<double> out;
            plan.allreduce(mine, out, std::plus<>{});
            BOOST_TEST(all_ok(first_difference(out, rank_fold<double>(P, n, density, std::plus<>{}, 7)) < 0));
            BOOST_TEST_REQUIRE(plan.groups().has_value());
            // what the plan should have computed
            double entries = 0;
            for (double v : mine) entries += v != 0;
            const double mean = mpi::all_reduce(world(), entries, std::plus<>{}) / P;
            const auto& t = sr::current_tuning();
            sr::replication::params p;
            p.N_a = mean / static_cast<double>(n);
            p.T_x = (t.machine.index_bytes + 8) / 8;
            p.T_m = t.machine.gamma / (t.machine.beta * 8);
            const auto want = sr::choose_group_shape(plan.mesh(), true, p, false);
            BOOST_TEST(plan.groups()->rows == want.rows);
            BOOST_TEST(plan.groups()->cols == want.cols);
            // later calls keep the groups
            const auto mine2 = rank_input<double>(cart.rank(), n, 1.0 - density, std::plus<>{}, 8);
            plan.allreduce(mine2, out, std::plus<>{});
            BOOST_TEST(plan.groups()->rows == want.rows);
            BOOST_TEST(plan.groups()->cols == want.cols);
            BOOST_TEST(all_ok(first_difference(out, rank_fold<double>(P, n, 1.0 - density, std::plus<>{}, 8)) < 0));
        }
}

// The shape rule itself: the square model on square meshes, consecutive
// ranks for non-commutative operations, group sizes near the model's x^2
// on the others.
BOOST_AUTO_TEST_CASE(choose_group_shape_follows_the_model)
{
    sr::replication::params p;
    p.N_a = 0.01, p.T_x = 1, p.T_m = 0;
    const sr::mesh_shape sq{64, 64, false};
    p.N = 64;
    const int x = sr::replication::optimal_group_size(sr::replication::mesh_system::RS2, p);
    const auto g = sr::choose_group_shape(sq, true, p, false);
    BOOST_TEST(g.rows == x);
    BOOST_TEST(g.cols == x);
    BOOST_TEST(x == 16); // doc/allreduce.md, erratum 4
    const auto c = sr::choose_group_shape(sq, true, p, true);
    BOOST_TEST(sr::contiguous_in_rank_order(c, sq));
    for (int rows : {1, 2, 3, 4})
        for (int cols : {1, 2, 5, 6, 8}) {
            const sr::mesh_shape m{rows, cols, false};
            const auto s = sr::choose_group_shape(m, true, p, false);
            BOOST_TEST(sr::check_group_shape(s, m).empty(), sr::to_string(s) << " on " << sr::to_string(m));
        }
    BOOST_TEST(!sr::check_group_shape({2, 3}, {4, 4, false}).empty());
}

BOOST_AUTO_TEST_CASE(plans_repeat_like_em_iterations)
{
    const int P = world().size();
    const auto cart = mesh(true, /*reorder=*/true);
    const std::size_t n = 5000;
    auto plan = sr::make_allreduce_plan(cart, n, sr::policy::grouped{.group_rows = 2, .group_cols = 1});
    for (unsigned it = 0; it < 5; ++it) {
        const double density = 0.02 * (it + 1);
        const auto mine = rank_input<double>(cart.rank(), n, density, std::plus<>{}, 300 + it);
        sr::index_value_vector<double> out;
        plan.allreduce(sr::to_index_value(mine, std::plus<>{}), out, std::plus<>{});
        BOOST_TEST(all_ok(first_difference(sr::to_dense(out), rank_fold<double>(P, n, density, std::plus<>{}, 300 + it)) <
                          0),
                   "iteration " << it);
    }
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_meshes_are_errors)
{
    const int P = world().size();
    const auto cart = mesh(false);
    const auto refused = [&](auto policy, const std::string& text) {
        std::string what;
        try {
            sr::make_allreduce_plan(cart, 10, policy);
        } catch (const sr::error& e) {
            what = e.what();
        }
        return all_ok(what.find(text) != std::string::npos);
    };
    BOOST_TEST(refused(sr::policy::grouped{.group_rows = 3, .group_cols = 1}, "do not tile"));
    BOOST_TEST(refused(sr::policy::grouped{.group_rows = 1, .group_cols = P}, "do not tile"));
    BOOST_TEST(refused(sr::policy::grouped{.group_rows = 1, .group_cols = 1, .mesh_rows = 3, .mesh_cols = P}, "mesh for"));
}

BOOST_AUTO_TEST_CASE(failures_on_one_rank_throw_everywhere)
{
    const int P = world().size();
    const auto cart = mesh(true);
    const int me = cart.rank();
    for (const auto& g : tiling_shapes(2, P / 2)) {
        const sr::policy::grouped pol{.group_rows = g.rows, .group_cols = g.cols};
        // then a correct grouped allreduce on the same communicator: the serial sum everywhere
        const auto good = [&] {
            std::vector<double> out;
            sr::allreduce(cart, fault_input_of(me), out, std::plus<>{}, pol);
            return out == fault_serial_sum(P);
        };
        for (int victim : {0, P - 1}) {
            const std::string name = "grouped, groups " + sr::to_string(g) + ", rank " + std::to_string(victim) + ": ";
            // an operation that throws on one rank (every member folds in updating)
            BOOST_TEST(inject_fault({.context = name + "the op throws", .needles = {"user op failed"}, .agreed = true},
                                    [&] {
                                        std::vector<double> in(100, 1.0), out;
                                        sr::allreduce(cart, in, out, plus_throwing_on(victim, thrown::std_exception, me),
                                                      pol);
                                    },
                                    good));
            // a corrupt input on one rank
            BOOST_TEST(inject_fault({.context = name + "Eigen indices out of order",
                                     .needles = {"not strictly increasing"},
                                     .agreed = true},
                                    [&] {
                                        Eigen::SparseVector<double> in(50), out;
                                        in.insert(3) = 1.0;
                                        in.insert(7) = 2.0;
                                        if (me == victim) std::swap(in.innerIndexPtr()[0], in.innerIndexPtr()[1]);
                                        sr::allreduce(cart, in, out, std::plus<>{}, pol);
                                    },
                                    good));
            // a plan called with the wrong dimension on one rank
            BOOST_TEST(inject_fault({.context = name + "a plan's call of dimension 61",
                                     .needles = {"dimension mismatch"},
                                     .agreed = true},
                                    [&] {
                                        auto plan = sr::make_allreduce_plan(cart, 60, pol);
                                        std::vector<double> v(me == victim ? 61 : 60, 1.0), o;
                                        plan.allreduce(v, o, std::plus<>{});
                                    },
                                    good));
        }
    }
}
