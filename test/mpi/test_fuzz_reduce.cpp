// The fuzzer driving a whole collective: a seeded random loop of
// reduce calls at P = 2 in which one rank's input is corrupted at random:
// rle_vector words with flipped bits, dropped or appended words, or another
// dimension; Eigen (index/value) vectors with flipped index bits, swapped
// indices, a cut or another dimension. The victim decodes its own input to
// learn whether it is still valid; then the call must give the serial fold
// of the decoded inputs (bit for bit) when it is, and end in
// sparse_reduce::error on the root and the detecting rank when it is not,
// never hang (CTest TIMEOUT); a good reduce follows every call.

#define BOOST_TEST_MODULE fuzz_reduce
#include "mpi_fixture.hpp"

#include "fault_injection.hpp"

#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <boost/serialization/vector.hpp>

#include <bit>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

using policy_v = sr::policy::any;
const policy_v policies[] = {sr::policy::binomial{},
                             sr::policy::binomial{.wire = sr::wire::rle},
                             sr::policy::k_ary{.k = 0},
                             sr::policy::chain{.wire = sr::wire::index_value},
                             sr::policy::two_tree{.wire = sr::wire::dense},
                             sr::policy::optimal_binary{},
                             sr::policy::automatic{},
                             sr::policy::automatic{.wire = sr::wire::rle, .segment_bytes = 256}};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
    return true;
}

// + under the identity law: op only where both are present (bits).
std::vector<double> law_sum(const std::vector<double>& a, const std::vector<double>& b)
{
    std::vector<double> s(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const bool pa = std::bit_cast<std::uint64_t>(a[i]) != 0, pb = std::bit_cast<std::uint64_t>(b[i]) != 0;
        s[i] = pa && pb ? a[i] + b[i] : pa ? a[i] : b[i];
    }
    return s;
}

std::vector<double> random_dense(std::mt19937_64& rng, std::size_t n)
{
    std::vector<double> v(n, 0.0);
    const double density = std::uniform_real_distribution<double>(0.02, 0.9)(rng);
    for (auto& x : v)
        if (std::uniform_real_distribution<double>(0, 1)(rng) < density)
            x = static_cast<double>(static_cast<int>(rng() % 64) - 32) / 4 + 0.125; // never 0, exact sums
    return v;
}

struct outcome {
    bool valid = true;            // the victim's input decodes
    bool other_dimension = false; // it has another dimension (valid or not)
    std::vector<double> dense;    // decoded, when valid
};

// Corrupts an RLE vector one of five ways; returns what it now holds.
outcome corrupt_rle(sr::rle_vector<double>& v, std::size_t dim, std::mt19937_64& rng)
{
    std::vector<double> w(v.words().begin(), v.words().end());
    std::size_t d = dim;
    switch (rng() % 5) {
    case 0: // flip bits in a few words (a value, a marker's length or sign, an escape)
        for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n && !w.empty(); ++k) {
            auto& x = w[rng() % w.size()];
            x = std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) ^ (std::uint64_t{1} << (rng() % 64)));
        }
        break;
    case 1: // drop words
        w.resize(w.size() - std::min<std::size_t>(w.size(), 1 + rng() % 3));
        break;
    case 2: // append random words
        for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) w.push_back(std::bit_cast<double>(rng()));
        break;
    case 3: // a marker made a plain word or the other way round
        if (!w.empty()) w[rng() % w.size()] = sr::detail::rle::run_marker<double>(2 + rng() % (dim + 4));
        break;
    default: // another dimension
        d = dim + 1 + rng() % 7;
        break;
    }
    std::copy(w.begin(), w.end(), v.prepare(d, w.size()));
    v.commit(w.size(), v.nnz());
    outcome o;
    o.other_dimension = d != dim; // the vector's dimension, whether its stream decodes or not
    try {
        const sr::rle_vector<double> check(d, std::span<const double>(w));
        o.dense.assign(d, 0.0);
        sr::convert_into(o.dense, check);
    } catch (const sr::error&) {
        o.valid = false;
    }
    return o;
}

// Corrupts an Eigen vector one of five ways; returns what it now holds.
outcome corrupt_eigen(Eigen::SparseVector<double>& v, std::size_t dim, std::mt19937_64& rng)
{
    const auto nnz = static_cast<std::size_t>(v.nonZeros());
    int* idx = v.innerIndexPtr();
    switch (nnz ? rng() % 5 : 4) {
    case 0: idx[rng() % nnz] ^= 1 << (rng() % 31); break;             // a flipped index bit
    case 1: if (nnz > 1) { const auto k = rng() % (nnz - 1); std::swap(idx[k], idx[k + 1]); } break;
    case 2: idx[nnz - 1] = static_cast<int>(dim + rng() % 5); break;  // past the end
    case 3: v.data().resize(static_cast<Eigen::Index>(nnz - 1)); break; // a cut: still valid
    default: v.conservativeResize(static_cast<Eigen::Index>(dim + 1 + rng() % 7)); break;
    }
    outcome o;
    const auto n = static_cast<std::size_t>(v.nonZeros());
    const auto d = static_cast<std::size_t>(v.size());
    for (std::size_t k = 0; k < n && o.valid; ++k)
        o.valid = idx[k] >= 0 && static_cast<std::size_t>(idx[k]) < d && (k == 0 || idx[k - 1] < idx[k]);
    o.other_dimension = d != dim; // the vector's dimension, whether its indices are valid or not
    if (o.valid) {
        o.dense.assign(d, 0.0);
        for (std::size_t k = 0; k < n; ++k) o.dense[static_cast<std::size_t>(idx[k])] = v.valuePtr()[k];
    }
    return o;
}

