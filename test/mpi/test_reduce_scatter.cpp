// sparse_reduce::reduce_scatter and reduce_scatter_balanced against the serial
// fold at 1, 2, 3, 4, 5 and 8 ranks: block and caller ranges (empty ones
// too), several sizes and patterns, plus, min, bit_or and a non-commutative
// op, dense / index_value / Eigen inputs and index_value / Eigen outputs;
// the balance of reduce_scatter_balanced under zipf skew against block
// ranges; and bad arguments, which must throw on every rank, never hang.

#define BOOST_TEST_MODULE reduce_scatter
#include "mpi_fixture.hpp"

#include "../support/reference.hpp"

#include <sparse_reduce/collective/reduce_scatter.hpp>
#include <sparse_reduce/sort/reduce_scatter_balanced.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

enum class pattern { uniform, zipf, disjoint, one_rank, empty };

template <class T, class Op>
std::vector<T> input_of(int rank, int ranks, std::size_t n, double density, pattern p, const Op& op, unsigned salt)
{
    std::mt19937_64 rng(salt * 7919u + static_cast<unsigned>(rank));
    switch (p) {
    case pattern::zipf: return random_dense<T>(rng, n, density, op, placement::zipf);
    case pattern::disjoint: return random_dense<T>(rng, n, density, op, placement::disjoint, rank, ranks);
    case pattern::one_rank:
        return rank == ranks - 1 ? random_dense<T>(rng, n, density, op) : std::vector<T>(n, sr::identity<T>(op));
    case pattern::empty: return std::vector<T>(n, sr::identity<T>(op));
    default: return random_dense<T>(rng, n, density, op);
    }
}

template <class T, class Op>
std::vector<T> serial_fold(int ranks, std::size_t n, double density, pattern p, const Op& op, unsigned salt)
{
    std::vector<T> acc(n, sr::identity<T>(op));
    for (int r = 0; r < ranks; ++r) acc = dense_fold(acc, input_of<T>(r, ranks, n, density, p, op, salt), op);
    return acc;
}

// out holds exactly the fold's non-identity entries inside this rank's range.
template <class T, class Op, class Out>
bool owns_its_range(const Out& out, const std::vector<T>& want, const std::vector<std::size_t>& ranges, const Op& op)
{
    const auto me = static_cast<std::size_t>(world().rank());
    if (sr::dimension(out) != want.size() || ranges.size() != static_cast<std::size_t>(world().size()) + 1) return false;
    const T id = sr::identity<T>(op);
    std::vector<T> expect(want.size(), id);
    for (std::size_t i = ranges[me]; i < ranges[me + 1]; ++i) expect[i] = want[i];
    return first_difference(sr::to_dense(out, op), expect) < 0;
}

// Random boundaries from 0 to n (some ranges empty), the same on every rank.
std::vector<std::size_t> random_ranges(std::size_t n, unsigned salt)
{
    std::mt19937_64 rng(salt);
    std::vector<std::size_t> r(static_cast<std::size_t>(world().size()) + 1, 0);
    for (std::size_t k = 1; k + 1 < r.size(); ++k) r[k] = rng() % 4 == 0 ? 0 : rng() % (n + 1);
    std::sort(r.begin(), r.end());
    r.back() = n;
    return r;
}

