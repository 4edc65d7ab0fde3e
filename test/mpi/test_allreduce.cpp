// sparse_reduce::allreduce against the serial fold on EVERY rank, at 1, 2,
// 3, 4, 5 and 8 ranks: each algorithm (reduce_broadcast over several trees,
// recursive_doubling, automatic) × representation (std::vector, the
// std::span drop-in, index_value_vector, Eigen::SparseVector) × operation
// (plus, min, a non-commutative one) × density 0.001 .. 1, plans, and the
// error cases, which must end in exceptions on every rank, never in a hang.

#define BOOST_TEST_MODULE allreduce
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"
#include "../support/reference.hpp"

#include <sparse_reduce/collective/allreduce.hpp>

#include <Eigen/SparseCore>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

using any_policy = std::variant<sr::policy::reduce_broadcast<sr::policy::binomial>,
                                sr::policy::reduce_broadcast<sr::policy::two_tree>,
                                sr::policy::reduce_broadcast<sr::policy::chain>, sr::policy::reduce_broadcast<>,
                                sr::policy::recursive_doubling, sr::policy::automatic, sr::policy::split_allgather,
                                sr::policy::grouped>;

// Groups of whole rows on a (P / q) x q mesh, q the least prime factor of P:
// groups of q consecutive ranks, P / q of them.
sr::policy::grouped whole_row_groups()
{
    const int P = world().size();
    int q = 2;
    while (q < P && P % q != 0) ++q;
    q = std::min(q, P);
    return {.group_rows = 1, .group_cols = q, .mesh_rows = P / q, .mesh_cols = q};
}

// Small segments too, so that the broadcast pipelines over many blocks.
std::vector<any_policy> policies(std::size_t seg)
{
    return {sr::policy::reduce_broadcast<sr::policy::binomial>{.tree = sr::policy::binomial{.segment_bytes = seg}},
            sr::policy::reduce_broadcast<sr::policy::two_tree>{.tree = sr::policy::two_tree{.segment_bytes = seg},
                                         .broadcast_segment_bytes = seg ? 3 * seg : 0},
            sr::policy::reduce_broadcast<sr::policy::chain>{.tree = sr::policy::chain{.wire = sr::wire::index_value}},
            sr::policy::reduce_broadcast<>{},
            sr::policy::recursive_doubling{.segment_bytes = seg},
            sr::policy::automatic{.segment_bytes = seg},
            sr::policy::split_allgather{.segment_bytes = seg},
            sr::policy::split_allgather{.wire = sr::wire::dense, .segment_bytes = seg}, // dense enough: raw
            sr::policy::grouped{.segment_bytes = seg},                  // the model's groups on MPI_Dims_create's mesh
            sr::policy::grouped{.group_rows = 1, .group_cols = 1},      // group size 1: allreduce across all
            whole_row_groups()};
}

// policies(seg)'s entries by name, in its order (test contexts).
const std::vector<std::string>& policy_names()
{
    static const std::vector<std::string> names{
        "reduce_broadcast(binomial)", "reduce_broadcast(two_tree)", "reduce_broadcast(chain, index_value wire)",
        "reduce_broadcast(default)",  "recursive_doubling",         "automatic",
        "split_allgather",            "split_allgather(dense wire)", "grouped(model's groups)",
        "grouped(1 x 1 groups)",      "grouped(whole rows)"};
    return names;
}

enum class repr { vector, span, index_value, eigen };

