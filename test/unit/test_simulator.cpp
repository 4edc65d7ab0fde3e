#include <boost/test/unit_test.hpp>

#include "../support/reference.hpp"

#include <sparse_reduce/exec/reduce_node.hpp>
#include <sparse_reduce/op/make_op.hpp>
#include <sparse_reduce/simulate.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
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

// A drop-in's root (own dense array, dense output) and its leaves, driven
// by hand, on the tree that carries windows offset, offset + stride, ...:
// while it waits for the first messages the root copies its own windows
// into the output, at most pipeline_input_bytes (plus a window) ahead of
// its fold, and the result is the fold in order, own among the children.
template <class T, class Op>
struct ahead_run {
    std::vector<T> out;
    std::size_t copied_first = 0, dense_work = 0;
};
template <class T, class Op>
ahead_run<T, Op> drive_root(const Op& op, const std::vector<std::vector<T>>& in, int self_position,
                            const sr::detail::stream_config& cfg, const std::vector<T>& out0, bool ahead)
{
    namespace d = sr::detail;
    const T id = sr::identity<T>(op);
    using reader_t = decltype(d::make_reader(in[0], id));
    using node_t = d::reduce_node<T, Op, reader_t>;
    std::vector<d::own_input<T, reader_t>> owns;
    for (const auto& v : in) owns.push_back({v.data(), d::make_reader(v, id), {}});
    ahead_run<T, Op> run{out0};
    d::root_output<T> ro;
    ro.dense = run.out.data();
    std::vector<d::node_buffers> pools(in.size());
    std::vector<int> children; // the ranks other than the root's own input, in fold order
    for (int r = 1; r < static_cast<int>(in.size()); ++r) children.push_back(r);
    // own = in[0], placed at self_position among the children
    node_t root({0, children, self_position, false}, cfg, op, &owns[0], &ro, pools[0]);
    std::vector<std::unique_ptr<node_t>> leaves;
    for (std::size_t r = 1; r < in.size(); ++r)
        leaves.push_back(std::make_unique<node_t>(d::node_shape{static_cast<int>(r), {}, 0, true}, cfg, op, &owns[r],
                                                  nullptr, pools[r]));
    if (ahead)
        while (root.work_ahead()) ++run.copied_first;
    std::vector<std::optional<std::span<std::byte>>> slot(leaves.size());
    for (int step = 0; !root.finished() && step < 1000000; ++step) {
        root.progress();
        if (ahead && step % 3 == 0) root.work_ahead(); // some steps with work ahead between messages
        for (std::size_t c = 0; c < leaves.size(); ++c) {
            leaves[c]->progress();
            BOOST_TEST_REQUIRE(!leaves[c]->work_ahead()); // a sender has no output of its own to fill
            if (!slot[c]) slot[c] = root.receive_slot(c);
            if (slot[c])
                if (auto m = leaves[c]->take_outgoing()) {
                    std::memcpy(slot[c]->data(), m->bytes.data(), m->bytes.size());
                    slot[c].reset();
                    root.on_message(c, m->bytes.size());
                    leaves[c]->on_sent(m->buffer);
                }
        }
    }
    BOOST_TEST(root.finished());
    BOOST_TEST(!root.failed());
    run.dense_work = root.dense_work();
    return run;
}

