// The identity law: "a present value folded with an absent one is that value,
// bit for bit, on every path, for every output type". NaN payloads, -0.0 and
// signalling NaNs held by one non-root rank (every other rank absent there)
// under +, min and max must reach the output unchanged, whatever the policy,
// root, wire, input kind (dense: windowed; sparse: whole messages) and output
// type (dense vector, Eigen::SparseVector, index_value_vector); reduce and
// allreduce. The folded windows are dense (every rank holds a quarter of the
// indices or more), the path that computed op(identity, x).

#define BOOST_TEST_MODULE identity_law
#include "mpi_fixture.hpp"

#include <sparse_reduce/collective/allreduce.hpp>
#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/sparse_reduce.hpp>

#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 96;

const std::uint64_t specials[] = {
    0x8000000000000000ull, // -0.0
    0x7ff0000000000001ull, // signalling NaN
    0x7ff8000000000123ull, // quiet NaN with a payload
    0xfff4000000000005ull, // negative signalling NaN (an RLE escape on the wire)
    0xfff8000000000000ull, // negative quiet NaN
};
constexpr std::size_t n_specials = std::size(specials);

// Rank r's input: the specials at indices 0.. on one non-root rank each (the
// others absent there); from there on every index held by rank i % P with a
// small value, and every fifth by every rank (op runs there).
std::vector<double> input_of(int r, int P, int root, double id)
{
    std::vector<double> v(dim, id);
    for (std::size_t j = 0; j < n_specials; ++j)
        if (P == 1 || (root + 1 + static_cast<int>(j) % (P - 1)) % P == r) v[j] = std::bit_cast<double>(specials[j]);
    for (std::size_t i = n_specials; i < dim; ++i)
        if (static_cast<int>(i % static_cast<std::size_t>(P)) == r || i % 5 == 0) v[i] = r + 1 + static_cast<double>(i % 7);
    return v;
}

bool is(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// The law itself: op where both are present, else the present one.
template <class Op>
double law(double a, double b, const Op& op, double id)
{
    return is(a, id) ? b : is(b, id) ? a : op(a, b);
}

template <class Op>
std::vector<double> expected(int P, int root, const Op& op)
{
    const double id = sr::identity<double>(op);
    std::vector<double> acc(dim, id);
    for (int r = 0; r < P; ++r) {
        const auto v = input_of(r, P, root, id);
        for (std::size_t i = 0; i < dim; ++i) acc[i] = law(acc[i], v[i], op, id);
    }
    return acc;
}

Eigen::SparseVector<double> to_eigen(const std::vector<double>& d, double id)
{
    Eigen::SparseVector<double> v(static_cast<Eigen::Index>(d.size()));
    for (std::size_t i = 0; i < d.size(); ++i)
        if (std::bit_cast<std::uint64_t>(d[i]) != std::bit_cast<std::uint64_t>(id)) v.insertBack(static_cast<Eigen::Index>(i)) = d[i];
    return v;
}

std::vector<double> dense_of(const std::vector<double>& v, double) { return v; }
std::vector<double> dense_of(const Eigen::SparseVector<double>& v, double id)
{
    std::vector<double> d(static_cast<std::size_t>(v.size()), id);
    for (Eigen::SparseVector<double>::InnerIterator it(v); it; ++it) d[static_cast<std::size_t>(it.index())] = it.value();
    return d;
}
std::vector<double> dense_of(const sr::index_value_vector<double, std::uint32_t>& v, double id)
{
    std::vector<double> d(v.size(), id);
    for (std::size_t k = 0; k < v.nnz(); ++k) d[v.indices()[k]] = v.values()[k];
    return d;
}

// Index of the first element whose bits differ, or -1.
long first_bit_difference(const std::vector<double>& got, const std::vector<double>& want)
{
    if (got.size() != want.size()) return static_cast<long>(std::min(got.size(), want.size()));
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::bit_cast<std::uint64_t>(got[i]) != std::bit_cast<std::uint64_t>(want[i])) return static_cast<long>(i);
    return -1;
}

using reduce_policy_v = std::variant<sr::policy::binomial, sr::policy::k_ary, sr::policy::chain, sr::policy::two_tree,
                                     sr::policy::automatic>;
const reduce_policy_v reduce_policies[] = {sr::policy::binomial{},
                                           sr::policy::binomial{.wire = sr::wire::dense},
                                           sr::policy::k_ary{.k = 3, .wire = sr::wire::rle},
                                           sr::policy::chain{.wire = sr::wire::index_value},
                                           sr::policy::two_tree{},
                                           sr::policy::automatic{}};

using allreduce_policy_v = std::variant<sr::policy::recursive_doubling, sr::policy::split_allgather,
                                        sr::policy::reduce_broadcast<>, sr::policy::grouped>;
const allreduce_policy_v allreduce_policies[] = {sr::policy::recursive_doubling{}, sr::policy::split_allgather{},
                                                 sr::policy::reduce_broadcast<>{},
                                                 sr::policy::grouped{.group_rows = 1, .group_cols = 1}};

std::string show(double x)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(x)));
    return buf;
}