// One case on this rank: true iff this rank's result equals the fold.
template <class T, class Op>
bool check_case(const any_policy& pol, repr kind, std::size_t n, double density, const Op& op, unsigned salt,
                std::string& why)
{
    auto& comm = world();
    const auto mine = rank_input<T>(comm.rank(), n, density, op, salt);
    const auto want = rank_fold<T>(comm.size(), n, density, op, salt);
    std::vector<T> got;
    sr::report rep;
    try {
        std::visit(
            [&](const auto& p) {
                switch (kind) {
                case repr::vector: rep = sr::allreduce(comm, mine, got, op, p); break;
                case repr::span: {
                    got.assign(n, T{});
                    rep = sr::allreduce(comm, std::span<const T>(mine), std::span<T>(got), op, p);
                    break;
                }
                case repr::index_value: {
                    const auto in = sr::to_index_value(mine, op);
                    sr::index_value_vector<T> out;
                    rep = sr::allreduce(comm, in, out, op, p);
                    got = sr::to_dense(out, op);
                    break;
                }
                case repr::eigen:
                    if constexpr (std::is_same_v<T, double>) {
                        Eigen::SparseVector<double> in(static_cast<Eigen::Index>(n)), out;
                        sr::convert_into(in, mine, op);
                        rep = sr::allreduce(comm, in, out, op, p);
                        got = sr::to_dense(out, op);
                    }
                    break;
                }
            },
            pol);
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
    if (comm.size() > 1 && rep.messages_sent + rep.bytes_received == 0) {
        why = "no traffic: " + rep.algorithm;
        return false;
    }
    const long d = first_difference(got, want);
    if (d >= 0) why = rep.algorithm + ": first difference at " + std::to_string(d);
    return d < 0;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_algorithm_equals_the_serial_fold_on_every_rank)
{
    unsigned salt = 1;
    for (std::size_t seg : {std::size_t{0}, std::size_t{256}})
        for (const auto& pol : policies(seg))
            for (double density : {0.001, 0.01, 0.1, 0.5, 1.0}) {
                const std::size_t n = 3001;
                for (repr kind : {repr::vector, repr::span, repr::index_value, repr::eigen}) {
                    std::string why;
                    const bool ok = check_case<double>(pol, kind, n, density, std::plus<>{}, ++salt, why);
                    BOOST_TEST(all_ok(ok), "plus policy " << pol.index() << " seg " << seg << " density " << density
                                                          << " repr " << int(kind) << ": " << why);
                }
                std::string why;
                bool ok = check_case<double>(pol, repr::index_value, n, density, sr::min{}, ++salt, why);
                BOOST_TEST(all_ok(ok), "min policy " << pol.index() << " density " << density << ": " << why);
                ok = check_case<std::int64_t>(pol, repr::span, n, density, std::bit_or<>{}, ++salt, why);
                BOOST_TEST(all_ok(ok), "bit_or policy " << pol.index() << " density " << density << ": " << why);
                for (repr kind : {repr::vector, repr::span, repr::index_value}) {
                    ok = check_case<affine>(pol, kind, 1500, density, compose{}, ++salt, why);
                    BOOST_TEST(all_ok(ok), "affine policy " << pol.index() << " seg " << seg << " density "
                                                            << density << " repr " << int(kind) << ": " << why);
                }
            }
}

BOOST_AUTO_TEST_CASE(dimensions_zero_and_one)
{
    auto& comm = world();
    for (const auto& pol : policies(0))
        for (std::size_t n : {std::size_t{0}, std::size_t{1}}) {
            const std::vector<double> in(n, comm.rank() % 2 ? 0.0 : 1.0);
            std::vector<double> out;
            bool ok = true;
            try {
                std::visit([&](const auto& p) { sr::allreduce(comm, in, out, std::plus<>{}, p); }, pol);
                ok = out.size() == n && (n == 0 || out[0] == static_cast<double>((comm.size() + 1) / 2));
            } catch (const std::exception&) {
                ok = false;
            }
            BOOST_TEST(all_ok(ok), "policy " << pol.index() << " n " << n);
        }
}

// A plan called repeatedly, with inputs that change between calls.
BOOST_AUTO_TEST_CASE(plans_repeat)
{
    auto& comm = world();
    const std::size_t n = 2000;
    auto rd = sr::make_allreduce_plan(comm, n, sr::policy::recursive_doubling{});
    auto rb = sr::make_allreduce_plan(comm, n, sr::policy::reduce_broadcast<sr::policy::binary>{.tree = sr::policy::binary{}});
    auto au = sr::make_allreduce_plan(comm, n);
    for (unsigned call = 0; call < 6; ++call) {
        const double density = call % 2 ? 0.9 : 0.005;
        const auto mine = rank_input<double>(comm.rank(), n, density, std::plus<>{}, 500 + call);
        const auto want = rank_fold<double>(comm.size(), n, density, std::plus<>{}, 500 + call);
        sr::index_value_vector<double> a, b, c;
        rd.allreduce(mine, a, std::plus<>{});
        rb.allreduce(mine, b, std::plus<>{});
        au.allreduce(mine, c, std::plus<>{});
        BOOST_TEST(all_ok(first_difference(sr::to_dense(a), want) < 0 && first_difference(sr::to_dense(b), want) < 0 &&
                          first_difference(sr::to_dense(c), want) < 0),
                   "call " << call);
    }
}

// Bytes: recursive doubling of sparse inputs sends far less than dense.
BOOST_AUTO_TEST_CASE(sparse_inputs_stay_sparse_on_the_wire)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const std::size_t n = 100000;
    const auto mine = rank_input<double>(comm.rank(), n, 0.001, std::plus<>{}, 77);
    std::vector<double> out;
    const auto rep = sr::allreduce(comm, mine, out, std::plus<>{}, sr::policy::recursive_doubling{});
    // each message at most P * 0.001 * n entries at 16 B, plus headers; dense would be 800 kB
    BOOST_TEST(all_ok(rep.bytes_sent < 4 * rep.messages_sent * (static_cast<std::size_t>(comm.size()) * 200 * 12 + 1000)),
               rep);
    const auto rep2 = sr::allreduce(comm, mine, out, std::plus<>{},
                                    sr::policy::recursive_doubling{.wire = sr::wire::dense});
    // dense blocks, but for a window with no entry, an empty run: here at most the
    // last, short one (1696 elements; the others, 16384, hold about 16 per rank)
    const std::size_t window = sr::default_segment_bytes / sizeof(double);
    BOOST_TEST(all_ok(rep2.bytes_sent >= rep2.messages_sent * (n - n % window) * sizeof(double)), rep2);
}

