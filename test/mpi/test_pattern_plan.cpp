// Fixed-pattern plans (make_pattern_plan) against the serial fold at 1, 2,
// 3, 4, 5 and 8 ranks: reduce_scatter (block and random ranges, empty ones
// too), reduce at several roots and allreduce; patterns as unordered lists
// with repeats, as index_value_vector and Eigen::SparseVector; values and
// outputs dense and sparse; plus, min and a non-commutative op; several
// calls per plan with new values. Then what must throw on every rank, never
// hang: a changed pattern, a wrong count of values or output size, bad
// plans, and an op that throws on one rank; the bytes sent, values only; and
// matrices (COO lists and Eigen::SparseMatrix, row- and column-major) by
// blocks of rows.

#define BOOST_TEST_MODULE pattern_plan
#include "mpi_fixture.hpp"

#include "../support/reference.hpp"

#include <sparse_reduce/collective/pattern_plan.hpp>
#include <sparse_reduce/repr/eigen.hpp>

#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 997; // prime: block ranges of unequal sizes

// Rank r's pattern: `n` indices in any order with repeats (clustered for
// odd salts, so some ranges stay empty), or none on the last rank for salt 3.
std::vector<std::int64_t> pattern_of(int rank, int ranks, unsigned salt)
{
    std::mt19937_64 rng(salt * 131u + static_cast<unsigned>(rank));
    if (salt == 3 && rank == ranks - 1) return {};
    const std::size_t n = 20 + rng() % 200, span = salt % 2 ? dim / 3 : dim;
    std::vector<std::int64_t> p(n);
    for (auto& i : p) i = static_cast<std::int64_t>(rng() % span);
    return p;
}

// The same pattern, sorted and without repeats (a sparse vector's).
std::vector<std::int64_t> sorted_pattern_of(int rank, int ranks, unsigned salt)
{
    auto p = pattern_of(rank, ranks, salt);
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    return p;
}

template <class T, class Op>
std::vector<T> values_of(int rank, std::size_t n, unsigned salt, int call, const Op& op)
{
    std::mt19937_64 rng(salt * 977u + static_cast<unsigned>(rank) * 31u + static_cast<unsigned>(call));
    std::vector<T> v(n);
    for (auto& x : v) x = random_value<T>(rng, op);
    return v;
}

// The serial fold, rank by rank and entry by entry, at every index some
// pattern holds.
template <class T, class Op, class Pattern>
std::map<std::size_t, T> serial_fold(int ranks, unsigned salt, int call, const Op& op, Pattern pattern)
{
    std::map<std::size_t, T> acc;
    for (int r = 0; r < ranks; ++r) {
        const auto p = pattern(r, ranks, salt);
        const auto v = values_of<T>(r, p.size(), salt, call, op);
        for (std::size_t k = 0; k < p.size(); ++k) {
            auto [it, fresh] = acc.try_emplace(static_cast<std::size_t>(p[k]), sr::identity<T>(op));
            it->second = op(it->second, v[k]);
        }
    }
    return acc;
}

// What this rank's output must hold: the fold at the indices of its part.
template <class T>
bool holds(std::span<const std::size_t> support, const std::vector<T>& out, const std::map<std::size_t, T>& want,
           std::size_t lo, std::size_t hi)
{
    std::vector<std::size_t> expect;
    for (const auto& [i, v] : want)
        if (i >= lo && i < hi) expect.push_back(i);
    if (!std::equal(support.begin(), support.end(), expect.begin(), expect.end()) || out.size() != support.size())
        return false;
    for (std::size_t k = 0; k < out.size(); ++k)
        if (!sr::detail::same_value(out[k], want.at(support[k]))) return false;
    return true;
}

std::vector<sr::pattern_target> targets(unsigned salt, std::vector<std::size_t>& ranges)
{
    auto& comm = world();
    ranges.assign(static_cast<std::size_t>(comm.size()) + 1, 0);
    std::mt19937_64 rng(salt);
    for (std::size_t k = 1; k + 1 < ranges.size(); ++k) ranges[k] = rng() % 3 == 0 ? 0 : rng() % (dim + 1);
    std::sort(ranges.begin(), ranges.end());
    ranges.back() = dim;
    std::vector<sr::pattern_target> t{sr::pattern_target::scatter(), sr::pattern_target::scatter(ranges),
                                      sr::pattern_target::all()};
    for (const int root : test_roots()) t.push_back(sr::pattern_target::root(root));
    return t;
}

