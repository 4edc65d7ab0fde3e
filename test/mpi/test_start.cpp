// reduce_plan::start and ireduce against the serial fold and the blocking reduce, at 1,
// 2, 3, 4, 5 and 8 ranks: every tree, several roots and segment sizes,
// sparse and dense vectors in and out; several calls in flight completed in
// reverse order, and in different orders on different ranks; a plan's next
// call, and a blocking call, while calls are in flight; an operation that
// throws on one rank while test() moves the call on; requests moved and
// destroyed before they complete.

#define BOOST_TEST_MODULE start
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"
#include "start_cases.hpp"
#include <sparse_reduce/policy_any.hpp>
#include <sparse_reduce/sparse_reduce.hpp>

#include <Eigen/SparseCore>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

const sr::policy::any trees[] = {sr::policy::binomial{},
                                 sr::policy::k_ary{.k = 3, .segment_bytes = 1024},
                                 sr::policy::binary{.wire = sr::wire::index_value},
                                 sr::policy::chain{.segment_bytes = 512},
                                 sr::policy::optimal_binary{},
                                 sr::policy::two_tree{.segment_bytes = 1024},
                                 sr::policy::automatic{}};
const char* const tree_names[] = {"binomial", "k_ary{3}", "binary", "chain", "optimal_binary", "two_tree",
                                  "automatic"};

constexpr std::size_t dim = start_dim;

} // namespace

// Every tree at every root: a sparse input into a dense output and a dense
// input into a sparse one, against the serial sum; a dense call sends what
// the blocking call of the same plan sends (both run the windows).
BOOST_AUTO_TEST_CASE(started_calls_give_the_serial_fold)
{
    auto& comm = world();
    unsigned salt = 10;
    for (std::size_t t = 0; t < std::size(trees); ++t)
        for (int root : test_roots())
            for (double density : {0.05, 1.0}) {
                ++salt;
                const std::string ctx = std::string(tree_names[t]) + ", root " + std::to_string(root) + ", density " +
                                        std::to_string(density);
                auto plan = sr::make_plan(comm, root, dim, trees[t]);
                const auto dense_in = input(salt, density);
                const auto want = sum(salt, density);

                const sr::report started = check_started_pair(plan, dense_in, want, comm.rank() == root, ctx);
                Eigen::SparseVector<double> blocking_out;
                const sr::report blocking = plan.reduce(dense_in, blocking_out, std::plus<>{});
                BOOST_TEST(started.bytes_sent == blocking.bytes_sent, ctx);
                BOOST_TEST(started.messages_sent == blocking.messages_sent, ctx);
                BOOST_TEST(started.algorithm.str() == blocking.algorithm.str(), ctx);
            }
}

// Three plans' calls in flight at once, completed in reverse order of their
// starts; then again with the even ranks waiting in one order and the odd
// ranks in the other (a rank waiting on one call moves the others on). (The
// first round's starts agree on their plans' schedules, which finishes the
// calls before them; the second's are all in flight together.)
BOOST_AUTO_TEST_CASE(several_calls_in_flight_complete_in_any_order)
{
    auto& comm = world();
    const int P = comm.size();
    const int roots[] = {0, P - 1, P / 2};
    std::vector<sr::reduce_plan<sr::policy::any>> plans;
    for (int k = 0; k < 3; ++k) plans.push_back(sr::make_plan(comm, roots[k], dim, trees[k + 1]));
    for (int round = 0; round < 2; ++round) {
        std::vector<double> outs[3];
        std::vector<double> ins[3];
        sr::reduce_request reqs[3];
        for (int k = 0; k < 3; ++k) {
            ins[k] = input(100 + 10 * round + k);
            reqs[k] = plans[k].start(ins[k], outs[k], std::plus<>{});
        }
        const bool reversed = round == 0 || comm.rank() % 2 == 0;
        for (int j = 0; j < 3; ++j) {
            const int k = reversed ? 2 - j : j;
            reqs[k].test();
            reqs[k].wait();
        }
        for (int k = 0; k < 3; ++k)
            if (comm.rank() == roots[k])
                BOOST_TEST(close(outs[k], sum(100 + 10 * round + k)), "round " << round << ", plan " << k);
    }
}