BOOST_AUTO_TEST_CASE(dimension_mismatch_throws_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int odd = comm.size() - 1;
    const auto pols = policies(256);
    for (std::size_t k = 0; k < pols.size(); ++k) {
        const std::string name = policy_names()[k] + ", rank " + std::to_string(odd) + " of dimension 1001";
        const std::vector<double> in(odd == comm.rank() ? 1001 : 1000, 1.0);
        std::vector<double> out;
        // one-shot: the plan's agreement
        BOOST_TEST(inject_fault({.context = name + ", one-shot", .needles = {"dimension mismatch"}, .agreed = true},
                                [&] { std::visit([&](const auto& p) { sr::allreduce(comm, in, out, std::plus<>{}, p); }, pols[k]); },
                                good_allreduce));
        // a plan's call with the wrong vector on one rank
        BOOST_TEST(inject_fault({.context = name + ", a plan's call", .needles = {"dimension mismatch"}, .agreed = true},
                                [&] {
                                    std::visit(
                                        [&](const auto& p) {
                                            auto plan = sr::make_allreduce_plan(comm, 1000, p);
                                            plan.allreduce(in, out, std::plus<>{});
                                        },
                                        pols[k]);
                                },
                                good_allreduce));
    }
}

// An output span of the wrong size on one rank: its error on every rank.
// (split_allgather and grouped took the output after their updating, out
// of their error handling: that rank left, the others waited forever.)
BOOST_AUTO_TEST_CASE(an_output_of_the_wrong_size_on_one_rank_throws_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int odd = comm.size() - 1;
    const auto pols = policies(256);
    for (std::size_t k = 0; k < pols.size(); ++k) {
        const std::vector<double> in(1000, 1.0);
        std::vector<double> out(odd == comm.rank() ? 999 : 1000);
        BOOST_TEST(inject_fault({.context = policy_names()[k] + ", a 999-element output span on rank " + std::to_string(odd),
                                 .needles = {"output span has 999 elements"},
                                 .agreed = true},
                                [&] {
                                    std::visit([&](const auto& p) {
                                        sr::allreduce(comm, std::span<const double>(in), std::span<double>(out),
                                                      std::plus<>{}, p);
                                    }, pols[k]);
                                },
                                good_allreduce));
    }
}

// grouped with groups of one builds the result in a dense output, as
// recursive_doubling does: the input is read where it is, also when it is
// the output itself (in place), sparse and dense enough to be held dense
// (at one rank: copied into the output).
BOOST_AUTO_TEST_CASE(grouped_groups_of_one_build_in_the_dense_output)
{
    auto& comm = world();
    const std::size_t n = 3000;
    unsigned salt = 4100;
    for (double density : {0.01, 0.3, 1.0}) {
        ++salt;
        const auto mine = rank_input<double>(comm.rank(), n, density, std::plus<>{}, salt);
        const auto want = rank_fold<double>(comm.size(), n, density, std::plus<>{}, salt);
        const sr::policy::grouped ones{.group_rows = 1, .group_cols = 1, .segment_bytes = 1024};
        std::vector<double> out(n, -7.0);
        sr::allreduce(comm, std::span<const double>(mine), std::span<double>(out), std::plus<>{}, ones);
        BOOST_TEST(all_ok(first_difference(out, want) < 0),
                   "density " << density << ": first difference at " << first_difference(out, want));
        std::vector<double> a = mine; // in place: the same array in and out
        sr::allreduce(comm, std::span<const double>(a), std::span<double>(a), std::plus<>{}, ones);
        BOOST_TEST(all_ok(first_difference(a, want) < 0),
                   "density " << density << ", in place: first difference at " << first_difference(a, want));
    }
}