// Three calls of a plan made from a list pattern, values and output
// std::vectors, each against the serial fold.
template <class T, class Op>
bool check_lists(unsigned salt, const Op& op)
{
    auto& comm = world();
    std::vector<std::size_t> ranges;
    bool ok = true;
    for (const auto& target : targets(salt, ranges)) {
        const auto p = pattern_of(comm.rank(), comm.size(), salt);
        auto plan = sr::make_pattern_plan<T>(comm, dim, p, target);
        const auto r = plan.ranges();
        const bool gets = target.writes(comm.rank());
        const std::size_t lo = target.to_all() ? 0 : r[comm.rank()], hi = target.to_all() ? dim : r[comm.rank() + 1];
        for (int call = 0; call < 3; ++call) {
            std::vector<T> out{sr::identity<T>(op)}; // left alone where this rank gets nothing
            plan.reduce(values_of<T>(comm.rank(), p.size(), salt, call, op), out, op);
            const auto want = serial_fold<T>(comm.size(), salt, call, op, pattern_of);
            ok = ok && (gets ? holds<T>(plan.support(), out, want, lo, hi) : out.size() == 1);
        }
    }
    return ok;
}

} // namespace

BOOST_AUTO_TEST_CASE(list_patterns_fold_like_the_serial_fold_for_every_target)
{
    for (unsigned salt = 1; salt <= 3; ++salt) {
        BOOST_TEST(all_ok(check_lists<double>(salt, std::plus<>{})), "plus, salt " << salt);
        BOOST_TEST(all_ok(check_lists<std::int32_t>(salt, sr::min{})), "min, salt " << salt);
        BOOST_TEST(all_ok(check_lists<affine>(salt, compose{})), "non-commutative, salt " << salt);
    }
}

BOOST_AUTO_TEST_CASE(sparse_vectors_as_pattern_values_and_output)
{
    auto& comm = world();
    for (unsigned salt = 1; salt <= 3; ++salt) {
        const auto p = sorted_pattern_of(comm.rank(), comm.size(), salt);
        Eigen::SparseVector<double> in(static_cast<Eigen::Index>(dim)), out_eigen;
        sr::index_value_vector<double> in_iv(dim), out_iv;
        auto plan = sr::make_pattern_plan<double>(comm, dim, in_iv, sr::pattern_target::all()); // empty: resized below
        bool ok = plan.support().empty();
        for (const auto& target : {sr::pattern_target::scatter(), sr::pattern_target::all()}) {
            for (int call = 0; call < 2; ++call) {
                const auto v = values_of<double>(comm.rank(), p.size(), salt, call, std::plus<>{});
                in.setZero();
                in_iv.reset(dim);
                for (std::size_t k = 0; k < p.size(); ++k) {
                    in.insertBack(static_cast<Eigen::Index>(p[k])) = v[k];
                    in_iv.push_back(static_cast<std::uint32_t>(p[k]), v[k]);
                }
                if (call == 0) plan = sr::make_pattern_plan<double>(comm, dim, in, target);
                plan.reduce(in, out_eigen, std::plus<>{});
                plan.reduce(in_iv, out_iv, std::plus<>{});
                const auto want = serial_fold<double>(comm.size(), salt, call, std::plus<>{}, sorted_pattern_of);
                const auto r = plan.ranges();
                const std::size_t lo = target.to_all() ? 0 : r[comm.rank()], hi = target.to_all() ? dim : r[comm.rank() + 1];
                const std::vector<double> got_eigen(out_eigen.valuePtr(), out_eigen.valuePtr() + out_eigen.nonZeros());
                const std::vector<double> got_iv(out_iv.values().begin(), out_iv.values().end());
                ok = ok && holds<double>(plan.support(), got_eigen, want, lo, hi) &&
                     holds<double>(plan.support(), got_iv, want, lo, hi) && out_eigen.size() == static_cast<Eigen::Index>(dim) &&
                     std::equal(out_iv.indices().begin(), out_iv.indices().end(), plan.support().begin(), plan.support().end());
            }
        }
        BOOST_TEST(all_ok(ok), "salt " << salt);
    }
}

