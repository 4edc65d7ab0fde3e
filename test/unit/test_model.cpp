// The cost model's functions: the branching factor of Heikkinen (n.d.), merged
// sizes against measured unions, the analytic estimate; and Sreduce's
// choices on hand-built cases, with thresholds from a tuning file.
#include <boost/test/unit_test.hpp>

#include <sparse_reduce/model/k_ary.hpp>
#include <sparse_reduce/model/merged_size.hpp>
#include <sparse_reduce/schedule/predict.hpp>
#include <sparse_reduce/select/call_stats.hpp>
#include <sparse_reduce/select/sreduce.hpp>
#include <sparse_reduce/select/tuning.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace sr = sparse_reduce;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_SUITE(model)

BOOST_AUTO_TEST_CASE(lambert_w_inverts_w_exp_w)
{
    for (double z : {-0.36, -0.2, -0.01, 0.0, 1e-6, 0.5, 1.0, 2.718281828459045, 10.0, 367.9, 1e6}) {
        const double w = sr::lambert_w0(z);
        BOOST_TEST(w * std::exp(w) == z, tt::tolerance(1e-12) << "z=" << z);
        BOOST_TEST(w >= -1);
    }
    BOOST_TEST(std::isnan(sr::lambert_w0(-0.5)));
}

// b (ln b - 1) = o / x at the closed form, and the numbers of Heikkinen's (n.d.)
// hill climb: 1:1 about 3.6, 10:1 about 8.6, 1:10 a bit over 2.8, 1000:1 about 226.
BOOST_AUTO_TEST_CASE(k_ary_continuous_optimum)
{
    const std::pair<double, double> cases[] = {{1, 3.59}, {10, 8.63}, {0.1, 2.83}, {1000, 226.0}};
    for (const auto& [r, expected] : cases) {
        const double b = sr::k_ary_continuous_optimum(r, 1.0);
        BOOST_TEST(b * (std::log(b) - 1) == r, tt::tolerance(1e-10) << "r=" << r);
        BOOST_TEST(b == expected, tt::tolerance(0.01) << "r=" << r);
        // a minimum of T(b): both neighbours cost more
        BOOST_TEST(sr::k_ary_time(b, 1e6, r, 1) < sr::k_ary_time(b * 1.05, 1e6, r, 1));
        BOOST_TEST(sr::k_ary_time(b, 1e6, r, 1) < sr::k_ary_time(b / 1.05, 1e6, r, 1));
    }
    BOOST_TEST(sr::k_ary_continuous_optimum(0, 1) == std::exp(1.0), tt::tolerance(1e-12));
}

// The integer k of least ceil(log_k P) * (o + k x), against brute force,
// and the flat tree once overhead dominates.
BOOST_AUTO_TEST_CASE(best_integer_k)
{
    BOOST_TEST(sr::k_ary_levels(64, 4) == 3);
    BOOST_TEST(sr::k_ary_levels(65, 4) == 4);
    BOOST_TEST(sr::k_ary_levels(1, 7) == 0);
    for (int p : {2, 3, 8, 100, 1000, 4096})
        for (double r : {0.1, 1.0, 10.0, 1000.0}) {
            const int k = sr::best_k_ary(p, r, 1);
            double best = 1e300;
            for (int j = 2; j <= p; ++j) best = std::min(best, sr::k_ary_levels(p, j) * (r + j));
            BOOST_TEST(sr::k_ary_levels(p, k) * (r + k) == best, tt::tolerance(1e-12) << "p=" << p << " r=" << r);
        }
    BOOST_TEST(sr::best_k_ary(64, 1e9, 1) == 64); // one level
    BOOST_TEST(sr::best_k_ary(64, 0, 1) <= 3);    // near e: binary or ternary
    // a real tree's k is near the continuous optimum when levels fit
    BOOST_TEST(std::abs(sr::best_k_ary(4096, 10, 1) - sr::k_ary_continuous_optimum(10, 1)) <= 8.5);
}