// Full ranges travel raw (split_allgather.hpp): only values, no block
// headers or status words, so at full density a rank of split_allgather
// sends 2 (P - 1) / P of the vector's bytes, exactly, and the result is
// the serial fold's, in rank order (a non-commutative op). Ranges of
// several segments (stream_message_bytes each); ranks whose inputs are full
// beside ranks whose inputs have holes (only full pairs go raw); in and out
// one array (no accumulator in the output there); dense enough ranges under
// the dense wire.
BOOST_AUTO_TEST_CASE(split_allgather_sends_full_ranges_raw)
{
    auto& comm = world();
    const int P = comm.size();
    const std::size_t n = 2 * P * (sr::detail::stream_message_bytes / sizeof(double)) + 13;
    // raw, a rank sends: ranges of n / P elements, give or take one: (P - 1)
    // ranges out, its own range to everyone
    const auto ranges = sr::block_ranges(n, P);
    const std::size_t mine = ranges[static_cast<std::size_t>(comm.rank()) + 1] - ranges[static_cast<std::size_t>(comm.rank())];
    const std::size_t raw_bytes = ((n - mine) + static_cast<std::size_t>(P - 1) * mine) * sizeof(double);
    // holes: none on every rank, or on odd ranks in the first half of the index space
    for (bool holes : {false, true}) {
        const auto value = [&](int r, std::size_t i) {
            if (holes && r % 2 && i < n / 2 && i % 3 == 0) return 0.0;
            return 1 + static_cast<double>((i * 7 + static_cast<std::size_t>(r)) % 1024) / 1024;
        };
        std::vector<double> in(n), want(n, 0.0), out(n, -1.0);
        for (std::size_t i = 0; i < n; ++i) {
            in[i] = value(comm.rank(), i);
            for (int r = 0; r < P; ++r) want[i] += value(r, i);
        }
        const auto rep = sr::allreduce(comm, std::span<const double>(in), std::span<double>(out), std::plus<>{},
                                       sr::policy::split_allgather{});
        BOOST_TEST(all_ok(first_difference(out, want) < 0), "holes " << holes << ": first difference at "
                                                                     << first_difference(out, want));
        if (!holes && P > 1)
            BOOST_TEST(all_ok(rep.bytes_sent == raw_bytes), "bytes sent " << rep.bytes_sent << ", raw " << raw_bytes);
        if (holes && P > 1) {
            std::vector<double> a = in; // in place: the same array in and out
            sr::allreduce(comm, std::span<const double>(a), std::span<double>(a), std::plus<>{},
                          sr::policy::split_allgather{});
            BOOST_TEST(all_ok(first_difference(a, want) < 0), "in place: first difference at " << first_difference(a, want));
        }
    }
    // With dense blocks on the wire, any range with an entry goes raw too
    // (2/3 and 1/10 full here): the same bytes as full ones, identities and
    // all, folded into a dense accumulator that blends them bit for bit
    // (-0.0 on rank 0 where every other rank has the identity stays -0.0).
    // A rank's wire decides what it sends (its count says so), so ranks with
    // different wire policies still agree.
    for (int mixed = 0; mixed < 4; ++mixed) {
        const std::size_t every = mixed / 2 ? 10 : 3; // an entry where (i + r) % every is 1 (1/10) or not 0 (2/3)
        const auto value = [&](int r, std::size_t i) {
            const std::size_t at = (i + static_cast<std::size_t>(r)) % every;
            if (every == 3 ? at == 0 : at != 1) return 0.0; // the identity
            if (r == 0 && i % 11 == 0) return -0.0;
            return 1 + static_cast<double>((i * 5 + static_cast<std::size_t>(r)) % 512) / 512;
        };
        std::vector<double> in(n), want(n, 0.0), out(n, -1.0);
        for (std::size_t i = 0; i < n; ++i) {
            in[i] = value(comm.rank(), i);
            for (int r = 0; r < P; ++r) want[i] = sr::detail::fold_values(want[i], value(r, i), std::plus<>{}, 0.0);
        }
        const auto wire = mixed % 2 && comm.rank() % 2 ? sr::wire::adaptive : sr::wire::dense;
        const auto rep = sr::allreduce(comm, std::span<const double>(in), std::span<double>(out), std::plus<>{},
                                       sr::policy::split_allgather{.wire = wire});
        BOOST_TEST(all_ok(first_difference(out, want) < 0), "dense wire, mixed " << mixed << ": first difference at "
                                                                                << first_difference(out, want));
        if (mixed % 2 == 0 && P > 1)
            BOOST_TEST(all_ok(rep.bytes_sent == raw_bytes), "dense wire: bytes sent " << rep.bytes_sent << ", raw "
                                                                                       << raw_bytes);
    }
    // rank order, full inputs: an affine map's composition is not commutative
    std::vector<affine> ain(n / 4), aout(n / 4), awant(n / 4, sr::identity<affine>(compose{}));
    for (std::size_t i = 0; i < ain.size(); ++i) {
        const auto f = [&](int r) {
            const auto u = static_cast<std::uint64_t>(r);
            return affine{1 + (i + u) % 5, u + 1};
        };
        ain[i] = f(comm.rank());
        for (int r = 0; r < P; ++r) awant[i] = compose{}(awant[i], f(r));
    }
    sr::allreduce(comm, std::span<const affine>(ain), std::span<affine>(aout), compose{}, sr::policy::split_allgather{});
    BOOST_TEST(all_ok(first_difference(aout, awant) < 0), "affine: first difference at " << first_difference(aout, awant));
}

BOOST_AUTO_TEST_CASE(a_throwing_op_on_one_rank_throws_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int me = comm.rank();
    const auto pols = policies(0);
    for (std::size_t k = 0; k < pols.size(); ++k)
        for (int victim : {0, comm.size() - 1}) {
            const std::vector<double> in(100, 1.0);
            std::vector<double> out;
            // the victim may fold nothing (a leaf of the reduce tree): then the
            // call succeeds everywhere; every rank of recursive doubling folds
            const bool must = pols[k].index() == 4;
            BOOST_TEST(inject_fault(
                {.context = policy_names()[k] + ", the op throws on rank " + std::to_string(victim),
                 .who = [&](int r) { return must && r == victim ? expect::throws : expect::either; },
                 .needles = {"user op failed"},
                 .agreed = true},
                [&] {
                    const auto op = plus_throwing_on(victim, thrown::std_exception, me);
                    std::visit([&](const auto& p) { sr::allreduce(comm, in, out, op, p); }, pols[k]);
                },
                good_allreduce));
        }
}

BOOST_AUTO_TEST_CASE(a_corrupt_input_on_one_rank_throws_everywhere)
{
    auto& comm = world();
    const int bad = comm.size() - 1;
    const auto pols = policies(0);
    for (std::size_t k = 0; k < pols.size(); ++k) {
        Eigen::SparseVector<double> in(50);
        in.insert(3) = 1.0;
        in.insert(7) = 2.0;
        if (comm.rank() == bad) std::swap(in.innerIndexPtr()[0], in.innerIndexPtr()[1]); // indices out of order
        Eigen::SparseVector<double> out;
        BOOST_TEST(inject_fault({.context = policy_names()[k] + ", Eigen indices out of order on rank " + std::to_string(bad),
                                 .needles = {"not strictly increasing"},
                                 .agreed = true},
                                [&] { std::visit([&](const auto& p) { sr::allreduce(comm, in, out, std::plus<>{}, p); }, pols[k]); },
                                good_allreduce));
    }
}