Eigen::SparseVector<double> to_eigen(const std::vector<double>& d)
{
    Eigen::SparseVector<double> v(static_cast<Eigen::Index>(d.size()));
    for (std::size_t i = 0; i < d.size(); ++i)
        if (d[i] != 0) v.insertBack(static_cast<Eigen::Index>(i)) = d[i];
    return v;
}

std::vector<double> dense_of(const Eigen::SparseVector<double>& v)
{
    std::vector<double> d(static_cast<std::size_t>(v.size()), 0.0);
    for (Eigen::SparseVector<double>::InnerIterator it(v); it; ++it) d[static_cast<std::size_t>(it.index())] = it.value();
    return d;
}

} // namespace

BOOST_AUTO_TEST_CASE(corrupt_inputs_to_reduce_at_two_ranks)
{
    auto& comm = world();
    if (comm.size() != 2) return;
    const int me = comm.rank();
    constexpr int iterations = 400;
    int valid_calls = 0, failed_calls = 0;
    for (int it = 0; it < iterations; ++it) {
        std::mt19937_64 shared(20261123u + static_cast<unsigned>(it)); // the same draws on both ranks
        const std::size_t dim = 1 + shared() % 700;
        const bool rle = shared() % 2;
        const int root = static_cast<int>(shared() % 2), victim = static_cast<int>(shared() % 2);
        const auto& pol = policies[shared() % std::size(policies)];
        std::mt19937_64 mine(shared() + 7919u * static_cast<unsigned>(me)); // this rank's data
        const auto d = random_dense(mine, dim);

        outcome o;
        std::vector<double> got;
        const std::string ctx = "iteration " + std::to_string(it) + (rle ? " rle" : " eigen") + " dim " +
                                std::to_string(dim) + " root " + std::to_string(root) + " victim " +
                                std::to_string(victim) + " policy " + std::to_string(pol.held().index());
        const auto call = [&](const auto& in) {
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(in)>, sr::rle_vector<double>>) {
                sr::rle_vector<double> out;
                sr::reduce(comm, in, out, std::plus<>{}, root, pol);
                if (me == root) {
                    got.assign(out.size(), 0.0);
                    sr::convert_into(got, out);
                }
            } else {
                Eigen::SparseVector<double> out;
                sr::reduce(comm, in, out, std::plus<>{}, root, pol);
                if (me == root) got = dense_of(out);
            }
        };
        const auto run = [&](auto in, auto corrupt) {
            if (me == victim) o = corrupt(in, dim, mine);
            // the victim tells the other rank what its input now holds
            boost::mpi::broadcast(comm, o.valid, victim);
            boost::mpi::broadcast(comm, o.other_dimension, victim);
            boost::mpi::broadcast(comm, o.dense, victim);
            if (o.valid && !o.other_dimension) {
                ++valid_calls;
                std::string what;
                try {
                    call(in);
                } catch (const std::exception& e) {
                    what = e.what();
                }
                BOOST_TEST(what.empty(), ctx << ": a valid input threw on rank " << me << ": " << what);
                std::vector<std::vector<double>> inputs; // what each rank holds, in rank order
                boost::mpi::all_gather(comm, me == victim ? o.dense : d, inputs);
                if (me == root && what.empty())
                    BOOST_TEST(same_bits(got, law_sum(inputs[0], inputs[1])), ctx << ": wrong result");
                BOOST_TEST(all_ok(what.empty()));
            } else {
                ++failed_calls;
                // another dimension (malformed or not): the one-shot call's
                // dimension agreement fails on every rank, before anything is
                // sent; a malformed input: the root and the victim (which detects it)
                const who_throws who = o.other_dimension ? everyone_throws() : reduce_throwers(root, victim);
                BOOST_TEST(inject_fault({.context = ctx, .who = who,
                                         .needles = {o.other_dimension ? "dimension mismatch" : "rank " + std::to_string(victim)}},
                                        [&] { call(in); },
                                        [&] { return good_reduce(pol, root); }));
            }
        };
        if (rle) run(sr::rle_vector<double>::encode(d), corrupt_rle);
        else run(to_eigen(d), corrupt_eigen);
    }
    BOOST_TEST_MESSAGE("fuzz_reduce: " << valid_calls << " calls with inputs still valid, " << failed_calls
                                       << " with corrupt inputs");
    BOOST_TEST(failed_calls > iterations / 4);
    BOOST_TEST(valid_calls > 10);
}