namespace {

// Every rank throws sr::error whose text holds `needle`.
template <class F>
bool throws_everywhere(F&& f, const std::string& needle)
{
    bool threw = false;
    try {
        f();
    } catch (const sr::error& e) {
        threw = std::string(e.what()).find(needle) != std::string::npos;
        if (!threw) BOOST_TEST_MESSAGE("rank " << world().rank() << ": " << e.what());
    }
    return all_ok(threw);
}

} // namespace

// A plan whose values go from every rank to every other (every even index:
// each rank's pattern reaches every range) agrees on a call off the plan by
// status words beside the values (scatter and all targets); a plan to one
// root by an MPI_Iallreduce. With ranks 1 and P - 1 off the plan, every rank
// throws naming rank 1 (rank 0 alone at one rank), and the plan still works.
BOOST_AUTO_TEST_CASE(a_call_off_a_plan_of_every_pair_throws_naming_the_lowest_rank)
{
    auto& comm = world();
    const int P = comm.size();
    const int lowest = P > 1 ? 1 : 0;
    std::vector<std::int64_t> even;
    for (std::size_t i = 0; i < dim; i += 2) even.push_back(static_cast<std::int64_t>(i));
    for (const auto& target : {sr::pattern_target::scatter(), sr::pattern_target::all(), sr::pattern_target::root(0)}) {
        auto plan = sr::make_pattern_plan<double>(comm, dim, even, target);
        std::vector<double> out;
        const bool off = comm.rank() == lowest || comm.rank() == P - 1;
        std::vector<double> values(even.size() + (off ? 1 : 0), 1.0);
        BOOST_TEST(throws_everywhere([&] { plan.reduce(values, out, std::plus<>{}); },
                                     "failed on rank " + std::to_string(lowest) + ":"));
        values.assign(even.size(), 1.0);
        plan.reduce(values, out, std::plus<>{});
        bool ok = !target.writes(comm.rank()) || out.size() == plan.support().size();
        for (const double v : out) ok = ok && v == P;
        BOOST_TEST(all_ok(ok));
    }
}

BOOST_AUTO_TEST_CASE(a_call_off_the_plan_throws_on_every_rank_and_the_plan_still_works)
{
    auto& comm = world();
    const int bad = comm.size() - 1;
    const auto p = sorted_pattern_of(comm.rank(), comm.size(), 1);
    sr::index_value_vector<double> in(dim);
    for (const auto i : p) in.push_back(static_cast<std::uint32_t>(i), 1.0);
    auto plan = sr::make_pattern_plan<double>(comm, dim, in);
    std::vector<double> out;

    sr::index_value_vector<double> moved(dim); // one index moved on the last rank
    for (std::size_t k = 0; k < p.size(); ++k)
        moved.push_back(static_cast<std::uint32_t>(p[k] + (comm.rank() == bad && k + 1 == p.size() && p[k] + 1 < static_cast<std::int64_t>(dim) ? 1 : 0)), 1.0);
    if (!p.empty() && p.back() + 1 < static_cast<std::int64_t>(dim))
        BOOST_TEST(throws_everywhere([&] { plan.reduce(moved, out, std::plus<>{}); }, "differs from the plan's"));

    std::vector<double> values(p.size() + (comm.rank() == bad ? 1 : 0), 1.0);
    BOOST_TEST(throws_everywhere([&] { plan.reduce(values, out, std::plus<>{}); }, "values for a pattern of"));

    std::vector<double> room(plan.support().size() + (comm.rank() == bad ? 1 : 0));
    BOOST_TEST(throws_everywhere([&] { plan.reduce(in, std::span<double>(room), std::plus<>{}); }, "output span"));

    plan.reduce(in, out, std::plus<>{}); // the plan is whole after failed calls
    bool ok = out.size() == plan.support().size();
    std::map<std::size_t, double> want;
    for (int r = 0; r < comm.size(); ++r)
        for (const auto i : sorted_pattern_of(r, comm.size(), 1)) want[static_cast<std::size_t>(i)] += 1.0;
    for (std::size_t k = 0; ok && k < out.size(); ++k) ok = out[k] == want.at(plan.support()[k]);
    BOOST_TEST(all_ok(ok));

    // with check_indices off only the count is compared: the moved index folds at the plan's slot
    auto unchecked = sr::make_pattern_plan<double>(comm, dim, in, sr::pattern_target::scatter(), {.check_indices = false});
    BOOST_TEST(all_ok([&] {
        try {
            unchecked.reduce(moved, out, std::plus<>{});
            return out.size() == unchecked.support().size();
        } catch (const sr::error&) {
            return false;
        }
    }()));
}

