// The robustness rows, each on 1 to 5 and 8 ranks, through the public
// API and against a plain serial fold where a result is expected:
//   row 1   a bad Eigen input (index negative, out of range or out of order)
//           or a malformed rle_vector on one rank, whole-message and windowed:
//           the root and that rank throw, the others return
//   row 2   an output of the wrong size at the root: the root throws
//   row 3   an op that throws anything (`throw 42;` too) fails reduce,
//           allreduce and reduce_scatter like any op failure
//   row 4   segment_bytes of 1 GiB or more is refused on every rank
//   row 5   optimal_binary with a NaN or infinite cost model throws (no endless search)
//   row 7   reduce_scatter(_balanced) with an op throwing on one rank throws on every rank
//   row 8   histogram_sort with std::greater<> is balanced
//   row 10  an intercommunicator is refused by allreduce, reduce_scatter and the sort
//   row 11  error texts carry the "sparse_reduce: " prefix once
//   row 12  roots, policies or tunings differing between ranks fail on every rank under automatic
// and plans that work on after their communicator is freed; allocation
// failures inside the failure protocol: a root that cannot stage its output
// (reduce), an allreduce whose rank 0 cannot allocate, a rank that cannot
// set up a communicator on its first use.
// Every fault runs through inject_fault (fault_injection.hpp): which ranks
// throw, with what text, then a good call on the same communicator checked
// against the serial fold, so a call that left a message or a rank behind
// shows up too.

#define BOOST_TEST_MODULE robustness
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"
#include "../support/reference.hpp"
// Allocation failure on one rank (failing_allocations).
#include "../support/failing_new.hpp"

#include <sparse_reduce/collective/allreduce.hpp>
#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/collective/pattern_plan.hpp>
#include <sparse_reduce/collective/reduce_scatter.hpp>
#include <sparse_reduce/sort/reduce_scatter_balanced.hpp>
#include <sparse_reduce/sort/histogram_sort.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <exception>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = fault_dim;
const auto& input_of = fault_input_of;

using doubling_like = std::variant<sr::policy::recursive_doubling, sr::policy::split_allgather, sr::policy::grouped>;

std::string what_thrown(thrown h) { return h == thrown::int_value ? "throw 42" : "runtime_error"; }

// The needles of an op failure on `victim`: its rank, and a std::exception's text.
std::vector<std::string> op_failure_needles(int victim, thrown h)
{
    std::vector<std::string> n{"rank " + std::to_string(victim)};
    if (h == thrown::std_exception) n.push_back("user op failed");
    return n;
}

} // namespace

// ---- rows 3 and 11: allreduce's own algorithms with a failing op ----
BOOST_AUTO_TEST_CASE(allreduce_op_throwing_anything_fails_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int P = comm.size();
    const std::vector<doubling_like> policies{sr::policy::recursive_doubling{}, sr::policy::split_allgather{},
                                              sr::policy::grouped{.group_rows = 1, .group_cols = 1}};
    for (std::size_t p = 0; p < policies.size(); ++p)
        for (thrown h : {thrown::std_exception, thrown::int_value})
            for (int victim : {0, P - 1}) {
                const auto in = input_of(comm.rank());
                std::vector<double> out;
                // every rank of these algorithms folds something, so the victim's op runs
                BOOST_TEST(inject_fault(
                    {.context = "policy " + std::to_string(p) + ", " + what_thrown(h) + ", victim " + std::to_string(victim),
                     .who = everyone_throws(),
                     .needles = op_failure_needles(victim, h)},
                    [&] {
                        std::visit([&](const auto& pol) { sr::allreduce(comm, in, out, plus_throwing_on(victim, h), pol); },
                                   policies[p]);
                    },
                    good_allreduce));
            }
}

// ---- rows 3, 7 and 11: reduce_scatter and reduce_scatter_balanced ----
BOOST_AUTO_TEST_CASE(reduce_scatter_op_throwing_anything_fails_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int P = comm.size();
    for (bool balanced : {false, true})
        for (thrown h : {thrown::std_exception, thrown::int_value})
            for (int victim : {0, P - 1}) {
                const auto in = input_of(comm.rank());
                sr::index_value_vector<double, std::uint64_t> out;
                // every rank's range holds indices of several ranks, so every rank folds with the op
                BOOST_TEST(inject_fault(
                    {.context = std::string(balanced ? "balanced" : "block ranges") + ", " + what_thrown(h) +
                                ", victim " + std::to_string(victim),
                     .who = everyone_throws(),
                     .needles = op_failure_needles(victim, h)},
                    [&] {
                        if (balanced) sr::reduce_scatter_balanced(comm, in, out, plus_throwing_on(victim, h));
                        else sr::reduce_scatter(comm, in, out, plus_throwing_on(victim, h));
                    },
                    good_reduce_scatter));
            }
}

// A make_op operation whose exception has an empty what(), thrown on one
// rank where reduce_scatter first calls it (the identity law's sample of
// the input, before the exchange): every rank throws, and the text says
// what was thrown. A failure travels between ranks as its text: an empty
// one once passed for none, and that rank's input was left out of the sum.
BOOST_AUTO_TEST_CASE(reduce_scatter_op_throwing_an_empty_message_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size(), me = comm.rank();
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0}) {
        const auto op = sr::make_op(
            [me, victim](double a, double b) -> double {
                if (me == victim) throw std::runtime_error("");
                return a + b;
            },
            0.0, sr::commutative);
        const auto in = input_of(me);
        sr::index_value_vector<double, std::uint64_t> out;
        BOOST_TEST(inject_fault({.context = "empty what(), victim " + std::to_string(victim),
                                 .who = everyone_throws(),
                                 .needles = {"rank " + std::to_string(victim), "an exception with an empty message"}},
                                [&] { sr::reduce_scatter(comm, in, out, op); }, good_reduce_scatter));
    }
}

// ---- row 5: optimal_binary's cost model must be finite ----
BOOST_AUTO_TEST_CASE(optimal_binary_with_a_non_finite_model_throws_everywhere)
{
    auto& comm = world();
    const double bad[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity()};
    for (int field = 0; field < 7; ++field)
        for (double x : bad) {
            sr::cost_model m{};
            double* fields[] = {&m.alpha, &m.beta, &m.gamma, &m.gamma_dense, &m.value_bytes, &m.index_bytes, &m.header_bytes};
            *fields[field] = x;
            const auto in = input_of(comm.rank());
            std::vector<double> out;
            // the same communicator still reduces, and a finite model still works
            BOOST_TEST(inject_fault(
                {.context = "field " + std::to_string(field) + " = " + std::to_string(x),
                 .who = everyone_throws(),
                 .needles = {"cost model must be finite"}},
                [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::optimal_binary{.model = m}); },
                [] { return good_reduce(sr::policy::optimal_binary{}, 0); }));
        }
}

// ---- row 4 (policies are the same everywhere): segments of 1 GiB or more ----
BOOST_AUTO_TEST_CASE(segments_of_a_gibibyte_are_refused_everywhere)
{
    auto& comm = world();
    const std::size_t gib = std::size_t{1} << 30;
    const auto in = input_of(comm.rank());
    std::vector<double> out;
    for (std::size_t seg : {gib, 3 * gib}) {
        const fault_case c{.context = "segment_bytes " + std::to_string(seg), .who = everyone_throws(),
                           .needles = {"segment_bytes"}};
        BOOST_TEST(inject_fault(
            c, [&] { sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::recursive_doubling{.segment_bytes = seg}); },
            good_allreduce));
        BOOST_TEST(inject_fault(
            c, [&] { sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::split_allgather{.segment_bytes = seg}); },
            good_allreduce));
        BOOST_TEST(inject_fault(
            c, [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::binomial{.segment_bytes = seg}); },
            [] { return good_reduce(sr::policy::binomial{}, 0); }));
    }
}