// Union sizes of k sampled supports against the models, uniform and zipf.
BOOST_AUTO_TEST_CASE(merged_sizes_match_measured_unions)
{
    const std::size_t C = 1 << 18;
    const sr::zipf_profile zipf(C);
    std::mt19937_64 rng(5);
    for (double d : {0.001, 0.01, 0.1}) {
        const double n = d * static_cast<double>(C);
        BOOST_TEST(zipf.union_entries(1, n) == n, tt::tolerance(0.01));
        std::vector<char> in_zipf(C, 0), in_uniform(C, 0);
        double mean_zipf = 0;
        std::uniform_real_distribution<double> u(0, 1);
        for (int k = 1; k <= 64; ++k) {
            const auto s = zipf.sample(rng, n);
            mean_zipf += static_cast<double>(s.size());
            for (auto i : s) in_zipf[i] = 1;
            for (std::size_t i = 0; i < C; ++i)
                if (u(rng) < d) in_uniform[i] = 1;
            if (k == 1 || k == 4 || k == 16 || k == 64) {
                const double measured_zipf = static_cast<double>(std::count(in_zipf.begin(), in_zipf.end(), 1));
                const double measured_uniform = static_cast<double>(std::count(in_uniform.begin(), in_uniform.end(), 1));
                const double model_uniform = sr::merged_entries(k, n, static_cast<double>(C), sr::merge_model::uniform);
                // within sampling noise (4 sigma of a count) plus 1% of model error
                auto close = [](double model, double measured) {
                    return std::abs(model - measured) <= 4 * std::sqrt(model) + 0.01 * model;
                };
                BOOST_TEST(close(zipf.union_entries(k, n), measured_zipf),
                           "zipf d=" << d << " k=" << k << ": model " << zipf.union_entries(k, n) << ", measured " << measured_zipf);
                BOOST_TEST(close(model_uniform, measured_uniform),
                           "uniform d=" << d << " k=" << k << ": model " << model_uniform << ", measured " << measured_uniform);
                // zipf supports overlap more: their unions grow slower
                if (k > 1) BOOST_TEST(measured_zipf < measured_uniform);
            }
        }
        BOOST_TEST(mean_zipf / 64 == n, tt::tolerance(0.03) << "zipf sample size, d=" << d);
        // the span overload agrees with the (k, n) one
        const std::vector<double> four(4, n);
        BOOST_TEST(sr::merged_entries(four, static_cast<double>(C), sr::merge_model::zipf) == zipf.union_entries(4, n),
                   tt::tolerance(1e-9));
    }
    BOOST_TEST(sr::merged_entries(8, 100, 1000, sr::merge_model::disjoint) == 800);
    BOOST_TEST(sr::merged_entries(20, 100, 1000, sr::merge_model::disjoint) == 1000);
}

// One message between two ranks, nothing to compute: alpha + beta * bytes.
BOOST_AUTO_TEST_CASE(predicted_time_of_one_message)
{
    sr::cost_model m;
    m.gamma = m.gamma_dense = 0;
    const std::size_t C = 1 << 16;
    auto s = sr::detail::make_schedule(sr::detail::algorithm_trees(sr::algorithm::binomial, 0, 2, 0, true), C, 8,
                                       1 << 20, sr::wire::adaptive);
    const double n = 100;
    const double bytes = n * 12 + m.header_bytes;
    BOOST_TEST(sr::predicted_time(s, {n, false, true}, m) == m.alpha + m.beta * bytes, tt::tolerance(1e-12));
    // a chain of 8 is 7 transfers deep; a binomial tree of 8 is 3 levels, but
    // its root receives three messages one after the other
    m.beta = 0;
    auto chain = sr::detail::make_schedule(sr::detail::algorithm_trees(sr::algorithm::chain, 0, 8, 0, true), C, 8,
                                           1 << 20, sr::wire::adaptive);
    auto binomial = sr::detail::make_schedule(sr::detail::algorithm_trees(sr::algorithm::binomial, 0, 8, 0, true), C,
                                              8, 1 << 20, sr::wire::adaptive);
    BOOST_TEST(sr::predicted_time(chain, {n, false, true}, m) == 7 * m.alpha, tt::tolerance(1e-12));
    BOOST_TEST(sr::predicted_time(binomial, {n, false, true}, m) == 3 * m.alpha, tt::tolerance(1e-12));
}

