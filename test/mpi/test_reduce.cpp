// sparse_reduce::reduce against the serial fold, at 1, 2, 3, 4, 5 and 8 ranks:
// every policy × wire format × operation × input pattern × root, the
// representations in and out, the dense drop-in, plans, bytes on the wire,
// and the error cases (which must end in exceptions, never in a hang).

#define BOOST_TEST_MODULE reduce
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"
#include "../support/reference.hpp"
#include <sparse_reduce/simulate.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

enum class pattern { uniform, zipf, identical, disjoint, one_dense_rest_empty, all_empty };
const pattern all_patterns[] = {pattern::uniform,   pattern::zipf, pattern::identical,
                                pattern::disjoint,  pattern::one_dense_rest_empty, pattern::all_empty};

// Rank r's input for one case; the root regenerates every rank's.
template <class T, class Op>
std::vector<T> input_of(int rank, int ranks, std::size_t n, double density, pattern p, const Op& op, unsigned salt)
{
    std::mt19937_64 rng(salt * 7919u + (p == pattern::identical ? 0u : static_cast<unsigned>(rank)));
    switch (p) {
    case pattern::zipf: return random_dense<T>(rng, n, density, op, placement::zipf);
    case pattern::disjoint: return random_dense<T>(rng, n, density, op, placement::disjoint, rank, ranks);
    case pattern::one_dense_rest_empty:
        return rank == ranks / 2 ? random_dense<T>(rng, n, 1.0, op) : std::vector<T>(n, sr::identity<T>(op));
    case pattern::all_empty: return std::vector<T>(n, sr::identity<T>(op));
    default: return random_dense<T>(rng, n, density, op, placement::uniform);
    }
}

template <class T, class Op>
std::vector<T> serial_fold(int ranks, std::size_t n, double density, pattern p, const Op& op, unsigned salt)
{
    std::vector<T> acc(n, sr::identity<T>(op));
    for (int r = 0; r < ranks; ++r) acc = dense_fold(acc, input_of<T>(r, ranks, n, density, p, op, salt), op);
    return acc;
}

template <class T>
bool matches(const std::vector<T>& got, const std::vector<T>& want)
{
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            if (got[i] == want[i]) continue; // also the infinities of min and max
            if (!(std::abs(got[i] - want[i]) <= 1e-12 * std::max<T>(1, std::abs(want[i])))) return false;
        } else if (!(got[i] == want[i])) {
            return false;
        }
    }
    return true;
}

using any_policy = std::variant<sr::policy::binomial, sr::policy::k_ary, sr::policy::binary, sr::policy::chain,
                                sr::policy::optimal_binary, sr::policy::two_tree, sr::policy::automatic>;

// policies(w, seg)'s entries by name, in its order (test contexts).
const char* const policy_names[] = {"binomial", "k_ary{3}", "binary", "chain", "optimal_binary", "two_tree", "automatic"};

std::vector<any_policy> policies(sr::wire::format w, std::size_t seg)
{
    return {sr::policy::binomial{w, seg},      sr::policy::k_ary{3, w, seg}, sr::policy::binary{w, seg},
            sr::policy::chain{w, seg},         sr::policy::optimal_binary{{}, w, seg},
            sr::policy::two_tree{w, seg},      sr::policy::automatic{w, seg}};
}

// A reduce of `in` through dense std::vector out; true when the root's
// result matches want() (called on the root only) and the other ranks'
// outputs are empty (agreed on by all ranks).
template <class T, class Op, class Want>
bool reduces_to(const any_policy& pol, int root, const std::vector<T>& in, const Op& op, Want&& want)
{
    auto& comm = world();
    std::vector<T> out;
    std::visit([&](const auto& policy) { sr::reduce(comm, in, out, op, root, policy); }, pol);
    const bool ok = comm.rank() == root ? matches(out, want()) : out.empty(); // written on the root only
    return all_ok(ok);
}

// One case: this rank's input of the pattern, against the serial fold.
template <class T, class Op>
bool check_case(const any_policy& pol, int root, std::size_t n, double density, pattern p, const Op& op, unsigned salt)
{
    auto& comm = world();
    const auto in = input_of<T>(comm.rank(), comm.size(), n, density, p, op, salt);
    return reduces_to(pol, root, in, op, [&] { return serial_fold<T>(comm.size(), n, density, p, op, salt); });
}

std::vector<int> roots()
{
    const int p = world().size();
    return {0, p - 1, p / 2};
}

} // namespace

BOOST_AUTO_TEST_CASE(every_policy_wire_pattern_root_plus_double)
{
    unsigned salt = 1;
    for (auto w : {sr::wire::adaptive, sr::wire::dense, sr::wire::index_value, sr::wire::rle})
        for (std::size_t seg : {std::size_t{0}, std::size_t{512}})
            for (const auto& pol : policies(w, seg))
                for (int root : roots())
                    for (pattern p : all_patterns)
                        BOOST_TEST(check_case<double>(pol, root, 3001, 0.05, p, std::plus<>{}, ++salt),
                                   "policy " << pol.index() << " wire " << int(w) << " seg " << seg << " root "
                                             << root << " pattern " << int(p));
}

// policy::any runs the tree it holds: a plan made from it and the one-shot
// call report the schedule a plan of that tree type reports, and the sum.
BOOST_AUTO_TEST_CASE(policy_any_runs_the_tree_it_holds)
{
    auto& comm = world();
    const std::size_t n = 5000;
    for (const auto& tree : policies(sr::wire::adaptive, 1024))
        for (int root : roots()) {
            const auto pol = std::visit([](const auto& t) { return sr::policy::any(t); }, tree);
            const auto in = input_of<double>(comm.rank(), comm.size(), n, 0.2, pattern::uniform, std::plus<>{}, 53);
            const auto want = serial_fold<double>(comm.size(), n, 0.2, pattern::uniform, std::plus<>{}, 53);
            auto plan = sr::make_plan(comm, root, n, pol);
            std::vector<double> a, b, c, d;
            const auto from_plan = plan.reduce(in, a, std::plus<>{});
            const auto one_shot = sr::reduce(comm, in, b, std::plus<>{}, root, pol);
            const auto [typed_plan, typed_one_shot] = pol.visit([&](const auto& tree) {
                return std::pair(sr::make_plan(comm, root, n, tree).reduce(in, c, std::plus<>{}),
                                 sr::reduce(comm, in, d, std::plus<>{}, root, tree));
            });
            const std::string ctx = std::string(policy_names[pol.held().index()]) + " root " + std::to_string(root);
            BOOST_TEST(plan.policy().held().index() == pol.held().index(), ctx);
            BOOST_TEST(from_plan.algorithm.str() == typed_plan.algorithm.str(), ctx << ": " << from_plan.algorithm);
            BOOST_TEST(one_shot.algorithm.str() == typed_one_shot.algorithm.str(), ctx << ": " << one_shot.algorithm);
            BOOST_TEST(all_ok(comm.rank() != root ||
                              (matches(a, want) && matches(b, want) && matches(c, want) && matches(d, want))),
                       ctx);
            if (comm.rank() == 0) { // the simulator takes it too
                std::vector<std::vector<double>> all;
                for (int r = 0; r < comm.size(); ++r)
                    all.push_back(input_of<double>(r, comm.size(), n, 0.2, pattern::uniform, std::plus<>{}, 53));
                const std::span<const std::vector<double>> inputs(all);
                std::vector<double> s, t;
                const auto sim = sr::simulate_reduce(inputs, s, std::plus<>{}, root, pol);
                const auto typed_sim = pol.visit(
                    [&](const auto& tree) { return sr::simulate_reduce(inputs, t, std::plus<>{}, root, tree); });
                BOOST_TEST(sim.algorithm == typed_sim.algorithm, ctx);
                BOOST_TEST(sim.bytes_sent == typed_sim.bytes_sent, ctx);
                BOOST_TEST(matches(s, want), ctx);
            }
        }
}

