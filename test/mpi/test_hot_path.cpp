// The hot path's memory: repeated calls with the same sizes allocate nothing
// (a counting operator new), for plans and for one-shot calls, with Eigen
// sparse vectors in and out; results checked against a serial fold.

#define BOOST_TEST_MODULE hot_path
#include "mpi_fixture.hpp"

#include <sparse_reduce/sparse_reduce.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "../support/replace_new.hpp"

namespace {
std::atomic<std::size_t> allocations{0};
}

bool sparse_reduce_test::allocation_hook(std::size_t)
{
    ++allocations;
    return true;
}

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 1 << 16;

Eigen::SparseVector<double> input_of(int r)
{
    std::mt19937_64 rng(static_cast<unsigned>(r) + 11);
    Eigen::SparseVector<double> v(static_cast<Eigen::Index>(dim));
    for (std::size_t i = 0; i < dim; ++i)
        if (rng() % 100 == 0) v.insertBack(static_cast<Eigen::Index>(i)) = static_cast<double>(r + 1);
    return v;
}

bool matches_serial(const Eigen::SparseVector<double>& out, int ranks)
{
    std::vector<double> want(dim, 0.0);
    for (int r = 0; r < ranks; ++r) {
        const auto v = input_of(r);
        for (Eigen::SparseVector<double>::InnerIterator it(v); it; ++it) want[static_cast<std::size_t>(it.index())] += it.value();
    }
    bool ok = out.size() == static_cast<Eigen::Index>(dim);
    for (std::size_t i = 0; i < dim; ++i) ok = ok && out.coeff(static_cast<Eigen::Index>(i)) == want[i];
    return ok;
}

// Allocations of `calls` repeated calls after `warm` warm-up calls.
template <class F>
std::size_t allocations_of(F&& call, int warm = 3, int calls = 20)
{
    for (int k = 0; k < warm; ++k) call();
    const std::size_t before = allocations.load();
    for (int k = 0; k < calls; ++k) call();
    return allocations.load() - before;
}

} // namespace

BOOST_AUTO_TEST_CASE(plan_calls_allocate_nothing_in_steady_state)
{
    auto& comm = world();
    const auto in = input_of(comm.rank());
    Eigen::SparseVector<double> out;
    auto binomial = sr::make_plan(comm, 0, dim, sr::policy::binomial{});
    const std::size_t a = allocations_of([&] { binomial.reduce(in, out, std::plus<>{}); });
    BOOST_TEST(a == 0u, "binomial plan: " << a << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != 0 || matches_serial(out, comm.size())));
    auto k3 = sr::make_plan(comm, comm.size() - 1, dim, sr::policy::k_ary{.k = 3});
    const std::size_t b = allocations_of([&] { k3.reduce(in, out, std::plus<>{}); });
    BOOST_TEST(b == 0u, "k_ary plan: " << b << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != comm.size() - 1 || matches_serial(out, comm.size())));
}

BOOST_AUTO_TEST_CASE(one_shot_calls_allocate_nothing_in_steady_state)
{
    auto& comm = world();
    const auto in = input_of(comm.rank());
    Eigen::SparseVector<double> out;
    const std::size_t a = allocations_of([&] { sr::reduce(comm, in, out, std::plus<>{}, 0, sr::policy::binomial{}); });
    BOOST_TEST(a == 0u, "one-shot binomial: " << a << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != 0 || matches_serial(out, comm.size())));
    if (comm.size() <= 2) { // automatic measures nothing at P <= 2
        const std::size_t b = allocations_of([&] { sr::reduce(comm, in, out, std::plus<>{}, 0); });
        BOOST_TEST(b == 0u, "one-shot automatic: " << b << " allocations in 20 calls");
        BOOST_TEST(all_ok(comm.rank() != 0 || matches_serial(out, comm.size())));
    }
}