template <class Op>
void check_reduce(const Op& op, const char* op_name)
{
    auto& comm = world();
    const int P = comm.size(), me = comm.rank();
    const double id = sr::identity<double>(op);
    for (int root : {0, P / 2, P - 1})
        for (const auto& pol : reduce_policies)
            for (bool sparse_in : {false, true})
                for (int out_kind = 0; out_kind < 3; ++out_kind) {
                    const auto d = input_of(me, P, root, id);
                    std::vector<double> got;
                    const auto run = [&](auto& out) {
                        std::visit([&](const auto& p) {
                            if (sparse_in) sr::reduce(comm, to_eigen(d, id), out, op, root, p);
                            else sr::reduce(comm, d, out, op, root, p);
                        }, pol);
                        if (me == root) got = dense_of(out, id);
                    };
                    if (out_kind == 0) {
                        std::vector<double> out;
                        run(out);
                    } else if (out_kind == 1) {
                        Eigen::SparseVector<double> out;
                        run(out);
                    } else {
                        sr::index_value_vector<double, std::uint32_t> out;
                        run(out);
                    }
                    if (me != root) continue;
                    const auto want = expected(P, root, op);
                    const long at = first_bit_difference(got, want);
                    BOOST_TEST(at < 0, "reduce " << op_name << " root " << root << " policy " << pol.index()
                                                 << (sparse_in ? " sparse in" : " dense in") << " out " << out_kind
                                                 << ": index " << at << " is "
                                                 << (at >= 0 && static_cast<std::size_t>(at) < got.size() ? show(got[static_cast<std::size_t>(at)]) : "-")
                                                 << ", want " << (at >= 0 ? show(want[static_cast<std::size_t>(at)]) : "-"));
                }
}

template <class Op>
void check_allreduce(const Op& op, const char* op_name)
{
    auto& comm = world();
    const int P = comm.size(), me = comm.rank();
    const double id = sr::identity<double>(op);
    const auto want = expected(P, 0, op);
    for (const auto& pol : allreduce_policies)
        for (bool sparse_in : {false, true})
            for (int out_kind = 0; out_kind < 2; ++out_kind) {
                const auto d = input_of(me, P, 0, id);
                std::vector<double> got;
                const auto run = [&](auto& out) {
                    std::visit([&](const auto& p) {
                        if (sparse_in) sr::allreduce(comm, to_eigen(d, id), out, op, p);
                        else sr::allreduce(comm, d, out, op, p);
                    }, pol);
                    got = dense_of(out, id);
                };
                if (out_kind == 0) {
                    std::vector<double> out;
                    run(out);
                } else {
                    Eigen::SparseVector<double> out;
                    run(out);
                }
                const long at = first_bit_difference(got, want);
                BOOST_TEST(at < 0, "allreduce " << op_name << " policy " << pol.index() << " rank " << me
                                                << (sparse_in ? " sparse in" : " dense in") << " out " << out_kind
                                                << ": index " << at << " is "
                                                << (at >= 0 && static_cast<std::size_t>(at) < got.size() ? show(got[static_cast<std::size_t>(at)]) : "-")
                                                << ", want " << (at >= 0 ? show(want[static_cast<std::size_t>(at)]) : "-"));
            }
}

} // namespace

BOOST_AUTO_TEST_CASE(reduce_keeps_a_lone_value_bit_for_bit)
{
    check_reduce(std::plus<>{}, "+");
    check_reduce(sr::min{}, "min");
    check_reduce(sr::max{}, "max");
}

BOOST_AUTO_TEST_CASE(allreduce_keeps_a_lone_value_bit_for_bit)
{
    check_allreduce(std::plus<>{}, "+");
    check_allreduce(sr::min{}, "min");
    check_allreduce(sr::max{}, "max");
}

// The local kernels the collectives share: combine of dense ⊗ dense (to any
// output), dense ⊗ sparse and rle ⊗ dense.
BOOST_AUTO_TEST_CASE(combine_keeps_a_lone_value_bit_for_bit)
{
    if (world().rank() != 0) return;
    for (std::uint64_t s : specials) {
        const double x = std::bit_cast<double>(s);
        std::vector<double> a(600, 0.0), b(600, 0.0);
        for (std::size_t i = 300; i < 600; ++i) a[i] = b[i] = 1.0; // a chunk with no identity, then the special
        a[5] = x;   // absent in b
        b[7] = x;   // absent in a
        a[450] = x; // in a bulk chunk of the RLE kernels, absent in b there
        b[450] = 0.0;
        const auto check = [&](const std::vector<double>& got, const char* what) {
            for (std::size_t i : {std::size_t{5}, std::size_t{7}, std::size_t{450}})
                BOOST_TEST(std::bit_cast<std::uint64_t>(got[i]) == s, what << " " << show(x) << " at " << i << ": " << show(got[i]));
        };
        check(sr::combine(a, b, std::plus<>{}), "dense + dense");
        check(dense_of(sr::combine(to_eigen(a, 0.0), b, std::plus<>{}), 0.0), "sparse + dense");
        check(dense_of(sr::combine(a, to_eigen(b, 0.0), std::plus<>{}), 0.0), "dense + sparse");
        sr::rle_vector<double> r;
        sr::combine_into(r, a, b, std::plus<>{});
        std::vector<double> d(600);
        sr::convert_into(d, r, std::plus<>{});
        check(d, "dense + dense -> rle");
        sr::combine_into(r, sr::rle_vector<double>::encode(a), b, std::plus<>{});
        sr::convert_into(d, r, std::plus<>{});
        check(d, "rle + dense -> rle");
    }
}