// A reduce_policy of the caller's own type (doc/semantics.md, "Policies of
// your own type"): the binomial tree with its wire format and segment size;
// a plan gives it back whole.
struct own_policy {
    sr::wire::format wire = sr::wire::adaptive;
    int segment_bytes = 1024; // any type that converts to std::size_t
    int tag = 0;              // a field the library does not know
    friend bool operator==(const own_policy&, const own_policy&) = default;
};

// The caller's own check, found by argument-dependent lookup.
void validate(const own_policy& p)
{
    if (p.tag < 0) throw sr::error("own_policy: tag must not be negative");
}

BOOST_AUTO_TEST_CASE(a_policy_of_the_callers_own_type)
{
    auto& comm = world();
    const std::size_t n = 3001;
    unsigned salt = 900;
    for (auto w : {sr::wire::adaptive, sr::wire::dense})
        for (int root : roots()) {
            const own_policy pol{.wire = w, .tag = root + 1};
            const auto in = input_of<double>(comm.rank(), comm.size(), n, 0.05, pattern::uniform, std::plus<>{}, ++salt);
            const auto want = serial_fold<double>(comm.size(), n, 0.05, pattern::uniform, std::plus<>{}, salt);
            std::vector<double> out;
            const auto rep = sr::reduce(comm, in, out, std::plus<>{}, root, pol);
            bool ok = rep.reason.str() == "binomial tree: the default for a policy of the caller's own" &&
                      rep.algorithm.str().rfind("binomial(wire=" + std::string(sr::wire::to_string(w)) + ", segment=1024)", 0) == 0;
            if (comm.rank() == root) ok = ok && matches(out, want);
            BOOST_TEST(all_ok(ok), "one-shot, wire " << int(w) << " root " << root);

            auto plan = sr::make_plan(comm, root, n, pol);
            BOOST_TEST(plan.policy().tag == root + 1);
            BOOST_TEST(plan.policy().segment_bytes == 1024);
            out.clear();
            plan.reduce(in, out, std::plus<>{});
            BOOST_TEST(all_ok(comm.rank() != root || matches(out, want)), "plan, wire " << int(w) << " root " << root);
        }
    // the caller's validate refuses on every rank, before anything is sent
    const std::vector<double> in(n, 1.0);
    std::vector<double> out;
    BOOST_CHECK_THROW(sr::reduce(comm, in, out, std::plus<>{}, 0, own_policy{.tag = -1}), sr::error);
    BOOST_CHECK_THROW(sr::make_plan(comm, 0, n, own_policy{.tag = -1}), sr::error);
    sr::reduce(comm, in, out, std::plus<>{}, 0, own_policy{});
    BOOST_TEST(all_ok(comm.rank() != 0 || out == std::vector<double>(n, comm.size())));
}

// segment_bytes above max_window_bytes (128 KiB): messages of several
// windows each, the two trees' alternate windows included; a dimension that
// ends in a short window.
BOOST_AUTO_TEST_CASE(messages_of_several_windows)
{
    auto& comm = world();
    const std::size_t n = (std::size_t{1} << 17) + 4097; // 9 windows of 16384 doubles, the last short
    unsigned salt = 500;
    for (double density : {0.3, 1.0}) { // one input per density, every policy reducing it
        const auto in = input_of<double>(comm.rank(), comm.size(), n, density, pattern::uniform, std::plus<>{}, ++salt);
        std::vector<double> want; // on the ranks that are roots below
        if (comm.rank() == 0 || comm.rank() == comm.size() - 1)
            want = serial_fold<double>(comm.size(), n, density, pattern::uniform, std::plus<>{}, salt);
        for (auto w : {sr::wire::adaptive, sr::wire::dense})
            for (std::size_t seg : {std::size_t{512} << 10, std::size_t{1} << 20})
                for (const auto& pol : policies(w, seg))
                    for (int root : {0, comm.size() - 1})
                        BOOST_TEST(reduces_to(pol, root, in, std::plus<>{}, [&]() -> const auto& { return want; }),
                                   policy_names[pol.index()] << " wire " << int(w) << " seg " << seg << " root "
                                                             << root << " density " << density);
    }
}

// Where the tuning's network makes bytes dear (1 Gbit/s), adaptive blocks
// between about 1/16 and 63/64 full travel as bitmaps (wire/bitmap.hpp):
// the result is the serial fold's at every root, and at P = 2 the leaf
// sends fewer bytes than index/value blocks (10 per entry) would take.
BOOST_AUTO_TEST_CASE(bitmap_blocks_on_a_slow_network)
{
    auto& comm = world();
    sr::tuning slow;
    slow.machine = slow.machine.with_network(12e-6, 1.25e8);
    BOOST_TEST_REQUIRE(slow.machine.bitmap_pays());
    const std::size_t n = 40000; // windows of 16384: two full, one short
    unsigned salt = 900;
    for (double density : {0.1, 0.3, 0.6})
        for (int root : roots()) {
            const auto mine = rank_input<double>(comm.rank(), n, density, std::plus<>{}, ++salt);
            const auto want = rank_fold<double>(comm.size(), n, density, std::plus<>{}, salt);
            std::vector<double> got(n);
            const auto rep = sr::reduce(comm, std::span<const double>(mine), std::span<double>(got), std::plus<>{},
                                        root, sr::policy::automatic{.tuned = slow});
            if (comm.rank() == root)
                BOOST_TEST(first_difference(got, want) == -1, "density " << density << " root " << root << ": "
                                                                          << rep.algorithm);
            const auto entries = static_cast<std::size_t>(std::count_if(mine.begin(), mine.end(),
                                                                        [](double x) { return x != 0.0; }));
            if (comm.size() == 2 && comm.rank() != root)
                BOOST_TEST(rep.bytes_sent < 10 * entries, "density " << density << ": " << rep.bytes_sent
                                                                     << " bytes for " << entries << " entries");
        }
}