// A plan's next call, started or blocking, completes the call it started
// first; a blocking call of another plan finishes every call's transfer.
BOOST_AUTO_TEST_CASE(next_calls_complete_the_started_ones)
{
    auto& comm = world();
    const int root = comm.size() - 1;
    auto plan = sr::make_plan(comm, root, dim, sr::policy::binomial{.segment_bytes = 1024});
    auto other = sr::make_plan(comm, 0, dim, sr::policy::chain{});
    const auto a = input(201), b = input(202), c = input(203);
    std::vector<double> out_a, out_b, out_c, out_d;
    auto ra = plan.start(a, out_a, std::plus<>{});
    auto rb = plan.start(b, out_b, std::plus<>{}); // completes ra's call
    BOOST_TEST(ra.done());
    plan.reduce(c, out_c, std::plus<>{}); // completes rb's call
    BOOST_TEST(rb.done());
    auto rd = plan.start(a, out_d, std::plus<>{});
    std::vector<double> out_other;
    other.reduce(b, out_other, std::plus<>{}); // finishes rd's transfer: a test() completes it
    BOOST_TEST(!rd.done());
    BOOST_TEST(rd.test());
    ra.wait();
    rb.wait();
    rd.wait();
    if (comm.rank() == root) {
        BOOST_TEST(close(out_a, sum(201)));
        BOOST_TEST(close(out_b, sum(202)));
        BOOST_TEST(close(out_c, sum(203)));
        BOOST_TEST(close(out_d, sum(201)));
    }
    if (comm.rank() == 0) BOOST_TEST(close(out_other, sum(202)));
}

// A request moved, and one destroyed before it completes: the call completes
// (in the destructor), the root's output holds the sum, and the plan goes on.
BOOST_AUTO_TEST_CASE(requests_moved_and_destroyed_early_complete)
{
    auto& comm = world();
    const int root = comm.size() / 2;
    auto plan = sr::make_plan(comm, root, dim, sr::policy::two_tree{.segment_bytes = 512});
    const auto in = input(301);
    std::vector<double> out;
    {
        auto req = plan.start(in, out, std::plus<>{});
    }
    if (comm.rank() == root) BOOST_TEST(close(out, sum(301)));

    std::vector<double> out2;
    sr::reduce_request moved;
    BOOST_TEST(moved.done());
    {
        auto req = plan.start(in, out2, std::plus<>{});
        moved = std::move(req);
        BOOST_TEST(req.done()); // (moved from: nothing to do)
    }
    moved.wait();
    if (comm.rank() == root) BOOST_TEST(close(out2, sum(301)));
    BOOST_TEST(all_ok(good_reduce(sr::policy::binomial{}, root)));
}

// An operation that throws on one rank, on a fold that test() runs: wait()
// throws on the ranks where the blocking call throws (the root and the
// rank that found it), naming the rank; no rank hangs; the plan and the
// communicator work on.
BOOST_AUTO_TEST_CASE(an_op_throwing_on_one_rank_fails_where_the_blocking_call_does)
{
    auto& comm = world();
    const int P = comm.size();
    if (P < 2) return;
    for (int root : test_roots())
        for (int victim : {0, P - 1}) {
            const auto in = fault_input_of(comm.rank());
            const std::string ctx = "root " + std::to_string(root) + ", victim " + std::to_string(victim);
            // the blocking call, on a plan of its own (the identity law is tested per plan)
            bool blocking_threw = false;
            {
                auto plan = sr::make_plan(comm, root, fault_dim, sr::policy::binomial{.segment_bytes = 256});
                std::vector<double> out;
                try {
                    plan.reduce(in, out, plus_throwing_on(victim));
                } catch (const sr::error&) {
                    blocking_threw = true;
                }
            }
            if (comm.rank() == root || comm.rank() == victim) BOOST_TEST(blocking_threw, ctx); // (the fault is real)
            auto plan = sr::make_plan(comm, root, fault_dim, sr::policy::binomial{.segment_bytes = 256});
            std::vector<double> out;
            BOOST_TEST(inject_fault({.context = ctx,
                                     .who = [&](int) { return blocking_threw ? expect::throws : expect::returns; },
                                     .needles = blocking_threw ? std::vector<std::string>{"rank " + std::to_string(victim)}
                                                               : std::vector<std::string>{}},
                                    [&] { poll_then_wait(plan.start(in, out, plus_throwing_on(victim))); },
                                    [&] {
                                        std::vector<double> good;
                                        plan.reduce(in, good, std::plus<>{});
                                        return comm.rank() != root || good == fault_serial_sum(P);
                                    }));
        }
}