// ---- row 8: histogram_sort under std::greater<> ----
BOOST_AUTO_TEST_CASE(histogram_sort_descending_is_balanced)
{
    auto& comm = world();
    const int P = comm.size();
    for (int kind = 0; kind < 3; ++kind) {
        std::mt19937_64 rng(7 + 31 * static_cast<unsigned>(comm.rank()) + 1000 * static_cast<unsigned>(kind));
        std::vector<std::int64_t> ints;
        std::vector<double> reals;
        const std::size_t n = 20000;
        for (std::size_t i = 0; i < n; ++i) {
            if (kind == 0) ints.push_back(static_cast<std::int64_t>(rng() % 1000000) - 500000);
            else if (kind == 1) ints.push_back(static_cast<std::int64_t>(rng() % 50)); // many ties
            else reals.push_back(std::ldexp(static_cast<double>(rng() >> 11), -53) * 2e6 - 1e6);
        }
        const auto check = [&](auto& data) {
            using K = typename std::remove_cvref_t<decltype(data)>::value_type;
            std::vector<K> all_in;
            boost::mpi::all_gather(comm, data.data(), static_cast<int>(data.size()), all_in);
            const auto t = sr::histogram_sort(comm, data, std::greater<>{});
            std::vector<int> sizes(static_cast<std::size_t>(P)), displs(static_cast<std::size_t>(P), 0);
            const int mine = static_cast<int>(data.size() * sizeof(K));
            MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_Comm(comm));
            for (int r = 1; r < P; ++r) displs[static_cast<std::size_t>(r)] = displs[static_cast<std::size_t>(r) - 1] + sizes[static_cast<std::size_t>(r) - 1];
            std::vector<K> flat((static_cast<std::size_t>(displs.back()) + static_cast<std::size_t>(sizes.back())) / sizeof(K));
            MPI_Allgatherv(data.data(), mine, MPI_BYTE, flat.data(), sizes.data(), displs.data(), MPI_BYTE, MPI_Comm(comm));
            for (auto& x : sizes) x /= static_cast<int>(sizeof(K));
            std::sort(all_in.begin(), all_in.end(), std::greater<>{});
            BOOST_TEST(flat == all_in, "kind " << kind << ": the output is not the input sorted descending");
            BOOST_TEST(t.converged, "kind " << kind);
            const double avg = static_cast<double>(flat.size()) / P;
            for (int r = 0; r < P; ++r)
                BOOST_TEST(std::abs(sizes[static_cast<std::size_t>(r)] - avg) <= 0.01 * avg + 1,
                           "kind " << kind << ": rank " << r << " holds " << sizes[static_cast<std::size_t>(r)] << " of avg " << avg);
        };
        if (kind < 2) check(ints);
        else check(reals);
    }
}

// ---- row 10: intercommunicators ----
BOOST_AUTO_TEST_CASE(an_intercommunicator_is_refused)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int me = comm.rank();
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    MPI_Comm_split(MPI_Comm(comm), me % 2, me, &half);
    MPI_Intercomm_create(half, 0, MPI_Comm(comm), me % 2 ? 0 : 1, 99, &inter);
    {
        const boost::mpi::communicator ic(inter, boost::mpi::comm_attach);
        const auto in = input_of(me);
        const auto expect_refused = [&](const char* what_call, auto&& call) {
            BOOST_TEST(inject_fault({.context = what_call, .who = everyone_throws(), .needles = {"intercommunicator"}},
                                    call, good_allreduce));
        };
        expect_refused("allreduce", [&] {
            std::vector<double> out;
            sr::allreduce(ic, in, out, std::plus<>{}, sr::policy::recursive_doubling{});
        });
        expect_refused("allreduce plan", [&] { sr::make_allreduce_plan(ic, dim, sr::policy::split_allgather{}); });
        expect_refused("reduce_scatter", [&] {
            sr::index_value_vector<double, std::uint64_t> out;
            sr::reduce_scatter(ic, in, out, std::plus<>{});
        });
        expect_refused("reduce_scatter_balanced", [&] {
            sr::index_value_vector<double, std::uint64_t> out;
            sr::reduce_scatter_balanced(ic, in, out, std::plus<>{});
        });
        expect_refused("histogram_sort", [&] {
            std::vector<int> keys{me, 3 * me};
            sr::histogram_sort(ic, keys);
        });
        expect_refused("find_splitters", [&] {
            const std::vector<int> keys{me, 3 * me};
            sr::find_splitters(ic, keys, 2, 0.1);
        });
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

// ---- row 11: one prefix from the tuning reader ----
BOOST_AUTO_TEST_CASE(a_bad_tuning_file_has_one_prefix)
{
    auto& comm = world();
    const std::string path = "robustness_bad_tuning." + std::to_string(comm.rank()) + ".txt";
    {
        std::ofstream f(path);
        f << "alpha = 1e-6\nbeta = oops\n";
    }
    const auto in = input_of(comm.rank());
    std::vector<double> out;
    const fault_case c{.context = "bad tuning file", .who = everyone_throws(), .needles = {"expected 'key = number'"}};
    BOOST_TEST(inject_fault(
        c, [&] { sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::grouped{.tuning_file = path}); },
        good_allreduce));
    BOOST_TEST(inject_fault(
        c, [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::automatic{.tuning_file = path}); },
        [] { return good_reduce(sr::policy::automatic{}, 0); }));
    std::remove(path.c_str());
}

// ---- reduce: rows 1, 2 and 3, every policy, then a good reduce ----

namespace {

using reduce_policy_v = std::variant<sr::policy::binomial, sr::policy::k_ary, sr::policy::binary, sr::policy::chain,
                                     sr::policy::optimal_binary, sr::policy::two_tree, sr::policy::automatic>;
const reduce_policy_v reduce_policies[] = {sr::policy::binomial{}, sr::policy::k_ary{.k = 3}, sr::policy::binary{},
                                           sr::policy::chain{},    sr::policy::optimal_binary{}, sr::policy::two_tree{},
                                           sr::policy::automatic{}};
// Every policy again with a wire format other than adaptive, and k_ary with
// the k it chooses (a small allreduce of counts first): the windowed path for
// every input, where the default wire sends sparse inputs whole.
const reduce_policy_v windowed_policies[] = {
    sr::policy::binomial{.wire = sr::wire::rle},         sr::policy::k_ary{.k = 0, .wire = sr::wire::index_value},
    sr::policy::binary{.wire = sr::wire::dense},         sr::policy::chain{.wire = sr::wire::index_value},
    sr::policy::optimal_binary{.wire = sr::wire::rle},   sr::policy::two_tree{.wire = sr::wire::dense},
    sr::policy::automatic{.wire = sr::wire::rle},        sr::policy::k_ary{.k = 0}};

bool good_reduce_after(const reduce_policy_v& pol, int root)
{
    return std::visit([&](const auto& p) { return good_reduce(p, root); }, pol);
}

std::string ctx(const char* what, const reduce_policy_v& pol, int root, int kind)
{
    return std::string(what) + ": policy " + std::to_string(pol.index()) + " root " + std::to_string(root) + " kind " +
           std::to_string(kind);
}

// An Eigen input made bad on one rank, four ways.
void corrupt(Eigen::SparseVector<double>& in, int kind)
{
    if (kind == 0) in.innerIndexPtr()[0] = -5;                                       // negative first index
    if (kind == 1) in.innerIndexPtr()[in.nonZeros() - 1] = 100000;                   // last index out of range
    if (kind == 2) in.innerIndexPtr()[0] = static_cast<int>(dim);                    // first index out of range
    if (kind == 3) std::swap(in.innerIndexPtr()[40], in.innerIndexPtr()[41]);        // out of order mid-vector
}

// An RLE input made malformed on one rank, four ways (through the kernels'
// prepare/commit, which take any words).
void corrupt(sr::rle_vector<double>& in, int kind)
{
    std::vector<double> w(in.words().begin(), in.words().end());
    if (kind == 0) w.pop_back();                                                      // truncated
    if (kind == 1) w.push_back(5.0);                                                  // a value past the dimension
    if (kind == 2) w.back() = sr::detail::rle::run_marker<double>(1000);              // a run past the dimension
    if (kind == 3) w.push_back(sr::detail::rle::escape_marker<double>());             // an escape with nothing after it
    const std::size_t nnz = in.nnz();
    std::copy(w.begin(), w.end(), in.prepare(dim, w.size()));
    in.commit(w.size(), nnz);
}

} // namespace