// The model automatic decides with: sparse results favour recursive
// doubling; dense ones at many ranks favour reduce then broadcast, whose
// pipelines move the result about twice instead of log2 P times.
BOOST_AUTO_TEST_CASE(automatic_model_prefers_by_density)
{
    const sr::cost_model m{};
    const double C = 1 << 20;
    const auto sparse = sr::detail::estimate_allreduce(64, 1e-4 * C, C, 8, 131072, m);
    BOOST_TEST(sparse.recursive_doubling < sparse.reduce_broadcast);
    const auto dense = sr::detail::estimate_allreduce(64, C, C, 8, 131072, m);
    BOOST_TEST(dense.reduce_broadcast < dense.recursive_doubling);
    // split-allgather: best at many ranks and moderate density; for dense
    // data it moves 2 (P-1)/P of the vector per rank, as the pipelines about
    // do, but pays (P - 1) alpha twice, which tells at large P
    const auto mid = sr::detail::estimate_allreduce(64, 1e-2 * C, C, 8, 131072, m);
    BOOST_TEST(mid.split_allgather < std::min(mid.recursive_doubling, mid.reduce_broadcast));
    BOOST_TEST(dense.split_allgather < 0.5 * dense.recursive_doubling);
    BOOST_TEST(std::abs(dense.split_allgather - dense.reduce_broadcast) < 0.1 * dense.reduce_broadcast);
    const auto dense512 = sr::detail::estimate_allreduce(512, C, C, 8, 131072, m);
    BOOST_TEST(dense512.reduce_broadcast < dense512.split_allgather);
    BOOST_TEST(sparse.recursive_doubling < sparse.split_allgather);
    // non-power-of-two P costs recursive doubling a fold and a send back
    BOOST_TEST(sr::detail::estimate_allreduce(5, 1e-3 * C, C, 8, 131072, m).recursive_doubling >
               sr::detail::estimate_allreduce(4, 1e-3 * C, C, 8, 131072, m).recursive_doubling);
    // Into a dense output recursive doubling folds densely from C / 64
    // entries on: at P = 2 and 30% its estimate drops below the others'
    // (measured there: 0.7-1.0 ms against 2.1-2.6 for the others, P = 2,
    // 2^18); below C / 64 nothing changes.
    const auto to_sparse = sr::detail::estimate_allreduce(2, 0.3 * C, C, 8, 131072, m);
    const auto to_dense = sr::detail::estimate_allreduce(2, 0.3 * C, C, 8, 131072, m, true);
    BOOST_TEST(to_dense.recursive_doubling < to_sparse.recursive_doubling);
    BOOST_TEST(to_dense.recursive_doubling < std::min(to_dense.reduce_broadcast, to_dense.split_allgather));
    BOOST_TEST(to_dense.reduce_broadcast == to_sparse.reduce_broadcast);
    BOOST_TEST(sr::detail::estimate_allreduce(2, 1e-3 * C, C, 8, 131072, m, true).recursive_doubling ==
               sr::detail::estimate_allreduce(2, 1e-3 * C, C, 8, 131072, m).recursive_doubling);
    // An input below C / 64 keeps an index/value partial as it grows (the
    // rule applies to the input only): at P = 8 and 1 % the estimate is the
    // same with a dense output, though the partials reach 2-8 %.
    BOOST_TEST(sr::detail::estimate_allreduce(8, 1e-2 * C, C, 8, 131072, m, true).recursive_doubling ==
               sr::detail::estimate_allreduce(8, 1e-2 * C, C, 8, 131072, m).recursive_doubling);
    // Full inputs travel raw in split-allgather (no block encoded or
    // decoded; into a dense output each rank folds its share in place and
    // receives the others' where they go): at P = 2 into a dense output it
    // is then the cheapest (measured at 2^18: 0.5-0.6 ms against recursive
    // doubling's 0.8); at 99 % the blocks are back and it is not.
    for (int P : {2, 8}) {
        const auto full = sr::detail::estimate_allreduce(P, C, C, 8, 131072, m, true);
        BOOST_TEST(full.split_allgather < std::min(full.recursive_doubling, full.reduce_broadcast), "P = " << P);
        BOOST_TEST(full.split_allgather < sr::detail::estimate_allreduce(P, C, C, 8, 131072, m).split_allgather);
    }
    const auto almost = sr::detail::estimate_allreduce(2, 0.99 * C, C, 8, 131072, m, true);
    BOOST_TEST(almost.recursive_doubling < almost.split_allgather);
    // The dense wire (automatic weighs it too): split-allgather sends raw and
    // at 80 % beats its adaptive self, which the model prices as dense
    // bytes there; at 1 % it sends C v bytes per partial, and recursive
    // doubling's sparse partials would decode C elements per step; on a
    // slow network the adaptive wire's fewer bytes win at 30 %.
    for (int P : {2, 8}) {
        const auto dense_wire = sr::detail::estimate_allreduce(P, 0.8 * C, C, 8, 131072, m, true, true);
        const auto adaptive = sr::detail::estimate_allreduce(P, 0.8 * C, C, 8, 131072, m, true);
        BOOST_TEST(dense_wire.split_allgather < adaptive.split_allgather, "P = " << P);
        const auto sparse_dense_wire = sr::detail::estimate_allreduce(P, 0.01 * C, C, 8, 131072, m, true, true);
        const auto sparse_adaptive = sr::detail::estimate_allreduce(P, 0.01 * C, C, 8, 131072, m, true);
        BOOST_TEST(5 * sparse_adaptive.recursive_doubling < sparse_dense_wire.recursive_doubling, "P = " << P);
        BOOST_TEST(5 * sparse_adaptive.split_allgather < sparse_dense_wire.split_allgather, "P = " << P);
    }
    sr::cost_model slow = m;
    slow.beta = 8e-9; // 1 Gbit/s
    BOOST_TEST(sr::detail::estimate_allreduce(2, 0.3 * C, C, 8, 131072, slow, true).recursive_doubling <
               0.95 * sr::detail::estimate_allreduce(2, 0.3 * C, C, 8, 131072, slow, true, true).recursive_doubling);
}

