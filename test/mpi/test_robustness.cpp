// Issue 14's robustness rows, each on 1 to 5 and 8 ranks, through the public
// API and against a plain serial fold where a result is expected:
//   row 3   an op that throws something not derived from std::exception
//           (`throw 42;`) fails allreduce and reduce_scatter like any op failure
//   row 5   optimal_binary with a NaN or infinite cost model throws (no endless search)
//   row 7   reduce_scatter(_balanced) with an op throwing on one rank throws on every rank
//   row 8   histogram_sort with std::greater<> is balanced
//   row 10  an intercommunicator is refused by allreduce, reduce_scatter and the sort
//   row 11  error texts carry the "sparse_reduce: " prefix once
// After every failure the ranks run a good call on the same communicator,
// so a call that left a message behind or a rank behind shows up too.

#define BOOST_TEST_MODULE robustness
#include "mpi_fixture.hpp"

#include "../support/reference.hpp"

#include <sparse_reduce/collective/allreduce.hpp>
#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/collective/reduce_scatter.hpp>
#include <sparse_reduce/collective/reduce_scatter_balanced.hpp>
#include <sparse_reduce/sort/histogram_sort.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 300;

// Rank r's input: every even index and every third one from r, value
// r + 1 + i / 128 (sums exact in double), so every range of two indices or
// more holds entries of several ranks: every rank folds with the op.
std::vector<double> input_of(int r)
{
    std::vector<double> v(dim, 0.0);
    for (std::size_t i = 0; i < dim; ++i)
        if (i % 2 == 0 || i % 3 == static_cast<std::size_t>(r) % 3) v[i] = r + 1 + static_cast<double>(i) / 128;
    return v;
}

std::vector<double> serial_sum(int ranks)
{
    std::vector<double> s(dim, 0.0);
    for (int r = 0; r < ranks; ++r) {
        const auto v = input_of(r);
        for (std::size_t i = 0; i < dim; ++i) s[i] += v[i];
    }
    return s;
}

enum class how { std_exception, int_value };

// double + that throws on rank `victim`: a std::runtime_error, or the int 42.
auto plus_throwing_on(int victim, how h)
{
    const int me = world().rank();
    return sr::make_op(
        [me, victim, h](double a, double b) -> double {
            if (me == victim) {
                if (h == how::int_value) throw 42;
                throw std::runtime_error("user op failed");
            }
            return a + b;
        },
        0.0, sr::commutative);
}

bool one_prefix(const std::string& what)
{
    return what.rfind("sparse_reduce: ", 0) == 0 && what.find("sparse_reduce: ", 1) == std::string::npos;
}

// A good allreduce on the same communicator equals the serial fold everywhere.
bool good_allreduce_after()
{
    const auto in = input_of(world().rank());
    std::vector<double> out;
    sr::allreduce(world(), in, out, std::plus<>{}, sr::policy::recursive_doubling{});
    return out == serial_sum(world().size());
}

// A good reduce_scatter: this rank's block of the serial fold.
bool good_reduce_scatter_after()
{
    auto& comm = world();
    const auto in = input_of(comm.rank());
    sr::index_value_vector<double, std::uint64_t> out;
    const auto ranges = sr::reduce_scatter(comm, in, out, std::plus<>{});
    const auto ref = serial_sum(comm.size());
    std::vector<double> got(dim, 0.0);
    bool ok = out.size() == dim;
    for (std::size_t k = 0; k < out.nnz(); ++k) {
        const auto i = out.indices()[k];
        ok = ok && i >= ranges[static_cast<std::size_t>(comm.rank())] && i < ranges[static_cast<std::size_t>(comm.rank()) + 1];
        if (i < dim) got[i] = out.values()[k];
    }
    for (std::size_t i = ranges[static_cast<std::size_t>(comm.rank())]; i < ranges[static_cast<std::size_t>(comm.rank()) + 1]; ++i)
        ok = ok && got[i] == ref[i];
    return ok;
}

using doubling_like = std::variant<sr::policy::recursive_doubling, sr::policy::split_allgather, sr::policy::grouped>;

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
        for (how h : {how::std_exception, how::int_value})
            for (int victim : {0, P - 1}) {
                const auto in = input_of(comm.rank());
                std::vector<double> out;
                std::string what = "(returned normally)";
                try {
                    std::visit([&](const auto& pol) { sr::allreduce(comm, in, out, plus_throwing_on(victim, h), pol); },
                               policies[p]);
                } catch (const sr::error& e) {
                    what = e.what();
                } catch (...) {
                    what = "(not a sparse_reduce::error)";
                }
                const std::string ctx = "policy " + std::to_string(p) + (h == how::int_value ? ", throw 42" : ", runtime_error") +
                                        ", victim " + std::to_string(victim) + ": ";
                // every rank of these algorithms folds something, so the victim's op runs
                BOOST_TEST(what.find("rank " + std::to_string(victim)) != std::string::npos, ctx << what);
                BOOST_TEST(one_prefix(what), ctx << what);
                if (h == how::std_exception) BOOST_TEST(what.find("user op failed") != std::string::npos, ctx << what);
                BOOST_TEST(all_ok(good_allreduce_after()), ctx << "a good call after it");
            }
}