// The windowed executor (dense vectors, explicit wire formats, two trees):
// its nodes' bookkeeping comes from the plan's arena, its result staging
// from the plan's buffers, so repeated calls allocate nothing either.
BOOST_AUTO_TEST_CASE(windowed_plan_calls_allocate_nothing_in_steady_state)
{
    auto& comm = world();
    const int last = comm.size() - 1;
    const auto in = input_of(comm.rank());
    std::vector<double> dense_in(dim, 0.0), dense_out;
    for (Eigen::SparseVector<double>::InnerIterator it(in); it; ++it) dense_in[static_cast<std::size_t>(it.index())] = it.value();
    Eigen::SparseVector<double> out;

    auto two_tree = sr::make_plan(comm, last, dim, sr::policy::two_tree{.segment_bytes = 16384});
    const std::size_t a = allocations_of([&] { two_tree.reduce(in, out, std::plus<>{}); });
    BOOST_TEST(a == 0u, "two_tree plan, sparse in and out: " << a << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != last || matches_serial(out, comm.size())));

    auto chain = sr::make_plan(comm, 0, dim, sr::policy::chain{.wire = sr::wire::index_value, .segment_bytes = 8192});
    const std::size_t b = allocations_of([&] { chain.reduce(in, out, std::plus<>{}); });
    BOOST_TEST(b == 0u, "chain plan, index_value wire: " << b << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != 0 || matches_serial(out, comm.size())));

    dense_out.assign(dim, 0.0);
    auto binomial = sr::make_plan(comm, 0, dim, sr::policy::binomial{});
    const std::size_t c = allocations_of(
        [&] { binomial.reduce(std::span<const double>(dense_in), std::span<double>(dense_out), std::plus<>{}); });
    BOOST_TEST(c == 0u, "binomial plan, dense in and out: " << c << " allocations in 20 calls");
    if (comm.rank() == 0) {
        Eigen::SparseVector<double> as_sparse(static_cast<Eigen::Index>(dim));
        for (std::size_t i = 0; i < dim; ++i)
            if (dense_out[i] != 0) as_sparse.insertBack(static_cast<Eigen::Index>(i)) = dense_out[i];
        BOOST_TEST(matches_serial(as_sparse, comm.size()));
    }
}

// automatic plans: statistics only on the calls that measure (every 64th),
// nothing allocated between.
BOOST_AUTO_TEST_CASE(automatic_plan_calls_allocate_nothing_between_measurements)
{
    auto& comm = world();
    const auto in = input_of(comm.rank());
    Eigen::SparseVector<double> out;
    auto automatic = sr::make_plan(comm, 0, dim, sr::policy::automatic{});
    const std::size_t a = allocations_of([&] { automatic.reduce(in, out, std::plus<>{}); });
    BOOST_TEST(a == 0u, "automatic plan: " << a << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != 0 || matches_serial(out, comm.size())));
    // the windowed executor (an explicit wire) under automatic's selection
    auto windowed = sr::make_plan(comm, 0, dim, sr::policy::automatic{.wire = sr::wire::index_value});
    const std::size_t b = allocations_of([&] { windowed.reduce(in, out, std::plus<>{}); });
    BOOST_TEST(b == 0u, "automatic plan, index_value wire: " << b << " allocations in 20 calls");
    BOOST_TEST(all_ok(comm.rank() != 0 || matches_serial(out, comm.size())));
}

// The communicator's state is remembered per thread (mpi/communicator.hpp's
// attached): freeing a communicator must forget it, since MPI may hand the
// same handle to the next one. Sub-communicators of changing sizes are
// created, used and freed in turn; each reduce must see its own ranks.
BOOST_AUTO_TEST_CASE(freed_communicators_leave_no_remembered_state)
{
    auto& comm = world();
    for (int round = 0; round < 12; ++round) {
        // even rounds: all ranks; odd rounds: the lower half and the upper half
        const int color = round % 2 == 0 ? 0 : (comm.rank() < (comm.size() + 1) / 2 ? 0 : 1);
        MPI_Comm raw = MPI_COMM_NULL;
        MPI_Comm_split(comm, color, comm.rank(), &raw);
        {
            const boost::mpi::communicator sub(raw, boost::mpi::comm_attach);
            const auto in = input_of(sub.rank());
            Eigen::SparseVector<double> out;
            sr::reduce(sub, in, out, std::plus<>{}, 0);
            BOOST_TEST(all_ok(sub.rank() != 0 || matches_serial(out, sub.size())),
                       "round " << round << ": sub-communicator of " << sub.size() << " ranks");
        }
        MPI_Comm_free(&raw);
    }
}