template <class T, class Op>
void root_works_ahead(const Op& op, std::size_t dim, std::size_t window, int p, int self_position, double density,
                      std::size_t offset = 0, std::size_t stride = 1)
{
    namespace d = sr::detail;
    std::mt19937_64 rng(dim + static_cast<std::size_t>(p * 10 + self_position));
    std::vector<std::vector<T>> in;
    for (int r = 0; r < p; ++r) in.push_back(random_dense<T>(rng, dim, density, op));
    // in fold order: children before self_position, own, the rest
    std::vector<T> want(dim, sr::identity<T>(op));
    for (int c = 1, k = 0; k < p; ++k) {
        const auto& v = k == self_position ? in[0] : in[static_cast<std::size_t>(c++)];
        want = dense_fold(want, v, op);
    }
    d::stream_config cfg{.dimension = dim, .window = window, .segment_bytes = window * sizeof(T)};
    cfg.window_offset = offset;
    cfg.window_stride = stride;
    const std::vector<T> out0(dim, random_value<T>(rng, op)); // not the identity: every element must be written
    const auto plain = drive_root<T>(op, in, self_position, cfg, out0, false);
    const auto run = drive_root<T>(op, in, self_position, cfg, out0, true);
    const std::size_t bytes = window * sizeof(T), mine = (cfg.windows() - offset + stride - 1) / stride;
    BOOST_TEST(plain.copied_first == 0u);
    BOOST_TEST(run.copied_first == std::min(mine, (d::pipeline_input_bytes + bytes - 1) / bytes));
    for (std::size_t k = 0; k < cfg.windows(); ++k) { // this tree's windows folded, the other's untouched
        const std::size_t lo = k * window, hi = lo + cfg.window_length(k);
        const auto& expect = (k % stride == offset) ? want : out0;
        BOOST_TEST(std::equal(run.out.begin() + static_cast<long>(lo), run.out.begin() + static_cast<long>(hi),
                              expect.begin() + static_cast<long>(lo)),
                   "window " << k);
        BOOST_TEST(std::equal(plain.out.begin() + static_cast<long>(lo), plain.out.begin() + static_cast<long>(hi),
                              expect.begin() + static_cast<long>(lo)),
                   "window " << k << " without work ahead");
    }
    // The same elements copied and folded: a window copied ahead is not
    // copied again. Dense blocks on the own array's right fold it in one pass
    // (acc = own (+) x) with no copy, so there the windows copied before the
    // first block arrived count twice; after it the root copies no more.
    if (density < 0.5 || self_position == p - 1) BOOST_TEST(run.dense_work == plain.dense_work);
    else BOOST_TEST(run.dense_work == plain.dense_work + run.copied_first * window); // full windows in these runs
}

} // namespace

BOOST_AUTO_TEST_SUITE(simulator)

// The path rule (select/path.hpp) the executor, the simulator and Sreduce
// share, row by row; the reports' agreement is test_reduce.cpp's.
BOOST_AUTO_TEST_CASE(the_path_rule)
{
    using sr::detail::whole_messages;
    using sr::detail::whole_rule;
    namespace pol = sr::policy;
    for (int p : {1, 2, 3, 8}) {
        const whole_rule chosen = p <= 2 ? whole_rule::at_once : whole_rule::after_exchange;
        BOOST_TEST((whole_messages(pol::binomial{}, false, p) == whole_rule::never)); // dense, RLE: windows
        BOOST_TEST((whole_messages(pol::binomial{.wire = sr::wire::rle}, true, p) == whole_rule::never));
        BOOST_TEST((whole_messages(pol::automatic{.wire = sr::wire::dense}, true, p) == whole_rule::never));
        BOOST_TEST((whole_messages(pol::binomial{}, true, p) == whole_rule::at_once));
        BOOST_TEST((whole_messages(pol::two_tree{}, true, p) == whole_rule::at_once));
        BOOST_TEST((whole_messages(pol::k_ary{.k = 3}, true, p) == whole_rule::at_once));
        BOOST_TEST((whole_messages(pol::k_ary{}, true, p) == chosen));
        BOOST_TEST((whole_messages(pol::automatic{}, true, p) == chosen));
        BOOST_TEST((whole_messages(pol::optimal_binary{}, true, p) == whole_rule::after_exchange));
        BOOST_TEST(sr::detail::whole_is_weighed(p) == (p > 2));
    }
    sr::schedule s;
    s.trees.resize(1);
    BOOST_TEST((sr::detail::path_of(s) == sr::detail::reduce_path::windows));
    s.trees.resize(2);
    BOOST_TEST((sr::detail::path_of(s) == sr::detail::reduce_path::two_trees));
    s.whole = true;
    BOOST_TEST((sr::detail::path_of(s) == sr::detail::reduce_path::whole));
}

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