// automatic takes dense blocks for a dense input where they cost the model
// no more (80 %), and the result is the serial fold's; not for an
// index/value input.
BOOST_AUTO_TEST_CASE(automatic_sends_dense_blocks_when_dense_enough)
{
    auto& comm = world();
    const std::size_t n = 40000;
    const auto mine = rank_input<double>(comm.rank(), n, 0.8, std::plus<>{}, 77);
    const auto want = rank_fold<double>(comm.size(), n, 0.8, std::plus<>{}, 77);
    std::vector<double> got(n);
    const auto rep = sr::allreduce(comm, std::span<const double>(mine), std::span<double>(got), std::plus<>{});
    BOOST_TEST(all_ok(first_difference(got, want) < 0), rep.algorithm << ": first difference at "
                                                                       << first_difference(got, want));
    if (comm.size() > 1)
        BOOST_TEST(all_ok(rep.algorithm.find("wire=dense") != std::string::npos), rep.algorithm);
    // an index/value input cannot go raw (its values are not in a row): the adaptive wire
    const auto in = sr::to_index_value(mine, std::plus<>{});
    sr::index_value_vector<double> out;
    const auto sparse_rep = sr::allreduce(comm, in, out, std::plus<>{});
    BOOST_TEST(all_ok(first_difference(sr::to_dense(out, std::plus<>{}), want) < 0), sparse_rep.algorithm);
    BOOST_TEST(all_ok(sparse_rep.algorithm.find("wire=adaptive") != std::string::npos), sparse_rep.algorithm);
}

// Where the tuning's network makes bytes dear, allreduce's adaptive blocks
// travel as bitmaps too (every algorithm automatic may take): the serial
// fold's result on every rank.
BOOST_AUTO_TEST_CASE(bitmap_blocks_on_a_slow_network)
{
    auto& comm = world();
    sr::tuning slow;
    slow.machine = slow.machine.with_network(12e-6, 1.25e8);
    const std::size_t n = 40000;
    unsigned salt = 950;
    for (double density : {0.1, 0.3, 0.6}) {
        const auto mine = rank_input<double>(comm.rank(), n, density, std::plus<>{}, ++salt);
        const auto want = rank_fold<double>(comm.size(), n, density, std::plus<>{}, salt);
        std::vector<double> got(n);
        const auto rep = sr::allreduce(comm, std::span<const double>(mine), std::span<double>(got), std::plus<>{},
                                       sr::policy::automatic{.tuned = slow});
        BOOST_TEST(all_ok(first_difference(got, want) < 0), "density " << density << ": " << rep.algorithm);
        sr::index_value_vector<double> out;
        const auto in = sr::to_index_value(mine, std::plus<>{});
        const auto sparse_rep = sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::automatic{.tuned = slow});
        BOOST_TEST(all_ok(first_difference(sr::to_dense(out, std::plus<>{}), want) < 0),
                   "density " << density << ": " << sparse_rep.algorithm);
    }
}

// The broadcast of reduce_broadcast<two_tree>: two trees from 0 that each
// reach every rank once, and a rank forwards in at most one of them (one
// exception for odd P, as in two_trees()): about the result once per rank,
// where a binomial tree's root sends it log2 P times.
BOOST_AUTO_TEST_CASE(two_tree_broadcast_streams)
{
    for (int P = 1; P <= 40; ++P) {
        std::vector<std::vector<sr::detail::broadcast_stream>> all;
        for (int r = 0; r < P; ++r) all.push_back(sr::detail::broadcast_streams(r, P, true));
        const std::size_t S = all[0].size();
        BOOST_TEST(S == (P < 3 ? 1u : 2u));
        int both = 0;
        for (int r = 1; r < P; ++r) {
            int inner = 0;
            for (const auto& s : all[static_cast<std::size_t>(r)]) inner += !s.children.empty();
            both += inner > 1;
        }
        BOOST_TEST(both <= (P % 2 ? 1 : 0), "P " << P);
        for (std::size_t k = 0; k < S; ++k) {
            // each rank is reached exactly once, from 0, along parent/child links that agree
            std::vector<int> reached(static_cast<std::size_t>(P), 0), frontier{0};
            reached[0] = 1;
            while (!frontier.empty()) {
                const int v = frontier.back();
                frontier.pop_back();
                for (int c : all[static_cast<std::size_t>(v)][k].children) {
                    BOOST_TEST(all[static_cast<std::size_t>(c)][k].parent == v);
                    BOOST_TEST(reached[static_cast<std::size_t>(c)] == 0, "P " << P << " rank " << c << " twice");
                    reached[static_cast<std::size_t>(c)] = 1;
                    frontier.push_back(c);
                }
            }
            BOOST_TEST(std::count(reached.begin(), reached.end(), 1) == P, "P " << P << " stream " << k);
        }
    }
}

