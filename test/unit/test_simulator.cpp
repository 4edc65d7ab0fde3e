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

BOOST_AUTO_TEST_CASE(a_message_holds_segment_bytes_of_windows)
{
    // A dense stream of 2^21 doubles (16 MiB): 128 KiB windows in any case;
    // 128 KiB segments send one window a message, 1 MiB segments eight.
    std::vector<std::vector<double>> in(2, std::vector<double>(std::size_t{1} << 21, 1.0));
    std::vector<double> out;
    const sr::network_model net;
    for (const std::size_t seg : {std::size_t{128} << 10, std::size_t{1} << 20}) {
        const auto res = sr::simulate_reduce(std::span<const std::vector<double>>(in), out, std::plus<>{}, 0,
                                             sr::policy::binomial{.segment_bytes = seg}, net);
        BOOST_TEST(res.messages_total == (std::size_t{16} << 20) / seg);
        BOOST_TEST(out == std::vector<double>(std::size_t{1} << 21, 2.0));
    }
}

BOOST_AUTO_TEST_CASE(sparse_inputs_travel_whole_as_the_executor_sends_them)
{
    // index_value inputs under the adaptive wire run whole messages (one per
    // edge, exec/whole_model.hpp): a chain's transfers are strictly serial,
    // so with free compute its time is (P - 1) alpha + beta * every byte
    // (the windowed pipeline the simulator ran for them before overlapped
    // the hops).
    const std::size_t n = 1 << 16;
    std::vector<sr::index_value_vector<double>> in;
    for (int r = 0; r < 4; ++r) {
        std::vector<std::uint32_t> idx;
        for (std::uint32_t i = static_cast<std::uint32_t>(r); i < n; i += 4) idx.push_back(i); // disjoint, a quarter each
        in.push_back(sr::index_value_vector<double>::from_unsorted(n, idx, std::vector<double>(idx.size(), 1.0),
                                                                   std::plus<>{}));
    }
    sr::network_model net;
    net.alpha = 1e-3;
    net.beta = 1e-6;
    net.gamma = net.gamma_dense = 0;
    sr::index_value_vector<double> out;
    const auto chain = sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in), out, std::plus<>{}, 0,
                                           sr::policy::chain{}, net);
    BOOST_TEST(chain.messages_total == 3u);
    BOOST_TEST(chain.time == 3 * net.alpha + net.beta * static_cast<double>(chain.bytes_total),
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(out.nnz() == n);
    // the message bytes: 64-byte header, 8-byte values, 2-byte blocked
    // indices (one 65536-element window) while 12 bytes an entry fit in the
    // dense form, then dense (header and 8 n)
    const std::size_t quarter = n / 4, half = n / 2;
    auto sparse_bytes = [](std::size_t k) { return 64 + 8 * k + 2 * k + 8; };
    BOOST_TEST(chain.bytes_total == sparse_bytes(quarter) + sparse_bytes(half) + (64 + 8 * n));
}

BOOST_AUTO_TEST_SUITE_END()