// A leaf's message written in one pass (write_partial) is byte for byte the
// copy-then-finish_partial one, and has the bytes the simulator's model
// counts: around the blocked form's limit (at most n / 4 windows of 65536).
BOOST_AUTO_TEST_CASE(leaf_messages_have_the_bytes_the_model_counts)
{
    namespace sd = sr::detail;
    const std::size_t dim = std::size_t{1} << 26;
    auto check = [&](std::size_t n, std::size_t windows, std::size_t gap) {
        std::vector<int> idx; // n entries in `windows` windows, gap windows apart
        std::vector<double> val;
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t w = k * windows / n;
            idx.push_back(static_cast<int>(w * gap * 65536 + 17 * k % 65536 / windows + k));
            val.push_back(1.5 + static_cast<double>(k));
        }
        const std::vector<std::uint32_t> u(idx.begin(), idx.end());
        std::vector<std::byte> one(sd::partial_bytes<double, std::uint32_t>(n)), two(one.size());
        std::vector<std::uint32_t> pairs(sd::blocked_pairs_words(n));
        const std::size_t a = sd::write_partial<double, std::uint32_t>(one.data(), idx.data(), val.data(), n, dim,
                                                                       pairs.data());
        sd::copy_entries(idx.data(), val.data(), n,
                         reinterpret_cast<std::uint32_t*>(two.data() + sd::partial_indices_at<double, std::uint32_t>(n)),
                         reinterpret_cast<double*>(two.data() + sd::partial_header_bytes));
        const std::size_t b = sd::finish_partial<double, std::uint32_t>(two.data(), n, n, dim, pairs.data());
        BOOST_TEST(a == b, "n " << n << " windows " << windows << " gap " << gap);
        BOOST_TEST(a == sd::whole_message_bytes<double>(u, dim), "n " << n << " windows " << windows << " gap " << gap);
        BOOST_TEST(std::memcmp(one.data(), two.data(), std::min(a, b)) == 0, "n " << n << " windows " << windows);
    };
    for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 16u, 17u, 40u, 1000u})
        for (std::size_t windows : {1u, 2u, 3u, 4u, 5u, 10u, 250u, 251u, 1000u})
            for (std::size_t gap : {1u, 3u}) // adjacent windows (the one pass) or apart (finish_partial)
                if (windows <= std::max<std::size_t>(n, 1)) check(n, windows, gap);
}

BOOST_AUTO_TEST_CASE(sparse_inputs_travel_whole_as_the_executor_sends_them)
{
    // index_value inputs under the adaptive wire run whole messages (one per
    // edge, sim/whole_model.hpp): a chain's transfers are strictly serial,
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
    // A token bucket on every link (tc tbf on scripts/netbench.sh's network):
    // each link of the chain carries one transfer, so each hop's first
    // burst_bytes pass at once
    net.burst_bytes = 10000;
    const auto bursty = sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in), out, std::plus<>{}, 0,
                                            sr::policy::chain{}, net);
    BOOST_TEST(bursty.bytes_total == chain.bytes_total);
    BOOST_TEST(bursty.time == 3 * net.alpha + net.beta * (static_cast<double>(chain.bytes_total) - 3 * 10000.0),
               boost::test_tools::tolerance(1e-12));
    // The call is timed in a loop of calls: at P = 2 the one link is busy to
    // the end of the call before, so its bucket holds what it earns in the
    // next call's alpha, 1000 bytes at 1 byte a microsecond
    const auto pair = sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in.data(), 2), out,
                                          std::plus<>{}, 0, sr::policy::chain{}, net);
    BOOST_TEST(pair.messages_total == 1u);
    BOOST_TEST(pair.time == net.alpha + net.beta * (static_cast<double>(pair.bytes_total) - 1000.0),
               boost::test_tools::tolerance(1e-12));
}