// Row 1 for one kind of vector V: its input made bad on the last rank in
// each of corrupt()'s four ways, under every policy with the default wire
// and with the others, two roots; the root and that rank throw (naming it,
// and saying `needle` when given), the others return, the next reduce works.
template <class V, class Make>
void bad_input_on_the_last_rank(const char* name, Make make_input, const std::string& needle = {})
{
    auto& comm = world();
    const int bad = comm.size() - 1;
    std::vector<std::string> needles = {"rank " + std::to_string(bad)};
    if (!needle.empty()) needles.push_back(needle);
    for (const std::span<const reduce_policy_v> set : {std::span<const reduce_policy_v>(reduce_policies),
                                                       std::span<const reduce_policy_v>(windowed_policies)})
        for (const auto& pol : set)
            for (int root : {0, comm.size() / 2})
                for (int kind = 0; kind < 4; ++kind) {
                    V in = make_input(comm.rank());
                    if (comm.rank() == bad) corrupt(in, kind);
                    V out;
                    const std::string what = std::string(name) + (set.data() == reduce_policies ? "" : ", other wires");
                    BOOST_TEST(inject_fault(
                        {.context = ctx(what.c_str(), pol, root, kind), .who = reduce_throwers(root, bad), .needles = needles},
                        [&] { std::visit([&](const auto& p) { sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol); },
                        [&] { return good_reduce_after(pol, root); }));
                }
}

// Row 1: a bad Eigen input on the last rank, whole-message (default wire)
// and windowed (other wires).
BOOST_AUTO_TEST_CASE(reduce_input_with_a_bad_index_fails_then_the_next_reduce_works)
{
    bad_input_on_the_last_rank<Eigen::SparseVector<double>>("eigen", fault_eigen_input_of);
}

// Row 1: a malformed rle_vector on the last rank (always windowed).
BOOST_AUTO_TEST_CASE(reduce_with_a_malformed_rle_input_fails_then_the_next_reduce_works)
{
    bad_input_on_the_last_rank<sr::rle_vector<double>>(
        "rle", [](int r) { return sr::rle_vector<double>::encode(input_of(r)); }, "malformed RLE buffer");
}

// Row 2: an output of the wrong size at the root; only the root throws.
BOOST_AUTO_TEST_CASE(reduce_output_of_the_wrong_size_at_the_root_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    for (const auto& pol : reduce_policies)
        for (int root : {0, comm.size() - 1}) {
            const auto in = input_of(comm.rank());
            std::vector<double> small(dim - 1, 0.0);
            BOOST_TEST(inject_fault(
                {.context = ctx("output size", pol, root, 0), .who = reduce_throwers(root, root), .needles = {"output span"}},
                [&] {
                    std::visit([&](const auto& p) {
                        sr::reduce(comm, std::span<const double>(in), std::span<double>(small), std::plus<>{}, root, p);
                    }, pol);
                },
                [&] { return good_reduce_after(pol, root); }));
        }
}

// Row 2, Eigen: a fixed-size Eigen output of another size, and one of
// bounded size too small, at the root; the root throws (not Eigen's assertion,
// nor a write past the vector), and the next reduce works.
BOOST_AUTO_TEST_CASE(reduce_into_a_fixed_size_eigen_output_of_another_size_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    for (const auto& pol : reduce_policies)
        for (int root : {0, comm.size() - 1})
            for (int bounded : {0, 1}) {
                const auto in = fault_eigen_input_of(comm.rank());
                Eigen::Matrix<double, 4, 1> fixed_size;
                Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 4, 1> at_most_4;
                BOOST_TEST(inject_fault(
                    {.context = ctx(bounded ? "bounded output" : "fixed-size output", pol, root, 0),
                     .who = reduce_throwers(root, root),
                     .needles = {bounded ? "holds at most 4 elements" : "has a fixed size of 4 elements"}},
                    [&] {
                        std::visit([&](const auto& p) {
                            if (bounded) sr::reduce(comm, in, at_most_4, std::plus<>{}, root, p);
                            else sr::reduce(comm, in, fixed_size, std::plus<>{}, root, p);
                        }, pol);
                    },
                    [&] { return good_reduce_after(pol, root); }));
            }
}

// Row 3: an op throwing anything. On the root (which folds whenever P > 1) it
// fails the call there; on rank 1 it fails only if rank 1 folds (has
// children) or tests make_op's identity law (the first call of the op on a
// one-shot memo), so there rank 0 and 1 may throw, and the others return. On
// one rank nothing folds: the op runs only in that identity test.
BOOST_AUTO_TEST_CASE(reduce_op_throwing_anything_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    const int P = comm.size();
    for (const auto& pol : reduce_policies)
        for (thrown h : {thrown::std_exception, thrown::int_value})
            for (int victim : {0, 1}) {
                if (victim >= P) continue;
                const auto in = fault_eigen_input_of(comm.rank());
                Eigen::SparseVector<double> out;
                const who_throws who = victim == 0 ? (P > 1 ? reduce_throwers(0, 0) : who_throws([](int) { return expect::either; }))
                                                   : who_throws([](int r) { return r <= 1 ? expect::either : expect::returns; });
                BOOST_TEST(inject_fault(
                    {.context = ctx(what_thrown(h).c_str(), pol, 0, victim), .who = who,
                     .needles = op_failure_needles(victim, h)},
                    [&] { std::visit([&](const auto& p) { sr::reduce(comm, in, out, plus_throwing_on(victim, h), 0, p); }, pol); },
                    [&] { return good_reduce_after(pol, 0); }));
            }
}

// Row 12: a root or a policy that differs between ranks is erroneous (as in
// MPI); where automatic exchanges its statistics anyway, it is caught there:
// every rank throws, and the next reduce works.
BOOST_AUTO_TEST_CASE(reduce_with_roots_policies_or_tunings_differing_between_ranks_fails_under_automatic)
{
    auto& comm = world();
    const int P = comm.size(), me = comm.rank();
    if (P < 2) return;
    const auto in = input_of(me); // dense: the windowed path, whose one-shot calls always exchange statistics
    std::vector<double> out;
    BOOST_TEST(inject_fault({.context = "roots differ", .who = everyone_throws(), .needles = {"different roots"}},
                            [&] { sr::reduce(comm, in, out, std::plus<>{}, me == P - 1 ? 1 : 0, sr::policy::automatic{}); },
                            [] { return good_reduce(sr::policy::automatic{}, 0); }));
    const sr::policy::automatic odd{.segment_bytes = me == P - 1 ? std::size_t{4096} : std::size_t{0}};
    BOOST_TEST(inject_fault({.context = "policies differ", .who = everyone_throws(), .needles = {"different policies"}},
                            [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, odd); },
                            [] { return good_reduce(sr::policy::automatic{}, 0); }));
    const sr::policy::k_ary chosen_k{.k = 0, .wire = me == 0 ? sr::wire::rle : sr::wire::adaptive};
    BOOST_TEST(inject_fault({.context = "k_ary{k = 0} policies differ", .who = everyone_throws(),
                             .needles = {"different policies"}},
                            [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, chosen_k); },
                            [] { return good_reduce(sr::policy::k_ary{}, 0); }));
    // automatic chooses from its tuning: ranks that read different ones (a
    // per-node file that differs, or policy.tuned) could choose different
    // paths, or whether to measure, and wait for each other. The tuning's
    // model and thresholds join the plan's agreement and a one-shot call's,
    // so every rank throws; its source's name does not (per-node copies of
    // one file agree).
    sr::tuning mine; // the last rank's: no small-vector rule, another machine
    if (me == P - 1) {
        mine.limits.small_bytes = 0;
        mine.limits.sparse_bytes = 0;
        mine.machine.alpha *= 10;
    }
    mine.source = "rank " + std::to_string(me) + "'s tuning";
    const sr::policy::automatic tuned{.tuned = mine};
    BOOST_TEST(inject_fault({.context = "one-shot, tunings differ", .who = everyone_throws(),
                             .needles = {"different tunings"}},
                            [&] { sr::reduce(comm, in, out, std::plus<>{}, 0, tuned); },
                            [] { return good_reduce(sr::policy::automatic{}, 0); }));
    BOOST_TEST(inject_fault({.context = "a plan, tunings differ", .who = everyone_throws(),
                             .needles = {"different tunings"}},
                            [&] {
                                auto plan = sr::make_plan(comm, 0, in.size(), tuned);
                                plan.reduce(in, out, std::plus<>{});
                            },
                            [] { return good_reduce(sr::policy::automatic{}, 0); }));
    sr::tuning same; // only the source differs: a per-node copy of one file
    same.source = "node " + std::to_string(me) + "'s copy";
    sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::automatic{.tuned = same});
    BOOST_TEST((me != 0 || out == fault_serial_sum(P)), "tunings that differ only in their source name: a wrong result");
}