// ---- rows 3, 7 and 11: reduce_scatter and reduce_scatter_balanced ----
BOOST_AUTO_TEST_CASE(reduce_scatter_op_throwing_anything_fails_everywhere)
{
    auto& comm = world();
    if (comm.size() < 2) return;
    const int P = comm.size();
    for (bool balanced : {false, true})
        for (how h : {how::std_exception, how::int_value})
            for (int victim : {0, P - 1}) {
                const auto in = input_of(comm.rank());
                sr::index_value_vector<double, std::uint64_t> out;
                std::string what = "(returned normally)";
                try {
                    if (balanced) sr::reduce_scatter_balanced(comm, in, out, plus_throwing_on(victim, h));
                    else sr::reduce_scatter(comm, in, out, plus_throwing_on(victim, h));
                } catch (const sr::error& e) {
                    what = e.what();
                } catch (...) {
                    what = "(not a sparse_reduce::error)";
                }
                const std::string ctx = std::string(balanced ? "balanced" : "block ranges") +
                                        (h == how::int_value ? ", throw 42" : ", runtime_error") + ", victim " +
                                        std::to_string(victim) + ": ";
                // every rank's range holds indices of several ranks, so every rank folds with the op
                BOOST_TEST(what.find("rank " + std::to_string(victim)) != std::string::npos, ctx << what);
                BOOST_TEST(one_prefix(what), ctx << what);
                if (h == how::std_exception) BOOST_TEST(what.find("user op failed") != std::string::npos, ctx << what);
                BOOST_TEST(all_ok(good_reduce_scatter_after()), ctx << "a good call after it");
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
            std::string what = "(returned normally)";
            try {
                sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::optimal_binary{.model = m});
            } catch (const sr::error& e) {
                what = e.what();
            }
            BOOST_TEST(what.find("cost model must be finite") != std::string::npos,
                       "field " << field << " = " << x << ": " << what);
            BOOST_TEST(one_prefix(what), what);
        }
    // the same communicator still reduces, and a finite model still works
    const auto in = input_of(comm.rank());
    std::vector<double> out;
    sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::optimal_binary{});
    BOOST_TEST(all_ok(comm.rank() != 0 || out == serial_sum(comm.size())));
}

// ---- row 4 (policies are the same everywhere): segments of 1 GiB or more ----
BOOST_AUTO_TEST_CASE(segments_of_a_gibibyte_are_refused_everywhere)
{
    auto& comm = world();
    const std::size_t gib = std::size_t{1} << 30;
    const auto in = input_of(comm.rank());
    std::vector<double> out;
    for (std::size_t seg : {gib, 3 * gib}) {
        std::string what = "(returned normally)";
        try {
            sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::recursive_doubling{.segment_bytes = seg});
        } catch (const sr::error& e) {
            what = e.what();
        }
        BOOST_TEST(what.find("segment_bytes") != std::string::npos, what);
        what = "(returned normally)";
        try {
            sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::split_allgather{.segment_bytes = seg});
        } catch (const sr::error& e) {
            what = e.what();
        }
        BOOST_TEST(what.find("segment_bytes") != std::string::npos, what);
        what = "(returned normally)";
        try {
            sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::binomial{.segment_bytes = seg});
        } catch (const sr::error& e) {
            what = e.what();
        }
        BOOST_TEST(what.find("segment_bytes") != std::string::npos, what);
    }
    BOOST_TEST(all_ok(good_allreduce_after()));
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
            std::string what = "(returned normally)";
            try {
                call();
            } catch (const sr::error& e) {
                what = e.what();
            }
            BOOST_TEST(what.find("intercommunicator") != std::string::npos, what_call << ": " << what);
            BOOST_TEST(one_prefix(what), what);
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
    BOOST_TEST(all_ok(good_allreduce_after()));
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
    std::string what = "(returned normally)";
    try {
        sr::allreduce(comm, in, out, std::plus<>{}, sr::policy::grouped{.tuning_file = path});
    } catch (const sr::error& e) {
        what = e.what();
    }
    BOOST_TEST(what.find("expected 'key = number'") != std::string::npos, what);
    BOOST_TEST(one_prefix(what), what);
    what = "(returned normally)";
    try {
        sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::automatic{.tuning_file = path});
    } catch (const sr::error& e) {
        what = e.what();
    }
    BOOST_TEST(what.find("expected 'key = number'") != std::string::npos, what);
    BOOST_TEST(one_prefix(what), what);
    std::remove(path.c_str());
}

// ---- reduce: rows 1, 2 and 3, every policy, then a good reduce ----