// The root writes an index/value output in place as its windows fold, but
// not where the output is one of the inputs (its entries are still to be
// read: the root's own, or in the simulator any rank's); a failure leaves
// the output empty, never holding what was written before the throw.
BOOST_AUTO_TEST_CASE(sparse_outputs_in_place_but_not_over_an_input)
{
    const std::size_t n = 50000;
    std::vector<sr::index_value_vector<double>> in;
    std::vector<double> want(n, 0.0);
    for (int r = 0; r < 3; ++r) {
        std::mt19937_64 rng(static_cast<unsigned>(r) + 11u);
        const auto d = random_dense<double>(rng, n, 0.6, std::plus<>{});
        want = dense_fold(want, d, std::plus<>{});
        in.push_back(sr::to_index_value(d));
    }
    const sr::policy::binomial pol{.wire = sr::wire::index_value, .segment_bytes = 4096};
    for (std::size_t as : {0, 1, 2}) { // the output is input `as`, the root rank 0
        auto copy = in;
        std::vector<const sr::index_value_vector<double>*> ptrs;
        for (const auto& v : copy) ptrs.push_back(&v);
        sr::simulate_reduce(std::span<const sr::index_value_vector<double>* const>(ptrs), copy[as], std::plus<>{}, 0, pol);
        BOOST_TEST(first_difference(sr::to_dense(copy[as]), want) == -1, "output = input " << as);
    }
    sr::index_value_vector<double> out(n);
    out.push_back(7, 1.0);
    sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in), out, std::plus<>{}, 0, pol);
    BOOST_TEST(first_difference(sr::to_dense(out), want) == -1);
    // the op throws after the root's first windows are written
    long calls = 0;
    const auto late = sr::make_op(
        [&calls](double a, double b) -> double {
            if (++calls > 20000) throw std::runtime_error("late failure");
            return a + b;
        },
        0.0, sr::commutative);
    BOOST_CHECK_THROW(sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in), out, late, 0, pol),
                      sr::error);
    BOOST_TEST(out.nnz() == 0u);
}

BOOST_AUTO_TEST_CASE(a_dense_whole_message_is_folded_as_its_pieces_arrive)
{
    // Two ranks holding every one of 2^18 doubles: one dense message of
    // 2 MiB and 64 bytes, three pieces (exec/whole_transport.hpp). The root
    // folds each piece as it arrives, so a fold faster than the link adds
    // one piece's share (fold / 3) to the transfer, a slower one the whole
    // fold to the first piece's arrival.
    const std::size_t n = std::size_t{1} << 18;
    std::vector<std::uint32_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
    std::vector<sr::index_value_vector<double>> in;
    for (int r = 0; r < 2; ++r)
        in.push_back(sr::index_value_vector<double>::from_unsorted(n, idx, std::vector<double>(n, 1.0), std::plus<>{}));
    const double bytes = 64 + 8.0 * static_cast<double>(n), piece = 1 << 20;
    for (double fold : {0.3e-3, 6e-3}) {
        sr::network_model net;
        net.alpha = 1e-5;
        net.beta = 1e-9;
        net.gamma = 0;
        net.gamma_dense = fold / static_cast<double>(n);
        sr::index_value_vector<double> out;
        const auto r = sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in), out, std::plus<>{}, 0,
                                           sr::policy::binomial{}, net);
        const double check = net.gamma_dense * static_cast<double>(n); // each rank's input check, first
        const double want = check + std::max(net.alpha + net.beta * bytes + fold / 3, net.alpha + net.beta * piece + fold);
        BOOST_TEST(r.time == want, boost::test_tools::tolerance(1e-9));
        BOOST_TEST(r.time < check + net.alpha + net.beta * bytes + fold); // not the transfer and then the fold
        BOOST_TEST(r.messages_total == 1u);
        BOOST_TEST(out.nnz() == n);
    }
}

BOOST_AUTO_TEST_CASE(a_root_copies_its_own_windows_ahead_while_it_waits)
{
    for (int self : {0, 1}) {
        root_works_ahead<affine>(compose{}, 5007, 1000, 2, self, 0.3); // every window ahead, non-commutative
        root_works_ahead<double>(std::plus<>{}, 300007, 1000, 2, self, 0.01); // the bound: 132 windows of 8000 bytes
        root_works_ahead<double>(std::plus<>{}, 300000, 1000, 2, self, 1.0);  // dense blocks: it stops copying ahead
    }
    for (int self : {0, 1, 2}) {
        root_works_ahead<affine>(compose{}, 20007, 1000, 3, self, 0.2);         // two children, own among them
        root_works_ahead<affine>(compose{}, 20007, 1000, 3, self, 0.2, 1, 2);   // the second of two trees
        root_works_ahead<double>(std::plus<>{}, 300000, 1000, 3, self, 1.0, 0, 2); // dense, the first of two trees
    }
}

