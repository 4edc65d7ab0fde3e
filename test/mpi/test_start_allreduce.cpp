// allreduce_plan::start and iallreduce against the serial fold and the
// blocking allreduce, at 1, 2, 3, 4, 5 and 8 ranks: automatic,
// reduce_broadcast over several trees and segment sizes, and
// recursive_doubling and split_allgather over wire formats and segment sizes, sparse and dense
// vectors in and out, checked on every rank; several calls in flight (with
// a started reduce among them) completed in reverse order, and in different
// orders on different ranks; an operation that throws on one rank while
// test() moves the call on; requests destroyed before they complete.

#define BOOST_TEST_MODULE start_allreduce
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"
#include "start_cases.hpp"
#include <sparse_reduce/sparse_reduce.hpp>

#include <Eigen/SparseCore>

#include <bit>
#include <cmath>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = start_dim;

// One plan of each startable kind, its calls checked against the blocking
// call of the same plan.
template <class Policy>
void check_policy(const Policy& policy, const std::string& name, unsigned& salt)
{
    auto& comm = world();
    auto plan = sr::make_allreduce_plan(comm, dim, policy);
    for (double density : {0.05, 1.0}) {
        ++salt;
        const std::string ctx = name + ", density " + std::to_string(density);
        const auto dense_in = input(salt, density);
        const auto want = sum(salt, density);

        const sr::report started = check_started_pair(plan, dense_in, want, true, ctx);

        // a dense input runs the windows in both: the same bytes as the blocking call
        std::vector<double> dense_out(dim), blocking_dense_out;
        auto req3 = plan.start(dense_in, std::span<double>(dense_out), std::plus<>{}); // a view, as a temporary
        const sr::report started_dense = req3.wait();
        BOOST_TEST(close(dense_out, want), ctx << ": dense in, span out");
        const sr::report blocking_dense = plan.allreduce(dense_in, blocking_dense_out, std::plus<>{});
        if (blocking_dense.algorithm.str() != "automatic: one rank, the input copied") {
            BOOST_TEST(started_dense.bytes_sent == blocking_dense.bytes_sent, ctx << ": dense out");
            BOOST_TEST(started_dense.messages_sent == blocking_dense.messages_sent, ctx << ": dense out");
            BOOST_TEST(started_dense.algorithm.str() == blocking_dense.algorithm.str(), ctx << ": dense out");
        }
        // The started call runs what the blocking call runs, byte for byte;
        // automatic too, except that on one rank its dense input goes
        // through recursive doubling's (no) steps, not the blocking call's
        // copy.
        Eigen::SparseVector<double> blocking_out;
        const sr::report blocking = plan.allreduce(dense_in, blocking_out, std::plus<>{});
        BOOST_TEST(close(dense_of(blocking_out), want), ctx << ": blocking");
        if constexpr (std::same_as<Policy, sr::policy::automatic>)
            BOOST_TEST(started.reason.str().find("of the startable algorithms") != std::string::npos, ctx);
        else
            BOOST_TEST(started.reason.str() == blocking.reason.str(), ctx);
        if (blocking.algorithm.str() == "automatic: one rank, the input copied") {
            BOOST_TEST(started.algorithm.str().find("automatic: recursive_doubling(") == 0, ctx);
            BOOST_TEST(started.bytes_sent == 0u, ctx);
        } else {
            BOOST_TEST(started.bytes_sent == blocking.bytes_sent, ctx);
            BOOST_TEST(started.bytes_received == blocking.bytes_received, ctx);
            BOOST_TEST(started.messages_sent == blocking.messages_sent, ctx);
            BOOST_TEST(started.algorithm.str() == blocking.algorithm.str(), ctx);
            BOOST_TEST(started.tuning.str() == blocking.tuning.str(), ctx);
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(started_allreduces_give_the_serial_fold)
{
    unsigned salt = 10;
    check_policy(sr::policy::automatic{}, "automatic", salt);
    check_policy(sr::policy::reduce_broadcast<>{}, "reduce_broadcast", salt);
    check_policy(sr::policy::reduce_broadcast<sr::policy::two_tree>{.tree = {.segment_bytes = 1024}},
                 "reduce_broadcast{two_tree}", salt);
    check_policy(sr::policy::reduce_broadcast<sr::policy::k_ary>{.tree = {.k = 3, .segment_bytes = 1024},
                                                                 .broadcast_segment_bytes = 512},
                 "reduce_broadcast{k_ary{3}, broadcast 512}", salt);
    check_policy(sr::policy::reduce_broadcast<sr::policy::chain>{.tree = {.segment_bytes = 512}},
                 "reduce_broadcast{chain}", salt);
    check_policy(sr::policy::recursive_doubling{}, "recursive_doubling", salt);
    check_policy(sr::policy::recursive_doubling{.segment_bytes = 512}, "recursive_doubling{segment 512}", salt);
    check_policy(sr::policy::recursive_doubling{.wire = sr::wire::dense, .segment_bytes = 1024},
                 "recursive_doubling{dense wire, segment 1024}", salt);
    check_policy(sr::policy::recursive_doubling{.wire = sr::wire::index_value, .segment_bytes = 256},
                 "recursive_doubling{index_value wire, segment 256}", salt);
    check_policy(sr::policy::split_allgather{}, "split_allgather", salt);
    check_policy(sr::policy::split_allgather{.segment_bytes = 512}, "split_allgather{segment 512}", salt);
    check_policy(sr::policy::split_allgather{.wire = sr::wire::dense, .segment_bytes = 1024},
                 "split_allgather{dense wire, segment 1024}", salt);
    check_policy(sr::policy::split_allgather{.wire = sr::wire::index_value, .segment_bytes = 256},
                 "split_allgather{index_value wire, segment 256}", salt);
}

// Seven allreduce plans' calls and a reduce plan's in flight at once,
// completed in reverse order of their starts; then with the even ranks
// waiting in one order and the odd ranks in the other. (The first round's
// starts agree on their reduces' schedules, which finishes the calls before
// them; the later rounds' are all in flight together.)
BOOST_AUTO_TEST_CASE(several_calls_in_flight_complete_in_any_order)
{
    auto& comm = world();
    const int root = comm.size() - 1;
    auto a = sr::make_allreduce_plan(comm, dim);
    auto b = sr::make_allreduce_plan(comm, dim, sr::policy::reduce_broadcast<sr::policy::two_tree>{.tree = {.segment_bytes = 512}});
    auto c = sr::make_allreduce_plan(comm, dim, sr::policy::reduce_broadcast<sr::policy::binomial>{.tree = {.segment_bytes = 1024}});
    auto r = sr::make_plan(comm, root, dim, sr::policy::chain{.segment_bytes = 1024});
    auto d = sr::make_allreduce_plan(comm, dim, sr::policy::recursive_doubling{.segment_bytes = 512});
    auto e = sr::make_allreduce_plan(comm, dim, sr::policy::recursive_doubling{});
    auto f = sr::make_allreduce_plan(comm, dim, sr::policy::split_allgather{.segment_bytes = 512});
    auto g = sr::make_allreduce_plan(comm, dim, sr::policy::split_allgather{});
    for (int round = 0; round < 3; ++round) {
        const unsigned s = 100 + 10 * static_cast<unsigned>(round);
        const auto ia = input(s), ib = input(s + 1), ic = input(s + 2), ir = input(s + 3), id = input(s + 4, 1.0);
        const auto ie = sparse_of(input(s + 5)), ig = sparse_of(input(s + 7));
        const auto iff = input(s + 6, 1.0);
        std::vector<double> oa, ob, oc, orr, od, oe, of, og;
        sr::reduce_request q[8];
        q[0] = a.start(ia, oa, std::plus<>{});
        q[1] = r.start(ir, orr, std::plus<>{});
        q[2] = d.start(id, od, std::plus<>{});
        q[3] = f.start(iff, of, std::plus<>{});
        q[4] = b.start(ib, ob, std::plus<>{});
        q[5] = e.start(ie, oe, std::plus<>{});
        q[6] = g.start(ig, og, std::plus<>{});
        q[7] = c.start(ic, oc, std::plus<>{});
        const bool reversed = round == 0 || comm.rank() % 2 == 0;
        for (int j = 0; j < 8; ++j) {
            const int k = reversed ? 7 - j : j;
            q[k].test();
            q[k].wait();
        }
        const std::string ctx = "round " + std::to_string(round);
        BOOST_TEST(close(oa, sum(s)), ctx);
        BOOST_TEST(close(ob, sum(s + 1)), ctx);
        BOOST_TEST(close(oc, sum(s + 2)), ctx);
        BOOST_TEST(close(od, sum(s + 4, 1.0)), ctx);
        BOOST_TEST(close(oe, sum(s + 5)), ctx);
        BOOST_TEST(close(of, sum(s + 6, 1.0)), ctx);
        BOOST_TEST(close(og, sum(s + 7)), ctx);
        if (comm.rank() == root) BOOST_TEST(close(orr, sum(s + 3)), ctx);
    }
}

// A plan's next start completes the call it started before: the inputs of
// salts s1 and s2.
template <class Plan, class A, class B>
void check_next_start_completes(Plan& plan, const A& first, const B& second, unsigned s1, unsigned s2)
{
    std::vector<double> o1, o2;
    auto r1 = plan.start(first, o1, std::plus<>{});
    auto r2 = plan.start(second, o2, std::plus<>{}); // completes r1's call
    BOOST_TEST(r1.done());
    r2.wait();
    r1.wait();
    BOOST_TEST(close(o1, sum(s1)));
    BOOST_TEST(close(o2, sum(s2)));
}

// iallreduce with policy `a` of `first` (salt 201), completed by a blocking
// allreduce with policy `b` of `blocking` (201); one destroyed early, of
// `second` (202); a plan of `a`'s kind whose next start completes its call.
template <class A, class B, class First, class Blocking, class Second>
void check_one_shot_completion(const A& a, const B& b, const First& first, const Blocking& blocking,
                               const Second& second)
{
    auto& comm = world();
    std::vector<double> o1, o2, o3;
    auto q1 = sr::iallreduce(comm, first, o1, std::plus<>{}, a);
    sr::allreduce(comm, blocking, o2, std::plus<>{}, b); // completes q1's call
    BOOST_TEST(q1.done());
    q1.wait();
    {
        auto q = sr::iallreduce(comm, second, o3, std::plus<>{}, b);
    } // completed here
    BOOST_TEST(close(o1, sum(201)));
    BOOST_TEST(close(o2, sum(201)));
    BOOST_TEST(close(o3, sum(202)));
    auto plan = sr::make_allreduce_plan(comm, dim, a);
    check_next_start_completes(plan, blocking, second, 201, 202);
}

// iallreduce: its state on the communicator; completed by the next one-shot
// allreduce there; a request destroyed early completes; a plan's next call
// completes the one it started.
BOOST_AUTO_TEST_CASE(iallreduce_and_early_completion)
{
    auto& comm = world();
    const auto x = input(201), y = input(202);
    const auto sx = sparse_of(x);
    std::vector<double> o1, o2, o3, o4;
    auto q1 = sr::iallreduce(comm, sx, o1, std::plus<>{});
    while (!q1.test()) {
    }
    q1.wait();
    BOOST_TEST(close(o1, sum(201)));
    auto q2 = sr::iallreduce(comm, x, o2, std::plus<>{}, sr::policy::reduce_broadcast<sr::policy::two_tree>{});
    sr::allreduce(comm, y, o3, std::plus<>{}); // completes q2's call
    BOOST_TEST(q2.done());
    q2.wait();
    BOOST_TEST(close(o2, sum(201)));
    BOOST_TEST(close(o3, sum(202)));
    {
        auto q = sr::iallreduce(comm, y, o4, std::plus<>{});
    } // completed here
    BOOST_TEST(close(o4, sum(202)));
    auto plan = sr::make_allreduce_plan(comm, dim);
    check_next_start_completes(plan, x, y, 201, 202);
    // the same with recursive doubling and split_allgather, one-shot and on a plan
    check_one_shot_completion(sr::policy::recursive_doubling{.segment_bytes = 256}, sr::policy::recursive_doubling{},
                              sx, x, y);
    check_one_shot_completion(sr::policy::split_allgather{.segment_bytes = 256}, sr::policy::split_allgather{}, x,
                              sx, sparse_of(y));
}

// An operation that throws on one rank, on a fold that test() runs: wait()
// throws on every rank, as the blocking allreduce does, naming the rank;
// no rank hangs; the plan works on. Recursive doubling and split_allgather
// agree on the failure by messages of their own (doubling_agreement); a
// sparse input folds at the end of each exchange (split_allgather: of its
// updating), a dense one window by window.
template <class Policy>
void check_throwing_op(const Policy& policy, const std::string& name, bool sparse)
{
    auto& comm = world();
    const int P = comm.size();
    const int extra = P - static_cast<int>(std::bit_floor(static_cast<unsigned>(P)));
    const bool doubling = name.starts_with("recursive_doubling"), split = name.starts_with("split_allgather");
    for (int victim : {0, P - 1, P / 2}) {
        // A victim must fold. reduce_broadcast: the reduce's root, 0, does
        // (where other ranks do depends on the tree). Recursive doubling:
        // all but ranks 2i + 1 < 2 extra, which send theirs and take the
        // result. split_allgather: every rank, in its range.
        if (!split && (doubling ? victim < 2 * extra && victim % 2 : victim != 0)) continue;
        const auto dense_in = fault_input_of(comm.rank());
        const auto sparse_in = sparse_of(dense_in);
        const std::string ctx = name + (sparse ? ", sparse" : ", dense") + ", victim " + std::to_string(victim);
        auto plan = sr::make_allreduce_plan(comm, fault_dim, policy);
        std::vector<double> out;
        const auto run = [&](const auto& op, std::vector<double>& o) {
            if (sparse) return poll_then_wait(plan.start(sparse_in, o, op));
            return poll_then_wait(plan.start(dense_in, o, op));
        };
        // The plan's first call with the op's type tests its identity law
        // at start (where the victim would throw): done here with a rank
        // that is none, so that the faulty call fails in its folds.
        run(plus_throwing_on(-1), out);
        BOOST_TEST(out == fault_serial_sum(P), ctx << ": no victim");
        BOOST_TEST(inject_fault({.context = ctx,
                                 .who = everyone_throws(),
                                 .needles = {"rank " + std::to_string(victim)}},
                                [&] { run(plus_throwing_on(victim), out); },
                                [&] {
                                    std::vector<double> good;
                                    run(std::plus<>{}, good);
                                    return good == fault_serial_sum(P);
                                }));
    }
}

BOOST_AUTO_TEST_CASE(an_op_throwing_on_one_rank_fails_on_every_rank)
{
    if (world().size() < 2) return;
    check_throwing_op(sr::policy::reduce_broadcast<sr::policy::binomial>{.tree = {.segment_bytes = 256}},
                      "reduce_broadcast", false);
    for (bool sparse : {false, true}) {
        check_throwing_op(sr::policy::recursive_doubling{.segment_bytes = 256}, "recursive_doubling", sparse);
        check_throwing_op(sr::policy::recursive_doubling{.wire = sr::wire::dense}, "recursive_doubling{dense}", sparse);
        check_throwing_op(sr::policy::split_allgather{.segment_bytes = 256}, "split_allgather", sparse);
        check_throwing_op(sr::policy::split_allgather{.wire = sr::wire::dense}, "split_allgather{dense}", sparse);
    }
}

// A failure's text longer than the agreement carries (agreed_text_bytes):
// every rank throws, the failing rank its own text, the others its first
// 4096 bytes, naming the rank; nothing hangs and the plan works on.
BOOST_AUTO_TEST_CASE(a_long_failure_text_is_cut_not_lost)
{
    auto& comm = world();
    const int P = comm.size();
    if (P < 2) return;
    const int me = comm.rank();
    const auto in = fault_input_of(me);
    auto plan = sr::make_allreduce_plan(comm, fault_dim, sr::policy::recursive_doubling{.segment_bytes = 256});
    const auto long_throw = [me](bool armed) {
        return sr::make_op(
            [me, armed](double a, double b) -> double {
                if (armed && me == 0) throw std::runtime_error("rank 0: " + std::string(10000, 'x'));
                return a + b;
            },
            0.0, sr::commutative);
    };
    std::vector<double> out;
    plan.start(in, out, long_throw(false)).wait(); // the identity law, tested at start
    std::string text;
    try {
        poll_then_wait(plan.start(in, out, long_throw(true)));
    } catch (const sr::error& e) {
        text = e.what();
    }
    BOOST_TEST(text.find("rank 0") != std::string::npos, "rank " << me);
    if (me == 0) BOOST_TEST(text.size() > 10000u);
    else BOOST_TEST((text.size() >= 4096u && text.size() < 4096u + 64u), "rank " << me << ": " << text.size());
    std::vector<double> good;
    plan.start(in, good, std::plus<>{}).wait();
    BOOST_TEST(good == fault_serial_sum(P));
}

// A started split_allgather whose output has the wrong size on one rank:
// wait() throws on every rank, naming it; nothing hangs and the plan works on.
BOOST_AUTO_TEST_CASE(a_wrong_output_on_one_rank_fails_a_started_split_allgather_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    if (P < 2) return;
    const auto in = input(301, 1.0);
    for (int victim : {0, P - 1}) {
        auto plan = sr::make_allreduce_plan(comm, dim, sr::policy::split_allgather{});
        std::vector<double> out(comm.rank() == victim ? dim - 1 : dim);
        BOOST_TEST(inject_fault({.context = "split_allgather, victim " + std::to_string(victim),
                                 .who = everyone_throws(),
                                 .needles = {"rank " + std::to_string(victim)}},
                                [&] { poll_then_wait(plan.start(in, std::span<double>(out), std::plus<>{})); },
                                [&] {
                                    std::vector<double> good;
                                    poll_then_wait(plan.start(in, good, std::plus<>{}));
                                    return close(good, sum(301, 1.0));
                                }));
    }
}
