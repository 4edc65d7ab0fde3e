// Arguments the ranks must agree on, and contracts the library checks:
//  - a dimension that differs on one rank reaches that rank: one-shot reduce,
//    allreduce and reduce_scatter throw on every rank, a plan's call on the
//    rank at fault and the root; every message names the rank at fault;
//  - make_op's identity must be one: max(|a|, |b|) with identity 0 fails on
//    negative data, built-in operations and right identities never do;
//  - the report names the tuning automatic read;
//  - a const std::span of non-const values is a writable output.
// Every fault is followed by a correct collective on the same communicator.
#define BOOST_TEST_MODULE argument_agreement
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <unistd.h>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 300;

using any_policy = sr::policy::any;

std::vector<std::pair<std::string, any_policy>> policies()
{
    return {{"automatic", sr::policy::automatic{}},
            {"binomial", sr::policy::binomial{}},
            {"binomial, index/value wire", sr::policy::binomial{.wire = sr::wire::index_value}},
            {"chain", sr::policy::chain{}},
            {"optimal_binary", sr::policy::optimal_binary{}},
            {"k_ary k = 0", sr::policy::k_ary{.k = 0}},
            {"two_tree", sr::policy::two_tree{}}};
}

// One entry per rank at index 3 (Eigen) or every element (dense), value v.
Eigen::SparseVector<double> eigen_of(std::size_t n, double v)
{
    Eigen::SparseVector<double> e(static_cast<Eigen::Index>(n));
    e.insertBack(3) = v;
    return e;
}

std::string dimension_text(int rank, std::size_t n) { return "rank " + std::to_string(rank) + " has dimension " + std::to_string(n); }

// max(|a|, |b|) with identity 0: an identity only of data >= 0.
const auto abs_max = sr::make_op([](double a, double b) { return std::max(std::abs(a), std::abs(b)); }, 0.0,
                                 sr::commutative);

} // namespace

BOOST_AUTO_TEST_CASE(one_shot_reduce_with_another_dimension_on_one_rank_throws_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    for (const auto& [name, pol] : policies())
        for (int root : test_roots()) {
            const int odd = (root + 1) % comm.size();
            const std::size_t n = comm.rank() == odd ? dim + 1 : dim;
            const std::string ctx = name + ", root " + std::to_string(root) + ", odd rank " + std::to_string(odd);
            const std::vector<std::string> needles = {dimension_text(odd, dim + 1),
                                                      "the root (rank " + std::to_string(root) + ") has " +
                                                          std::to_string(dim)};
            const auto sparse_in = eigen_of(n, 1.0);
            Eigen::SparseVector<double> sparse_out;
            BOOST_TEST(inject_fault({.context = ctx + ", Eigen", .needles = needles, .agreed = true},
                                    [&] { sr::reduce(comm, sparse_in, sparse_out, std::plus<>{}, root, pol); },
                                    [&] { return good_reduce(pol, root); }));
            const std::vector<double> dense_in(n, 1.0);
            std::vector<double> dense_out;
            BOOST_TEST(inject_fault({.context = ctx + ", dense", .needles = needles, .agreed = true},
                                    [&] { sr::reduce(comm, dense_in, dense_out, std::plus<>{}, root, pol); },
                                    [&] { return good_reduce(pol, root); }));
        }
}

BOOST_AUTO_TEST_CASE(plans_name_the_rank_at_fault)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    for (const auto& [name, pol] : policies())
        for (int root : test_roots()) {
            const int odd = (root + 1) % comm.size();
            const std::string ctx = name + ", root " + std::to_string(root) + ", odd rank " + std::to_string(odd);
            // plans made with different dimensions: every rank throws when they are made
            BOOST_TEST(inject_fault({.context = ctx + ", make_plan",
                                     .needles = {dimension_text(odd, dim + 1)},
                                     .agreed = true},
                                    [&] { sr::make_plan(comm, root, comm.rank() == odd ? dim + 1 : dim, pol); },
                                    [&] { return good_reduce(pol, root); }));
            // one plan; the odd rank's vector has another dimension: it throws, so does the root
            auto plan = sr::make_plan(comm, root, dim, pol);
            const auto in = eigen_of(comm.rank() == odd ? dim + 1 : dim, 1.0);
            Eigen::SparseVector<double> out;
            BOOST_TEST(inject_fault({.context = ctx + ", a plan's call",
                                     .who = reduce_throwers(root, odd),
                                     .needles = {dimension_text(odd, dim + 1), "the plan has"}},
                                    [&] { plan.reduce(in, out, std::plus<>{}); },
                                    [&] { return good_reduce(pol, root); }));
        }
}