namespace {

using reduce_policy_v = std::variant<sr::policy::binomial, sr::policy::k_ary, sr::policy::binary, sr::policy::chain,
                                     sr::policy::optimal_binary, sr::policy::two_tree, sr::policy::automatic>;
const reduce_policy_v reduce_policies[] = {sr::policy::binomial{}, sr::policy::k_ary{.k = 3}, sr::policy::binary{},
                                           sr::policy::chain{},    sr::policy::optimal_binary{}, sr::policy::two_tree{},
                                           sr::policy::automatic{}};

Eigen::SparseVector<double> eigen_input_of(int r)
{
    const auto d = input_of(r);
    Eigen::SparseVector<double> v(static_cast<Eigen::Index>(dim));
    for (std::size_t i = 0; i < dim; ++i)
        if (d[i] != 0) v.insertBack(static_cast<Eigen::Index>(i)) = d[i];
    return v;
}

// A good reduce of Eigen vectors on the same communicator, under `pol`, at `root`.
bool good_reduce_after(const reduce_policy_v& pol, int root)
{
    auto& comm = world();
    const auto in = eigen_input_of(comm.rank());
    Eigen::SparseVector<double> out;
    std::visit([&](const auto& p) { sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol);
    if (comm.rank() != root) return true;
    const auto want = serial_sum(comm.size());
    bool ok = out.size() == static_cast<Eigen::Index>(dim);
    for (std::size_t i = 0; i < dim; ++i) ok = ok && out.coeff(static_cast<Eigen::Index>(i)) == want[i];
    return ok;
}

// Runs `call` (a reduce that must fail) on every rank: true when the ranks
// that must throw did, with one prefix and `needle` in the text.
template <class Call>
bool fails_as_expected(Call&& call, bool must_throw, const std::string& needle)
{
    bool threw = false, text_ok = true;
    try {
        call();
    } catch (const sr::error& e) {
        threw = true;
        text_ok = one_prefix(e.what()) && std::string(e.what()).find(needle) != std::string::npos;
        if (!text_ok) BOOST_TEST_MESSAGE("unexpected text: " << e.what());
    }
    return (!must_throw || threw) && text_ok;
}

} // namespace

BOOST_AUTO_TEST_CASE(reduce_input_with_a_bad_first_index_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    const int bad = comm.size() - 1;
    for (const auto& pol : reduce_policies)
        for (int root : {0, comm.size() / 2}) {
            for (int kind = 0; kind < 3; ++kind) {
                auto in = eigen_input_of(comm.rank());
                if (comm.rank() == bad) {
                    if (kind == 0) in.innerIndexPtr()[0] = -5;                        // negative first index
                    if (kind == 1) in.innerIndexPtr()[in.nonZeros() - 1] = 100000;  // last index out of range
                    if (kind == 2) in.innerIndexPtr()[0] = static_cast<int>(dim);   // first index out of range
                }
                Eigen::SparseVector<double> out;
                const bool must = comm.rank() == root || comm.rank() == bad;
                const bool ok = fails_as_expected(
                    [&] { std::visit([&](const auto& p) { sr::reduce(comm, in, out, std::plus<>{}, root, p); }, pol); },
                    must, "rank " + std::to_string(bad));
                BOOST_TEST(all_ok(ok), "policy " << pol.index() << " root " << root << " kind " << kind);
                BOOST_TEST(all_ok(good_reduce_after(pol, root)), "policy " << pol.index() << " root " << root);
            }
        }
}

BOOST_AUTO_TEST_CASE(reduce_output_of_the_wrong_size_at_the_root_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    for (const auto& pol : reduce_policies)
        for (int root : {0, comm.size() - 1}) {
            const auto in = input_of(comm.rank());
            std::vector<double> small(dim - 1, 0.0);
            const bool ok = fails_as_expected(
                [&] {
                    std::visit([&](const auto& p) {
                        sr::reduce(comm, std::span<const double>(in), std::span<double>(small), std::plus<>{}, root, p);
                    }, pol);
                },
                comm.rank() == root, "output span");
            BOOST_TEST(all_ok(ok), "policy " << pol.index() << " root " << root);
            BOOST_TEST(all_ok(good_reduce_after(pol, root)), "policy " << pol.index() << " root " << root);
        }
}

BOOST_AUTO_TEST_CASE(reduce_op_throwing_anything_fails_then_the_next_reduce_works)
{
    auto& comm = world();
    const int victim = comm.size() > 1 ? 1 : 0;
    for (const auto& pol : reduce_policies)
        for (how h : {how::std_exception, how::int_value}) {
            const auto in = eigen_input_of(comm.rank());
            Eigen::SparseVector<double> out;
            // the victim folds only if it has children; with none the call succeeds
            bool threw = false;
            try {
                std::visit([&](const auto& p) { sr::reduce(comm, in, out, plus_throwing_on(victim, h), 0, p); }, pol);
            } catch (const sr::error& e) {
                threw = true;
                BOOST_TEST(one_prefix(e.what()), e.what());
            }
            BOOST_TEST(all_ok(true)); // nobody hangs
            (void)threw;
            BOOST_TEST(all_ok(good_reduce_after(pol, 0)), "policy " << pol.index());
        }
}