BOOST_AUTO_TEST_CASE(bad_plans_throw_on_every_rank)
{
    auto& comm = world();
    const int bad = comm.size() - 1;
    std::vector<std::int64_t> p{0, 5, 9};
    if (comm.rank() == bad) p.push_back(static_cast<std::int64_t>(dim));
    BOOST_TEST(throws_everywhere([&] { sr::make_pattern_plan<double>(comm, dim, p); }, "outside the dimension"));
    p.back() = -1;
    if (comm.rank() == bad) BOOST_TEST(throws_everywhere([&] { sr::make_pattern_plan<double>(comm, dim, p); }, "negative"));
    else BOOST_TEST(throws_everywhere([&] { sr::make_pattern_plan<double>(comm, dim, std::vector<int>{1}); }, "negative"));
    const std::vector<int> fine{1, 2};
    if (comm.size() > 1)
        BOOST_TEST(throws_everywhere([&] { sr::make_pattern_plan<double>(comm, comm.rank() == bad ? dim + 1 : dim, fine); },
                                     "dimension"));
    BOOST_TEST(throws_everywhere(
        [&] { sr::make_pattern_plan<double>(comm, dim, fine, sr::pattern_target::root(comm.size())); }, "is not a rank"));
    if (comm.size() > 1)
        BOOST_TEST(throws_everywhere(
            [&] {
                sr::make_pattern_plan<double>(comm, dim, fine,
                                              comm.rank() == bad ? sr::pattern_target::all() : sr::pattern_target::scatter());
            },
            "different index ranges"));
}

namespace {

// Throws on the last rank when it folds a value of 99.
struct picky_plus {
    double operator()(double a, double b) const
    {
        if (b == 99 && world().rank() == world().size() - 1) throw std::runtime_error("picky_plus saw 99");
        return a + b;
    }
    double identity() const { return 0; }
};

} // namespace

BOOST_AUTO_TEST_CASE(an_op_that_throws_on_one_rank_throws_everywhere)
{
    auto& comm = world();
    const std::vector<int> p{0, static_cast<int>(dim) - 1}; // both ends: every rank sends to the first and last owner
    for (const auto& target : {sr::pattern_target::scatter(), sr::pattern_target::all(), sr::pattern_target::root(0)}) {
        auto plan = sr::make_pattern_plan<double>(comm, dim, p, target);
        std::vector<double> out, values{1, 99};
        const bool last_folds = !plan.support().empty() && plan.support().back() == dim - 1;
        const bool any = boost::mpi::all_reduce(comm, last_folds && comm.rank() == comm.size() - 1 ? 1 : 0, std::plus<>{}) > 0;
        if (any) BOOST_TEST(throws_everywhere([&] { plan.reduce(values, out, picky_plus{}); }, "picky_plus saw 99"));
        values = {1, 2};
        plan.reduce(values, out, picky_plus{});
        bool ok = !target.writes(comm.rank()) || out.size() == plan.support().size();
        for (std::size_t k = 0; ok && k < out.size(); ++k)
            ok = out[k] == (plan.support()[k] == 0 ? 1.0 : 2.0) * comm.size();
        BOOST_TEST(all_ok(ok));
    }
}

BOOST_AUTO_TEST_CASE(a_call_sends_values_only)
{
    auto& comm = world();
    const auto p = pattern_of(comm.rank(), comm.size(), 1);
    auto plan = sr::make_pattern_plan<double>(comm, dim, p);
    std::vector<double> out;
    const sr::report r = plan.reduce(std::vector<double>(p.size(), 1.0), out, std::plus<>{});
    const auto ranges = plan.ranges();
    std::size_t away = 0; // entries owned by another rank
    for (const auto i : p)
        if (static_cast<std::size_t>(i) < ranges[comm.rank()] || static_cast<std::size_t>(i) >= ranges[comm.rank() + 1]) ++away;
    BOOST_TEST(r.bytes_sent == away * sizeof(double));
    const auto sent = boost::mpi::all_reduce(comm, r.bytes_sent, std::plus<>{});
    const auto received = boost::mpi::all_reduce(comm, r.bytes_received, std::plus<>{});
    BOOST_TEST(sent == received);
}