// Sparse inputs under the adaptive wire travel whole (a message per edge)
// unless, at P > 2, selection finds the windowed pipeline faster: on a
// machine whose links cost bytes (not messages) it does; on one whose
// messages cost latency it keeps whole messages. Either way the result is
// the serial fold's, in index/value and Eigen outputs.
BOOST_AUTO_TEST_CASE(sparse_inputs_take_windows_where_the_pipeline_pays)
{
    auto& comm = world();
    sr::tuning bandwidth, latency;
    bandwidth.machine = {.alpha = 0, .beta = 1e-9, .gamma = 0, .gamma_dense = 0};
    latency.machine = {.alpha = 1e-3, .beta = 1e-12, .gamma = 0, .gamma_dense = 0};
    const std::size_t n = 40000;
    unsigned salt = 950;
    for (double density : {0.5, 1.0})
        for (int root : roots()) {
            const auto mine = sr::to_index_value(rank_input<double>(comm.rank(), n, density, std::plus<>{}, ++salt));
            const auto want = rank_fold<double>(comm.size(), n, density, std::plus<>{}, salt);
            for (const bool slow_links : {true, false}) {
                const sr::policy::automatic pol{.tuned = slow_links ? bandwidth : latency};
                sr::index_value_vector<double> got;
                const auto rep = sr::reduce(comm, mine, got, std::plus<>{}, root, pol);
                // (at P = 3 and 4 the model finds the pipeline no faster on
                // this machine, so whole messages stay: a link carries a
                // rank's receives and sends alike, so any tree's busiest link
                // moves two whole vectors)
                // (at P = 2 inputs that hold every element take the dense
                // wire's windows: full_inputs_at_two_ranks_take_the_dense_wire)
                const bool all_full = all_ok(mine.nnz() == n);
                const bool whole = rep.algorithm.find("whole messages") != std::string::npos;
                BOOST_TEST(whole == ((comm.size() <= 4 || !slow_links) && !(comm.size() == 2 && all_full)),
                           "density " << density << " root " << root << ": " << rep.algorithm);
                Eigen::SparseVector<double> eigen_got;
                sr::reduce(comm, mine, eigen_got, std::plus<>{}, root, pol);
                if (comm.rank() == root) {
                    BOOST_TEST(first_difference(sr::to_dense(got), want) == -1, rep.algorithm);
                    std::vector<double> e(n, 0.0);
                    for (Eigen::SparseVector<double>::InnerIterator it(eigen_got); it; ++it)
                        e[static_cast<std::size_t>(it.index())] = it.value();
                    BOOST_TEST(first_difference(e, want) == -1, rep.algorithm);
                }
            }
        }
}

// Automatic's one-shot call at P = 2 where every rank's input holds every
// element and the vector is large (select/path.hpp, full_goes_in_windows):
// the dense wire's windows, not a whole message. A small vector, an input
// one element short, and a plan keep whole messages. Every result is the
// serial fold's.
BOOST_AUTO_TEST_CASE(full_inputs_at_two_ranks_take_the_dense_wire)
{
    auto& comm = world();
    const std::size_t big = sr::detail::full_in_windows_bytes / sizeof(double), small = 1000;
    for (int root : roots())
        for (const std::size_t n : {big, small})
            for (const bool one_short : {false, true}) {
                // every index holds 1 + (i + r) % 5; with one_short, rank 0 lacks index 7
                auto held = [&](std::size_t i, int r) { return !(one_short && r == 0 && i == 7); };
                Eigen::SparseVector<double> in(static_cast<Eigen::Index>(n)), out, plan_out;
                in.reserve(static_cast<Eigen::Index>(n));
                std::vector<double> want(n, 0.0);
                for (std::size_t i = 0; i < n; ++i) {
                    if (held(i, comm.rank())) in.insertBack(static_cast<Eigen::Index>(i)) = 1.0 + double((i + comm.rank()) % 5);
                    for (int r = 0; r < comm.size(); ++r) want[i] += held(i, r) ? 1.0 + double((i + r) % 5) : 0.0;
                }
                const auto rep = sr::reduce(comm, in, out, std::plus<>{}, root);
                auto plan = sr::make_plan(comm, root, n);
                const auto plan_rep = plan.reduce(in, plan_out, std::plus<>{});
                const std::string what = "n " + std::to_string(n) + (one_short ? " one short" : "") + " root " +
                                         std::to_string(root) + ": " + rep.algorithm.str();
                if (comm.size() == 2) {
                    const bool windows = n == big && !one_short;
                    BOOST_TEST((rep.algorithm.find("whole messages") == std::string::npos) == windows, what);
                    BOOST_TEST((rep.algorithm.find("wire=dense") != std::string::npos) == windows, what);
                    BOOST_TEST(plan_rep.algorithm.find("whole messages") != std::string::npos, plan_rep.algorithm.str());
                }
                BOOST_TEST(all_ok(comm.rank() != root || (sr::to_dense(out) == want && sr::to_dense(plan_out) == want)),
                           what);
            }
}

// A plan's call below T_c measures nothing: each rank chooses from its own
// counts. Ranks whose entry counts differ widely must still choose the same
// path (whole messages, one segment size), else they speak different
// protocols: the result is the serial fold's, on every root, at every P.
BOOST_AUTO_TEST_CASE(small_plans_choose_alike_whatever_each_rank_holds)
{
    auto& comm = world();
    const std::size_t n = 5000; // 40000 bytes: below the built-in T_c
    unsigned salt = 970;
    for (int root : roots()) {
        auto plan = sr::make_plan(comm, root, n, sr::policy::automatic{});
        for (int round = 0; round < 2; ++round) {
            // rank r holds a density of 0.05 + 0.3 r (capped at 1), the next
            // round the other way round
            auto density_of = [&](int r) {
                const int k = round == 0 ? r : comm.size() - 1 - r;
                return std::min(1.0, 0.05 + 0.3 * k);
            };
            ++salt;
            std::vector<double> want(n, 0.0);
            for (int r = 0; r < comm.size(); ++r)
                want = dense_fold(want, rank_input<double>(r, n, density_of(r), std::plus<>{}, salt + 100 * r),
                                  std::plus<>{});
            const auto mine = sr::to_index_value(
                rank_input<double>(comm.rank(), n, density_of(comm.rank()), std::plus<>{}, salt + 100 * comm.rank()));
            sr::index_value_vector<double> got;
            const auto rep = plan.reduce(mine, got, std::plus<>{});
            if (comm.rank() == root)
                BOOST_TEST(first_difference(sr::to_dense(got), want) == -1, "root " << root << ": " << rep.algorithm);
        }
    }
}

BOOST_AUTO_TEST_CASE(min_max_bit_or_and_non_commutative)
{
    unsigned salt = 1000;
    for (auto w : {sr::wire::adaptive, sr::wire::dense, sr::wire::index_value, sr::wire::rle})
        for (std::size_t seg : {std::size_t{0}, std::size_t{256}})
            for (const auto& pol : policies(w, seg))
                for (int root : roots())
                    for (pattern p : all_patterns) {
                        BOOST_TEST(check_case<double>(pol, root, 2000, 0.1, p, sr::min{}, ++salt));
                        BOOST_TEST(check_case<float>(pol, root, 2000, 0.1, p, boost::mpi::maximum<float>{}, ++salt));
                        if (w == sr::wire::rle) continue; // RLE is for float and double
                        BOOST_TEST(check_case<std::int64_t>(pol, root, 2000, 0.1, p, std::bit_or<>{}, ++salt));
                        BOOST_TEST(check_case<affine>(pol, root, 1500, 0.2, p, compose{}, ++salt),
                                   "affine policy " << pol.index() << " wire " << int(w) << " root " << root
                                                    << " pattern " << int(p));
                    }
}

BOOST_AUTO_TEST_CASE(rle_wire_for_other_types_is_refused_everywhere)
{
    auto& comm = world();
    const std::vector<std::int64_t> in(10, 1);
    std::vector<std::int64_t> out;
    BOOST_CHECK_THROW(sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::binomial{.wire = sr::wire::rle}), sr::error);
    BOOST_TEST(all_ok(true));
}