BOOST_AUTO_TEST_CASE(allreduce_and_reduce_scatter_name_the_rank_at_fault)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int odd = comm.size() / 2;
    const std::size_t n = comm.rank() == odd ? dim + 1 : dim;
    const std::vector<std::string> needles = {dimension_text(odd, dim + 1), "the other ranks have " + std::to_string(dim)};
    const auto in = eigen_of(n, 1.0);
    Eigen::SparseVector<double> out;
    const std::vector<double> dense_in(n, 1.0);
    std::vector<double> dense_out;
    BOOST_TEST(inject_fault({.context = "allreduce, automatic", .needles = needles, .agreed = true},
                            [&] { sr::allreduce(comm, in, out, std::plus<>{}); }, [] { return good_allreduce(); }));
    BOOST_TEST(inject_fault({.context = "allreduce, recursive doubling, dense", .needles = needles, .agreed = true},
                            [&] { sr::allreduce(comm, dense_in, dense_out, std::plus<>{}, sr::policy::recursive_doubling{}); },
                            [] { return good_allreduce(); }));
    BOOST_TEST(inject_fault({.context = "allreduce plan", .needles = needles, .agreed = true},
                            [&] { sr::make_allreduce_plan(comm, n, sr::policy::split_allgather{}); },
                            [] { return good_allreduce(); }));
    BOOST_TEST(inject_fault({.context = "reduce_scatter", .needles = needles, .agreed = true},
                            [&] { sr::reduce_scatter(comm, in, out, std::plus<>{}); },
                            [] { return good_reduce_scatter(); }));
    BOOST_TEST(inject_fault({.context = "reduce_scatter_balanced", .needles = needles, .agreed = true},
                            [&] { sr::reduce_scatter_balanced(comm, dense_in, out, std::plus<>{}); },
                            [] { return good_reduce_scatter(); }));
}

BOOST_AUTO_TEST_CASE(an_identity_that_is_not_one_is_caught)
{
    auto& comm = world();
    const int p = comm.size();
    for (int root : test_roots()) {
        const int odd = (root + 1) % p; // holds -7; the others hold 2
        const double mine = comm.rank() == odd ? -7.0 : 2.0;
        const auto in = eigen_of(dim, mine);
        Eigen::SparseVector<double> out;
        const std::string ctx = "root " + std::to_string(root) + ", -7 on rank " + std::to_string(odd);
        const std::vector<std::string> needles = {"rank " + std::to_string(odd), "identity 0 is not an identity",
                                                  "op(0, -7) = 7, not -7"};
        // one-shot reduce: the rank at fault and the root throw
        BOOST_TEST(inject_fault({.context = ctx + ", one-shot reduce", .who = reduce_throwers(root, odd), .needles = needles},
                                [&] { sr::reduce(comm, in, out, abs_max, root); },
                                [&] { return good_reduce(sr::policy::automatic{}, root); }));
        // a plan's first call
        auto plan = sr::make_plan(comm, root, dim, sr::policy::binomial{.wire = sr::wire::index_value});
        const std::vector<double> dense(dim, mine);
        std::vector<double> dense_out;
        BOOST_TEST(inject_fault({.context = ctx + ", a plan's first call", .who = reduce_throwers(root, odd), .needles = needles},
                                [&] { plan.reduce(dense, dense_out, abs_max); },
                                [&] { return good_reduce(sr::policy::binomial{}, root); }));
    }
    const int odd = p / 2;
    const auto in = eigen_of(dim, comm.rank() == odd ? -7.0 : 2.0);
    Eigen::SparseVector<double> out;
    const std::vector<std::string> needles = {"rank " + std::to_string(odd), "op(0, -7) = 7, not -7"};
    BOOST_TEST(inject_fault({.context = "allreduce", .needles = needles, .agreed = true},
                            [&] { sr::allreduce(comm, in, out, abs_max); }, [] { return good_allreduce(); }));
    BOOST_TEST(inject_fault({.context = "allreduce plan", .needles = needles, .agreed = true},
                            [&] { sr::make_allreduce_plan(comm, dim, sr::policy::reduce_broadcast{}).allreduce(in, out, abs_max); },
                            [] { return good_allreduce(); }));
    BOOST_TEST(inject_fault({.context = "reduce_scatter", .needles = needles, .agreed = true},
                            [&] { sr::reduce_scatter(comm, in, out, abs_max); }, [] { return good_reduce_scatter(); }));
}