namespace {

// Rank r's COO entries of an m x m matrix: the 3 x 3 blocks of "elements"
// (i, i + 1, i + 2) for i = r, r + P, ..., so neighbouring ranks share rows,
// and repeats within a rank; value of entry k: from (rank, call, k).
struct coo {
    std::vector<int> i, j;
    std::vector<double> v;
};

coo coo_of(int rank, int ranks, std::size_t m, int call)
{
    coo c;
    for (std::size_t e = static_cast<std::size_t>(rank); e + 2 < m; e += static_cast<std::size_t>(ranks))
        for (std::size_t a = 0; a < 3; ++a)
            for (std::size_t b = 0; b < 3; ++b) {
                c.i.push_back(static_cast<int>(e + a));
                c.j.push_back(static_cast<int>(e + b));
                c.v.push_back(static_cast<double>((rank + 1) * (call + 2)) + static_cast<double>(c.v.size() % 5) / 4);
            }
    return c;
}

std::map<std::pair<int, int>, double> matrix_fold(int ranks, std::size_t m, int call)
{
    std::map<std::pair<int, int>, double> sum;
    for (int r = 0; r < ranks; ++r) {
        const coo c = coo_of(r, ranks, m, call);
        for (std::size_t k = 0; k < c.v.size(); ++k) sum[{c.i[k], c.j[k]}] += c.v[k];
    }
    return sum;
}

// out holds exactly the fold's entries in rows [r0, r1), compressed.
template <class M>
bool holds_rows(const M& out, const std::map<std::pair<int, int>, double>& want, std::size_t m, std::size_t r0, std::size_t r1)
{
    if (out.rows() != static_cast<Eigen::Index>(m) || out.cols() != static_cast<Eigen::Index>(m) || !out.isCompressed())
        return false;
    std::size_t expect = 0;
    for (const auto& [at, v] : want)
        if (static_cast<std::size_t>(at.first) >= r0 && static_cast<std::size_t>(at.first) < r1) {
            ++expect;
            if (out.coeff(at.first, at.second) != v) return false;
        }
    return static_cast<std::size_t>(out.nonZeros()) == expect;
}

} // namespace

BOOST_AUTO_TEST_CASE(matrices_from_coo_lists_and_from_eigen_fold_by_row_blocks)
{
    auto& comm = world();
    const auto me = static_cast<std::size_t>(comm.rank());
    const std::size_t m = 53;
    const auto rows = sr::block_ranges(m, comm.size());
    for (const auto& target : {sr::pattern_target::scatter(), sr::pattern_target::all(), sr::pattern_target::root(0)}) {
        const coo c0 = coo_of(comm.rank(), comm.size(), m, 0);
        auto plan = sr::make_pattern_plan<double>(comm, m, m, c0.i, c0.j, target);
        Eigen::SparseMatrix<double, Eigen::RowMajor> by_rows;
        Eigen::SparseMatrix<double> by_cols;
        bool ok = true;
        for (int call = 0; call < 2; ++call) {
            const coo c = coo_of(comm.rank(), comm.size(), m, call);
            plan.reduce(c.v, by_rows, std::plus<>{});
            plan.reduce(std::span<const double>(c.v), by_cols, std::plus<>{});
            const auto want = matrix_fold(comm.size(), m, call);
            const auto owned = plan.ranges(); // entries: rows times m
            const std::size_t r0 = target.to_all() ? 0 : owned[me] / m, r1 = target.to_all() ? m : owned[me + 1] / m;
            if (target.writes(comm.rank()))
                ok = ok && holds_rows(by_rows, want, m, r0, r1) && holds_rows(by_cols, want, m, r0, r1);
        }
        BOOST_TEST(all_ok(ok));
    }
    // the pattern and the values of an Eigen matrix assembled on each rank
    for (int call = 0; call < 2; ++call) {
        const coo c = coo_of(comm.rank(), comm.size(), m, call);
        std::vector<Eigen::Triplet<double>> t;
        for (std::size_t k = 0; k < c.v.size(); ++k) t.emplace_back(c.i[k], c.j[k], c.v[k]);
        Eigen::SparseMatrix<double> local(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(m)), out;
        local.setFromTriplets(t.begin(), t.end()); // sums repeats, column-major
        auto plan = sr::make_pattern_plan<double>(comm, local);
        plan.reduce(local, out, std::plus<>{});
        BOOST_TEST(all_ok(holds_rows(out, matrix_fold(comm.size(), m, call), m, rows[me], rows[me + 1])));
        // another structure on the last rank: every rank throws
        Eigen::SparseMatrix<double> other = local;
        if (comm.rank() == comm.size() - 1) other.coeffRef(0, static_cast<Eigen::Index>(m) - 1) = 1.0;
        other.makeCompressed();
        BOOST_TEST(throws_everywhere([&] { plan.reduce(other, out, std::plus<>{}); }, "stored entries for a pattern"));
    }
    // 4 x 6 on the last rank, 6 x 4 elsewhere: the same ranges of entries, another shape
    if (comm.size() > 1) {
        const bool last = comm.rank() == comm.size() - 1;
        const std::vector<int> i{0}, j{0};
        BOOST_TEST(throws_everywhere([&] { sr::make_pattern_plan<double>(comm, last ? 4 : 6, last ? 6 : 4, i, j); },
                                     "different index ranges"));
    }
    // values and out one object
    const coo c = coo_of(comm.rank(), comm.size(), m, 0);
    auto vector_plan = sr::make_pattern_plan<double>(comm, m * m, std::vector<std::size_t>(c.i.begin(), c.i.end()));
    std::vector<double> both = c.v;
    BOOST_TEST(throws_everywhere([&] { vector_plan.reduce(both, both, std::plus<>{}); }, "the same object"));
}