BOOST_AUTO_TEST_CASE(dimensions_zero_and_one)
{
    for (const auto& pol : policies(sr::wire::adaptive, 0))
        for (int root : roots())
            for (std::size_t n : {0u, 1u}) {
                BOOST_TEST(check_case<double>(pol, root, n, 1.0, pattern::uniform, std::plus<>{}, 5));
                BOOST_TEST(check_case<affine>(pol, root, n, 1.0, pattern::uniform, compose{}, 6));
            }
}

// A dimension over 2^32 (2^40): a few entries per rank at both ends of the
// index space, whole messages with 64-bit indices (the adaptive wire), every
// policy, several roots, against the serial fold (a sum that cancels to 0 is
// left out of the output). (The windowed wires walk every window of the
// dimension: not for 2^40.)
BOOST_AUTO_TEST_CASE(dimensions_over_two_to_the_32)
{
    auto& comm = world();
    const std::uint64_t n = std::uint64_t{1} << 40;
    const auto entries_of = [&](int r) {
        sr::index_value_vector<double, std::uint64_t> v(n);
        v.push_back(static_cast<std::uint64_t>(r), 1.0 + r);  // low, one per rank
        v.push_back(std::uint64_t{1} << 32, 0.5);             // just past 2^32, on every rank
        v.push_back((std::uint64_t{1} << 33) + 3 * r, 2.0);   // one per rank
        v.push_back(n - 1, static_cast<double>(r) - 0.5);     // the last index: 0 at P = 2
        return v;
    };
    std::map<std::uint64_t, double> want;
    for (int r = 0; r < comm.size(); ++r) {
        const auto v = entries_of(r);
        for (std::size_t k = 0; k < v.nnz(); ++k) want[v.indices()[k]] += v.values()[k];
    }
    std::erase_if(want, [](const auto& e) { return e.second == 0.0; });
    for (const auto& pol : policies(sr::wire::adaptive, 0))
        for (int root : roots()) {
            const auto in = entries_of(comm.rank());
            sr::index_value_vector<double, std::uint64_t> out;
            std::visit([&](const auto& p) { sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol);
            bool ok = true;
            if (comm.rank() == root) {
                std::map<std::uint64_t, double> got;
                for (std::size_t k = 0; k < out.nnz(); ++k) got[out.indices()[k]] = out.values()[k];
                ok = out.size() == n && got == want;
            }
            BOOST_TEST(all_ok(ok), "policy " << policy_names[pol.index()] << " root " << root);
        }
}

// Over 2^32, whole messages (a fixed tree), a rank whose vector has 32-bit
// indices (Eigen's default StorageIndex) cannot take part: it throws, and so does the root, naming
// it, while ranks with 64-bit indices pass; the next call works.
BOOST_AUTO_TEST_CASE(a_vector_whose_indices_cannot_address_the_dimension_fails)
{
    auto& comm = world();
    const std::uint64_t n = std::uint64_t{1} << 33;
    const sr::policy::binomial whole; // a fixed tree: whole messages
    for (int narrow_rank : {0, comm.size() - 1})
        for (int root : roots()) {
            bool threw = false;
            std::string text;
            try {
                if (comm.rank() == narrow_rank) {
                    Eigen::SparseVector<double> in(static_cast<Eigen::Index>(n)), out;
                    in.insertBack(3) = 1.0;
                    sr::reduce(comm, in, out, std::plus<>{}, root, whole);
                } else {
                    sr::index_value_vector<double, std::uint64_t> in(n), out;
                    in.push_back(n - 1, 1.0);
                    sr::reduce(comm, in, out, std::plus<>{}, root, whole);
                }
            } catch (const sr::error& e) {
                threw = true;
                text = e.what();
            }
            const bool must_throw = comm.rank() == narrow_rank || comm.rank() == root;
            const bool named = text.find("rank " + std::to_string(narrow_rank)) != std::string::npos &&
                               text.find("cannot address dimension 8589934592") != std::string::npos;
            BOOST_TEST(all_ok(threw == must_throw && (!threw || named)),
                       "narrow rank " << narrow_rank << " root " << root << ": " << text);
            // the next call works
            sr::index_value_vector<double, std::uint64_t> in(n), out;
            in.push_back(static_cast<std::uint64_t>(comm.rank()), 1.0);
            sr::reduce(comm, in, out, std::plus<>{}, root, whole);
            BOOST_TEST(all_ok(comm.rank() != root || out.nnz() == static_cast<std::size_t>(comm.size())));
        }
}

BOOST_AUTO_TEST_CASE(representations_in_and_out)
{
    auto& comm = world();
    const std::size_t n = 5000;
    const std::plus<> op;
    for (int root : roots()) {
        const auto dense = input_of<double>(comm.rank(), comm.size(), n, 0.02, pattern::uniform, op, 77);
        const auto want = serial_fold<double>(comm.size(), n, 0.02, pattern::uniform, op, 77);
        const bool at_root = comm.rank() == root;
        // Eigen::SparseVector in and out
        Eigen::SparseVector<double> ein, eout;
        sr::convert_into(ein, dense);
        sr::reduce(comm, ein, eout, op, root, sr::policy::binomial{});
        BOOST_TEST(all_ok(!at_root || matches(sr::to_dense(eout), want)));
        // index_value_vector in, rle_vector out
        sr::rle_vector<double> rout;
        sr::reduce(comm, sr::to_index_value(dense), rout, op, root, sr::policy::binary{});
        BOOST_TEST(all_ok(!at_root || matches(sr::to_dense(rout), want)));
        // rle_vector in, Eigen dense out
        Eigen::VectorXd vout;
        sr::reduce(comm, sr::to_rle(dense), vout, op, root, sr::policy::chain{.wire = sr::wire::rle});
        BOOST_TEST(all_ok(!at_root || matches(std::vector<double>(vout.data(), vout.data() + vout.size()), want)));
        // the dense drop-in: spans over caller-owned buffers
        std::vector<double> buffer(n, -1.0);
        sr::reduce(comm, std::span<const double>(dense), std::span<double>(buffer), op, root);
        BOOST_TEST(all_ok(!at_root || matches(buffer, want)));
        if (!at_root) BOOST_TEST(buffer == std::vector<double>(n, -1.0)); // untouched off the root
        // in place at the root: in and out are the same buffer
        std::vector<double> inout = dense;
        sr::reduce(comm, std::span<const double>(inout), std::span<double>(inout), op, root, sr::policy::k_ary{.k = 2});
        BOOST_TEST(all_ok(!at_root || matches(inout, want)));
    }
}

BOOST_AUTO_TEST_CASE(plans_are_reusable)
{
    auto& comm = world();
    const int root = comm.size() - 1;
    auto plan = sr::make_plan(comm, root, 4000, sr::policy::k_ary{.k = 3, .segment_bytes = 1024});
    for (unsigned it = 0; it < 5; ++it) {
        const auto in = input_of<double>(comm.rank(), comm.size(), 4000, 0.01 * (it + 1), pattern::zipf, std::plus<>{}, it);
        sr::index_value_vector<double> out;
        const auto rep = plan.reduce(sr::to_index_value(in), out, std::plus<>{});
        BOOST_TEST(rep.algorithm.find("k_ary(k=3)") != std::string::npos);
        const auto want = serial_fold<double>(comm.size(), 4000, 0.01 * (it + 1), pattern::zipf, std::plus<>{}, it);
        BOOST_TEST(all_ok(comm.rank() != root || matches(sr::to_dense(out), want)));
        // the same plan serves a non-commutative operation too
        const auto a = input_of<affine>(comm.rank(), comm.size(), 4000, 0.05, pattern::uniform, compose{}, it);
        std::vector<affine> aout;
        plan.reduce(a, aout, compose{});
        BOOST_TEST(all_ok(comm.rank() != root ||
                          matches(aout, serial_fold<affine>(comm.size(), 4000, 0.05, pattern::uniform, compose{}, it))));
    }
}

// automatic: the rule that fired is reported, every rank takes the same
// tree (no hang, right result) through re-measurements with changing data,
// with thresholds from a file and from the API, and k_ary's model k.
BOOST_AUTO_TEST_CASE(automatic_selection_by_rule_and_by_model)
{
    auto& comm = world();
    const std::string path = "sparse_reduce_test_tuning_np" + std::to_string(comm.size()) + ".txt";
    if (comm.rank() == 0) {
        std::ofstream f(path);
        f << "# test\nT_c_small_bytes = 1e12\n";
    }
    comm.barrier();
    const std::size_t n = 6000;
    for (int root : roots()) {
        const auto in = input_of<double>(comm.rank(), comm.size(), n, 0.02, pattern::zipf, std::plus<>{}, 5);
        const auto want = serial_fold<double>(comm.size(), n, 0.02, pattern::zipf, std::plus<>{}, 5);
        std::vector<double> out;
        auto rep = sr::reduce(comm, in, out, std::plus<>{}, root, sr::policy::automatic{.tuning_file = path});
        BOOST_TEST(rep.algorithm.find("automatic: binomial by C < T_c") != std::string::npos, rep.algorithm);
        // the same choice in words, the call's time, and every field on one line
        BOOST_TEST(rep.reason == "binomial tree: the vector is small, so latency decides", rep.reason.str());
        BOOST_TEST((rep.seconds > 0 && rep.seconds < 60), rep.seconds);
        {
            std::ostringstream line;
            line << rep;
            BOOST_TEST(line.str().find(rep.reason.str()) != std::string::npos, line.str());
            BOOST_TEST(line.str().find(" s") != std::string::npos, line.str());
        }
        BOOST_TEST(all_ok(comm.rank() != root || matches(out, want)));

        sr::tuning model_only;
        model_only.limits.small_bytes = 0;
        model_only.limits.sparse_bytes = 0;
        auto plan = sr::make_plan(comm, root, n, sr::policy::automatic{.tuned = model_only, .remeasure_every = 2});
        for (unsigned it = 0; it < 5; ++it) { // densities change: re-measured on calls 0, 2, 4
            const double d = it % 2 ? 1.0 : 0.001;
            const auto x = input_of<double>(comm.rank(), comm.size(), n, d, pattern::uniform, std::plus<>{}, it);
            rep = plan.reduce(x, out, std::plus<>{});
            BOOST_TEST(rep.algorithm.find("by model") != std::string::npos, rep.algorithm);
            BOOST_TEST(rep.reason.find("the cost model predicts it fastest") != std::string::npos, rep.reason.str());
            BOOST_TEST(all_ok(comm.rank() != root ||
                              matches(out, serial_fold<double>(comm.size(), n, d, pattern::uniform, std::plus<>{}, it))));
        }
        // hints replace the measurement; non-commutative folds stay in rank order
        const auto a = input_of<affine>(comm.rank(), comm.size(), n, 0.05, pattern::uniform, compose{}, 3);
        std::vector<affine> aout;
        sr::reduce(comm, a, aout, compose{}, root,
                   sr::policy::automatic{.sparsity = 0.95, .distribution = sr::merge_model::uniform});
        BOOST_TEST(all_ok(comm.rank() != root ||
                          matches(aout, serial_fold<affine>(comm.size(), n, 0.05, pattern::uniform, compose{}, 3))));
        rep = sr::reduce(comm, in, out, std::plus<>{}, root, sr::policy::k_ary{});
        BOOST_TEST(rep.algorithm.find("k_ary(k=") != std::string::npos, rep.algorithm);
        BOOST_TEST(rep.reason == "k-ary tree: k chosen by the cost model", rep.reason.str());
        BOOST_TEST(all_ok(comm.rank() != root || matches(out, want)));
    }
    // a tuning file only some ranks can read: every rank throws, none waits
    const std::string missing = comm.rank() == 0 && comm.size() > 1 ? path : path + ".missing";
    BOOST_CHECK_THROW(sr::make_plan(comm, 0, n, sr::policy::automatic{.tuning_file = missing}), sr::error);
    BOOST_TEST(all_ok(true));
    comm.barrier();
    if (comm.rank() == 0) std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(plans_expose_their_schedule)
{
    auto& comm = world();
    auto plan = sr::make_plan(comm, 0, 1000, sr::policy::two_tree{.segment_bytes = 800});
    const sr::schedule s = plan.schedule_for(true, sizeof(double));
    BOOST_TEST(s.window == 100u);
    BOOST_TEST(s.windows() == 10u);
    BOOST_TEST(s.trees.size() == 2u);
    BOOST_TEST(s.trees[0].size == comm.size());
    BOOST_TEST(sr::to_string(s).find("rank " + std::to_string(comm.size() - 1) + ":") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bytes_on_the_wire_against_a_dense_reduce)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const std::size_t n = std::size_t{1} << 20;
    const double dense_bytes = static_cast<double>(comm.size() - 1) * static_cast<double>(n) * sizeof(double);
    for (double density : {0.001, 1.0}) {
        const auto in = input_of<double>(comm.rank(), comm.size(), n, density, pattern::uniform, std::plus<>{}, 9);
        std::vector<double> out;
        const auto rep = sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::binomial{});
        const double total = static_cast<double>(boost::mpi::all_reduce(comm, rep.bytes_sent, std::plus<>{}));
        BOOST_TEST_MESSAGE("density " << density << ": " << total << " bytes, " << 100 * total / dense_bytes
                                      << "% of a dense reduce");
        if (density < 0.01) BOOST_TEST(total <= 0.03 * dense_bytes);
        else BOOST_TEST(total <= 1.01 * dense_bytes);
    }
}

BOOST_AUTO_TEST_CASE(the_simulator_moves_exactly_the_executors_bytes)
{
    auto& comm = world();
    const std::size_t n = 50000;
    for (const auto& pol : policies(sr::wire::adaptive, 4096))
        for (double density : {0.001, 0.05, 1.0}) {
            const int root = comm.size() / 2;
            const auto in = input_of<double>(comm.rank(), comm.size(), n, density, pattern::zipf, std::plus<>{}, 31);
            std::vector<double> out;
            const auto rep = std::visit([&](const auto& p) { return sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol);
            std::vector<std::size_t> sent;
            boost::mpi::gather(comm, rep.bytes_sent, sent, 0);
            bool ok = true;
            if (comm.rank() == 0) {
                std::vector<std::vector<double>> all;
                for (int r = 0; r < comm.size(); ++r)
                    all.push_back(input_of<double>(r, comm.size(), n, density, pattern::zipf, std::plus<>{}, 31));
                std::vector<double> sim_out;
                const auto sim = std::visit(
                    [&](const auto& p) {
                        return sr::simulate_reduce(std::span<const std::vector<double>>(all), sim_out, std::plus<>{}, root, p);
                    },
                    pol);
                // the same path (select/path.hpp), tree, wire and segment: the report's algorithm
                BOOST_TEST(sim.algorithm == rep.algorithm.str(), "policy " << pol.index() << " density " << density);
                ok = sim.algorithm == rep.algorithm.str() && sim.bytes_sent == sent &&
                     matches(sim_out, serial_fold<double>(comm.size(), n, density, pattern::zipf, std::plus<>{}, 31));
                BOOST_TEST(ok, "policy " << pol.index() << " density " << density);
            }
            BOOST_TEST(all_ok(ok));
        }
}

// Sparse inputs under the adaptive wire travel whole (exec/whole_reduce.hpp);
// the simulator takes the same path (select/path.hpp) and models it
// (sim/whole_model.hpp) to the byte.
BOOST_AUTO_TEST_CASE(the_simulator_moves_exactly_the_executors_bytes_for_sparse_inputs)
{
    auto& comm = world();
    const std::size_t n = 200000;
    auto sparse_of = [&](int r, double density) {
        const auto d = input_of<double>(r, comm.size(), n, density, pattern::uniform, std::plus<>{}, 37);
        std::vector<std::uint32_t> idx;
        std::vector<double> val;
        for (std::size_t i = 0; i < n; ++i)
            if (d[i] != 0) {
                idx.push_back(static_cast<std::uint32_t>(i));
                val.push_back(d[i]);
            }
        return sr::index_value_vector<double>::from_unsorted(n, idx, val, std::plus<>{});
    };
    for (double density : {0.001, 0.3, 1.0}) {
        const int root = comm.size() - 1;
        const auto in = sparse_of(comm.rank(), density);
        std::vector<sr::index_value_vector<double>> all; // every rank's input, for the simulator on rank 0
        if (comm.rank() == 0)
            for (int r = 0; r < comm.size(); ++r) all.push_back(sparse_of(r, density));
        for (const auto& pol : policies(sr::wire::adaptive, 4096)) {
            sr::index_value_vector<double> out;
            const auto rep = std::visit([&](const auto& p) { return sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol);
            std::vector<std::size_t> sent;
            boost::mpi::gather(comm, rep.bytes_sent, sent, 0);
            bool ok = true;
            if (comm.rank() == 0) {
                sr::index_value_vector<double> sim_out;
                const auto sim = std::visit(
                    [&](const auto& p) {
                        return sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(all), sim_out,
                                                   std::plus<>{}, root, p);
                    },
                    pol);
                // the same path (select/path.hpp), tree, wire and segment: the report's algorithm
                BOOST_TEST(sim.algorithm == rep.algorithm.str(), "policy " << pol.index() << " density " << density);
                ok = sim.algorithm == rep.algorithm.str() && sim.bytes_sent == sent;
                BOOST_TEST(ok, "policy " << pol.index() << " density " << density);
            }
            BOOST_TEST(all_ok(ok));
        }
    }
}

BOOST_AUTO_TEST_CASE(invalid_root_throws_everywhere_before_sending)
{
    auto& comm = world();
    const std::vector<double> in(10, 1.0);
    std::vector<double> out;
    BOOST_CHECK_THROW(sr::reduce(comm, in, out, std::plus<>{}, comm.size()), sr::error);
    BOOST_CHECK_THROW(sr::reduce(comm, in, out, std::plus<>{}, -1), sr::error);
    // nothing was left in flight: the next reduction works
    sr::reduce(comm, in, out, std::plus<>{}, 0);
    BOOST_TEST(all_ok(comm.rank() != 0 || out == std::vector<double>(10, comm.size())));
}

BOOST_AUTO_TEST_CASE(dimension_mismatch_ends_in_exceptions)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    for (const auto& pol : policies(sr::wire::adaptive, 256))
        for (int root : roots()) {
            const int odd = (root + 1) % comm.size();
            const std::vector<double> in(odd == comm.rank() ? 1001 : 1000, 1.0);
            std::vector<double> out;
            bool threw = false;
            std::string what;
            try {
                std::visit([&](const auto& p) { sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol);
            } catch (const sr::error& e) {
                threw = true;
                what = e.what();
            }
            if (comm.rank() == root) {
                BOOST_TEST(threw);
                BOOST_TEST(what.find("dimension mismatch") != std::string::npos, what);
            }
            BOOST_TEST(all_ok(true)); // every rank got here
        }
}

BOOST_AUTO_TEST_CASE(a_throwing_op_on_one_rank_ends_in_exceptions)
{
    auto& comm = world();
    for (const auto& pol : policies(sr::wire::adaptive, 0))
        for (int root : roots()) {
            // the op throws on the first rank that folds anything (one with children, or the root)
            // (optimal_binary's tree depends on the entry counts: 100 dense entries each)
            auto plan_tree = std::visit([&](const auto& p) { return sr::make_plan(comm, root, 100, p).tree_for(true, 100); }, pol);
            int victim = root;
            for (int r = 0; r < comm.size(); ++r)
                if (!plan_tree.children[static_cast<std::size_t>(r)].empty()) {
                    victim = r;
                    break;
                }
            const std::vector<double> in(100, 1.0);
            std::vector<double> out;
            // one rank folds nothing: the op runs only in the identity test of the first call with it
            const who_throws who = comm.size() > 1 ? reduce_throwers(root, victim) : who_throws([](int) { return expect::either; });
            BOOST_TEST(inject_fault(
                {.context = std::string(policy_names[pol.index()]) + ", root " + std::to_string(root) + ", the op throws on rank " +
                            std::to_string(victim),
                 .who = who,
                 .needles = {"rank " + std::to_string(victim), "user op failed"}},
                [&] { std::visit([&](const auto& p) { sr::reduce(comm, in, out, plus_throwing_on(victim), root, p); }, pol); },
                [&] { return std::visit([&](const auto& p) { return good_reduce(p, root); }, pol); }));
        }
}

BOOST_AUTO_TEST_CASE(a_corrupt_input_on_one_rank_ends_in_exceptions)
{
    auto& comm = world();
    const int bad = comm.size() - 1, root = 0;
    Eigen::SparseVector<double> in(50);
    in.insert(3) = 1.0;
    in.insert(7) = 2.0;
    if (comm.rank() == bad) std::swap(in.innerIndexPtr()[0], in.innerIndexPtr()[1]); // indices out of order
    Eigen::SparseVector<double> out;
    // the root and the detecting rank throw, the others return; then a good reduce
    BOOST_TEST(inject_fault({.context = "automatic (default), root 0, Eigen indices out of order on rank " + std::to_string(bad),
                             .who = reduce_throwers(root, bad),
                             .needles = {"not strictly increasing"}},
                            [&] { sr::reduce(comm, in, out, std::plus<>{}, root); },
                            [&] { return good_reduce(sr::policy::automatic{}, root); }));
}

// The whole-message path's dense forms for n elements: a rank whose entries
// fill the dimension sends its values as they are; a partial result too big
// for index/value travels dense; the root folds a dense message with sparse
// entries straight into a sparse output. Mixed densities per rank, the given
// policies and every root, Eigen, index_value_vector and dense outputs, +
// and the non-commutative affine composition.
void check_whole_dense_partials(std::size_t n, std::span<const std::array<double, 3>> mixes,
                                std::span<const any_policy> pols, unsigned salt)
{
    auto& comm = world();
    for (const auto& mix : mixes) { // one input per mix, every policy and root reducing it
        ++salt;
        auto density_of = [&](int r) { return mix[static_cast<std::size_t>(r % 3)]; };
        auto input = [&](int r, auto op) {
            using T = std::conditional_t<std::is_same_v<decltype(op), compose>, affine, double>;
            std::mt19937_64 rng(salt * 131 + static_cast<unsigned>(r));
            return random_dense<T>(rng, n, density_of(r), op);
        };
        std::vector<double> want(n, 0.0);
        for (int r = 0; r < comm.size(); ++r) want = dense_fold(want, input(r, std::plus<>{}), std::plus<>{});
        std::vector<affine> fwant(n, sr::identity<affine>(compose{}));
        for (int r = 0; r < comm.size(); ++r) fwant = dense_fold(fwant, input(r, compose{}), compose{});
        const auto mine = input(comm.rank(), std::plus<>{});
        const auto fin = sr::to_index_value(input(comm.rank(), compose{}), compose{});
        for (const auto& pol : pols)
            for (int root : roots()) {
                // + on double, Eigen in, Eigen and dense out
                Eigen::SparseVector<double> ein, eout;
                sr::convert_into(ein, mine);
                std::vector<double> dout;
                std::visit([&](const auto& p) {
                    sr::reduce(comm, ein, eout, std::plus<>{}, root, p);
                    sr::reduce(comm, ein, dout, std::plus<>{}, root, p);
                }, pol);
                BOOST_TEST(all_ok(comm.rank() != root || (matches(sr::to_dense(eout), want) && matches(dout, want))),
                           "plus policy " << pol.index() << " root " << root << " mix " << mix[0] << "," << mix[1]
                                          << " n " << n);
                // affine composition (rank order matters), index_value_vector in and out
                sr::index_value_vector<affine> fout;
                std::visit([&](const auto& p) { sr::reduce(comm, fin, fout, compose{}, root, p); }, pol);
                BOOST_TEST(all_ok(comm.rank() != root || sr::to_dense(fout, compose{}) == fwant),
                           "affine policy " << pol.index() << " root " << root << " mix " << mix[0] << "," << mix[1]
                                            << " n " << n);
            }
    }
}

BOOST_AUTO_TEST_CASE(whole_message_dense_partials_into_sparse_outputs)
{
    const std::array<double, 3> mixes[] = {{1.0, 1.0, 1.0}, {1.0, 0.02, 0.0}, {0.9, 0.5, 0.9}, {0.02, 1.0, 0.7}};
    check_whole_dense_partials(3000, mixes, policies(sr::wire::adaptive, 0), 4000);
}

// A dense message travels in pieces of 1 MiB that its receiver folds as
// they arrive (exec/whole_transport.hpp): 140001 doubles are two pieces
// (the last short), affine pairs three.
BOOST_AUTO_TEST_CASE(dense_whole_messages_folded_in_pieces)
{
    const std::array<double, 3> mixes[] = {{1.0, 1.0, 1.0}, {0.9, 0.3, 1.0}};
    const any_policy pols[] = {sr::policy::binomial{}, sr::policy::chain{}, sr::policy::automatic{}};
    check_whole_dense_partials(140001, mixes, pols, 5000);
}

// Inputs that list every index, some holding the identity (stored zeros)
// or -0.0 (not the identity: a value, kept bit for bit): both executors
// treat them as dense arrays, identities absent, without counting them
// (whole messages under the adaptive wire, windows under a fixed one).
// Sums of small integers, so every bracketing gives the same bits.
BOOST_AUTO_TEST_CASE(full_inputs_with_stored_identities)
{
    auto& comm = world();
    for (std::size_t n : {std::size_t{3000}, std::size_t{140001}})
        for (const any_policy& pol :
             {any_policy(sr::policy::binomial{}), any_policy(sr::policy::chain{}), any_policy(sr::policy::automatic{}),
              any_policy(sr::policy::binomial{sr::wire::dense}), any_policy(sr::policy::two_tree{sr::wire::index_value}),
              any_policy(sr::policy::chain{sr::wire::adaptive, 4096})})
            for (int root : roots()) {
                auto value = [](std::size_t i, int r) {
                    const auto u = static_cast<int>(i % 97) + 3 * r;
                    return u % 5 == 0 ? 0.0 : u % 7 == 0 ? -0.0 : 1.0 + u % 11;
                };
                std::vector<double> want(n, 0.0); // the fold in rank order, +0.0 absent
                for (int r = 0; r < comm.size(); ++r)
                    for (std::size_t i = 0; i < n; ++i) {
                        const double x = value(i, r);
                        if (sr::detail::same_value(want[i], 0.0)) want[i] = x;
                        else if (!sr::detail::same_value(x, 0.0)) want[i] += x;
                    }
                sr::index_value_vector<double> in(n), out;
                Eigen::SparseVector<double> ein(static_cast<Eigen::Index>(n)), eout;
                ein.reserve(static_cast<Eigen::Index>(n));
                for (std::size_t i = 0; i < n; ++i) {
                    in.push_back(i, value(i, comm.rank()));
                    ein.insertBack(static_cast<Eigen::Index>(i)) = value(i, comm.rank());
                }
                std::vector<double> dout;
                std::visit([&](const auto& p) {
                    sr::reduce(comm, in, out, std::plus<>{}, root, p);
                    sr::reduce(comm, ein, eout, std::plus<>{}, root, p);
                    sr::reduce(comm, in, dout, std::plus<>{}, root, p);
                }, pol);
                bool ok = true;
                if (comm.rank() == root) {
                    const auto expect = sr::to_index_value(want, std::plus<>{}); // -0.0 kept, +0.0 absent
                    auto same_bits = [&](auto idx, auto val) {
                        if (idx.size() != expect.indices().size()) return false;
                        for (std::size_t k = 0; k < idx.size(); ++k)
                            if (static_cast<std::size_t>(idx[k]) != expect.indices()[k] ||
                                std::memcmp(&val[k], &expect.values()[k], sizeof(double)) != 0)
                                return false;
                        return true;
                    };
                    ok = same_bits(out.indices(), out.values()) &&
                         same_bits(std::span<const int>(eout.innerIndexPtr(), static_cast<std::size_t>(eout.nonZeros())),
                                   std::span<const double>(eout.valuePtr(), static_cast<std::size_t>(eout.nonZeros()))) &&
                         dout.size() == n && std::memcmp(dout.data(), want.data(), n * sizeof(double)) == 0;
                }
                BOOST_TEST(all_ok(ok), "policy " << pol.index() << " root " << root << " n " << n);
            }
}

// Ranks passing different kinds of vectors: the root a dense array (the
// windowed pipeline), the others every index as index/value (whole dense
// messages in pieces). The root's windowed receive takes the first piece,
// the rest are drained, and the call ends in the root's exception instead
// of its children waiting forever on pieces nobody receives. The segment
// is large enough for a piece: with smaller ones MPI itself refuses the
// message (a truncation error).
BOOST_AUTO_TEST_CASE(a_whole_message_into_a_windowed_stream_ends_in_an_exception)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const std::size_t n = std::size_t{1} << 18; // 2 MiB dense: 3 pieces
    const sr::policy::binomial pol{sr::wire::adaptive, std::size_t{8} << 20};
    for (int root : roots()) {
        bool threw = false;
        std::string what;
        try {
            if (comm.rank() == root) {
                const std::vector<double> in(n, 1.0);
                std::vector<double> out;
                sr::reduce(comm, in, out, std::plus<>{}, root, pol);
            } else {
                sr::index_value_vector<double> in(n), out;
                for (std::size_t i = 0; i < n; ++i) in.push_back(i, 1.0);
                sr::reduce(comm, in, out, std::plus<>{}, root, pol);
            }
        } catch (const sr::error& e) {
            threw = true;
            what = e.what();
        }
        if (comm.rank() == root) BOOST_TEST((threw && what.find("malformed") != std::string::npos), what);
        BOOST_TEST(good_reduce(sr::policy::binomial{}, root)); // nothing left queued
    }
}

// A failure while a dense message's pieces arrive: the root's op throws in
// the first piece, or one rank's dimension differs (no piece is folded);
// every piece is still received, so the next reduce finds nothing queued.
BOOST_AUTO_TEST_CASE(failures_in_a_dense_message_s_pieces_end_in_exceptions)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const std::size_t n = 140001;
    for (int root : roots()) {
        const int odd = (root + 1) % comm.size();
        sr::index_value_vector<double> in(n), wrong(n + 1), out;
        for (std::size_t i = 0; i < n; ++i) {
            in.push_back(i, 1.0);
            wrong.push_back(i, 1.0);
        }
        wrong.push_back(n, 1.0);
        BOOST_TEST(inject_fault({.context = "binomial, root " + std::to_string(root) + ", the op throws on the root",
                                 .who = reduce_throwers(root, root),
                                 .needles = {"rank " + std::to_string(root), "user op failed"}},
                                [&] { sr::reduce(comm, in, out, plus_throwing_on(root), root, sr::policy::binomial{}); },
                                [&] { return good_reduce(sr::policy::binomial{}, root); }));
        bool threw = false;
        std::string what;
        try {
            sr::reduce(comm, comm.rank() == odd ? wrong : in, out, std::plus<>{}, root, sr::policy::binomial{});
        } catch (const sr::error& e) {
            threw = true;
            what = e.what();
        }
        if (comm.rank() == root) BOOST_TEST((threw && what.find("dimension mismatch") != std::string::npos), what);
        BOOST_TEST(good_reduce(sr::policy::binomial{}, root));
    }
}