// A plan keeps its share of the library's duplicate of the communicator: it
// still reduces, and an allreduce plan still allreduces, after the user frees
// the communicator it was made on, whether with MPI_Comm_free (a handle
// attached to Boost.MPI) or by dropping Boost.MPI's last copy of a split;
// twice each, against the serial fold on the root, on every rank for allreduce.
BOOST_AUTO_TEST_CASE(plans_work_after_their_communicator_is_freed)
{
    auto& comm = world();
    const int root = comm.size() - 1;
    const auto in = fault_eigen_input_of(comm.rank());
    const auto dense_in = fault_input_of(comm.rank());
    const auto want = fault_serial_sum(comm.size());
    const auto is_sum = [&](const Eigen::SparseVector<double>& v) {
        bool ok = v.size() == static_cast<Eigen::Index>(fault_dim);
        for (std::size_t i = 0; i < fault_dim && ok; ++i) ok = v.coeff(static_cast<Eigen::Index>(i)) == want[i];
        return ok;
    };
    for (const bool split : {false, true}) {
        MPI_Comm raw = MPI_COMM_NULL;
        boost::mpi::communicator c;
        if (split) {
            c = comm.split(0); // Boost.MPI frees it with its last copy
        } else {
            MPI_Comm_dup(MPI_Comm(comm), &raw);
            c = boost::mpi::communicator(raw, boost::mpi::comm_attach);
        }
        auto binomial = sr::make_plan(c, root, fault_dim, sr::policy::binomial{});
        auto automatic = sr::make_plan(c, root, fault_dim);
        auto two_tree = sr::make_plan(c, root, fault_dim, sr::policy::two_tree{.wire = sr::wire::dense});
        auto all_automatic = sr::make_allreduce_plan(c, fault_dim);
        auto all_doubling = sr::make_allreduce_plan(c, fault_dim, sr::policy::recursive_doubling{});
        if (split) c = boost::mpi::communicator(); // the split's last copy
        else MPI_Comm_free(&raw);
        const std::string how = split ? "a split, dropped" : "a duplicate, MPI_Comm_free'd";
        for (int call = 0; call < 2; ++call) {
            Eigen::SparseVector<double> a, b, d;
            binomial.reduce(in, a, std::plus<>{});
            automatic.reduce(in, b, std::plus<>{});
            two_tree.reduce(in, d, std::plus<>{});
            BOOST_TEST(all_ok(comm.rank() != root || (is_sum(a) && is_sum(b) && is_sum(d))), how << ", reduce plans");
            std::vector<double> x, y;
            all_automatic.allreduce(dense_in, x, std::plus<>{});
            all_doubling.allreduce(in, y, std::plus<>{});
            BOOST_TEST(all_ok(x == want && y == want), how << ", allreduce plans");
        }
    }
    BOOST_TEST(good_reduce(sr::policy::automatic{}, 0)); // and the world's own state is untouched
}

// Two entries per rank in 2^32 elements (8-byte indices): a sparse call
// whose window tables (a windowed reduce's staging of its output) are the
// only allocations of 1 MiB or more.
using wide_vector = sr::index_value_vector<double, std::uint64_t>;
constexpr std::size_t wide_dim = std::size_t{1} << 32;
constexpr std::size_t table_bytes = std::size_t{1} << 20;
wide_vector two_entries(int rank)
{
    const auto r = static_cast<std::uint64_t>(rank);
    return wide_vector(wide_dim, std::vector<std::uint64_t>{r, wide_dim - 1 - r}, std::vector<double>{1.0, 2.0});
}

// A root that cannot allocate the staging of its output (a word per
// window; every request of 1 MiB or more fails there) fails the call inside
// the protocol: only the root throws, naming what it could not allocate,
// and its children's messages are drained, so the next reduces on the
// communicator are right. Before, it threw std::bad_alloc alone and the
// next call read the stale message. Two trees stage their windows (one
// writes into the output); the index/value wire takes the windowed path.
BOOST_AUTO_TEST_CASE(a_root_that_cannot_stage_its_output_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    const int P = comm.size();
    if (P < 2) return; // one rank: no tree, nothing staged
    const sr::policy::two_tree windowed{.wire = sr::wire::index_value};
    for (int root : {0, P - 1}) {
        const auto in = two_entries(comm.rank());
        wide_vector out;
        BOOST_TEST(inject_fault({.context = "root " + std::to_string(root) + " cannot stage",
                                 .who = reduce_throwers(root, root),
                                 .needles = {"rank " + std::to_string(root), "cannot stage the root's output"}},
                                [&] {
                                    failing_allocations guard(comm.rank() == root ? table_bytes : 0);
                                    sr::reduce(comm, in, out, std::plus<>{}, root, windowed);
                                },
                                [&] { return good_reduce(windowed, root) && good_reduce(windowed, root); }));
    }
}

// An allreduce where only rank 0 cannot allocate (every request of 1 MiB or
// more fails there: the reduce half's staging of its output, which two
// trees under the index/value wire keep, a word per window; the other
// trees and the broadcast of a sparse result keep no table of windows)
// throws on every rank and leaves nothing queued: the same allreduce then
// works. Before, rank 0 threw
// std::bad_alloc from the broadcast's constructor after telling the others
// the reduce had succeeded, and they waited for its blocks forever.
BOOST_AUTO_TEST_CASE(an_allreduce_whose_root_cannot_allocate_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    if (P < 2) return; // one rank: no broadcast
    using any_broadcast = std::variant<sr::policy::reduce_broadcast<sr::policy::two_tree>>;
    for (const auto& [name, pol] : {std::pair<const char*, any_broadcast>{
             "two_tree", sr::policy::reduce_broadcast<sr::policy::two_tree>{{.wire = sr::wire::index_value}}}}) {
        const auto in = two_entries(comm.rank());
        wide_vector out;
        const auto same_allreduce_works = [&, &pol = pol] {
            const auto dense = fault_eigen_input_of(comm.rank());
            Eigen::SparseVector<double> got;
            std::visit([&](const auto& p) { sr::allreduce(comm, dense, got, std::plus<>{}, p); }, pol);
            const auto want = fault_serial_sum(P);
            bool ok = got.size() == static_cast<Eigen::Index>(fault_dim);
            for (std::size_t i = 0; i < fault_dim; ++i) ok = ok && got.coeff(static_cast<Eigen::Index>(i)) == want[i];
            return ok;
        };
        BOOST_TEST(inject_fault({.context = std::string("reduce_broadcast, ") + name + ", rank 0 cannot allocate",
                                 .needles = {"rank 0"}, .agreed = true},
                                [&, &pol = pol] {
                                    failing_allocations guard(comm.rank() == 0 ? table_bytes : 0);
                                    std::visit([&](const auto& p) { sr::allreduce(comm, in, out, std::plus<>{}, p); }, pol);
                                },
                                same_allreduce_works));
    }
}

// How the ranks of a swept call may end: as reduce's contract says (the
// root and the rank that found the failure throw; step checks the result of
// a call that returned), all alike (every rank throws or none does: an
// allocation for a report's text fails nothing), or all throwing whenever
// the allocation came.
enum class sweep_rule { by_contract, all_or_none, all_throw };

// Runs step(fresh) on a new duplicate of MPI_COMM_WORLD once per allocation
// it makes on `victim`, the n-th failing there on the n-th run, until a run
// makes no n-th allocation. Each run may throw nothing but
// sparse_reduce::error (with every needle), and its ranks end as `rule`
// says. Then good(fresh) must hold. Above four ranks (oversubscribed here,
// and slow) a sweep fails every other allocation, the odd ones at an odd
// rank count and the even ones at an even count: np 5 and np 8 together
// fail each one.
template <class Step, class Good>
void sweep_allocations(const std::string& context, int victim, const std::vector<std::string>& needles,
                       sweep_rule rule, Step&& step, Good&& good)
{
    auto& comm = world();
    const std::size_t stride = comm.size() > 4 ? 2 : 1;
    bool fired = true;
    std::size_t n = stride == 2 && comm.size() % 2 == 0 ? 2 : 1, runs = 0;
    for (; fired; n += stride, ++runs) {
        boost::mpi::communicator fresh(comm, boost::mpi::comm_duplicate);
        bool threw = false;
        fired = false;
        const bool ok = inject_fault(
            {.context = context + ": allocation " + std::to_string(n) + " fails on rank " + std::to_string(victim),
             .who = [](int) { return expect::either; },
             .needles = needles,
             .agreed = rule != sweep_rule::by_contract},
            [&] {
                failing_allocation guard(comm.rank() == victim ? n : 0);
                try {
                    step(fresh);
                } catch (...) {
                    threw = true;
                    fired = guard.fired();
                    throw;
                }
                fired = guard.fired();
            },
            [&] { return good(fresh); });
        BOOST_TEST(ok);
        boost::mpi::broadcast(comm, fired, victim);
        BOOST_TEST((rule != sweep_rule::all_throw || !fired || all_ok(threw)),
                   context << ": allocation " << n << " failed on rank " << victim << ", yet a rank returned");
        if (n > 256) BOOST_FAIL(context << " makes more than 256 allocations"); // no endless loop
    }
    BOOST_TEST_MESSAGE(context << ": " << runs << " runs on rank " << victim << ", each failing one allocation, every "
                               << (stride == 1 ? "one" : "other one"));
}