BOOST_AUTO_TEST_CASE(right_identities_and_built_in_operations_pass_on_negative_data)
{
    auto& comm = world();
    const int p = comm.size();
    // every rank negative: -1 - rank at index 3, and the dense form
    const double mine = -1.0 - comm.rank();
    const auto in = eigen_of(dim, mine);
    const auto lowest = sr::make_op([](double a, double b) { return std::max(a, b); },
                                    -std::numeric_limits<double>::infinity(), sr::commutative);
    const auto plus = sr::make_op([](double a, double b) { return a + b; }, 0.0, sr::commutative);
    double want_max = -1.0, want_sum = 0, want_min = -static_cast<double>(p);
    for (int r = 0; r < p; ++r) want_sum += -1.0 - r;
    bool ok = true;
    for (int root : test_roots()) {
        Eigen::SparseVector<double> out;
        sr::reduce(comm, in, out, lowest, root);
        if (comm.rank() == root) ok = ok && out.nonZeros() == 1 && out.coeff(3) == want_max;
        sr::reduce(comm, in, out, plus, root);
        if (comm.rank() == root) ok = ok && out.coeff(3) == want_sum;
        sr::reduce(comm, in, out, sr::min{}, root);
        if (comm.rank() == root) ok = ok && out.coeff(3) == want_min;
        sr::reduce(comm, in, out, sr::max{}, root);
        if (comm.rank() == root) ok = ok && out.coeff(3) == want_max;
    }
    Eigen::SparseVector<double> out;
    sr::allreduce(comm, in, out, lowest);
    ok = ok && out.coeff(3) == want_max;
    sr::reduce_scatter(comm, in, out, plus);
    const auto ranges = sr::block_ranges(dim, p);
    const bool owns_3 = ranges[static_cast<std::size_t>(comm.rank())] <= 3 && 3 < ranges[static_cast<std::size_t>(comm.rank()) + 1];
    ok = ok && (owns_3 ? out.coeff(3) == want_sum : out.nonZeros() == 0);
    BOOST_TEST(all_ok(ok));
}

BOOST_AUTO_TEST_CASE(the_report_names_the_tuning)
{
    auto& comm = world();
    const auto in = eigen_of(dim, 1.0);
    Eigen::SparseVector<double> out;
    const char* env = std::getenv("SPARSE_REDUCE_TUNING");
    const std::string expected_default = env ? std::string(env) : std::string("built-in defaults");
    bool ok = true;
    ok = ok && sr::reduce(comm, in, out, std::plus<>{}, 0).tuning == expected_default;
    ok = ok && sr::allreduce(comm, in, out, std::plus<>{}).tuning == expected_default;
    ok = ok && sr::make_plan(comm, 0, dim).reduce(in, out, std::plus<>{}).tuning == expected_default;
    ok = ok && sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::binomial{}).tuning.str().empty();
    // a tuning file named in the policy
    std::string path;
    if (comm.rank() == 0) {
        path = "/tmp/sparse_reduce_test_tuning_" + std::to_string(::getpid()) + ".txt";
        std::ofstream(path) << "# a test tuning\nalpha = 2e-06\n";
    }
    boost::mpi::broadcast(comm, path, 0);
    const sr::policy::automatic from_file{.tuning_file = path};
    const auto r = sr::reduce(comm, in, out, std::plus<>{}, 0, from_file);
    ok = ok && r.tuning == path;
    std::ostringstream printed;
    printed << r;
    ok = ok && printed.str().find("tuning: " + path) != std::string::npos;
    ok = ok && sr::allreduce(comm, in, out, std::plus<>{}, from_file).tuning == path;
    BOOST_TEST(all_ok(ok));
    comm.barrier();
    if (comm.rank() == 0) std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(a_const_span_is_a_writable_output)
{
    auto& comm = world();
    const int p = comm.size();
    const std::vector<double> in(dim, 1.0);
    std::vector<double> reduced(dim, -1.0), everywhere(dim, -1.0);
    const std::span<double> to_root(reduced), to_all(everywhere);
    bool ok = true;
    for (int root : test_roots()) {
        sr::reduce(comm, std::span<const double>(in), to_root, std::plus<>{}, root);
        if (comm.rank() == root) ok = ok && reduced == std::vector<double>(dim, p);
    }
    sr::allreduce(comm, in, to_all, std::plus<>{});
    ok = ok && everywhere == std::vector<double>(dim, p);
    BOOST_TEST(all_ok(ok));
}