namespace {

// Started calls against the blocking call of the same plan, for every
// target: three calls in flight on three plans, completed in reverse order
// (and, on odd ranks, in order), each result the serial fold; the report's
// bytes and messages the blocking call's.
template <class T, class Op>
bool check_started(unsigned salt, const Op& op)
{
    auto& comm = world();
    std::vector<std::size_t> ranges;
    bool ok = true;
    for (const auto& target : targets(salt, ranges)) {
        const auto p = pattern_of(comm.rank(), comm.size(), salt);
        auto a = sr::make_pattern_plan<T>(comm, dim, p, target), b = sr::make_pattern_plan<T>(comm, dim, p, target),
             c = sr::make_pattern_plan<T>(comm, dim, p, target);
        const auto r = a.ranges();
        const bool gets = target.writes(comm.rank());
        const std::size_t lo = target.to_all() ? 0 : r[comm.rank()], hi = target.to_all() ? dim : r[comm.rank() + 1];
        std::vector<T> va = values_of<T>(comm.rank(), p.size(), salt, 0, op),
                       vb = values_of<T>(comm.rank(), p.size(), salt, 1, op),
                       vc = values_of<T>(comm.rank(), p.size(), salt, 2, op);
        std::vector<T> oa{sr::identity<T>(op)}, ob = oa, oc = oa, blocking_out;
        sr::reduce_request q[3] = {a.start(va, oa, op), b.start(vb, ob, op), c.start(vc, oc, op)};
        const bool reversed = comm.rank() % 2 == 0;
        sr::report rep[3];
        for (int j = 0; j < 3; ++j) {
            const int k = reversed ? 2 - j : j;
            q[k].test();
            rep[k] = q[k].wait();
        }
        const std::vector<T>* outs[3] = {&oa, &ob, &oc};
        for (int call = 0; call < 3; ++call) {
            const auto want = serial_fold<T>(comm.size(), salt, call, op, pattern_of);
            ok = ok && (gets ? holds<T>(a.support(), *outs[call], want, lo, hi) : outs[call]->size() == 1);
        }
        const sr::report blocking = a.reduce(va, blocking_out, op);
        ok = ok && rep[0].bytes_sent == blocking.bytes_sent && rep[0].messages_sent == blocking.messages_sent &&
             rep[0].bytes_received == blocking.bytes_received && rep[0].algorithm.str() == blocking.algorithm.str();
    }
    return ok;
}

} // namespace

BOOST_AUTO_TEST_CASE(started_calls_fold_like_the_serial_fold_for_every_target)
{
    for (unsigned salt = 1; salt <= 2; ++salt) {
        BOOST_TEST(all_ok(check_started<double>(salt, std::plus<>{})), "plus, salt " << salt);
        BOOST_TEST(all_ok(check_started<affine>(salt, compose{})), "non-commutative, salt " << salt);
    }
}