template <class Step, class Good>
void fails_everywhere_at_every_allocation(const std::string& context, int victim,
                                          const std::vector<std::string>& needles, Step&& step, Good&& good)
{
    sweep_allocations(context, victim, needles, sweep_rule::all_throw, step, good);
}

// The first call on a communicator makes the library's state for it on
// every rank (its duplicate, the memory one-shot calls work in), and
// make_plan makes the plan's memory and policy. An allocation that fails
// there on one rank fails that call on every rank and leaves nothing
// behind: the next call on the communicator works. Before, that rank threw
// std::bad_alloc alone and the others waited for it in MPI_Comm_dup, the
// plan's agreement or for its messages. Every allocation fails once in
// turn, on the first and the last rank; then each collective's first
// allocation (the communicator's setup).
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_set_up_a_communicator_or_plan_fails_everywhere_then_the_next_call_works)
{
    auto& comm = world();
    const int P = comm.size();
    const auto fails_on = [](int victim) { return "failed on rank " + std::to_string(victim); };
    const auto good = [](const boost::mpi::communicator& c) { return good_reduce(sr::policy::automatic{}, 0, c); };
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0}) {
        fails_everywhere_at_every_allocation(
            "the communicator's setup", victim, {fails_on(victim)},
            [](const boost::mpi::communicator& c) { sr::detail::state_of(MPI_Comm(c)); }, good);
        // a tuning that cannot be read fails as such, on every rank: no needle
        fails_everywhere_at_every_allocation(
            "make_plan, automatic", victim, {},
            [](const boost::mpi::communicator& c) { (void)sr::make_plan(c, 0, fault_dim, sr::policy::automatic{}); },
            good);
        fails_everywhere_at_every_allocation(
            "make_plan, binomial", victim, {fails_on(victim)},
            [P](const boost::mpi::communicator& c) { (void)sr::make_plan(c, P - 1, fault_dim, sr::policy::binomial{}); },
            good);
    }
    using any_collective = std::function<void(const boost::mpi::communicator&)>;
    const auto in = fault_input_of(comm.rank());
    const auto eigen_in = fault_eigen_input_of(comm.rank());
    std::vector<double> dense_out;
    sr::index_value_vector<double, std::uint64_t> sparse_out;
    const std::pair<const char*, any_collective> collectives[] = {
        {"reduce", [&](const auto& c) { sr::reduce(c, eigen_in, sparse_out, std::plus<>{}, 0); }},
        {"allreduce", [&](const auto& c) { sr::allreduce(c, in, dense_out, std::plus<>{}); }},
        {"reduce_scatter", [&](const auto& c) { sr::reduce_scatter(c, in, sparse_out, std::plus<>{}); }}};
    for (const auto& [name, call] : collectives)
        for (int victim : {0, P - 1}) {
            boost::mpi::communicator fresh(comm, boost::mpi::comm_duplicate);
            BOOST_TEST(inject_fault({.context = std::string(name) + ": the first allocation fails on rank " + std::to_string(victim),
                                     .needles = {fails_on(victim)},
                                     .agreed = true},
                                    [&, &call = call] {
                                        failing_allocation guard(comm.rank() == victim ? 1 : 0);
                                        call(fresh);
                                    },
                                    [&] {
                                        return good_reduce(sr::policy::automatic{}, P - 1, fresh) && good_allreduce_on(fresh) &&
                                               good_reduce_scatter_on(fresh);
                                    }));
        }
}

// Runs call() twice on every rank (a failed reduce throws on some ranks
// only, and the next call must be made on all of them), then rethrows the
// first call's exception, if any.
template <class Call>
void both_calls(Call&& call)
{
    std::exception_ptr first;
    for (int k = 0; k < 2; ++k) {
        try {
            call();
        } catch (...) {
            if (first) throw;
            first = std::current_exception();
        }
    }
    if (first) std::rethrow_exception(first);
}

// Two allreduces into `out` (both_calls), each checked against `want`; a
// call that returns a wrong result throws std::runtime_error.
template <class Call>
void twice_allreduce_checked(const std::vector<double>& out, const std::vector<double>& want, Call&& call)
{
    both_calls([&] {
        call();
        if (out != want) throw std::runtime_error("the call returned a wrong result");
    });
}

// Two reduces into a fresh Eigen vector (both_calls), each checked against
// `want` on the root (0); `got`, made by the caller, keeps the check from
// allocating.
template <class Reduce>
void twice_checked(const boost::mpi::communicator& c, const std::vector<double>& want, std::vector<double>& got,
                   Reduce&& reduce)
{
    both_calls([&] {
        Eigen::SparseVector<double> out;
        reduce(c, out);
        if (c.rank() != 0) return;
        std::fill(got.begin(), got.end(), 0.0);
        for (Eigen::SparseVector<double>::InnerIterator it(out); it; ++it)
            got[static_cast<std::size_t>(it.index())] = it.value();
        if (got != want) throw std::runtime_error("the call returned a wrong result");
    });
}

// Every allocation of a reduce fails once in turn on one rank: the
// communicator's state, the one-shot memo and its copy of the policy, the
// plan, the schedule, the nodes' buffers and bookkeeping, the messages, the
// root's output, the report's texts; then the same call again on the cached
// schedule, which allocates nothing new. Each ends as the contract says,
// with a right result where no rank threw, and the next call works. The
// ranks: the last, a leaf of every tree rooted at 0, which sends whole
// messages or windows; the root, on the windowed path, sparse and dense
// (the whole-message path's receivers: the next case); and from four ranks
// rank 2, inner in the binomial tree (it receives from 3 and forwards to
// 0). Before, the memo, the policy's copy, the
// schedule and the nodes' setup threw std::bad_alloc on that rank alone,
// and the others waited for it.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_anywhere_in_a_reduce_fails_by_the_contract_then_the_next_call_works)
{
    auto& comm = world();
    const int P = comm.size();
    const auto in = fault_eigen_input_of(comm.rank());
    const auto want = fault_serial_sum(P);
    std::vector<double> got(fault_dim);
    const auto twice = [&](const boost::mpi::communicator& c, auto&& reduce) { twice_checked(c, want, got, reduce); };
    const auto good = [](const boost::mpi::communicator& c) { return good_reduce(sr::policy::automatic{}, 0, c); };
    const sr::policy::binomial windows{.wire = sr::wire::index_value}; // no whole messages
    const auto dense_in = fault_input_of(comm.rank());
    std::vector<double> dense_out;
    std::vector<int> victims{0};
    if (P > 1) victims.insert(victims.begin(), P - 1);
    if (P >= 4) victims.push_back(2);
    for (int victim : victims) {
        const bool leaf = victim == P - 1;
        if (leaf) {
            sweep_allocations("a one-shot reduce, automatic", victim, {}, sweep_rule::by_contract,
                              [&](const boost::mpi::communicator& c) {
                                  twice(c, [&](const auto& cc, auto& out) {
                                      sr::reduce(cc, in, out, std::plus<>{}, 0);
                                  });
                              },
                              good);
            sweep_allocations("make_plan and the plan's reduce, automatic", victim, {}, sweep_rule::by_contract,
                              [&](const boost::mpi::communicator& c) {
                                  auto plan = sr::make_plan(c, 0, fault_dim);
                                  twice(c, [&](const auto&, auto& out) { plan.reduce(in, out, std::plus<>{}); });
                              },
                              good);
        }
        sweep_allocations("a one-shot reduce of dense vectors, automatic", victim, {}, sweep_rule::by_contract,
                          [&](const boost::mpi::communicator& c) {
                              both_calls([&] {
                                  sr::reduce(c, dense_in, dense_out, std::plus<>{}, 0);
                                  if (c.rank() == 0 && dense_out != want)
                                      throw std::runtime_error("the call returned a wrong result");
                              });
                          },
                          good);
        sweep_allocations("a one-shot reduce, binomial, index/value wire", victim, {}, sweep_rule::by_contract,
                          [&](const boost::mpi::communicator& c) {
                              twice(c, [&](const auto& cc, auto& out) {
                                  sr::reduce(cc, in, out, std::plus<>{}, 0, windows);
                              });
                          },
                          good);
        sweep_allocations("make_plan and the plan's reduce, binomial, index/value wire", victim, {}, sweep_rule::by_contract,
                          [&](const boost::mpi::communicator& c) {
                              auto plan = sr::make_plan(c, 0, fault_dim, windows);
                              twice(c, [&](const auto&, auto& out) { plan.reduce(in, out, std::plus<>{}); });
                          },
                          good);
    }
}

