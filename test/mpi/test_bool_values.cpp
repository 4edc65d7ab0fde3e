// bool values in every collective, against a serial fold: reduce (Eigen,
// index_value_vector<bool> and std::array<bool, N>; one and two trees,
// whole messages and windows; several roots), allreduce (every algorithm)
// and reduce_scatter, under sparse_reduce::max (or) and min (and). The
// library keeps bools in contiguous buffers (std::vector<bool> packs bits;
// as a user's vector it is a compile error, test/compile_fail/).
#define BOOST_TEST_MODULE bool_values
#include "mpi_fixture.hpp"

#include <sparse_reduce/sparse_reduce.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 300;

// Rank r's bools: true where i % (r + 2) == 0 and (for and) where i is odd.
std::array<bool, dim> bools_of(int r)
{
    std::array<bool, dim> b{};
    for (std::size_t i = 0; i < dim; ++i) b[i] = i % static_cast<std::size_t>(r + 2) == 0 || i % 2 == 1;
    return b;
}

// The serial fold over ranks: or (any) or and (all).
std::array<bool, dim> fold(int ranks, bool any)
{
    std::array<bool, dim> f = bools_of(0);
    for (int r = 1; r < ranks; ++r) {
        const auto b = bools_of(r);
        for (std::size_t i = 0; i < dim; ++i) f[i] = any ? f[i] || b[i] : f[i] && b[i];
    }
    return f;
}

// The sparse forms hold the non-identity entries: true for or, false for and.
Eigen::SparseVector<bool> eigen_of(const std::array<bool, dim>& b, bool identity)
{
    Eigen::SparseVector<bool> e(static_cast<Eigen::Index>(dim));
    for (std::size_t i = 0; i < dim; ++i)
        if (b[i] != identity) e.insertBack(static_cast<Eigen::Index>(i)) = b[i];
    return e;
}
sr::index_value_vector<bool> index_value_of(const std::array<bool, dim>& b, bool identity)
{
    sr::index_value_vector<bool> v(dim);
    for (std::size_t i = 0; i < dim; ++i)
        if (b[i] != identity) v.push_back(static_cast<std::uint32_t>(i), b[i]);
    return v;
}

// What each form reads back as, with `identity` where it holds no entry.
std::array<bool, dim> dense_of(const Eigen::SparseVector<bool>& e, bool identity)
{
    std::array<bool, dim> b;
    b.fill(identity);
    for (Eigen::SparseVector<bool>::InnerIterator it(e); it; ++it) b[static_cast<std::size_t>(it.index())] = it.value();
    return b;
}
std::array<bool, dim> dense_of(const sr::index_value_vector<bool>& v, bool identity)
{
    std::array<bool, dim> b;
    b.fill(identity);
    for (std::size_t k = 0; k < v.nnz(); ++k) b[v.indices()[k]] = v.values()[k];
    return b;
}
std::array<bool, dim> dense_of(const std::array<bool, dim>& b, bool) { return b; }

using reduce_policy = std::variant<sr::policy::automatic, sr::policy::binomial, sr::policy::two_tree>;
const std::vector<std::pair<std::string, reduce_policy>> reduce_policies{
    {"automatic", sr::policy::automatic{}},
    {"binomial", sr::policy::binomial{}},
    {"binomial, index/value wire", sr::policy::binomial{.wire = sr::wire::index_value}},
    {"two_tree", sr::policy::two_tree{}}};

template <class V, class Op>
bool reduces_right(const std::string& form, V (*make)(const std::array<bool, dim>&, bool), const Op& op, bool any)
{
    auto& comm = world();
    const bool identity = !any;
    const auto want = fold(comm.size(), any);
    const V in = make(bools_of(comm.rank()), identity);
    bool ok = true;
    for (const auto& [name, pol] : reduce_policies)
        for (int root : test_roots()) {
            V out{};
            std::visit([&](const auto& p) { sr::reduce(comm, in, out, op, root, p); }, pol);
            const bool right = comm.rank() != root || dense_of(out, identity) == want;
            BOOST_TEST(right, form << (any ? ", or" : ", and") << ", " << name << ", root " << root);
            ok = ok && right;
        }
    return all_ok(ok);
}

std::array<bool, dim> as_is(const std::array<bool, dim>& b, bool) { return b; }

} // namespace

BOOST_AUTO_TEST_CASE(reduce_of_bools)
{
    BOOST_TEST(reduces_right<Eigen::SparseVector<bool>>("Eigen", eigen_of, sr::max{}, true));
    BOOST_TEST(reduces_right<Eigen::SparseVector<bool>>("Eigen", eigen_of, sr::min{}, false));
    BOOST_TEST(reduces_right<sr::index_value_vector<bool>>("index_value_vector", index_value_of, sr::max{}, true));
    BOOST_TEST((reduces_right<std::array<bool, dim>>("std::array", as_is, sr::max{}, true)));
}

BOOST_AUTO_TEST_CASE(allreduce_of_bools)
{
    auto& comm = world();
    using any_policy = std::variant<sr::policy::automatic, sr::policy::recursive_doubling, sr::policy::split_allgather,
                                    sr::policy::reduce_broadcast<sr::policy::binomial>,
                                    sr::policy::reduce_broadcast<sr::policy::two_tree>, sr::policy::grouped>;
    const std::vector<std::pair<std::string, any_policy>> policies{
        {"automatic", sr::policy::automatic{}},
        {"recursive_doubling", sr::policy::recursive_doubling{}},
        {"split_allgather", sr::policy::split_allgather{}},
        {"reduce_broadcast(binomial)", sr::policy::reduce_broadcast<sr::policy::binomial>{}},
        {"reduce_broadcast(two_tree)", sr::policy::reduce_broadcast<sr::policy::two_tree>{}},
        {"grouped", sr::policy::grouped{}}};
    const auto want = fold(comm.size(), true);
    const auto sparse_in = eigen_of(bools_of(comm.rank()), false);
    const auto dense_in = bools_of(comm.rank());
    bool ok = true;
    for (const auto& [name, pol] : policies) {
        Eigen::SparseVector<bool> sparse_out;
        std::array<bool, dim> dense_out{};
        std::visit([&](const auto& p) {
            sr::allreduce(comm, sparse_in, sparse_out, sr::max{}, p);
            sr::allreduce(comm, dense_in, dense_out, sr::max{}, p);
        }, pol);
        BOOST_TEST(dense_of(sparse_out, false) == want, "Eigen, " << name);
        BOOST_TEST(dense_out == want, "std::array, " << name);
        ok = ok && dense_of(sparse_out, false) == want && dense_out == want;
    }
    BOOST_TEST(all_ok(ok));
}

BOOST_AUTO_TEST_CASE(reduce_scatter_of_bools)
{
    auto& comm = world();
    const auto want = fold(comm.size(), true);
    const auto in = eigen_of(bools_of(comm.rank()), false);
    sr::index_value_vector<bool> out;
    const auto ranges = sr::reduce_scatter(comm, in, out, sr::max{});
    const auto me = static_cast<std::size_t>(comm.rank());
    const auto got = dense_of(out, false);
    bool ok = true;
    for (std::size_t i = 0; i < dim; ++i) {
        const bool mine = ranges[me] <= i && i < ranges[me + 1];
        ok = ok && got[i] == (mine ? want[i] : false);
    }
    BOOST_TEST(all_ok(ok));
}