// One-shot calls on a dense input keep their last statistics (counting them
// is a pass over the input) and recount when a sample says the data
// changed. Every result against the serial fold; after each change of
// density the choice is the one a communicator with no history makes.
BOOST_AUTO_TEST_CASE(one_shot_dense_calls_recount_when_the_data_changes)
{
    auto& comm = world();
    constexpr std::size_t n = std::size_t{1} << 18; // above the sample's minimum
    const boost::mpi::communicator fresh_parent(comm, boost::mpi::comm_duplicate);
    auto input = [&](int percent_per_mille) {
        std::vector<double> v(n, 0.0);
        std::mt19937_64 rng(static_cast<unsigned>(comm.rank()) * 7 + static_cast<unsigned>(percent_per_mille));
        for (auto& x : v)
            if (static_cast<int>(rng() % 1000) < percent_per_mille) x = static_cast<double>(rng() % 8 + 1);
        return v;
    };
    for (const int per_mille : {1, 1000, 1, 100, 1000}) {
        const auto in = input(per_mille);
        std::vector<double> out(n), want(n, 0.0);
        boost::mpi::reduce(comm, in.data(), static_cast<int>(n), want.data(), std::plus<double>{}, 0);
        sr::report rep;
        for (int call = 0; call < 3; ++call) {
            rep = sr::reduce(comm, std::span<const double>(in), std::span<double>(out), std::plus<>{}, 0);
            BOOST_TEST(all_ok(comm.rank() != 0 || out == want), per_mille << " per mille, call " << call);
        }
        // a new duplicate each time: no memo, so it counts
        const boost::mpi::communicator fresh(fresh_parent, boost::mpi::comm_duplicate);
        const sr::report first =
            sr::reduce(fresh, std::span<const double>(in), std::span<double>(out), std::plus<>{}, 0);
        BOOST_TEST(rep.algorithm.str() == first.algorithm.str(), per_mille << " per mille");
    }
}

// reduce_scatter keeps what it receives and its rounds on the communicator:
// repeated calls allocate only the ranges they return. A pattern plan's
// calls allocate nothing, into vectors or matrices.
BOOST_AUTO_TEST_CASE(reduce_scatter_and_pattern_plan_calls_allocate_nothing_in_steady_state)
{
    auto& comm = world();
    const auto in = input_of(comm.rank());
    Eigen::SparseVector<double> out;
    const std::size_t a = allocations_of([&] { sr::reduce_scatter(comm, in, out, std::plus<>{}); });
    BOOST_TEST(a == 20u, "reduce_scatter: " << a << " allocations in 20 calls (20 for the ranges returned)");
    {
        // where bytes are dear, the same with slices as bitmaps (each call reads the tuning)
        const scoped_network_tuning tuning;
        std::vector<double> dense(dim, 0.0); // dense enough for bitmaps
        for (std::size_t i = static_cast<std::size_t>(comm.rank()) % 2; i < dim; i += 2) dense[i] = 1.0;
        const std::size_t t = allocations_of([&] { sr::reduce_scatter(comm, std::span<const double>(dense), out, std::plus<>{}); });
        BOOST_TEST(t == 20u, "reduce_scatter with bitmaps: " << t << " allocations in 20 calls (20 for the ranges returned)");
        const auto& counts = sr::detail::state_of(MPI_Comm(comm)).memo<sr::detail::slice_counts>();
        std::size_t bitmaps = 0;
        for (std::size_t r = 0; r < counts.recv.size(); ++r) bitmaps += counts.recv_form[r] == sr::detail::slice_form::bitmap;
        BOOST_TEST(all_ok(comm.size() == 1 || bitmaps > 0), bitmaps << " slices received as bitmaps");
    }
    auto plan = sr::make_pattern_plan<double>(comm, dim, in, sr::pattern_target::all());
    std::vector<double> sums;
    const std::size_t b = allocations_of([&] { plan.reduce(in, sums, std::plus<>{}); });
    BOOST_TEST(b == 0u, "pattern plan: " << b << " allocations in 20 calls");
    // to one root: the other ranks send it values and receive none, so the
    // call agrees by an MPI_Iallreduce, not by status words beside the values
    auto to_root = sr::make_pattern_plan<double>(comm, dim, in, sr::pattern_target::root(0));
    const std::size_t b0 = allocations_of([&] { to_root.reduce(in, sums, std::plus<>{}); });
    BOOST_TEST(b0 == 0u, "pattern plan to rank 0: " << b0 << " allocations in 20 calls");
    std::vector<int> i, j;
    for (Eigen::SparseVector<double>::InnerIterator it(in); it; ++it) {
        i.push_back(static_cast<int>(it.index() / 256));
        j.push_back(static_cast<int>(it.index() % 256));
    }
    auto matrix_plan = sr::make_pattern_plan<double>(comm, dim / 256, 256, i, j);
    Eigen::SparseMatrix<double> by_cols;
    const std::vector<double> values(in.valuePtr(), in.valuePtr() + in.nonZeros());
    const std::size_t c = allocations_of([&] { matrix_plan.reduce(values, by_cols, std::plus<>{}); });
    BOOST_TEST(c == 0u, "matrix pattern plan: " << c << " allocations in 20 calls");
}