// A rank that cannot allocate the room for a whole message it must receive
// (the root, an inner rank) receives it into its buffers' drain, piece by
// piece, drops it and fails by the contract; nothing stays queued for the
// next call. Every allocation of two calls fails once in turn, with small
// messages and with messages of several pieces: index/value ones and, at 3
// ranks or more, the dense form. Before, the rank threw std::bad_alloc
// alone, the message stayed queued and its sender waited.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_a_whole_message_drops_it_and_fails_by_the_contract)
{
    auto& comm = world();
    const int P = comm.size();
    // rank r: every third index from r % 3, just over a piece (1 MiB) a rank
    constexpr std::size_t big_dim = std::size_t{1} << 18;
    const auto big_value = [](int r, std::size_t i) { return r + 1 + static_cast<double>(i % 128) / 128; };
    Eigen::SparseVector<double> big(static_cast<Eigen::Index>(big_dim));
    for (std::size_t i = static_cast<std::size_t>(comm.rank() % 3); i < big_dim; i += 3)
        big.insertBack(static_cast<Eigen::Index>(i)) = big_value(comm.rank(), i);
    std::vector<double> big_want(big_dim, 0.0);
    for (int r = 0; r < P; ++r)
        for (std::size_t i = static_cast<std::size_t>(r % 3); i < big_dim; i += 3) big_want[i] += big_value(r, i);
    const auto small = fault_eigen_input_of(comm.rank());
    const auto small_want = fault_serial_sum(P);
    std::vector<double> got(big_dim);
    const sr::policy::binomial whole{}; // the adaptive wire, whole messages at once
    const auto good = [&](const boost::mpi::communicator& c) { return good_reduce(whole, 0, c); };
    std::vector<int> victims{0};
    if (P > 2) victims.push_back(P / 2); // an inner rank of the binomial tree
    for (int victim : victims)
        for (const auto& [name, in, want] :
             {std::tuple<const char*, const Eigen::SparseVector<double>*, const std::vector<double>*>{
                  "small messages", &small, &small_want},
              {"messages of several pieces", &big, &big_want}})
            sweep_allocations(std::string("a one-shot reduce in whole messages, ") + name, victim, {}, sweep_rule::by_contract,
                              [&, &in = in, &want = want](const boost::mpi::communicator& c) {
                                  got.assign(want->size(), 0.0);
                                  twice_checked(c, *want, got, [&](const auto& cc, auto& out) {
                                      sr::reduce(cc, *in, out, std::plus<>{}, 0, whole);
                                  });
                              },
                              good);
}

// Every allocation of making an allreduce plan (as allreduce does for
// every one-shot call) fails once in turn on one rank, the first or the
// last, for every algorithm: every rank throws, and the next call on the
// communicator works. Before, the plan's buffers and its reduce half
// threw std::bad_alloc on that rank alone, and the others waited for it
// (automatic: in its reduce half's agreement).
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_making_an_allreduce_plan_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    using any_allreduce = std::variant<sr::policy::automatic, sr::policy::reduce_broadcast<sr::policy::binomial>,
                                       sr::policy::reduce_broadcast<sr::policy::two_tree>,
                                       sr::policy::recursive_doubling, sr::policy::split_allgather,
                                       sr::policy::grouped>;
    const std::pair<const char*, any_allreduce> policies[] = {
        {"automatic", sr::policy::automatic{}},
        {"reduce_broadcast, binomial", sr::policy::reduce_broadcast<sr::policy::binomial>{}},
        {"reduce_broadcast, two_tree", sr::policy::reduce_broadcast<sr::policy::two_tree>{}},
        {"recursive_doubling", sr::policy::recursive_doubling{}},
        {"split_allgather", sr::policy::split_allgather{}},
        {"grouped", sr::policy::grouped{}}};
    const auto good = [](const boost::mpi::communicator& c) { return good_allreduce_on(c); };
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0})
        for (const auto& [name, pol] : policies)
            fails_everywhere_at_every_allocation(
                std::string("make_allreduce_plan, ") + name, victim, {"failed on rank " + std::to_string(victim)},
                [&pol = pol](const boost::mpi::communicator& c) {
                    std::visit([&](const auto& p) { (void)sr::make_allreduce_plan(c, fault_dim, p); }, pol);
                },
                good);
}


// Every allocation of an allreduce by recursive doubling fails once in turn
// on one rank, the first or the last, as a one-shot call and on a plan, with
// automatic (which runs it on these vectors) and named: its buffers, the
// messages it encodes and receives, its output, its report. Every rank
// throws or none does (a report's text that cannot be made is left empty),
// a call that returns is right, and the next call works. A rank that
// cannot grow its receive buffer takes the message into the plan's drain
// and fails; a rank that cannot encode sends its status alone. Before, the
// rank threw std::bad_alloc alone and its partner waited for its messages.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_a_recursive_doubling_allreduce_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    using any_allreduce = std::variant<sr::policy::automatic, sr::policy::recursive_doubling>;
    const std::pair<const char*, any_allreduce> policies[] = {{"automatic", sr::policy::automatic{}},
                                                             {"recursive_doubling", sr::policy::recursive_doubling{}}};
    const auto in = fault_eigen_input_of(comm.rank());
    const auto want = fault_serial_sum(P);
    std::vector<double> out(fault_dim); // the right size: the check allocates nothing
    const auto checked = [&](auto&& call) { twice_allreduce_checked(out, want, call); };
    const auto good = [](const boost::mpi::communicator& c) { return good_allreduce_on(c); };
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0})
        for (const auto& [name, pol] : policies) {
            sweep_allocations(std::string("a one-shot allreduce, ") + name, victim, {}, sweep_rule::all_or_none,
                              [&, &pol = pol](const boost::mpi::communicator& c) {
                                  checked([&] {
                                      std::visit([&](const auto& p) { sr::allreduce(c, in, out, std::plus<>{}, p); }, pol);
                                  });
                              },
                              good);
            sweep_allocations(std::string("make_allreduce_plan and the plan's allreduce, ") + name, victim, {},
                              sweep_rule::all_or_none,
                              [&, &pol = pol](const boost::mpi::communicator& c) {
                                  std::visit(
                                      [&](const auto& p) {
                                          auto plan = sr::make_allreduce_plan(c, fault_dim, p);
                                          checked([&] { plan.allreduce(in, out, std::plus<>{}); });
                                      },
                                      pol);
                              },
                              good);
        }
}

// Every allocation of a split_allgather or grouped allreduce fails once in
// turn on one rank, the first or the last (from four ranks, each case on
// one of them), as a one-shot call and on a
// plan: the groups (chosen by the model at the first call, or fixed with
// the plan), the counts, the accumulator, the messages it encodes and
// receives (raw segments too, under the dense wire), the pieces it gathers,
// its report (on a plan up to four ranks). Every rank throws or none does, a call that returns is right,
// and the next call works. The plan makes the exchanges' bookkeeping and a
// drain for their largest message; a rank that cannot grow its receive
// buffer takes a message into the drain and fails. Segments of 512 bytes:
// several messages per member. Before, the rank threw std::bad_alloc alone
// and the others waited for it in the exchange of counts.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_a_split_allgather_or_grouped_allreduce_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    using any_allreduce = std::variant<sr::policy::split_allgather, sr::policy::grouped>;
    struct sweep_case {
        std::string name;
        any_allreduce policy;
        bool dense_input, on_a_plan;
    };
    std::vector<sweep_case> cases = {
        {"a one-shot allreduce, split_allgather", sr::policy::split_allgather{.segment_bytes = 512}, false, false},
        {"make_allreduce_plan and the plan's allreduce, split_allgather, dense wire",
         sr::policy::split_allgather{.wire = sr::wire::dense, .segment_bytes = 512}, true, true},
        {"a one-shot allreduce, grouped", sr::policy::grouped{.segment_bytes = 512}, false, false}};
    if (P % 2 == 0) // groups of two on a 1 x P mesh, made with the plan; recursive doubling across them
        cases.push_back({"make_allreduce_plan and the plan's allreduce, grouped, 1 x 2 groups",
                         sr::policy::grouped{.group_rows = 1, .group_cols = 2, .mesh_rows = 1, .mesh_cols = P,
                                             .segment_bytes = 512},
                         false, true});
    const auto sparse_in = fault_eigen_input_of(comm.rank());
    const auto dense_in = fault_input_of(comm.rank());
    const auto want = fault_serial_sum(P);
    std::vector<double> out(fault_dim); // the right size: the check allocates nothing
    const auto good = [](const boost::mpi::communicator& c) { return good_allreduce_on(c); };
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0})
        for (std::size_t k = 0; k < cases.size(); ++k) {
            const auto& c = cases[k];
            if (P > 4 && c.on_a_plan) continue; // the plans' own allocations: swept up to four ranks
            if (P >= 4 && victim != (k % 2 ? P - 1 : 0)) continue; // from four ranks each case on one of the two
            sweep_allocations(c.name, victim, {}, sweep_rule::all_or_none,
                              [&](const boost::mpi::communicator& fresh) {
                                  std::visit(
                                      [&](const auto& p) {
                                          const auto call = [&](const auto& in) {
                                              if (!c.on_a_plan)
                                                  return twice_allreduce_checked(out, want, [&] {
                                                      sr::allreduce(fresh, in, out, std::plus<>{}, p);
                                                  });
                                              auto plan = sr::make_allreduce_plan(fresh, fault_dim, p);
                                              twice_allreduce_checked(out, want,
                                                                      [&] { plan.allreduce(in, out, std::plus<>{}); });
                                          };
                                          c.dense_input ? call(dense_in) : call(sparse_in);
                                      },
                                      c.policy);
                              },
                              good);
        }
}