// A dimension whose dense vector would hold over 2^63 bytes (2^61 and up for
// double; SIZE_MAX) is refused on every rank, before anything is sent, with
// the limit named: one-shot reduce (whole messages and windows), a plan,
// allreduce and reduce_scatter; also where only one rank passes it (a
// mismatch, named as one). 2^60 doubles, the limit itself, still reduce.
BOOST_AUTO_TEST_CASE(dimensions_past_the_limit_throw_everywhere)
{
    auto& comm = world();
    using wide = sr::index_value_vector<double, std::uint64_t>;
    using any_allreduce_policy = std::variant<sr::policy::automatic, sr::policy::reduce_broadcast<>,
                                              sr::policy::recursive_doubling, sr::policy::split_allgather>;
    const std::size_t limit = std::size_t{1} << 60; // doubles
    const auto two_entries = [&](std::size_t n) {   // at both ends of the index space
        wide v;
        v.reset(n);
        v.push_back(1, 1.0);
        v.push_back(n - 2, 2.0);
        return v;
    };
    const std::vector<std::string> past = {"is past the limit for values of 8 bytes, " + std::to_string(limit)};
    for (const std::size_t n : {limit + 1, std::size_t{1} << 61, std::size_t{1} << 63, SIZE_MAX}) {
        const std::string at = "dimension " + std::to_string(n);
        const auto in = two_entries(n);
        for (const auto& [name, pol] : policies())
            for (const auto wire : {sr::wire::adaptive, sr::wire::index_value}) {
                auto q = pol;
                q.visit([&](auto& tree) { tree.wire = wire; });
                wide out;
                BOOST_TEST(inject_fault({.context = at + ", " + name + ", wire " + std::to_string(int(wire)),
                                         .needles = past, .agreed = true},
                                        [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, q); },
                                        [&] { return good_reduce(q, 0); }));
            }
        auto plan = sr::make_plan(comm, comm.size() - 1, n); // made without a value type: the call checks
        wide out;
        BOOST_TEST(inject_fault({.context = at + ", a plan's call", .needles = past, .agreed = true},
                                [&] { plan.reduce(in, out, std::plus<>{}); },
                                [&] { return good_reduce(sr::policy::automatic{}, comm.size() - 1); }));
        for (const auto& [name, pol] :
             {std::pair<std::string, any_allreduce_policy>{"automatic", sr::policy::automatic{}},
              {"reduce_broadcast", sr::policy::reduce_broadcast<>{}},
              {"recursive_doubling", sr::policy::recursive_doubling{}},
              {"split_allgather", sr::policy::split_allgather{}}})
            std::visit(
                [&](const auto& p) {
                    wide all_out;
                    BOOST_TEST(inject_fault({.context = at + ", allreduce " + name, .needles = past, .agreed = true},
                                            [&] { sr::allreduce(comm, in, all_out, std::plus<>{}, p); },
                                            [&] { return good_allreduce(); }));
                },
                pol);
        wide part;
        BOOST_TEST(inject_fault({.context = at + ", reduce_scatter", .needles = past, .agreed = true},
                                [&] { sr::reduce_scatter(comm, in, part, std::plus<>{}); },
                                [&] { return good_reduce_scatter(); }));
    }
    // One rank past the limit, the others not: the mismatch, on every rank.
    if (comm.size() > 1) {
        const int odd = comm.size() - 1;
        const std::size_t n = comm.rank() == odd ? std::size_t{1} << 62 : dim;
        const auto in = two_entries(n);
        for (const auto& [name, pol] : policies()) {
            wide out;
            BOOST_TEST(inject_fault({.context = "one rank at 2^62, " + name,
                                     .needles = {dimension_text(odd, std::size_t{1} << 62)},
                                     .agreed = true},
                                    [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, pol); },
                                    [&] { return good_reduce(pol, 0); }));
        }
    }
    // The limit itself: whole messages with 64-bit indices, the serial sum.
    const auto in = two_entries(limit);
    wide out;
    sr::reduce(comm, in, out, std::plus<>{}, 0);
    bool ok = true;
    if (comm.rank() == 0) {
        const auto p = static_cast<double>(comm.size());
        ok = sr::dimension(out) == limit && out.indices().size() == 2 && out.indices()[0] == 1 &&
             out.indices()[1] == limit - 2 && out.values()[0] == p && out.values()[1] == 2 * p;
    }
    BOOST_TEST(all_ok(ok), "2^60 doubles at the limit");
}