// The same array as input and output (an in-place allreduce): recursive
// doubling builds its dense partial in the output, which is then the input
// too; every policy must still give the serial fold on every rank.
// One-shot calls (allreduce(comm, ...)) run in message buffers kept on the
// communicator, as a plan's calls run in the plan's: a loop of one-shot
// calls grows (and zeroes) them once. Before, every call made new ones.
BOOST_AUTO_TEST_CASE(one_shot_calls_keep_their_buffers_on_the_communicator)
{
    auto& comm = world();
    const std::size_t n = 40000;
    std::vector<double> in(n), out(n), want(n);
    for (std::size_t i = 0; i < n; ++i) {
        in[i] = comm.rank() + 1.0 + static_cast<double>(i % 7);
        for (int r = 0; r < comm.size(); ++r) want[i] += r + 1.0 + static_cast<double>(i % 7);
    }
    const auto& b =
        *sr::detail::state_of(MPI_Comm(comm)).memo<sr::detail::oneshot_allreduce_buffers>().buffers;
    sr::allreduce(comm, std::span<const double>(in), std::span<double>(out), std::plus<>{},
                  sr::policy::recursive_doubling{});
    BOOST_TEST(first_difference(out, want) < 0);
    const auto* send = b.send.data();
    const auto* receive = b.receive.data();
    // One rank exchanges nothing; every rank of more sends and receives.
    BOOST_TEST((b.send.capacity() > 0) == (comm.size() > 1));
    BOOST_TEST((b.receive.capacity() > 0) == (comm.size() > 1));
    std::fill(out.begin(), out.end(), 0.0);
    sr::allreduce(comm, std::span<const double>(in), std::span<double>(out), std::plus<>{},
                  sr::policy::recursive_doubling{});
    BOOST_TEST(first_difference(out, want) < 0);
    BOOST_TEST(b.send.data() == send); // the same memory, not grown again
    BOOST_TEST(b.receive.data() == receive);
}

BOOST_AUTO_TEST_CASE(in_place_on_one_array)
{
    auto& comm = world();
    const std::size_t n = 5003;
    for (const auto& pol : policies(0))
        for (double density : {0.3, 1.0}) {
            const auto value = [&](int r, std::size_t i) {
                const bool present = density >= 1.0 || (i * 7 + static_cast<std::size_t>(r) * 3) % 10 < 3;
                return present ? r + 1 + static_cast<double>(i % 64) / 64 : 0.0;
            };
            std::vector<double> a(n), want(n, 0.0);
            for (std::size_t i = 0; i < n; ++i) {
                a[i] = value(comm.rank(), i);
                for (int r = 0; r < comm.size(); ++r) want[i] += value(r, i);
            }
            bool ok = true;
            std::string why;
            try {
                std::vector<double> v = a; // the same std::vector as input and output
                std::visit([&](const auto& p) { sr::allreduce(comm, std::span<const double>(a), std::span<double>(a),
                                                              std::plus<>{}, p); },
                           pol);
                std::visit([&](const auto& p) { sr::allreduce(comm, v, v, std::plus<>{}, p); }, pol);
                long d = first_difference(a, want);
                if (d < 0 && (d = first_difference(v, want)) >= 0) why = "vector: ";
                ok = d < 0;
                if (!ok) why += "first difference at " + std::to_string(d);
            } catch (const std::exception& e) {
                ok = false;
                why = e.what();
            }
            BOOST_TEST(all_ok(ok), "policy " << pol.index() << " density " << density << ": " << why);
        }
}

