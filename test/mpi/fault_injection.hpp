#pragma once
// Fault injection for the MPI tests: run a collective with a fault
// on one rank, check which ranks throw sparse_reduce::error and with what
// text, then run a correct collective on the same communicator and check it
// against a serial fold, so a call that left a message queued or a rank
// behind shows up too.
//
//   BOOST_TEST(inject_fault({.context = "binomial, root 0",
//                            .who = reduce_throwers(root, victim),
//                            .needles = {"rank 3", "user op failed"}},
//                           [&] { sr::reduce(comm, in, out, plus_throwing_on(3), root, policy); },
//                           [&] { return good_reduce(policy, root); }));
//
// Include after mpi_fixture.hpp (BOOST_TEST_MODULE defined or not).

#include "mpi_fixture.hpp"

#include <sparse_reduce/collective/allreduce.hpp>
#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/collective/reduce_scatter.hpp>
#include <sparse_reduce/error.hpp>
#include <sparse_reduce/op/make_op.hpp>
#include <sparse_reduce/sparse_reduce.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sparse_reduce_test {

// ---- the faulty ops ----

enum class thrown { std_exception, int_value };

// double + that throws on rank `victim` (of the communicator where this
// process is rank `me`, by default MPI_COMM_WORLD): std::runtime_error("user
// op failed"), or the int 42 (not derived from std::exception).
inline auto plus_throwing_on(int victim, thrown how = thrown::std_exception, int me = world().rank())
{
    return sparse_reduce::make_op(
        [me, victim, how](double a, double b) -> double {
            if (me == victim) {
                if (how == thrown::int_value) throw 42;
                throw std::runtime_error("user op failed");
            }
            return a + b;
        },
        0.0, sparse_reduce::commutative);
}

// ---- who must throw ----

enum class expect { throws, returns, either };
using who_throws = std::function<expect(int rank)>;

inline who_throws everyone_throws()
{
    return [](int) { return expect::throws; };
}
// reduce: the root and the rank that detected the fault throw, the others return.
inline who_throws reduce_throwers(int root, int detecting)
{
    return [=](int r) { return r == root || r == detecting ? expect::throws : expect::returns; };
}

struct fault_case {
    std::string context;                     // printed with every failed check
    who_throws who = everyone_throws();
    std::vector<std::string> needles;        // each must be in the text of every rank that throws
    bool agreed = false;                     // every rank throws or none does (allreduce-like collectives)
};

inline bool one_prefix(const std::string& what)
{
    return what.rfind("sparse_reduce: ", 0) == 0 && what.find("sparse_reduce: ", 1) == std::string::npos;
}

// Runs faulty() on every rank and checks the outcome against c (a thrown
// sparse_reduce::error where c.who says so, with one prefix and every needle;
// never anything else), then good() (true when this rank's result of a
// correct collective matches the serial fold). Collective; true on every
// rank iff every check passed on every rank.
template <class Faulty, class Good>
bool inject_fault(const fault_case& c, Faulty&& faulty, Good&& good)
{
    const int me = world().rank();
    bool threw = false, ok = true;
    std::string what;
    try {
        faulty();
    } catch (const sparse_reduce::error& e) {
        threw = true;
        what = e.what();
    } catch (const std::exception& e) {
        threw = true;
        ok = false;
        what = std::string("(not a sparse_reduce::error) ") + e.what();
    } catch (...) {
        threw = true;
        ok = false;
        what = "(not a sparse_reduce::error, not a std::exception)";
    }
    const expect want = c.who(me);
    if (want == expect::throws && !threw) ok = false;
    if (want == expect::returns && threw) ok = false;
    if (threw && !one_prefix(what)) ok = false;
    if (threw)
        for (const auto& n : c.needles)
            if (what.find(n) == std::string::npos) ok = false;
    BOOST_TEST(ok, c.context << ": rank " << me << (threw ? " threw: " + what : std::string(" returned"))
                             << (want == expect::throws    ? " (must throw)"
                                 : want == expect::returns ? " (must return)"
                                                           : ""));
    bool all_faulty_ok = all_ok(ok);
    if (c.agreed) {
        const bool all_threw = all_ok(threw), none_threw = all_ok(!threw);
        BOOST_TEST((all_threw || none_threw), c.context << ": some ranks threw, others returned");
        all_faulty_ok = all_faulty_ok && (all_threw || none_threw);
    }
    const bool good_ok = good();
    BOOST_TEST(good_ok, c.context << ": rank " << me << ": the correct collective after the fault is wrong");
    return all_ok(good_ok) && all_faulty_ok;
}