// The windowed root writes an index/value output straight into the
// caller's arrays as its windows fold (one tree), growing them from one
// window's room when it holds nothing itself, or stages two trees' windows
// and merges them. Outputs reused from larger and smaller results, 32- and
// 64-bit indices. A failure part-way through leaves the root's output
// empty, not half written, on the windows and on whole messages.
BOOST_AUTO_TEST_CASE(windowed_roots_write_sparse_outputs_in_place)
{
    auto& comm = world();
    const std::size_t n = 30001;
    const std::plus<> op;
    const any_policy pols[] = {sr::policy::binomial{sr::wire::index_value, 4096}, sr::policy::chain{sr::wire::dense, 0},
                               sr::policy::two_tree{sr::wire::index_value, 2048}, sr::policy::binary{}};
    for (const auto& pol : pols)
        for (int root : roots())
            for (const double density : {0.3, 1.0})
                for (const bool root_empty : {false, true}) {
                    auto input = [&](int r) {
                        if (root_empty && r == root) return std::vector<double>(n, 0.0);
                        return input_of<double>(r, comm.size(), n, density, pattern::uniform, op, 41);
                    };
                    std::vector<double> want(n, 0.0); // checked on the root only
                    if (comm.rank() == root)
                        for (int r = 0; r < comm.size(); ++r) want = dense_fold(want, input(r), op);
                    const auto mine = input(comm.rank());
                    Eigen::SparseVector<double> ein, eout(static_cast<Eigen::Index>(n));
                    sr::convert_into(ein, mine);
                    for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n); i += 2) eout.insertBack(i) = -3.0; // stale
                    sr::index_value_vector<double, std::uint64_t> wide;
                    wide.reset(n);
                    wide.push_back(5, -1.0); // stale
                    std::visit([&](const auto& p) {
                        sr::reduce(comm, ein, eout, op, root, p);
                        sr::reduce(comm, sr::to_index_value(mine), wide, op, root, p);
                    }, pol);
                    const std::string ctx = std::string("policy ") + std::to_string(pol.index()) + " root " +
                                            std::to_string(root) + " density " + std::to_string(density) +
                                            (root_empty ? " root empty" : "");
                    BOOST_TEST(all_ok(comm.rank() != root ||
                                      (matches(sr::to_dense(eout), want) &&
                                       matches(sr::to_dense(wide), want))),
                               ctx);
                    // a smaller result into the same output
                    const auto sparse_in = input_of<double>(comm.rank(), comm.size(), n, 0.001, pattern::zipf, op, 43);
                    sr::convert_into(ein, sparse_in);
                    std::visit([&](const auto& p) { sr::reduce(comm, ein, eout, op, root, p); }, pol);
                    BOOST_TEST(all_ok(comm.rank() != root ||
                                      matches(sr::to_dense(eout),
                                              serial_fold<double>(comm.size(), n, 0.001, pattern::zipf, op, 43))),
                               ctx << ", then a smaller result");
                }
    // the output is the root's input: its entries are read as the windows fold
    for (const auto& pol : pols)
        for (int root : roots()) {
            const auto mine = input_of<double>(comm.rank(), comm.size(), n, 0.6, pattern::uniform, op, 45);
            Eigen::SparseVector<double> y;
            sr::convert_into(y, mine);
            std::visit([&](const auto& p) { sr::reduce(comm, y, y, op, root, p); }, pol);
            BOOST_TEST(all_ok(comm.rank() != root ||
                              matches(sr::to_dense(y), serial_fold<double>(comm.size(), n, 0.6, pattern::uniform, op, 45))),
                       "in place, policy " << pol.index() << " root " << root);
        }
    // the op throws on the root after its first windows are written
    if (comm.size() < 2) return;
    for (const auto& pol : pols)
        for (int root : roots()) {
            const auto mine = input_of<double>(comm.rank(), comm.size(), n, 1.0, pattern::uniform, op, 47);
            Eigen::SparseVector<double> ein, eout(static_cast<Eigen::Index>(n));
            sr::convert_into(ein, mine);
            eout.insertBack(3) = -3.0;
            long calls = 0;
            const int me = comm.rank();
            const auto late = sr::make_op(
                [&calls, me, root](double a, double b) -> double {
                    if (me == root && ++calls > 10000) throw std::runtime_error("late failure");
                    return a + b;
                },
                0.0, sr::commutative);
            bool threw = false;
            try {
                std::visit([&](const auto& p) { sr::reduce(comm, ein, eout, late, root, p); }, pol);
            } catch (const sr::error&) {
                threw = true;
            }
            BOOST_TEST(all_ok(me != root || (threw && eout.nonZeros() == 0 && eout.size() == static_cast<Eigen::Index>(n))),
                       "policy " << pol.index() << " root " << root << ": threw " << threw << ", "
                                 << eout.nonZeros() << " entries left");
            BOOST_TEST(good_reduce(sr::policy::binomial{}, root));
        }
}