// On one rank automatic copies a dense input into the output (one pass, no
// model): a span, a std::vector (resized), index/value and Eigen outputs, a
// plan's repeated calls, in place, min's identity, and the errors a dense
// input can have. On more ranks the shortcut never runs.
BOOST_AUTO_TEST_CASE(one_rank_copies_a_dense_input)
{
    auto& comm = world();
    const bool alone = comm.size() == 1;
    const std::size_t n = 3001;
    const auto mine = rank_input<double>(comm.rank(), n, 0.3, std::plus<>{}, 31);
    const auto want = rank_fold<double>(comm.size(), n, 0.3, std::plus<>{}, 31);
    const auto copied = [](const sr::report& r) { return r.algorithm.find("one rank") != std::string::npos; };
    std::vector<double> got(n, -1.0);
    auto rep = sr::allreduce(comm, std::span<const double>(mine), std::span<double>(got), std::plus<>{});
    BOOST_TEST(all_ok(first_difference(got, want) < 0), rep.algorithm);
    BOOST_TEST(all_ok(copied(rep) == alone), rep.algorithm);
    if (alone) BOOST_TEST(rep.bytes_sent + rep.bytes_received + rep.messages_sent == 0u);
    auto plan = sr::make_allreduce_plan(comm, n);
    for (int i = 0; i < 2; ++i) {
        std::vector<double> v(i ? 7 : 0, 5.0); // resized to n
        rep = plan.allreduce(mine, v, std::plus<>{});
        BOOST_TEST(all_ok(first_difference(v, want) < 0), rep.algorithm);
        BOOST_TEST(all_ok(copied(rep) == alone), rep.algorithm);
    }
    sr::index_value_vector<double> sparse; // a sparse output: identities left out
    rep = plan.allreduce(mine, sparse, std::plus<>{});
    BOOST_TEST(all_ok(first_difference(sr::to_dense(sparse, std::plus<>{}), want) < 0), rep.algorithm);
    BOOST_TEST(all_ok(sparse.nnz() == static_cast<std::size_t>(std::count_if(
                                          want.begin(), want.end(), [](double x) { return x != 0.0; }))));
    std::vector<double> a = mine; // in place
    rep = sr::allreduce(comm, std::span<const double>(a), std::span<double>(a), std::plus<>{});
    BOOST_TEST(all_ok(first_difference(a, want) < 0), rep.algorithm);
    Eigen::SparseVector<double> eigen_out;
    rep = sr::allreduce(comm, mine, eigen_out, std::plus<>{});
    BOOST_TEST(all_ok(first_difference(sr::to_dense(eigen_out, std::plus<>{}), want) < 0), rep.algorithm);
    // min: +inf is its identity, copied into a dense output and left out of a sparse one
    std::vector<double> low(n, std::numeric_limits<double>::infinity());
    low[17] = -2.5;
    low[n - 1] = -0.0;
    std::vector<double> low_out(n);
    rep = sr::allreduce(comm, std::span<const double>(low), std::span<double>(low_out), sr::min{});
    BOOST_TEST(all_ok(first_difference(low_out, low) < 0), rep.algorithm);
    sr::index_value_vector<double> low_sparse;
    rep = sr::allreduce(comm, low, low_sparse, sr::min{});
    BOOST_TEST(all_ok(low_sparse.nnz() == 2u), rep.algorithm);
    BOOST_TEST(all_ok(first_difference(sr::to_dense(low_sparse, sr::min{}), low) < 0), rep.algorithm);
    // errors: a wrong output span, a plan's input of another dimension
    const auto throws = [&](const char* needle, auto call) {
        try {
            call();
        } catch (const sr::error& e) {
            return std::string(e.what()).find(needle) != std::string::npos;
        }
        return false;
    };
    std::vector<double> short_out(n - 1);
    BOOST_TEST(all_ok(throws("output span", [&] {
        sr::allreduce(comm, std::span<const double>(mine), std::span<double>(short_out), std::plus<>{});
    })));
    const std::vector<double> longer(n + 1, 1.0);
    std::vector<double> out;
    BOOST_TEST(all_ok(throws("dimension mismatch", [&] { plan.allreduce(longer, out, std::plus<>{}); })));
}

// Two entries per rank in 2^40 elements: every algorithm costs the entries,
// not the dimension (empty windows travel as empty runs). Each call's peak
// memory grows by less than 100 MB (walking 2^40 / 2^17 windows took
// hundreds of MB and a minute a call).
BOOST_AUTO_TEST_CASE(two_entries_in_two_to_the_forty)
{
    auto& comm = world();
    const std::size_t n = std::size_t{1} << 40;
    const auto r = static_cast<std::uint64_t>(comm.rank());
    const auto entries = [n](std::uint64_t k) { // rank k's: one near the start, one far into the vector
        return std::pair{std::vector<std::uint64_t>{k * 131075 + 3, n - 1 - k * (std::uint64_t{1} << 33)},
                         std::vector<double>{1.0 + static_cast<double>(k), 0.25 * static_cast<double>(k + 1)}};
    };
    std::map<std::uint64_t, double> want; // the serial fold, in rank order
    for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(comm.size()); ++k) {
        const auto [idx, val] = entries(k);
        for (std::size_t i = 0; i < idx.size(); ++i) want[idx[i]] += val[i];
    }
    const auto [idx, val] = entries(r);
    const sr::index_value_vector<double, std::uint64_t> in(n, idx, val);
    const auto peak_mb = [] {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        return u.ru_maxrss / 1024; // KiB on Linux
    };
    const auto all = policies(0);
    for (std::size_t p = 0; p < all.size(); ++p) {
        const auto& pol = all[p];
        const std::string& name = policy_names()[p];
        if (name == "reduce_broadcast(chain, index_value wire)") continue; // a windowed wire's reduce walks every window
        sr::index_value_vector<double, std::uint64_t> out;
        const long before = peak_mb();
        bool ok = true;
        std::string why;
        try {
            std::visit([&](const auto& q) { sr::allreduce(comm, in, out, std::plus<>{}, q); }, pol);
        } catch (const std::exception& e) {
            ok = false;
            why = e.what();
        }
        const long grown = peak_mb() - before;
        ok = ok && out.size() == n && out.nnz() == want.size();
        std::size_t k = 0;
        for (const auto& [i, v] : want) ok = ok && out.indices()[k] == i && out.values()[k++] == v;
        BOOST_TEST(all_ok(ok), name << ": " << why);
        BOOST_TEST(all_ok(grown < 100), name << ": peak memory grew by " << grown << " MB");
    }
}