// ---- correct collectives to run after a fault ----

inline constexpr std::size_t fault_dim = 300;

// Rank r's input: every even index and every third one from r, value
// r + 1 + i / 128 (sums exact in double), so every range of two indices or
// more holds entries of several ranks: every rank folds with the op.
inline std::vector<double> fault_input_of(int r)
{
    std::vector<double> v(fault_dim, 0.0);
    for (std::size_t i = 0; i < fault_dim; ++i)
        if (i % 2 == 0 || i % 3 == static_cast<std::size_t>(r) % 3) v[i] = r + 1 + static_cast<double>(i) / 128;
    return v;
}

inline std::vector<double> fault_serial_sum(int ranks)
{
    std::vector<double> s(fault_dim, 0.0);
    for (int r = 0; r < ranks; ++r) {
        const auto v = fault_input_of(r);
        for (std::size_t i = 0; i < fault_dim; ++i) s[i] += v[i];
    }
    return s;
}

inline Eigen::SparseVector<double> fault_eigen_input_of(int r)
{
    const auto d = fault_input_of(r);
    Eigen::SparseVector<double> v(static_cast<Eigen::Index>(fault_dim));
    for (std::size_t i = 0; i < fault_dim; ++i)
        if (d[i] != 0) v.insertBack(static_cast<Eigen::Index>(i)) = d[i];
    return v;
}

// A good reduce of Eigen vectors under `policy` at `root` (on comm, by
// default MPI_COMM_WORLD): the serial sum on the root.
template <class Policy>
bool good_reduce(const Policy& policy, int root, const boost::mpi::communicator& comm = world())
{
    const auto in = fault_eigen_input_of(comm.rank());
    Eigen::SparseVector<double> out;
    sparse_reduce::reduce(comm, in, out, std::plus<>{}, root, policy);
    if (comm.rank() != root) return true;
    const auto want = fault_serial_sum(comm.size());
    bool ok = out.size() == static_cast<Eigen::Index>(fault_dim);
    for (std::size_t i = 0; i < fault_dim; ++i) ok = ok && out.coeff(static_cast<Eigen::Index>(i)) == want[i];
    return ok;
}

// A good allreduce on comm (recursive doubling, dense vectors): the serial sum everywhere.
inline bool good_allreduce_on(const boost::mpi::communicator& comm)
{
    const auto in = fault_input_of(comm.rank());
    std::vector<double> out;
    sparse_reduce::allreduce(comm, in, out, std::plus<>{}, sparse_reduce::policy::recursive_doubling{});
    return out == fault_serial_sum(comm.size());
}

// A good reduce_scatter: this rank's block of the serial sum, nothing outside it.
inline bool good_reduce_scatter_on(const boost::mpi::communicator& comm)
{
    const auto in = fault_input_of(comm.rank());
    sparse_reduce::index_value_vector<double, std::uint64_t> out;
    const auto ranges = sparse_reduce::reduce_scatter(comm, in, out, std::plus<>{});
    const auto ref = fault_serial_sum(comm.size());
    const auto me = static_cast<std::size_t>(comm.rank());
    std::vector<double> got(fault_dim, 0.0);
    bool ok = out.size() == fault_dim;
    for (std::size_t k = 0; k < out.nnz(); ++k) {
        const auto i = out.indices()[k];
        ok = ok && i >= ranges[me] && i < ranges[me + 1];
        if (i < fault_dim) got[i] = out.values()[k];
    }
    for (std::size_t i = ranges[me]; i < ranges[me + 1]; ++i) ok = ok && got[i] == ref[i];
    return ok;
}

// The same on MPI_COMM_WORLD (functions, not defaults: tests pass them by name).
inline bool good_allreduce() { return good_allreduce_on(world()); }
inline bool good_reduce_scatter() { return good_reduce_scatter_on(world()); }

} // namespace sparse_reduce_test
