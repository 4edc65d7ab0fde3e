#include <boost/test/unit_test.hpp>

#include "../support/reference.hpp"

#include <cstdint>
#include <functional>
#include <variant>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

using any_policy = std::variant<sr::policy::binomial, sr::policy::k_ary, sr::policy::binary, sr::policy::chain,
                                sr::policy::optimal_binary, sr::policy::two_tree, sr::policy::automatic>;

template <class T, class Op>
bool simulated_equals_fold(const any_policy& pol, int p, int root, double density, const Op& op)
{
    std::vector<std::vector<T>> in;
    std::vector<T> want(2001, sr::identity<T>(op));
    for (int r = 0; r < p; ++r) {
        std::mt19937_64 rng(static_cast<unsigned>(r) * 31u + 7u);
        in.push_back(random_dense<T>(rng, 2001, density, op));
        want = dense_fold(want, in.back(), op);
    }
    std::vector<T> out;
    const auto res = std::visit(
        [&](const auto& policy) { return sr::simulate_reduce(std::span<const std::vector<T>>(in), out, op, root, policy); }, pol);
    std::size_t sum = 0;
    for (auto b : res.bytes_sent) sum += b;
    return first_difference(out, want) == -1 && sum == res.bytes_total && (p == 1 || res.time > 0) &&
           res.critical_path_bytes <= res.bytes_total;
}

} // namespace

BOOST_AUTO_TEST_SUITE(simulator)

BOOST_AUTO_TEST_CASE(simulated_results_equal_the_serial_fold)
{
    const std::vector<any_policy> pols{sr::policy::binomial{.segment_bytes = 512}, sr::policy::k_ary{.k = 3},
                                       sr::policy::binary{.wire = sr::wire::rle}, sr::policy::chain{.segment_bytes = 256},
                                       sr::policy::optimal_binary{}, sr::policy::two_tree{.segment_bytes = 512},
                                       sr::policy::automatic{}, sr::policy::k_ary{}};
    for (const auto& pol : pols)
        for (int p : {1, 2, 3, 5, 8, 13})
            for (int root : {0, p - 1, p / 2}) {
                BOOST_TEST(simulated_equals_fold<double>(pol, p, root, 0.05, std::plus<>{}),
                           "policy " << pol.index() << " P=" << p << " root " << root);
                if (pol.index() != 2)
                    BOOST_TEST(simulated_equals_fold<affine>(pol, p, root, 0.2, compose{}),
                               "affine policy " << pol.index() << " P=" << p << " root " << root);
            }
}

BOOST_AUTO_TEST_CASE(the_clock_follows_the_model)
{
    // Two ranks, one dense message: alpha + beta * bytes plus the folds.
    std::vector<std::vector<double>> in(2, std::vector<double>(1000, 1.0));
    std::vector<double> out;
    sr::network_model net;
    net.alpha = 1e-3;
    net.beta = 1e-6;
    net.gamma = net.gamma_dense = 0;
    const auto res = sr::simulate_reduce(std::span<const std::vector<double>>(in), out, std::plus<>{}, 0,
                                         sr::policy::binomial{}, net);
    BOOST_TEST(res.messages_total == 1u);
    BOOST_TEST(res.time == net.alpha + net.beta * static_cast<double>(res.bytes_total), boost::test_tools::tolerance(1e-12));
    BOOST_TEST(res.critical_path_bytes == res.bytes_total);
    BOOST_TEST(out == std::vector<double>(1000, 2.0));
    // a slower network only slows it down
    net.beta *= 10;
    const auto slow = sr::simulate_reduce(std::span<const std::vector<double>>(in), out, std::plus<>{}, 0,
                                          sr::policy::binomial{}, net);
    BOOST_TEST(slow.time > res.time);
    BOOST_TEST(slow.bytes_total == res.bytes_total);
}

BOOST_AUTO_TEST_SUITE_END()