// A started reduce behind computation (sim/started.hpp): a chain 2 -> 1 -> 0
// of one message a hop, each 2.5 u on the wire (u = 1/1024 s, exact in
// binary), compute free, a test() after every u of 4 u of computation.
// Rank 1 gets rank 2's message at 2.5 u but handles it at its next test, at
// 3 u; rank 0, waiting by then, has it at 5.5 u. Alone the call takes the
// two hops, 5 u, as the blocking call does.
BOOST_AUTO_TEST_CASE(a_started_reduce_moves_at_the_tests_of_its_computation)
{
    const double u = 1.0 / 1024;
    sr::network_model net;
    net.alpha = 2.5 * u;
    net.beta = 0;
    net.gamma = net.gamma_dense = 0;
    const std::vector<std::vector<double>> in(3, std::vector<double>(100, 1.0));
    const std::span<const std::vector<double>> ins(in);
    std::vector<double> out;
    const auto blocking = sr::simulate_reduce(ins, out, std::plus<>{}, 0, sr::policy::chain{}, net);
    BOOST_TEST(blocking.messages_total == 2u);
    BOOST_TEST(blocking.time == 5 * u);
    const auto s = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 4 * u, .test_every = u},
                                               sr::policy::chain{}, net);
    BOOST_TEST(s.alone == 5 * u);
    BOOST_TEST(s.call.time == 5.5 * u);
    BOOST_TEST(s.overlap == (4 + 5 - 5.5) / 4.0);
    BOOST_TEST(s.call.messages_total == 2u);
    BOOST_TEST((out == std::vector<double>(100, 3.0)));
    // a test every u / 2: rank 1 handles it at 2.5 u, so it hides entirely
    const auto fine = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 4 * u, .test_every = u / 2},
                                                  sr::policy::chain{}, net);
    BOOST_TEST(fine.call.time == 5 * u);
    BOOST_TEST(fine.overlap == 1.0);
    // no test before the wait: rank 1 forwards at 4 u
    const auto none = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 4 * u, .test_every = 1.0},
                                                  sr::policy::chain{}, net);
    BOOST_TEST(none.call.time == 6.5 * u);
    // no computation: the call alone
    const auto idle = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 0}, sr::policy::chain{}, net);
    BOOST_TEST(idle.call.time == idle.alone);
    BOOST_TEST(idle.overlap == 0.0);
}

// A fold's CPU time lengthens the computation of the rank that folds: at
// P = 2, with the network free, rank 1's one message arrives during the
// root's first piece of computation and is folded at its first test. The
// root's dense work (the scan of its input, its copy ahead into the
// output, the fold) costs the same started or not, so the call with the
// computation takes the computation plus exactly the root's work alone.
BOOST_AUTO_TEST_CASE(a_started_reduce_folds_on_the_computing_rank)
{
    const double u = 1.0 / 1024;
    sr::network_model net;
    net.alpha = 0;
    net.beta = 0;
    net.gamma = 0;
    net.gamma_dense = u / 1024;
    const std::size_t n = 1024;
    const std::vector<std::vector<double>> in(2, std::vector<double>(n, 1.0));
    const std::span<const std::vector<double>> ins(in);
    std::vector<double> out;
    const auto s = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 64 * u, .test_every = 8 * u},
                                               sr::policy::binomial{}, net);
    BOOST_TEST((out == std::vector<double>(n, 2.0)));
    BOOST_TEST(s.alone > u); // the scan and the fold at least
    BOOST_TEST(s.call.time == 64 * u + s.alone);
    BOOST_TEST(s.overlap == 0.0);
    // with free compute the fold costs nothing, and the call hides entirely
    net.gamma_dense = 0;
    const auto free = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 64 * u, .test_every = 8 * u},
                                                  sr::policy::binomial{}, net);
    BOOST_TEST(free.call.time == 64 * u);
}