// Every allocation of a reduce_broadcast allreduce fails once in turn on
// one rank, the broadcast's root (0), rank 2 (from four ranks: inner in
// the binomial tree, forwarding to 3) or the last: in the reduce half, the
// call fails on every rank (rank 0 carries the reduce's outcome to all);
// in the broadcast (a message encoded, stored or sent on) the rank sends
// its children a marker and drops what its parent sends: it and the ranks
// below it throw, the others return the right result, and the next call
// works. Segments of 512 bytes: several messages per stream, two streams
// under two_tree from three ranks (its plan swept up to four ranks: above,
// it makes over 256 allocations). Before, the rank threw std::bad_alloc
// alone and the ranks below it waited for its messages; and a rank that
// could not make the report's shared texts on its first call threw
// std::bad_alloc alone.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_a_reduce_broadcast_allreduce_fails_by_the_contract)
{
    auto& comm = world();
    const int P = comm.size();
    const sr::policy::reduce_broadcast<sr::policy::binomial> binomial{{.segment_bytes = 512}};
    const sr::policy::reduce_broadcast<sr::policy::two_tree> two_tree{{.segment_bytes = 512}};
    const auto in = fault_eigen_input_of(comm.rank());
    const auto want = fault_serial_sum(P);
    std::vector<double> out(fault_dim); // the right size: the check allocates nothing
    const auto checked = [&](auto&& call) { twice_allreduce_checked(out, want, call); };
    const auto good = [](const boost::mpi::communicator& c) { return good_allreduce_on(c); };
    std::vector<int> victims{0};
    if (P >= 4) victims.push_back(2);
    if (P > 1) victims.push_back(P - 1);
    for (int victim : victims) {
        sweep_allocations("a one-shot allreduce, reduce_broadcast over binomial", victim, {}, sweep_rule::by_contract,
                          [&](const boost::mpi::communicator& c) {
                              checked([&] { sr::allreduce(c, in, out, std::plus<>{}, binomial); });
                          },
                          good);
        if (P > 4) continue;
        sweep_allocations("make_allreduce_plan and the plan's allreduce, reduce_broadcast over two_tree", victim, {},
                          sweep_rule::by_contract,
                          [&](const boost::mpi::communicator& c) {
                              auto plan = sr::make_allreduce_plan(c, fault_dim, two_tree);
                              checked([&] { plan.allreduce(in, out, std::plus<>{}); });
                          },
                          good);
    }
}

// A reduce_scatter's result on rank `me` of P: its range (by `used`, the
// ranges the call returned) of the serial sum `want`, every entry there and
// nothing else; else std::runtime_error.
void check_scatter(const sr::index_value_vector<double, std::uint64_t>& out, const std::vector<double>& want,
                   const std::vector<std::size_t>& used, std::size_t me, int P)
{
    bool ok = out.size() == want.size() && used.size() == static_cast<std::size_t>(P) + 1;
    std::size_t held = 0; // entries of this rank's range, each the serial sum
    for (std::size_t k = 0; ok && k < out.nnz(); ++k) {
        const auto i = static_cast<std::size_t>(out.indices()[k]);
        ok = i >= used[me] && i < used[me + 1] && out.values()[k] == want[i];
    }
    for (std::size_t i = ok ? used[me] : 0; ok && i < used[me + 1]; ++i) held += want[i] != 0;
    if (!ok || held != out.nnz()) throw std::runtime_error("the call returned a wrong result");
}

// Every allocation of a reduce_scatter fails once in turn on one rank, the
// first or the last: its ranges, the cut input, the exchange's counts, the
// room it receives into, its requests, the fold and the output. Every rank
// throws or none does, a call that returns is right, and the next call
// works. A rank without room for what it receives takes it into the drain
// (at two ranks also in several pieces: 6 of every 7 elements of 2^19, 2.6
// MiB to the other rank). Under a network's tuning slices travel as bitmaps,
// which take allocations of their own.
// Before, the rank threw std::bad_alloc alone and the others waited for it
// in the exchange.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_a_reduce_scatter_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    const auto me = static_cast<std::size_t>(comm.rank());
    sr::index_value_vector<double, std::uint64_t> out;
    const auto scatter = [&](const boost::mpi::communicator& c, const Eigen::SparseVector<double>& in,
                             const std::vector<double>& want, std::span<const std::size_t> ranges) {
        both_calls([&] {
            try {
                check_scatter(out, want, sr::reduce_scatter(c, in, out, std::plus<>{}, ranges), me, P);
            } catch (const sr::error&) {
                // a call that throws leaves an output that is still a valid vector
                for (std::size_t k = 0; k < out.nnz(); ++k)
                    if (out.indices()[k] >= out.size() || (k > 0 && out.indices()[k] <= out.indices()[k - 1]))
                        throw std::runtime_error("a failed call left an invalid output");
                throw;
            }
        });
    };
    const auto small = fault_eigen_input_of(comm.rank());
    const auto small_sum = fault_serial_sum(P);
    const std::size_t n = P == 2 ? std::size_t{1} << 19 : 0;
    Eigen::SparseVector<double> large(static_cast<Eigen::Index>(n));
    std::vector<double> large_sum(n);
    large.reserve(static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 7 == 3) continue; // not full: the indices travel too
        large.insertBack(static_cast<Eigen::Index>(i)) = static_cast<double>(comm.rank() + 1 + static_cast<int>(i % 7));
        large_sum[i] = P * (P + 1) / 2 + P * static_cast<double>(i % 7);
    }
    // every other element, shifted by the rank: slices as bitmaps where bytes are dear
    const std::size_t m = 4096;
    Eigen::SparseVector<double> half(static_cast<Eigen::Index>(m));
    std::vector<double> half_sum(m, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        if ((i + me) % 2 == 0) half.insertBack(static_cast<Eigen::Index>(i)) = 1.0;
        for (int r = 0; r < P; ++r) half_sum[i] += (i + static_cast<std::size_t>(r)) % 2 == 0 ? 1.0 : 0.0;
    }
    std::vector<std::size_t> uneven(static_cast<std::size_t>(P) + 1, fault_dim); // rank 0 owns a third
    uneven[0] = 0;
    for (int r = 1; r < P; ++r) uneven[static_cast<std::size_t>(r)] = fault_dim / 3 + (fault_dim * 2 / 3) * (r - 1) / (P - 1);
    const auto good = [](const boost::mpi::communicator& c) { return good_reduce_scatter_on(c); };
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0}) {
        sweep_allocations("reduce_scatter, block ranges", victim, {}, sweep_rule::all_or_none,
                          [&](const boost::mpi::communicator& c) { scatter(c, small, small_sum, {}); }, good);
        sweep_allocations("reduce_scatter, given ranges", victim, {}, sweep_rule::all_or_none,
                          [&](const boost::mpi::communicator& c) { scatter(c, small, small_sum, uneven); }, good);
        if (P == 2)
            sweep_allocations("reduce_scatter, pieces of 1 MiB", victim, {}, sweep_rule::all_or_none,
                              [&](const boost::mpi::communicator& c) { scatter(c, large, large_sum, {}); }, good);
        const scoped_network_tuning tuning;
        sweep_allocations("reduce_scatter, bitmaps", victim, {}, sweep_rule::all_or_none,
                          [&](const boost::mpi::communicator& c) { scatter(c, half, half_sum, {}); }, good);
    }
}