// Calls in flight while the other collectives run (each finishes the
// transfers first, so no rank waits in it on a rank that waits on a started
// call): the odd ranks wait before the collective, the even ones after;
// twelve plans' calls in flight at once, waited for in a shuffled order.
BOOST_AUTO_TEST_CASE(other_collectives_with_calls_in_flight)
{
    auto& comm = world();
    const int P = comm.size(), me = comm.rank();
    std::vector<sr::reduce_plan<sr::policy::any>> plans;
    for (int k = 0; k < 12; ++k) plans.push_back(sr::make_plan(comm, k % P, dim, trees[k % std::size(trees)]));
    std::vector<std::vector<double>> ins(12), outs(12);
    for (int k = 0; k < 12; ++k) ins[k] = input(400 + k);
    // a first call each: a plan's first call agrees on its schedule, which
    // finishes the calls in flight
    for (int k = 0; k < 12; ++k) plans[k].start(ins[k], outs[k], std::plus<>{}).wait();
    std::vector<sr::reduce_request> reqs(12);
    for (int k = 0; k < 12; ++k) reqs[k] = plans[k].start(ins[k], outs[k], std::plus<>{});
    if (me % 2 == 1)
        for (int k = 0; k < 12; k += 3) reqs[k].wait();
    // allreduce and reduce_scatter of the fault tests' vectors (sums exact)
    const auto v = fault_input_of(me);
    std::vector<double> all;
    sr::allreduce(comm, v, all, std::plus<>{});
    BOOST_TEST(all == fault_serial_sum(P));
    sr::index_value_vector<double, std::uint64_t> part;
    const auto ranges = sr::reduce_scatter(comm, v, part, std::plus<>{});
    const auto want = fault_serial_sum(P);
    bool part_ok = true;
    for (std::size_t k = 0; k < part.nnz(); ++k) part_ok = part_ok && part.values()[k] == want[part.indices()[k]];
    BOOST_TEST(part_ok);
    BOOST_TEST(ranges.size() == static_cast<std::size_t>(P) + 1);
    std::vector<int> order(12);
    for (int k = 0; k < 12; ++k) order[k] = (k * 5 + me) % 12; // a different order on every rank
    for (int k : order) reqs[k].wait();
    for (int k = 0; k < 12; ++k)
        if (me == k % P) BOOST_TEST(close(outs[k], sum(400 + k)), "plan " << k);
}

// ireduce, the one-shot form (its state on the communicator): every tree at
// every root against the serial fold; then beside a plan's call in flight,
// and completed by the next one-shot reduce on the communicator.
BOOST_AUTO_TEST_CASE(ireduce_gives_the_serial_fold)
{
    auto& comm = world();
    unsigned salt = 500;
    for (std::size_t t = 0; t < std::size(trees); ++t)
        for (int root : test_roots()) {
            ++salt;
            const auto in = sparse_of(input(salt));
            std::vector<double> out;
            auto req = sr::ireduce(comm, in, out, std::plus<>{}, root, trees[t]);
            while (!req.test()) {
            }
            req.wait();
            if (comm.rank() == root) BOOST_TEST(close(out, sum(salt)), tree_names[t] << ", root " << root);
        }
    const int root = comm.size() - 1;
    auto plan = sr::make_plan(comm, 0, dim, sr::policy::chain{});
    const auto a = input(601), b = input(602), c = input(603);
    std::vector<double> out_a, out_b, out_c, out_p;
    plan.start(c, out_p, std::plus<>{}).wait(); // (the plan's schedule agreed)
    auto rp = plan.start(c, out_p, std::plus<>{});
    auto ra = sr::ireduce(comm, a, out_a, std::plus<>{}, root);
    sr::reduce(comm, b, out_b, std::plus<>{}, root); // completes ra's call
    BOOST_TEST(ra.done());
    auto rc = sr::ireduce(comm, a, out_c, std::plus<>{}, root, sr::policy::binomial{.segment_bytes = 1024});
    rp.wait();
    rc.wait();
    ra.wait();
    if (comm.rank() == root) {
        BOOST_TEST(close(out_a, sum(601)));
        BOOST_TEST(close(out_b, sum(602)));
        BOOST_TEST(close(out_c, sum(601)));
    }
    if (comm.rank() == 0) BOOST_TEST(close(out_p, sum(603)));
}