// tc tbf's bucket: bytes its tokens cover pass at once, the rest at beta;
// an idle link earns 1 / beta bytes a second up to the bucket; of the two
// links a transfer crosses, the emptier decides.
BOOST_AUTO_TEST_CASE(token_buckets_let_a_burst_through_after_an_idle_spell)
{
    sr::cost_model m;
    m.beta = 1e-9; // 1 byte a nanosecond
    m.burst_bytes = 1000;
    sr::link_bucket up(m), down(m), other(m);
    BOOST_TEST(sr::spend_burst(up, down, 0, 600, m) == 600.0); // under the bucket: all at once
    BOOST_TEST(sr::spend_burst(up, down, 0, 3000, m) == 400.0); // what is left, then the line rate
    // the rate-limited 2600 bytes end at 2.6 us with both buckets empty; 300 ns idle earn 300 bytes
    BOOST_TEST(sr::spend_burst(up, down, 2.9e-6, 5000, m) == 300.0, tt::tolerance(1e-9));
    BOOST_TEST(sr::spend_burst(up, other, 1.0, 5000, m) == 1000.0); // long idle: a full bucket, no more
    BOOST_TEST(sr::spend_burst(other, down, 1.0 + 4e-6 + 1e-7, 5000, m) == 100.0, tt::tolerance(1e-6)); // the emptier
    m.burst_bytes = 0; // no bucket: every byte at beta
    sr::link_bucket a(m), b(m);
    BOOST_TEST(sr::spend_burst(a, b, 5.0, 100, m) == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(selection)

namespace {
sr::call_stats stats(int p, std::size_t c, double density, sr::merge_model d = sr::merge_model::uniform)
{
    sr::call_stats s;
    s.ranks = p;
    s.dimension = c;
    s.entries = density * static_cast<double>(c);
    s.distribution = d;
    return s;
}
} // namespace

BOOST_AUTO_TEST_CASE(threshold_rules)
{
    const sr::tuning t; // defaults: T_c 64 KiB, T_s^c 64 MiB, T_s 0.99, T_p 64 / 1024
    auto ch = sr::sreduce(stats(512, 1024, 1.0), t);
    BOOST_TEST(ch.algo == sr::algorithm::binomial);
    BOOST_TEST(ch.rule.find("small") != std::string::npos);
    ch = sr::sreduce(stats(32, 1 << 20, 0.001), t);
    BOOST_TEST(ch.algo == sr::algorithm::binomial);
    BOOST_TEST(ch.rule.find("uniform") != std::string::npos);
    // the same sparse data on 512 ranks: uniform supports densify, zipf ones do not
    ch = sr::sreduce(stats(512, 1 << 20, 0.001, sr::merge_model::zipf), t);
    BOOST_TEST(ch.rule.find("zipf") != std::string::npos);
    ch = sr::sreduce(stats(512, 1 << 20, 0.001), t);
    BOOST_TEST(ch.rule.find("model") != std::string::npos);
    // dense and large: the model, and the model's pick is its cheapest candidate
    ch = sr::sreduce(stats(64, 1 << 21, 1.0), t);
    BOOST_TEST(ch.rule.find("model") != std::string::npos);
    for (auto a : {sr::algorithm::binomial, sr::algorithm::binary, sr::algorithm::chain, sr::algorithm::two_tree})
        BOOST_TEST(ch.predicted <= sr::best_segment(stats(64, 1 << 21, 1.0), t.machine, a, 0, sr::wire::adaptive, 0).predicted);
    // a caller's segment size is kept
    BOOST_TEST(sr::sreduce(stats(64, 1 << 21, 1.0), t, sr::wire::dense, 65536).segment_bytes == 65536u);
    // the segment is the message size; windows stay at most max_window_bytes
    const auto trees = sr::detail::algorithm_trees(sr::algorithm::binomial, 0, 2, 0, true);
    BOOST_TEST(sr::detail::make_schedule(trees, 1 << 21, 8, 32 * 1024, sr::wire::adaptive).window == 4096u);
    BOOST_TEST(sr::detail::make_schedule(trees, 1 << 21, 8, 1 << 20, sr::wire::adaptive).window ==
               sr::max_window_bytes / 8);
}

// Hand-built machines where the answer is known.
BOOST_AUTO_TEST_CASE(model_picks_by_machine)
{
    sr::tuning t;
    t.limits.small_bytes = 0; // no rule: the model decides everywhere
    t.limits.sparse_bytes = 0;
    // latency is everything: the flattest, shallowest tree
    t.machine = {.alpha = 1e-3, .beta = 0, .gamma = 0, .gamma_dense = 0};
    auto ch = sr::sreduce(stats(64, 1 << 16, 0.01), t);
    BOOST_TEST((ch.algo != sr::algorithm::chain && ch.algo != sr::algorithm::two_tree));
    BOOST_TEST(ch.predicted <= 7 * 1e-3);
    // bandwidth is everything and the vectors are dense: a pipeline wins
    // over the binomial tree, whose root receives log P full vectors
    t.machine = {.alpha = 0, .beta = 1e-9, .gamma = 0, .gamma_dense = 0};
    ch = sr::sreduce(stats(64, 1 << 21, 1.0), t);
    BOOST_TEST(ch.algo != sr::algorithm::binomial);
    // merging is dear and the network fast: the dense wire, even at 1%
    // density, where the caller left the wire to the library
    t.machine = {.alpha = 1e-6, .beta = 1e-11, .gamma = 1e-7, .gamma_dense = 1e-10};
    ch = sr::sreduce(stats(256, 1 << 18, 0.01), t);
    BOOST_TEST((ch.wire == sr::wire::dense));
    BOOST_TEST((sr::sreduce(stats(256, 1 << 18, 0.01), t, sr::wire::index_value).wire == sr::wire::index_value));
    // a slow network: sparse blocks
    t.machine = {.alpha = 1e-6, .beta = 1e-8, .gamma = 1e-9, .gamma_dense = 1e-10};
    ch = sr::sreduce(stats(256, 1 << 18, 0.001), t);
    BOOST_TEST((ch.wire == sr::wire::adaptive));
    // the bitmap form pays where bytes cost more than a quarter of an
    // entry's fold: not on the built-in (shared-memory) machine, on 1 Gbit/s
    BOOST_TEST(!sr::cost_model{}.bitmap_pays());
    BOOST_TEST(sr::cost_model{}.with_network(12e-6, 1.25e8).bitmap_pays());
    // 90 % full: adaptive blocks are bitmaps, 7.3 bytes an element against
    // dense's 8. On the slow network the bytes decide: the adaptive wire.
    ch = sr::sreduce(stats(2, 1 << 21, 0.9), t);
    BOOST_TEST((ch.wire == sr::wire::adaptive));
    // On a fast one the bitmap does not pay (4 β < γ) and adaptive blocks
    // cost what dense ones do: the dense wire, weighed first.
    t.machine = {.alpha = 1e-6, .beta = 1e-10, .gamma = 1e-9, .gamma_dense = 1e-10};
    ch = sr::sreduce(stats(2, 1 << 21, 0.9), t);
    BOOST_TEST((ch.wire == sr::wire::dense));
    // Whole messages (sparse inputs under the adaptive wire): nothing
    // pipelines, so on the bandwidth-bound machine that wants a pipeline
    // above, whole messages would take neither the chain (P - 1 serial hops
    // of the whole vector) nor the two trees (the whole path runs one tree),
    // and keep the wire
    t.machine = {.alpha = 0, .beta = 1e-9, .gamma = 0, .gamma_dense = 0};
    auto whole = stats(8, 1 << 21, 1.0);
    whole.whole_messages = true;
    ch = sr::detail::sreduce_one_path(whole, t, sr::wire::adaptive, 0);
    BOOST_TEST(ch.whole);
    BOOST_TEST((ch.algo != sr::algorithm::chain && ch.algo != sr::algorithm::two_tree));
    BOOST_TEST((ch.wire == sr::wire::adaptive));
    BOOST_TEST(ch.segment_bytes == sr::default_segment_bytes);
    // and sreduce, weighing both paths, takes the windowed pipeline there:
    // the chain or two trees carry every byte about once per link
    const auto windows = sr::sreduce(whole, t);
    BOOST_TEST(!windows.whole);
    BOOST_TEST((windows.algo == sr::algorithm::chain || windows.algo == sr::algorithm::two_tree));
    BOOST_TEST(windows.predicted < 0.95 * ch.predicted);
    // At P = 2 the executor runs whole messages without measuring: so does
    // the choice, though on the built-in machine windows model faster there
    {
        const sr::tuning builtin;
        auto pair = stats(2, 1 << 21, 1.0);
        pair.whole_messages = true;
        auto pair_windows = pair;
        pair_windows.whole_messages = false;
        BOOST_TEST(sr::detail::sreduce_one_path(pair_windows, builtin, sr::wire::adaptive, 0).predicted <
                   0.95 * sr::detail::sreduce_one_path(pair, builtin, sr::wire::adaptive, 0).predicted);
        BOOST_TEST(sr::sreduce(pair, builtin).whole);
        // Below T_c a plan's ranks choose from their own counts (no
        // allreduce): whole messages and the default segment whatever the
        // entries, so ranks with different counts choose alike
        for (double density : {0.01, 0.3, 0.6, 1.0}) {
            auto small = stats(8, 5000, density);
            small.whole_messages = true;
            const auto sc = sr::sreduce(small, builtin);
            BOOST_TEST(sc.whole, "density " << density);
            BOOST_TEST(sc.segment_bytes == sr::default_segment_bytes, "density " << density);
            small.whole_messages = false;
            BOOST_TEST(sr::sreduce(small, builtin).segment_bytes == sr::default_segment_bytes, "density " << density);
        }
    }
    // its time is that of one message per edge: the binomial root takes
    // three whole vectors one after the other on its link
    const double vector_time = 1e-9 * 8.0 * (1 << 21);
    BOOST_TEST(sr::best_segment(whole, t.machine, sr::algorithm::binomial, 0, sr::wire::adaptive, 0).predicted >=
               3 * vector_time);
    BOOST_TEST(sr::best_segment(whole, t.machine, sr::algorithm::chain, 0, sr::wire::adaptive, 0).predicted >=
               7 * vector_time);
    // Where messages cost latency, not bytes, whole messages (one per edge)
    // beat 128 windows per edge and are kept
    t.machine = {.alpha = 1e-3, .beta = 1e-12, .gamma = 0, .gamma_dense = 0};
    ch = sr::sreduce(whole, t);
    BOOST_TEST(ch.whole);
    // k of Heikkinen (n.d.): overhead-bound calls get wide trees
    t.machine = {.alpha = 1e-3, .beta = 1e-12, .gamma = 1e-12, .gamma_dense = 1e-12};
    BOOST_TEST(sr::model_k(stats(64, 1 << 10, 0.01), t.machine) == 64);
    t.machine = {.alpha = 1e-9, .beta = 1e-9, .gamma = 1e-9, .gamma_dense = 1e-9};
    BOOST_TEST(sr::model_k(stats(64, 1 << 20, 1.0), t.machine) == 4); // 3 levels of 4 beat 6 of 2 by 3 overheads
}

BOOST_AUTO_TEST_CASE(tuning_file_round_trip_and_errors)
{
    sr::tuning t;
    t.machine.alpha = 3.5e-6;
    t.limits.ranks_zipf = 77;
    t.limits.sparsity = 0.95;
    t.machine.burst_bytes = 131072;
    std::istringstream in(sr::to_string(t));
    const auto back = sr::parse_tuning(in, "mem");
    BOOST_TEST(back.machine.alpha == 3.5e-6, tt::tolerance(1e-5));
    BOOST_TEST(back.machine.burst_bytes == 131072.0);
    BOOST_TEST(back.limits.ranks_zipf == 77);
    BOOST_TEST(back.limits.sparsity == 0.95, tt::tolerance(1e-9));
    BOOST_TEST(back.source == "mem");
    for (const char* bad : {"alpha 3", "alpha = x", "alpha = 1 2", "colour = 3", "beta = -1", "gamma = nan"}) {
        std::istringstream b(std::string("# ok\n") + bad + "\n");
        BOOST_CHECK_EXCEPTION(sr::parse_tuning(b, "f"), sr::error,
                              [](const sr::error& e) { return std::string(e.what()).find("f:2") != std::string::npos; });
    }
    BOOST_CHECK_THROW(sr::load_tuning("/nonexistent/tuning.txt"), sr::error);
    BOOST_CHECK_THROW(sr::load_tuning("/tmp"), sr::error); // a folder reads as an error
    for (const char* bad : {"alpha=3", "alpha = 3x", "alpha = ", "= 3"}) {
        std::istringstream b(std::string(bad) + "\n");
        BOOST_CHECK_THROW(sr::parse_tuning(b, "f"), sr::error);
    }
    // blanks, tabs, CRLF line ends, a sign, comments after the number, no final line end
    std::istringstream loose("\t alpha\t=  +2.5e-6 # per message\r\n\n  # only a comment\r\nT_p_zipf = 9");
    const auto l = sr::parse_tuning(loose, "loose");
    BOOST_TEST(l.machine.alpha == 2.5e-6, tt::tolerance(1e-12));
    BOOST_TEST(l.limits.ranks_zipf == 9);
    // a file, read once per path: the same object on the second call
    const std::string path = "/tmp/sparse_reduce_unit_tuning_" + std::to_string(::getpid()) + ".txt";
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        BOOST_REQUIRE(f);
        std::fputs(sr::to_string(t).c_str(), f);
        std::fclose(f);
    }
    const sr::tuning& file = sr::load_tuning(path);
    BOOST_TEST(file.machine.alpha == 3.5e-6, tt::tolerance(1e-5));
    BOOST_TEST(file.limits.ranks_zipf == 77);
    BOOST_TEST(file.source == path);
    BOOST_TEST(&sr::load_tuning(path) == &file);
    std::remove(path.c_str());
    // thresholds change the choice: with T_u^p above P, sparse uniform data stays binomial
    sr::tuning wide;
    wide.limits.ranks_uniform = 4096;
    BOOST_TEST(sr::sreduce(stats(512, 1 << 20, 0.001), wide).rule.find("uniform") != std::string::npos);
}

// A one-shot call's kept statistics of a dense input: reused for `every`
// calls while the sample stays within 2x, recounted otherwise.
BOOST_AUTO_TEST_CASE(dense_statistics_are_kept_while_the_sample_fits)
{
    sr::detail::dense_stats_memo m;
    BOOST_TEST(!m.fits(100, 4)); // nothing kept yet
    sr::detail::local_summary l;
    l.entries = 100;
    m.keep(l, 100);
    BOOST_TEST(m.fits(150, 4));
    BOOST_TEST(m.fits(60, 4));
    BOOST_TEST(m.fits(199, 4));
    BOOST_TEST(!m.fits(100, 4)); // the 4th call after counting recounts
    m.keep(l, 100);
    BOOST_TEST(!m.fits(203, 4)); // more than twice
    m.keep(l, 100);
    BOOST_TEST(!m.fits(49, 4)); // less than half
    m.keep(l, 0);
    BOOST_TEST(m.fits(1, 4)); // an all-identity sample and one entry: (0 + 1) vs (1 + 1)
    BOOST_TEST(!m.fits(-1, 4)); // no sample (a small input): always counted
    m.keep(l, 100);
    BOOST_TEST(!m.fits(100, 0)); // remeasure_every = 0: every call
    BOOST_TEST(m.local.entries == 100.0);
}

BOOST_AUTO_TEST_SUITE_END()