template <class T, class Op>
bool check_case(std::size_t n, double density, pattern p, const Op& op, unsigned salt, bool custom_ranges)
{
    auto& comm = world();
    const auto in = input_of<T>(comm.rank(), comm.size(), n, density, p, op, salt);
    const auto want = serial_fold<T>(comm.size(), n, density, p, op, salt);
    const auto ranges = custom_ranges ? random_ranges(n, salt) : sr::block_ranges(n, comm.size());
    bool ok = true;
    // dense in, index_value out
    sr::index_value_vector<T> out;
    const auto used = custom_ranges ? sr::reduce_scatter(comm, in, out, op, ranges) : sr::reduce_scatter(comm, in, out, op);
    ok = ok && used == ranges && owns_its_range(out, want, used, op);
    // index_value in, index_value out with 64-bit indices
    sr::index_value_vector<T, std::uint64_t> out64;
    sr::reduce_scatter(comm, sr::to_index_value(in, op), out64, op, ranges);
    ok = ok && owns_its_range(out64, want, ranges, op);
    // the balanced ranges: still exactly the fold, in the ranges it returns
    sr::index_value_vector<T> bal;
    const auto chosen = sr::reduce_scatter_balanced(comm, sr::to_index_value(in, op), bal, op);
    ok = ok && owns_its_range(bal, want, chosen, op);
    return all_ok(ok);
}

} // namespace