// A started call off the plan (values of another count on the last rank),
// and one whose op throws on the last rank: wait() throws on every rank,
// naming the rank; nothing hangs; a request destroyed early completes; the
// plan's next start completes the call before it.
BOOST_AUTO_TEST_CASE(a_started_call_that_fails_on_one_rank_throws_everywhere)
{
    auto& comm = world();
    const int bad = comm.size() - 1;
    const std::vector<int> p{0, static_cast<int>(dim) - 1}; // every rank sends to the first and last owner
    for (const auto& target : {sr::pattern_target::scatter(), sr::pattern_target::all(), sr::pattern_target::root(0)}) {
        auto plan = sr::make_pattern_plan<double>(comm, dim, p, target);
        std::vector<double> out, values(comm.rank() == bad ? 3 : 2, 1.0);
        BOOST_TEST(throws_everywhere([&] { plan.start(values, out, std::plus<>{}).wait(); },
                                     "rank " + std::to_string(bad)));
        values = {1, 99};
        const bool last_folds = !plan.support().empty() && plan.support().back() == dim - 1;
        const bool any = boost::mpi::all_reduce(comm, last_folds && comm.rank() == bad ? 1 : 0, std::plus<>{}) > 0;
        if (any) {
            const auto run = [&] {
                auto q = plan.start(values, out, picky_plus{});
                while (!q.test()) {
                }
                q.wait();
            };
            BOOST_TEST(throws_everywhere(run, "picky_plus saw 99"));
        }
        values = {1, 2};
        std::vector<double> first, second;
        {
            auto q = plan.start(values, first, std::plus<>{});
        } // completed here
        auto q1 = plan.start(values, first, std::plus<>{});
        auto q2 = plan.start(values, second, std::plus<>{}); // completes q1's call
        BOOST_TEST(q1.done());
        q2.wait();
        q1.wait();
        bool ok = !target.writes(comm.rank()) || (first.size() == plan.support().size() && first == second);
        for (std::size_t k = 0; ok && k < first.size(); ++k)
            ok = first[k] == (plan.support()[k] == 0 ? 1.0 : 2.0) * comm.size();
        BOOST_TEST(all_ok(ok));
    }
}

// Started matrix calls, row- and column-major outputs (the column-major one
// staged in the plan until completion): a blocking call of the same plan
// between start and wait completes the started call first, so each output
// holds its own call's sums; and started calls of two plans in flight.
BOOST_AUTO_TEST_CASE(started_matrix_calls_and_a_blocking_call_between)
{
    auto& comm = world();
    const auto me = static_cast<std::size_t>(comm.rank());
    const std::size_t m = 41;
    for (const auto& target : {sr::pattern_target::scatter(), sr::pattern_target::all(), sr::pattern_target::root(0)}) {
        const coo c0 = coo_of(comm.rank(), comm.size(), m, 0), c1 = coo_of(comm.rank(), comm.size(), m, 1);
        auto plan = sr::make_pattern_plan<double>(comm, m, m, c0.i, c0.j, target);
        auto other = sr::make_pattern_plan<double>(comm, m, m, c0.i, c0.j, target);
        Eigen::SparseMatrix<double> started_cols, blocking_cols;
        Eigen::SparseMatrix<double, Eigen::RowMajor> started_rows;
        auto q = plan.start(c0.v, started_cols, std::plus<>{});
        plan.reduce(c1.v, blocking_cols, std::plus<>{}); // completes q's call first
        BOOST_TEST(q.done());
        q.wait();
        auto q1 = plan.start(c1.v, started_rows, std::plus<>{});
        Eigen::SparseMatrix<double> other_cols;
        auto q2 = other.start(c0.v, other_cols, std::plus<>{});
        q2.wait();
        q1.wait();
        const auto owned = plan.ranges();
        const std::size_t r0 = target.to_all() ? 0 : owned[me] / m, r1 = target.to_all() ? m : owned[me + 1] / m;
        const auto want0 = matrix_fold(comm.size(), m, 0), want1 = matrix_fold(comm.size(), m, 1);
        const bool ok = !target.writes(comm.rank()) ||
                        (holds_rows(started_cols, want0, m, r0, r1) && holds_rows(blocking_cols, want1, m, r0, r1) &&
                         holds_rows(started_rows, want1, m, r0, r1) && holds_rows(other_cols, want0, m, r0, r1));
        BOOST_TEST(all_ok(ok));
    }
}