// Messages up to computation::eager_bytes travel when sent: a root with
// two receive slots per child posts the third window's receive only at a
// test, so without eager sends the later windows wait for the tests.
BOOST_AUTO_TEST_CASE(a_started_reduce_sends_small_messages_eagerly)
{
    const double u = 1.0 / 1024;
    sr::network_model net;
    net.alpha = u;
    net.beta = 0;
    net.gamma = net.gamma_dense = 0;
    const std::size_t n = 8192; // 8 windows of 8 KiB
    const std::vector<std::vector<double>> in(2, std::vector<double>(n, 1.0));
    const std::span<const std::vector<double>> ins(in);
    std::vector<double> out;
    const sr::policy::binomial pol{.segment_bytes = 8192};
    const auto eager = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0,
                                                   {.seconds = 32 * u, .test_every = 16 * u}, pol, net);
    BOOST_TEST((out == std::vector<double>(n, 2.0)));
    BOOST_TEST(eager.call.messages_total == 8u);
    const auto waiting = sr::simulate_started_reduce(
        ins, out, std::plus<>{}, 0, {.seconds = 32 * u, .test_every = 16 * u, .eager_bytes = 0}, pol, net);
    BOOST_TEST((out == std::vector<double>(n, 2.0)));
    BOOST_TEST(waiting.call.time > eager.call.time);
}

// A started call runs in windows where the blocking call sends an
// index/value input whole (P = 2, automatic), as the executor does.
BOOST_AUTO_TEST_CASE(a_started_reduce_of_sparse_inputs_runs_in_windows)
{
    const std::size_t n = 1 << 16;
    std::vector<sr::index_value_vector<double>> in;
    for (int r = 0; r < 2; ++r) {
        std::vector<std::uint32_t> idx;
        for (std::uint32_t i = static_cast<std::uint32_t>(r); i < n; i += 64) idx.push_back(i);
        in.push_back(sr::index_value_vector<double>::from_unsorted(n, idx, std::vector<double>(idx.size(), 1.0),
                                                                   std::plus<>{}));
    }
    const std::span<const sr::index_value_vector<double>> ins(in);
    sr::index_value_vector<double> out;
    const auto blocking = sr::simulate_reduce(ins, out, std::plus<>{}, 0);
    BOOST_TEST(blocking.algorithm.find("whole messages") != std::string::npos);
    const auto s = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 1e-3});
    BOOST_TEST(s.call.algorithm.find("whole messages") == std::string::npos);
    BOOST_TEST(out.nnz() == 2 * n / 64);
}

// Results as the serial fold, at P = 1 to 8 and several roots, densities
// sparse and full, with computation around the call.
BOOST_AUTO_TEST_CASE(a_started_reduce_simulated_equals_the_serial_fold)
{
    for (int p : {1, 2, 3, 4, 5, 8})
        for (int root : {0, p / 2, p - 1})
            for (double density : {0.01, 0.3, 1.0}) {
                std::vector<std::vector<double>> in;
                std::vector<double> want(2001, 0.0);
                for (int r = 0; r < p; ++r) {
                    std::mt19937_64 rng(static_cast<unsigned>(r) * 17u + 3u);
                    in.push_back(random_dense<double>(rng, 2001, density, std::plus<>{}));
                    want = dense_fold(want, in.back(), std::plus<>{});
                }
                std::vector<double> out;
                const auto s = sr::simulate_started_reduce(std::span<const std::vector<double>>(in), out,
                                                           std::plus<>{}, root, {.seconds = 1e-4, .test_every = 1e-5});
                BOOST_TEST(first_difference(out, want) == -1, "P " << p << " root " << root << " density " << density);
                BOOST_TEST(s.call.time >= 1e-4);
                BOOST_TEST(s.alone <= s.call.time);
            }
}

BOOST_AUTO_TEST_CASE(a_started_reduce_simulation_rejects_a_bad_computation)
{
    const std::vector<std::vector<double>> in(2, std::vector<double>(10, 1.0));
    std::vector<double> out;
    const std::span<const std::vector<double>> ins(in);
    BOOST_CHECK_THROW(sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = -1}), sr::error);
    BOOST_CHECK_THROW(sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = 1, .test_every = 0}), sr::error);
    BOOST_CHECK_THROW(sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, {.seconds = std::nan("")}), sr::error);
    BOOST_CHECK_THROW(sr::simulate_started_reduce(ins, out, std::plus<>{}, 2, {.seconds = 1}), sr::error);
    // out one of the inputs: it would change between the two runs
    std::vector<std::vector<double>> mine(in);
    BOOST_CHECK_THROW(sr::simulate_started_reduce(std::span<const std::vector<double>>(mine), mine[0], std::plus<>{},
                                                  0, {.seconds = 1}),
                      sr::error);
}

BOOST_AUTO_TEST_SUITE_END()