// Two ranks that cannot make their room (every allocation of 1 MiB or more
// fails on ranks 0 and 1, and each owes the other its slices) both take
// what comes to them into the drain and drop it, and every rank throws,
// naming rank 0; the next call works. Before, a rank without room drained
// with blocking receives before it posted its sends, so the two waited for
// each other forever.
BOOST_AUTO_TEST_CASE(two_ranks_without_room_in_a_reduce_scatter_fail_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    if (P < 2) return; // one rank receives nothing
    const std::size_t n = std::size_t{1} << 19;
    Eigen::SparseVector<double> large(static_cast<Eigen::Index>(n));
    large.reserve(static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i)
        if (i % 7 != 3) large.insertBack(static_cast<Eigen::Index>(i)) = static_cast<double>(comm.rank() + 1);
    boost::mpi::communicator fresh(comm, boost::mpi::comm_duplicate);
    BOOST_TEST(good_reduce_scatter_on(fresh)); // the communicator's drain and memos, made by a small call
    sr::index_value_vector<double> out;
    BOOST_TEST(inject_fault({.context = "reduce_scatter, ranks 0 and 1 without room", .needles = {"rank 0"}, .agreed = true},
                            [&] {
                                failing_allocations guard(comm.rank() < 2 ? table_bytes : 0);
                                sr::reduce_scatter(fresh, large, out, std::plus<>{});
                            },
                            [&] { return good_reduce_scatter_on(fresh); }));
}

// Every allocation of a histogram_sort and of a reduce_scatter_balanced
// fails once in turn on one rank, the first or the last: the rebalance's
// buffers and requests, the splitter search's memory (made before its first
// agreement), its reduces, move_data's counts, receive buffer and requests,
// the merge; the positions, supports and ranges of the balanced ranges and
// both reduce_scatters (above four ranks on rank 0 only). Every rank throws or none does, a call that
// returns is right (the sort: sorted, every item kept, rank r's items
// before rank r + 1's), and the next call works. Before, the rank threw
// std::bad_alloc alone and the others waited for it (in the search's
// allgather of ends, move_data's exchange of counts, the ranges' allreduce).
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_the_sort_or_a_balanced_reduce_scatter_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    constexpr std::size_t items = 200;
    std::vector<double> keys;
    for (std::size_t i = 0; i < items; ++i)
        keys.push_back(static_cast<double>((i * 7919 + static_cast<std::size_t>(comm.rank()) * 104729) % 1000));
    // a sort's input per run, made beforehand: the run's allocations are the sort's alone
    std::vector<std::vector<double>> inputs;
    std::size_t next = 0;
    const auto sorted_everywhere = [&](const boost::mpi::communicator& c, const std::vector<double>& v) {
        std::array<double, 3> mine{static_cast<double>(v.size()), v.empty() ? -1.0 : v.front(),
                                   v.empty() ? -1.0 : v.back()};
        std::array<double, 3 * 8> all{};
        MPI_Allgather(mine.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, MPI_Comm(c));
        double count = 0, last = -1;
        bool ok = std::is_sorted(v.begin(), v.end());
        for (int r = 0; r < c.size(); ++r) {
            count += all[3 * r];
            if (all[3 * r] == 0) continue;
            ok = ok && all[3 * r + 1] >= last;
            last = all[3 * r + 2];
        }
        return ok && count == static_cast<double>(items) * c.size();
    };
    const auto sort_and_check = [&](const boost::mpi::communicator& c) {
        auto& v = inputs.at(next++);
        sr::histogram_sort(c, v);
        if (!sorted_everywhere(c, v)) throw std::runtime_error("the sort returned a wrong result");
    };
    const auto good_sort = [&](const boost::mpi::communicator& c) {
        auto v = keys;
        sr::histogram_sort(c, v);
        return sorted_everywhere(c, v) && good_reduce_scatter_on(c);
    };
    const auto in = fault_eigen_input_of(comm.rank());
    const auto want = fault_serial_sum(P);
    const auto me = static_cast<std::size_t>(comm.rank());
    sr::index_value_vector<double, std::uint64_t> out;
    const auto balanced_and_check = [&](const boost::mpi::communicator& c) {
        check_scatter(out, want, sr::reduce_scatter_balanced(c, in, out, std::plus<>{}), me, P);
    };
    const auto good_balanced = [](const boost::mpi::communicator& c) { return good_reduce_scatter_on(c); };
    // above four ranks rank 0 alone, the search's root (the others are alike)
    for (int victim : P > 1 && P <= 4 ? std::vector<int>{0, P - 1} : std::vector<int>{0}) {
        inputs.assign(257, keys);
        next = 0;
        sweep_allocations("histogram_sort", victim, {}, sweep_rule::all_or_none, sort_and_check, good_sort);
        sweep_allocations("reduce_scatter_balanced", victim, {}, sweep_rule::all_or_none, balanced_and_check,
                          good_balanced);
    }
}

// Every allocation of making a pattern plan and of its calls fails once in
// turn on one rank, the first or the last, for the three targets: the
// build's steps (the pattern's grouping, the runs, the support, the union,
// the call's buffers and requests) agree before each collective, and a call
// whose output cannot be made still sends its runs. Every rank throws or
// none does; a run that returns holds the serial sum.
BOOST_AUTO_TEST_CASE(a_rank_that_cannot_allocate_in_a_pattern_plan_fails_everywhere)
{
    auto& comm = world();
    const int P = comm.size();
    const auto in = fault_eigen_input_of(comm.rank());
    const auto want = fault_serial_sum(P);
    const std::vector<std::int32_t> pattern(in.innerIndexPtr(), in.innerIndexPtr() + in.nonZeros());
    const std::vector<double> values(in.valuePtr(), in.valuePtr() + in.nonZeros());
    std::vector<double> out;
    const auto good = [&](const boost::mpi::communicator& c) {
        std::vector<double> sums;
        auto plan = sr::make_pattern_plan<double>(c, fault_dim, pattern, sr::pattern_target::all());
        plan.reduce(values, sums, std::plus<>{});
        bool ok = sums.size() == plan.support().size();
        for (std::size_t k = 0; ok && k < sums.size(); ++k) ok = sums[k] == want[plan.support()[k]];
        return ok;
    };
    const sr::pattern_target targets[] = {sr::pattern_target::scatter(), sr::pattern_target::root(P - 1),
                                          sr::pattern_target::all()};
    const char* names[] = {"scatter", "root P - 1", "all"};
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0})
        for (std::size_t t = 0; t < 3; ++t) {
            if (P > 4 && (t + static_cast<std::size_t>(victim)) % 2) continue; // above four ranks, half of them
            sweep_allocations(std::string("make_pattern_plan and a call, ") + names[t], victim, {},
                              sweep_rule::all_or_none,
                              [&](const boost::mpi::communicator& c) {
                                  auto plan = sr::make_pattern_plan<double>(c, fault_dim, pattern, targets[t]);
                                  for (int call = 0; call < 2; ++call) {
                                      plan.reduce(values, out, std::plus<>{});
                                      const bool writes = targets[t].writes(c.rank()); // else out is left alone
                                      bool ok = !writes || out.size() == plan.support().size();
                                      for (std::size_t k = 0; writes && ok && k < out.size(); ++k)
                                          ok = out[k] == want[plan.support()[k]];
                                      if (!ok) throw std::runtime_error("the call returned a wrong result");
                                  }
                              },
                              good);
        }
    // a matrix of fault_dim / 10 rows and 10 columns from COO lists, written
    // column-major (its structure and staged values made on the first call)
    const std::size_t rows = fault_dim / 10, cols = 10;
    std::vector<std::int32_t> ri, ci;
    for (const auto at : pattern) {
        ri.push_back(at / static_cast<std::int32_t>(cols));
        ci.push_back(at % static_cast<std::int32_t>(cols));
    }
    Eigen::SparseMatrix<double> matrix;
    for (int victim : P > 1 ? std::vector<int>{0, P - 1} : std::vector<int>{0})
        sweep_allocations("make_pattern_plan of a matrix and a call", victim, {}, sweep_rule::all_or_none,
                          [&](const boost::mpi::communicator& c) {
                              auto plan = sr::make_pattern_plan<double>(c, rows, cols, ri, ci);
                              plan.reduce(values, matrix, std::plus<>{});
                              const auto r = plan.ranges();
                              bool ok = matrix.nonZeros() == static_cast<Eigen::Index>(plan.support().size());
                              for (std::size_t k = 0; ok && k < plan.support().size(); ++k) {
                                  const std::size_t at = plan.support()[k];
                                  ok = at >= r[static_cast<std::size_t>(c.rank())] &&
                                       matrix.coeff(static_cast<Eigen::Index>(at / cols),
                                                    static_cast<Eigen::Index>(at % cols)) == want[at];
                              }
                              if (!ok) throw std::runtime_error("the call returned a wrong result");
                          },
                          good);
}