BOOST_AUTO_TEST_CASE(block_ranges_split_the_dimension)
{
    BOOST_TEST(sr::block_ranges(10, 3) == (std::vector<std::size_t>{0, 4, 7, 10}));
    BOOST_TEST(sr::block_ranges(2, 4) == (std::vector<std::size_t>{0, 1, 2, 2, 2}));
    BOOST_TEST(sr::block_ranges(0, 2) == (std::vector<std::size_t>{0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(against_the_serial_fold)
{
    unsigned salt = 1;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{20000}})
        for (pattern p : {pattern::uniform, pattern::zipf, pattern::disjoint, pattern::one_rank, pattern::empty})
            for (bool custom : {false, true}) {
                const double d = n > 1000 ? 0.02 : 0.3;
                BOOST_TEST(check_case<double>(n, d, p, std::plus<>{}, ++salt, custom), "plus n " << n << " p " << int(p));
                BOOST_TEST(check_case<affine>(n, d, p, compose{}, ++salt, custom), "affine n " << n << " p " << int(p));
                if (n != 1000) continue;
                BOOST_TEST(check_case<double>(n, d, p, sr::min{}, ++salt, custom));
                BOOST_TEST(check_case<std::int64_t>(n, d, p, std::bit_or<>{}, ++salt, custom));
            }
}

BOOST_AUTO_TEST_CASE(eigen_in_and_out)
{
    auto& comm = world();
    const std::size_t n = 5000;
    const auto dense = input_of<double>(comm.rank(), comm.size(), n, 0.05, pattern::zipf, std::plus<>{}, 99);
    const auto want = serial_fold<double>(comm.size(), n, 0.05, pattern::zipf, std::plus<>{}, 99);
    Eigen::SparseVector<double> in, out;
    sr::convert_into(in, dense);
    const auto r = sr::reduce_scatter(comm, in, out, std::plus<>{});
    BOOST_TEST(all_ok(owns_its_range(out, want, r, std::plus<>{})));
    const auto b = sr::reduce_scatter_balanced(comm, in, out, std::plus<>{});
    BOOST_TEST(all_ok(owns_its_range(out, want, b, std::plus<>{})));
    // rle_vector in, with ranges that leave rank 0 empty
    auto ranges = sr::block_ranges(n, comm.size());
    if (comm.size() > 1) ranges[1] = 0;
    sr::index_value_vector<double> iv;
    sr::reduce_scatter(comm, sr::to_rle(dense), iv, std::plus<>{}, ranges);
    BOOST_TEST(all_ok(owns_its_range(iv, want, ranges, std::plus<>{})));
    BOOST_TEST(all_ok(comm.rank() != 0 || comm.size() == 1 || iv.nnz() == 0));
}

// An index/value input with 32-bit indices is sent from its own arrays; one
// that stores an identity, that is also the output, or whose dimension
// needs 64-bit indices (offsets within the ranges then travel) is copied.
// All fold alike.
BOOST_AUTO_TEST_CASE(inputs_sent_in_place_or_copied_fold_alike)
{
    auto& comm = world();
    const std::size_t n = 3000;
    const auto dense = input_of<double>(comm.rank(), comm.size(), n, 0.1, pattern::uniform, std::plus<>{}, 7);
    const auto want = serial_fold<double>(comm.size(), n, 0.1, pattern::uniform, std::plus<>{}, 7);
    const auto ranges = sr::block_ranges(n, comm.size());
    // the input as its own output
    auto v = sr::to_index_value(dense, std::plus<>{});
    sr::reduce_scatter(comm, v, v, std::plus<>{});
    BOOST_TEST(all_ok(owns_its_range(v, want, ranges, std::plus<>{})));
    // an explicit 0.0 stored where no rank has an entry, and one beside an entry
    Eigen::SparseVector<double> stored(static_cast<Eigen::Index>(n)), out;
    for (std::size_t i = 0; i < n; ++i)
        if (dense[i] != 0 || i % 97 == 0) stored.insertBack(static_cast<Eigen::Index>(i)) = dense[i];
    sr::reduce_scatter(comm, stored, out, std::plus<>{});
    BOOST_TEST(all_ok(owns_its_range(out, want, ranges, std::plus<>{})));
    // a dimension past 2^32: entries at the bottom and the top, ranges of
    // under 2^32 each from three ranks (32-bit offsets), else 64-bit
    const std::size_t huge = (std::size_t{1} << 33) + 5, top = huge - n;
    sr::index_value_vector<double, std::uint64_t> in64(huge), out64;
    for (std::size_t i = 0; i < n; ++i)
        if (dense[i] != 0) in64.push_back(i, dense[i]);
    for (std::size_t i = 0; i < n; ++i)
        if (dense[i] != 0) in64.push_back(top + i, dense[i]);
    const auto used = sr::reduce_scatter(comm, in64, out64, std::plus<>{});
    bool ok = out64.size() == huge;
    std::size_t held = 0;
    const auto me = static_cast<std::size_t>(comm.rank());
    for (std::size_t k = 0; ok && k < out64.nnz(); ++k) {
        const std::size_t i = out64.indices()[k];
        ok = i >= used[me] && i < used[me + 1] && out64.values()[k] == want[i < n ? i : i - top];
    }
    for (std::size_t i = 0; i < n; ++i) {
        held += want[i] != 0 && i >= used[me] && i < used[me + 1];
        held += want[i] != 0 && top + i >= used[me] && top + i < used[me + 1];
    }
    BOOST_TEST(all_ok(ok && held == out64.nnz()));
    // a dimension of 2^32 + 1: its last index needs 33 bits, so offsets travel
    const std::size_t just_over = (std::size_t{1} << 32) + 1;
    sr::index_value_vector<double, std::uint64_t> edge(just_over), edge_out;
    edge.push_back(5, 1.0);
    edge.push_back(just_over - 1, 2.0);
    const auto edge_ranges = sr::reduce_scatter(comm, edge, edge_out, std::plus<>{});
    bool edge_ok = true;
    std::size_t edge_held = 0;
    for (const std::size_t i : {std::size_t{5}, just_over - 1})
        edge_held += i >= edge_ranges[me] && i < edge_ranges[me + 1];
    for (std::size_t k = 0; k < edge_out.nnz(); ++k) {
        const std::size_t i = edge_out.indices()[k];
        edge_ok = edge_ok && (i == 5 || i == just_over - 1) && i >= edge_ranges[me] && i < edge_ranges[me + 1] &&
                  edge_out.values()[k] == (i == 5 ? 1.0 : 2.0) * comm.size();
    }
    BOOST_TEST(all_ok(edge_ok && edge_held == edge_out.nnz()));
}

// Where the tuning makes bytes dear (a network), a slice's indices travel
// in the fewest bytes: listed, a bitmap over its owner's range, or their
// gaps; a slice that fills its range sends no indices, under any tuning.
// Every form folds as the listed one does: results against the serial
// fold, the forms and index bytes each rank received (from the headers,
// kept on the communicator) and the bytes it sent checked.
BOOST_AUTO_TEST_CASE(slices_travel_in_the_fewest_bytes_where_bytes_are_dear)
{
    auto& comm = world();
    const auto me = static_cast<std::size_t>(comm.rank());
    const std::size_t P = static_cast<std::size_t>(comm.size());
    // the forms this rank received in the last call, and its bytes sent
    const auto last = [&] { return sr::detail::state_of(MPI_Comm(comm)).memo<sr::detail::slice_counts>(); };
    const auto received = [&](sr::detail::slice_form f) {
        const auto c = last();
        std::size_t k = 0;
        for (std::size_t r = 0; r < P; ++r) k += r != me && c.recv[r] && c.recv_form[r] == f;
        return k;
    };
    unsigned salt = 500;
    for (const bool network : {true, false}) {
        std::optional<scoped_network_tuning> tuning;
        if (network) tuning.emplace();
        const bool dear = sr::detail::bitmap_blocks(); // a tuning set outside the test may say so too
        if (network || !std::getenv("SPARSE_REDUCE_TUNING")) BOOST_TEST(dear == network);
        for (const double density : {0.01, 0.3, 1.0})
            for (const bool custom : {false, true}) {
                const std::size_t n = 6400;
                BOOST_TEST(check_case<double>(n, density, pattern::uniform, std::plus<>{}, ++salt, custom),
                           "plus density " << density << " network " << network);
                BOOST_TEST(check_case<affine>(n, density, pattern::uniform, compose{}, ++salt, custom),
                           "affine density " << density << " network " << network);
                // the forms of one call with block ranges: dense in, 32-bit global indices out
                const auto in = input_of<double>(comm.rank(), comm.size(), n, density, pattern::uniform, std::plus<>{}, salt);
                sr::index_value_vector<double> out;
                sr::reduce_scatter(comm, in, out, std::plus<>{});
                const auto ranges = sr::block_ranges(n, comm.size());
                const auto c = last();
                // what each slice takes: its values, and nothing (it fills its
                // range), or, where bytes are dear, the fewest of a bitmap of the
                // range, its gaps (a LEB128 varint each, from the range's start,
                // then from one past the index before) and its indices
                struct shape {
                    sr::detail::slice_form form;
                    std::size_t index_bytes;
                };
                const auto shape_of = [&](const std::vector<double>& v, std::size_t lo, std::size_t hi) {
                    std::size_t k = 0, gaps = 0, next = lo;
                    for (std::size_t i = lo; i < hi; ++i) {
                        if (v[i] == 0) continue;
                        ++k;
                        for (std::size_t g = i - next;; g >>= 7) {
                            ++gaps;
                            if (g < 128) break;
                        }
                        next = i + 1;
                    }
                    const std::size_t len = hi - lo, listed = 4 * k, bitmap = 8 * ((len + 63) / 64);
                    if (k != 0 && k == len) return shape{sr::detail::slice_form::full, 0};
                    if (!dear || k == 0) return shape{sr::detail::slice_form::listed, listed};
                    if (gaps < listed && gaps < bitmap) return shape{sr::detail::slice_form::gaps, gaps};
                    return bitmap < listed ? shape{sr::detail::slice_form::bitmap, bitmap}
                                           : shape{sr::detail::slice_form::listed, listed};
                };
                bool forms = true;
                std::size_t bytes = 0, bitmaps = 0, full = 0, gaps = 0;
                for (std::size_t d = 0; d < P; ++d) {
                    if (d == me) continue;
                    std::size_t k = 0; // this rank's entries in rank d's range
                    for (std::size_t i = ranges[d]; i < ranges[d + 1]; ++i) k += in[i] != 0;
                    if (k) bytes += 8 * k + shape_of(in, ranges[d], ranges[d + 1]).index_bytes;
                    // what rank d sent here, by its input
                    const auto theirs = input_of<double>(static_cast<int>(d), comm.size(), n, density, pattern::uniform,
                                                         std::plus<>{}, salt);
                    if (c.recv[d]) {
                        const shape sent = shape_of(theirs, ranges[me], ranges[me + 1]);
                        forms = forms && c.recv_form[d] == sent.form && c.recv_index[d] == sent.index_bytes;
                        bitmaps += c.recv_form[d] == sr::detail::slice_form::bitmap;
                        full += c.recv_form[d] == sr::detail::slice_form::full;
                        gaps += c.recv_form[d] == sr::detail::slice_form::gaps;
                    }
                }
                // and its header to every other rank (9 words and its row of P
                // counts), and its status word where the ranks agreed by them:
                // here, where a new output must allocate
                bytes += sizeof(std::uint64_t) * (P - 1) * (9 + P + (c.status_round ? 1 : 0));
                const std::size_t listed = received(sr::detail::slice_form::listed);
                // the densities reach each form: 1 % takes gaps and 30 % bitmaps
                // only where bytes are dear, 100 % full slices
                if (P > 1 && density == 0.01) forms = forms && (dear ? gaps > 0 : gaps == 0);
                if (P > 1 && density == 0.3) forms = forms && (dear ? bitmaps > 0 : bitmaps == 0);
                if (P > 1 && density == 1.0) forms = forms && full == P - 1;
                BOOST_TEST(all_ok(forms), "forms at density " << density << " network " << network << ": " << bitmaps
                                                                << " bitmaps, " << gaps << " gaps, " << full << " full, "
                                                                << listed << " listed");
                BOOST_TEST(all_ok(c.last.bytes_sent == bytes),
                           "bytes at density " << density << ": " << c.last.bytes_sent << " against " << bytes);
            }
    }
}

// A loop of calls that keeps its output takes one round once its sizes
// settle: from the headers every rank knows that no rank must allocate, so
// the ranks send no status words: the same call into a new output, which
// must allocate, sends 8 (P - 1) bytes more. A call that needs more room
// (a denser input) takes them again; an op that may throw never sends them
// (it agrees in an allreduce after the fold). Above 64 ranks (here: a
// communicator made with the limit lowered) the headers carry no rows, and
// every call takes the status words. Each call against the serial fold,
// with Eigen and index/value outputs.
BOOST_AUTO_TEST_CASE(a_loop_that_keeps_its_output_takes_one_round)
{
    const std::size_t P = static_cast<std::size_t>(world().size()), n = 3000;
    const struct restore { // the limit as it was, however the test ends
        std::size_t limit = sr::detail::header_row_limit;
        ~restore() { sr::detail::header_row_limit = limit; }
    } saved;
    const std::size_t limit = saved.limit;
    const boost::mpi::communicator no_rows(world(), boost::mpi::comm_duplicate);
    for (const bool rows : {true, false}) {
        const boost::mpi::communicator& comm = rows ? world() : no_rows;
        sr::detail::header_row_limit = rows ? limit : 0; // read by a communicator's first call
        const auto& c = sr::detail::state_of(MPI_Comm(comm)).memo<sr::detail::slice_counts>();
        const std::size_t status_bytes = sizeof(std::uint64_t) * (P - 1);
        sr::index_value_vector<double> out;
        Eigen::SparseVector<double> eout;
        // (density, salt, whether the room and outputs hold it already): the
        // same input again, a sparser one, a denser one (it grows the room), again
        const struct {
            double density;
            unsigned salt;
            bool settled;
        } steps[] = {{0.05, 701, false}, {0.05, 701, true}, {0.01, 702, true}, {0.5, 703, false}, {0.5, 703, true}};
        for (const auto& step : steps) {
            const auto in = input_of<double>(comm.rank(), comm.size(), n, step.density, pattern::uniform, std::plus<>{}, step.salt);
            const auto want = serial_fold<double>(comm.size(), n, step.density, pattern::uniform, std::plus<>{}, step.salt);
            const std::string what = std::string(rows ? "rows" : "no rows") + ", density " + std::to_string(step.density);
            const bool status = P > 1 && (!step.settled || !rows);
            const auto ranges = sr::reduce_scatter(comm, in, out, std::plus<>{});
            BOOST_TEST(all_ok(owns_its_range(out, want, ranges, std::plus<>{})), what);
            BOOST_TEST(all_ok(c.status_round == (status || P == 1)), what << ": status words " << c.status_round);
            const std::size_t kept = c.last.bytes_sent;
            sr::reduce_scatter(comm, in, eout, std::plus<>{});
            BOOST_TEST(all_ok(owns_its_range(eout, want, ranges, std::plus<>{})), "Eigen, " << what);
            BOOST_TEST(all_ok(c.last.bytes_sent == kept), "Eigen, " << what << ": " << c.last.bytes_sent << " bytes against " << kept);
            // a new output allocates where the fold has entries: the status words, counted
            sr::index_value_vector<double> fresh;
            sr::reduce_scatter(comm, in, fresh, std::plus<>{});
            BOOST_TEST(all_ok(owns_its_range(fresh, want, ranges, std::plus<>{})), "new output, " << what);
            BOOST_TEST(all_ok(c.last.bytes_sent == kept + (status ? 0 : status_bytes)),
                       "new output, " << what << ": " << c.last.bytes_sent << " bytes against " << kept);
            // an op that may throw sends no status words
            sr::index_value_vector<double> by_make_op;
            sr::reduce_scatter(comm, in, by_make_op, sr::make_op([](double a, double b) { return a + b; }, 0.0, sr::commutative));
            BOOST_TEST(all_ok(owns_its_range(by_make_op, want, ranges, std::plus<>{})), "make_op, " << what);
            BOOST_TEST(all_ok(c.last.bytes_sent == kept - (status ? status_bytes : 0)),
                       "make_op, " << what << ": " << c.last.bytes_sent << " bytes against " << kept);
        }
    }
}

// Past 2^32 indices travel as offsets within the owner's range, 32-bit where
// every range is shorter than 2^32, else 64-bit; under the network's tuning
// their slices take gaps, bitmaps and full forms as global indices do.
// Ranges: the dimension split among the first ranks (one or two), with
// entries near both ends of each (gaps: one of them jumps most of the
// range), then small ones of 64 elements at the top, far from 0 (rank 0
// fills the first of them).
BOOST_AUTO_TEST_CASE(offsets_travel_as_gaps_bitmaps_and_full_slices_too)
{
    auto& comm = world();
    const auto P = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
    scoped_network_tuning tuning;
    const std::size_t small = P >= 3 ? P - 2 : P - 1, big = P - small; // ranges of 64 at the top; the rest
    for (const std::size_t dim : {(std::size_t{1} << 32) + 1000, (std::size_t{1} << 33) + (std::size_t{1} << 20)}) {
        std::vector<std::size_t> ranges(P + 1, 0);
        for (std::size_t r = 1; r <= big; ++r) ranges[r] = (dim - 64 * small) / big * r;
        ranges[big] = dim - 64 * small;
        for (std::size_t r = big + 1; r <= P; ++r) ranges[r] = ranges[r - 1] + 64;
        const auto input = [&](std::size_t rank) {
            sr::index_value_vector<double, std::uint64_t> v(dim);
            const auto value = [&](std::size_t i) { return 1.0 + static_cast<double>(rank) + static_cast<double>(i % 5); };
            for (std::size_t r = 0; r < big; ++r) {
                const std::size_t a = ranges[r], b = ranges[r + 1];
                for (std::size_t j = 0; j < 100; ++j)
                    if ((j + rank) % 3 != 0) v.push_back(a + j, value(a + j));
                for (std::size_t j = 100; j-- > 0;)
                    if ((j + 2 * rank) % 3 != 0) v.push_back(b - 1 - j, value(b - 1 - j));
            }
            for (std::size_t i = ranges[big]; i < dim; ++i)
                if ((rank == 0 && i < ranges[big] + 64) || (i * 7 + rank * 13) % 5 < 3) v.push_back(i, value(i));
            return v;
        };
        std::map<std::size_t, double> want;
        for (std::size_t r = 0; r < P; ++r) {
            const auto v = input(r);
            for (std::size_t k = 0; k < v.nnz(); ++k)
                if (v.indices()[k] >= ranges[me] && v.indices()[k] < ranges[me + 1]) want[v.indices()[k]] += v.values()[k];
        }
        sr::index_value_vector<double, std::uint64_t> out;
        sr::reduce_scatter(comm, input(me), out, std::plus<>{}, ranges);
        bool ok = out.size() == dim && out.nnz() == want.size();
        std::size_t k = 0;
        for (const auto& [i, x] : want) {
            ok = ok && k < out.nnz() && out.indices()[k] == i && out.values()[k] == x;
            ++k;
        }
        BOOST_TEST(all_ok(ok), "dimension " << dim);
        // the owners of the small ranges took bitmaps, and the first one rank 0's full slice
        const auto& c = sr::detail::state_of(MPI_Comm(comm)).memo<sr::detail::slice_counts>();
        std::size_t bitmaps = 0;
        for (std::size_t r = 0; r < P; ++r) bitmaps += r != me && c.recv[r] && c.recv_form[r] == sr::detail::slice_form::bitmap;
        bool forms = true;
        if (P > 1 && me >= big) {
            if (P >= 3) forms = bitmaps > 0;
            if (me == big) forms = forms && c.recv_form[0] == sr::detail::slice_form::full;
        }
        for (std::size_t r = 0; r < P; ++r) // the owners of the large ranges take every slice as gaps
            if (me < big && r != me) forms = forms && c.recv[r] && c.recv_form[r] == sr::detail::slice_form::gaps;
        BOOST_TEST(all_ok(forms), "dimension " << dim << ": " << bitmaps << " bitmaps");
    }
}

// Under zipf skew the balanced ranges keep every rank's share of the result
// within 10% of the average; block ranges do not come close.
BOOST_AUTO_TEST_CASE(balanced_under_zipf)
{
    auto& comm = world();
    const int p = comm.size();
    const std::size_t n = 1 << 20;
    for (double s : {1.0, 1.25, 1.5}) {
        const sr::zipf_profile zipf(n, s);
        std::mt19937_64 rng(17 + static_cast<unsigned>(comm.rank()));
        const auto idx = zipf.sample(rng, 20000);
        const sr::index_value_vector<double> in(n, idx, std::vector<double>(idx.size(), 1.0));
        sr::index_value_vector<double> block, bal;
        sr::reduce_scatter(comm, in, block, std::plus<>{});
        const auto ranges = sr::reduce_scatter_balanced(comm, in, bal, std::plus<>{});
        const auto block_max = boost::mpi::all_reduce(comm, block.nnz(), boost::mpi::maximum<std::size_t>());
        const auto bal_max = boost::mpi::all_reduce(comm, bal.nnz(), boost::mpi::maximum<std::size_t>());
        const auto total = boost::mpi::all_reduce(comm, bal.nnz(), std::plus<>());
        const auto block_total = boost::mpi::all_reduce(comm, block.nnz(), std::plus<>());
        const double avg = static_cast<double>(total) / p;
        BOOST_TEST_MESSAGE("zipf " << s << " P " << p << ": union " << total << ", largest share block "
                                   << block_max / avg << "x, balanced " << bal_max / avg << "x the average");
        BOOST_TEST(total == block_total);
        BOOST_TEST(static_cast<double>(bal_max) <= 1.1 * avg, "zipf " << s);
        if (p > 1) BOOST_TEST(static_cast<double>(block_max) >= 1.5 * avg, "zipf " << s);
        BOOST_TEST(ranges.front() == 0u);
        BOOST_TEST(ranges.back() == n);
    }
}

BOOST_AUTO_TEST_CASE(bad_arguments_throw_everywhere)
{
    auto& comm = world();
    const int me = comm.rank(), p = comm.size();
    const std::vector<double> in(100, 1.0);
    sr::index_value_vector<double> out;
    auto throws = [&](auto&& f) {
        bool threw = false;
        try {
            f();
        } catch (const sr::error&) {
            threw = true;
        }
        return threw;
    };
    auto ranges = sr::block_ranges(100, p);
    // not P + 1 boundaries; not ending at the dimension; decreasing
    std::vector<std::size_t> short_ranges(ranges.begin(), ranges.end() - 1);
    BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, in, out, std::plus<>{}, short_ranges); })));
    auto wrong_end = ranges;
    wrong_end.back() = 99;
    BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, in, out, std::plus<>{}, wrong_end); })));
    if (p > 1) {
        auto decreasing = ranges;
        decreasing[1] = 101; // above the next boundary
        BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, in, out, std::plus<>{}, decreasing); })));
        // bad on one rank only, or different but valid on one rank
        auto mine = ranges;
        if (me == p - 1) mine[1] = 0;
        BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, in, out, std::plus<>{}, mine); })));
        auto bad_here = ranges;
        if (me == 0) bad_here.back() = 7;
        BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, in, out, std::plus<>{}, bad_here); })));
        // ranks disagree on the dimension
        const std::vector<double> odd(me == p / 2 ? 101 : 100, 1.0);
        BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, odd, out, std::plus<>{}); })));
        BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter_balanced(comm, odd, out, std::plus<>{}); })));
    }
    // a corrupt input on one rank
    Eigen::SparseVector<double> e(50);
    e.insert(3) = 1.0;
    e.insert(7) = 2.0;
    if (me == p - 1) std::swap(e.innerIndexPtr()[0], e.innerIndexPtr()[1]);
    BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, e, out, std::plus<>{}); })));
    BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter_balanced(comm, e, out, std::plus<>{}); })));
    BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter_balanced(comm, in, out, std::plus<>{}, me == 0 ? 2.0 : 0.02); })));
    // nothing left in flight: a call afterwards works
    const auto r = sr::reduce_scatter(comm, in, out, std::plus<>{});
    const std::vector<double> want(100, static_cast<double>(p));
    BOOST_TEST(all_ok(owns_its_range(out, want, r, std::plus<>{})));
    // the same where bytes are dear and the slices sent before the verdict
    // travel as bitmaps (every 3rd element) or gaps (every 97th): each rank
    // takes the others' into its drain by the bytes their headers announce
    const scoped_network_tuning tuning;
    for (const std::size_t step : {std::size_t{3}, std::size_t{97}}) {
        const std::size_t n = 6400;
        const auto input = [&](int rank, std::size_t dim) {
            std::vector<double> v(dim, 0.0);
            for (std::size_t i = static_cast<std::size_t>(rank) % 7; i < dim; i += step) v[i] = 1.0;
            return v;
        };
        if (p > 1) {
            auto shifted = sr::block_ranges(n, p);
            if (me == p - 1) shifted[1] += 1;
            BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, input(me, n), out, std::plus<>{}, shifted); })));
            BOOST_TEST(all_ok(throws([&] { sr::reduce_scatter(comm, input(me, me == p / 2 ? n + 1 : n), out, std::plus<>{}); })));
        }
        std::vector<double> sum(n, 0.0);
        for (int q = 0; q < p; ++q)
            for (std::size_t i = 0; i < n; ++i) sum[i] += input(q, n)[i];
        const auto used = sr::reduce_scatter(comm, input(me, n), out, std::plus<>{});
        BOOST_TEST(all_ok(owns_its_range(out, sum, used, std::plus<>{})), "every " << step << "th element");
    }
}
